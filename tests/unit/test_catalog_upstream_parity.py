"""Issue 33: the AKS/OKE catalog against upstream's own catalog files.

Upstream's overlays, mixins and registry (NVIDIA/aicr 9793720d, vendored verbatim under
tests/data/upstream_catalog with their provenance) are read here with a small reader of
upstream's layering rules (chain from ``spec.base``, constraints and phase constraints
merged by name, checks by union, the accelerator wildcard joining every query of its
accelerator), independent of ``aicr_tui.core.recipe``. For every AKS/OKE combination upstream
publishes, ``recipe`` must resolve the leaf of the same name with the same constraints,
validation, components and pins; every other combination of the same values is refused.

What differs on purpose is listed below, exactly: the test fails when a difference
disappears as much as when a new one appears.
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.catalog import load_catalog
from tests.conftest import TEST_DATA
from tests.recipe_resolve import resolve

UPSTREAM = TEST_DATA / "upstream_catalog"
DIMS = ("service", "accelerator", "os", "intent", "platform")

# Upstream leaves not served here, each with the reason.
NOT_PORTED: set[str] = set()

# Upstream's Slurm accounting mode (ADR-016) defaults to `disabled`, which sets
# `install: false` on these three components of every Slurm recipe: they stay declared but
# are not deployed (pkg/recipe/accounting.go at 9793720d).
ACCOUNTING_DISABLED = ("mariadb-operator-crds", "mariadb-operator", "slurm-accounting-mariadb")

# Every component upstream deploys is shipped here (issue 33 added the gateway move to
# agentgateway, prometheus-operator-crds and k8s-ephemeral-storage-metrics).
MISSING_EVERYWHERE: set[str] = set()
GATEWAY_UPSTREAM = {"agentgateway", "agentgateway-crds"}

# The OKE brief keeps network-operator on every OKE recipe (host MOFED, no OFED driver, no
# NicClusterPolicy); upstream's oke-ol has none.
OKE_EXTRA = {"network-operator"}

# Chart pins chosen in issue 13 so every bundle renders against a public chart tree
# (aicr_tui/recipes/README.md "Chart pins and verification"); upstream 9793720d pins differ.
PIN_DIFFERENCES = {
    "gpu-operator": ("v26.7.0", "v26.3.3"),
    "nvsentinel": ("v1.20.0", "v1.9.0"),
    "kai-scheduler": ("v0.16.8", "v0.14.1"),
    "grove": ("v0.1.0-alpha.12-rc1", "v0.1.0-alpha.8"),
    "dynamo-platform": ("1.4.1", "1.2.1"),
}
# upstream's aks overlay pins kube-prometheus-stack 83.7.0 over the registry's 84.4.0
AKS_PIN_DIFFERENCES = {"kube-prometheus-stack": ("84.4.0", "83.7.0")}

# Upstream floors OKE A100 / L40S at Kubernetes 1.30, below the kubeVersion (>= 1.32) of the
# nvidia-dra-driver-gpu 0.4.1 chart it ships on them: Helm refuses such a bundle, so the
# chart's floor is kept here (issue 13).
FLOOR_DIFFERENCES = {
    leaf: {"K8s.server.version": (">= 1.32", ">= 1.30")}
    for leaf in (
        "a100-oke-training",
        "a100-oke-ubuntu-training",
        "a100-oke-ubuntu-training-kubeflow",
        "l40s-oke-training",
        "l40s-oke-inference",
    )
}

# Constraints the OKE brief's gpuStack profile adds on OKE (upstream's 2026-08 main has
# no OKE profile); the AKS profile constraint is upstream's and is compared.
OKE_PROFILE_CONSTRAINTS = {"K8s.oke-addons.nvidia-gpu-plugin"}


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), path
    return doc


@cache
def overlays() -> dict[str, dict[str, Any]]:
    return {p.stem: _load(p) for p in sorted((UPSTREAM / "overlays").glob("*.yaml"))}


@cache
def mixins() -> dict[str, dict[str, Any]]:
    return {p.stem: _load(p) for p in sorted((UPSTREAM / "mixins").glob("*.yaml"))}


@cache
def registry_pins() -> dict[str, str]:
    reg = _load(UPSTREAM / "registry.yaml")
    return {c["name"]: str(c.get("helm", {}).get("defaultVersion", "")) for c in reg["components"]}


def criteria_of(name: str) -> dict[str, str]:
    return {k: str(v) for k, v in (overlays()[name]["spec"].get("criteria") or {}).items()}


def chain(name: str) -> list[str]:
    """Root first, ending at the overlay; base is applied separately."""
    out: list[str] = []
    current: str | None = name
    while current and current != "base":
        out.insert(0, current)
        current = overlays()[current]["spec"].get("base")
    return out


def published() -> list[str]:
    """Upstream's AKS/OKE recipes: every overlay naming a service and an accelerator."""
    return sorted(
        n
        for n in overlays()
        if criteria_of(n).get("service") in ("aks", "oke") and "accelerator" in criteria_of(n)
    )


def _merge_named(dst: dict[str, str], items: list[dict[str, Any]] | None) -> None:
    for c in items or []:
        dst[c["name"]] = str(c["value"])


def upstream_recipe(name: str) -> dict[str, Any]:
    """Upstream's composition of one published leaf (its wildcard and monitoring-hpa join)."""
    crit = criteria_of(name)
    layers = ["base", "monitoring-hpa", f"{crit['accelerator']}-any", *chain(name)]
    constraints: dict[str, str] = {}
    components: dict[str, str] = {}
    phases: dict[str, tuple[list[str], dict[str, str]]] = {}
    mixin_names: list[str] = []
    for layer in layers:
        spec = overlays()[layer]["spec"]
        _merge_named(constraints, spec.get("constraints"))
        for ref in spec.get("componentRefs") or []:
            pin = ref.get("version") or components.get(ref["name"]) or registry_pins()[ref["name"]]
            components[ref["name"]] = str(pin)
        for phase, body in (spec.get("validation") or {}).items():
            checks, gates = phases.setdefault(phase, ([], {}))
            # upstream's mergeValidationPhase: an explicit empty list clears what is inherited
            if body.get("checks") == []:
                checks.clear()
            checks += [c for c in body.get("checks") or [] if c not in checks]
            if body.get("constraints") == []:
                gates.clear()
            _merge_named(gates, body.get("constraints"))
        mixin_names += [m for m in spec.get("mixins") or [] if m not in mixin_names]
        profile = spec.get("profile")
        if profile:
            _merge_named(constraints, profile["values"][profile["default"]].get("constraints"))
    for m in mixin_names:
        spec = mixins()[m]["spec"]
        _merge_named(constraints, spec.get("constraints"))
        for ref in spec.get("componentRefs") or []:
            components[ref["name"]] = str(ref.get("version") or registry_pins()[ref["name"]])
    declared = dict(components)
    if crit.get("platform") == "slurm":  # accounting mode `disabled`: install: false
        for name in ACCOUNTING_DISABLED:
            components.pop(name)
    return {
        "constraints": constraints,
        "components": components,
        "declared": declared,
        "phases": phases,
    }


def ours(crit: dict[str, str]) -> Any:
    return resolve(load_catalog(), parse_criteria(**crit))


def test_the_vendored_catalog_is_the_one_the_issue_names() -> None:
    assert "9793720d" in (UPSTREAM / "PROVENANCE.md").read_text(encoding="utf-8")
    leaves = set(published())
    assert {"gb200-oke-ubuntu-training", "a100-oke-ubuntu-training-kubeflow"} <= leaves
    assert {"l40s-oke-inference", "a100-aks-ubuntu-training-kubeflow"} <= leaves
    assert not [n for n in leaves if n.startswith(("b200-", "h100-oke", "gb200-aks"))]


@pytest.mark.parametrize("leaf", sorted(set(published()) - NOT_PORTED))
def test_every_published_combination_resolves_the_same_recipe(leaf: str) -> None:
    crit = criteria_of(leaf)
    up = upstream_recipe(leaf)
    recipe = ours(crit)
    applied = recipe.metadata.appliedOverlays
    assert applied[-1] == leaf, applied
    assert f"{crit['accelerator']}-any" in applied

    # constraints: same names and values (the OKE brief's profile adds its own on OKE)
    mine = {c.name: str(c.value) for c in recipe.constraints}
    if crit["service"] == "oke":
        assert set(mine) - set(up["constraints"]) == OKE_PROFILE_CONSTRAINTS
        mine = {k: v for k, v in mine.items() if k not in OKE_PROFILE_CONSTRAINTS}
    differing = {
        k: (v, up["constraints"].get(k)) for k, v in mine.items() if v != up["constraints"].get(k)
    }
    assert differing == FLOOR_DIFFERENCES.get(leaf, {})
    assert set(mine) == set(up["constraints"])

    # validation: every phase's checks and gates
    assert recipe.validation is not None
    for phase, (checks, gates) in up["phases"].items():
        body = recipe.validation.phase(phase)
        assert body is not None, phase
        assert set(body.checks) == set(checks), phase
        assert {c.name: str(c.value) for c in body.constraints or []} == gates, phase
    assert {
        p for p in ("deployment", "performance", "conformance") if recipe.validation.phase(p)
    } == set(up["phases"])

    # every declared component is in the recipe, deployed or not, as upstream keeps them
    declared = {ref.name for ref in recipe.componentRefs}
    if crit["service"] == "oke":
        declared -= OKE_EXTRA
    assert declared == set(up["declared"])

    # components and pins, with the documented differences exactly
    have = {ref.name: ref.version for ref in recipe.componentRefs if ref.enabled is not False}
    want = dict(up["components"])
    for name in MISSING_EVERYWHERE:
        assert want.pop(name, None) is not None, name
    # the inference gateway exactly where upstream deploys one (its inference leaves)
    assert (GATEWAY_UPSTREAM <= set(have)) is (crit["intent"] == "inference")
    assert (GATEWAY_UPSTREAM <= set(want)) is (crit["intent"] == "inference")
    if crit["service"] == "oke":
        for name in OKE_EXTRA:
            assert have.pop(name, None) is not None, name
    assert set(have) == set(want)
    diffs = {n: (have[n], want[n]) for n in have if have[n] != want[n]}
    expected = dict(PIN_DIFFERENCES)
    if crit["service"] == "aks":
        expected.update(AKS_PIN_DIFFERENCES)
    assert diffs == {n: v for n, v in expected.items() if n in have}


def _values(dim: str) -> list[str]:
    seen = {criteria_of(n).get(dim, "") for n in published()}
    return sorted(seen | {""})


def test_every_other_combination_is_refused() -> None:
    """The cross product of every value upstream's AKS/OKE leaves use (b200 included):
    exactly upstream's published combinations resolve; the rest exit 2."""
    accepted = {tuple(criteria_of(n).get(d, "") for d in DIMS) for n in published()}
    accelerators = sorted({*_values("accelerator"), "b200"} - {""})
    served, refused = [], []
    for combo in itertools.product(
        ("aks", "oke"), accelerators, _values("os"), _values("intent"), _values("platform")
    ):
        if not combo[3]:
            continue  # intent is always stated by the CLI and the wizard
        crit = {d: v for d, v in zip(DIMS, combo, strict=True) if v}
        try:
            recipe = ours(crit)
        except AicrError as err:
            assert err.exit_code == 2, err
            refused.append(combo)
            if (
                combo in accepted
                and "-".join(x for x in (combo[1], combo[0], combo[2], combo[3], combo[4]) if x)
                not in NOT_PORTED
            ):
                pytest.fail(f"upstream publishes {crit} but it is refused: {err.render()}")
            continue
        served.append(combo)
        assert combo in accepted, f"{crit} resolves {recipe.metadata.appliedOverlays[-1]}"
    assert len(served) == len(set(published()) - NOT_PORTED)
    assert refused, "the cross product has unpublished combinations"


@pytest.mark.parametrize(
    ("crit", "nearest"),
    [
        (
            {"service": "aks", "accelerator": "gb200", "os": "ubuntu", "intent": "training"},
            "a100-aks-ubuntu-training, h100-aks-ubuntu-training, a100-aks-training",
        ),
        (
            {"service": "oke", "accelerator": "h100", "os": "ubuntu", "intent": "inference"},
            "gb200-oke-ubuntu-inference, gb200-oke-inference, gb200-oke-ubuntu-inference-dynamo",
        ),
        (
            {"service": "oke", "accelerator": "gb200", "os": "ol", "intent": "training",
             "platform": "kubeflow"},
            "gb200-oke-training, gb200-oke-ubuntu-training-kubeflow, gb200-oke-ubuntu-training",
        ),
    ],
)  # fmt: skip
def test_an_unpublished_combination_is_refused_naming_the_nearest_leaves(
    crit: dict[str, str], nearest: str
) -> None:
    """Item 2: no unvalidated recipe by default; one line says what is published nearby."""
    with pytest.raises(AicrError) as info:
        ours(crit)
    line = info.value.render()
    assert info.value.exit_code == 2 and "\n" not in line
    assert line.endswith(f"; nearest published leaves: {nearest}"), line
