"""Issue 17: one key changes a criterion. ← / → step the focused select of the recipe screen
to the previous / next value (wrapping round), and the verdict follows that one key.

Before, changing a criterion by keyboard took three keys (enter opens the list, an arrow
moves, enter chooses), and the verdict waited for the list to close and the focus to move
back, each a restyle and a layout of the whole screen (p95 66.6 ms from the choosing enter
to the painted verdict). Text that keeps its number of lines is repainted in place, without
a layout of the screen; text that needs more or fewer lines still moves what is below it.
"""

from __future__ import annotations

from functools import partial

from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.widgets.cycle_select import CycleSelect
from tests.pilot.fit import screen_lines
from tests.pilot.wizard_helpers import count_layouts, demo_app, open_recipe, settle


def _counted(qualify, calls, criteria, profile, snapshot, warnings):  # type: ignore[no-untyped-def]
    """``qualify``, noting each profile it is asked about in ``calls``."""
    calls.append(profile)
    return qualify(criteria, profile, snapshot, warnings)


def _row(app, label: str) -> str:
    return next(line for line in screen_lines(app) if line.startswith(f" {label} "))


def test_value_keys_are_bindings_with_id_and_description():
    keys = {b.key: b for b in CycleSelect.BINDINGS}  # type: ignore[union-attr]
    assert set(keys) == {"left", "right"}
    for b in keys.values():
        assert b.id and b.description and b.show  # type: ignore[union-attr]


async def test_arrows_step_the_gpustack_value_and_the_verdict_follows(tmp_path):
    app = demo_app(tmp_path)
    calls: list[str | None] = []
    app.services.qualify = partial(_counted, app.services.qualify, calls)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-none")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        state = app.state
        # AKS pools all None: the default (azure-managed) fails, operator-managed passes.
        assert state.profile_value is None and not state.verdict.ok
        select = screen.query_one("#sel-profile", CycleSelect)
        select.focus()
        await pilot.pause()
        assert "←→ Value" in screen_lines(app)[-1]
        calls.clear()

        # "default: azure-managed" -> operator-managed in one press: the explicit
        # azure-managed, which resolves like the default, is stepped over (issue 34 item 8;
        # before, the first press chose it and nothing visible changed).
        await pilot.press("right")
        assert state.profile_value == "operator-managed"
        assert state.verdict.ok and state.recipe is not None
        # One qualification per key, on the keystroke itself (no list opened or closed).
        assert calls == ["gpuStack=operator-managed"]
        assert not select.expanded and app.focused is select
        await settle(pilot)
        assert screen.trouble_text() == ""
        assert "operator-managed" in _row(app, "gpuStack")
        assert any("PASS  gpuStack=operator-managed" in line for line in screen_lines(app))

        await pilot.press("right")  # wraps round to the default
        assert state.profile_value is None and not state.verdict.ok
        await pilot.press("left")  # and back
        assert state.profile_value == "operator-managed" and state.verdict.ok
        await settle(pilot)
        assert "operator-managed" in _row(app, "gpuStack")


async def test_arrows_step_a_criterion_the_user_then_owns(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        state = app.state
        assert state.criteria["intent"] == "training"
        select = screen.query_one("#sel-intent", CycleSelect)
        select.focus()
        await pilot.pause()
        await pilot.press("right")  # training is the last value: wraps to inference
        await settle(pilot)
        assert state.criteria["intent"] == "inference" and select.value == "inference"
        assert "intent" in state.user_criteria
        assert state.verdict.criteria.intent == "inference"
        assert "inference" in _row(app, "intent")
        # Enter still opens the list for browsing; ← / → do nothing while it is open.
        await pilot.press("enter")
        await pilot.pause()
        assert select.expanded
        await pilot.press("escape")
        await pilot.pause()
        assert not select.expanded and state.criteria["intent"] == "inference"


async def test_text_that_changes_its_height_still_moves_the_widgets_below(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        line = screen.query_one("#verdict-line")
        table = screen.query_one("#recipe-checks")
        line.show("short", False)
        await settle(pilot)
        assert line.region.height == 1 and table.region.y == line.region.bottom
        long = "a verdict that wraps " * 5  # three lines in the 38 columns it has
        line.show(long, False)
        await settle(pilot)
        assert line.region.height == 3 and table.region.y == line.region.bottom
        # As many lines as before: repainted in place, on screen all the same.
        line.show(long.replace("a verdict", "A VERDICT"), False)
        await settle(pilot)
        assert line.region.height == 3 and table.region.y == line.region.bottom
        shown = "".join(screen_lines(app)[line.region.y : line.region.bottom])
        assert shown.count("A VERDICT") == 5


async def test_the_guide_note_count_is_the_shown_verdicts_own(tmp_path):
    """Before: the verdict line counted the guide notes of the verdict before it (it was
    written before the new verdict was diagnosed): stepping from the failing default to
    the passing operator-managed said "g: 3 guide notes" where the new verdict has none."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-none")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        failing_notes = len(screen._findings)
        assert failing_notes > 0
        line = screen.query_one("#verdict-line")
        assert not app.state.verdict.ok
        screen.query_one("#sel-profile", CycleSelect).focus()
        await pilot.press("right")  # -> operator-managed (the default's twin stepped over)
        await settle(pilot)
        assert app.state.verdict.ok
        passing_notes = len(screen._findings)
        assert passing_notes != failing_notes
        text = str(line.render())
        if passing_notes:  # "1 guide note", "2 guide notes" (issue 34 item 7)
            plural = "" if passing_notes == 1 else "s"
            assert f"g: {passing_notes} guide note{plural}" in text
        else:
            assert "guide note" not in text


async def test_the_footer_follows_s_and_the_screen_is_never_laid_out_again(tmp_path):
    """Before: `s` coming or going rebuilt the whole footer (every key removed, mounted,
    styled and laid out again), which took longer than the verdict; later only the `s` key
    was mounted or removed, which still laid the whole screen out, as did the constraint
    table and the troubleshooting text changing their number of lines (24.8 ms p95 from →
    to the painted verdict). Now the footer is one line drawn by one widget and both panes
    draw their own lines: stepping gpuStack round its values, passing and failing, lays the
    screen out not once, and the footer reads as before, `s` in its place or not at all."""
    from aicr_tui.screens.widgets.keys_footer import KeysFooter

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-none")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        footer = screen.query_one(KeysFooter)
        screen.query_one("#sel-profile", CycleSelect).focus()
        await settle(pilot)
        layouts = count_layouts(screen)
        full = "←→ Value  s Switch  b Bundle  v Validate  d Diff  r Recapture  ? Help  q Quit"
        verdicts = set()
        for _ in range(2):
            for value in ("operator-managed", None):
                await pilot.press("right")
                await settle(pilot)
                assert app.state.profile_value == value
                verdicts.add(app.state.verdict.ok)
                offered = screen.switch_target() is not None
                keys = [entry.key_display for entry in footer.entries]
                assert ("s" in keys) == offered, (value, keys)
                want = full if offered else full.replace("  s Switch", "")
                assert screen_lines(app)[-1].rstrip() == " " + want
        assert verdicts == {True, False}  # the panes changed their number of lines
        assert len(layouts) == 0
        assert screen.query_one(KeysFooter) is footer and not footer.children
