"""Updating a Static without laying the screen out when nothing can move."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def set_text(static: Static, text: str | Text) -> None:
    """Show ``text`` in ``static``, laying the screen out again only when it needs to.

    A Static's ``update`` asks for a layout of the whole screen (every widget placed
    again, a few milliseconds at 80x24, and a repaint of whatever moved). When the widget's
    width does not follow its text and the new text wraps to as many lines as the old one,
    nothing can move: the widget alone is repainted.
    """
    width = static.content_size.width
    fixed_width = static.styles.width is None or not static.styles.width.is_auto
    if not width or not fixed_width or not static.is_mounted:
        static.update(text)
        return
    size = static.content_size
    lines = static.get_content_height(size, size, width)
    static.update(text, layout=False)
    if static.get_content_height(size, size, width) != lines:
        static.refresh(layout=True)
