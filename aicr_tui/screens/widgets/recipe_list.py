"""The catalog's recipes as a browsable list (the recipe step's ``c``).

One row per recipe the catalog serves (``aicr-tui recipe list``: the same rows, read from
the loaded catalog): its name and criteria. Enter on a row dismisses with the row's
criteria, which the recipe step then selects; escape closes without a change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from aicr_tui.core.foundation.textsafe import safe_text

if TYPE_CHECKING:
    from aicr_tui.core.recipe.leaves import RecipeRow

# The criteria first: at 80 columns they fit whole, and only the overlay's name may scroll.
HEADERS = ("service", "accelerator", "os", "intent", "platform", "recipe")


class RecipeListModal(ModalScreen[dict[str, str] | None]):
    """The catalog's recipes; enter chooses one (its criteria), escape cancels."""

    DEFAULT_CSS = """
    RecipeListModal {
        align: center middle;
        background: $background 60%;
    }
    RecipeListModal .recipe-list-dialog {
        width: 100;
        max-width: 98%;
        height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    RecipeListModal .dialog-title {
        text-style: bold;
    }
    RecipeListModal .dialog-hint {
        color: $text-muted;
    }
    RecipeListModal DataTable {
        height: 1fr;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, rows: list[RecipeRow], current: dict[str, str]) -> None:
        super().__init__()
        self.rows = rows
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="recipe-list-dialog"):
            yield Label(
                f"Recipes the catalog serves ({len(self.rows)}): enter selects one",
                classes="dialog-title",
            )
            yield DataTable(id="recipe-list", cursor_type="row", zebra_stripes=True)
            yield Static(
                "arrows: move   enter: select its criteria   esc: cancel", classes="dialog-hint"
            )

    def on_mount(self) -> None:
        table: DataTable[str] = self.query_one(DataTable)
        table.add_columns(*HEADERS)
        for index, row in enumerate(self.rows):
            cells = (*(row.criteria[h] for h in HEADERS[:-1]), row.name)
            table.add_row(*(safe_text(c) for c in cells), key=str(index))
        table.move_cursor(row=self._current_row())
        table.focus()

    def _current_row(self) -> int:
        """The most specific row that serves the current selection (else the first)."""
        best, best_score = 0, -1
        for index, row in enumerate(self.rows):
            wanted = row.selection()
            if all(self._current.get(k) == v for k, v in wanted.items()):
                if len(wanted) > best_score:
                    best, best_score = index, len(wanted)
        return best

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is None:
            return
        self.dismiss(self.rows[int(key)].selection())

    def action_cancel(self) -> None:
        self.dismiss(None)
