"""Small modal dialogs shared by the bundle preview and the validation dashboard.

``PathPromptModal`` asks for an output path (pre-filled with a default the user can keep or
edit) and returns it, or ``None`` when cancelled. ``ConfirmModal`` is a yes/no question that
returns ``True`` only on an explicit yes. Both are keyboard-first; escape cancels.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.markup import escape_markup

DIALOG_CSS = """
PathPromptModal, ConfirmModal {
    align: center middle;
    background: $background 60%;
}
.dialog {
    width: 72;
    max-width: 95%;
    height: auto;
    border: round $accent;
    background: $surface;
    padding: 0 1;
}
.dialog .dialog-title {
    text-style: bold;
    width: 100%;
}
.dialog .dialog-body {
    width: 100%;
    margin: 0 0 1 0;
}
.dialog #path-target {
    color: $text-muted;
}
.dialog .dialog-error {
    color: $error;
    width: 100%;
    height: auto;
}
.dialog .dialog-buttons {
    height: auto;
    width: 100%;
    align-horizontal: right;
}
.dialog Button {
    margin: 0 0 0 1;
    min-width: 10;
}
"""


def _lands_at(text: str) -> str:
    """Where a typed path lands (relative paths resolved against the working directory)."""
    text = text.strip()
    if not text:
        return ""
    return safe_text(f"→ {Path(text).expanduser().absolute()}")


class PathPromptModal(ModalScreen[Path | None]):
    """Ask for a path; return it, or ``None`` on escape."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, title: str, default: Path, *, help_text: str = "") -> None:
        super().__init__()
        self._title = title
        self._default = default
        self._help = help_text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(escape_markup(self._title), classes="dialog-title")
            if self._help:
                yield Static(
                    safe_text(self._help, multiline=True), classes="dialog-body", markup=False
                )
            # Not pre-selected: one stray key must not replace the whole path.
            yield Input(value=str(self._default), id="path-input", select_on_focus=False)
            # The field scrolls a long path; this line shows where it lands, whole.
            yield Static(
                _lands_at(str(self._default)), id="path-target", classes="dialog-body", markup=False
            )
            yield Static("", id="path-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("OK", id="ok", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#path-input", Input).focus()

    @on(Input.Changed, "#path-input")
    def _path_changed(self, event: Input.Changed) -> None:
        self.query_one("#path-target", Static).update(_lands_at(event.value))

    @on(Input.Submitted, "#path-input")
    @on(Button.Pressed, "#ok")
    def _accept(self) -> None:
        text = self.query_one("#path-input", Input).value.strip()
        if not text:
            self.query_one("#path-error", Static).update("enter a path, or press escape")
            return
        self.dismiss(Path(text).expanduser())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question. ``y`` says yes; ``n`` or escape says no.

    Focus starts on "No", so a stray enter never overwrites anything.
    """

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [
        Binding("y", "yes", "Yes", id="dialog.yes"),
        Binding("n,escape", "no", "No", id="dialog.no"),
    ]

    def __init__(self, title: str, body: str, *, yes_label: str = "Yes") -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._yes_label = yes_label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(escape_markup(self._title), classes="dialog-title")
            yield Static(safe_text(self._body, multiline=True), classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("No", id="no")
                yield Button(self._yes_label, id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_no(self) -> None:
        self.dismiss(False)
