"""The on-disk parse cache must never change what the catalog yields, key order included."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_cached_catalog_keeps_key_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recipe resolved from a cold parse and one resolved from the cache are byte-identical."""
    import core.recipe.catalog as catalog_mod
    from core.documents.criteria import parse_criteria
    from core.documents.recipe_result import render_recipe
    from core.recipe.qualification import qualify

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
