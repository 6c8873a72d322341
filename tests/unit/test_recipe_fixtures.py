"""Small catalogs built in a temporary directory, shared by the recipe engine tests.

JSON is valid YAML, so documents are written with ``json.dumps``. Each helper returns
plain dicts so a test states exactly the overlay it needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.recipe.catalog import Catalog, load_catalog

AUTHORING = "aicr.run/v1beta1"
PROFILE = "aicr.run/v1beta2"


def helm(name: str, ns: str, *, aliases: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "valueOverrideKeys": aliases or [name.replace("-", "")],
        "helm": {
            "defaultRepository": f"https://charts.example/{name}",
            "defaultChart": f"example/{name}",
            "defaultVersion": "v1.0.0",
            "defaultNamespace": ns,
        },
    }
    entry.update(extra)
    return entry


DEFAULT_REGISTRY = [
    helm("cert-manager", "cert-manager", aliases=["certmanager"]),
    helm("gpu-operator", "gpu-operator", aliases=["gpuoperator"]),
    helm("network-operator", "nvidia-network-operator", aliases=["networkoperator"]),
    helm("nvidia-dra-driver-gpu", "nvidia-dra-driver", aliases=["dradriver"]),
    helm("monitoring", "monitoring", mixinSafeOverridePaths=["scrape.interval"]),
    helm("extra", "extra", mixinSafeOverridePaths=["a.b"]),
]


def overlay(
    name: str,
    *,
    criteria: dict[str, Any] | None = None,
    base: str | None = None,
    api: str = AUTHORING,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = dict(spec)
    if criteria is not None:
        body["criteria"] = criteria
    if base is not None:
        body["base"] = base
    if "profile" in body and api == AUTHORING:
        api = PROFILE
    return {"kind": "RecipeMetadata", "apiVersion": api, "metadata": {"name": name}, "spec": body}


def gpu_base(
    *extra: dict[str, Any], spec: dict[str, Any] | None = None, **gpu_operator: Any
) -> dict[str, Any]:
    """The base overlay most catalog tests start from: cert-manager, then gpu-operator with
    ``gpu_operator``'s fields, then any ``extra`` component references (``spec``: more of the
    overlay's spec)."""
    refs = [{"name": "cert-manager"}, {"name": "gpu-operator", **gpu_operator}, *extra]
    return overlay("base", componentRefs=refs, **(spec or {}))


def mixin(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "kind": "RecipeMixin",
        "apiVersion": AUTHORING,
        "metadata": {"name": name},
        "spec": spec,
    }


BASE_REFS = [
    {"name": "cert-manager"},
    {"name": "gpu-operator", "dependencyRefs": ["cert-manager"]},
]


def write_catalog(
    root: Path,
    *,
    base: dict[str, Any] | None = None,
    overlays: list[dict[str, Any]] = (),  # type: ignore[assignment]
    mixins: list[dict[str, Any]] = (),  # type: ignore[assignment]
    registry: list[dict[str, Any]] | None = None,
    files: dict[str, Any] | None = None,
) -> Path:
    (root / "overlays").mkdir(parents=True, exist_ok=True)
    (root / "mixins").mkdir(exist_ok=True)
    reg = {
        "apiVersion": AUTHORING,
        "kind": "ComponentRegistry",
        "components": registry if registry is not None else DEFAULT_REGISTRY,
    }
    (root / "registry.yaml").write_text(json.dumps(reg))
    base_doc = base if base is not None else overlay("base", componentRefs=BASE_REFS)
    (root / "overlays" / "base.yaml").write_text(json.dumps(base_doc))
    for doc in overlays:
        (root / "overlays" / f"{doc['metadata']['name']}.yaml").write_text(json.dumps(doc))
    for doc in mixins:
        (root / "mixins" / f"{doc['metadata']['name']}.yaml").write_text(json.dumps(doc))
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return root


def build(tmp_path: Path, **kwargs: Any) -> Catalog:
    return load_catalog(write_catalog(tmp_path / "catalog", **kwargs))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AICR_TUI_CACHE_DIR", str(tmp_path / "cache"))


def test_fixture_catalog_loads(tmp_path: Path) -> None:
    cat = build(tmp_path, overlays=[overlay("svc", criteria={"service": "aks"})])
    assert cat.overlays["svc"].chain == ("base", "svc")
    assert cat.registry.find("gpuoperator") is not None
    assert cat.registry.find("gpuoperator").name == "gpu-operator"  # type: ignore[union-attr]
    assert "aks" in cat.registered["service"]
