"""``--data`` directories a user layers over the shipped catalogs: a damaged overlay beside
the registry (recipe engine) and a damaged validator catalog (validate). Loading either
succeeds or fails with one AicrError line; a loaded recipe catalog still qualifies without
raising (``qualify`` reports problems in its verdict), and the live DaemonSet classifier
never crashes on whatever object the API returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aicr_tui.core.capture.oke_legacy import LegacyPluginProjection, classify_legacy_daemonset
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.catalog import Catalog, clear_catalog_cache, load_catalog
from aicr_tui.core.validation.catalog import ValidatorCatalog, load_validator_catalog
from tests.fuzz.fuzz_support import (
    FUZZ_SMALL,
    REPO,
    check_contract,
    json_values,
    mutated,
    qualify_aks_training,
    scratch_dir,
)

RECIPES = REPO / "aicr_tui" / "recipes"
OVERLAY = RECIPES / "overlays" / "h100-aks-training.yaml"


_counter = [0]


def _fresh_data_dir() -> Path:
    _counter[0] += 1
    d = scratch_dir(f"data-{_counter[0]}")
    (d / "overlays").mkdir()
    (d / "validators").mkdir()
    return d


@settings(FUZZ_SMALL, max_examples=8)  # each example loads the whole catalog (~0.3 s)
@given(st.data())
def test_external_recipe_catalog_with_a_damaged_overlay(data: st.DataObject) -> None:
    d = _fresh_data_dir()
    (d / "registry.yaml").write_bytes((RECIPES / "registry.yaml").read_bytes())
    overlay = data.draw(mutated(OVERLAY.read_bytes()))
    (d / "overlays" / OVERLAY.name).write_bytes(overlay)
    try:
        out = check_contract(lambda: load_catalog(external=d))
        if isinstance(out, Catalog):
            verdict = qualify_aks_training(out, None)
            assert verdict.recipe is not None or verdict.error is not None
            if verdict.error is not None:
                assert "\n" not in verdict.error.render()
    finally:
        clear_catalog_cache()


@FUZZ_SMALL
@given(st.one_of(st.binary(max_size=200), st.data()))
def test_external_validator_catalog(content: Any) -> None:
    d = _fresh_data_dir()
    if isinstance(content, bytes):
        raw = content
    else:
        raw = content.draw(mutated((RECIPES / "validators" / "catalog.yaml").read_bytes()))
    (d / "validators" / "catalog.yaml").write_bytes(raw)
    out = check_contract(lambda: load_validator_catalog(d, environ={}))
    if isinstance(out, ValidatorCatalog):
        names = [e.name for e in out.validators]
        assert len(names) == len(set(names))


@FUZZ_SMALL
@given(
    st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["metadata", "status", "kind", "spec"]),
            st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "labels": st.one_of(
                            json_values,
                            st.just({"addonmanager.kubernetes.io/mode": "Reconcile"}),
                        ),
                        "desiredNumberScheduled": st.one_of(
                            st.integers(min_value=-2, max_value=3), json_values
                        ),
                        "desired_number_scheduled": json_values,
                    },
                ),
            ),
            max_size=3,
        ),
    ),
    st.one_of(st.none(), st.text(max_size=30)),
)
def test_live_daemonset_classifier(obj: dict[str, Any] | None, error: str | None) -> None:
    out = check_contract(lambda: classify_legacy_daemonset(obj, error=error))
    if isinstance(out, LegacyPluginProjection):
        assert out.reason.strip()
        if error is not None:
            assert out.plugin == "unknown"
    else:
        assert isinstance(out, AicrError) and error is None
