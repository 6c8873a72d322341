"""A Select whose value ← and → change in place: one key per change, no list to open.

Choosing in a Textual Select takes three keys (enter opens the list, an arrow moves, enter
chooses) and the list opening and closing moves the focus twice, each time restyling,
re-laying out the screen and rebuilding the footer. On the recipe screen every change of a
criterion re-qualifies the selection, so ← and → step the focused select to the previous or
next value (wrapping around) and the verdict follows that one key. Enter, space, ↑ and ↓
still open the list for browsing.

The select is a whole one-line form row: its label, its value and the arrow are drawn by
one widget (Textual's Select shows the value with three widgets, and each row had a label
and a container besides). A new value repaints that line alone, without the layout of the
whole screen a Select asks for (the row's height is fixed, so nothing can move), and every
frame the recipe screen paints has fewer widgets to go through.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.strip import Strip
from textual.widgets import Select
from textual.widgets._select import NoSelection, SelectCurrent

from screens.widgets.drawn_line import DrawnLine
from screens.widgets.kept_lines import KeptLines

# One footer entry for both keys: "←→ Value".
_VALUE_KEYS = Binding.Group("Value", compact=True)
LABEL_WIDTH = 13  # " accelerator " : the widest criterion name, a blank either side


class _RowCurrent(SelectCurrent, DrawnLine):
    """The row as one line: `` label  value  ▼`` (▲ while the list is open).

    SelectCurrent comes first: Textual's CSS type names (what ``query_one(SelectCurrent)``
    in Select matches) follow the first base only.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-current--label", "row-current--arrow"}
    DEFAULT_CSS = """
    _RowCurrent {
        height: 1;
        /* the label sits on the form, not on the select's surface */
        & > .row-current--label {
            color: $foreground;
            background: $background;
        }
        & > .row-current--arrow {
            color: $foreground 50%;
        }
    }
    """

    def __init__(self, placeholder: str, label: str) -> None:
        super().__init__(placeholder)
        self.row_label = label

    def compose(self) -> ComposeResult:
        return iter(())  # drawn by draw_line(): no label and arrow widgets

    def update(self, label: RenderableType | NoSelection) -> None:
        self.label = label
        self.has_value = not isinstance(label, NoSelection)
        self.redraw()

    def look_up_styles(self) -> tuple[Style, ...]:
        base = self.rich_style
        return (
            base,
            base + self.get_component_rich_style("row-current--label"),
            base + self.get_component_rich_style("row-current--arrow"),
        )

    def draw_line(self, width: int) -> Strip:
        base, label_style, arrow_style = self.line_styles()
        select = self.parent
        arrow = "▲" if isinstance(select, Select) and select.expanded else "▼"
        shown = self.placeholder if isinstance(self.label, NoSelection) else self.label
        value = Text.from_markup(shown) if isinstance(shown, str) else Text(str(shown))
        value.end = ""
        room = max(width - LABEL_WIDTH - 2, 0)
        value.truncate(room, overflow="ellipsis", pad=True)
        segments = [
            # The blank before the label has no text colour, so the label's own text
            # starts after it (an SVG export would otherwise start the label with it).
            Segment(" ", Style(bgcolor=label_style.bgcolor)),
            Segment(self.row_label.ljust(LABEL_WIDTH - 1), label_style),
            *Segment.apply_style(value.render(self.app.console), base),
            Segment(" ", base),
            Segment(arrow, arrow_style),
        ]
        return Strip(segments).crop_extend(0, width, base)


class CycleSelect(Select[str], KeptLines):
    """A compact, never blank Select of strings drawn as one labelled form row; ← / → step
    its value."""

    # The list opens under the values, not under the label.
    DEFAULT_CSS = f"""
    CycleSelect > SelectOverlay {{
        margin-left: {LABEL_WIDTH};
    }}
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous value", id="select.previous", group=_VALUE_KEYS),
        Binding("right", "step(1)", "Next value", id="select.next", group=_VALUE_KEYS),
    ]

    def __init__(
        self, options: list[tuple[str, str]], *, label: str, id: str | None = None
    ) -> None:
        """``options``: (markup prompt, value) pairs; ``label``: the row's name."""
        super().__init__(options, allow_blank=False, compact=True, id=id)
        self.row_label = label
        # Values that mean the same as another (the default option stands for the value it
        # resolves to): one key press never lands on a value that changes nothing.
        self.same_as: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if type(widget) is SelectCurrent:
                yield _RowCurrent(self.prompt, self.row_label)
            else:
                yield widget

    def watch_expanded(self, expanded: bool) -> None:
        self.query_one(_RowCurrent).redraw()  # the arrow points up while the list is open

    def action_step(self, step: int) -> None:
        """Set the value ``step`` options away from the current one, wrapping around and
        passing over options that mean the same as the current one."""
        values = [str(value) for _, value in self._options if value is not Select.NULL]
        if self.expanded or len(values) < 2:
            return
        index = values.index(self.value) if self.value in values else -1
        current = self.same_as.get(str(self.value), str(self.value))
        for offset in range(1, len(values)):
            candidate = values[(index + step * offset) % len(values)]
            if self.same_as.get(candidate, candidate) != current:
                self.value = candidate
                return
