"""The bundle preview's Charts tab: the same verification as ``aicr-tui verify``, run in a
thread worker after each plan, before anything is written."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TabbedContent, TextArea

from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from tests.pilot.validate_fixtures import ScreenHost, wait_until
from tests.verify import matrix

KEYED = "--accelerated-node-toleration nvidia.com/gpu:NoSchedule\n"


def _recipe():
    return next(r for c, r in matrix.cases() if c.service == "aks" and c.platform is None)


async def test_charts_tab_lists_findings_per_component(tmp_path: Path) -> None:
    app = ScreenHost(
        lambda: BundlePreviewScreen(
            _recipe(),
            default_output=tmp_path / "bundle",
            overrides=KEYED,
            base_dir=tmp_path,
            verify_charts=matrix.chart_dirs(),
        )
    )
    async with app.run_test(size=(100, 30)) as pilot:
        screen: BundlePreviewScreen = app.shown
        await wait_until(pilot, lambda: "finding(s) in" in screen.charts_text, timeout=60)
        assert "0 finding(s) in" in screen.charts_text
        assert "001-" in screen.charts_text
        await pilot.press("k")
        assert screen.query_one("#bundle-tabs", TabbedContent).active == "charts"

        screen.query_one("#overrides-editor", TextArea).text = (
            KEYED + "--set gpuoperator:driver.enabeld=false\n"
        )
        await wait_until(pilot, lambda: "1 finding(s) in" in screen.charts_text, timeout=60)
        line = next(x for x in screen.charts_text.splitlines() if "undefined-value" in x)
        assert line.strip().startswith("gpu-operator: undefined-value: driver.enabeld ")
        assert not (tmp_path / "bundle").exists()  # shown before anything is written
