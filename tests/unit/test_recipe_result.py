"""RecipeResult documents, criteria parsing and query selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr_tui.core.documents.criteria import Criteria, overlay_matches, parse_criteria
from aicr_tui.core.documents.recipe_result import (
    ComponentRef,
    RecipeResult,
    render_recipe,
)
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.loading import load_recipe, parse_recipe
from aicr_tui.core.recipe.qualification import qualify
from aicr_tui.core.recipe.query import hydrate, render_value, select

MINIMAL = {
    "kind": "RecipeResult",
    "apiVersion": "aicr.run/v1",
    "criteria": {"service": "aks"},
    "componentRefs": [{"name": "a", "type": "Helm", "source": "https://x", "version": "v1"}],
    "deploymentOrder": ["a"],
}


# ------------------------------------------------------------------------------ criteria
def test_criteria_normalisation_and_aliases() -> None:
    c = parse_criteria(service=" AKS ", accelerator="H100", os="al2023", intent=None)
    assert (c.service, c.accelerator, c.os, c.intent, c.platform) == (
        "aks",
        "h100",
        "amazonlinux",
        "any",
        "any",
    )
    assert parse_criteria(service="self-managed").service == "any"
    assert parse_criteria(service="OpenShift").service == "ocp"


@pytest.mark.parametrize(
    ("field", "value", "flag"),
    [
        ("service", "azure", "--service"),
        ("accelerator", "h900", "--accelerator"),
        ("intent", "serving", "--intent"),
        ("os", "windows", "--os"),
        ("platform", "ray", "--platform"),
    ],
)
def test_criteria_unknown_value_lists_valid_ones(field: str, value: str, flag: str) -> None:
    with pytest.raises(AicrError) as exc:
        parse_criteria(**{field: value})
    msg = exc.value.message
    assert msg.startswith(f'invalid {field} type: "{value}" ({flag}); valid values: ')
    assert exc.value.exit_code == 2
    assert "any" not in msg.split("valid values: ")[1].split(", ")


def test_criteria_registered_values_and_nodes() -> None:
    assert parse_criteria(service="togetherai", registered={"service": ["togetherai"]}).service == (
        "togetherai"
    )
    assert parse_criteria(service="aks", nodes="4").nodes == 4
    for bad in ("-1", "two", True):
        with pytest.raises(AicrError, match="expected an integer >= 0"):
            parse_criteria(service="aks", nodes=bad)


def test_match_is_asymmetric_and_specificity_counts_specific_fields() -> None:
    wild = Criteria(service="aks")
    leaf = Criteria(service="aks", accelerator="h100")
    assert overlay_matches(wild, Criteria(service="aks", accelerator="h100"))
    assert not overlay_matches(leaf, Criteria(service="aks"))  # query any vs specific overlay
    assert overlay_matches(leaf, Criteria(service="aks", accelerator="h100", os="ubuntu"))
    assert Criteria(service="aks", accelerator="h100", nodes=2).specificity == 3
    assert Criteria().specificity == 0


# ------------------------------------------------------------------------ RecipeResult
def test_render_omits_empty_fields_but_keeps_required_ones() -> None:
    r = RecipeResult(componentRefs=[ComponentRef(name="a")])
    doc = r.to_document()
    assert list(doc) == [
        "kind",
        "apiVersion",
        "metadata",
        "criteria",
        "componentRefs",
        "deploymentOrder",
    ]
    assert doc["componentRefs"] == [{"name": "a", "type": "", "source": ""}]
    assert doc["criteria"] == {
        "service": "any",
        "accelerator": "any",
        "intent": "any",
        "os": "any",
        "platform": "any",
    }
    assert doc["metadata"] == {}


def test_enabled_property() -> None:
    assert ComponentRef(name="a").enabled
    assert not ComponentRef(name="a", overrides={"enabled": False}).enabled
    assert not ComponentRef(name="a", overrides={"install": False}).enabled
    assert ComponentRef(name="a", overrides={"enabled": "false"}).enabled  # non-bool ignored


def test_round_trip_yaml_and_json(tmp_path: Path) -> None:
    v = qualify(parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="training"))
    assert v.recipe is not None
    for fmt in ("yaml", "json"):
        text = render_recipe(v.recipe, fmt)
        again = parse_recipe(text, f"r.{fmt}")
        assert again == v.recipe
        assert render_recipe(again, fmt) == text
    path = tmp_path / "recipe.yaml"
    path.write_text(render_recipe(v.recipe))
    assert load_recipe(str(path)) == v.recipe


@pytest.mark.parametrize("api", ["aicr.run/v1alpha2", "aicr.run/v1beta1", "aicr.run/v1"])
def test_older_api_versions_are_read(api: str) -> None:
    doc = dict(MINIMAL, apiVersion=api)
    assert parse_recipe(json.dumps(doc), "r.yaml").apiVersion == api


def test_legacy_excluded_overlay_strings_are_read() -> None:
    doc = dict(MINIMAL, metadata={"excludedOverlays": ["a", {"name": "b", "reason": "x"}]})
    r = parse_recipe(json.dumps(doc), "r.yaml")
    assert [(e.name, e.reason) for e in r.metadata.excludedOverlays] == [("a", ""), ("b", "x")]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1, 2], 'recipe file "r.yaml" is not a mapping'),
        (dict(MINIMAL, kind="Snapshot"), 'has kind "Snapshot", expected "RecipeResult"'),
        (dict(MINIMAL, kind="Recipe"), 'legacy kind "Recipe"'),
        ({**MINIMAL, "apiVersion": ""}, "has no apiVersion"),
        (dict(MINIMAL, apiVersion="aicr.run/v9"), 'apiVersion "aicr.run/v9", which this build'),
        (
            dict(MINIMAL, metadata={"selectedProfile": {"name": "g", "value": "v"}}),
            "carries metadata.selectedProfile but apiVersion",
        ),
        (dict(MINIMAL, surprise=1), "is malformed at surprise"),
        (
            dict(MINIMAL, componentRefs=[{"name": "a"}, {"name": "a"}]),
            "declares component a more than once",
        ),
        (dict(MINIMAL, componentRefs=[{"name": "deployer"}]), 'reserved component name "deployer"'),
    ],
)
def test_recipe_parse_errors(doc: object, message: str) -> None:
    with pytest.raises(AicrError) as exc:
        parse_recipe(json.dumps(doc), "r.yaml")
    assert message in exc.value.message
    assert "\n" not in exc.value.render()


def test_load_recipe_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(AicrError, match="recipe file .*nope.yaml.* does not exist"):
        load_recipe(str(tmp_path / "nope.yaml"))


def test_render_rejects_unknown_format() -> None:
    with pytest.raises(AicrError, match='--format "table" is not supported'):
        render_recipe(RecipeResult(), "table")


# ------------------------------------------------------------------------------- query
def test_query_selection_and_rendering() -> None:
    from aicr_tui.core.recipe.catalog import load_catalog

    cat = load_catalog()
    v = qualify(parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="training"))
    assert v.recipe is not None
    tree = hydrate(cat, v.recipe)
    assert select(tree, "components.gpu-operator.values.driver.enabled") is False
    assert select(tree, "criteria.service") == "aks"
    assert select(tree, "deploymentOrder.0") == v.recipe.deploymentOrder[0]
    assert select(tree, "") is tree
    assert render_value(False) == "false\n"
    assert render_value("aks") == "aks\n"
    assert render_value(3, "json") == "3\n"
    assert render_value({"b": 1, "a": 2}) == "a: 2\nb: 1\n"
    with pytest.raises(AicrError, match='no key "nope" under "components"'):
        select(tree, "components.nope")
    with pytest.raises(AicrError, match="is a scalar"):
        select(tree, "criteria.service.x")


def test_query_greedy_dotted_keys() -> None:
    tree = {"labels": {"nvidia.com/gpu.present": "true", "a": {"b": 1}}}
    assert select(tree, "labels.nvidia.com/gpu.present") == "true"
    assert select(tree, "labels.a.b") == 1


# ------------------------------------------------------------ RecipeMetadata as input
def test_overlay_file_is_re_resolved_from_its_criteria(tmp_path: Path) -> None:
    from tests.conftest import RECIPES

    r = load_recipe(str(RECIPES / "overlays" / "h100-aks-ubuntu-training.yaml"))
    assert r.kind == "RecipeResult" and r.apiVersion == "aicr.run/v1beta2"
    assert r.metadata.appliedOverlays[-1] == "h100-aks-ubuntu-training"
    assert r.metadata.selectedProfile is not None
    assert r.metadata.selectedProfile.value == "azure-managed"  # the declared default

    doc = {"kind": "RecipeMetadata", "apiVersion": "aicr.run/v1beta1", "metadata": {"name": "x"}}
    with pytest.raises(AicrError, match="RecipeMetadata without criteria"):
        parse_recipe(json.dumps(doc), "x.yaml")
    doc["spec"] = {"criteria": {"service": "aks"}, "mixins": ["os-nothing"]}
    with pytest.raises(AicrError, match="declares mixins no applied overlay declares: os-nothing"):
        parse_recipe(json.dumps(doc), "x.yaml")
    doc["spec"] = {
        "criteria": {"service": "aks"},
        "profile": {"name": "gpuStack", "default": "a", "values": {"a": {}}},
    }
    with pytest.raises(AicrError, match="differs from the catalog's resolved declaration"):
        parse_recipe(json.dumps(doc), "x.yaml")


def test_criteria_from_snapshot_fingerprint() -> None:
    from aicr_tui.core.documents.criteria import criteria_from_snapshot
    from aicr_tui.core.documents.snapshot import load_snapshot
    from tests.conftest import SAMPLES

    aks = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-install.yaml"))
    assert criteria_from_snapshot(aks) == {"service": "aks", "accelerator": "h100", "os": "ubuntu"}
    oke = load_snapshot(str(SAMPLES / "snapshots" / "oke-gb200-active.yaml"))
    assert criteria_from_snapshot(oke) == {"service": "oke", "accelerator": "gb200", "os": "ol"}


def test_multiline_strings_render_as_literal_blocks_and_round_trip() -> None:
    text = "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\n  indented: true\ntrailing  \n"
    r = RecipeResult(
        componentRefs=[
            ComponentRef(name="a", healthCheckAsserts=text),
            ComponentRef(name="b", healthCheckAsserts="  leading space\nsecond\n"),
        ]
    )
    rendered = render_recipe(r)
    assert "healthCheckAsserts: |" in rendered
    again = parse_recipe(rendered, "r.yaml")
    assert [c.healthCheckAsserts for c in again.componentRefs] == [
        text,
        "  leading space\nsecond\n",
    ]
