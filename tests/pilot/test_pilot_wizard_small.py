"""Small wizard behaviours (issue 34, item 8): the deployer is kept when the preview is
entered again, the file browser hides version control, environments and caches and can go
up a folder, ``c`` does not claim a copy it cannot know of, ctrl+c quits, and without
samples the capture title does not offer to load one."""

from __future__ import annotations

import pytest

from aicr_tui.screens.capture import CaptureScreen
from aicr_tui.screens.recipe import RecipeScreen
from tests.pilot.wizard_helpers import open_recipe, settle, wait_until, wizard_running


async def test_the_deployer_is_kept_on_reentering_the_preview(tmp_path) -> None:
    async with wizard_running(tmp_path) as (app, pilot):
        await open_recipe(pilot, "aks-none")
        await pilot.press("s")  # operator-managed qualifies
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot, 3)
        bundle = app.screen
        await wait_until(pilot, lambda: bundle.plan is not None)
        await pilot.press("d")  # helm -> helmfile
        await wait_until(
            pilot, lambda: bundle.plan is not None and bundle.plan.deployer == "helmfile"
        )
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RecipeScreen)
        await pilot.press("b")
        await settle(pilot, 3)
        again = app.screen
        assert again is not bundle
        assert again.deployer == "helmfile"
        await wait_until(pilot, lambda: again.plan is not None)
        assert again.plan.deployer == "helmfile"


async def test_the_file_browser_hides_caches_and_goes_up(tmp_path) -> None:
    from textual.app import App

    from aicr_tui.screens.widgets.wizard_dialogs import BrowseCaptureModal, SafeDirectoryTree

    work = tmp_path / "work"
    for name in (".git", ".venv", "__pycache__", ".mypy_cache", "dumps"):
        (work / name).mkdir(parents=True)
    shown = SafeDirectoryTree(work).filter_paths(sorted(work.iterdir()))
    assert [p.name for p in shown] == ["dumps"]

    modal = BrowseCaptureModal(work)
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(modal)
        await pilot.pause()
        await pilot.press("backspace")
        await pilot.pause()
        assert modal._root == work.resolve().parent
        assert str(work.resolve().parent) in str(modal.query_one("#browse-title").render())


async def test_copy_does_not_claim_success_and_ctrl_c_quits(tmp_path) -> None:
    async with wizard_running(tmp_path) as (app, pilot):
        await pilot.press("g")
        await settle(pilot)
        notes: list[str] = []
        original = app.notify

        def spy(message: str, *args: object, **kwargs: object) -> None:
            notes.append(str(message))
            original(message, *args, **kwargs)  # type: ignore[arg-type]

        app.notify = spy  # type: ignore[method-assign]
        app.screen.notify = spy  # type: ignore[method-assign]
        await pilot.press("c")
        await settle(pilot)
        copied = [n for n in notes if "OSC 52" in n]
        assert copied or any("no commands" in n for n in notes), notes
        for note in copied:  # the entry shown has commands
            assert "copied to the clipboard" not in note.lower()
            assert "ignores it" in note
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not app.is_running or app._exit


async def test_without_samples_the_capture_title_offers_no_sample(tmp_path) -> None:
    from aicr_tui.app import create_app

    app = create_app()
    app.state.output_dir = tmp_path
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CaptureScreen)
        assert app.state.samples == []
        assert "sample" not in app.screen.sub_title
        assert "o opens a file" in app.screen.sub_title


async def test_the_capture_list_follows_a_sample_loaded_from_the_palette(tmp_path) -> None:
    """Before: the palette loaded "OKE: add-on DELETING" while the list's cursor stayed on
    the first sample, so enter there loaded another capture than the one shown."""
    from textual.widgets import OptionList

    from tests.pilot.wizard_helpers import palette_command

    async with wizard_running(tmp_path) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, CaptureScreen)
        options = screen.query_one("#capture-samples", OptionList)
        assert options.highlighted == 0
        await palette_command(pilot, "ctrl+p", "Load sample: OKE: add-on DELETING")
        await settle(pilot, 3)
        assert app.screen is screen
        assert app.state.sample_key == "oke-deleting"
        assert options.highlighted is not None
        assert options.get_option_at_index(options.highlighted).id == "oke-deleting"


async def test_b_and_v_on_a_failing_verdict_say_what_blocks(tmp_path) -> None:
    """Before: with a capture loaded and the default gpuStack failing, b and v said "pick a
    capture and a passing selection first"; now they say the verdict fails and which key
    fixes it (s switches to the value that qualifies)."""
    async with wizard_running(tmp_path) as (app, pilot):
        await open_recipe(pilot, "aks-none")
        assert isinstance(app.screen, RecipeScreen)
        assert app.state.capture is not None and not app.state.verdict.ok
        notes: list[str] = []
        original = app.notify

        def spy(message: str, *args: object, **kwargs: object) -> None:
            notes.append(str(message))
            original(message, *args, **kwargs)  # type: ignore[arg-type]

        app.notify = spy  # type: ignore[method-assign]
        for key in ("b", "v"):
            notes.clear()
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, RecipeScreen), key
            assert len(notes) == 1, notes
            assert "pick a capture" not in notes[0]
            assert "verdict fails" in notes[0]
            assert "s: switch to gpuStack=operator-managed" in notes[0]


async def test_the_recipe_form_follows_the_terminal_width(tmp_path) -> None:
    """Issue 34 item 7: the recipe step's left column was 39 cells (40 with its border) at
    every size; it now takes 40% of the terminal, never under 40 cells (the widest value,
    "default: azure-managed", whole at 80x24) nor over 72."""
    widths = {}
    for size in ((80, 24), (120, 40), (200, 50)):
        async with wizard_running(tmp_path, size) as (app, pilot):
            await open_recipe(pilot, "aks-none")
            form = app.screen.query_one("#recipe-form")
            widths[size[0]] = form.outer_size.width
            for select in form.query("CycleSelect"):
                row = "".join(s.text for s in select.query_one("ValueRow").render_line(0))
                assert "…" not in row, (size, row)
    assert widths == {80: 40, 120: 48, 200: 72}, widths


@pytest.mark.parametrize(
    ("sample", "deciding"),
    [
        ("aks-mixed", "K8s.aks-gpu-pools.gpu-driver"),
        ("oke-deleting", "K8s.oke-addons.nvidia-gpu-plugin"),
    ],
)
async def test_the_reading_that_decides_the_verdict_comes_first(tmp_path, sample, deciding):
    """Issue 34 item 7: the pools' driver reading (Mixed) was the 12th row of the readings,
    below the fold at 80x24; the reading gpuStack turns on is now the first row."""
    from textual.widgets import DataTable

    from tests.pilot.wizard_helpers import pick_sample

    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, sample)
        await settle(pilot)
        table = app.screen.query_one("#capture-readings", DataTable)
        assert table.row_count > 5
        first = str(table.get_row_at(0)[0])
        assert first == deciding, first


async def test_capture_tables_break_a_vm_size_at_its_separators(tmp_path) -> None:
    """Issue 34 item 7: at 80x24 the pools table folded ``Standard_ND96isr_H100_v5`` into
    ``Standard_ND96i`` / ``sr_H100_v5`` while the projected mode kept 16 cells for
    "(not a GPU pool)"; that column now wraps at its spaces first and the size breaks after
    a ``_``."""
    from aicr_tui.screens.widgets.fit_table import break_offsets
    from tests.pilot.fit import screen_lines
    from tests.pilot.wizard_helpers import pick_sample

    size = "Standard_ND96isr_H100_v5"
    assert [size[a:b] for a, b in break_offsets(size, 17)] == ["Standard_ND96isr_", "H100_v5"]
    kernel = "6.8.0-1059-azure"
    assert [kernel[a:b] for a, b in break_offsets(kernel, 14)] == [
        "6.8.0-1059-",
        "azure",
    ]
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-mixed")
        await settle(pilot)
        await pilot.pause(0.2)
        text = "\n".join(screen_lines(app))
        assert "Standard_ND96i " not in text and "Standard_ND96i\n" not in text, text
        assert "Standard_ND96isr_" in text and "H100_v5" in text, text
