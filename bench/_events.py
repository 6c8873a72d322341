"""The synthetic validation run the event benchmarks feed (dashboard, event pipeline).

Real ``aicr_tui.core.validation.events`` in the order the runner emits them: one performance phase
of ``checks`` checks, each streaming ``lines`` log lines (the shape of a chatty NCCL or
inference run), then its gate and its verdict. A generator, so a million events never sit
in memory at once unless the caller lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aicr_tui.core.validation import events

PHASE = "performance"


def nccl_line(i: int) -> str:
    """An all_reduce_perf-like row (sizes, type, op, time, bandwidth)."""
    return f"  {1024 * 2 ** (i % 25):>12}  float  sum  -1  {i * 0.37:8.2f}  {i % 97:6.2f}"


def synthetic_run(
    checks: int, lines: int, *, line: Callable[[int], str] = nccl_line, step: float = 0.001
) -> Iterator[events.Event]:
    """``2 + checks * (lines + 3) + 2`` events (see ``event_count``), ``step`` s apart."""
    names = tuple(f"check-{i:03d}" for i in range(checks))
    yield events.RunStarted(0.0, "bench", 0, (PHASE,), "replay", "bench")
    yield events.PhaseStarted(0.0, PHASE, names)
    t = 0.0
    for name in names:
        yield events.CheckStarted(t, PHASE, name, 1800.0, "bench")
        for i in range(lines):
            t = round(t + step, 6)
            yield events.LogLine(t, PHASE, name, line(i))
        yield events.Measurement(
            t, PHASE, name, "nccl-all-reduce-bw", 157.29, "GB/s", ">= 150", "passed", "157.29"
        )
        yield events.CheckFinished(t, PHASE, name, "passed", "ok", 1000)
    yield events.PhaseFinished(t, PHASE, "passed", checks, 0, 0, 0, 1000)
    yield events.RunFinished(t, checks, checks, 0, 0, 0, 0)


def event_count(checks: int, lines: int) -> int:
    return 2 + checks * (lines + 3) + 2
