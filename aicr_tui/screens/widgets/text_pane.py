"""Scrolling text whose new content repaints the pane alone: no layout of the screen.

A Static whose text changes its number of lines asks Textual for a layout of the whole
screen (every widget placed again) and a repaint of everything that moved; inside a
scrolling container its changed height does the same. On the recipe screen each keystroke
changes the constraint list and the troubleshooting text, and that layout and repaint
took longer than the verdict itself.

``TextPane`` draws its own lines (Textual's line API) inside a fixed box, so new content
never moves anything around it. Its vertical scrollbar is always there (``overflow-y:
scroll``): the pane's content width cannot change with its content, and a scrollbar
appearing or vanishing (which would move the text and lay the screen out) never happens.

The content is rows of plain text (never markup), wrapped to the pane's width at spaces,
folded where a word is longer than the width; a row may hold line breaks. An optional
header stays put while the rows scroll under it, and ``zebra`` shades every other row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.widgets.kept_lines import KeptLines
from aicr_tui.screens.widgets.textual_adapter import vertical_scrollbar

# One wrapped line: its segments and which row it belongs to (-1: the header).
_Line = tuple[list[Segment], int]
_SPACES = re.compile(r"(\s+)")
# Rows wrapped before, by (row, width): most rows of a new verdict are rows of an earlier
# one (the constraints of the other gpuStack value, the text of a failure seen before).
_WRAPS_KEPT = 512
# Scrollbar states whose lines a pane's bar keeps (pass and fail each have one).
_BAR_STATES_KEPT = 16


def wrap_plain(text: str, width: int) -> list[str]:
    """``text`` (plain, maybe several lines) as lines of at most ``width`` cells: broken at
    spaces (the spaces at a break dropped, a line's indent kept), a word longer than
    ``width`` folded, tabs expanded to 8 columns."""
    out: list[str] = []
    for paragraph in text.expandtabs(8).split("\n"):
        paragraph = paragraph.rstrip()
        if cell_len(paragraph) <= width:
            out.append(paragraph)
            continue
        line, used = "", 0
        for piece in _SPACES.split(paragraph):
            size = cell_len(piece)
            if piece.isspace() and line:
                if used + size < width:
                    line, used = line + piece, used + size
                else:
                    out.append(line)
                    line, used = "", 0
                continue
            if used + size > width and line.strip():
                out.append(line.rstrip())
                line, used = "", 0
            if used + size > width and width - used < 2:
                line, used = "", 0  # an indent with no room after it
            while used + size > width:  # longer than the line: folded
                head = chop_cells(piece, width - used)[0] or piece[0]
                out.append(line + head)
                line, used = "", 0
                piece = piece[len(head) :]
                size = cell_len(piece)
            line, used = line + piece, used + size
        if line.strip():
            out.append(line.rstrip())
    return out


class _KeptBar(ScrollBar, KeptLines):
    """A pane's vertical scrollbar, whose lines are kept per state of the bar.

    A verdict that flips between pass and fail moves the troubleshooting pane between
    text that fits and text that scrolls, and its bar was drawn again each time (through
    Rich: a third of the lines a keystroke painted). The lines of the last few states
    are kept, keyed by everything ``ScrollBar.render`` reads: the extent, the position,
    the mouse, and the pane's scrollbar colours (so a new theme draws anew).
    """

    def __init__(self, *, thickness: int) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._by_state: dict[tuple[object, ...], list[Strip]] = {}

    def render_lines(self, crop: Region) -> list[Strip]:
        kept = self._kept
        if kept is not None and kept[0] == crop and kept[1] == self.size:
            return super().render_lines(crop)  # the lines of this very state
        pane = self.parent
        styles = pane.styles if isinstance(pane, Widget) else self.styles
        state = (
            crop,
            self.size,
            self.window_virtual_size,
            self.window_size,
            self.position,
            self.mouse_over,
            self.grabbed is not None,
            styles.scrollbar_color,
            styles.scrollbar_color_hover,
            styles.scrollbar_color_active,
            styles.scrollbar_background,
            styles.scrollbar_background_hover,
            styles.scrollbar_background_active,
            pane.background_colors if isinstance(pane, Widget) else None,
            tuple(self.app.get_line_filters()),
        )
        lines = self._by_state.get(state)
        if lines is None:
            if len(self._by_state) >= _BAR_STATES_KEPT:
                self._by_state.clear()
            lines = self._by_state[state] = super().render_lines(crop)
        self._kept = (crop, self.size, tuple(self.app.get_line_filters()), lines)
        return lines


class TextPane(ScrollView, KeptLines, can_focus=True):
    """Rows of plain text in a fixed box that scrolls; see the module docstring."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"text-pane--header", "text-pane--even-row"}

    DEFAULT_CSS = """
    TextPane {
        overflow-x: hidden;
        overflow-y: scroll;
        color: $foreground;
        /* The bar is always there: its track takes the pane's colour, so a pane whose
           text fits shows no bar, and one that scrolls shows the thumb. */
        scrollbar-background: $background;
        scrollbar-background-hover: $background;
        scrollbar-background-active: $background;
        & > .text-pane--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        & > .text-pane--even-row {
            background: $surface-lighten-1 50%;
        }
        &:dark > .text-pane--even-row {
            background: $surface-darken-1 40%;
        }
        &:focus {
            background-tint: $foreground 5%;
        }
    }
    """

    def __init__(
        self,
        *,
        zebra: bool = False,
        pad: int = 0,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``pad``: blank cells either side of every line, in the line's own style (as a
        DataTable pads its cells)."""
        super().__init__(id=id, classes=classes)
        self.zebra = zebra
        self.pad = pad
        self._header = ""
        self._rows: tuple[str, ...] = ()
        self._head: list[_Line] = []  # the header's wrapped lines
        self._body: list[_Line] = []  # the rows' wrapped lines
        self._wrapped_for = -1  # the width the lines were wrapped to
        self._wraps: dict[tuple[str, int], list[str]] = {}
        # Each line drawn (styled, as wide as the pane), by its index (header first);
        # dropped when the content, the width or the styles change.
        self._drawn: dict[int, Strip] = {}
        self._styles: tuple[Style, Style, Style] | None = None

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The bar, created as Textual creates it, but one that keeps its lines."""
        return vertical_scrollbar(self, lambda: _KeptBar(thickness=self.scrollbar_size_vertical))

    # -- content ------------------------------------------------------------------------
    @property
    def rows(self) -> tuple[str, ...]:
        return self._rows

    def show(self, rows: Sequence[str], *, header: str = "") -> None:
        """Show ``rows`` (plain text, made terminal-safe here) under ``header``. Unchanged
        content costs nothing; new content repaints this pane and its scrollbar only."""
        rows = tuple(safe_text(row, multiline=True) for row in rows)
        header = safe_text(header)
        if rows == self._rows and header == self._header:
            return
        self._rows, self._header = rows, header
        self._wrap()

    def plain_lines(self) -> list[tuple[int, str]]:
        """Every line of the content as wrapped for the pane, header first: (the row it
        belongs to, -1 for the header; its text)."""
        return [
            (row, "".join(s.text for s in segments)) for segments, row in self._head + self._body
        ]

    # -- wrapping -----------------------------------------------------------------------
    def _width(self) -> int:
        return self.scrollable_content_region.width

    def _wrap(self) -> None:
        width = self._width()
        # New content at the same width repaints only the lines on screen that differ
        # (a verdict changes two of the constraint list's lines, say).
        before = self._shown_lines() if width == self._wrapped_for and width > 0 else None
        scrolled = self.scroll_offset.y
        self._wrapped_for = width
        if width <= 0:
            self._head, self._body = [], []
        else:
            self._head = self._wrap_rows([self._header] if self._header else [], width, -1)
            self._body = self._wrap_rows(self._rows, width, 0)
        self._drawn.clear()
        self._size_to_content()
        if before is None or self.scroll_offset.y != scrolled:
            self.refresh()
            return
        changed = [
            Region(0, y, self.size.width, 1)
            for y, (old, new) in enumerate(zip(before, self._shown_lines(), strict=True))
            if old != new
        ]
        if changed:
            self.refresh(*changed)

    def _shown_lines(self) -> list[tuple[str, int] | None]:
        """What each line on screen shows: (its text, its style: 0 plain, 1 shaded, 2
        header), None past the content."""
        head = len(self._head)
        top = round(self.scroll_offset.y)
        shown: list[tuple[str, int] | None] = []
        for y in range(self.scrollable_content_region.height):
            index = y if y < head else head + top + y - head
            if index < head:
                segments, row = self._head[index]
            elif index - head < len(self._body):
                segments, row = self._body[index - head]
            else:
                shown.append(None)
                continue
            kind = 2 if row < 0 else 1 if self.zebra and row % 2 == 0 else 0
            shown.append(("".join(segment.text for segment in segments), kind))
        return shown

    def _wrap_rows(self, rows: Sequence[str], width: int, first: int) -> list[_Line]:
        pad = " " * self.pad
        inner = max(width - 2 * self.pad, 1)
        wraps = self._wraps
        if len(wraps) > _WRAPS_KEPT:
            wraps.clear()
        lines: list[_Line] = []
        for offset, row in enumerate(rows):
            index = first if first < 0 else first + offset
            wrapped = wraps.get((row, inner))
            if wrapped is None:
                wrapped = wraps[row, inner] = wrap_plain(row, inner)
            for line in wrapped:
                lines.append(([Segment(pad + line)], index))
        return lines

    def _size_to_content(self) -> None:
        """Set the virtual size without the layout a changed ``virtual_size`` asks for:
        with the scrollbar always shown nothing outside this pane can move. The scrollbar
        is told the new extent and the scroll position is kept within it. Text that fits
        is as tall as the pane (the bar then shows no thumb, also after a layout)."""
        window = self.scrollable_content_region.height
        lines = len(self._head) + len(self._body)
        size = Size(max(self._wrapped_for, 0), max(lines, window))
        if size == self.virtual_size:
            return
        self.set_reactive(ScrollView.virtual_size, size)
        if self.is_mounted and self.show_vertical_scrollbar:
            # Reactives of the bar's own: it repaints itself when they change.
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            bar.window_size = window
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def on_resize(self, event: events.Resize) -> None:
        if self._width() != self._wrapped_for:
            self._wrap()
        else:
            self._size_to_content()

    # -- drawing ------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        self._drawn.clear()
        self._styles = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        head = len(self._head)
        index = y if y < head else head + round(self.scroll_offset.y) + y - head
        strip = self._drawn.get(index)
        if strip is None:
            strip = self._drawn[index] = self._draw(index)
        return strip

    def _draw(self, index: int) -> Strip:
        width = max(self._wrapped_for, 0)  # the width the lines were wrapped to
        if self._styles is None:
            # (plain row, shaded row, header): looked up once per change of styles, each
            # lookup walks the widget's ancestors.
            base = self.rich_style
            shaded = base + self.get_component_rich_style("text-pane--even-row")
            header = base + self.get_component_rich_style("text-pane--header")
            self._styles = (base, shaded if self.zebra else base, header)
        plain, shaded, header = self._styles
        head = len(self._head)
        if index < head:
            segments, row = self._head[index]
        elif index - head < len(self._body):
            segments, row = self._body[index - head]
        else:
            return Strip.blank(width, plain)
        # As a DataTable stripes: rows 0, 2, ... are shaded.
        style = header if row < 0 else shaded if row % 2 == 0 else plain
        return Strip(segments).apply_style(style).extend_cell_length(width, style)
