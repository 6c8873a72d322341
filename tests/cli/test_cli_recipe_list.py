"""``aicr-tui recipe list`` (issue 33 item 6): every recipe the catalog serves with its
criteria, as a table and as JSON/YAML, read from the catalog (so the test compares with
the catalog rather than naming its overlays; only AKS H100 and OKE GB200 OL training are
assumed to exist)."""

from __future__ import annotations

import json

from aicr_tui.core.recipe.catalog import load_catalog
from aicr_tui.core.recipe.leaves import COLUMNS, recipe_rows


def test_the_table_lists_every_recipe_with_its_criteria(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("recipe", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["RECIPE", "SERVICE", "ACCELERATOR", "OS", "INTENT", "PLATFORM"]
    rows = recipe_rows(load_catalog())
    assert [line.split() for line in lines[1:]] == [
        [r.name, *(r.criteria[c] for c in COLUMNS)] for r in rows
    ]
    served = {tuple(line.split()[1:5]) for line in lines[1:]}
    assert ("aks", "h100", "ubuntu", "training") in served
    assert ("oke", "gb200", "ol", "training") in served


def test_json_output_and_filters(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("recipe", "list", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "RecipeList"
    assert [r["name"] for r in doc["recipes"]] == [r.name for r in recipe_rows(load_catalog())]
    for r in doc["recipes"]:
        assert set(r["criteria"]) == set(COLUMNS)
        assert all(
            r["criteria"][d] not in ("", "any") for d in ("service", "accelerator", "intent")
        )
    oke = json.loads(cli("recipe", "list", "--service", "oke", "-o", "json").stdout)["recipes"]
    assert oke and {r["criteria"]["service"] for r in oke} == {"oke"}
    assert any(
        (r["criteria"]["accelerator"], r["criteria"]["os"], r["criteria"]["intent"])
        == ("gb200", "ol", "training")
        for r in oke
    )
    ubuntu = json.loads(cli("recipe", "list", "--os", "ubuntu", "-o", "json").stdout)["recipes"]
    assert ubuntu and {r["criteria"]["os"] for r in ubuntu} == {"ubuntu"}
    ol = json.loads(cli("recipe", "list", "--os", "ol", "-t", "json").stdout)["recipes"]
    assert ol and {(r["criteria"]["service"], r["criteria"]["os"]) for r in ol} == {("oke", "ol")}


def test_bad_list_input_is_one_line_and_exit_2(cli) -> None:  # type: ignore[no-untyped-def]
    for args in (("--service", "nope"), ("-o", "xml")):
        proc = cli("recipe", "list", *args)
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
