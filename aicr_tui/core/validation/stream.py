"""One async event stream with fan-out to every consumer.

The runner publishes each event once; the stream hands it to

- *sinks*: plain callables run inline, in registration order (the report builder, the
  recorder) — cheapest path, no queue;
- *subscriptions*: bounded asyncio queues read by async consumers (the CLI renderer, the
  dashboard). A full queue applies back-pressure to the publisher instead of dropping
  events, so every consumer sees every event in the same order.

Checks run in worker threads; they publish through :meth:`EventStream.publish_threadsafe`,
which blocks the worker until the event is delivered so ordering and back-pressure hold.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable
from typing import Final

from aicr_tui.core.validation.events import Event

Sink = Callable[[Event], None]

_CLOSED: Final = object()


class Subscription:
    """An async iterator over the events published after it subscribed."""

    def __init__(self, maxsize: int) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue(maxsize=maxsize)
        self.received = 0
        self.active = True

    async def _put(self, item: object) -> None:
        if self.active:
            await self._queue.put(item)

    def _detach(self) -> None:
        """The consumer stopped reading: never block the publisher on this queue again."""
        self.active = False
        while not self._queue.empty():
            self._queue.get_nowait()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        try:
            while True:
                item = await self._queue.get()
                if item is _CLOSED:
                    return
                self.received += 1
                yield item  # type: ignore[misc]
        finally:
            self._detach()

    async def batches(self, max_items: int = 512) -> AsyncIterator[list[Event]]:
        """Yield events in batches: whatever is queued, up to ``max_items`` at a time.

        A dashboard applies one batch per refresh, which is how it keeps up with
        thousands of events per second without redrawing per event.
        """
        try:
            while True:
                first = await self._queue.get()
                if first is _CLOSED:
                    return
                batch: list[Event] = [first]  # type: ignore[list-item]
                closed = False
                while len(batch) < max_items and not self._queue.empty():
                    item = self._queue.get_nowait()
                    if item is _CLOSED:
                        closed = True
                        break
                    batch.append(item)  # type: ignore[arg-type]
                self.received += len(batch)
                yield batch
                if closed:
                    return
        finally:
            self._detach()


class EventStream:
    def __init__(self, queue_size: int = 4096) -> None:
        self._sinks: list[Sink] = []
        self._subs: list[Subscription] = []
        self._queue_size = queue_size
        self._closed = False
        self.published = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def add_sink(self, sink: Sink) -> None:
        """Register an inline consumer; it must be fast and must not raise."""
        self._sinks.append(sink)

    def subscribe(self, maxsize: int | None = None) -> Subscription:
        sub = Subscription(maxsize or self._queue_size)
        self._subs.append(sub)
        return sub

    @property
    def closed(self) -> bool:
        return self._closed

    async def publish(self, event: Event) -> None:
        if self._closed:
            raise RuntimeError("event stream is closed")
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        self.published += 1
        for sink in self._sinks:
            sink(event)
        for sub in self._subs:
            await sub._put(event)

    def publish_threadsafe(
        self,
        event: Event,
        loop: asyncio.AbstractEventLoop,
        cancel: threading.Event | None = None,
    ) -> None:
        """Publish from a worker thread; returns once every consumer has the event.

        Waiting is what gives back-pressure; ``cancel`` (set when the run gives up on the
        worker) ends the wait so an abandoned worker never blocks on a full queue.
        """
        future: concurrent.futures.Future[None] = asyncio.run_coroutine_threadsafe(
            self.publish(event), loop
        )
        while True:
            try:
                future.result(timeout=0.5)
                return
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    return

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for sub in self._subs:
            await sub._put(_CLOSED)
