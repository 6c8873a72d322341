"""``dump_yaml``'s own block emitter writes exactly what ruamel writes (issue 17).

ruamel's pure-Python emitter was a large share of ``recipe`` and ``bundle``; the fast path
in ``aicr_tui.core.foundation.yamlio`` must never change a byte. Compared here against ruamel itself
on the shipped catalog, on every recipe the sample criteria resolve to and every YAML file
of their bundles, and on random trees of awkward keys and scalars.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from aicr_tui.core.foundation import yamlio
from aicr_tui.core.foundation.yamlio import dump_yaml

REPO = Path(__file__).resolve().parents[2]
CRITERIA = (
    ("aks", "h100", "ubuntu", "training"),
    ("aks", "h100", "ubuntu", "inference"),
    ("oke", "gb200", "ol", "training"),
    ("oke", "gb200", "ol", "inference"),
)


def reference(data: Any) -> str:
    """What ruamel alone writes for ``data`` (the path dump_yaml took before)."""
    buf = io.StringIO()
    yamlio._yaml("rt").dump(yamlio._quote_risky(data), buf)
    return buf.getvalue()


def fast_path(data: Any) -> str | None:
    """The block emitter's text, or None when it hands the tree to ruamel."""
    out: list[str] = []
    try:
        yamlio._emit_block(yamlio._quote_risky(data), 0, out)
    except yamlio._NotPlain:
        return None
    return "".join(out)


def test_catalog_files_emit_as_ruamel_does() -> None:
    from ruamel.yaml import YAML

    emitted = 0
    for path in sorted((REPO / "aicr_tui" / "recipes").rglob("*.yaml")):
        try:
            docs = [yamlio.to_plain(d) for d in YAML(typ="safe").load_all(path.read_text())]
        except Exception:  # a Go template, not YAML until rendered
            continue
        for data in docs:
            if isinstance(data, dict) and data:
                assert dump_yaml(data) == reference(data), path
                emitted += fast_path(data) is not None
    assert emitted >= 40  # the fast path, not the fallback, wrote most of them


@pytest.mark.parametrize("criteria", CRITERIA, ids=lambda c: "-".join(c))
def test_recipes_and_bundle_files_emit_as_ruamel_does(
    criteria: tuple[str, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import aicr_tui.core.bundler.render as render
    from aicr_tui.core.bundler import parse_overrides, parse_tolerations, plan_bundle
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.documents.recipe_result import _literal_blocks
    from aicr_tui.core.recipe.qualification import qualify

    service, accelerator, os_name, intent = criteria
    verdict = qualify(
        parse_criteria(service=service, accelerator=accelerator, os=os_name, intent=intent),
        None,
        None,
    )
    assert verdict.recipe is not None, verdict.error
    doc = _literal_blocks(verdict.recipe.to_document())
    assert fast_path(doc) == reference(doc)

    seen: list[Any] = []

    def recording(data: Any) -> str:
        seen.append(data)
        return dump_yaml(data)

    monkeypatch.setattr(render, "dump_yaml", recording)
    monkeypatch.setattr(render, "_DUMPED", {})  # so every file is dumped, not memoised
    plan_bundle(
        verdict.recipe,
        parse_overrides(),
        accelerated_tolerations=parse_tolerations(["nvidia.com/gpu:NoSchedule"]),
    )
    assert seen, "the bundle wrote no YAML through dump_yaml"
    for data in seen:
        assert dump_yaml(data) == reference(data)


def test_literal_blocks_chomping_and_blank_lines() -> None:
    doc = {
        "a": {"keep": LiteralScalarString("one\ntwo\n"), "strip": LiteralScalarString("x\n\n y")},
        "list": [{"asserts": LiteralScalarString("apiVersion: v1\nkind: Pod\n")}],
    }
    text = fast_path(doc)
    assert text is not None and text == reference(doc)
    assert "  keep: |\n    one\n    two\n  strip: |-\n    x\n\n     y\n" in text
    assert "  - asserts: |\n      apiVersion: v1\n      kind: Pod\n" in text


def test_what_the_fast_path_leaves_to_ruamel_still_matches() -> None:
    for doc in (
        {"nested": [[1, 2], [3]]},
        {"lit": [LiteralScalarString("a\nb")]},
        {"lead": LiteralScalarString(" indented\nblock")},
        {"long": "x " * 3000},
        {"k" * 200: 1},
        {1: "int key"},
    ):
        assert dump_yaml(doc) == reference(doc)


KEYS = st.text(alphabet="abcxyz019 -_:.#'\"/@&*!|>%{}[],?~\t\u00e9\u2028\x85", max_size=8)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    KEYS,
    st.sampled_from(
        ["true", "False", "on", "null", "~", "1.5", "0x1f", "1e3", "2024-01-01", "v1.2", ""]
    ),
    st.text(alphabet="ab \n", min_size=1, max_size=12),
    st.text(alphabet="ab \n", min_size=2, max_size=12).map(LiteralScalarString),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, min_size=0, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, TREES, min_size=1, max_size=5))
@example({"": 0.0, "k": -0.0})  # found by hypothesis: the scalar memo took -0.0 for 0.0
def test_random_trees_emit_as_ruamel_does(doc: dict[str, Any]) -> None:
    assert dump_yaml(doc) == reference(doc)


def ruamel_value(value: Any) -> str:
    """How ruamel writes ``value`` as a block mapping value (what ``_rendered`` asked it)."""
    buf = io.StringIO()
    yamlio._yaml("rt").dump({"k": value}, buf)
    return buf.getvalue()[2:-1].removeprefix(" ")


PRINTABLE_WORDS = st.sampled_from(
    ["true", "Null", "~", "1.5", "012", "0o7", "1_000", "12:30", "2026-06-01T12:00:00Z", ".inf"]
    + ["https://a.b/c", "oci://ghcr.io/x", ">= 1.30", "- x", "---", "...", "<<", "-", ":", "?"]
)
PRINTABLE_TEXT = st.text(alphabet='ab01 :-#?",[]{}&*!|>%@`.~=_/\\+$^()<>;', max_size=9)


@settings(max_examples=400, deadline=None)
@given(st.one_of(PRINTABLE_TEXT, st.tuples(PRINTABLE_WORDS, PRINTABLE_TEXT).map("".join)))
@example("https://helm.ngc.nvidia.com/nvidia")
@example(">= v24.6.0")
def test_quick_scalars_are_what_ruamel_writes(value: str) -> None:
    """The scalars ``_rendered`` writes without ruamel (short printable ASCII without a
    quote, booleans, None, ints) are byte for byte ruamel's."""
    quick = yamlio._quick_value(value)
    assert quick is None or quick == ruamel_value(value)
    quoted = DoubleQuotedScalarString(value)  # values.yaml's YAML-1.1-ambiguous strings
    quick = yamlio._quick_value(quoted)
    assert quick is None or quick == ruamel_value(quoted)


def test_quick_scalars_cover_urls_constraints_and_constants() -> None:
    for value in ("https://helm.ngc.nvidia.com/nvidia", ">= 1.30", "", True, False, None, -7):
        assert yamlio._quick_value(value) == ruamel_value(value)
    assert yamlio._quick_value("https://x.io/charts") == "https://x.io/charts"
    assert yamlio._quick_value(">= 1.30") == "'>= 1.30'"
    assert yamlio._quick_value("it's") is None  # ruamel picks the quotes: left to it
    for text in ("02", "false", "", "109"):
        assert yamlio._quick_value(DoubleQuotedScalarString(text)) == f'"{text}"'
    assert yamlio._quick_value(DoubleQuotedScalarString('a"b')) is None
    assert yamlio._quick_value("caf\u00e9") is None and yamlio._quick_value(1.5) is None


def test_risky_ascii_text_is_judged_as_the_full_class_judges_it() -> None:
    """ASCII text is checked against the ASCII part of the risky class (compiling the full
    class cost more than a recipe dump): the verdicts agree for every ASCII character, and
    non-ASCII text still gets the full class."""
    full = yamlio._RISKY.compiled
    for code in range(0x80):
        text = f"a{chr(code)}b"
        assert yamlio._risky(text) == (full.search(text) is not None), code
    for text in ("caf\u00e9", "x\u2028y", "\ufeffa", "\x85", "ok \u00e9\x07"):
        assert yamlio._risky(text) == (full.search(text) is not None), text
