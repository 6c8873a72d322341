"""A total deadline for a blocking call, whatever the call does inside.

Per-call timeouts of the cloud and Kubernetes SDKs bound each socket read, not a request: a
server that trickles one byte every two seconds never trips a 15 s read timeout, and a
paginated list or a credential plugin can go on for ever. ``run_with_deadline`` runs the
work in a daemon thread and gives up on it when the total time is spent: the caller gets one
TIMEOUT line at the deadline, the ``cancel`` event it passed is set so the work stops at its
next check, and the abandoned thread holds nothing the caller needs (a daemon thread never
keeps the process alive).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from aicr_tui.core.foundation.errors import AicrError, ErrorCode

T = TypeVar("T")

# Pages of a list call followed before the listing is refused: far above any real cluster
# (500 nodes or add-ons a page), low enough that a server answering "next page" for ever
# ends quickly.
MAX_PAGES = 1000


class Deadline:
    """A point in time (monotonic) by which some work must be done."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self._clock = clock
        self.end = clock() + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.end - self._clock())

    def expired(self) -> bool:
        return self._clock() >= self.end

    def per_call(self, limit: float) -> float:
        """A per-call timeout no longer than what is left (never zero: SDKs refuse 0)."""
        return max(0.05, min(limit, self.remaining()))


def timeout_error(what: str, seconds: float) -> AicrError:
    return AicrError(
        ErrorCode.TIMEOUT, f"{what} did not finish within its total deadline of {seconds:g}s"
    )


def run_with_deadline(
    fn: Callable[[], T],
    seconds: float,
    what: str,
    *,
    cancel: threading.Event | None = None,
) -> T:
    """``fn()``'s result, or TIMEOUT after ``seconds`` in total (``cancel`` set then).

    Exceptions from ``fn`` propagate unchanged. A set ``cancel`` stops the wait early too:
    the work's own cancel check then raises in the worker, and that error is returned.
    """
    box: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name=f"deadline: {what}", daemon=True)
    worker.start()
    finished = done.wait(seconds)
    if not finished:
        if cancel is not None:
            cancel.set()
        raise timeout_error(what, seconds)
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    return box["value"]  # type: ignore[return-value]
