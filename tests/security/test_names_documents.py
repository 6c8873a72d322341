"""Names are validated where documents are read: recipe files, catalog overlays, mixins,
the registry and ``--data`` layers refuse a hostile name with one line naming the field,
and ``aicr-tui bundle`` exits 2 writing nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.recipe_result import render_recipe
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.recipe.catalog import clear_catalog_cache, load_catalog
from aicr_tui.core.recipe.loading import parse_recipe
from tests.conftest import run_cli
from tests.security import hostile
from tests.unit.test_recipe_fixtures import (  # noqa: F401  (autouse fixture)
    _private_cache,
    helm,
    mixin,
    overlay,
    write_catalog,
)

NEVER_VALID = [v for v in hostile.SHELL + hostile.OPTIONS + hostile.PATHS + hostile.CONTROL if v]
NAME_ONLY = NEVER_VALID + [v for v in hostile.GRAMMAR if v not in ("1.2.3.4.5",)] + [""]


@pytest.fixture(scope="module")
def recipe_doc() -> dict[str, Any]:
    from tests.unit.test_bundle_support import demo_recipe

    return demo_recipe("aks-azure").to_document()


def _with(doc: dict[str, Any], index: int, field: str, value: Any) -> str:
    out = json.loads(json.dumps(doc))
    ref = out["componentRefs"][index]
    if field in ("manifestFiles", "dependencyRefs"):
        ref[field] = [value]
    else:
        ref[field] = value
    if field == "name":
        old = doc["componentRefs"][index]["name"]
        out["deploymentOrder"] = [value if n == old else n for n in out["deploymentOrder"]]
    return json.dumps(out)


def _refused(text: str, field: str) -> AicrError:
    with pytest.raises(AicrError) as info:
        parse_recipe(text, "hostile.yaml")
    err = info.value
    line = err.render()
    assert err.code == ErrorCode.INVALID_REQUEST, line
    assert 'recipe file "hostile.yaml"' in line and field in line, line
    assert "\n" not in line and "\r" not in line and "\x00" not in line
    return err


FIELDS = {
    "name": NAME_ONLY,
    "namespace": NAME_ONLY[:-1],
    "chart": NEVER_VALID,
    "version": NEVER_VALID,
    "source": NEVER_VALID,
    "manifestFiles": NEVER_VALID,
    "dependencyRefs": NAME_ONLY,
    "valuesFile": NEVER_VALID,
}


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_recipe_file_refuses_hostile_component_fields(recipe_doc, field: str) -> None:
    for value in FIELDS[field]:
        _refused(_with(recipe_doc, 1, field, value), f"componentRefs[1].{field}")


def test_recipe_file_refuses_hostile_deployment_order(recipe_doc) -> None:
    for value in NAME_ONLY:
        doc = json.loads(json.dumps(recipe_doc))
        doc["deploymentOrder"][0] = value
        _refused(json.dumps(doc), "deploymentOrder[0]")


def test_catalog_overlay_mixin_and_registry_refuse_hostile_names(tmp_path: Path) -> None:
    cases = 0
    for i, value in enumerate(NEVER_VALID):
        root = tmp_path / f"o{i}"
        write_catalog(root, overlays=[overlay("svc", criteria={"service": "aks"},
                                              componentRefs=[{"name": "gpu-operator", "namespace": value}])])  # fmt: skip
        with pytest.raises(
            AicrError, match=r"overlays/svc.yaml: spec.componentRefs\[0\].namespace"
        ):
            load_catalog(root)
        root = tmp_path / f"m{i}"
        write_catalog(root, mixins=[mixin("mx", componentRefs=[{"name": value}])])
        with pytest.raises(AicrError, match=r"mixins/mx.yaml: spec.componentRefs\[0\].name"):
            load_catalog(root)
        for key, sub in (
            ("defaultRepository", "helm.defaultRepository"),
            ("defaultVersion", "helm.defaultVersion"),
            ("defaultNamespace", "helm.defaultNamespace"),
            ("defaultChart", "helm.defaultChart"),
        ):
            entry = helm("gpu-operator", "gpu-operator")
            entry["helm"][key] = value
            root = tmp_path / f"r{i}{key}"
            write_catalog(root, registry=[entry])
            with pytest.raises(AicrError, match=rf"components\[0\]\.{sub}"):
                load_catalog(root)
            cases += 1
        cases += 2
    assert cases == 6 * len(NEVER_VALID)


def test_data_layer_refuses_hostile_names(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "catalog")
    for i, value in enumerate(("../victim", "--post-renderer=./x.sh", "a\nb")):
        clear_catalog_cache()
        doc = overlay("extra-svc", criteria={"service": "aks"},
                      componentRefs=[{"name": "gpu-operator", "chart": value}])  # fmt: skip
        ext = write_catalog(tmp_path / f"ext{i}", registry=[], overlays=[doc])
        (ext / "overlays" / "base.yaml").unlink()
        with pytest.raises(AicrError, match=r"extra-svc.yaml: spec.componentRefs\[0\].chart"):
            load_catalog(root, external=ext)
        reg = write_catalog(tmp_path / f"reg{i}", registry=[helm(value, "ns")])
        (reg / "overlays" / "base.yaml").unlink()
        with pytest.raises(AicrError, match=r"components\[0\]\.name"):
            load_catalog(root, external=reg)


def test_bundle_cli_refuses_hostile_recipe_with_one_line_exit_2(recipe_doc, tmp_path) -> None:
    """The issue's reproductions through the real CLI: nothing written, one stderr line."""
    out = tmp_path / "out"
    for i, (field, value) in enumerate(
        [
            ("name", "a'; touch PWNED; echo '"),
            ("name", "../escaped"),
            ("name", "a\nb"),
            ("name", "a\x00b"),
            ("name", "x" * 300),
            ("chart", "--post-renderer=./x.sh"),
            ("namespace", "-n"),
        ]
    ):
        recipe = tmp_path / f"r{i}.yaml"
        recipe.write_text(_with(recipe_doc, 1, field, value))
        proc = run_cli("bundle", "-r", str(recipe), "-o", str(out), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"componentRefs[1].{field}" in lines[0], proc.stderr
        assert "INTERNAL" not in proc.stderr and "Traceback" not in proc.stderr
        assert not out.exists() and not (tmp_path / "PWNED").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            f"r{j}.yaml" for j in range(i + 1)
        )


def test_plan_gate_refuses_names_that_bypass_the_reader(recipe_doc) -> None:
    """A recipe built in memory (the wizard, a service call) never went through
    ``parse_recipe``: the bundler's own gate refuses it before it becomes a path."""
    from aicr_tui.core.bundler import plan_bundle
    from aicr_tui.core.documents.recipe_result import RecipeResult

    for field, value in (("name", "../victim"), ("namespace", "-x"), ("version", "1;id")):
        doc = json.loads(_with(recipe_doc, 0, field, value))
        recipe = RecipeResult.model_validate(doc)
        with pytest.raises(AicrError, match=field):
            plan_bundle(recipe)


def test_valid_recipe_still_round_trips(recipe_doc) -> None:
    text = json.dumps(recipe_doc)
    assert render_recipe(parse_recipe(text, "ok.yaml"))


def test_registry_paths_and_aliases_are_checked(tmp_path: Path) -> None:
    cases = [
        ({"manifestFiles": ["../../etc/passwd"]}, r"components\[0\]\.manifestFiles\[0\]"),
        ({"manifestFiles": ["/etc/passwd"]}, r"components\[0\]\.manifestFiles\[0\]"),
        ({"valueOverrideKeys": ["a b"]}, r"components\[0\]\.valueOverrideKeys\[0\]"),
        ({"valueOverrideKeys": ["--set"]}, r"components\[0\]\.valueOverrideKeys\[0\]"),
        ({"healthCheck": {"assertFile": "../x.yaml"}}, r"healthCheck\.assertFile"),
    ]
    for i, (extra, field) in enumerate(cases):
        root = write_catalog(
            tmp_path / f"c{i}", registry=[helm("gpu-operator", "gpu-operator", **extra)]
        )
        with pytest.raises(AicrError, match=field):
            load_catalog(root)


def test_two_manifests_with_one_file_name_are_refused(recipe_doc, tmp_path: Path) -> None:
    """Two manifestFiles with the same base name would silently overwrite one another."""
    from aicr_tui.core.bundler import plan_bundle
    from aicr_tui.core.documents.recipe_result import RecipeResult

    ext = write_catalog(
        tmp_path / "ext",
        registry=[],
        files={
            "components/x/a/m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            "components/x/b/m.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n",
        },
    )
    (ext / "overlays" / "base.yaml").unlink()
    catalog = load_catalog(None, external=ext)
    doc = json.loads(json.dumps(recipe_doc))
    doc["componentRefs"][0]["manifestFiles"] = ["components/x/a/m.yaml", "components/x/b/m.yaml"]
    with pytest.raises(AicrError, match="also named"):
        plan_bundle(RecipeResult.model_validate(doc), catalog=catalog)


def test_write_refuses_a_plan_path_outside_the_output(tmp_path: Path) -> None:
    """The last check before a byte is written: a plan file path (however it got there)
    that leaves -o is refused and nothing is written anywhere."""
    from aicr_tui.core.bundler import write_bundle
    from tests.unit.test_nothing_lost_support import plan_variant

    for rel in ("../escaped", "/etc/evil", "a/../../b", "./x", "a//b"):
        plan = plan_variant(1)
        plan.files = {**plan.files, rel: b"x"}
        with pytest.raises(AicrError, match="outside the output directory"):
            write_bundle(plan, tmp_path / "out")
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    link_plan = plan_variant(1)
    assert not (tmp_path / "escaped").exists() and link_plan.files


def test_hostile_data_layer_manifest_is_invalid_input_not_internal(
    recipe_doc, tmp_path: Path
) -> None:
    """A --data layer's manifest is the user's document: a broken one is exit 2 naming it."""
    from aicr_tui.core.bundler import plan_bundle
    from aicr_tui.core.documents.recipe_result import RecipeResult

    bodies = {
        "noapi.yaml": "kind: ConfigMap\nmetadata: {name: a}\n",
        "notyaml.yaml": "a: [\n",
        "scalar.yaml": "just text\n",
        "badcond.yaml": "# aicr-render-if: nonsense\napiVersion: v1\n",
        "unterminated.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${aicr:x\n",
    }
    ext = write_catalog(tmp_path / "ext", registry=[],
                        files={f"components/x/{n}": b for n, b in bodies.items()})  # fmt: skip
    (ext / "overlays" / "base.yaml").unlink()
    catalog = load_catalog(None, external=ext)
    for name in bodies:
        doc = json.loads(json.dumps(recipe_doc))
        doc["componentRefs"][0]["manifestFiles"] = [f"components/x/{name}"]
        with pytest.raises(AicrError) as info:
            plan_bundle(RecipeResult.model_validate(doc), catalog=catalog)
        assert info.value.code == ErrorCode.INVALID_REQUEST, info.value.render()
        assert f"components/x/{name}" in info.value.render()
