"""Validation event pipeline: events per second through the stream and its consumers.

Budget (DESIGN.md): the dashboard applies >= 5,000 events/s. Measured here, side by side in
one process on the same synthetic run (20 checks x 1,500 log lines plus gates — the shape of
a chatty NCCL/inference run):

- stream alone (one no-op sink): the floor every consumer adds to;
- stream → CTRF builder + JSONL recorder, then CTRF and JUnit rendering at the end;
- stream → CLI plain renderer (one formatted line per event, via a batched subscription);
- stream → the CLI's rich live-table state (apply every event, build the table per batch);
- recording parse (JSONL → events), the replay input path.

Run: ``python -m bench.validation_bench``.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from aicr_tui.core.validation.events import Event
from aicr_tui.core.validation.recording import Recorder, parse_recording
from aicr_tui.core.validation.reports.ctrf import CtrfBuilder, render_ctrf
from aicr_tui.core.validation.reports.junit import render_junit
from aicr_tui.core.validation.stream import EventStream
from bench._events import synthetic_run
from bench._harness import Row, report

BUDGET = 5000.0


async def _pump(
    events: list[Event], setup: Callable[[EventStream], list[asyncio.Task[None]]]
) -> float:
    stream = EventStream()
    tasks = setup(stream)
    t0 = time.perf_counter()
    for e in events:
        await stream.publish(e)
    await stream.close()
    await asyncio.gather(*tasks)
    return time.perf_counter() - t0


def measure(
    events: list[Event],
    setup: Callable[[EventStream], list[asyncio.Task[None]]],
    finish: Callable[[], None] | None = None,
    repeat: int = 3,
) -> float:
    rates = []
    for _ in range(repeat):
        elapsed = asyncio.run(_pump(events, setup))
        if finish is not None:
            t0 = time.perf_counter()
            finish()
            elapsed += time.perf_counter() - t0
        rates.append(len(events) / elapsed)
    return statistics.median(rates)


def rate_row(name: str, rate: float, floor: float | None) -> Row:
    """Events/s through one consumer, beside the bare stream's rate (its floor)."""
    note = "floor = the stream alone, same events, same run" if floor is not None else ""
    return Row(
        name,
        rate,
        "ev/s",
        floor,
        f">= {BUDGET:,.0f}/s",
        note,
        limit=BUDGET,
        check="min",
    )


def main() -> int:
    from aicr_tui.commands.validate import LiveTable, format_event

    events = list(synthetic_run(20, 1500))
    rows: list[Row] = []

    def bare(stream: EventStream) -> list[asyncio.Task[None]]:
        stream.add_sink(lambda e: None)
        return []

    floor = measure(events, bare)
    rows.append(rate_row("stream alone (no-op sink)", floor, None))

    tmpdir = tempfile.mkdtemp(prefix="aicr-bench-")
    state: dict[str, object] = {}

    def reports(stream: EventStream) -> list[asyncio.Task[None]]:
        builder = CtrfBuilder()
        recorder = Recorder(os.path.join(tmpdir, "events.jsonl"))
        stream.add_sink(builder)
        stream.add_sink(recorder)
        state["builder"], state["recorder"] = builder, recorder
        return []

    def finish_reports() -> None:
        builder = state["builder"]
        recorder = state["recorder"]
        assert isinstance(builder, CtrfBuilder) and isinstance(recorder, Recorder)
        recorder.commit()
        report = builder.report()
        render_ctrf(report)
        render_junit(report)

    rows.append(
        rate_row(
            "stream → CTRF + JSONL recorder (+ CTRF/JUnit render)",
            measure(events, reports, finish_reports),
            floor,
        )
    )

    def plain(stream: EventStream) -> list[asyncio.Task[None]]:
        sub = stream.subscribe()
        out = io.StringIO()

        async def render() -> None:
            async for batch in sub.batches(256):
                lines = [ln for e in batch if (ln := format_event(e)) is not None]
                out.write("\n".join(lines) + "\n")

        return [asyncio.create_task(render())]

    rows.append(rate_row("stream → CLI plain renderer", measure(events, plain), floor))

    def live(stream: EventStream) -> list[asyncio.Task[None]]:
        sub = stream.subscribe()
        table = LiveTable()

        async def render() -> None:
            async for batch in sub.batches(1024):
                for e in batch:
                    table.apply(e)
                table.renderable()

        return [asyncio.create_task(render())]

    rows.append(
        rate_row("stream → CLI live-table state (+ table per batch)", measure(events, live), floor)
    )

    text = "".join(e.to_json() + "\n" for e in events)
    t0 = time.perf_counter()
    decoded = [json.loads(line) for line in text.splitlines()]
    json_rate = len(decoded) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    parsed = parse_recording(text, "bench")
    rate = len(parsed) / (time.perf_counter() - t0)
    row = rate_row("recording parse (JSONL → events, replay input)", rate, json_rate)
    row.note = "floor = json.loads of the same lines"
    rows.append(row)

    report(f"validation event pipeline ({len(events):,} events)", rows)
    return 1 if any(r.value < BUDGET for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
