"""Widgets that hand the compositor their last lines back while nothing in them changed.

Textual paints one box per frame, the union of everything that changed, and asks every
widget overlapping that box for its lines. On the recipe screen a verdict changes the
verdict line (top right), the gpuStack row (left) and the troubleshooting text (bottom),
so that box is the whole screen, and each of the twenty-odd widgets in it looks its
styles up again (its background walks every ancestor) only to return lines it had
cached. That was about a sixth of a keystroke's cost.

``KeptLines`` keeps the lines it returned and returns them again for the same crop and
size, until the widget is marked dirty. Textual marks a widget dirty through one private
method (a refresh, a resize, a style reset, a scroll that repaints), the same place it
drops its own cached lines; ``textual_adapter.DirtyHook`` hooks it, so the kept lines are
exactly as fresh as Textual's. The line filters are part of the key (a theme's filters
apply to every line). ``tests/pilot/test_pilot_kept_lines.py`` checks the result.

Mix it in after the widget class (``class Row(Horizontal, KeptLines)``): Textual's CSS
type names follow the first base.
"""

from __future__ import annotations

from textual.containers import Horizontal, Vertical
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widgets import Header, Static

from aicr_tui.screens.widgets.textual_adapter import DirtyHook


class KeptLines(DirtyHook):
    """A widget whose lines, once rendered, are reused until it is marked dirty."""

    _kept: tuple[Region, Size, tuple[object, ...], list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        size = self.size
        filters = tuple(self.app.get_line_filters())
        kept = self._kept
        if kept is not None and kept[0] == crop and kept[1] == size and kept[2] == filters:
            return kept[3]
        lines = super().render_lines(crop)
        self._kept = (crop, size, filters, lines)
        return lines

    def marked_dirty(self) -> None:
        self._kept = None


class KeptVertical(Vertical, KeptLines):
    """A Vertical that keeps its lines (see the module docstring)."""


class KeptHorizontal(Horizontal, KeptLines):
    """A Horizontal that keeps its lines."""


class KeptStatic(Static, KeptLines):
    """A Static that keeps its lines."""


class KeptHeader(Header, KeptLines):
    """A Header that keeps its lines."""
