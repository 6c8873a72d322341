"""Pilot tests of the validation dashboard, mounted in a bare host app at 80x24."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, RichLog, Static

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.validation.progress import LOG_LINES_PER_CHECK
from aicr_tui.screens.validate_dashboard import ReplaySource, ValidationDashboardScreen
from aicr_tui.screens.widgets.bundle_dialogs import ConfirmModal, PathPromptModal
from tests.pilot.validate_fixtures import (
    FailingSource,
    ListSource,
    ScreenHost,
    accept_path_prompt,
    decline_overwrite,
    flood,
    run_palette_command,
    short_run,
    wait_until,
)


def _host(source, **kwargs) -> ScreenHost:
    return ScreenHost(lambda: ValidationDashboardScreen(source, **kwargs))


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_table_phases_gates_and_summary_follow_the_stream() -> None:
    app = _host(ListSource(short_run()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.pause()
        table = screen.query_one("#checks", DataTable)
        assert table.row_count == 3
        assert str(table.get_cell("deployment/expected-resources", "status")) == "failed"
        assert str(table.get_cell("deployment/operator-health", "duration")) == "0.8s"
        assert str(table.get_cell("performance/nccl-all-reduce-bw", "measured")) == "157.29 GB/s"
        assert str(table.get_cell("performance/nccl-all-reduce-bw", "threshold")) == ">= 150"
        assert str(table.get_cell("performance/nccl-all-reduce-bw", "duration")) == "3m54s"

        phases = _text(screen.query_one("#phase-deployment", Static))
        assert phases.startswith("✗ deployment") and "2/2" in phases
        assert "not in this run" in _text(screen.query_one("#phase-conformance", Static))

        gates = _text(screen.query_one("#gates", Static))
        assert "157.29 GB/s vs >= 150 pass" in gates

        summary = _text(screen.query_one("#summary", Static))
        assert "3 checks: 2 passed, 1 failed" in summary and "exit 8" in summary
        assert screen.query_one("#summary").has_class("-failed")


async def test_selected_check_streams_its_own_log() -> None:
    app = _host(ListSource(short_run(log_lines=30)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        table = screen.query_one("#checks", DataTable)
        # Follow mode parked the cursor on the last check that started.
        assert screen.selected == "performance/nccl-all-reduce-bw"
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert screen.selected == "deployment/operator-health"
        log = screen.query_one("#log", RichLog)
        # Selecting shows the newest lines that fit (at least 20) behind a marker ...
        assert len(log.lines) == 21
        assert "10 earlier lines" in log.lines[0].text
        assert log.lines[-1].text == "pod gpu-operator-29 Running"
        # ... and `a` shows every kept line.
        await pilot.press("a")
        await pilot.pause()
        assert len(log.lines) == 30
        assert log.lines[0].text == "pod gpu-operator-0 Running"
        assert "operator-health" in _text(screen.query_one("#log-title", Static))
        await pilot.press("down")
        await pilot.pause()
        assert screen.selected == "deployment/expected-resources"
        shown = " ".join(strip.text.strip() for strip in log.lines)  # wrapped at 80x24
        assert shown == "DaemonSet nvidia-driver-daemonset in gpu-operator: not found"
        title = _text(screen.query_one("#log-title", Static))
        assert "failed" in title and "1 of 7 expected resources missing" in title
        assert table.cursor_row == 1


async def test_filter_narrows_rows_and_escape_restores_them() -> None:
    app = _host(ListSource(short_run()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.press("slash")
        box = screen.query_one("#filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"failed")
        await pilot.pause()
        table = screen.query_one("#checks", DataTable)
        assert table.row_count == 1
        assert "deployment/expected-resources" in table.rows
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == 3
        assert not box.display
        # A second escape with nothing to undo leaves the screen (the host stays).
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_a_failing_stream_is_reported_once_and_nothing_else_changes() -> None:
    message = 'validation recording "x.jsonl" line 3 is not valid JSON'
    app = _host(FailingSource(invalid(message)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "error" and screen.painted_to_end)
        await pilot.pause()
        banner = screen.query_one("#run-banner", Static)
        assert message in _text(banner)
        assert banner.has_class("error")
        assert screen.query_one("#checks", DataTable).row_count == 0


async def test_save_is_refused_until_the_run_finishes(tmp_path) -> None:
    app = _host(ListSource(short_run()[:5]), report_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.applied == 5)
        await pilot.press("s")
        await pilot.pause()
        assert app.screen is screen  # no save dialog opened
        assert list(tmp_path.iterdir()) == []


async def test_a_flood_is_applied_completely_with_logs_capped() -> None:
    lines = LOG_LINES_PER_CHECK + 500
    app = _host(ListSource(flood(checks=6, lines_per_check=lines)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(
            pilot, lambda: screen.model.state == "finished" and screen.painted_to_end, timeout=30
        )
        total = 2 + 6 * (lines + 3) + 2
        assert screen.model.applied == total
        for row in screen.model.rows.values():
            assert row.status == "passed"
            assert len(row.logs) == LOG_LINES_PER_CHECK
            assert row.logs[-1].endswith(f"step {lines - 1} ok")
        await pilot.pause()
        log = screen.query_one("#log", RichLog)
        assert len(log.lines) <= LOG_LINES_PER_CHECK
        assert screen.query_one("#checks", DataTable).row_count == 6


def _record(path, events) -> None:
    path.write_text("".join(e.to_json() + "\n" for e in events), encoding="utf-8")


async def test_replay_saves_the_same_ctrf_and_junit_as_the_cli_would(tmp_path) -> None:
    from aicr_tui.core.validation.reports.ctrf import ctrf_from_events, render_ctrf
    from aicr_tui.core.validation.reports.junit import render_junit

    events = short_run()
    recording = tmp_path / "run.jsonl"
    _record(recording, events)
    out = tmp_path / "out"
    out.mkdir()
    app = _host(ReplaySource(recording, speed=0), report_dir=out)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        assert screen.model.mode == "replay"
        await pilot.press("s")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, PathPromptModal)
        assert prompt.query_one(Input).value == str(out / "validation-report.json")
        await pilot.press("enter")
        await wait_until(pilot, lambda: (out / "validation-report.json").exists())
        await pilot.press("j")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: (out / "validation-junit.xml").exists())

    report = ctrf_from_events(events)
    assert (out / "validation-report.json").read_text() == render_ctrf(report)
    assert (out / "validation-junit.xml").read_text() == render_junit(report)


async def test_saving_over_an_existing_report_asks_first(tmp_path) -> None:
    target = tmp_path / "validation-report.json"
    target.write_text("keep me\n")
    app = _host(ListSource(short_run()), report_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await decline_overwrite(pilot, "s")
        assert app.screen is screen
        assert target.read_text() == "keep me\n"

        await accept_path_prompt(pilot, "s")
        await pilot.press("y")
        await wait_until(pilot, lambda: target.read_text().startswith("{"))
        assert '"reportFormat": "CTRF"' in target.read_text()


async def test_a_corrupt_recording_shows_the_cli_message(tmp_path) -> None:
    recording = tmp_path / "broken.jsonl"
    recording.write_text('{"type": "RunStarted"\n', encoding="utf-8")
    app = _host(ReplaySource(recording, speed=0))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "error" and screen.painted_to_end)
        await pilot.pause()
        banner = _text(screen.query_one("#run-banner", Static))
        assert f'recording "{recording}" line 1 is not valid JSON' in banner


async def test_every_dashboard_action_is_in_the_command_palette(tmp_path) -> None:
    app = _host(ListSource(short_run()), report_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        bound = {b.action for b in screen.BINDINGS if b.action != "back"}
        offered = {action for _, _, action in screen.PALETTE_ACTIONS}
        assert bound - {"focus_log", "focus_table"} <= offered
        await run_palette_command(pilot, "junit")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPromptModal))
        assert app.screen.query_one(Input).value == str(tmp_path / "validation-junit.xml")


SAMPLE_RUNS = (
    Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "validation"
)


async def test_shipped_recording_replays_to_the_cli_report(tmp_path, cli) -> None:
    recording = SAMPLE_RUNS / "aks-h100-training-passed.jsonl"
    app = _host(ReplaySource(recording, speed=0), report_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.pause()
        assert screen.model.summary.exit_code == 0
        nccl = screen.model.rows["performance/nccl-all-reduce-bw"]
        assert nccl.status == "passed"
        assert nccl.measured == "157.29 GB/s" and nccl.threshold == ">= 150"
        assert "157.29 GB/s vs >= 150 pass" in _text(screen.query_one("#gates", Static))
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "validation-report.json").exists())

    done = cli("validate", "--replay", str(recording), "--replay-speed", "0")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "validation-report.json").read_text() == done.stdout


async def test_shipped_failing_recording_shows_the_not_applicable_floor() -> None:
    recording = SAMPLE_RUNS / "aks-nc80adis-training-failed.jsonl"
    app = _host(ReplaySource(recording, speed=0))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.pause()
        assert screen.model.summary.exit_code == 8
        assert screen.model.rows["conformance/secure-accelerator-access"].status == "failed"
        nccl = screen.model.rows["performance/nccl-all-reduce-bw"]
        assert nccl.headline_gate().verdict == "not applicable"
        assert nccl.measured == "n/a"
        assert screen.query_one("#summary").has_class("-failed")
        # Reproduction (issue 14): the phase bar showed "✓ performance 1/1" although the
        # only check was not applicable.
        assert screen.model.phases["performance"].status == "not applicable"
        bar = _text(screen.query_one("#phase-performance", Static))
        assert "✓" not in bar and bar.lstrip().startswith("– performance")
        assert screen.query_one("#phase-performance").has_class("-not-applicable")


async def test_a_live_run_on_a_dual_advertised_recipe_is_refused_before_any_event() -> None:
    """The wizard resolves the #1327 policy as ``aicr-tui validate`` does: before any
    cluster work, and the refusal names both advertisers."""
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.screens.validate_dashboard import LiveRunSource

    recipe = load_recipe(SAMPLE_RUNS / "aks-h100-training.recipe.yaml")
    refs = [
        r.model_copy(
            update={
                "overrides": {
                    **(r.overrides or {}),
                    "gpuResourcesEnabledOverride": True,
                    "resources": {"gpus": {"enabled": True}},
                }
            }
        )
        if r.name == "nvidia-dra-driver-gpu"
        else r
        for r in recipe.componentRefs
    ]
    recipe = recipe.model_copy(update={"componentRefs": refs})
    snapshot = load_snapshot(SAMPLE_RUNS.parent / "snapshots" / "aks-h100-install.yaml")
    app = _host(LiveRunSource(recipe, snapshot=snapshot, no_cluster=True))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(
            pilot, lambda: screen.model.state == "error" and screen.painted_to_end, timeout=30
        )
        banner = _text(screen.query_one("#run-banner", Static))
        assert "dual advertisement" in banner and "INVALID_REQUEST" in banner
        assert screen.model.rows == {}


async def test_a_live_no_cluster_run_streams_from_the_real_runner() -> None:
    """The live source drives aicr_tui.core.validation's runner (no cluster: every check not measured)."""
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.screens.validate_dashboard import LiveRunSource

    recipe = load_recipe(SAMPLE_RUNS / "aks-h100-training.recipe.yaml")
    snapshot = load_snapshot(SAMPLE_RUNS.parent / "snapshots" / "aks-h100-install.yaml")
    source = LiveRunSource(recipe, snapshot=snapshot, no_cluster=True)
    app = _host(source)
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(
            pilot, lambda: screen.model.state == "finished" and screen.painted_to_end, timeout=30
        )
        await pilot.pause()
        summary = screen.model.summary
        assert summary.exit_code == 0
        assert (
            summary.failed == 0 and summary.not_measured == 20
        )  # 17 + the NVLS/NET variants and slinky-slurm-health (issue 33)
        readiness = [r for r in screen.model.rows.values() if r.phase == "readiness"]
        assert readiness and all(r.status == "passed" for r in readiness)
        skipped = [r for r in screen.model.rows.values() if r.phase != "readiness"]
        assert skipped and all(r.status == "not measured" for r in skipped)
        assert "no cluster" in _text(screen.query_one("#run-banner", Static))


async def test_leaving_a_live_run_asks_first_and_stops_the_stream() -> None:
    import asyncio

    from aicr_tui.screens.validate_dashboard import LiveRunSource

    class HangingLiveRun(LiveRunSource):
        """A live run that has started and is waiting on a long check."""

        async def events(self, cancel):
            for event in short_run()[:3]:
                yield event
            while not cancel.is_set():
                await asyncio.sleep(0.01)

    app = _host(HangingLiveRun(recipe=None))
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.applied == 3)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and screen.model.state == "running"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is not screen)
        assert screen._cancel.is_set()


async def test_a_filtered_table_picks_up_rows_that_start_matching() -> None:
    import asyncio
    import threading

    events = short_run()
    split = next(i for i, e in enumerate(events) if getattr(e, "status", "") == "failed")
    gate = threading.Event()

    class GatedSource:
        label = "replay"

        async def events(self, cancel):
            for event in events[:split]:
                yield event
            while not gate.is_set() and not cancel.is_set():
                await asyncio.sleep(0.01)
            for event in events[split:]:
                yield event

    app = _host(GatedSource())
    async with app.run_test(size=(80, 24)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        await wait_until(pilot, lambda: screen.model.applied == split)
        await pilot.press("slash", *"failed", "enter")
        await pilot.pause()
        table = screen.query_one("#checks", DataTable)
        assert table.row_count == 0
        gate.set()
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await wait_until(pilot, lambda: table.row_count == 1)
        assert "deployment/expected-resources" in table.rows
