"""CTRF JSON report built from the event stream (Common Test Report Format, spec 0.0.1).

Shape as upstream ``aicr validate`` (validate.md §9): one test per check with ``name``,
``status``, ``duration`` (ms), ``suite: [phase]``, ``message`` and ``stdout`` (the check's
evidence lines: last 1000, each <= 512 chars; measured values and thresholds live there).
CTRF's status set is passed/failed/skipped/pending/other: our verdicts map onto it as
passed → passed, failed → failed, not applicable → skipped, not measured → other (CTRF's
blocking status), except a check skipped on the user's request (``--no-cluster``,
``--skip-check``: ``extra.skipReason``), which is ``skipped`` with the reason in its
message, as upstream; the verdict itself goes into each test's ``extra.verdict``. The
readiness pre-flight is not a test (as upstream: it would change the totals CI dashboards
read); its constraints go into ``results.extra.readiness``. Every time in the report comes
from the events, so a replayed recording yields a byte-identical report.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aicr_tui.core.foundation.textsafe import escape_controls
from aicr_tui.core.validation.events import (
    CheckFinished,
    CheckStarted,
    Event,
    LogLine,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.verdicts import CTRF_STATUS, NOT_MEASURED, SKIPPED, skipped_on_request

MAX_STDOUT_LINES = 1000
TOOL_NAME = "aicr-tui"


@dataclass
class _Test:
    name: str
    phase: str
    stdout: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_STDOUT_LINES))
    status: str = ""
    message: str = ""
    duration: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def rfc3339(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CtrfBuilder:
    """An event sink; ``report()`` returns the CTRF document at any point of the run."""

    def __init__(self) -> None:
        self.run_id = ""
        self.started_ms = 0
        self.version = ""
        self.last_t = 0.0
        self.tests: list[_Test] = []
        self._open: dict[tuple[str, str], _Test] = {}
        self.finished: RunFinished | None = None

    def __call__(self, event: Event) -> None:
        self.last_t = max(self.last_t, event.t)
        if isinstance(event, LogLine):
            test = self._open.get((event.phase, event.check))
            if test is not None:
                test.stdout.append(event.line)
        elif isinstance(event, CheckStarted):
            test = _Test(event.check, event.phase)
            self.tests.append(test)
            self._open[(event.phase, event.check)] = test
        elif isinstance(event, CheckFinished):
            test = self._open.pop((event.phase, event.check), None)
            if test is None:
                test = _Test(event.check, event.phase)
                self.tests.append(test)
            test.status = event.status
            test.message = event.message
            test.duration = int(event.duration_ms)
            test.extra = dict(event.extra)
        elif isinstance(event, RunStarted):
            self.run_id = event.run_id
            self.started_ms = int(event.started_ms)
            self.version = event.tool_version
        elif isinstance(event, RunFinished):
            self.finished = event

    def report(self) -> dict[str, Any]:
        done = [t for t in self.tests if t.status and t.phase != "readiness"]
        readiness = [t for t in self.tests if t.status and t.phase == "readiness"]
        counts = {s: 0 for s in ("passed", "failed", "skipped", "pending", "other")}
        tests_out: list[dict[str, Any]] = []
        for t in done:
            status = (
                SKIPPED
                if skipped_on_request(t.status, t.extra)
                else CTRF_STATUS.get(t.status, CTRF_STATUS[NOT_MEASURED])
            )
            counts[status] += 1
            item: dict[str, Any] = {
                "name": t.name,
                "status": status,
                "duration": t.duration,
                "suite": [t.phase],
            }
            if t.message:
                item["message"] = t.message
            if t.stdout:
                item["stdout"] = list(t.stdout)
            item["extra"] = dict(sorted({**t.extra, "verdict": t.status}.items()))
            tests_out.append(item)
        stop = self.started_ms + int(round(self.last_t * 1000))
        extra: dict[str, Any] = {
            "readiness": [
                {"name": t.name, "verdict": t.status, "message": t.message} for t in readiness
            ]
        }
        return {
            "reportFormat": "CTRF",
            "specVersion": "0.0.1",
            "timestamp": rfc3339(self.started_ms),
            "generatedBy": TOOL_NAME,
            "results": {
                "tool": {"name": TOOL_NAME, "version": self.version},
                "summary": {
                    "tests": len(done),
                    "passed": counts["passed"],
                    "failed": counts["failed"],
                    "skipped": counts["skipped"],
                    "pending": counts["pending"],
                    "other": counts["other"],
                    "start": self.started_ms,
                    "stop": stop,
                },
                "tests": tests_out,
                "extra": extra,
                "environment": {
                    "appName": TOOL_NAME,
                    "appVersion": self.version,
                    "testEnvironment": self.run_id,
                },
            },
        }


def render_ctrf(report: dict[str, Any]) -> str:
    """The report as JSON: names and messages exact, their control characters escaped (the
    rule of ``yamlio.dump_json``, without loading the YAML library into a replay)."""
    return escape_controls(json.dumps(report, indent=2, ensure_ascii=False)) + "\n"


def ctrf_from_events(events: list[Event]) -> dict[str, Any]:
    builder = CtrfBuilder()
    for e in events:
        builder(e)
    return builder.report()
