"""Record the event stream as JSONL and replay it.

``Recorder`` is a stream sink writing one event per line to a temporary sibling of the
target; ``commit()`` renames it into place (so a refused or crashed run leaves no file).
``replay`` re-publishes a recording with its original pacing (each event at its ``t``),
scaled by ``speed`` (``2`` = twice as fast, ``0`` = as fast as possible). Events are
re-emitted unchanged, so every report built from a replay equals the original's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import check_output_file, output_error, read_document
from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.validation.events import (
    CheckFinished,
    Event,
    LogLine,
    Measurement,
    PhaseFinished,
    RunFinished,
    RunStarted,
    event_from_json,
)
from aicr_tui.core.validation.outcome import exit_code_for, unmeasured_checks
from aicr_tui.core.validation.stream import EventStream
from aicr_tui.core.validation.verdicts import (
    COUNT_FIELDS,
    GATE_VERDICTS,
    NO_CLUSTER_MODE,
    NOT_MEASURED,
    VERDICTS,
)

MAX_RECORDING_BYTES = 256 * 1_048_576
RUN_MODES = ("cluster", NO_CLUSTER_MODE, "replay")  # "replay": judged as strictly as "cluster"
ALLOWED_SUFFIX = " (allowed by --allow-unmeasured)"
_GAPS = "declared check(s) not measured"


class Recorder:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.target = Path(path)
        check_output_file(self.target, "--record file")  # a symbolic link is refused
        parent = self.target.parent if str(self.target.parent) else Path(".")
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{self.target.name[:40]}.", suffix=".tmp", dir=parent
            )
        except OSError as exc:
            raise output_error(self.target, exc, "--record file") from exc
        self._tmp = tmp
        self._fh: IO[str] | None = os.fdopen(fd, "w", encoding="utf-8")
        self.count = 0

    def __call__(self, event: Event) -> None:
        if self._fh is not None:
            try:
                self._fh.write(event.to_json())
                self._fh.write("\n")
            except OSError as exc:
                raise output_error(self.target, exc, "--record file") from exc
            self.count += 1

    def commit(self) -> None:
        if self._fh is None:
            return
        self.staged()
        try:
            os.replace(self._tmp, self.target)
        except OSError as exc:
            self.abort()
            raise output_error(self.target, exc, "--record file") from exc

    def staged(self) -> str:
        """Finish the temporary file (flushed, fsynced, closed) and return its path, for a
        caller that renames it into place together with other outputs."""
        if self._fh is not None:
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()
                os.chmod(self._tmp, 0o644)
            except OSError as exc:
                self._fh = None
                self.abort()
                raise output_error(self.target, exc, "--record file") from exc
            self._fh = None
        return self._tmp

    def abort(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)


def parse_recording(text: str, source: str) -> list[Event]:
    events: list[Event] = []
    last_t = 0.0
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        event = event_from_json(line, f'recording "{source}" line {i}')
        if event.t < last_t:
            raise invalid(f'recording "{source}" line {i} goes back in time ({event.t} < {last_t})')
        last_t = event.t
        events.append(event)
    if not events or not isinstance(events[0], RunStarted):
        raise invalid(f'recording "{source}" does not start with a RunStarted event')
    _check_verdicts(events, source)
    _check_header(events, source)
    return events


def _check_header(events: list[Event], source: str) -> None:
    """Refuse a recording whose RunStarted mode fields disagree with its events.

    ``mode`` and ``allow_unmeasured`` decide whether an unmeasured check fails the run, so
    flipping them (and the exit code) would turn a run that exited 8 into a pass. The events
    say which mode ran: the run's opening line, and in ``no-cluster`` mode every cluster
    check is synthetic (not measured, the no-cluster or fail-fast message) and nothing is
    measured; the final message of a run with unwaived gaps says whether
    ``--allow-unmeasured`` covered them.
    """
    from aicr_tui.core.validation.runner import FAIL_FAST_MESSAGE, NO_CLUSTER_MESSAGE

    started = events[0]
    assert isinstance(started, RunStarted)
    head = f'recording "{source}" RunStarted'
    if started.mode not in RUN_MODES:
        raise invalid(
            f"{head} has mode {safe_text(started.mode)[:40]!r}: expected one of "
            + ", ".join(RUN_MODES)
        )
    no_cluster = started.mode == NO_CLUSTER_MODE
    for i, event in enumerate(events):
        where = f'recording "{source}" event {i + 1} ({event.TYPE})'
        if isinstance(event, LogLine) and not event.phase and event.line.startswith("validating "):
            says_no_cluster = event.line.startswith("validating in --no-cluster mode")
            if says_no_cluster != no_cluster:
                raise invalid(
                    f"{head} says mode {started.mode}, but {where.split(' ', 2)[2]} says the "
                    f"run was {'offline (no-cluster)' if says_no_cluster else 'against a cluster'}"
                    "; the recording was edited or is corrupt"
                )
        if not no_cluster:
            continue
        # Readiness is evaluated in no-cluster mode too (from the snapshot, not the cluster):
        # its constraints' CheckFinished and Measurement events are no cluster result.
        if isinstance(event, CheckFinished | Measurement) and event.phase == "readiness":
            synthetic = True
        elif isinstance(event, CheckFinished):
            synthetic = event.status == NOT_MEASURED and event.message in (
                NO_CLUSTER_MESSAGE,
                FAIL_FAST_MESSAGE,
            )
        else:
            synthetic = not isinstance(event, Measurement)
        if not synthetic:
            raise invalid(
                f"{head} says mode no-cluster, where nothing is measured, but {where} "
                "records a cluster result; the recording was edited or is corrupt"
            )
    finished = events[-1]
    if not isinstance(finished, RunFinished) or _GAPS not in finished.message:
        return
    if not any(not u.waived for u in unmeasured_checks(events)):
        return
    if finished.message.endswith(ALLOWED_SUFFIX) != started.allow_unmeasured:
        raise invalid(
            f"{head} says allow_unmeasured={str(started.allow_unmeasured).lower()}, but its "
            f"RunFinished message says the unmeasured checks were "
            f"{'' if finished.message.endswith(ALLOWED_SUFFIX) else 'not '}allowed; the "
            "recording was edited or is corrupt"
        )


def _check_verdicts(events: list[Event], source: str) -> None:
    """Refuse a recording whose verdicts are outside the vocabulary or whose exit code lies.

    A recording is a file anyone may edit: a status such as ``totally-fine`` would be
    copied into the reports, and a failed run's ``RunFinished.exit_code`` edited to 0 would
    make the replay pass. The exit code is recomputed from the events
    (``outcome.exit_code_for``, the one rule) and a recorded one that disagrees is refused.
    """
    finished: RunFinished | None = None
    phase_tallies: dict[str, dict[str, int]] = {}
    for i, event in enumerate(events):
        where = f'recording "{source}" event {i + 1} ({event.TYPE})'
        if finished is not None:
            raise invalid(f"{where} comes after RunFinished; a run finishes once, last")
        if isinstance(event, CheckFinished | PhaseFinished) and event.status not in VERDICTS:
            raise invalid(
                f"{where} has status {safe_text(event.status)[:40]!r}: "
                f"expected one of {', '.join(VERDICTS)}"
            )
        if isinstance(event, Measurement) and event.verdict not in GATE_VERDICTS:
            raise invalid(
                f"{where} has verdict {safe_text(event.verdict)[:40]!r}: "
                f"expected one of {', '.join(GATE_VERDICTS)}"
            )
        if isinstance(event, CheckFinished):
            tally = phase_tallies.setdefault(event.phase, dict.fromkeys(VERDICTS, 0))
            tally[event.status] += 1
        if isinstance(event, PhaseFinished):
            _check_counts(event, phase_tallies.get(event.phase, {}), where)
        if isinstance(event, RunFinished):
            finished = event
            total = dict.fromkeys(VERDICTS, 0)
            for tally in phase_tallies.values():
                for verdict, count in tally.items():
                    total[verdict] += count
            _check_counts(event, total, where)
            if event.tests != sum(total.values()):
                raise invalid(
                    f"{where} counts {event.tests} tests, but the recording finishes "
                    f"{sum(total.values())} checks"
                )
    if finished is not None:
        computed = exit_code_for(events)
        if finished.exit_code != computed:
            raise invalid(
                f'recording "{source}" says the run exited {finished.exit_code}, but its '
                f"events make exit code {computed}; the recording was edited or is corrupt"
            )


def _check_counts(event: PhaseFinished | RunFinished, tally: dict[str, int], where: str) -> None:
    """A summary's per-verdict counts must be those of the checks finished before it."""
    for verdict, field in COUNT_FIELDS.items():
        recorded = getattr(event, field)
        if recorded != tally.get(verdict, 0):
            raise invalid(
                f"{where} counts {field}={recorded}, but the recording finishes "
                f"{tally.get(verdict, 0)} check(s) {verdict}"
            )


def load_recording(path: str | os.PathLike[str]) -> list[Event]:
    return parse_recording(
        read_document(path, "recording", cap=MAX_RECORDING_BYTES), os.fspath(path)
    )


async def replay(
    events: list[Event],
    stream: EventStream,
    *,
    speed: float = 1.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    close_stream: bool = True,
) -> None:
    """Publish ``events`` at their original offsets divided by ``speed``."""
    if speed < 0:
        raise invalid(f"--replay-speed {speed:g} must be positive (0 = no pacing)")
    start = clock()
    try:
        for event in events:
            if speed > 0:
                due = start + event.t / speed
                wait = due - clock()
                if wait > 0:
                    await sleep(wait)
            await stream.publish(event)
    finally:
        if close_stream:
            await stream.close()
