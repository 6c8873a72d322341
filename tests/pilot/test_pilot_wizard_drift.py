"""Drift in the wizard: a second capture against the qualified one, and the verdict it changes."""

from __future__ import annotations

import pytest

from aicr_tui.screens.drift import DriftScreen
from aicr_tui.screens.recipe import RecipeScreen
from tests.conftest import SAMPLES
from tests.pilot.fit import screen_lines
from tests.pilot.test_pilot_wizard_remedies import CLI_FLAG
from tests.pilot.wizard_helpers import pick_sample, settle, wait_until, wizard_running


async def open_drift_on_qualified_install(pilot, app) -> DriftScreen:
    await pick_sample(pilot, "aks-install")
    await pilot.press("n")
    await settle(pilot, 3)
    assert isinstance(app.screen, RecipeScreen)
    assert app.state.verdict is not None and app.state.verdict.ok and app.state.recipe is not None
    await pilot.press("D")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, DriftScreen)
    return screen


async def test_second_sample_shows_driver_drift_and_refusal(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        screen = await open_drift_on_qualified_install(pilot, app)
        assert "no second capture loaded yet" in screen.verdict_text()
        options = screen.query_one("#drift-samples")
        ids = [o.id for o in options.options]
        assert "aks-install" not in ids  # the qualified capture itself is not offered
        options.highlighted = ids.index("aks-none")
        await pilot.press("enter")
        await settle(pilot, 3)
        await wait_until(pilot, lambda: screen.report is not None)
        report = screen.report
        changed = {c.path: (c.old, c.new) for c in report.changes}
        assert changed["K8s.aks-gpu-pools.gpu-driver"] == ("Install", "None")
        assert [c.name for c in report.now_failing] == ["K8s.aks-gpu-pools.gpu-driver"]
        text = screen.verdict_text()
        assert "gpuStack=azure-managed: qualified on" in text and "-> REFUSED on" in text
        table = screen.query_one("#drift-constraints")
        cells = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert any(c.startswith("FAILS  K8s.aks-gpu-pools.gpu-driver") for c in cells)
        # The remedy names the choice on the recipe step (issue 34 item 3), not a CLI flag.
        remedy = next(c for c in cells if "remedy:" in c)
        assert (
            "remedy: this capture qualifies with gpuStack=operator-managed: choose it in the "
            "gpuStack list of the recipe step (esc goes back to it)"
        ) in remedy
        assert not CLI_FLAG.findall("\n".join(cells) + text), cells
        # The qualified capture and its verdict are untouched: drift only compares.
        assert app.state.verdict.ok and app.state.sample_key == "aks-install"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RecipeScreen)


async def test_opened_file_and_bad_file(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        screen = await open_drift_on_qualified_install(pilot, app)
        bad = tmp_path / "bad.yaml"
        bad.write_text("kind: Recipe\n")
        screen.load_path(str(bad))
        await settle(pilot, 3)
        status = str(screen.query_one("#drift-status").render())
        assert "bad.yaml" in status and screen.report is None
        screen.load_path(str(SAMPLES / "captures" / "aks-pools-install.json"))
        await settle(pilot, 3)
        await wait_until(pilot, lambda: screen.report is not None)
        # The same pools without the base snapshot's cluster readings: nothing drifted, but
        # those readings were not measured, so the constraints that read them cannot hold
        # (never a pass) and the remedy says to recapture against the cluster.
        report = screen.report
        assert report.changes == [] and report.unmeasured
        version = next(c for c in report.constraints if c.name == "K8s.server.version")
        assert version.now_fails and version.new is None and version.new_status == "unavailable"
        assert "recapture the snapshot against the cluster" in version.remedy
        pools = next(c for c in report.constraints if c.name == "K8s.aks-gpu-pools.gpu-driver")
        assert not pools.now_fails
        assert "-> REFUSED on aks-pools-install.json" in screen.verdict_text()


async def test_drift_needs_a_qualified_selection(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-none")
        await pilot.press("n")
        await settle(pilot, 3)
        assert app.state.recipe is None
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(app.screen, RecipeScreen)


async def test_fetch_live_as_the_second_capture(tmp_path):
    """F fetches the live cluster through the same injectable call as the capture step."""
    from aicr_tui.app import create_app
    from aicr_tui.core.capture.capture import CaptureResult, Projections
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.screens.state import WizardServices

    asked = []

    def live(request, cancel, progress):
        asked.append(request.kubeconfig)
        snap = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-none.yaml"))
        return CaptureResult(snapshot=snap, projections=Projections(), warnings=[])

    app = create_app(demo=True, services=WizardServices(live_capture=live))
    app.state.output_dir = tmp_path
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await open_drift_on_qualified_install(pilot, app)
        screen._fetch_requested({"kubeconfig": "/tmp/kc"})
        await settle(pilot, 3)
        await wait_until(pilot, lambda: screen.report is not None)
        assert asked == ["/tmp/kc"]
        assert [c.name for c in screen.report.now_failing] == ["K8s.aks-gpu-pools.gpu-driver"]
        assert "-> REFUSED on live capture" in screen.verdict_text()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_drift_remedy_on_screen_names_the_choice_never_a_flag(tmp_path, size):
    """Issue 34 item 3: the drift screen said "rerun with --profile ..."; its panel now says
    where the choice is, and no CLI flag is drawn at either size."""
    async with wizard_running(tmp_path, size) as (app, pilot):
        screen = await open_drift_on_qualified_install(pilot, app)
        options = screen.query_one("#drift-samples")
        ids = [o.id for o in options.options]
        options.highlighted = ids.index("aks-none")
        await pilot.press("enter")
        await settle(pilot, 3)
        await wait_until(pilot, lambda: screen.report is not None)
        await settle(pilot)
        shown = "\n".join(screen_lines(app))
        assert not CLI_FLAG.findall(shown), shown
        if size == (120, 40):
            assert "this capture qualifies with gpuStack=operator-managed" in shown, shown
