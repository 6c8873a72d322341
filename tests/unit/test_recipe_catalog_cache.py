"""The on-disk parse cache must never change what the catalog yields, key order included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_recipe_catalog import reseal
from tests.unit.test_recipe_fixtures import overlay, write_catalog


def test_cached_catalog_keeps_key_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recipe resolved from a cold parse and one resolved from the cache are byte-identical."""
    import aicr_tui.core.recipe.catalog as catalog_mod
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.documents.recipe_result import render_recipe
    from aicr_tui.core.recipe.qualification import qualify

    monkeypatch.setenv("AICR_TUI_CACHE_DIR", str(tmp_path / "cache"))
    criteria = parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="training")

    def render_fresh() -> str:
        catalog_mod.clear_catalog_cache()
        cat = catalog_mod.load_catalog(catalog_mod.default_data_dir())
        verdict = qualify(criteria, None, None, catalog=cat)
        assert verdict.recipe is not None
        return render_recipe(verdict.recipe)

    cold = render_fresh()
    assert list((tmp_path / "cache").glob("catalog-*.json")), "the first load writes the cache"
    warm = render_fresh()
    assert warm == cold


# ------------------------------------------------------------- the validated cache (17)
def _catalog_state(cat: Any) -> tuple[Any, ...]:
    return (
        cat.base,
        cat.overlays,
        cat.mixins,
        cat.registry,
        cat.files,
        cat.registered,
        cat._docs,
        cat.data_dir,
        cat.external,
    )


def _load(root: Path, ext: Path | None = None) -> Any:
    import aicr_tui.core.recipe.catalog as catalog_mod

    catalog_mod.clear_catalog_cache()
    return catalog_mod.load_catalog(root, external=ext)


def _caches(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("catalog-*.json"))


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AICR_TUI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_cache_hit_rebuilds_the_catalog_a_full_load_makes(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped catalog, models and values files alike, equal field for field."""
    from aicr_tui.core.recipe.catalog import default_data_dir

    monkeypatch.setenv("AICR_TUI_NO_CACHE", "1")
    full = _load(default_data_dir())
    monkeypatch.delenv("AICR_TUI_NO_CACHE")
    first = _load(default_data_dir())  # validates, writes the cache
    assert len(_caches(tmp_path)) == 1
    hit = _load(default_data_dir())
    assert _catalog_state(hit) == _catalog_state(first) == _catalog_state(full)
    for name, ov in full.overlays.items():
        assert hit.overlays[name].spec.model_dump() == ov.spec.model_dump(), name
    assert hit.registry.model_dump() == full.registry.model_dump()


def test_a_cache_hit_validates_and_parses_nothing(tmp_path: Path) -> None:
    """Issue 17: a warm process neither parses nor checks a catalog file (issue 36: its
    documents are pydantic models, so pydantic is imported and rebuilds them)."""
    code = (
        "import json, sys\n"
        "import aicr_tui.core.recipe.catalog as cat\n"
        "calls = []\n"
        "for name in ('_parse', '_validated'):\n"
        "    real = getattr(cat, name)\n"
        "    def spy(*a, _real=real, _name=name, **k):\n"
        "        calls.append(_name)\n"
        "        return _real(*a, **k)\n"
        "    setattr(cat, name, spy)\n"
        "from aicr_tui.core.recipe.qualification import qualify\n"
        "from aicr_tui.core.documents.criteria import parse_criteria\n"
        "from aicr_tui.core.documents.recipe_result import render_recipe\n"
        "c = parse_criteria(service='aks', accelerator='h100', os='ubuntu', intent='training')\n"
        "render_recipe(qualify(c, None, None, catalog=cat.load_catalog()).recipe)\n"
        "print(json.dumps([sorted(set(calls))]))\n"
    )
    env = {**os.environ, "AICR_TUI_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("AICR_TUI_NO_CACHE", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        for _ in range(2)
    ]
    cold, warm = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert cold[0] == ["_parse", "_validated"], "the first run parses and checks the catalog"
    assert warm == [[]]


def test_an_edit_that_keeps_size_and_mtime_still_invalidates(
    tmp_path: Path, private_cache: Path
) -> None:
    """The key is the content: a same-size edit with the old mtime is not served stale."""
    root = write_catalog(tmp_path / "c", overlays=[overlay("svc", criteria={"service": "aks"})])
    assert _load(root).registered["service"] == {"aks"}
    path = root / "overlays" / "svc.yaml"
    before = path.stat()
    path.write_text(path.read_text().replace('"aks"', '"oke"'))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert _load(root).registered["service"] == {"oke"}
    assert len(_caches(tmp_path)) == 2


def test_a_data_layer_has_its_own_cache_and_its_edits_invalidate_it(
    tmp_path: Path, private_cache: Path
) -> None:
    root = write_catalog(tmp_path / "c", overlays=[overlay("svc", criteria={"service": "aks"})])
    ext = tmp_path / "ext"
    write_catalog(ext, overlays=[overlay("extra", criteria={"service": "oke"})])
    (ext / "overlays" / "base.yaml").unlink()
    assert _load(root).registered["service"] == {"aks"}
    layered = _load(root, ext)
    assert layered.registered["service"] == {"aks", "oke"} and "extra" in layered.overlays
    assert len(_caches(tmp_path)) == 2
    assert "extra" in _load(root, ext).overlays  # from its cache
    (ext / "overlays" / "extra.yaml").write_text(
        json.dumps(overlay("extra", criteria={"service": "gke"}))
    )
    assert _load(root, ext).registered["service"] == {"aks", "gke"}
    assert _load(root).registered["service"] == {"aks"}


@pytest.mark.parametrize("damage", ["truncated", "edited", "others-writable", "fifo", "garbage"])
def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(
    tmp_path: Path, private_cache: Path, damage: str
) -> None:
    root = write_catalog(tmp_path / "c", overlays=[overlay("svc", criteria={"service": "aks"})])
    expected = _catalog_state(_load(root))
    (cache,) = _caches(tmp_path)
    data = cache.read_bytes()
    header, body = data.split(b"\n", 1)
    if damage == "truncated":
        cache.write_bytes(data[: len(data) // 2])
    elif damage == "edited":  # a marker planted without resealing
        cache.write_bytes(header + b"\n" + body.replace(b'"aks"', b'"oke"'))
    elif damage == "others-writable":  # sealed, but anyone could have written it
        body = body.replace(b'"aks"', b'"oke"')
        cache.write_bytes(reseal(header, body) + body)
        cache.chmod(0o666)
    elif damage == "fifo":  # must not block
        cache.unlink()
        os.mkfifo(cache)
    else:  # sealed JSON that is not a catalog
        body = b'{"overlays": 1}'
        cache.write_bytes(reseal(header, body) + body)
    assert _catalog_state(_load(root)) == expected
    if damage != "fifo":
        assert _catalog_state(_load(root)) == expected  # the replacement is a valid cache
        assert cache.read_bytes() == data


@pytest.mark.parametrize(
    ("genuine", "forged"),
    [
        ('"gpu-operator"', '"gpu-operator$(touch pwned)"'),  # component name and namespace
        ('"https://helm.ngc.nvidia.com/nvidia"', '"https://user:pw@helm.example/nvidia"'),
        ('"cert-manager"', '"--kubeconfig=/tmp/x"'),
        ('"components/gpu-operator/values.yaml"', '"../../../../etc/passwd"'),
        ('"v1.20.2"', '"v1.20.2 --post-renderer=/tmp/x"'),
    ],
    ids=["shell-payload", "credentials-url", "option-like", "traversal", "chart-version"],
)
def test_a_resealed_cache_with_hostile_names_is_ignored_and_replaced(
    tmp_path: Path, private_cache: Path, genuine: str, forged: str
) -> None:
    """The seal says the file is whole, not who wrote it: a cache edited by hand and sealed
    again reaches no further than the catalog's own files could. Its names go through the
    full load's grammar checks; one that fails sends the load back to the files."""
    import aicr_tui.core.recipe.catalog as catalog_mod

    root = catalog_mod.default_data_dir()
    expected = _catalog_state(_load(root))
    (cache,) = _caches(tmp_path)
    data = cache.read_bytes()
    header, body = data.split(b"\n", 1)
    assert genuine.encode() in body, f"the shipped catalog holds no {genuine}"
    body = body.replace(genuine.encode(), forged.encode())
    cache.write_bytes(reseal(header, body) + body)
    forged_state = _catalog_state(_load(root))
    assert forged_state == expected
    assert forged.encode() not in repr(forged_state).encode()
    assert cache.read_bytes() == data  # the genuine cache took its place
