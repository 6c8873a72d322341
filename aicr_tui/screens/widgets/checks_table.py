"""The validation dashboard's table of checks: its columns at each width, how a check's
cells are shown in them, and the table itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.widgets import DataTable

from aicr_tui.core.validation.progress import CheckRow

STATUS_STYLE = {
    "queued": "dim",
    "running": "bold yellow",
    "passed": "bold green",
    "failed": "bold red",
    "not applicable": "cyan",
    "not measured": "bold magenta",
}
COLUMNS = (
    ("phase", "Phase"),
    ("check", "Check"),
    ("status", "Status"),
    ("measured", "Measured"),
    ("threshold", "Threshold"),
    ("duration", "Time"),
)
# Column widths for narrow (< 100 cells, e.g. 80x24 over ssh) and wide terminals. Narrow
# rows are two lines high and their cells wrap, so a readiness constraint path, a measured
# value with its unit or "not applicable" is shown whole, never cut; wide rows are one line.
NARROW_WIDTHS = (5, 21, 12, 10, 10, 6)
NARROW_ROW_HEIGHT = 2
WIDE_WIDTHS = (11, 36, 14, 18, 14, 8)
NARROW_BELOW = 100
SHORT_PHASE = {
    "readiness": "ready",
    "deployment": "depl",
    "conformance": "conf",
    "performance": "perf",
}


# A narrow cell's line may end after one of these (a check path, a version, a unit).
BREAK_AFTER = frozenset("-./_:,")


def break_lines(text: str, width: int, most: int) -> list[str] | None:
    """``text`` in lines of at most ``width`` cells, each broken at a space or after a
    separator (``secure-accelerator-`` / ``access``, ``6.8.0-`` / ``1059-azure``), or
    None when that takes more than ``most`` lines or ``text`` is not plain ASCII."""
    if not text.isascii() or not text.isprintable():
        return None
    lines: list[str] = []
    rest = text.strip(" ")
    while len(rest) > width:
        if len(lines) + 1 >= most:
            return None
        # A space first (``157.29`` / ``GB/s``), else after the last separator that fits.
        cut = rest.rfind(" ", 1, width + 1)  # characters kept on this line
        skip = 1  # the space the line breaks at is not shown
        if cut <= 0:
            skip = 0
            cut = next(
                (i for i in range(min(width, len(rest) - 1), 0, -1) if rest[i - 1] in BREAK_AFTER),
                0,
            )
        if cut == 0:
            return None
        lines.append(rest[:cut].rstrip(" "))
        rest = rest[cut + skip :].lstrip(" ")
    lines.append(rest)
    return lines


class BrokenCell:
    """A cell whose value is shown in lines broken by :func:`break_lines`; its ``str`` is
    the value itself (what the table holds), only the rendering is broken."""

    def __init__(self, value: str, lines: Sequence[str], style: str = "") -> None:
        self.value = value
        self.text = Text("\n".join(lines), style=style, overflow="fold")

    def __str__(self) -> str:
        return self.value

    def __rich__(self) -> Text:
        return self.text


def wrapped(text: str, width: int, most: int, style: str = "") -> Text | BrokenCell:
    """A narrow cell: broken at spaces and separators when that fits in ``most`` lines,
    else folded at ``width`` (every character shown either way)."""
    lines = break_lines(text, width, most)
    if lines is None or len(lines) == 1:
        return Text(text, style=style, overflow="fold")
    return BrokenCell(text, lines, style)


def fit(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` cells, keeping its end (check names differ at the end)."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def row_cells(row: CheckRow, *, narrow: bool) -> tuple[Text | BrokenCell, ...]:
    # Text, not str: the table would parse a str as markup (slower, and a "[" in a
    # check name or measured value would be taken for a style tag).
    if narrow:  # two-line rows: the cells wrap inside their column
        return (
            Text(SHORT_PHASE.get(row.phase, row.phase)),
            wrapped(row.name, NARROW_WIDTHS[1], NARROW_ROW_HEIGHT),
            Text(row.status, style=STATUS_STYLE.get(row.status, "")),
            wrapped(row.measured, NARROW_WIDTHS[3], NARROW_ROW_HEIGHT),
            wrapped(row.threshold, NARROW_WIDTHS[4], NARROW_ROW_HEIGHT),
            Text(row.duration),
        )
    return (
        Text(row.phase, no_wrap=True),
        Text(fit(row.name, WIDE_WIDTHS[1]), no_wrap=True),
        Text(row.status, style=STATUS_STYLE.get(row.status, ""), no_wrap=True),
        Text(row.measured, no_wrap=True),
        Text(row.threshold, no_wrap=True),
        Text(row.duration, no_wrap=True),
    )


class ChecksTable(DataTable[Any]):
    """The checks table, whose cursor row stays whole when the table's height changes.

    A DataTable scrolls its cursor row into view at the height it has then. Follow puts
    the cursor on the running check; when the run ends the summary takes a line from the
    table, and the last check (a two-line row at 80x24) was left cut in half. The same
    happens when the filter box opens. On a resize the cursor row is scrolled into view
    again at the new height.
    """

    def on_resize(self, event: events.Resize) -> None:
        if self.row_count:
            self.move_cursor(row=self.cursor_row, animate=False, scroll=True)
