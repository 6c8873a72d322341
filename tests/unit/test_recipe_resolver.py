"""Resolver rules on small catalogs: matching, chains, merge, mixins, coverage, order."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.documents.recipe_result import render_recipe
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.qualification import qualify
from aicr_tui.core.recipe.resolver import deployment_order
from aicr_tui.core.recipe.values import resolve_component_values
from tests.recipe_resolve import resolve
from tests.unit.test_recipe_fixtures import (  # noqa: F401  (autouse fixture)
    BASE_REFS,
    _private_cache,
    build,
    gpu_base,
    mixin,
    overlay,
)


def crit(**kw: str):  # type: ignore[no-untyped-def]
    return parse_criteria(**kw)


def refs_by_name(recipe):  # type: ignore[no-untyped-def]
    return {r.name: r for r in recipe.componentRefs}


# ----------------------------------------------------------------------------- matching
def test_asymmetric_wildcard_and_maximal_leaves(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("aks", criteria={"service": "aks"}),
            overlay("aks-training", criteria={"service": "aks", "intent": "training"}, base="aks"),
            overlay(
                "h100-aks-training",
                criteria={"service": "aks", "accelerator": "h100", "intent": "training"},
                base="aks-training",
            ),
            overlay("monitoring", criteria={"intent": "any"}),
        ],
    )
    r = resolve(cat, crit(service="aks", accelerator="h100", intent="training"))
    # aks and aks-training are ancestors of the leaf: merged once, through the chain.
    assert r.metadata.appliedOverlays == [
        "base",
        "monitoring",
        "aks",
        "aks-training",
        "h100-aks-training",
    ]
    # A query "any" never matches a specific overlay value: the h100 leaf is skipped.
    r2 = resolve(cat, crit(service="aks", intent="training"))
    assert r2.metadata.appliedOverlays == ["base", "monitoring", "aks", "aks-training"]


def test_independent_overlays_co_match_in_specificity_order(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("svc", criteria={"service": "oke"}),
            overlay("gb200-any", criteria={"accelerator": "gb200"}),
            overlay("zz-any", criteria={"intent": "any"}),
        ],
    )
    r = resolve(cat, crit(service="oke"))
    # specificity: zz-any 0, then svc (1); gb200-any does not match
    assert r.metadata.appliedOverlays == ["base", "zz-any", "svc"]
    # Issue 33: a service-less wildcard joins the query but never carries a dimension
    # by itself: gb200 is served only where an overlay of the service names it.
    with pytest.raises(AicrError, match='accelerator "gb200"'):
        resolve(cat, crit(service="oke", accelerator="gb200"))
    cat = build(
        tmp_path / "2",
        overlays=[
            overlay("svc", criteria={"service": "oke"}),
            overlay("gb200-svc", criteria={"service": "oke", "accelerator": "gb200"}, base="svc"),
            overlay("gb200-any", criteria={"accelerator": "gb200"}),
            overlay("zz-any", criteria={"intent": "any"}),
        ],
    )
    r = resolve(cat, crit(service="oke", accelerator="gb200"))
    # specificity: zz-any 0, gb200-any 1, then the service chain
    assert r.metadata.appliedOverlays == ["base", "zz-any", "gb200-any", "svc", "gb200-svc"]


def test_inheritance_cycle_and_unknown_parent_rejected(tmp_path: Path) -> None:
    with pytest.raises(AicrError, match="circular inheritance"):
        build(
            tmp_path,
            overlays=[
                overlay("a", criteria={"service": "aks"}, base="b"),
                overlay("b", base="a"),
            ],
        )
    with pytest.raises(AicrError, match='parent overlay "nope"'):
        build(tmp_path / "2", overlays=[overlay("a", criteria={"service": "aks"}, base="nope")])


# -------------------------------------------------------------------------------- merge
def test_component_merge_rules(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        base=gpu_base(
            spec={"constraints": [{"name": "K8s.server.version", "value": ">= 1.30"}]},
            version="v1",
            overrides={"driver": {"enabled": True, "version": "1"}, "list": [1, 2]},
            dependencyRefs=["cert-manager"],
            manifestFiles=["m1.yaml"],
            expectedResources=[{"kind": "Deployment", "name": "a"}],
        ),
        overlays=[
            overlay(
                "svc",
                criteria={"service": "aks"},
                componentRefs=[
                    {
                        "name": "gpu-operator",
                        "version": "v2",
                        "overrides": {"driver": {"version": "2", "extra": None}, "list": [3]},
                        "dependencyRefs": ["network-operator", "cert-manager"],
                        "manifestFiles": ["m2.yaml"],
                        "cleanup": True,
                    },
                    {"name": "network-operator", "overrides": {"enabled": False}},
                ],
                constraints=[
                    {"name": "K8s.server.version", "value": ">= 1.34"},
                    {"name": "GPU.hardware.model", "value": "NVIDIA H100"},
                ],
            ),
        ],
    )
    r = resolve(cat, crit(service="aks"))
    gpu = refs_by_name(r)["gpu-operator"]
    assert gpu.version == "v2"  # non-empty scalar replaces
    assert gpu.namespace == "gpu-operator"  # empty filled from registry
    assert gpu.overrides == {
        "driver": {"enabled": True, "version": "2", "extra": None},  # maps recurse, null kept
        "list": [3],  # lists replace wholesale
    }
    assert gpu.dependencyRefs == ["cert-manager", "network-operator"]  # union, base first
    assert gpu.manifestFiles == ["m1.yaml", "m2.yaml"]
    assert gpu.expectedResources == [{"kind": "Deployment", "name": "a"}]  # kept when empty
    assert gpu.cleanup is True
    # constraints by name, later wins, sorted by name
    assert [(c.name, c.value) for c in r.constraints] == [
        ("GPU.hardware.model", "NVIDIA H100"),
        ("K8s.server.version", ">= 1.34"),
    ]
    # disabled refs stay in componentRefs, leave deploymentOrder; the edge is dropped
    assert [c.name for c in r.componentRefs] == ["cert-manager", "gpu-operator", "network-operator"]
    assert r.deploymentOrder == ["cert-manager", "gpu-operator"]
    assert refs_by_name(r)["network-operator"].enabled is False


def test_cleanup_cannot_be_unset_and_install_false_disables(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        base=overlay(
            "base",
            componentRefs=[{"name": "cert-manager", "cleanup": True}, {"name": "gpu-operator"}],
        ),
        overlays=[
            overlay(
                "svc",
                criteria={"service": "aks"},
                componentRefs=[
                    {"name": "cert-manager", "cleanup": False},
                    {"name": "gpu-operator", "overrides": {"install": False}},
                ],
            )
        ],
    )
    r = resolve(cat, crit(service="aks"))
    assert refs_by_name(r)["cert-manager"].cleanup is True
    assert r.deploymentOrder == ["cert-manager"]


def test_validation_phase_merge(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        base=overlay(
            "base",
            componentRefs=BASE_REFS,
            validation={
                "deployment": {"checks": ["operator-health"], "timeout": "10m"},
                "performance": {
                    "checks": ["nccl"],
                    "constraints": [{"name": "nccl", "value": ">= 100"}],
                },
                "conformance": {"checks": ["a"]},
            },
        ),
        overlays=[
            overlay(
                "svc",
                criteria={"service": "aks"},
                validation={
                    "deployment": {"checks": ["expected-resources", "operator-health"]},
                    "performance": {
                        "constraints": [
                            {"name": "nccl", "value": ">= 150"},
                            {"name": "ttft", "value": "<= 2000"},
                        ]
                    },
                    "conformance": {"checks": []},
                },
            )
        ],
    )
    r = resolve(cat, crit(service="aks"))
    assert r.validation is not None
    doc = r.validation.to_document()
    assert doc["deployment"] == {
        "timeout": "10m",
        "checks": ["operator-health", "expected-resources"],
    }
    assert doc["performance"]["checks"] == ["nccl"]  # omitted list inherits
    assert doc["performance"]["constraints"] == [
        {"name": "nccl", "value": ">= 150"},
        {"name": "ttft", "value": "<= 2000"},
    ]
    assert "conformance" not in doc  # explicit [] cleared the only list


def test_component_values_precedence_and_null_delete(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        base=gpu_base(
            valuesFile="components/gpu-operator/values-x.yaml",
            overrides={"b": {"c": 3}, "gone": None},
        ),
        overlays=[overlay("svc", criteria={"service": "aks"})],
        files={
            "components/gpu-operator/values.yaml": {
                "a": 1,
                "b": {"c": 1, "d": 1},
                "gone": {"x": 1},
            },
            "components/gpu-operator/values-x.yaml": {"a": 2, "b": {"d": None}},
        },
    )
    r = resolve(cat, crit(service="aks"))
    values = resolve_component_values(cat, refs_by_name(r)["gpu-operator"])
    assert values == {"a": 2, "b": {"c": 3}}
    # no valuesFile, no overrides: nothing is discovered by name
    assert resolve_component_values(cat, refs_by_name(r)["cert-manager"]) == {}
    values["a"] = 99  # the result is the caller's own copy
    assert cat.read_values_file("components/gpu-operator/values-x.yaml")["a"] == 2


# ------------------------------------------------------------------------------- mixins
def test_mixins_merge_and_rules(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("svc", criteria={"service": "aks"}, mixins=["m1"]),
            overlay("leaf", criteria={"service": "aks", "os": "ubuntu"}, base="svc", mixins=["m1"]),
        ],
        mixins=[
            mixin(
                "m1",
                constraints=[{"name": "OS.release.ID", "value": "ubuntu"}],
                componentRefs=[
                    {"name": "gpu-operator", "namespace": "gpu-ns"},
                    {"name": "extra", "overrides": {"a": {"b": 1}}},
                ],
            )
        ],
    )
    r = resolve(cat, crit(service="aks", os="ubuntu"))
    assert "m1" not in r.metadata.appliedOverlays
    assert refs_by_name(r)["gpu-operator"].namespace == "gpu-ns"
    assert refs_by_name(r)["extra"].overrides == {"a": {"b": 1}}
    assert [c.name for c in r.constraints] == ["OS.release.ID"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"constraints": [{"name": "K8s.server.version", "value": ">= 1"}]},
            "already set by base",
        ),
        ({"componentRefs": [{"name": "gpu-operator", "version": "v9"}]}, "may not set version"),
        (
            {"componentRefs": [{"name": "monitoring", "overrides": {"other": 1}}]},
            "mixinSafeOverridePaths",
        ),
        (
            {"componentRefs": [{"name": "extra", "valuesFile": "x.yaml"}]},
            "may not set valuesFile",
        ),
        ({"componentRefs": [{"name": "gpu-operator", "overrides": {"a": {}}}]}, "empty map"),
    ],
)
def test_mixin_violations(tmp_path: Path, spec: dict, message: str) -> None:  # type: ignore[type-arg]
    cat = build(
        tmp_path,
        base=overlay(
            "base",
            componentRefs=[*BASE_REFS, {"name": "monitoring"}],
            constraints=[{"name": "K8s.server.version", "value": ">= 1.30"}],
        ),
        overlays=[overlay("svc", criteria={"service": "aks"}, mixins=["bad"])],
        mixins=[mixin("bad", **spec)],
    )
    v = qualify(crit(service="aks"), catalog=cat)
    assert v.error is not None and message in v.error.message


def test_mixin_duplicate_component_and_unknown_mixin(tmp_path: Path) -> None:
    with pytest.raises(AicrError, match="twice"):
        build(
            tmp_path,
            overlays=[overlay("svc", criteria={"service": "aks"})],
            mixins=[mixin("m", componentRefs=[{"name": "extra"}, {"name": "extra"}])],
        )
    with pytest.raises(AicrError, match='mixin "nope" is not in the catalog'):
        build(
            tmp_path / "2", overlays=[overlay("svc", criteria={"service": "aks"}, mixins=["nope"])]
        )


# ----------------------------------------------------------------------------- coverage
def test_coverage_and_os_strictness(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("svc", criteria={"service": "gke"}),
            overlay(
                "h100-gke-cos",
                criteria={"service": "gke", "accelerator": "h100", "os": "cos"},
                base="svc",
            ),
            overlay("gb200-svc", criteria={"service": "gke", "accelerator": "gb200"}, base="svc"),
        ],
    )
    v = qualify(crit(service="gke", accelerator="b200"), catalog=cat)
    assert v.error is not None
    assert 'accelerator "b200"' in v.error.message and "gb200" in v.error.message
    v2 = qualify(crit(service="gke", accelerator="h100"), catalog=cat)
    assert v2.error is not None and "need --os" in v2.error.message and "cos" in v2.error.message
    assert qualify(crit(service="gke", accelerator="h100", os="cos"), catalog=cat).ok
    v3 = qualify(crit(service="", accelerator=None), catalog=cat)
    assert v3.error is not None and "no criteria provided" in v3.error.message


# ------------------------------------------------------------------------ finalisation
def _refs(**deps: list[str]):  # type: ignore[no-untyped-def]
    from aicr_tui.core.documents.recipe_result import ComponentRef

    return {n: ComponentRef(name=n, dependencyRefs=d) for n, d in deps.items()}


def test_topological_order_re_sorts_alphabetically_after_every_pop() -> None:
    refs = _refs(z=[], b=["z"], a=["z"], c=[], y=["c"])
    # start [c, z]; pop c -> frees y -> [y, z]; pop y; pop z -> frees a, b
    assert deployment_order(refs) == ["c", "y", "z", "a", "b"]


def test_dependency_cycle_and_unknown_dependency_rejected() -> None:
    with pytest.raises(AicrError, match="circular dependencies exist"):
        deployment_order(_refs(a=["b"], b=["c"], c=["a"]))
    with pytest.raises(AicrError, match='references unknown dependency "ghost"'):
        deployment_order(_refs(a=["ghost"]))


def test_coherence_problems_are_aggregated(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        registry=[],
        base=overlay(
            "base",
            componentRefs=[
                {"name": "x", "type": "helm", "source": "https://x"},
                {"name": "y", "type": "weird"},
            ],
        ),
        overlays=[overlay("svc", criteria={"service": "aks"})],
    )
    v = qualify(crit(service="aks"), catalog=cat)
    assert v.error is not None
    assert 'component "x" has a Helm source but no version' in v.error.message
    assert 'component "y" has unknown type "weird"' in v.error.message


def test_output_is_deterministic_byte_for_byte(tmp_path: Path) -> None:
    spec = {
        "overlays": [
            overlay(
                "svc",
                criteria={"service": "aks"},
                componentRefs=[
                    {"name": "gpu-operator", "overrides": {"z": 1, "a": {"y": 2, "b": 3}}}
                ],
            )
        ]
    }
    cat = build(tmp_path, **spec)
    first = render_recipe(resolve(cat, crit(service="aks")))
    for _ in range(3):
        assert render_recipe(resolve(cat, crit(service="aks"))) == first
    # a fresh process-equivalent load (cold caches) renders the same bytes
    from aicr_tui.core.recipe.catalog import clear_catalog_cache

    clear_catalog_cache()
    cat2 = build(tmp_path / "again", **spec)
    assert render_recipe(resolve(cat2, crit(service="aks"))) == first
    assert render_recipe(resolve(cat2, crit(service="aks")), "json") == render_recipe(
        resolve(cat, crit(service="aks")), "json"
    )


# ---------------------------------------------------------------- snapshot exclusion
def _snapshot(version: str, os_id: str = "ubuntu"):  # type: ignore[no-untyped-def]
    from aicr_tui.core.documents.snapshot import Measurement, Snapshot, Subtype

    return Snapshot(
        measurements=[
            Measurement(
                type="K8s", subtypes=[Subtype(subtype="server", data={"version": version})]
            ),
            Measurement(type="OS", subtypes=[Subtype(subtype="release", data={"ID": os_id})]),
        ]
    )


def test_overlay_constraints_exclude_and_record(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("svc", criteria={"service": "aks"}),
            overlay(
                "gb200-any",
                criteria={"accelerator": "gb200"},
                constraints=[
                    {"name": "K8s.server.version", "value": ">= 1.34"},
                    {"name": "GPU.hardware.model", "value": "NVIDIA GB200"},
                ],
            ),
        ],
    )
    v = qualify(crit(service="aks", accelerator="gb200"), None, _snapshot("v1.33.5"), catalog=cat)
    # gb200-any was the only carrier of the accelerator: coverage refuses after exclusion
    assert v.error is not None and 'accelerator "gb200"' in v.error.message
    assert [(e.name, e.reason) for e in v.excluded_overlays] == [("gb200-any", "constraint-failed")]
    cat2 = build(
        tmp_path / "2",
        overlays=[
            overlay("svc", criteria={"service": "aks"}),
            overlay(
                "extra",
                criteria={"intent": "any"},
                constraints=[
                    {"name": "K8s.server.version", "value": ">= 1.34"},
                    {"name": "GPU.hardware.model", "value": "NVIDIA GB200"},
                ],
            ),
        ],
    )
    ok = qualify(crit(service="aks"), None, _snapshot("v1.33.5"), catalog=cat2)
    assert ok.ok and ok.recipe is not None
    meta = ok.recipe.to_document()["metadata"]
    assert meta["appliedOverlays"] == ["base", "svc"]
    assert meta["excludedOverlays"] == [{"name": "extra", "reason": "constraint-failed"}]
    assert meta["constraintWarnings"][0] == {
        "overlay": "extra",
        "constraint": "K8s.server.version",
        "expected": ">= 1.34",
        "actual": "v1.33.5",
        "reason": "expected >= 1.34, got v1.33.5",
    }
    missing = meta["constraintWarnings"][1]
    assert missing["constraint"] == "GPU.hardware.model" and "actual" not in missing
    assert "NOT_FOUND" in missing["reason"]
    statuses = {(c.name, c.status) for c in ok.checks}
    assert ("K8s.server.version", "failed") in statuses
    assert ("GPU.hardware.model", "unavailable") in statuses


def test_failing_mixin_constraint_excludes_the_chains_that_use_it(tmp_path: Path) -> None:
    cat = build(
        tmp_path,
        overlays=[
            overlay("svc", criteria={"service": "aks"}),
            overlay("ubuntu-extra", criteria={"intent": "any"}, mixins=["os-ubuntu"]),
        ],
        mixins=[mixin("os-ubuntu", constraints=[{"name": "OS.release.ID", "value": "ubuntu"}])],
    )
    v = qualify(crit(service="aks"), None, _snapshot("v1.34.0", os_id="ol"), catalog=cat)
    assert v.ok and v.recipe is not None
    assert [(e.name, e.reason) for e in v.recipe.metadata.excludedOverlays] == [
        ("ubuntu-extra", "mixin-constraint-failed")
    ]
    warning = v.recipe.metadata.constraintWarnings[0]
    assert warning.reason == "mixin-constraint-failed: expected ubuntu, got ol"
    assert "OS.release.ID" not in {c.name for c in v.recipe.constraints}
    passing = qualify(crit(service="aks"), None, _snapshot("v1.34.0"), catalog=cat)
    assert passing.recipe is not None
    assert passing.recipe.metadata.appliedOverlays == ["base", "ubuntu-extra", "svc"]
