"""``?``: every key binding active on the screen underneath, with what it does."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Label, Static

WIDGET_NAMES = {
    "DataTable": "in a table",
    "OptionList": "in the list",
    "Input": "in a text field",
    "TextArea": "in the editor",
    "Select": "in a select",
    "RowSelect": "in a select",
    "SelectOverlay": "in an open select",
    "ValueList": "in an open select",
    "DirectoryTree": "in the file tree",
    "Tree": "in the tree",
    "RichLog": "in the log",
    "TabbedContent": "on the tabs",
    "Tabs": "on the tabs",
    "VerticalScroll": "in a scrolled pane",
}


def where(node: Any, screen: Screen[Any]) -> str:
    """Where a binding works, in words: this step, everywhere, or in which widget."""
    from textual.app import App

    if node is screen:
        return "this step"
    if isinstance(node, App):
        return "everywhere"
    for kind in type(node).__mro__:
        if kind.__name__ in WIDGET_NAMES:
            return WIDGET_NAMES[kind.__name__]
    return "in the focused pane"


class HelpScreen(ModalScreen[None]):
    """A table of key, what it does, and where it works."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("question_mark", "close", "Close", id="help.close2", show=False),
    ]

    def __init__(self, title: str, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self._title = title
        self.rows = rows

    @classmethod
    def for_screen(cls, screen: Screen[Any]) -> HelpScreen:
        """Collect the bindings of ``screen`` (focused widget, screen, app), one row per key:
        the key, what it does, and where it works (never a class name)."""
        rows: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        app = screen.app
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.description or key in seen:
                continue
            seen.add(key)
            display = binding.key_display or app.get_key_display(binding)
            rows.append((display, binding.description, where(active.node, screen)))
        # Keys the screen offers only in some states (check_action) are listed too.
        for entry in getattr(screen, "BINDINGS", ()):
            if not isinstance(entry, Binding) or not entry.description or entry.key in seen:
                continue
            seen.add(entry.key)
            display = entry.key_display or app.get_key_display(entry)
            rows.append((display, entry.description, "this step, when offered"))
        order = {"everywhere": 2}
        rows.sort(key=lambda r: (order.get(r[2], 0 if r[2].startswith("this step") else 1), r[0]))
        return cls(screen.title or "this step", rows)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label(f"Keys on {self._title}", id="help-title")
            yield DataTable(id="help-table", cursor_type="row", show_cursor=False)
            yield Static("esc or ?: close   : or ctrl+p: every action", id="help-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "what it does", "where")
        for row in self.rows:
            table.add_row(*row)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
