"""The recipe screen's verdict: one to three lines, green when it passes, red when it fails,
plain when nothing was verified (no capture).

It changes on almost every keystroke, so it draws its own lines (Textual's line API)
from text wrapped once per change, where a Static took the text through Textual's content
pipeline to measure its height and again to paint it. A verdict that takes as many rows
as the one before (its wrapped lines, cut at ``max-height``) repaints this widget alone;
only a change in its number of rows lays the screen out (what is below it moves).

The colour is a component style, not a CSS class on the widget: a class that flips with
the verdict restyles the widget on every keystroke.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.widgets.kept_lines import KeptLines
from aicr_tui.screens.widgets.text_pane import wrap_plain


class VerdictLine(KeptLines):
    """``show(text, ok)`` (``ok`` None: neutral); ``render()`` is the plain text shown."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"verdict-line--pass", "verdict-line--fail"}
    DEFAULT_CSS = """
    VerdictLine {
        height: auto;
        & > .verdict-line--pass {
            color: $success;
        }
        & > .verdict-line--fail {
            color: $error;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = ""
        self._ok: bool | None = False
        self._lines: list[str] = []
        self._wrapped_for = -1  # the width _lines were wrapped to
        self._styles: tuple[Style, Style] | None = None  # (pass, fail)

    def render(self) -> str:
        return self._text

    def show(self, text: str, ok: bool | None) -> None:
        """Show ``text`` (plain, made terminal-safe here) as a passing or failing verdict,
        or (``ok`` None) as a neutral one: nothing was checked, so neither colour."""
        text = safe_text(text)
        if (text, ok) == (self._text, self._ok):
            return
        self._text, self._ok = text, ok
        before = self._height(len(self._lines))
        width = self.content_size.width
        self._lines = wrap_plain(text, width) if width > 0 else []
        self._wrapped_for = width
        self.refresh(layout=not width or self._height(len(self._lines)) != before)

    def _height(self, lines: int) -> int:
        """The rows ``lines`` wrapped lines take on screen: a ``max-height`` in cells cuts
        them (six lines or three show as the same three rows, and lay nothing out)."""
        limit = self.styles.max_height
        rows = max(lines, 1)
        return min(rows, int(limit.value)) if limit is not None and limit.is_cells else rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(len(wrap_plain(self._text, width)) if width > 0 else 1, 1)

    def notify_style_update(self) -> None:
        self._styles = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if width != self._wrapped_for:
            self._lines = wrap_plain(self._text, width) if width > 0 else []
            self._wrapped_for = width
        if self._styles is None:
            base = self.rich_style
            self._styles = (
                base + self.get_component_rich_style("verdict-line--pass"),
                base + self.get_component_rich_style("verdict-line--fail"),
            )
        if self._ok is None:
            style = self.rich_style
        else:
            style = self._styles[0] if self._ok else self._styles[1]
        text = self._lines[y] if y < len(self._lines) else ""
        return Strip([Segment(text, style)]).extend_cell_length(width, style)
