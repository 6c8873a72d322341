"""The reproductions of issue 15's Why section that had no test of their own, each asserting
the behaviour its Deliver item asks for (the others: test_pilot_wizard_truth, _fit, _nav,
_flow, tests/cli/test_cli_remedies, test_cli_readme_tour, test_cli_replay_honest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input, TextArea

from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.widgets.bundle_dialogs import PathPromptModal
from tests.conftest import SAMPLES
from tests.pilot.wizard_helpers import demo_app, pick_sample, settle, wait_until

AKS_NONE_DUMP = str(SAMPLES / "captures" / "aks-pools-none.json")


async def _recipe_for(pilot: Any, sample: str) -> RecipeScreen:
    app = pilot.app
    if type(app.screen).__name__ != "CaptureScreen":
        app.show_capture()
        await settle(pilot)
    await pick_sample(pilot, sample)
    await pilot.press("n")
    await settle(pilot, 3)
    screen = app.screen
    assert isinstance(screen, RecipeScreen)
    return screen


def _footer_keys(screen: Any) -> list[str]:
    from aicr_tui.screens.widgets.keys_footer import KeysFooter

    return [entry.key_display for entry in screen.query_one(KeysFooter).entries]


async def test_an_aks_dump_after_an_oke_sample_starts_a_new_capture(tmp_path: Path) -> None:
    """Was: the OKE readings and node facts stayed, the recipe step showed aks/gb200/ol."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pick_sample(pilot, "oke-active")
        assert app.state.snapshot.reading("OS", "release", "ID") == "ol"
        app.screen.open_file(AKS_NONE_DUMP)
        await settle(pilot)
        state = app.state
        assert state.capture_files == {"aks_pools": AKS_NONE_DUMP}
        assert state.snapshot.subtype("K8s", "oke-addons") is None
        assert state.snapshot.subtype("OS", "release") is None  # no OKE node facts
        assert state.snapshot.reading("K8s", "aks-gpu-pools", "gpu-driver") == "None"
        await pilot.press("n")
        await settle(pilot, 3)
        shown = {
            f: app.screen.query_one(f"#sel-{f}").value for f in ("service", "accelerator", "os")
        }
        assert shown["service"] == "aks"
        assert shown["accelerator"] != "gb200" and shown["os"] != "ol", shown


async def test_s_is_offered_only_when_the_other_value_qualifies(tmp_path: Path) -> None:
    """Was: `s: switch gpuStack` for Mixed and Managed pools (no value qualifies) and for
    criteria errors."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await _recipe_for(pilot, "aks-none")
        assert screen.switch_target() == "operator-managed"
        assert "s: switch to gpuStack=operator-managed" in screen.trouble_text()
        assert "s" in _footer_keys(screen)
        for sample in ("aks-mixed", "aks-managed"):
            screen = await _recipe_for(pilot, sample)
            assert not app.state.verdict.ok
            assert screen.switch_target() is None, sample
            assert "s: switch" not in screen.trouble_text(), sample
            assert "s" not in _footer_keys(screen), sample
            await pilot.press("s")  # does nothing: the selection stays
            await settle(pilot)
            assert app.state.profile_value is None
        # a criteria error (no AKS overlay for os "ol"): no value qualifies, nothing to offer
        screen = await _recipe_for(pilot, "aks-none")
        screen.query_one("#sel-os").value = "ol"
        await settle(pilot, 3)
        assert app.state.recipe is None
        assert 'no overlay covers the requested os "ol"' in app.state.last_error
        assert screen.switch_target() is None
        assert "s: switch" not in screen.trouble_text()


async def test_the_recapture_title_says_what_the_verdict_says(tmp_path: Path) -> None:
    """Was: on Install + operator-managed the modal read "Recapture the snapshot with the
    missing reading" although the reading is there."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await _recipe_for(pilot, "aks-install")
        screen.query_one("#sel-profile").value = "operator-managed"
        await settle(pilot, 3)
        assert not app.state.verdict.ok
        title = screen.recapture_title()
        assert "missing reading" not in title
        assert title == "After fixing K8s.aks-gpu-pools.gpu-driver, recapture the snapshot"
        screen = await _recipe_for(pilot, "aks-no-reading")
        assert screen.recapture_title() == "Recapture the snapshot with the missing reading"


async def test_mixed_pools_are_named_once_per_line(tmp_path: Path) -> None:
    """Was: `Pools read Mixed (pools read Mixed (…))`."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await _recipe_for(pilot, "aks-mixed")
        text = screen.trouble_text()
        assert "Pools read Mixed" in text
        for line in text.splitlines():
            assert line.lower().count("pools read mixed") <= 1, line


async def test_the_oke_capture_lists_the_gpu_plugin_once_with_its_state(tmp_path: Path) -> None:
    """Was: NvidiaGpuPlugin listed twice, its state off-screen at 80x24 (the fit test shows
    every cell whole)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for sample, state in (("oke-active", "installed"), ("oke-deleting", "addon-deleting")):
            await pick_sample(pilot, sample)
            table = app.screen.query_one("#capture-pools")
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            plugin = [row for row in rows if row[0] == "NvidiaGpuPlugin"]
            assert len(plugin) == 1, rows
            # a cell broken to fit holds the line break FitTable inserted at a separator
            assert str(plugin[0][1]).replace("\n", "") == state


async def _bundle(pilot: Any) -> BundlePreviewScreen:
    app = pilot.app
    await _recipe_for(pilot, "aks-none")
    await pilot.press("s")
    await settle(pilot, 3)
    await pilot.press("b")
    await settle(pilot, 3)
    screen = app.screen
    assert isinstance(screen, BundlePreviewScreen)
    await wait_until(pilot, lambda: screen.plan is not None)
    return screen


async def test_the_overrides_editor_and_the_write_dialog_take_no_stray_key(
    tmp_path: Path,
) -> None:
    """Was: the editor opened on its comment line (typing made `true# AKS needs…` a value)
    with no clear or select-all; the write dialog's path was selected, so one key replaced
    it."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await _bundle(pilot)
        await wait_until(pilot, lambda: screen.plan is not None and not screen.plan.errors)
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPromptModal))
        field = app.screen.query_one("#path-input", Input)
        default = field.value
        assert field.selection.is_empty
        await pilot.press("x")
        assert field.value == default + "x"  # the key went after the path, not over it
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("o")
        editor = screen.query_one("#overrides-editor", TextArea)
        assert editor.has_focus
        before = editor.text
        row, _ = editor.cursor_location
        assert not editor.document.get_line(row).lstrip().startswith("#")
        await pilot.press("x")
        assert [ln for ln in editor.text.splitlines() if ln.startswith("#")] == [
            ln for ln in before.splitlines() if ln.startswith("#")
        ]  # every comment line as it was
        await pilot.press("f7")
        assert editor.selected_text == editor.text
        await pilot.press("f8")
        assert editor.text == ""


async def test_help_says_what_keys_do_and_the_first_screen_says_enter_loads(
    tmp_path: Path,
) -> None:
    """Was: help listed CaptureScreen, AicrApp, DataTable; nothing said enter loads."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "enter loads" in str(app.screen.sub_title)
        await _recipe_for(pilot, "aks-none")
        for _ in range(2):
            await pilot.press("question_mark")
            await settle(pilot)
            text = " ".join(" ".join(row) for row in app.screen.rows)
            for internal in ("CaptureScreen", "RecipeScreen", "AicrApp", "DataTable", "Screen"):
                assert internal not in text, text
            await pilot.press("escape")
            await settle(pilot)
            app.show_capture()
            await settle(pilot)
