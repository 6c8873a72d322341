"""Navigation: ? help, / filter, : and ctrl+p palette, esc back, q quit; every key a Binding."""

from __future__ import annotations

from textual.binding import Binding
from textual.command import CommandPalette

from aicr_tui.app import AicrApp
from aicr_tui.screens.capture import CaptureScreen
from aicr_tui.screens.help import HelpScreen
from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.troubleshoot import TroubleshootScreen
from aicr_tui.screens.widgets.wizard_dialogs import (
    BrowseCaptureModal,
    LiveCaptureModal,
    OpenCaptureModal,
    TextModal,
)
from aicr_tui.screens.widgets.wizard_filter import FilterBar
from tests.pilot.wizard_helpers import (
    escape_to,
    palette_command,
    pick_sample,
    settle,
    wait_until,
    wizard_running,
)

WIZARD_CLASSES = (
    AicrApp,
    CaptureScreen,
    RecipeScreen,
    TroubleshootScreen,
    HelpScreen,
    OpenCaptureModal,
    BrowseCaptureModal,
    LiveCaptureModal,
    TextModal,
    FilterBar,
)


def test_every_key_is_a_binding_with_id_and_description():
    for cls in WIZARD_CLASSES:
        for b in cls.BINDINGS:
            assert isinstance(b, Binding), cls
            assert b.id and b.description, (cls.__name__, b.key)


async def test_help_lists_every_binding_of_the_screen(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        descriptions = {row[1] for row in help_screen.rows}
        for b in [*CaptureScreen.BINDINGS, *AicrApp.BINDINGS]:
            assert b.description in descriptions, b.description
        assert any(row[0] == "^p" and row[1] == "Palette" for row in help_screen.rows)
        await escape_to(pilot, CaptureScreen)

        await pick_sample(pilot, "aks-install")
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        descriptions = {row[1] for row in app.screen.rows}
        for b in RecipeScreen.BINDINGS:
            assert b.description in descriptions, b.description


async def test_palette_finds_the_guide_by_symptom(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pilot.press("colon")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"SandBox")
        await wait_until(pilot, lambda: app.screen.query_one("CommandList").option_count > 0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TroubleshootScreen))
        guide = app.screen
        assert guide.current is not None and guide.current.id == "mixed-ownership-no-runtime"
        await escape_to(pilot, CaptureScreen)


async def test_ctrl_p_palette_runs_wizard_actions(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "oke-active")
        await palette_command(pilot, "ctrl+p", "go to r")
        await wait_until(pilot, lambda: isinstance(app.screen, RecipeScreen))
        await settle(pilot)
        assert app.state.verdict.ok, app.state.last_error
        # an action of the recipe screen, asked for from the capture screen
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, CaptureScreen)
        await palette_command(pilot, "colon", "recapt")
        await wait_until(pilot, lambda: isinstance(app.screen, TextModal))
        assert any("--oke-addons" in line for line in app.screen.lines)
        assert isinstance(app.screen_stack[-2], RecipeScreen)


async def test_guide_filter_and_marks_from_state(tmp_path):
    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        await pick_sample(pilot, "aks-mixed")
        await pilot.press("g")
        await pilot.pause()
        guide = app.screen
        assert isinstance(guide, TroubleshootScreen)
        options = guide.query_one("#guide-list")
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert "* Pools read Mixed" in labels
        await pilot.press("slash")
        await pilot.press(*"revert")
        await pilot.pause()
        assert options.option_count == 1
        assert guide.current.id == "manual-label-reverts"
        await pilot.press("escape")  # closes the filter
        await pilot.pause()
        assert options.option_count > 10
        await escape_to(pilot, CaptureScreen)  # back


async def test_recapture_command_and_escape_back(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-no-reading")
        await pilot.press("n")
        await settle(pilot)
        assert not app.state.verdict.ok
        assert "unavailable" in app.state.last_error
        await pilot.press("r")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, TextModal)
        assert any("--aks-gpu-pools" in line for line in modal.lines)
        await escape_to(pilot, RecipeScreen)
        await escape_to(pilot, CaptureScreen)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_selects_requalify_on_every_change(tmp_path):
    """No apply button: the gpuStack and service selects, changed by keyboard, re-qualify."""
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-install")
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert app.state.verdict.ok
        first = screen._seq
        # gpuStack select: open it, move to operator-managed, pick it
        screen.query_one("#sel-profile").focus()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert app.state.profile_value == "operator-managed"
        assert screen._seq > first
        assert not app.state.verdict.ok
        assert "expected None" in app.state.last_error
        assert screen.last_latency_ms is not None
        # service select: aks -> oke resets the profile value to the OKE default
        await wait_until(pilot, lambda: bool(app.state.choices))
        assert app.state.choices["service"] == ["aks", "oke"]
        screen.query_one("#sel-service").focus()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.state.criteria["service"] == "oke"
        assert app.state.profile_value is None
        # Issue 33: OKE publishes no H100 leaf, so the AKS capture's h100/ubuntu selection
        # on OKE is refused, naming the published OKE leaves nearest to it
        assert not app.state.verdict.ok
        assert "nearest published leaves: " in app.state.last_error
        assert "-oke-" in app.state.last_error.split("nearest published leaves: ")[1]
        # refused before any OKE overlay applies, so no gpuStack declaration is in play
        assert app.state.verdict.profile_default is None


async def test_no_capture_criteria_only_then_live_validation(tmp_path, monkeypatch):
    """Outside the demo with no capture: the verdict resolves criteria-only (every constraint
    deferred), and v validates that recipe live (here: no cluster is configured)."""
    from aicr_tui.app import create_app

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    app = create_app(start_screen="recipe")
    app.state.output_dir = tmp_path
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RecipeScreen)
        assert app.state.samples == [] and app.state.snapshot is None
        assert app.state.verdict.ok, app.state.last_error
        assert {c.status for c in app.state.verdict.checks} == {"deferred"}
        # Issue 34 item 4: nothing was verified, so a neutral line, never a green PASS, and
        # no `s: switch` offered (every value "qualifies" when there is nothing to check).
        verdict_line = app.screen.query_one("#verdict-line")
        text = str(verdict_line.render())
        assert text.startswith("not verified (no capture): gpuStack="), text
        assert "PASS" not in text and verdict_line._ok is None
        assert app.screen.switch_target() is None
        assert "s: switch" not in app.screen._trouble_text(True)
        assert not app.screen.check_action("switch_profile", ())
        await pilot.press("v")
        await pilot.pause()
        dash = app.screen
        assert type(dash).__name__ == "ValidationDashboardScreen"
        assert type(dash.source).__name__ == "LiveRunSource"
        assert dash.source.recipe is app.state.recipe
        await wait_until(pilot, lambda: dash.model.state not in ("waiting", "running"))
