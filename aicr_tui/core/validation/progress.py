"""The progress of a validation run: events in, rows, phases, gates and capped logs out.

The one progress model both faces read: ``aicr-tui validate``'s live table and the wizard's
dashboard feed it the same event stream (:mod:`aicr_tui.core.validation.stream`) and only draw it.
Applying an event costs O(1) (a dict lookup per row and phase). A face asks what changed
(``take_changes``) so it touches only the rows, phases and log lines that moved. Memory
stays bounded however long the run: each check keeps at most ``LOG_LINES_PER_CHECK`` log
lines (the same cap the CTRF report applies to ``stdout``) and lines are cut to
``LOG_LINE_CHARS`` characters.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.validation.events import (
    PHASES,
    CheckFinished,
    CheckStarted,
    Event,
    LogLine,
    Measurement,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.verdicts import FAILED, NOT_APPLICABLE, NOT_MEASURED, PASSED, VERDICTS

LOG_LINES_PER_CHECK = 1000
LOG_LINE_CHARS = 512

# Canonical phase order (validate.md §3.3); readiness is the pre-flight and shows first.
PHASE_ORDER: tuple[str, ...] = PHASES

TERMINAL_STATUSES = frozenset(VERDICTS)
BLOCKING_STATUSES = frozenset({FAILED, NOT_MEASURED})


def row_key(phase: str, check: str) -> str:
    return f"{phase}/{check}"


@dataclass
class Gate:
    """One measured value against its threshold (a Measurement event)."""

    name: str
    value: str
    unit: str
    threshold: str
    verdict: str  # passed | failed | not applicable | not measured | info
    note: str = ""

    @property
    def measured(self) -> str:
        if self.value in ("—", "n/a"):
            return self.value
        return f"{self.value} {self.unit}".strip()


@dataclass
class CheckRow:
    phase: str
    name: str
    status: str = "queued"
    message: str = ""
    duration_ms: int | None = None
    timeout_s: float = 0.0
    gates: list[Gate] = field(default_factory=list)
    logs: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES_PER_CHECK))
    log_seq: int = 0  # lines ever appended; lets a viewer know how many it has not shown
    latest: str = ""  # the newest log line, gate or non-passing message (one-line views)

    @property
    def key(self) -> str:
        return row_key(self.phase, self.name)

    def headline_gate(self) -> Gate | None:
        """The gate to show in the table: the first failing one, else the first."""
        for gate in self.gates:
            if gate.verdict == FAILED:
                return gate
        return self.gates[0] if self.gates else None

    @property
    def measured(self) -> str:
        gate = self.headline_gate()
        if gate is None:
            return ""
        # The headline gate's figure alone: a "+1" after it (the other gates) read as part
        # of the figure, and in words it no longer fits the column. The gates panel lists
        # every gate of the check.
        return gate.measured

    @property
    def threshold(self) -> str:
        gate = self.headline_gate()
        return gate.threshold if gate else ""

    @property
    def duration(self) -> str:
        return format_duration(self.duration_ms)


@dataclass
class PhaseProgress:
    name: str
    status: str = "queued"
    total: int = 0
    seen: int = 0
    done: int = 0
    duration_ms: int | None = None

    def bar(self, width: int) -> str:
        if self.total <= 0:
            filled = width if self.status in TERMINAL_STATUSES else 0
        else:
            filled = min(width, round(width * self.done / self.total))
        return "█" * filled + "░" * (width - filled)


@dataclass
class RunSummary:
    tests: int = 0
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    not_measured: int = 0
    exit_code: int | None = None
    message: str = ""

    def line(self) -> str:
        text = (
            f"{self.tests} checks: {self.passed} passed, {self.failed} failed, "
            f"{self.not_applicable} not applicable, {self.not_measured} not measured"
        )
        if self.exit_code is not None:
            text += f" — exit {self.exit_code}"
        if self.message:
            text += f" — {self.message}"
        return text


@dataclass
class Changes:
    """What moved since the last ``take_changes``; the screen repaints only this."""

    new_rows: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    rows: set[str] = field(default_factory=set)
    phases: set[str] = field(default_factory=set)
    run: bool = False
    gates: bool = False

    def __bool__(self) -> bool:
        return bool(self.new_rows or self.rows or self.phases or self.run or self.gates)


def format_duration(ms: int | float | None) -> str:
    if ms is None:
        return ""
    seconds = float(ms) / 1000.0
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_value(value: float | None) -> str:
    if value is None:
        return "—"
    if float(value).is_integer() and abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"


def display_safe(event: Event) -> Event:
    """``event`` with every text field terminal-safe (``safe_text``), for display only.

    A recording is a file anyone may have edited: its check names, log lines, messages and
    displays may hold escape sequences or control characters. The model only ever sees the
    safe text; reports are built from the original events elsewhere. Events whose text is
    already printable (nearly all) are returned as they are, without a copy.
    """
    changes: dict[str, Any] = {}
    for name in event.__dataclass_fields__:
        value = getattr(event, name)
        if isinstance(value, str):
            if isinstance(event, LogLine) and name == "line" and "\t" in value:
                # A tab-separated table keeps its columns: tabs are expanded once the
                # escape sequences are gone, not squeezed to one space each.
                changes[name] = safe_text(safe_text(value, multiline=True).expandtabs())
            elif not value.isprintable():
                changes[name] = safe_text(value)
        elif isinstance(value, tuple) and not all(
            not isinstance(v, str) or v.isprintable() for v in value
        ):
            changes[name] = tuple(safe_text(v) if isinstance(v, str) else v for v in value)
    return dataclasses.replace(event, **changes) if changes else event


class ProgressModel:
    """Applies validation events to the run's progress, remembering what changed."""

    def __init__(self) -> None:
        self.run_id = ""
        self.mode = ""
        self.recipe = ""
        self.current = ""
        self.state = "waiting"  # waiting → running → finished | error
        self.error = ""
        self.phases: dict[str, PhaseProgress] = {}
        self.rows: dict[str, CheckRow] = {}
        self.summary: RunSummary | None = None
        self.run_log: deque[str] = deque(maxlen=LOG_LINES_PER_CHECK)
        self.applied = 0
        self._changes = Changes()

    # ----------------------------------------------------------------- reading
    def phase_list(self) -> list[PhaseProgress]:
        order = {name: i for i, name in enumerate(PHASE_ORDER)}
        return sorted(self.phases.values(), key=lambda p: order.get(p.name, len(order)))

    def counts(self) -> dict[str, int]:
        out = {"queued": 0, "running": 0, **{v: 0 for v in VERDICTS}}
        for row in self.rows.values():
            out[row.status] = out.get(row.status, 0) + 1
        return out

    def gates(self) -> list[tuple[CheckRow, Gate]]:
        return [(row, gate) for row in self.rows.values() for gate in row.gates]

    def has_changes(self) -> bool:
        return bool(self._changes)

    def take_changes(self) -> Changes:
        changes, self._changes = self._changes, Changes()
        return changes

    # ---------------------------------------------------------------- applying
    def apply_many(self, events: Iterable[Any]) -> int:
        count = 0
        for event in events:
            self.apply(event)
            count += 1
        return count

    def apply(self, event: Event) -> None:
        self.applied += 1
        handler = self._HANDLERS.get(event.TYPE)
        if handler is not None:
            handler(self, display_safe(event))

    def fail(self, message: str) -> None:
        """The stream itself failed (bad recording, refused run): show it, stop waiting."""
        self.state = "error"
        self.error = safe_text(message)
        self._changes.run = True

    def _phase(self, name: str) -> PhaseProgress:
        phase = self.phases.get(name)
        if phase is None:
            phase = self.phases[name] = PhaseProgress(name)
            self._changes.phases.add(name)
        return phase

    def _row(self, phase: str, check: str) -> CheckRow:
        key = row_key(phase, check)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = CheckRow(phase, check)
            self._changes.new_rows.append(key)
            progress = self._phase(phase)
            progress.seen += 1
            progress.total = max(progress.total, progress.seen)
            self._changes.phases.add(phase)
        return row

    def _on_run_started(self, event: RunStarted) -> None:
        self.run_id = event.run_id
        self.mode = event.mode
        self.recipe = event.recipe
        self.state = "running"
        for name in event.phases:
            self._phase(name)
        self._changes.run = True

    def _on_phase_started(self, event: PhaseStarted) -> None:
        phase = self._phase(event.phase)
        phase.status = "running"
        for check in event.checks:
            self._row(event.phase, check)
        phase.total = max(phase.total, len(event.checks))
        self._changes.phases.add(phase.name)

    def _on_check_started(self, event: CheckStarted) -> None:
        if not event.check:
            return
        row = self._row(event.phase, event.check)
        row.status = "running"
        row.timeout_s = event.timeout_s
        row.latest = ""
        self.current = row.key
        self._changes.rows.add(row.key)
        self._changes.started.append(row.key)

    def _on_log_line(self, event: LogLine) -> None:
        if not event.check:
            # A phase-level line (e.g. the readiness pre-flight banner), not a check's.
            prefix = f"[{event.phase}] " if event.phase else ""
            self.run_log.append(prefix + event.line[:LOG_LINE_CHARS])
            return
        row = self._row(event.phase, event.check)
        line = event.line[:LOG_LINE_CHARS]
        row.logs.append(line)
        row.log_seq += 1
        row.latest = line

    def _on_measurement(self, event: Measurement) -> None:
        if not event.check:
            return
        row = self._row(event.phase, event.check)
        note = event.note
        if event.display:
            value = event.display
        elif event.value is not None:
            value = format_value(event.value)
        elif event.verdict == NOT_APPLICABLE:
            value = "n/a"
        else:
            value = "—"
        gate = Gate(
            name=event.name,
            value=value,
            unit=event.unit,
            threshold=event.threshold,
            verdict=event.verdict,
            note=note,
        )
        for i, existing in enumerate(row.gates):
            if existing.name == gate.name:
                row.gates[i] = gate
                break
        else:
            row.gates.append(gate)
        row.latest = f"{gate.measured} vs {gate.threshold or '-'} → {gate.verdict}"
        self._changes.rows.add(row.key)
        self._changes.gates = True

    def _on_check_finished(self, event: CheckFinished) -> None:
        if not event.check:
            return
        row = self._row(event.phase, event.check)
        was_done = row.status in TERMINAL_STATUSES
        row.status = event.status
        row.message = event.message
        row.duration_ms = event.duration_ms
        if event.status != PASSED and event.message:
            row.latest = event.message
        if not was_done:
            progress = self._phase(row.phase)
            progress.done += 1
            self._changes.phases.add(row.phase)
        self._changes.rows.add(row.key)

    def _on_phase_finished(self, event: PhaseFinished) -> None:
        phase = self._phase(event.phase)
        phase.status = event.status
        phase.duration_ms = event.duration_ms
        self._changes.phases.add(phase.name)

    def _on_run_finished(self, event: RunFinished) -> None:
        self.summary = RunSummary(
            tests=event.tests,
            passed=event.passed,
            failed=event.failed,
            not_applicable=event.not_applicable,
            not_measured=event.not_measured,
            exit_code=event.exit_code,
            message=event.message,
        )
        self.state = "finished"
        self._changes.run = True

    _HANDLERS: dict[str, Callable[[ProgressModel, Any], None]] = {
        RunStarted.TYPE: _on_run_started,
        PhaseStarted.TYPE: _on_phase_started,
        CheckStarted.TYPE: _on_check_started,
        LogLine.TYPE: _on_log_line,
        Measurement.TYPE: _on_measurement,
        CheckFinished.TYPE: _on_check_finished,
        PhaseFinished.TYPE: _on_phase_finished,
        RunFinished.TYPE: _on_run_finished,
    }
