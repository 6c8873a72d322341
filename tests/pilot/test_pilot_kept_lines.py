"""Widgets that keep their lines (aicr_tui/screens/widgets/kept_lines.py) paint exactly what a fresh
paint would: every change Textual knows of (new content, a style, the focus, the mouse, a
theme, a resize) reaches the screen, and lines nothing changed are handed back as they
were, without looking the widget's styles up again.

Issue 17: every frame of a recipe-screen keystroke paints the whole screen's box, and the
twenty-odd widgets in it each looked their styles up again to return lines they had
cached (about a sixth of the keystroke).
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Region

from aicr_tui.screens.widgets.cycle_select import CycleSelect
from aicr_tui.screens.widgets.kept_lines import KeptLines, KeptStatic, KeptVertical
from aicr_tui.screens.widgets.static_text import set_text
from aicr_tui.screens.widgets.text_pane import TextPane
from tests.pilot.fit import screen_lines, styled_screen
from tests.pilot.wizard_helpers import demo_app, open_recipe, settle


def kept_widgets(app: Any) -> list[KeptLines]:
    return [w for w in app.screen.walk_children(with_self=True) if isinstance(w, KeptLines)]


async def painted_as_fresh(pilot: Any) -> None:
    """What is painted now is what the screen shows once every widget paints afresh (its
    kept lines dropped, and everything rendered again)."""
    await settle(pilot)
    app = pilot.app
    kept = styled_screen(app)
    widgets = list(app.screen.walk_children(with_self=True))
    widgets += [w._vertical_scrollbar for w in widgets if w._vertical_scrollbar is not None]
    for widget in widgets:
        if isinstance(widget, KeptLines):
            widget._kept = None
            widget.__dict__.get("_by_state", {}).clear()  # a pane's bar: lines per state
        widget.refresh()
    await settle(pilot)
    assert styled_screen(app) == kept


class _Counted(KeptStatic):
    """A KeptStatic that counts the lines rendered for it."""

    rendered = 0

    def render_line(self, y: int):  # type: ignore[no-untyped-def]
        type(self).rendered += 1
        return super().render_line(y)


class _Small(App[None]):
    CSS = """
    #kept.-warn { background: red; }
    """

    def compose(self) -> ComposeResult:
        with KeptVertical():
            yield _Counted("kept text", id="kept")
            yield KeptStatic("other", id="other")


async def test_unchanged_lines_are_handed_back_and_a_change_is_painted() -> None:
    app = _Small()
    async with app.run_test(size=(30, 6)) as pilot:
        await pilot.pause()
        kept = app.query_one("#kept", _Counted)
        other = app.query_one("#other", KeptStatic)
        crop = Region(0, 0, *kept.size)
        first = kept.render_lines(crop)
        assert kept.render_lines(crop) is first  # kept: no lookups, no rendering
        # Frames painting the widget beside it hand these lines back as they were.
        before = _Counted.rendered
        for text in ("one", "two", "three"):
            other.update(text)
            await pilot.pause()
        assert _Counted.rendered == before
        assert kept.render_lines(crop) is first
        # New content, a new style: painted, and as a fresh paint would.
        set_text(kept, "changed")
        await pilot.pause()
        assert kept.render_lines(crop) is not first
        assert "changed" in screen_lines(app)[0]
        await painted_as_fresh(pilot)
        painted = styled_screen(app)
        kept.add_class("-warn")
        await painted_as_fresh(pilot)
        assert styled_screen(app) != painted  # the red background reached the screen
        await pilot.resize_terminal(20, 6)
        await painted_as_fresh(pilot)
        assert screen_lines(app)[0].rstrip() == "changed"


async def test_the_recipe_screen_paints_as_fresh_through_every_kind_of_change(tmp_path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        assert len(kept_widgets(app)) >= 20  # the screen, its containers and widgets
        await painted_as_fresh(pilot)
        profile = screen.query_one("#sel-profile", CycleSelect)
        profile.focus()
        for _ in range(3):  # pass and fail in turn: verdict, constraints, troubleshooting
            await pilot.press("right")
            await painted_as_fresh(pilot)
        await pilot.press("enter")  # the list opens (the arrow turns) and closes
        await painted_as_fresh(pilot)
        await pilot.press("escape")
        await painted_as_fresh(pilot)
        screen.query_one("#recipe-checks", TextPane).focus()  # a focus style (tint)
        await painted_as_fresh(pilot)
        await pilot.press("down", "pagedown")  # scrolled
        await painted_as_fresh(pilot)
        await pilot.hover("#sel-os")  # the mouse over a row
        await painted_as_fresh(pilot)
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await painted_as_fresh(pilot)
        await pilot.press("d")  # the diff panel opens: a layout
        await painted_as_fresh(pilot)
        await pilot.resize_terminal(100, 30)
        await painted_as_fresh(pilot)
