"""The verdict vocabulary, the phase rule and the exit code computed from events."""

from __future__ import annotations

import pytest

from aicr_tui.core.validation.events import CheckFinished, Event, RunStarted
from aicr_tui.core.validation.outcome import exit_code_for, unmeasured_report
from aicr_tui.core.validation.verdicts import CTRF_STATUS, VERDICTS, phase_verdict


def counts(**kw: int) -> dict[str, int]:
    out = dict.fromkeys(VERDICTS, 0)
    for k, v in kw.items():
        out[k.replace("_", " ")] = v
    return out


@pytest.mark.parametrize(
    ("given", "verdict"),
    [
        (counts(passed=3), "passed"),
        (counts(passed=3, not_applicable=1), "passed"),
        (counts(passed=3, failed=1, not_measured=1), "failed"),
        (counts(passed=3, not_measured=1), "not measured"),
        (counts(not_applicable=1), "not applicable"),  # NC80adis performance: never "passed"
        (counts(), "not applicable"),  # nothing declared
        (counts(not_measured=2), "not measured"),
    ],
)
def test_a_phase_passes_only_with_a_pass_and_nothing_failed_or_unmeasured(
    given: dict[str, int], verdict: str
) -> None:
    assert phase_verdict(given) == verdict


def test_ctrf_mapping_covers_every_verdict_with_a_ctrf_status() -> None:
    assert set(CTRF_STATUS) == set(VERDICTS)
    assert set(CTRF_STATUS.values()) <= {"passed", "failed", "skipped", "pending", "other"}
    assert CTRF_STATUS["not measured"] == "other"  # blocking in CTRF too


def run(*finished: CheckFinished, mode: str = "cluster", allow: bool = False) -> list[Event]:
    return [RunStarted(0.0, "r", 0, ("deployment",), mode, allow_unmeasured=allow), *finished]


def done(status: str, phase: str = "deployment", check: str = "c", **extra: str) -> CheckFinished:
    return CheckFinished(1.0, phase, check, status, f"why {check}", 0, dict(extra))


def test_exit_code_from_events() -> None:
    assert exit_code_for(run(done("passed"), done("not applicable", check="d"))) == 0
    assert exit_code_for(run(done("passed"), done("failed", check="d"))) == 8
    assert exit_code_for(run(done("passed"), done("not measured", check="d"))) == 8
    assert exit_code_for(run(done("not measured")), allow_unmeasured=True) == 0
    assert exit_code_for(run(done("not measured"), allow=True)) == 0
    assert exit_code_for(run(done("failed"), allow=True)) == 8  # allowing never hides a failure
    assert exit_code_for(run(done("failed", phase="readiness"))) == 2
    assert exit_code_for(run(done("not measured", phase="readiness"))) == 2
    # explicit requests not to measure: a dry run and --skip-check
    assert exit_code_for(run(done("not measured"), mode="no-cluster")) == 0
    assert exit_code_for(run(done("not measured", skipReason="named-in-skip-checks"))) == 0


def test_one_line_per_unmeasured_declared_check() -> None:
    events = run(done("not measured", check="a"), done("not measured", check="b"), done("passed"))
    assert unmeasured_report(events) == [
        "not measured: deployment/a: why a",
        "not measured: deployment/b: why b",
    ]
    assert unmeasured_report(events, allow_unmeasured=True)[0].endswith(
        "(allowed by --allow-unmeasured)"
    )
    withheld = run(done("not measured", check="a", skipReason="named-in-skip-checks"))
    assert unmeasured_report(withheld) == [
        "warning: not measured: deployment/a: why a (withheld by --skip-check)"
    ]
