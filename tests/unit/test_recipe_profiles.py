"""Profile declarations, selection parsing, fragments and owned paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.profiles import (
    ProfileDeclaration,
    ProfileSelection,
    owned_paths,
    parse_profile_selection,
    validate_declaration,
)
from aicr_tui.core.recipe.qualification import profile_value_diff, qualify
from aicr_tui.core.recipe.values import resolve_component_values
from tests.recipe_resolve import resolve
from tests.unit.test_recipe_fixtures import (  # noqa: F401  (autouse fixture)
    AUTHORING,
    _private_cache,
    build,
    gpu_base,
    overlay,
)


def declaration(**override: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "gpuStack",
        "default": "provider",
        "values": {
            "provider": {
                "constraints": [{"name": "K8s.aks-gpu-pools.gpu-driver", "value": "Install"}],
                "componentRefs": [
                    {"name": "gpu-operator", "overrides": {"driver": {"enabled": False}}},
                    {"name": "nvidia-dra-driver-gpu", "overrides": {"root": "/"}},
                ],
            },
            "operator": {
                "constraints": [{"name": "K8s.aks-gpu-pools.gpu-driver", "value": "None"}],
                "readinessConstraints": [{"name": "K8s.server.version", "value": ">= 1.34"}],
                "componentRefs": [
                    {"name": "gpu-operator", "overrides": {"driver": {"enabled": True}}},
                    {"name": "nvidia-dra-driver-gpu", "overrides": {"root": "/run/nvidia/driver"}},
                ],
            },
        },
    }
    decl.update(override)
    return decl


def profiled_catalog(tmp_path: Path, decl: dict[str, Any] | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    return build(
        tmp_path,
        base=gpu_base(
            {"name": "nvidia-dra-driver-gpu", "overrides": {"root": "/base"}},
            dependencyRefs=["cert-manager"],
            valuesFile="components/gpu-operator/values.yaml",
        ),
        overlays=[
            overlay("svc", criteria={"service": "aks"}, profile=decl or declaration()),
            overlay("leaf", criteria={"service": "aks", "intent": "training"}, base="svc"),
            *kw.pop("extra", []),
        ],
        files={"components/gpu-operator/values.yaml": {"driver": {"enabled": True, "v": 1}}},
        **kw,
    )


# ---------------------------------------------------------------------- selection parse
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpuStack", "profile must use the exact name=value form"),
        ("gpuStack=a=b", "profile must use the exact name=value form"),
        (" gpuStack=x", "profile must use the exact name=value form"),
        ("gpuStack=x ", "profile must use the exact name=value form"),
        ("gpu Stack=x", "profile name and value must match [A-Za-z0-9._-]+"),
        ("gpuStack=", "profile name and value must match [A-Za-z0-9._-]+"),
        ("=x", "profile name and value must match [A-Za-z0-9._-]+"),
        ("gpuStack=op/managed", "profile name and value must match [A-Za-z0-9._-]+"),
    ],
)
def test_selection_parse_errors(text: str, message: str) -> None:
    with pytest.raises(AicrError) as exc:
        parse_profile_selection(text)
    assert exc.value.message == message
    assert exc.value.exit_code == 2


def test_selection_parse_ok() -> None:
    assert parse_profile_selection(None) is None
    assert parse_profile_selection("") is None
    assert parse_profile_selection("gpuStack=operator-managed") == ProfileSelection(
        "gpuStack", "operator-managed"
    )


def test_selection_against_the_declaration(tmp_path: Path) -> None:
    cat = profiled_catalog(tmp_path)
    c = parse_criteria(service="aks", intent="training")
    wrong = qualify(c, "other=x", catalog=cat)
    assert wrong.error is not None
    assert wrong.error.message == 'resolved composition declares profile "gpuStack", not "other"'
    unknown = qualify(c, "gpuStack=nope", catalog=cat)
    assert unknown.error is not None
    assert (
        unknown.error.message
        == 'profile "gpuStack" has no value "nope"; valid values: [operator provider]'
    )
    # the verdict still says what the declaration offers (the wizard lists it)
    assert unknown.profile_values == ["operator", "provider"]
    assert unknown.profile_default == "provider"


def test_selection_without_declaration(tmp_path: Path) -> None:
    cat = build(tmp_path, overlays=[overlay("svc", criteria={"service": "aks"})])
    v = qualify(parse_criteria(service="aks"), "gpuStack=x", catalog=cat)
    assert v.error is not None
    assert (
        v.error.message
        == 'profile "gpuStack" was selected, but the resolved composition declares no profile'
    )
    ok = qualify(parse_criteria(service="aks"), None, catalog=cat)
    assert ok.ok and ok.recipe is not None
    assert ok.recipe.apiVersion == "aicr.run/v1" and ok.recipe.metadata.selectedProfile is None


# ------------------------------------------------------------------------- application
def test_default_and_explicit_value_fragments(tmp_path: Path) -> None:
    cat = profiled_catalog(tmp_path)
    c = parse_criteria(service="aks", intent="training")
    r = resolve(cat, c)
    assert r.apiVersion == "aicr.run/v1beta2"
    sp = r.metadata.selectedProfile
    assert sp is not None and (sp.name, sp.value) == ("gpuStack", "provider")
    assert sp.ownedPaths == {
        "gpu-operator": ["driver.enabled", "enabled"],
        "nvidia-dra-driver-gpu": ["enabled", "root"],
    }
    assert [(x.name, x.value) for x in r.constraints] == [
        ("K8s.aks-gpu-pools.gpu-driver", "Install")
    ]
    gpu = r.component("gpu-operator")
    assert gpu is not None
    # the fragment is inline, so it beats the values file
    assert resolve_component_values(cat, gpu)["driver"] == {"enabled": False, "v": 1}
    dra = r.component("nvidia-dra-driver-gpu")
    assert dra is not None and dra.overrides["root"] == "/"

    op = resolve(cat, c, profile="gpuStack=operator")
    assert [(x.name, x.value) for x in op.constraints] == [("K8s.aks-gpu-pools.gpu-driver", "None")]
    assert op.validation is not None and op.validation.readiness is not None
    assert [x.name for x in op.validation.readiness.constraints or []] == ["K8s.server.version"]
    assert op.component("gpu-operator").overrides["driver"]["enabled"] is True  # type: ignore[union-attr]


def test_profile_value_diff(tmp_path: Path) -> None:
    cat = profiled_catalog(tmp_path)
    changes = profile_value_diff(
        parse_criteria(service="aks", intent="training"), "provider", "operator", catalog=cat
    )
    got = {(c.component, c.path): (c.before, c.after) for c in changes}
    assert got[("gpu-operator", "driver.enabled")] == (False, True)
    assert got[("nvidia-dra-driver-gpu", "root")] == ("/", "/run/nvidia/driver")
    assert got[("constraints", "K8s.aks-gpu-pools.gpu-driver")] == ("Install", "None")


def test_owned_component_must_stay_enabled(tmp_path: Path) -> None:
    cat = profiled_catalog(
        tmp_path,
        extra=[
            overlay(
                "off",
                criteria={"service": "aks", "intent": "inference"},
                base="svc",
                componentRefs=[{"name": "nvidia-dra-driver-gpu", "overrides": {"enabled": False}}],
            )
        ],
    )
    v = qualify(parse_criteria(service="aks", intent="inference"), catalog=cat)
    assert v.error is not None
    assert v.error.message == (
        'profile "gpuStack" references component "nvidia-dra-driver-gpu", which is not enabled '
        "in the surviving composition"
    )


def test_multiple_declarations_rejected(tmp_path: Path) -> None:
    cat = profiled_catalog(
        tmp_path,
        extra=[overlay("other", criteria={"intent": "training"}, profile=declaration(name="x"))],
    )
    v = qualify(parse_criteria(service="aks", intent="training"), catalog=cat)
    assert v.error is not None
    assert (
        v.error.message == "resolved composition has multiple profile declarations from [other svc]"
    )


def test_legacy_replacement_resolves_unprofiled(tmp_path: Path) -> None:
    """A --data catalog replacing the profiled overlay with a legacy copy is unprofiled."""
    cat_dir = tmp_path / "embedded"
    profiled_catalog(cat_dir)
    ext = tmp_path / "ext"
    (ext / "overlays").mkdir(parents=True)
    (ext / "registry.yaml").write_text('{"kind": "ComponentRegistry", "components": []}')
    import json

    (ext / "overlays" / "svc.yaml").write_text(
        json.dumps(overlay("svc", criteria={"service": "aks"}, api=AUTHORING))
    )
    from aicr_tui.core.recipe.catalog import load_catalog

    cat = load_catalog(cat_dir / "catalog", external=ext)
    r = resolve(cat, parse_criteria(service="aks", intent="training"))
    assert r.apiVersion == "aicr.run/v1"
    assert r.metadata.selectedProfile is None and r.constraints == []


# --------------------------------------------------------------------- declaration load
@pytest.mark.parametrize(
    ("decl", "message"),
    [
        (declaration(default="missing"), 'default "missing" is not a declared value'),
        (declaration(values={}), "declares no values"),
        (declaration(name="bad name"), "profile name must match"),
        (
            declaration(
                values={
                    **declaration()["values"],
                    "Operator": declaration()["values"]["operator"],
                }
            ),
            "collide",
        ),
        (
            declaration(
                values={
                    "provider": declaration()["values"]["provider"],
                    "operator": {
                        "componentRefs": [
                            {"name": "gpu-operator", "overrides": {"driver": {"enabled": True}}}
                        ]
                    },
                }
            ),
            "must own the same paths",
        ),
        (
            declaration(
                values={
                    "provider": {
                        "componentRefs": [{"name": "gpu-operator", "overrides": {"enabled": True}}]
                    }
                }
            ),
            "root key enabled",
        ),
        (
            declaration(values={"provider": {"advertiser": "someone"}}),
            'advertiser must be empty or "external"',
        ),
        (
            declaration(
                values={
                    "provider": {
                        "componentRefs": [{"name": "gpu-operator", "overrides": {"a.b": 1}}]
                    }
                }
            ),
            'contain no "."',
        ),
        (
            declaration(
                values={
                    "provider": {
                        "constraints": [
                            {"name": "K8s.server.version", "value": "1"},
                            {"name": "K8s.server.version", "value": "2"},
                        ]
                    }
                }
            ),
            "repeats",
        ),
    ],
)
def test_declaration_validation(decl: dict[str, Any], message: str) -> None:
    model = ProfileDeclaration.model_validate(decl)
    with pytest.raises(AicrError) as exc:
        validate_declaration(model, "overlays/svc.yaml")
    assert message in exc.value.message
    assert exc.value.message.startswith("overlays/svc.yaml")


def test_api_version_and_declaration_are_coupled(tmp_path: Path) -> None:
    with pytest.raises(AicrError, match="requires apiVersion"):
        build(
            tmp_path / "a",
            overlays=[
                overlay("svc", criteria={"service": "aks"}, api=AUTHORING, profile=declaration())
                | {"apiVersion": AUTHORING}
            ],
        )
    with pytest.raises(AicrError, match="requires spec.profile"):
        build(
            tmp_path / "b",
            overlays=[overlay("svc", criteria={"service": "aks"}, api="aicr.run/v1beta2")],
        )


def test_owned_paths_sorted_with_synthetic_enabled() -> None:
    model = ProfileDeclaration.model_validate(declaration())
    assert owned_paths(model) == {
        "gpu-operator": ["driver.enabled", "enabled"],
        "nvidia-dra-driver-gpu": ["enabled", "root"],
    }
