"""A one-line widget that draws its line itself and keeps it until something changes.

The footer and a criteria row are drawn often (every frame whose update region covers
them) and change rarely. ``DrawnLine`` keeps the drawn line and draws it again only when
the widget says its content changed (``redraw``), its styles changed or its width did.
The styles it draws with are looked up once per change of styles too: each lookup walks
the widget's ancestors.
"""

from __future__ import annotations

from rich.style import Style
from textual.strip import Strip

from aicr_tui.screens.widgets.kept_lines import KeptLines


class DrawnLine(KeptLines):
    """Subclasses implement ``draw_line(width)`` (and ``look_up_styles()`` for the styles
    ``line_styles()`` returns); ``redraw()`` after a content change."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._drawn_line: Strip | None = None
        self._line_styles: tuple[Style, ...] | None = None

    def draw_line(self, width: int) -> Strip:
        """The line at ``width`` cells; subclasses draw their content (here: blank)."""
        return Strip.blank(width, self.line_styles()[0])

    def look_up_styles(self) -> tuple[Style, ...]:
        return (self.rich_style,)

    def line_styles(self) -> tuple[Style, ...]:
        styles = self._line_styles
        if styles is None:
            styles = self._line_styles = self.look_up_styles()
        return styles

    def redraw(self) -> None:
        self._drawn_line = None
        self.refresh()

    def notify_style_update(self) -> None:
        self._drawn_line = None
        self._line_styles = None
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        line = self._drawn_line
        if line is None or line.cell_length != width:
            line = self._drawn_line = self.draw_line(width)
        return line
