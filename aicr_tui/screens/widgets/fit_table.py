"""A DataTable that fits its width: columns that would not fit wrap instead of being cut.

``FitTable.fill(columns, rows, shrink=...)`` lays the rows out at their natural widths when
they fit. When they do not, the columns named in ``shrink`` as ``(column, minimum)``
(least important first) are narrowed, each down to its minimum, and every row takes the
height its wrapped cells need (the header too, when a label no longer fits its column);
the other columns keep their width. The table re-fills itself when its width changes, so
80x24 and 120x40 both show every character of every cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.widgets import DataTable


def cell_width(cell: str) -> int:
    """Widest line of a markup cell, in terminal cells."""
    return max((line.cell_len for line in Text.from_markup(cell).split()), default=0)


def column_widths(
    natural: Sequence[int], available: int, pad: int, shrink: Sequence[tuple[int, int]]
) -> list[int]:
    """Content width per column so that the columns (each plus ``pad``) fit ``available``;
    the ``(column, minimum)`` pairs of ``shrink`` give up width in order, never below their
    minimum."""
    widths = list(natural)
    over = sum(w + pad for w in widths) - available
    for index, minimum in shrink:
        if over <= 0:
            break
        floor = min(minimum, natural[index])
        give = min(over, widths[index] - floor)
        widths[index] -= give
        over -= give
    return widths


# Where a token without spaces may break, after the character: a size such as
# ``Standard_ND96isr_H100_v5`` breaks after ``_``, a kernel version after ``-``.
_BREAK_AFTER = "-_/.,=:;"


def break_offsets(plain: str, width: int) -> list[tuple[int, int]]:
    """``(start, end)`` spans of ``plain``'s lines at ``width`` cells (ASCII widths): at a
    space when the line has one, else after a separator, else (a token with neither) at
    the width itself."""
    spans: list[tuple[int, int]] = []
    start = 0
    while len(plain) - start > width:
        window = plain[start : start + width + 1]
        space = window.rfind(" ")
        if space > 0:
            spans.append((start, start + space))
            start += space + 1
            continue
        cut = max((i + 1 for i, ch in enumerate(window[:width]) if ch in _BREAK_AFTER), default=0)
        end = start + (cut if cut > 0 else width)
        spans.append((start, end))
        start = end
    spans.append((start, len(plain)))
    return spans


class BrokenText(Text):
    """A cell's text with line breaks put in for its column; ``str()`` is still the cell's
    own text (the table holds the value, only its rendering is broken)."""

    def __init__(self, original: str) -> None:
        super().__init__()
        self.original = original

    def __str__(self) -> str:
        return self.original


def broken_cell(cell: str, width: int) -> str | Text:
    """``cell`` (markup) as lines of at most ``width`` cells broken where a person would
    break them, or the cell itself (folded at the width as before) when it fits, is not
    plain ASCII, or would take more lines broken that way than folded."""
    if width <= 0:
        return cell
    text = Text.from_markup(cell)
    plain = text.plain
    if len(plain) <= width or "\n" in plain or not plain.isascii():
        return cell
    spans = break_offsets(plain, width)
    if len(spans) > -(-len(plain) // width):
        return cell  # breaking where a person would costs a line here: folded as before
    broken = BrokenText(plain)
    broken.append_text(Text("\n").join(text[start:end] for start, end in spans))
    return broken


class FitTable(DataTable[str | Text]):
    """A DataTable whose columns wrap to the table's width instead of running past it."""

    def __init__(
        self,
        *,
        id: str | None = None,
        cursor_type: str = "row",
        zebra_stripes: bool = False,
    ) -> None:
        super().__init__(id=id, cursor_type=cursor_type, zebra_stripes=zebra_stripes)  # type: ignore[arg-type]
        self._columns: tuple[str, ...] = ()
        self._rows: list[tuple[str, tuple[str, ...], int]] = []
        self._shrink: tuple[tuple[int, int], ...] = ()
        self._laid_out_for = -1

    def fill(
        self,
        columns: Sequence[str],
        rows: Sequence[tuple[str, Sequence[str]]],
        *,
        shrink: Sequence[tuple[int, int]] = (),
        height: int = 1,
    ) -> None:
        """Show ``rows`` (row key, cells) under ``columns``; ``height`` is each row's
        height when nothing wraps."""
        self._columns = tuple(columns)
        self._rows = [(key, tuple(cells), height) for key, cells in rows]
        self._shrink = tuple(shrink)
        self._layout()

    def _available(self) -> int:
        """Cells the columns may use: the content width less a vertical scrollbar."""
        width = self.content_region.width
        if width <= 0:
            return 0
        return max(width - self.styles.scrollbar_size_vertical, 1)

    def _layout(self) -> None:
        available = self._available()
        self._laid_out_for = available
        labels = [cell_width(label) for label in self._columns]
        natural = list(labels)
        for _, cells, _ in self._rows:
            natural = [max(n, cell_width(c)) for n, c in zip(natural, cells, strict=False)]
        pad = 2 * self.cell_padding
        widths = column_widths(natural, available, pad, self._shrink) if available else natural
        wraps = widths != natural
        self.header_height = 2 if any(w < n for w, n in zip(widths, labels, strict=True)) else 1
        cursor = self.cursor_row
        self.clear(columns=True)
        # Every column gets its width now (none is measured later, on idle): the header is
        # drawn at the same widths as the rows from the first frame on.
        for index, (label, width) in enumerate(zip(self._columns, widths, strict=True)):
            self.add_column(label, width=width, key=f"col-{index}")
        for key, cells, height in self._rows:
            shown = [
                broken_cell(cell, width) if width < natural_width else cell
                for cell, width, natural_width in zip(cells, widths, natural, strict=False)
            ]
            self.add_row(*shown, key=key, height=None if wraps else height)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

    def on_resize(self, event: events.Resize) -> None:
        if self._columns and self._available() != self._laid_out_for:
            self._layout()
