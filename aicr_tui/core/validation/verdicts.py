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

from collections.abc import Mapping
from enum import StrEnum


class Verdict(StrEnum):
    """How a check, a gate or a phase ended. A member is its word (``"passed"`` ==
    ``Verdict.PASSED``), so events read back from a recording compare equal to it."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_APPLICABLE = "not applicable"
    NOT_MEASURED = "not measured"


PASSED = Verdict.PASSED
FAILED = Verdict.FAILED
NOT_APPLICABLE = Verdict.NOT_APPLICABLE
NOT_MEASURED = Verdict.NOT_MEASURED

# The closed set a check, a gate or a phase can end with; anything else is refused.
VERDICTS: tuple[str, ...] = tuple(Verdict)
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
SKIP_REASON_NO_CLUSTER = "no-cluster-mode"
NO_CLUSTER_MODE = "no-cluster"

# A check not measured on the user's explicit request (a --no-cluster dry run, a name in
# --skip-check) is reported "skipped", as upstream reports it, with the reason in its
# message; a check that tried and could not measure stays "not measured" (CTRF "other").
# The verdict itself stays "not measured": nothing was measured either way.
SKIPPED = "skipped"
REQUESTED_SKIPS: tuple[str, ...] = (SKIP_REASON_NO_CLUSTER, SKIP_REASON_WITHHELD)


def skipped_on_request(verdict: str, extra: Mapping[str, object] | None) -> bool:
    """True for a check the run skipped because the user asked it to."""
    return verdict == NOT_MEASURED and (extra or {}).get("skipReason") in REQUESTED_SKIPS


def reported_status(verdict: str, extra: Mapping[str, object] | None) -> str:
    """The word a report shows for a check: ``skipped`` when skipped on request, else
    its verdict."""
    return SKIPPED if skipped_on_request(verdict, extra) else verdict


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


__all__ = [
    "COUNT_FIELDS",
    "CTRF_STATUS",
    "FAILED",
    "GATE_VERDICTS",
    "INFO",
    "NOT_APPLICABLE",
    "NOT_MEASURED",
    "PASSED",
    "REQUESTED_SKIPS",
    "SKIPPED",
    "SKIP_REASON_NO_CLUSTER",
    "VERDICTS",
    "Verdict",
    "empty_counts",
    "is_verdict",
    "phase_verdict",
    "reported_status",
    "skipped_on_request",
]
