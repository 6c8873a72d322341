"""Live collectors: Azure agent pools, OCI cluster add-ons and the Kubernetes API.

Each collector reads through the official SDK of its service and hands the result to the
same projection the offline path uses, so a live capture and a capture from a saved dump
give identical readings. The SDKs are imported inside the functions that call them, so
importing this package costs nothing until a live capture is requested.

Every capture function takes a ``cancel`` token (a ``threading.Event``; set it to stop
between calls) and a ``progress`` callback that receives :class:`CaptureProgress` values,
so the wizard can run a capture in a worker thread, show where it is, and cancel it.
Each network call carries its own timeout; a failure is an ``AicrError`` that names the
credential or permission that was missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import AicrError, ErrorCode


@dataclass(frozen=True)
class CaptureProgress:
    """One step of a live capture: which source, what just happened, how far along."""

    source: str
    message: str
    done: int = 0
    total: int | None = None


ProgressCallback = Callable[[CaptureProgress], None]


def check_cancel(cancel: threading.Event | None, what: str) -> None:
    """Raise the upstream cancellation error (TIMEOUT) when ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise AicrError(ErrorCode.TIMEOUT, f"{what} canceled")


def report(
    progress: ProgressCallback | None,
    source: str,
    message: str,
    *,
    done: int = 0,
    total: int | None = None,
) -> None:
    if progress is not None:
        progress(CaptureProgress(source=source, message=message, done=done, total=total))


def positive_timeout(value: float, what: str) -> float:
    if not value > 0:
        raise AicrError(
            ErrorCode.INVALID_REQUEST, f"{what} timeout must be a positive number of seconds"
        )
    return float(value)


__all__ = ["CaptureProgress", "ProgressCallback", "check_cancel", "positive_timeout", "report"]
