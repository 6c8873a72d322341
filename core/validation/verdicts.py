"""The one verdict vocabulary of a validation run, the phase rule and the run's exit code.

Every surface (CLI table and summary, dashboard and phase bar, CTRF, JUnit, recordings)
uses these four words for a check, a gate and a phase:

- ``passed``: measured, and within its gate;
- ``failed``: measured (or decided) and outside its gate;
- ``not applicable``: a documented rule says the gate does not apply here (the small
  NCads H100 sizes' full-node floors, a phase that declares no check);
- ``not measured``: the check could not measure: a prerequisite is missing, it is not
  implemented, it timed out before a result, the run was a ``--no-cluster`` dry run, or
  the user withheld it with ``--skip-check``.

A phase is ``passed`` only when at least one of its checks passed and none failed or went
unmeasured. The run's exit code is computed from the events (never copied from a file):
2 when the readiness pre-flight refused, 8 when a check failed or a declared gate was not
measured (unless the run allowed it), else 0. ``--no-cluster`` runs and checks named in
``--skip-check`` are not measured on the user's explicit request and never make it 8.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.foundation.errors import EXIT_CHECKS_FAILED, EXIT_INVALID, EXIT_OK

PASSED = "passed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"
NOT_MEASURED = "not measured"

# The closed set a check, a gate or a phase can end with; anything else is refused.
VERDICTS: tuple[str, ...] = (PASSED, FAILED, NOT_APPLICABLE, NOT_MEASURED)
# A gate may also carry a value shown for information only (no verdict of its own).
INFO = "info"
GATE_VERDICTS: tuple[str, ...] = (*VERDICTS, INFO)

# Event field names of the per-verdict counts (PhaseFinished, RunFinished).
COUNT_FIELDS: dict[str, str] = {
    PASSED: "passed",
    FAILED: "failed",
    NOT_APPLICABLE: "not_applicable",
    NOT_MEASURED: "not_measured",
}

# CTRF's status set is passed/failed/skipped/pending/other. Not applicable is a deliberate
# skip by rule; not measured is reported as "other" (CTRF's blocking "could not run"
# status), so a CI dashboard reading the summary never counts it as a pass. Our own word
# goes into the test's ``extra.verdict``.
CTRF_STATUS: dict[str, str] = {
    PASSED: "passed",
    FAILED: "failed",
    NOT_APPLICABLE: "skipped",
    NOT_MEASURED: "other",
}

# Why a check was not measured although the user asked for that (no exit 8 for these).
SKIP_REASON_WITHHELD = "named-in-skip-checks"
NO_CLUSTER_MODE = "no-cluster"


def is_verdict(value: object) -> bool:
    return isinstance(value, str) and value in VERDICTS


def empty_counts() -> dict[str, int]:
    return {v: 0 for v in VERDICTS}


def phase_verdict(counts: Mapping[str, int]) -> str:
    """Failed if any failed; else not measured if any went unmeasured; else passed if any
    passed; else (every check not applicable, or none declared) not applicable."""
    if counts.get(FAILED, 0):
        return FAILED
    if counts.get(NOT_MEASURED, 0):
        return NOT_MEASURED
    if counts.get(PASSED, 0):
        return PASSED
    return NOT_APPLICABLE


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
    from core.validation.events import CheckFinished, RunStarted

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
    from core.validation.events import CheckFinished, RunStarted

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
    from core.validation.events import RunStarted

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


__all__ = [
    "COUNT_FIELDS",
    "CTRF_STATUS",
    "FAILED",
    "GATE_VERDICTS",
    "INFO",
    "NOT_APPLICABLE",
    "NOT_MEASURED",
    "PASSED",
    "VERDICTS",
    "Unmeasured",
    "empty_counts",
    "exit_code_for",
    "is_verdict",
    "phase_verdict",
    "unmeasured_checks",
    "unmeasured_report",
]
