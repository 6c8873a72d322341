"""Recipes the bundler tests share, produced by the real engine (``aicr_tui.core.recipe.qualification``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from aicr_tui.core.bundler import BundlePlan, parse_overrides, plan_bundle
from aicr_tui.core.bundler.tolerations import parse_tolerations
from aicr_tui.core.documents.recipe_result import RecipeResult

KEYED = ["nvidia.com/gpu:NoSchedule"]

DEMO = {
    "aks-azure": ("aks", "h100", "ubuntu", "training", None),
    "aks-operator": ("aks", "h100", "ubuntu", "training", "gpuStack=operator-managed"),
    "oke-oci": ("oke", "gb200", "ol", "training", None),
    "oke-operator": ("oke", "gb200", "ol", "training", "gpuStack=operator-managed"),
}


@cache
def demo_recipe(name: str) -> RecipeResult:
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.qualification import qualify

    service, accel, os_, intent, profile = DEMO[name]
    verdict = qualify(
        parse_criteria(service=service, accelerator=accel, os=os_, intent=intent), profile
    )
    assert verdict.ok and verdict.recipe is not None, verdict.error
    return verdict.recipe


def legacy(recipe: RecipeResult, *, pre_nvsentinel: bool = False) -> RecipeResult:
    """The same recipe as a pre-profile artifact (no selectedProfile, no lock).

    ``pre_nvsentinel`` also drops the two NVSentinel values the profile added later (#2181),
    as in an artifact generated before either existed.
    """
    meta = recipe.metadata.model_copy(update={"selectedProfile": None})
    out = recipe.model_copy(update={"metadata": meta, "apiVersion": "aicr.run/v1"})
    if pre_nvsentinel:
        refs = []
        for r in out.componentRefs:
            if r.name == "nvsentinel":
                o = {
                    k: v
                    for k, v in r.overrides.items()
                    if k not in ("labeler", "metadata-collector")
                }
                r = r.model_copy(update={"overrides": o})
            refs.append(r)
        out = out.model_copy(update={"componentRefs": refs})
    return out


def with_driver_state(recipe: RecipeResult, state: str) -> RecipeResult:
    meta = recipe.metadata.model_copy(update={"gpuDriverState": state})
    return recipe.model_copy(update={"metadata": meta})


def with_overrides(recipe: RecipeResult, component: str, overrides: dict[str, Any]) -> RecipeResult:
    refs = [
        r.model_copy(update={"overrides": {**r.overrides, **overrides}})
        if r.name == component
        else r
        for r in recipe.componentRefs
    ]
    return recipe.model_copy(update={"componentRefs": refs})


def plan(
    recipe: RecipeResult,
    *,
    set_: tuple[str, ...] = (),
    set_json: tuple[str, ...] = (),
    set_file: tuple[str, ...] = (),
    dynamic: tuple[str, ...] = (),
    tolerations: list[str] | None = KEYED,
    **kw: Any,
) -> BundlePlan:
    return plan_bundle(
        recipe,
        parse_overrides(set_=set_, set_json=set_json, set_file=set_file, dynamic=dynamic),
        accelerated_tolerations=parse_tolerations(tolerations),
        **kw,
    )


def errors_of(p: BundlePlan, check: str) -> list[str]:
    return [e.message for e in p.errors if e.check == check]


def test_demo_recipes_are_engine_products() -> None:
    for name in DEMO:
        r = demo_recipe(name)
        assert r.metadata.selectedProfile is not None
        assert r.deploymentOrder


def test_every_demo_recipe_plans_clean_with_a_keyed_toleration() -> None:
    for name in DEMO:
        p = plan(demo_recipe(name))
        assert p.errors == [], (name, [e.render() for e in p.errors])
