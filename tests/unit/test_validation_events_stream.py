"""Events have a stable JSON form; the stream fans every event out, in order, to every consumer."""

from __future__ import annotations

import asyncio
import threading

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.events import (
    EVENT_TYPES,
    MAX_LINE_CHARS,
    CheckFinished,
    LogLine,
    RunStarted,
    cap_line,
    event_from_json,
)
from aicr_tui.core.validation.stream import EventStream
from tests.simulated import gate


def test_every_event_type_round_trips_through_json() -> None:
    samples = [
        RunStarted(
            0.0,
            "20261130-000000-abc",
            1796000000000,
            ("readiness", "deployment"),
            "cluster",
            "r.yaml",
            "0.1.0",
        ),
        LogLine(1.5, "deployment", "operator-health", "Running: 1/1"),
        gate("nccl-all-reduce-bw", 157.29, "GB/s", ">= 150", "pass", t=2.0, display="157.29"),
        CheckFinished(
            3.25, "performance", "nccl-all-reduce-bw", "passed", "ok", 1200, {"nodesValidated": "2"}
        ),
    ]
    for e in samples:
        back = event_from_json(e.to_json())
        assert back == e
        assert back.to_json() == e.to_json()
    assert set(EVENT_TYPES) >= {
        "RunStarted",
        "PhaseStarted",
        "CheckStarted",
        "LogLine",
        "Measurement",
        "CheckFinished",
        "PhaseFinished",
        "RunFinished",
    }


def test_bad_records_are_one_line_errors() -> None:
    with pytest.raises(AicrError, match="unknown event type"):
        event_from_json('{"type": "Nope", "t": 0}')
    with pytest.raises(AicrError, match="not valid JSON"):
        event_from_json("{")
    with pytest.raises(AicrError, match="missing a field"):
        event_from_json('{"type": "LogLine", "t": 0}')


def test_long_lines_are_capped() -> None:
    line = cap_line("x" * (MAX_LINE_CHARS + 10))
    assert line.endswith("... [truncated 10 chars]")
    assert cap_line("short\n") == "short"


async def test_fan_out_keeps_order_for_sinks_and_subscribers() -> None:
    stream = EventStream(queue_size=4)  # small queue: the publisher must wait, not drop
    sink: list[int] = []
    stream.add_sink(lambda e: sink.append(int(e.t)))
    subs = [stream.subscribe(), stream.subscribe()]
    seen: list[list[int]] = [[], []]

    async def consume(i: int) -> None:
        async for e in subs[i]:
            seen[i].append(int(e.t))

    async def consume_batches() -> None:
        async for batch in subs[1].batches(3):
            assert 1 <= len(batch) <= 3
            seen[1].extend(int(e.t) for e in batch)

    tasks = [asyncio.create_task(consume(0)), asyncio.create_task(consume_batches())]
    for i in range(100):
        await stream.publish(LogLine(float(i), "p", "c", str(i)))
    await stream.close()
    await asyncio.gather(*tasks)
    assert sink == seen[0] == seen[1] == list(range(100))
    assert stream.published == 100


async def test_publish_threadsafe_from_a_worker() -> None:
    stream = EventStream()
    got: list[str] = []
    stream.add_sink(lambda e: got.append(e.line))  # type: ignore[attr-defined]
    loop = asyncio.get_running_loop()

    def worker() -> None:
        assert threading.current_thread() is not threading.main_thread()
        for i in range(10):
            stream.publish_threadsafe(LogLine(float(i), "p", "c", f"w{i}"), loop)

    await asyncio.to_thread(worker)
    assert got == [f"w{i}" for i in range(10)]
    await stream.close()
    with pytest.raises(RuntimeError):
        await stream.publish(LogLine(0.0, "p", "c", "late"))


async def test_a_consumer_that_stops_reading_never_blocks_the_publisher() -> None:
    stream = EventStream(queue_size=2)
    sub = stream.subscribe()

    async def read_two() -> None:
        n = 0
        async for _ in sub:
            n += 1
            if n == 2:
                break  # e.g. a renderer that crashed

    reader = asyncio.create_task(read_two())
    for i in range(50):
        await asyncio.wait_for(stream.publish(LogLine(float(i), "p", "c", "x")), timeout=2)
        await asyncio.sleep(0)
    await reader
    await stream.close()
    assert not sub.active
