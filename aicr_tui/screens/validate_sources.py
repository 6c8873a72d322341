"""Where the validation dashboard's events come from: a recorded run replayed, or a live
run built from a recipe and snapshot as ``aicr-tui validate`` builds it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from aicr_tui.core.validation.events import Event

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.services.validation import ValidationSession
    from aicr_tui.core.validation.recipe_view import RecipeView


class EventSource(Protocol):
    """Where the dashboard's events come from."""

    @property
    def label(self) -> str: ...

    def events(self, cancel: threading.Event) -> AsyncIterator[Event]: ...


@dataclass(frozen=True)
class ReplaySource:
    """A recorded run (``--record`` JSONL) replayed with its pacing scaled by ``speed``.

    ``speed`` 1.0 is the original pacing, 10.0 ten times faster, 0 as fast as possible;
    None paces it to last a few seconds, as ``validate --replay`` does by default.
    ``note`` says what the recording is to the user (e.g. demo data for another recipe).
    """

    path: Path
    speed: float | None = None
    label: str = field(default="replay", compare=False)
    note: str = field(default="", compare=False)

    def describe(self) -> str:
        if self.speed is None:
            pace = "paced to a few seconds"
        else:
            pace = "no pacing" if self.speed == 0 else f"{self.speed:g}x"
        note = f"; {self.note}" if self.note else ""
        return f"replay of {Path(self.path).name}, recorded, nothing runs ({pace}){note}"

    async def events(self, cancel: threading.Event) -> AsyncIterator[Event]:
        from aicr_tui.core.services.replay import open_replay, play

        opened = open_replay(self.path, self.speed)
        async for event in published(lambda stream: play(opened, stream)):
            yield event


@dataclass(frozen=True)
class LiveRunSource:
    """A validation run from a recipe and snapshot, against a cluster or ``no_cluster``.

    ``recipe`` is a ``RecipeResult`` (or a ``RecipeView``); ``kubeconfig``/``context`` pick
    the cluster as ``aicr-tui validate`` does.
    """

    recipe: RecipeResult | RecipeView
    snapshot: Snapshot | None = None
    phases: tuple[str, ...] = ()
    kubeconfig: str | None = None
    context: str | None = None
    no_cluster: bool = False
    cleanup: bool = True
    data_dir: Path | None = None
    recipe_source: str = "recipe"
    # "" (the default, as without ``-n``): a namespace of the run's own, held by its lease
    namespace: str = ""
    skip_checks: tuple[str, ...] = ()
    fail_fast: bool = False
    allow_unmeasured: bool = False
    label: str = field(default="live", compare=False)

    def describe(self) -> str:
        return "live run, no cluster" if self.no_cluster else "live run"

    def session(self) -> ValidationSession:
        """The same validation session ``aicr-tui validate`` builds from its flags."""
        from aicr_tui.core.services.validation import ValidationSession

        return ValidationSession(
            recipe=self.recipe,
            recipe_source=self.recipe_source,
            snapshot=self.snapshot,
            data_dir=self.data_dir,
            phases=list(self.phases),
            no_cluster=self.no_cluster,
            cleanup=self.cleanup,
            namespace=self.namespace,
            skip_checks=self.skip_checks,
            fail_fast=self.fail_fast,
            allow_unmeasured=self.allow_unmeasured,
            kubeconfig=self.kubeconfig,
            context=self.context,
        )

    async def events(self, cancel: threading.Event) -> AsyncIterator[Event]:
        from aicr_tui.core.services.validation import build_request, run_session

        session = self.session()
        request = build_request(session)
        async for event in published(lambda stream: run_session(session, stream, request=request)):
            yield event


async def published(
    producer: Callable[[Any], Coroutine[Any, Any, Any]],
) -> AsyncIterator[Event]:
    """Run ``producer(stream)`` on a fresh EventStream and yield what it publishes.

    The producer's own failure (a refused replay speed, an unreadable catalog) is raised
    here after the events it did publish, so the screen shows both.
    """
    from aicr_tui.core.validation.stream import EventStream

    stream = EventStream()
    subscription = stream.subscribe()
    task = asyncio.create_task(producer(stream))
    try:
        async for batch in subscription.batches():
            for event in batch:
                yield event
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    error = task.exception() if not task.cancelled() else None
    if error is not None:
        raise error
