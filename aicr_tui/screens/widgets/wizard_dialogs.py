"""Modal dialogs for the capture and recipe screens: open a file, browse, fetch live, show text.

Each is a typed ``ModalScreen`` that dismisses with its result (``None`` when cancelled
with escape), so the caller can ``push_screen(dialog, callback)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label, Static

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.markup import escape_markup

# Directories no capture lives in: version control, virtual environments, tool caches.
HIDDEN_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
    }
)


class SafeDirectoryTree(DirectoryTree):
    """A directory tree whose file names reach the terminal without escape sequences, and
    that leaves out version control, virtual environments and caches."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if p.name not in HIDDEN_DIRS]

    def process_label(self, label: str | Text) -> Text:
        return super().process_label(safe_text(label) if isinstance(label, str) else label)


class OpenCaptureModal(ModalScreen[str | None]):
    """Ask for a path; returns it. What the file is comes from its content, not from here."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, path: str = "") -> None:
        super().__init__()
        self._path = path

    def compose(self) -> ComposeResult:
        with Vertical(classes="wizard-dialog"):
            yield Label("Open a capture file", classes="dialog-title")
            yield Static(
                "A snapshot replaces the capture; an az aks nodepool list, oci ce cluster "
                "list-addons or kubectl get daemonsets dump is recognised from its content.",
                classes="dialog-help",
                markup=False,
            )
            yield Input(self._path, placeholder="path to the file, then enter", id="open-path")
            yield Static("enter: load   esc: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#open-path", Input).focus()

    @on(Input.Submitted, "#open-path")
    def _submit(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        if not path:
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)


class BrowseCaptureModal(ModalScreen[str | None]):
    """A directory tree; enter on a file returns its path, backspace goes up a folder."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("backspace", "up", "Parent folder", id="dialog.up"),
    ]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self._root = root

    def compose(self) -> ComposeResult:
        with Vertical(classes="wizard-dialog tall"):
            yield Label(self._title(), id="browse-title", classes="dialog-title")
            yield SafeDirectoryTree(self._root, id="browse-tree")
            yield Static(
                "arrows: move   enter: pick   backspace: parent folder   esc: cancel",
                classes="dialog-hint",
            )

    def _title(self) -> str:
        return f"Pick a capture file under {escape_markup(self._root)}"

    def action_up(self) -> None:
        """Show the parent folder (the tree starts where the samples or the cwd are)."""
        parent = self._root.resolve().parent
        if parent == self._root.resolve():
            return
        self._root = parent
        self.query_one(DirectoryTree).path = parent
        self.query_one("#browse-title", Label).update(self._title())

    def on_mount(self) -> None:
        self.query_one(DirectoryTree).focus()

    @on(DirectoryTree.FileSelected)
    def _picked(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(str(event.path))

    def action_cancel(self) -> None:
        self.dismiss(None)


class LiveCaptureModal(ModalScreen[dict[str, str] | None]):
    """The fetch-live form: which cluster to ask, on which cloud."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    FIELDS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("kubeconfig", "kubeconfig path (blank: default)"),
        ("context", "kube context (blank: current)"),
        ("aks_subscription", "AKS subscription id"),
        ("aks_resource_group", "AKS resource group"),
        ("aks_cluster", "AKS cluster name"),
        ("oke_cluster_id", "OKE cluster OCID"),
    )

    def compose(self) -> ComposeResult:
        with Vertical(classes="wizard-dialog tall"):
            yield Label("Fetch a live capture", classes="dialog-title")
            with VerticalScroll():
                for key, placeholder in self.FIELDS:
                    yield Input(placeholder=placeholder, id=f"live-{key.replace('_', '-')}")
            yield Static("tab: next field   enter: fetch   esc: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    @on(Input.Submitted)
    def _submit(self) -> None:
        values = {
            key: self.query_one(f"#live-{key.replace('_', '-')}", Input).value.strip()
            for key, _ in self.FIELDS
        }
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextModal(ModalScreen[None]):
    """Show lines of text (commands to copy); ``c`` copies them to the clipboard."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="dialog.close"),
        Binding("c", "copy", "Copy", id="dialog.copy"),
    ]

    def __init__(self, title: str, lines: Iterable[str]) -> None:
        super().__init__()
        self._title = title
        self.lines = list(lines)

    def compose(self) -> ComposeResult:
        with Vertical(classes="wizard-dialog"):
            yield Label(escape_markup(self._title), classes="dialog-title")
            with VerticalScroll(classes="dialog-text"):
                yield Static(self.text(), markup=False, id="text-body")
            yield Static("c: copy   esc: close", classes="dialog-hint")

    def text(self) -> str:
        """The lines as shown and copied: no escape sequence reaches a terminal on paste."""
        return safe_text("\n".join(self.lines), multiline=True)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text())
        self.notify("Copied to the clipboard (OSC 52).")

    def action_close(self) -> None:
        self.dismiss(None)
