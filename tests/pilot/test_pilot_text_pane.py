"""The TextPane (aicr_tui/screens/widgets/text_pane.py): wrapped plain text in a fixed box whose new
content repaints it alone, and the footer drawn as one line (aicr_tui/screens/widgets/keys_footer.py).
"""

from __future__ import annotations

import random

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.binding import Binding

from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.text_pane import TextPane, wrap_plain
from tests.pilot.fit import screen_lines


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("short", 10, ["short"]),
        ("two words", 4, ["two", "word", "s"]),
        ("  cause: the pools were", 12, ["  cause: the", "pools were"]),
        ("a\n\nb", 5, ["a", "", "b"]),
        ("tab\there", 20, ["tab     here"]),
        ("日本語の文", 4, ["日本", "語の", "文"]),
        ("trailing   ", 20, ["trailing"]),
    ],
)
def test_wrap_plain_breaks_at_spaces_and_folds_long_words(text, width, lines) -> None:
    assert wrap_plain(text, width) == lines


def test_wrap_plain_never_loses_text_or_passes_the_width() -> None:
    """200 derandomized texts of words, wide characters, tabs and line breaks."""
    pieces = ["a", "bb", "ccc", "d" * 24, "日本語", "·", "[/]", "x" * 40, "  "]
    rng = random.Random(17)
    for _ in range(200):
        width = rng.randint(1, 30)
        text = "".join(
            rng.choice(pieces) + rng.choice([" ", "  ", "", "\n", "\t"])
            for _ in range(rng.randint(0, 12))
        )
        lines = wrap_plain(text, width)
        # a character wider than the whole line is the only thing that may pass it
        assert all(cell_len(line) <= max(width, 2) for line in lines), (text, width, lines)
        assert "".join("".join(lines).split()) == "".join(text.split()), (text, width)


class _PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TextPane(id="pane", zebra=True, pad=1)


async def test_new_content_repaints_the_pane_without_a_layout_and_keeps_the_scroll_valid():
    app = _PaneApp()
    async with app.run_test(size=(30, 8)) as pilot:
        pane = app.query_one(TextPane)
        await pilot.pause()
        layouts = 0
        refresh_layout = app.screen._refresh_layout

        def counting(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            nonlocal layouts
            layouts += 1
            refresh_layout(*args, **kwargs)

        app.screen._refresh_layout = counting  # type: ignore[method-assign]
        rows = [f"row {i}\nsecond line of row {i}, long enough to wrap" for i in range(6)]
        pane.show(rows, header="header")
        await pilot.pause()
        assert layouts == 0
        lines = screen_lines(app)
        assert lines[0].strip() == "header"  # the header, then the first row
        assert lines[1].strip() == "row 0"
        pane.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert screen_lines(app)[0].strip() == "header"  # stays put while rows scroll
        assert "row 5" in "".join(screen_lines(app)) and pane.scroll_y > 0
        pane.show(["one short row"], header="header")  # fewer lines than the scroll offset
        await pilot.pause()
        assert pane.scroll_y == 0 and pane.max_scroll_y == 0
        assert screen_lines(app)[1].strip() == "one short row"
        assert layouts == 0


async def test_pane_text_is_shown_literally_and_terminal_safe() -> None:
    app = _PaneApp()
    async with app.run_test(size=(40, 6)) as pilot:
        pane = app.query_one(TextPane)
        pane.show(["[reverse]X[/reverse] \x1b[31mred\x07 [@click=quit]q[/]"])
        await pilot.pause()
        shown = " ".join(screen_lines(app))
        assert "[reverse]X[/reverse]" in shown and "[@click=quit]q[/]" in shown
        assert "\x1b" not in "".join(pane.rows) and "\x07" not in "".join(pane.rows)


class _FooterApp(App[None]):
    BINDINGS = [
        Binding("a", "press('a')", "Apple"),
        Binding("b", "press('b')", "Banana"),
        Binding("left", "press('left')", "Prev", group=Binding.Group("Move", compact=True)),
        Binding("right", "press('right')", "Next", group=Binding.Group("Move", compact=True)),
    ]
    pressed: list[str] = []
    offer_b = True

    def compose(self) -> ComposeResult:
        yield KeysFooter()

    def action_press(self, key: str) -> None:
        self.pressed.append(key)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if parameters == ("b",):
            return self.offer_b or None  # None: shown, dimmed
        return True


async def test_the_footer_line_presses_the_key_clicked_and_dims_a_disabled_one() -> None:
    app = _FooterApp()
    app.pressed = []
    async with app.run_test(size=(60, 3)) as pilot:
        footer = app.query_one(KeysFooter)
        await pilot.pause()
        line = screen_lines(app)[-1]
        assert line.rstrip() == " a Apple  b Banana  ←→ Move"
        assert [e.key_display for e in footer.entries] == ["a", "b", "←→"]
        a_start, _ = footer.spans[0]
        b_start, _ = footer.spans[1]
        await pilot.click(KeysFooter, offset=(b_start + 1, 0))
        await pilot.click(KeysFooter, offset=(footer.spans[2][0] + 1, 0))  # the group's first key
        assert app.pressed == ["b", "left"]
        app.offer_b = False
        app.refresh_bindings()
        await pilot.pause()
        assert [e.enabled for e in footer.entries] == [True, False, True]
        await pilot.click(KeysFooter, offset=(b_start + 1, 0))  # disabled: the bell, no action
        assert app.pressed == ["b", "left"]
        await pilot.hover(KeysFooter, offset=(a_start + 1, 0))
        assert footer.tooltip == "" or footer.tooltip is None  # Apple has no tooltip of its own
