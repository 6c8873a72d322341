"""text_memo (aicr_tui/core/foundation/memo.py): the constraint and version parsers remember what
they parsed, per text, and behave exactly as before: the same results, every error raised
again on every call, non-text inputs parsed as they were, the memory bounded."""

from __future__ import annotations

import pytest

from aicr_tui.core.foundation import memo
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.memo import text_memo
from aicr_tui.core.foundation.versions import parse_version
from aicr_tui.core.recipe.constraints import parse_expression, parse_path

TEXTS = [
    ">= 1.34",
    "== v1.34.2",
    "ubuntu",
    "!= 6.8",
    "<= 535.104.05",
    "> 1.2-gke.3",
    "",
    "!x",
    ">=",
    ">= banana",
]
NAMES = [
    "K8s.server.version",
    "OS.release.ID",
    "SystemD.containerd.service.ActiveState",
    "GPU.smi[0].driver",
    "Nope.a.b",
    "K8s.server",
    "",
]
VERSIONS = ["1.34", "v1.34.2", "6.8.0-1059-azure", "1.2.3.4", "x", "", "01.2", "1.2-gke.300"]


def _outcome(parse, text):  # type: ignore[no-untyped-def]
    try:
        return ("value", parse(text))
    except AicrError as exc:
        return ("error", exc.render())


@pytest.mark.parametrize(
    ("parse", "texts"),
    [(parse_expression, TEXTS), (parse_path, NAMES), (parse_version, VERSIONS)],
)
def test_remembered_parsers_give_what_the_parser_gives_every_time(parse, texts) -> None:
    plain = parse.__wrapped__
    for text in texts:
        first = _outcome(parse, text)
        assert first == _outcome(plain, text)
        assert _outcome(parse, text) == first  # again: the same value, or the same error


def test_errors_are_raised_again_and_values_are_reused() -> None:
    calls: list[str] = []

    @text_memo
    def parse(text: str) -> tuple[str]:
        calls.append(text)
        if text == "bad":
            raise ValueError(text)
        return (text,)

    assert parse("a") is parse("a")
    for _ in range(2):
        with pytest.raises(ValueError, match="bad"):
            parse("bad")
    assert calls == ["a", "bad", "bad"]
    assert parse(7) == (7,) and parse(7) == (7,)  # type: ignore[arg-type]  # not remembered
    assert calls[-2:] == [7, 7]


def test_the_memory_is_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(memo, "_KEPT", 3)
    calls: list[str] = []

    @text_memo
    def parse(text: str) -> str:
        calls.append(text)
        return text.upper()

    for text in "abcd":
        parse(text)
    parse("a")  # forgotten when the fourth text came
    assert calls == ["a", "b", "c", "d", "a"]
    assert parse("d") == "D" and calls[-1] == "a"  # still remembered
