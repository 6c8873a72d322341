"""Typed events of a validation run.

Every consumer (CLI renderer, dashboard, recorder, report writers) reads the same events,
in the same order, from one stream. Events are small frozen dataclasses with a stable JSON
form: ``{"type": <class name>, "t": <seconds since the run started>, ...fields}``. Wall-clock
time appears once, in :class:`RunStarted` (``started_ms``); every other time is relative,
so a recorded run replays to byte-identical reports.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.yamlio import without_lone_surrogates
from aicr_tui.core.validation.verdicts import GATE_VERDICTS, VERDICTS

# One vocabulary for checks, gates and phases (aicr_tui.core.validation.verdicts).
CheckStatus = Literal["passed", "failed", "not applicable", "not measured"]
PhaseStatus = CheckStatus
MeasurementVerdict = Literal["passed", "failed", "not applicable", "not measured", "info"]

PHASES: tuple[str, ...] = ("readiness", "deployment", "conformance", "performance")
CHECK_STATUSES: tuple[str, ...] = VERDICTS
MEASUREMENT_VERDICTS: tuple[str, ...] = GATE_VERDICTS

# Log lines longer than this are cut (upstream keeps <= 512 chars per stdout line).
MAX_LINE_CHARS = 512


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
# One encoder for every event: json.dumps with options builds a new encoder per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in fields(cls))
        _FIELD_NAMES[cls] = names
    return names


def cap_line(line: str) -> str:
    """Cut a log line to MAX_LINE_CHARS the way upstream marks truncation."""
    text = line.rstrip("\r\n")
    if len(text) <= MAX_LINE_CHARS:
        return text
    cut = len(text) - MAX_LINE_CHARS
    return f"{text[:MAX_LINE_CHARS]}... [truncated {cut} chars]"


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event; ``t`` is seconds since the run started."""

    t: float

    TYPE: ClassVar[str] = "Event"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def to_json(self) -> str:
        return _ENCODER.encode(self.to_dict())


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    run_id: str
    started_ms: int
    phases: tuple[str, ...]
    mode: str  # "cluster" | "no-cluster" | "replay"
    recipe: str = ""
    tool_version: str = ""
    # --allow-unmeasured: an unmeasured declared gate warns instead of making the run exit 8
    allow_unmeasured: bool = False

    TYPE: ClassVar[str] = "RunStarted"


@dataclass(frozen=True, slots=True)
class PhaseStarted(Event):
    phase: str
    checks: tuple[str, ...]

    TYPE: ClassVar[str] = "PhaseStarted"


@dataclass(frozen=True, slots=True)
class CheckStarted(Event):
    phase: str
    check: str
    timeout_s: float = 0.0
    description: str = ""

    TYPE: ClassVar[str] = "CheckStarted"


@dataclass(frozen=True, slots=True)
class LogLine(Event):
    phase: str
    check: str
    line: str

    TYPE: ClassVar[str] = "LogLine"


@dataclass(frozen=True, slots=True)
class Measurement(Event):
    """A measured value against its gate; ``value`` is None when nothing was measured."""

    phase: str
    check: str
    name: str
    value: float | None
    unit: str
    threshold: str
    verdict: str  # MeasurementVerdict
    display: str = ""  # the value as shown (e.g. "157.29", "v25.10.0")
    note: str = ""

    TYPE: ClassVar[str] = "Measurement"


@dataclass(frozen=True, slots=True)
class CheckFinished(Event):
    phase: str
    check: str
    status: str  # CheckStatus
    message: str = ""
    duration_ms: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    TYPE: ClassVar[str] = "CheckFinished"


@dataclass(frozen=True, slots=True)
class PhaseFinished(Event):
    phase: str
    status: str  # PhaseStatus
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    not_measured: int = 0
    duration_ms: int = 0

    TYPE: ClassVar[str] = "PhaseFinished"


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    tests: int
    passed: int
    failed: int
    not_applicable: int
    not_measured: int
    exit_code: int
    message: str = ""

    TYPE: ClassVar[str] = "RunFinished"


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (
        RunStarted,
        PhaseStarted,
        CheckStarted,
        LogLine,
        Measurement,
        CheckFinished,
        PhaseFinished,
        RunFinished,
    )
}


def event_from_dict(data: Any, source: str = "event") -> Event:
    """Rebuild an event from its JSON form; a malformed record names ``source``."""
    if not isinstance(data, dict):
        raise invalid(f"{source} is not a JSON object")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise invalid(f'{source} has unknown event type "{kind}"')
    kwargs: dict[str, Any] = {}
    for name, kind_of_field in _field_types(cls):
        if name in data:
            value = data[name]
            if isinstance(value, list):
                value = tuple(value)
            if name == "t" and not _is_number(value):
                raise invalid(f'{source} has a non-numeric time "t"')
            check = _FIELD_CHECKS.get(kind_of_field)
            if check is not None and not check[0](value):
                raise invalid(
                    f'{source}: field "{name}" of {kind} must be {check[1]}, got {repr(value)[:40]}'
                )
            kwargs[name] = value
    try:
        event = cls(**kwargs)
    except TypeError as exc:
        raise invalid(f"{source} is missing a field of {kind}", str(exc)) from exc
    if isinstance(event, RunStarted) and not 0 <= event.started_ms <= MAX_STARTED_MS:
        raise invalid(f'{source}: "started_ms" {event.started_ms} is not a time in ms since 1970')
    return event


# A recording is user input: a field of the wrong type would only fail later, as a crash in
# a report writer or the dashboard, so each is checked against its declared type here.
MAX_STARTED_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last time reports can print


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


_FIELD_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "int": (_is_int, "a 64-bit integer"),
    "float": (_is_number, "a finite number"),
    "float | None": (lambda v: v is None or _is_number(v), "a finite number or null"),
    "tuple[str, ...]": (
        lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v),
        "a list of strings",
    ),
    "dict[str, str]": (
        lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        "a map of strings",
    ),
}
_FIELD_TYPES: dict[type, tuple[tuple[str, str], ...]] = {}


def _field_types(cls: type) -> tuple[tuple[str, str], ...]:
    found = _FIELD_TYPES.get(cls)
    if found is None:
        found = tuple((f.name, str(f.type)) for f in fields(cls))
        _FIELD_TYPES[cls] = found
    return found


def event_from_json(line: str, source: str = "event") -> Event:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise invalid(f"{source} is not valid JSON", exc.msg) from exc
    except RecursionError as exc:
        raise invalid(f"{source} is nested too deeply to be an event") from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise invalid(f"{source} holds a number too long to be an event field") from exc
    # An escaped lone surrogate could never be written to a report: U+FFFD, as Go decodes it.
    # Only a \u escape can carry one, so most lines skip the walk.
    if "\\u" in line:
        data = without_lone_surrogates(data)
    return event_from_dict(data, source)
