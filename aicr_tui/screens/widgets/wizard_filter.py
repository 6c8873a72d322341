"""A ``/`` filter line (k9s style): hidden until asked for, escape clears and hides it."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class FilterBar(Input):
    """Posts :class:`FilterBar.FilterChanged` with the text on every keystroke."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Clear filter", id="filter.close"),
    ]

    class FilterChanged(Message):
        def __init__(self, bar: FilterBar, text: str) -> None:
            super().__init__()
            self.bar = bar
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="/ filter (esc clears)", id=id, classes="filter-bar")
        self.display = False

    def open(self) -> None:
        self.display = True
        self.focus()

    def action_close(self) -> None:
        self.value = ""
        self.display = False
        self.post_message(self.FilterChanged(self, ""))
        self.screen.focus_next()

    def _on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.FilterChanged(self, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()


def matches(text: str, query: str) -> bool:
    """Every word of ``query`` occurs in ``text`` (case-insensitive)."""
    low = text.lower()
    return all(w in low for w in query.lower().split())
