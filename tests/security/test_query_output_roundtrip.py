"""``query -t yaml`` / ``-t json`` print what parses back to the same value (issue 35,
family 4).

A selected value is printed for a terminal as often as for a pipe; either way the text must
be YAML (or JSON) that reads back as exactly the value selected: markup-like text
(``[/][b]x``, ``[red]``), YAML indicators (``- a``, ``a: b``, ``#x``, ``&a``, ``*a``,
``!tag``, ``|``, ``>``, ``%``, ``@``, a backtick), words another type would claim (``yes``,
``null``, ``1e3``, ``0x10``, ``.inf``), surrounding spaces, controls and separators, and
non-finite numbers, at the top level and inside maps and lists.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import safe_documents
from aicr_tui.core.recipe.query import render_value

STRINGS = [
    "[/][b]x", "[/]", "[b]bold[/b]", "[red]x[/red]", "[link=https://e.x]y[/link]", "[", "]",
    "{a}", "{", "}", "- a", "-", "--- x", "---", "...", "a: b", ":", "a:", "#x", "a #b", "&a",
    "*a", "!tag", "!!str x", "|", ">", "|-\n", "%YAML", "@x", "`x`", "'", '"', "'a'", '"a"',
    "?", "? a", ",", "a,b", "yes", "no", "on", "Off", "y", "~", "null", "Null", "true",
    "False", "1", "-1", "1.5", "1e3", "0x10", "0o7", "0b1", "1_000", ".inf", "-.inf", ".nan",
    "1:30", "2026-01-01", "=", "<<", "", " ", " a", "a ", "\t", "a\nb", "a\n", "\n", "a\rb",
    "a\x85b", "\u2028", "\ufeff", "\x1b[31m", "\x00", "é", "日本", "\U0001f600", "a\\b", "\\",
    "a'b\"c", "%", "x" * 300, "[" * 50, "a: [b]", "{a: b}",
]  # fmt: skip
NUMBERS: list[Any] = [0, -0.0, 1.5, 1e20, 1e-7, 2**63, -(2**70), True, False, None]


def _cases() -> list[Any]:
    cases: list[Any] = [*STRINGS, *NUMBERS]
    cases += [{s: s} for s in STRINGS if s]
    cases += [[s] for s in STRINGS]
    cases += [{"k": {"n": [s, {"x": s}]}} for s in STRINGS[:30]]
    return cases


CASES = _cases()


def _same(back: Any, value: Any) -> bool:
    if isinstance(value, float) and isinstance(back, float):
        return back == value or (math.isnan(back) and math.isnan(value))
    if type(back) is not type(value) and not (
        isinstance(value, float) and type(back) is int and back == value
    ):
        return False
    if isinstance(value, dict):
        return back.keys() == value.keys() and all(_same(back[k], value[k]) for k in value)
    if isinstance(value, list):
        return len(back) == len(value) and all(
            _same(b, v) for b, v in zip(back, value, strict=True)
        )
    return bool(back == value)


@pytest.mark.parametrize("value", CASES, ids=lambda v: ascii(v)[:40])
def test_yaml_output_reads_back_as_the_value(value: Any) -> None:
    text = render_value(value, "yaml")
    docs = safe_documents(text)
    assert len(docs) == 1 and _same(docs[0], value), f"{value!r} printed {text!r}, read {docs!r}"


@pytest.mark.parametrize("value", CASES, ids=lambda v: ascii(v)[:40])
def test_json_output_reads_back_as_the_value(value: Any) -> None:
    text = render_value(value, "json")
    back = json.loads(text)
    assert _same(back, value), f"{value!r} printed {text!r}"


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_numbers(value: float) -> None:
    back = safe_documents(render_value(value, "yaml"))[0]
    assert _same(back, value)
    back = safe_documents(render_value({"a": [value]}, "yaml"))[0]
    assert _same(back["a"][0], value)
    with pytest.raises(AicrError) as caught:
        render_value({"a": value}, "json")
    assert "\n" not in caught.value.render().strip()


@pytest.mark.parametrize(
    "selector",
    ["criteria", "components.gpu-operator.values", "components.gpu-operator.values.driver"],
)
def test_cli_query_yaml_and_json_read_back_as_one_value(selector: str) -> None:
    """End to end (this checkout's code): the same selection printed as YAML and as JSON
    reads back as one value."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    criteria = [
        "--service",
        "aks",
        "--accelerator",
        "h100",
        "--os",
        "ubuntu",
        "--intent",
        "training",
    ]
    got = {}
    for fmt in ("yaml", "json"):
        proc = subprocess.run(
            [sys.executable, "-m", "aicr_tui", "query", *criteria, "--selector", selector,
             "-t", fmt],
            cwd=root, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        got[fmt] = safe_documents(proc.stdout)[0] if fmt == "yaml" else json.loads(proc.stdout)
    assert _same(got["yaml"], got["json"]) and got["json"] not in (None, {}, [])
