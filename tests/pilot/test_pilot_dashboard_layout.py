"""The dashboard's wrapping widgets and its table keep their true heights whatever the order
of Textual's layout passes (the failing-replay SVG snapshot was flaky, session 3).

Two causes, both in the product, both seen on a loaded machine (one shared core, three CPU
hogs: 10 of 12 runs at 120x40 and 1 of 30 at 80x24 before the fix):

- Textual caches a widget's box model under a layout counter that ``refresh(layout=True)``
  bumps only when no layout is pending yet. When the screen lays out (another widget asked)
  between two updates of the banner, the second update leaves the counter alone and the
  banner keeps the first text's height: at 120x40 the finished banner's second line
  (``run ... · recipe``) was hidden under the phase strip.
- The table scrolled its cursor row into view at the height it had then; when the summary
  appears at the end of the run the table loses a line and the cursor row (the last check)
  was cut in half at 80x24 (``applicable`` missing, a scrollbar instead).

The tests force those orders instead of waiting for a slow machine to produce them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static

from aicr_tui.core.services.replay import open_replay
from aicr_tui.core.validation.events import Event, RunFinished
from aicr_tui.screens.validate_dashboard import ReplaySource, ValidationDashboardScreen
from aicr_tui.screens.widgets.checks_table import BrokenCell, break_lines, wrapped
from tests.pilot.fit import screen_lines
from tests.pilot.validate_fixtures import SAMPLES_DIR, ScreenHost, wait_until

FAILED_RUN = SAMPLES_DIR / "aks-nc80adis-training-failed.jsonl"


class HeldSource:
    """The recorded events, holding back the run's end (and the stream's) until ``release``
    is set."""

    label = "replay"

    def __init__(self, events: Sequence[Event]) -> None:
        self._events = list(events)
        self.release = threading.Event()

    def describe(self) -> str:  # the replay's own banner text: two lines at 80 and 120
        return ReplaySource(FAILED_RUN, speed=0).describe()

    async def _held(self, cancel: threading.Event) -> bool:
        while not self.release.is_set():
            if cancel.is_set():
                return True
            await asyncio.sleep(0.01)
        return False

    async def events(self, cancel: threading.Event) -> AsyncIterator[Event]:
        for event in self._events:
            if isinstance(event, RunFinished) and await self._held(cancel):
                return
            yield event
        await self._held(cancel)


def _host(source: Any, tmp_path: Path) -> ScreenHost:
    return ScreenHost(lambda: ValidationDashboardScreen(source, report_dir=tmp_path))


def _recorded() -> list[Event]:
    return list(open_replay(FAILED_RUN, 0).events)


SHORT = "waiting · replay"
LONG = " · ".join(["finished · replay of aks-nc80adis-training-failed.jsonl"] * 4)


@pytest.mark.parametrize("widget_id", ["run-banner", "log-title", "summary"])
async def test_a_wrapping_line_takes_the_height_of_its_last_text(tmp_path, widget_id) -> None:
    source = HeldSource([])  # nothing arrives: only this test updates the widget
    app = _host(source, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.shown
        await pilot.pause()
        widget = screen.query_one(f"#{widget_id}", Static)
        widget.update(SHORT)
        # The screen lays out before the widget's own refresh ran, as it does when another
        # widget asked for a layout first (a table row or a log line added in the same paint).
        for node in widget.ancestors_with_self:
            if isinstance(node, Widget):
                node._clear_arrangement_cache()
        screen._refresh_layout()
        assert widget.region.height == 1
        widget.update(LONG)
        wrapped = len(Text(LONG).wrap(app.console, widget.content_region.width))
        assert wrapped > 1
        await pilot.pause()
        await pilot.pause()
        assert widget.region.height == min(wrapped, widget.styles.max_height.value), widget.region
        source.release.set()


async def test_the_finished_banner_shows_both_its_lines_at_120x40(tmp_path) -> None:
    """The banner, painted waiting then finished around a forced layout, as under load."""
    events = _recorded()
    source = HeldSource([])
    app = _host(source, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.shown
        await pilot.pause()
        screen._banner_text = ""
        screen._paint_banner()  # waiting: one line
        screen._clear_arrangement_cache()
        screen._refresh_layout()
        for event in events:
            screen.model.apply(event)
        screen._paint_banner()  # finished: two lines at 120 columns
        await pilot.pause()
        await pilot.pause()
        banner = screen.query_one("#run-banner", Static)
        assert banner.region.height == 2
        lines = screen_lines(app)
        assert lines[0].lstrip().startswith("finished · replay of")
        assert "aks-h100-training.recipe.yaml" in lines[1], lines[:3]
        assert "readiness" in lines[2]  # the phase strip below the two banner lines
        source.release.set()


def _cursor_row_shown(table: DataTable[Any]) -> bool:
    """Whether every line of the cursor row is inside the table's scrolled window."""
    heights = [row.height for row in table.ordered_rows]
    top = table.header_height + sum(heights[: table.cursor_row])
    bottom = top + heights[table.cursor_row]
    window = table.scrollable_content_region.height
    return top >= table.scroll_y + table.header_height and bottom <= table.scroll_y + window


async def test_the_cursor_row_stays_whole_when_the_summary_takes_a_line(tmp_path) -> None:
    """80x24: follow put the cursor on the last check (NCCL, two lines) before the run
    ended; the summary then takes room from the table, and the row stays whole."""
    source = HeldSource(_recorded())
    app = _host(source, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.shown
        table = screen.query_one("#checks", DataTable)
        last = "performance/nccl-all-reduce-bw"
        await wait_until(pilot, lambda: last in table.rows and table.cursor_row == 19)
        await wait_until(pilot, lambda: screen.model.rows[last].status == "not applicable")
        await pilot.pause(0.4)  # the table's paint beat
        assert _cursor_row_shown(table)
        before = table.size.height
        source.release.set()
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        await pilot.pause(0.3)
        assert table.size.height < before  # the summary did take room from the table
        assert _cursor_row_shown(table), (table.scroll_y, table.max_scroll_y)
        lines = screen_lines(app)
        at = next(i for i, line in enumerate(lines) if "nccl-all-reduce-bw" in line)
        assert "applicable" in lines[at + 1]


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("secure-accelerator-access", 21, ["secure-accelerator-", "access"]),
        ("OS.sysctl./proc/sys/kernel/osrelease", 21, ["OS.sysctl./proc/sys/", "kernel/osrelease"]),
        ("6.8.0-1059-azure", 10, ["6.8.0-", "1059-azure"]),
        ("148004.00 tok/s +1", 10, ["148004.00", "tok/s +1"]),
        ("157.29 GB/s", 10, ["157.29", "GB/s"]),
        (">= v24.6.0", 10, [">= v24.6.0"]),
    ],
)
def test_narrow_cells_break_at_spaces_and_after_separators(text, width, lines) -> None:
    """80x24 folded values mid-word (``6.8.0-1059-azu`` / ``re``); they now break where a
    person would, every character still shown."""
    assert break_lines(text, width, 2) == lines
    cell = wrapped(text, width, 2)
    assert str(cell) == text  # the table holds the value; only its rendering is broken
    shown = cell.__rich__() if isinstance(cell, BrokenCell) else cell
    assert shown.plain == "\n".join(lines)


@pytest.mark.parametrize(
    "text",
    ["a" * 28, "xxxxxxxxx-yyyyyyyyyyyy", "a-b-c-d-e-f-g-h-i-j-k-l", "naïve-check-name-x", "a\tb"],
)
def test_a_cell_that_cannot_break_in_two_lines_is_folded_whole(text) -> None:
    assert break_lines(text, 10, 2) is None
    cell = wrapped(text, 10, 2)
    assert cell.plain == text and cell.overflow == "fold"


async def test_the_80x24_rows_break_check_paths_and_values_at_separators(tmp_path) -> None:
    source = HeldSource(_recorded())
    source.release.set()
    app = _host(source, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "finished" and screen.painted_to_end)
        table = screen.query_one("#checks", DataTable)
        table.move_cursor(row=4)  # readiness: OS.sysctl./proc/sys/kernel/osrelease
        await pilot.pause(0.3)
        lines = screen_lines(app)
        at = next(i for i, line in enumerate(lines) if "OS.sysctl./proc/sys/" in line)
        assert "6.8.0-" in lines[at] and "6.8.0-1" not in lines[at], lines[at]
        assert "kernel/osrelease" in lines[at + 1] and "1059-azure" in lines[at + 1]
