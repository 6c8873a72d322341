"""Validation dashboard throughput, key latency under load, and memory bounds.

Runs the real ``ValidationDashboardScreen`` headless at 80x24 on a synthetic flood of real
``aicr_tui.core.validation`` events (checks streaming thousands of log lines each, the shape of a
chatty NCCL or inference run) and reports:

- events/s applied by the screen on an unpaced flood of a million events, beside the floor
  of the bare ``ProgressModel`` applying the same events with no UI (budget: >= 5,000/s);
- key latency while events arrive at the budgeted 5,000 events/s: a thread standing in for
  the terminal driver posts a key every 50 ms; latency is post -> the bound action running
  (budget: p99 <= 100 ms). That is wall-clock, so other processes on a shared machine
  inflate it; beside it the bench reports the event loop's longest busy stretches in CPU
  time, and the same latency under the unpaced flood (information);
- memory over a million events: resident set sampled as the flood passes 250k, 500k, 750k
  and 1M events in one run; bounded logs keep it flat (budget: 1M/250k <= 1.05).

Run with ``python -m bench.dashboard_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from bench._events import event_count, synthetic_run
from bench._harness import Row, load_note, missed, report

EVENTS_BUDGET = 5_000.0
KEY_BUDGET_MS = 100.0
KEY_INTERVAL_S = 0.05
PACED_RATE = 5_000.0
PACED_SECONDS = 6.0
IDLE_S = 1.0  # the paced run's screen idles this long first: the keys then are the floor
SETTLE_S = 0.5  # after the screen has settled this long (mount, first paints)
MEMORY_MARKS = (250_000, 500_000, 750_000, 1_000_000)
FLAT_BUDGET = 1.05
FLOODING = [False]  # set while events flow (what the GC-pause row counts)


def flood(checks: int, lines_per_check: int) -> Iterator[Any]:
    return synthetic_run(checks, lines_per_check, line=_line, step=0.0001)


def _line(i: int) -> str:
    return f"#  {i:>8}  all_reduce_perf  busbw 157.29 ok"


class FloodSource:
    label = "bench"

    def __init__(
        self, checks: int, lines_per_check: int, rate: float | None = None, idle_s: float = 0.0
    ) -> None:
        self.checks = checks
        self.lines = lines_per_check
        self.rate = rate  # events per second, or None: as fast as the screen takes them
        self.idle_s = idle_s  # the screen is up and idle this long before the first event
        self.idle_from = float("inf")  # keys posted from here to the first event: the floor
        self.first_event_at = float("inf")

    async def events(self, cancel: threading.Event) -> AsyncIterator[Any]:
        now = time.perf_counter()
        self.idle_from = now + SETTLE_S  # mounting and the first paints are not idle
        idle_until = now + SETTLE_S + self.idle_s
        while time.perf_counter() < idle_until and not cancel.is_set():
            await asyncio.sleep(0.01)
        self.first_event_at = start = time.perf_counter()
        for n, event in enumerate(flood(self.checks, self.lines)):
            if cancel.is_set():
                return
            if self.rate is not None and n % 50 == 0:
                ahead = start + n / self.rate - time.perf_counter()
                await asyncio.sleep(max(0.0, ahead))
            elif n % 1024 == 0:
                await asyncio.sleep(0)
            yield event


def rss_kib() -> int:
    """Current resident set size of this process in KiB (Linux /proc)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def model_floor(checks: int, lines: int) -> float:
    """Events/s of the bare model (no UI, no thread hand-off) on the same events."""
    from aicr_tui.core.validation.progress import ProgressModel

    events = list(flood(checks, lines))
    model = ProgressModel()
    t0 = time.perf_counter()
    model.apply_many(events)
    return len(events) / (time.perf_counter() - t0)


async def run_dashboard(
    checks: int, lines: int, *, probe_keys: bool, rate: float | None = None, idle_s: float = 0.0
) -> dict[str, Any]:
    from textual import events as tevents
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widgets import Static

    from aicr_tui.screens.validate_dashboard import ValidationDashboardScreen

    latencies: list[float] = []
    posted: dict[int, float] = {}

    class ProbedDashboard(ValidationDashboardScreen):
        BINDINGS = [Binding("k", "probe", "probe", id="bench.probe", show=False)]

        def action_probe(self) -> None:
            now = time.perf_counter()
            seq = len(latencies)
            if seq in posted:
                latencies.append(now - posted[seq])

    source = FloodSource(checks, lines, rate, idle_s)
    rss_marks: list[tuple[int, int]] = []

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("bench")

        def on_mount(self) -> None:
            self.dashboard = ProbedDashboard(source)
            self.push_screen(self.dashboard)

    app = Host()
    stop = threading.Event()

    def driver(loop: asyncio.AbstractEventLoop) -> None:
        seq = 0
        while not stop.wait(KEY_INTERVAL_S):
            if len(latencies) < seq:
                continue  # the previous key is still in flight
            posted[seq] = time.perf_counter()
            loop.call_soon_threadsafe(app.post_message, tevents.Key(key="k", character="k"))
            seq += 1

    stretches: list[float] = []
    flooding = True

    async def monitor() -> None:
        # CPU the event-loop thread spends between two 5 ms wake-ups of this task: the
        # longest stretch in which no key could have been read, independent of how much
        # CPU other processes on the machine leave us.
        while flooding and app.dashboard.model.applied == 0:
            await asyncio.sleep(0.001)  # mounting is not part of the flood
        FLOODING[0] = True
        marks = list(MEMORY_MARKS)
        while flooding:
            before = time.thread_time()
            await asyncio.sleep(0.005)
            stretches.append(time.thread_time() - before)
            if marks and app.dashboard.model.applied >= marks[0]:
                rss_marks.append((marks.pop(0), rss_kib()))

    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.dashboard
        watcher = asyncio.create_task(monitor())
        thread = None
        if probe_keys:
            thread = threading.Thread(
                target=driver, args=(asyncio.get_running_loop(),), daemon=True
            )
            thread.start()
        while screen.model.state not in ("finished", "error"):
            # A plain sleep: Pilot.pause walks every widget and would itself delay keys.
            await asyncio.sleep(0.01)
        done = time.perf_counter()
        flooding = FLOODING[0] = False
        await watcher
        stop.set()
        if thread is not None:
            thread.join()
        await pilot.pause(0.1)
        return {
            "applied": screen.model.applied,
            "seconds": done - source.first_event_at,
            # Keys posted while events flowed, and before the first one (the idle floor).
            "latencies": [x for i, x in enumerate(latencies) if posted[i] >= source.first_event_at],
            "idle_latencies": [
                x
                for i, x in enumerate(latencies)
                if source.idle_from <= posted[i] < source.first_event_at
            ],
            "stretches": stretches,
            "retained_lines": sum(len(r.logs) for r in screen.model.rows.values()),
            "rss_marks": rss_marks,
            "rows": len(screen.model.rows),
        }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    # The million-event flood: 4 checks of 250k lines, so every capped log store (1000
    # lines per check) is full by the first memory mark and "flat" means nothing grows
    # with the event count (with 40 checks of 25k, the 30 checks started after 250k filled
    # their stores: ~3 MB of bounded growth read as unflat). The paced run keeps 40 checks.
    checks, lines = 4, 250_000
    paced_checks = 40
    expected = event_count(checks, lines)
    floor = model_floor(paced_checks, 1_000)

    # The paced run first: a million events before it would leave their heap behind.
    paced_lines = int(PACED_RATE * PACED_SECONDS / paced_checks)
    pauses: list[float] = []
    started: list[float] = [0.0]

    def gc_timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info["generation"] == 2 and FLOODING[0]:
            pauses.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(gc_timer)
    paced = asyncio.run(
        run_dashboard(paced_checks, paced_lines, probe_keys=True, rate=PACED_RATE, idle_s=IDLE_S)
    )
    gc.callbacks.remove(gc_timer)
    paced_rate = paced["applied"] / paced["seconds"]
    lat_ms = [x * 1000 for x in paced["latencies"]]
    idle_ms = [x * 1000 for x in paced["idle_latencies"]]
    busy_ms = [x * 1000 for x in paced["stretches"]]
    p99 = percentile(lat_ms, 0.99)

    big = asyncio.run(run_dashboard(checks, lines, probe_keys=True))
    if big["applied"] != expected:
        print(f"dashboard applied {big['applied']} of {expected} events", file=sys.stderr)
        return 2
    rate = big["applied"] / big["seconds"]
    flood_ms = [x * 1000 for x in big["latencies"]]
    marks = dict(big["rss_marks"])
    if len(marks) != len(MEMORY_MARKS):
        print(f"dashboard: RSS sampled at {sorted(marks)} only", file=sys.stderr)
        return 2

    rows = [
        Row(
            "events/s applied, unpaced flood (1M events, 4 checks, 80x24)",
            rate,
            "/s",
            floor,
            f">= {EVENTS_BUDGET:,.0f}/s",
            "floor = bare ProgressModel",
            limit=EVENTS_BUDGET,
            check="min",
        ),
        Row(
            f"key latency at {PACED_RATE:,.0f} events/s, p99",
            p99,
            "ms",
            floor=percentile(idle_ms, 0.99),
            budget=f"<= {KEY_BUDGET_MS:.0f} ms",
            note=(
                f"{len(lat_ms)} keys, paced at {paced_rate:,.0f}/s; floor = the same screen "
                f"and keys before the first event ({len(idle_ms)} keys); {load_note()}"
            ),
            limit=KEY_BUDGET_MS,
            check="max",
        ),
        Row(
            f"key latency at {PACED_RATE:,.0f} events/s, p50",
            percentile(lat_ms, 0.5),
            "ms",
            floor=percentile(idle_ms, 0.5),
        ),
        Row(f"key latency at {PACED_RATE:,.0f} events/s, max", max(lat_ms), "ms"),
        Row(
            f"event-loop busy stretch at {PACED_RATE:,.0f} events/s, p99 (CPU)",
            percentile(busy_ms, 0.99),
            "ms",
            note="info: what the loop itself makes a key wait",
        ),
        Row(
            f"longest full GC pause while events flow at {PACED_RATE:,.0f}/s",
            max(pauses, default=0.0),
            "ms",
            note=f"info: {len(pauses)} full collections during the flood (wall)",
        ),
        Row(
            "key latency, unpaced flood, p99",
            percentile(flood_ms, 0.99),
            "ms",
            note=f"info: {len(flood_ms)} keys at ~{rate / PACED_RATE:.0f}x the budgeted rate",
        ),
        Row(
            "log lines retained after 1M events",
            float(big["retained_lines"]),
            "",
            budget=f"<= {big['rows']} checks x 1000",
            limit=float(big["rows"] * 1000),
            check="max",
        ),
        Row(
            "RSS after 1M events vs after 250k (one run)",
            float(marks[MEMORY_MARKS[-1]]),
            "KiB",
            float(marks[MEMORY_MARKS[0]]),
            f"<= {FLAT_BUDGET:g}x (flat)",
            f"500k: {marks[500_000]} KiB, 750k: {marks[750_000]} KiB",
            limit=FLAT_BUDGET,
            check="ratio",
        ),
    ]
    report("validation dashboard", rows)
    return 1 if missed(rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
