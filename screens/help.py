"""``?``: every key binding active on the screen underneath, with what it does."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Label, Static


class HelpScreen(ModalScreen[None]):
    """A table of key, action and where the binding comes from."""

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
        """Collect the bindings of ``screen`` (focused widget, screen, app), one row per key."""
        rows: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        app = screen.app
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.description or key in seen:
                continue
            seen.add(key)
            display = binding.key_display or app.get_key_display(binding)
            owner = type(active.node).__name__
            rows.append((display, binding.description, owner))
        order = {"App": 2}
        rows.sort(key=lambda r: (order.get(r[2], 0 if r[2] == type(screen).__name__ else 1), r[0]))
        return cls(screen.title or type(screen).__name__, rows)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label(f"Keys on {self._title}", id="help-title")
            yield DataTable(id="help-table", cursor_type="row", show_cursor=False)
            yield Static("esc or ?: close   : or ctrl+p: every action", id="help-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "action", "from")
        for row in self.rows:
            table.add_row(*row)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
