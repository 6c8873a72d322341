"""NCCL's result table in the log pane (issue 34 item 8): its rows were wrapped at the pane's
width, so a row's last columns (``204795 83.89 157.29 ...``) came back on a line of their
own under the first ones and the table's columns no longer lined up. A column-aligned line
now keeps its columns on one line (the pane scrolls sideways: nothing is lost), tabs are
expanded rather than squeezed to one space, and escape sequences are still removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.validation.events import CheckStarted, LogLine, PhaseStarted, RunStarted
from aicr_tui.screens.validate_dashboard import ReplaySource, ValidationDashboardScreen
from aicr_tui.screens.widgets.live_text import TailLog
from tests.conftest import SAMPLES
from tests.pilot.validate_fixtures import ListSource, ScreenHost, wait_until

PASSED_RUN = SAMPLES / "validation" / "aks-h100-training-passed.jsonl"
ROW = "17179869184    4294967296     float     sum      -1   204795   83.89  157.29"


def _log_lines(log: TailLog) -> list[str]:
    return [strip.text.rstrip() for strip in log.lines]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_an_nccl_result_row_keeps_its_columns_on_one_line(size) -> None:
    app = ScreenHost(
        lambda: ValidationDashboardScreen(ReplaySource(PASSED_RUN, speed=0), report_dir=Path("."))
    )
    async with app.run_test(size=size) as pilot:
        screen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.pause(0.3)
        assert screen.selected == "performance/nccl-all-reduce-bw"
        await pilot.press("a")  # every kept line of the check
        await pilot.pause(0.3)
        log = screen.query_one("#log", TailLog)
        lines = _log_lines(log)
        rows = [line for line in lines if ROW in line]
        assert rows, lines
        assert rows[0].endswith("157.45      0"), rows[0]
        # No line of the log is a wrapped tail of a table row.
        assert not any(line.lstrip().startswith("204795") for line in lines), lines
        # Prose still wraps inside the pane.
        width = log.scrollable_content_region.width
        prose = [line for line in lines if line.startswith("Tolerance:")]
        assert prose and all(len(line) <= width for line in prose), (width, prose)


async def test_tabs_are_expanded_and_escapes_removed_in_the_log() -> None:
    events = [
        RunStarted(t=0, run_id="r", started_ms=0, phases=("performance",), mode="replay"),
        PhaseStarted(t=0, phase="performance", checks=("nccl-all-reduce-bw",)),
        CheckStarted(t=0, phase="performance", check="nccl-all-reduce-bw"),
        LogLine(
            t=1,
            phase="performance",
            check="nccl-all-reduce-bw",
            line="size\tcount\x1b[31m\ttype\x1b]0;title\x07",
        ),
    ]
    app = ScreenHost(lambda: ValidationDashboardScreen(ListSource(events), report_dir=Path(".")))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.shown
        await wait_until(pilot, lambda: screen.model.rows and screen.painted_to_end)
        await pilot.pause(0.3)
        lines = _log_lines(screen.query_one("#log", TailLog))
        assert "size    count   type" in lines, lines
