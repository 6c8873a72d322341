"""A one-line widget that draws its line itself and keeps it until something changes.

The footer and a criteria row are drawn often (every frame whose update region covers
them) and change rarely. ``DrawnLine`` keeps the drawn line and draws it again only when
the widget says its content changed (``redraw``), its styles changed or its width did.
"""

from __future__ import annotations

from textual.strip import Strip
from textual.widget import Widget


class DrawnLine(Widget):
    """Subclasses implement ``draw_line(width)``; ``redraw()`` after a content change."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._drawn_line: Strip | None = None

    def draw_line(self, width: int) -> Strip:
        raise NotImplementedError

    def redraw(self) -> None:
        self._drawn_line = None
        self.refresh()

    def notify_style_update(self) -> None:
        self._drawn_line = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        line = self._drawn_line
        if line is None or line.cell_length != width:
            line = self._drawn_line = self.draw_line(width)
        return line
