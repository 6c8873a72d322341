"""The seam between the screens and the app that hosts them.

Screens never import the application class: they talk to a :class:`WizardHost` (the
wizard's state, its services and the navigation calls) and post messages. Any Textual app
that provides these members can host the screens; tests host them in a bare app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from aicr_tui.screens.state import WizardServices, WizardState
from aicr_tui.screens.widgets.kept_lines import KeptLines
from aicr_tui.screens.worker_errors import WorkerScreen


@dataclass(frozen=True)
class PaletteCommand:
    """One entry of the command palette."""

    title: str
    help: str
    run: Callable[[], object]
    search_text: str = ""


@runtime_checkable
class WizardHost(Protocol):
    """What a screen may ask of the app hosting it."""

    state: WizardState
    services: WizardServices

    def show_capture(self) -> None: ...

    def show_recipe(self) -> None: ...

    def show_bundle(self) -> None: ...

    def show_validation(self, recording: Path | None = None) -> None: ...

    def action_guide(self, entry_id: str = "") -> None: ...

    def palette_commands(self) -> list[PaletteCommand]: ...


# Classes already found to host the screens: an isinstance check against a runtime
# Protocol inspects every member each time (about 0.1 ms), and a keystroke on the recipe
# screen reads ``self.state`` a few dozen times.
_HOST_CLASSES: set[type] = set()


def wizard_host(app: object) -> WizardHost:
    """``app`` as a :class:`WizardHost`; a screen mounted elsewhere is a programming error."""
    kind = type(app)
    if kind in _HOST_CLASSES:
        return app  # type: ignore[return-value]
    if not isinstance(app, WizardHost):
        raise TypeError(f"{kind.__name__} does not host the wizard screens")
    _HOST_CLASSES.add(kind)
    return app


class HostedScreen(WorkerScreen[None], KeptLines):
    """A wizard step: a screen that reads and changes the host's state (its workers'
    failures are reported through ``worker_failed``)."""

    @property
    def wizard(self) -> WizardHost:
        return wizard_host(self.app)

    @property
    def state(self) -> WizardState:
        return self.wizard.state
