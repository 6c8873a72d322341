"""A run's outcome from its events alone: the exit code and the unmeasured-check report.

Replay and a live run compute these the same way, from the event stream (never from a
file's own claim); the vocabulary they read is :mod:`aicr_tui.core.validation.verdicts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from aicr_tui.core.foundation.errors import EXIT_CHECKS_FAILED, EXIT_INVALID, EXIT_OK
from aicr_tui.core.validation.events import CheckFinished, RunStarted
from aicr_tui.core.validation.verdicts import (
    FAILED,
    NO_CLUSTER_MODE,
    NOT_MEASURED,
    SKIP_REASON_WITHHELD,
)


@dataclass(frozen=True)
class Unmeasured:
    """A declared check that ended not measured, and why."""

    phase: str
    check: str
    reason: str
    waived: str = ""  # "no-cluster" | "skip-check" | "" (counts toward exit 8)

    def line(self) -> str:
        why = self.reason or "no reason given"
        return f"not measured: {self.phase}/{self.check}: {why}"


def _events_of(events: Iterable[object]) -> list[object]:
    return list(events)


def unmeasured_checks(events: Iterable[object]) -> list[Unmeasured]:
    """Every cluster-phase check that finished not measured, in run order."""
    no_cluster = False
    out: list[Unmeasured] = []
    for e in events:
        if isinstance(e, RunStarted):
            no_cluster = e.mode == NO_CLUSTER_MODE
        elif isinstance(e, CheckFinished) and e.phase != "readiness" and e.status == NOT_MEASURED:
            waived = ""
            if no_cluster:
                waived = "no-cluster"
            elif e.extra.get("skipReason") == SKIP_REASON_WITHHELD:
                waived = "skip-check"
            out.append(Unmeasured(e.phase, e.check, e.message, waived))
    return out


def exit_code_for(events: Iterable[object], *, allow_unmeasured: bool | None = None) -> int:
    """The run's exit code from its events alone.

    2: a readiness constraint failed or could not be evaluated (the pre-flight refuses);
    8: a check failed, or a declared check was not measured and neither ``--allow-unmeasured``
    (``RunStarted.allow_unmeasured``, or the argument) nor an explicit waiver covers it;
    0 otherwise. ``allow_unmeasured`` overrides what the run recorded.
    """
    seq = _events_of(events)
    allowed = False
    for e in seq:
        if isinstance(e, RunStarted):
            allowed = bool(e.allow_unmeasured)
    if allow_unmeasured is not None:
        allowed = allow_unmeasured
    failed = False
    for e in seq:
        if not isinstance(e, CheckFinished):
            continue
        if e.phase == "readiness":
            if e.status in (FAILED, NOT_MEASURED):
                return EXIT_INVALID
            continue
        if e.status == FAILED:
            failed = True
    if failed:
        return EXIT_CHECKS_FAILED
    if not allowed and any(not u.waived for u in unmeasured_checks(seq)):
        return EXIT_CHECKS_FAILED
    return EXIT_OK


def unmeasured_report(
    events: Iterable[object], *, allow_unmeasured: bool | None = None
) -> list[str]:
    """One line per unmeasured declared check (and why), as the CLI prints them at the end.

    Lines that keep the run at exit 8 start with ``not measured:``; with
    ``--allow-unmeasured`` or an explicit waiver they read as warnings instead.
    """
    seq = _events_of(events)
    allowed = any(isinstance(e, RunStarted) and e.allow_unmeasured for e in seq)
    if allow_unmeasured is not None:
        allowed = allow_unmeasured
    lines: list[str] = []
    for u in unmeasured_checks(seq):
        if u.waived == "no-cluster":
            continue  # one summary line covers a dry run, not one per catalog check
        if u.waived == "skip-check":
            lines.append(f"warning: {u.line()} (withheld by --skip-check)")
        elif allowed:
            lines.append(f"warning: {u.line()} (allowed by --allow-unmeasured)")
        else:
            lines.append(u.line())
    return lines


__all__ = ["Unmeasured", "exit_code_for", "unmeasured_checks", "unmeasured_report"]
