"""The few places the screens reach into Textual's private parts, all of them here.

Every other module uses Textual's public API. What is here has no public counterpart in
the Textual version named below and exists for speed measured on the recipe screen and
the validation dashboard (the modules using it say what it saves):

- ``DirtyHook``: a hook on ``Widget._set_dirty``, the one method through which Textual
  marks a widget for repainting and drops its own cached lines (a refresh, a resize, a
  style reset, a scroll that repaints). ``KeptLines`` drops its kept lines there.
- ``vertical_scrollbar``: a widget's own vertical scrollbar, created and started as
  ``Widget.vertical_scrollbar`` does (``_vertical_scrollbar``, ``App._start_widget``),
  for a scrollbar class that keeps its lines.
- ``has_pending_writes`` / ``drop_pending_layout``: a RichLog's writes waiting for its
  size (``_deferred_renders``) and a widget's pending layout request
  (``_layout_required``), for a log whose tail is replaced without moving anything.
- ``count_pending_layout``: bump the layout counter that keys a widget's cached box model
  (``_layout_updates``) for a layout asked while one is already pending.

``tests/unit/test_textual_adapter.py`` fails when the installed Textual is not
``WRITTEN_FOR`` or any of these names is gone: read the new version's code for each of
them, adjust, then move ``WRITTEN_FOR``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import RichLog

WRITTEN_FOR = "8.2.8"
"""The Textual version whose code these hooks were read against."""

_Bar = TypeVar("_Bar", bound=ScrollBar)


class DirtyHook(Widget):
    """A widget told (``marked_dirty``) each time Textual marks it dirty."""

    def marked_dirty(self) -> None:
        """Textual is about to mark this widget dirty; drop what depends on its lines."""

    def _set_dirty(self, *regions: Region) -> None:
        self.marked_dirty()
        super()._set_dirty(*regions)


def vertical_scrollbar(widget: Widget, make: Callable[[], _Bar]) -> ScrollBar:
    """``widget``'s vertical scrollbar, made by ``make`` the first time it is asked for
    (hidden and started as Textual starts its own)."""
    bar = widget._vertical_scrollbar
    if bar is None:
        bar = widget._vertical_scrollbar = make()
        bar.display = False
        widget.app._start_widget(widget, bar)
    return bar


def has_pending_writes(log: RichLog) -> bool:
    """Whether ``log`` holds writes it will render once it knows its size."""
    return bool(log._deferred_renders)


def drop_pending_layout(widget: Widget) -> None:
    """Withdraw ``widget``'s pending request to lay the screen out (its repaint stays)."""
    widget._layout_required = False


def count_pending_layout(widget: Widget) -> None:
    """When a layout is already pending, count this one too, so a box model cached
    between the two is not reused (``refresh(layout=True)`` counts only the first)."""
    if widget._layout_required:
        widget._layout_updates += 1
