"""Catalog loading: load-time checks, the parse cache and ``--data`` layering."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.catalog import clear_catalog_cache, load_catalog
from tests.recipe_resolve import resolve
from tests.unit.test_recipe_fixtures import (  # noqa: F401  (autouse fixture)
    _private_cache,
    build,
    helm,
    overlay,
    write_catalog,
)


def test_parse_cache_is_used_and_invalidated(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "c", overlays=[overlay("svc", criteria={"service": "aks"})])
    load_catalog(root)
    caches = list((tmp_path / "cache").glob("catalog-*.json"))
    assert len(caches) == 1
    # a warm load reads the cache: prove it by planting a marker only the cache knows
    # (resealed: the cache holds validated models, so an unsealed edit is refused below)
    header, body = caches[0].read_bytes().split(b"\n", 1)
    doc = json.loads(body)
    (svc,) = [ov for ov in doc["overlays"] if ov["path"] == "overlays/svc.yaml"]
    svc["criteria"]["service"] = "oke"
    planted = json.dumps(doc).encode()
    caches[0].write_bytes(reseal(header, planted) + planted)
    clear_catalog_cache()
    assert "oke" in load_catalog(root).registered["service"]
    # the same edit without its seal is a tampered cache: ignored, and rebuilt from the files
    caches[0].write_bytes(header + b"\n" + planted)
    clear_catalog_cache()
    assert load_catalog(root).registered["service"] == {"aks"}
    assert "oke" not in caches[0].read_text()
    # editing a file changes the fingerprint: the cache entry is ignored and replaced
    path = root / "overlays" / "svc.yaml"
    path.write_text(json.dumps(overlay("svc", criteria={"service": "aks", "intent": "training"})))
    os.utime(path, ns=(1, 1))
    clear_catalog_cache()
    cat = load_catalog(root)
    assert cat.overlays["svc"].criteria is not None
    assert cat.overlays["svc"].criteria.intent == "training"
    # a corrupt cache is only a cache miss
    for cache in (tmp_path / "cache").glob("catalog-*.json"):
        cache.write_text("{not json")
    clear_catalog_cache()
    assert load_catalog(root).overlays["svc"].criteria.intent == "training"  # type: ignore[union-attr]


def reseal(header: bytes, body: bytes) -> bytes:
    """The cache's first line (``aicr-tui catalog cache <format> <key> <BLAKE2b-256 of
    body>``) for a new body."""
    words = header.split(b" ")
    seal = hashlib.blake2b(body, digest_size=32).hexdigest().encode()
    return b" ".join([*words[:-1], seal]) + b"\n"


def test_cache_can_be_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AICR_TUI_NO_CACHE", "1")
    build(tmp_path, overlays=[overlay("svc", criteria={"service": "aks"})])
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"kind": "Bogus", "apiVersion": "aicr.run/v1beta1"},
            'unknown kind "Bogus" in the aicr.run group',
        ),
        (
            {"kind": "RecipeMetadata", "apiVersion": "aicr.run/v0", "metadata": {"name": "x"}},
            'apiVersion "aicr.run/v0" is not supported',
        ),
        ({"kind": "RecipeMetadata", "apiVersion": "aicr.run/v1beta1", "spec": {}}, "metadata.name"),
        (
            overlay(
                "x", criteria={"service": "aks"}, constraints=[{"name": "K9s.x.y", "value": "1"}]
            ),
            'unknown measurement type "K9s"',
        ),
        (
            overlay(
                "x",
                criteria={"service": "aks"},
                constraints=[{"name": "K8s.oke-addons.nvidia-gpu-plugn", "value": "installed"}],
            ),
            'did you mean "K8s.oke-addons.nvidia-gpu-plugin"',
        ),
        (overlay("x", criteria={"flavour": "aks"}), "unknown criteria field flavour"),
        (overlay("x", criteria={"service": "aks"}, surprise=1), "is malformed at spec.surprise"),
    ],
)
def test_overlay_load_errors_name_the_file(tmp_path: Path, doc: dict, message: str) -> None:  # type: ignore[type-arg]
    root = write_catalog(tmp_path / "c")
    (root / "overlays" / "bad.yaml").write_text(json.dumps(doc))
    with pytest.raises(AicrError) as exc:
        load_catalog(root)
    assert message in exc.value.message
    assert "overlays/bad.yaml" in exc.value.message


def test_missing_base_or_registry(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "c")
    (root / "overlays" / "base.yaml").unlink()
    with pytest.raises(AicrError, match="has no overlays/base.yaml"):
        load_catalog(root)
    with pytest.raises(AicrError, match="does not exist"):
        load_catalog(tmp_path / "nowhere")


def test_data_layering(tmp_path: Path) -> None:
    root = write_catalog(
        tmp_path / "embedded",
        overlays=[overlay("svc", criteria={"service": "aks"})],
        files={"components/gpu-operator/values.yaml": {"from": "embedded"}},
    )
    ext = tmp_path / "ext"
    write_catalog(
        ext,
        registry=[helm("gpu-operator", "custom-ns"), helm("newcomp", "new")],
        overlays=[
            overlay(
                "svc",
                criteria={"service": "aks"},
                componentRefs=[{"name": "newcomp"}],
            ),
            overlay("togetherai", criteria={"service": "togetherai"}),
        ],
        files={"components/gpu-operator/values.yaml": {"from": "external"}},
    )
    (ext / "overlays" / "base.yaml").unlink()  # the layer only adds what it changes
    cat = load_catalog(root, external=ext)
    assert cat.registry.get("gpu-operator").namespace == "custom-ns"  # type: ignore[union-attr]
    assert cat.registry.get("cert-manager") is not None  # kept from the embedded registry
    assert cat.read_values_file("components/gpu-operator/values.yaml") == {"from": "external"}
    r = resolve(cat, parse_criteria(service="aks"))
    assert "newcomp" in r.deploymentOrder
    # values seen in external overlays become valid criteria
    assert "togetherai" in cat.criteria_values("service")


def test_data_layer_rejects_symlinks_and_nodes(tmp_path: Path) -> None:
    root = write_catalog(
        tmp_path / "embedded", overlays=[overlay("svc", criteria={"service": "aks"})]
    )
    ext = write_catalog(tmp_path / "ext", registry=[])
    (ext / "overlays" / "link.yaml").symlink_to(root / "overlays" / "svc.yaml")
    with pytest.raises(AicrError, match="is a symlink"):
        load_catalog(root, external=ext)
    (ext / "overlays" / "link.yaml").unlink()
    (ext / "overlays" / "n.yaml").write_text(
        json.dumps(overlay("n", criteria={"service": "aks", "nodes": 4}))
    )
    with pytest.raises(AicrError, match="may not set criteria.nodes"):
        load_catalog(root, external=ext)


def test_shipped_catalog_loads_and_has_the_promised_overlays() -> None:
    cat = load_catalog()
    # Issue 33: the OKE family root is upstream's oke-ol.
    for name in ("aks", "oke-ol", "monitoring-hpa", "h100-any", "gb200-any"):
        assert name in cat.overlays
    assert cat.overlays["aks"].spec.profile is not None
    assert cat.overlays["oke-ol"].spec.profile is not None
    for alias in ("gpuoperator", "dradriver", "networkoperator", "nodewrightcustomizations"):
        assert cat.registry.find(alias) is not None, alias
