"""SVG snapshots of the bundle preview and the validation dashboard at 80x24 and 120x40.

Nothing in these screens reads a clock or the host: durations come from the recorded
events, the bundle from the shipped catalog and sample snapshots. Regenerate with
``pytest tests/snapshots/test_snapshots_e2.py --snapshot-update`` after a deliberate change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from aicr_tui.screens.validate_dashboard import ReplaySource, ValidationDashboardScreen
from tests.conftest import SAMPLES
from tests.pilot.validate_fixtures import ScreenHost, wait_until

SIZES = [(80, 24), (120, 40)]
KEYED = "--accelerated-node-toleration nvidia.com/gpu:NoSchedule\n"


FAILED_RUN = SAMPLES / "validation" / "aks-nc80adis-training-failed.jsonl"


def _dashboard_app(source) -> ScreenHost:
    return ScreenHost(lambda: ValidationDashboardScreen(source, report_dir=Path(".")))


async def _dashboard_finished(pilot) -> None:
    screen = pilot.app.shown
    await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
    await pilot.pause(0.3)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard_after_the_shipped_failing_replay(snap_compare, size) -> None:
    """Follow mode leaves the cursor on the last check: NCCL, not applicable on this SKU."""
    app = _dashboard_app(ReplaySource(FAILED_RUN, speed=0))
    assert snap_compare(app, terminal_size=size, run_before=_dashboard_finished)


def _bundle_app(recipe, overrides: str) -> ScreenHost:
    return ScreenHost(
        lambda: BundlePreviewScreen(
            recipe, default_output=Path("bundle"), overrides=overrides, base_dir=Path(".")
        )
    )


async def _planned(pilot) -> None:
    screen = pilot.app.shown
    await wait_until(pilot, lambda: screen.result is not None)
    await wait_until(pilot, lambda: screen.result.generation == screen.generation)
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bundle_preview_values(snap_compare, aks_recipe, size) -> None:
    assert snap_compare(_bundle_app(aks_recipe, KEYED), terminal_size=size, run_before=_planned)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bundle_preview_rejected_override(snap_compare, aks_recipe, size) -> None:
    async def show_checks(pilot) -> None:
        await _planned(pilot)
        await pilot.press("c")
        await pilot.pause(0.2)

    overrides = KEYED + "--set gpu-operator:driver.enabled=true\n"
    assert snap_compare(
        _bundle_app(aks_recipe, overrides), terminal_size=size, run_before=show_checks
    )
