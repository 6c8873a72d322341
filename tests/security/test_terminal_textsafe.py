"""aicr_tui.core.foundation.textsafe: escape sequences and control characters never reach a terminal."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.foundation.textsafe import safe_line, safe_text
from tests.fuzz.fuzz_support import FUZZ
from tests.security.hostile_text import ESC, ESCAPE_CORPUS

# What a terminal could act on: C0 except tab/newline, DEL, C1, bidi controls, surrogates.
_ACTIONABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize(
    ("name", "hostile", "expected"), ESCAPE_CORPUS, ids=[c[0] for c in ESCAPE_CORPUS]
)
def test_escape_corpus_single_line(name: str, hostile: str, expected: str) -> None:
    assert safe_text(hostile) == expected


def test_multiline_keeps_lines_and_tabs_but_not_overwrites() -> None:
    text = f"line one\r\nline\ttwo\rthree\x85four\u2028five\fsix{ESC}[2Jseven\n"
    assert (
        safe_text(text, multiline=True) == "line one\nline\ttwo\nthree\nfour\nfive\nsix" + "seven\n"
    )


def test_printable_text_is_untouched() -> None:
    for text in ["gpu-pool-1", "Größe ✓ 日本語 🚀", "[reverse]x[/reverse]", "a\u200db", ""]:
        assert safe_text(text) is text or safe_text(text) == text
        assert safe_text(text, multiline=True) == text


def test_safe_line_accepts_any_value() -> None:
    assert safe_line(42) == "42"
    assert safe_line(f"a{ESC}]0;t\x07b") == "ab"


@FUZZ
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                ESC,
                "\x9b",
                "\x9d",
                "\x9c",
                "\x07",
                "[",
                "]",
                "\\",
                ";",
                "0",
                "m",
                "P",
                "a",
                "\n",
                "\r",
                "\t",
                "\x00",
                "\x85",
                "\u202e",
                "é",
            ]
        ),
        max_size=60,
    )
)
def test_nothing_actionable_survives(text: str) -> None:
    for multiline in (False, True):
        out = safe_text(text, multiline=multiline)
        assert not _ACTIONABLE.search(out), repr(out)
        assert "\x1b" not in out
        if not multiline:
            assert "\n" not in out and "\t" not in out
        # Idempotent: a second pass changes nothing.
        assert safe_text(out, multiline=multiline) == out


def test_linear_time_on_pathological_input() -> None:
    """Many unterminated introducers must not make the regex backtrack quadratically."""
    text = (f"{ESC}]" + "x" * 50) * 4000 + f"{ESC}[" * 20000 + "\x9d" * 20000
    start = time.monotonic()
    out = safe_text(text, multiline=True)
    assert time.monotonic() - start < 2.0
    assert ESC not in out
