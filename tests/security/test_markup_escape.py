"""aicr_tui.screens.markup.escape_markup: document text is literal in Rich and Textual markup."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text
from textual.content import Content

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.markup import WORD_JOINER, escape_markup
from tests.fuzz.fuzz_support import FUZZ
from tests.security.hostile_text import ESC, MARKUP_CORPUS

PARSERS = {"rich": Text.from_markup, "textual": Content.from_markup}


def _plain(parser: str, markup: str) -> tuple[str, int]:
    parsed = PARSERS[parser](markup)
    spans = len(parsed.spans)
    return parsed.plain.replace(WORD_JOINER, ""), spans


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(("name", "hostile"), MARKUP_CORPUS, ids=[c[0] for c in MARKUP_CORPUS])
def test_markup_corpus_is_literal(parser: str, name: str, hostile: str) -> None:
    plain, spans = _plain(parser, escape_markup(hostile))
    assert plain == hostile
    assert spans == 0, "document text must not carry any style or action"
    # The caller's own markup after the text still applies, exactly once.
    plain, spans = _plain(parser, f"[b]{escape_markup(hostile)}[/b] [i]tail[/i]")
    assert plain == hostile + " tail"
    assert spans == 2


def test_corpus_reproduces_the_crash_without_escaping() -> None:
    """The reproduction: raw pool names crash or style both parsers."""
    from rich.errors import MarkupError as RichMarkupError
    from textual.markup import MarkupError as TextualMarkupError

    with pytest.raises(RichMarkupError):
        Text.from_markup("[/]")
    with pytest.raises(TextualMarkupError):
        Content.from_markup("[/bold]")
    assert Text.from_markup("[reverse]SPOOF[/reverse]").spans


def test_escape_sequences_are_stripped_before_escaping() -> None:
    hostile = f"{ESC}]0;title\x07[/]pool{ESC}[31m"
    assert _plain("textual", escape_markup(hostile))[0] == "[/]pool"
    multi = escape_markup("a\n[b]x\n", multiline=True)
    assert _plain("rich", multi)[0] == "a\n[b]x\n"
    assert escape_markup(7) == "7"


@FUZZ
@given(
    st.lists(
        st.sampled_from([*"[]\\/@=$#ab ;:'()", "[/]", "[b]", "[@click=x]", ":warning:"]),
        max_size=30,
    ).map("".join)
)
def test_any_bracket_soup_round_trips_in_both_parsers(text: str) -> None:
    for parser in PARSERS:
        plain, spans = _plain(parser, escape_markup(text))
        assert plain == safe_text(text)
        assert spans == 0
        plain, spans = _plain(parser, f"{escape_markup(text)}[b]x[/b]")
        assert plain == safe_text(text) + "x"
        assert spans == 1
