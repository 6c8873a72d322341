"""A Select whose value ← and → change in place: one key per change, no list to open.

Choosing in a Textual Select takes three keys (enter opens the list, an arrow moves, enter
chooses) and the list opening and closing moves the focus twice, each time restyling,
re-laying out the screen and rebuilding the footer. On the recipe screen every change of a
criterion re-qualifies the selection, so ← and → step the focused select to the previous or
next value (wrapping around) and the verdict follows that one key. Enter, space, ↑ and ↓
still open the list for browsing.

The select is made for a one-line form row: its label is repainted in place when the value
changes, without the layout of the whole screen a Select asks for (the row's height, not
the label's, decides what is shown, so nothing can move).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Select, Static
from textual.widgets._select import NoSelection, SelectCurrent

# One footer entry for both keys: "←→ Value".
_VALUE_KEYS = Binding.Group("Value", compact=True)


class _RowCurrent(SelectCurrent):
    """The select's current value, in a row whose height is fixed: a new label repaints
    the label alone."""

    def update(self, label: RenderableType | NoSelection) -> None:
        self.label = label
        self.has_value = not isinstance(label, NoSelection)
        shown = self.placeholder if isinstance(label, NoSelection) else label
        self.query_one("#label", Static).update(shown, layout=False)


class CycleSelect(Select[str]):
    """A compact, never blank Select of strings in a one-line row; ← / → step its value."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous value", id="select.previous", group=_VALUE_KEYS),
        Binding("right", "step(1)", "Next value", id="select.next", group=_VALUE_KEYS),
    ]

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            yield _RowCurrent(self.prompt) if type(widget) is SelectCurrent else widget

    def action_step(self, step: int) -> None:
        """Set the value ``step`` options away from the current one, wrapping around."""
        values = [value for _, value in self._options if value is not Select.NULL]
        if self.expanded or len(values) < 2:
            return
        index = values.index(self.value) if self.value in values else -1
        self.value = values[(index + step) % len(values)]
