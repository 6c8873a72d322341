"""The #1327 GPU allocation-policy resolver that ``validate`` runs before any cluster work.

The whole-GPU allocation mode is resolved from the recipe's *hydrated* values (each
componentRef's values file plus its overrides, exactly what the bundler starts from), never
from bundle-time flags: exactly one whole-GPU advertiser per node. A dual-advertised
configuration, an inert waiver, no advertiser at all or a partial DRA-only flip is an
invalid request (exit 2) at policy-resolution time, naming what advertises. The DRA-only
overlay is accepted only with all three values flipped together. Checks then compare the
resolved policy with what the cluster advertises, so a bundle-time change shows up as
recipe/cluster drift (``dra-support``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler.policy import (
    DEVICE_PLUGIN_COMPONENTS,
    DRA_COMPONENTS,
    POLICY_DEVICE_PLUGIN,
    POLICY_DRA,
    POLICY_EXTERNAL,
    POLICY_UNSPECIFIED,
    coherence_verdict,
    read_allocation,
)
from aicr_tui.core.foundation.errors import invalid

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.validation.recipe_view import RecipeView

__all__ = [
    "POLICY_DEVICE_PLUGIN",
    "POLICY_DRA",
    "POLICY_EXTERNAL",
    "POLICY_UNSPECIFIED",
    "ResolvedPolicy",
    "resolve_allocation_policy",
    "view_with_policy",
]


@dataclass(frozen=True)
class ResolvedPolicy:
    name: str  # device-plugin-extended-resource | dra-resource-claim | external-advertiser | unspecified
    advertisers: tuple[str, ...]  # what advertises whole GPUs under it

    def line(self) -> str:
        who = ", ".join(self.advertisers) or "none in the recipe"
        return f"GPU allocation policy: {self.name} (whole-GPU advertiser: {who})"


def resolve_allocation_policy(
    recipe: RecipeResult, source: str, *, catalog: Catalog | None = None
) -> ResolvedPolicy:
    """Resolve the policy from the recipe's hydrated values; refuse an incoherent one."""
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.values import resolve_component_values

    declared = {ref.name: ref for ref in recipe.componentRefs}
    relevant = [c for c in (*DEVICE_PLUGIN_COMPONENTS, *DRA_COMPONENTS) if c in declared]
    values: dict[str, dict[str, Any]] = {}
    enabled = {c for c in relevant if declared[c].enabled}
    if enabled:
        cat = catalog if catalog is not None else load_catalog()
        for name in sorted(enabled):
            try:
                values[name] = resolve_component_values(cat, declared[name])
            except AicrError as exc:
                raise invalid(
                    f'recipe "{source}": cannot hydrate {name} values to resolve the GPU '
                    f"allocation policy: {exc.message}"
                ) from exc
    reading = read_allocation(
        values, lambda c: c in enabled, declared, recipe.metadata.selectedProfile
    )
    verdict = coherence_verdict(reading)
    if verdict:
        raise invalid(
            f'recipe "{source}": GPU allocation policy cannot be resolved: {verdict}',
            remedy="fix the recipe overlay; a bundle-time --set does not change what validate resolves",
        )
    advertisers: list[str] = []
    if reading.plugin:
        advertisers += [f"{c} device plugin" for c in DEVICE_PLUGIN_COMPONENTS if c in enabled]
    if reading.gpus and reading.dra:
        advertisers.append(f"{reading.dra} GPU resources")
    if reading.external:
        advertisers.append(f"external ({reading.profile})")
    return ResolvedPolicy(reading.policy, tuple(advertisers))


def view_with_policy(recipe: Any, source: str, *, catalog: Catalog | None = None) -> RecipeView:
    """The recipe as checks see it, its policy resolved first (a refusal raises, exit 2).

    A ``RecipeView`` is taken as it is (it carries no values to hydrate)."""
    from dataclasses import replace

    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.validation.recipe_view import RecipeView

    if not isinstance(recipe, RecipeResult):
        return RecipeView.of(recipe, source)
    policy = resolve_allocation_policy(recipe, source, catalog=catalog)
    return replace(RecipeView.of(recipe, source), allocation_policy=policy.name)
