"""Progress and cancellation shared by every live collector (the wizard runs them in a worker)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from aicr_tui.core.foundation.errors import AicrError, ErrorCode


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


def page_cap(number: int, limit: int, what: str) -> None:
    """Refuse page ``number`` once it is past ``limit`` (each reader's ``MAX_PAGES``): ``what``
    (the API and the list) kept answering with a next page."""
    if number > limit:
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"{what} after {limit} pages; refusing to follow it further",
        )


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
