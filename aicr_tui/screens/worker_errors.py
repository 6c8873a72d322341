"""One place where a screen's failed workers are reported.

A worker body does its work and lets any failure raise; Textual records it on the worker
(``exit_on_error=False``: never a traceback, never the app's exit) and tells the screen
that started it with ``Worker.StateChanged``. :class:`WorkerScreen` turns that into one
line (``aicr_tui.core.services.errors.error_line``) for ``worker_failed``, which a screen overrides
to show it where the work's result would have gone; by default it is a notification.
Narrow handling (an expected error with its own remedy, a per-item fallback) stays in the
worker.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual import on
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from aicr_tui.core.services.errors import error_line
from aicr_tui.screens.markup import escape_markup

_Result = TypeVar("_Result")


class WorkerScreen(Screen[_Result]):
    """A screen whose workers' failures all reach ``worker_failed``."""

    @on(Worker.StateChanged)
    def _worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker, error = event.worker, event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            self.worker_failed(worker, error_line(error))

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """``worker`` failed with ``message`` (one line): show it."""
        self.notify(f"{worker.description}: {escape_markup(message)}", severity="error")
