"""Shared helpers for the wizard's Pilot tests."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from aicr_tui.app import AicrApp, create_app


def demo_app(tmp_path: Path | None = None) -> AicrApp:
    app = create_app(demo=True)
    app.state.replay_speed = 0.0  # replay the recorded run as fast as it can be applied
    if tmp_path is not None:
        app.state.output_dir = tmp_path
        app.state.reports_dir = tmp_path / "reports"
    return app


@contextlib.asynccontextmanager
async def wizard_running(
    tmp_path: Path, size: tuple[int, int] = (80, 24)
) -> AsyncIterator[tuple[AicrApp, Any]]:
    """The demo wizard running at ``size``, writing under ``tmp_path``, once it has settled."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        yield app, pilot


async def settle(pilot, rounds: int = 2) -> None:
    """Let thread workers finish and their messages be handled.

    A superseded exclusive worker reports itself cancelled; that is the expected outcome
    of a newer selection, not a failure. A worker that failed is reported by its screen's
    worker_failed (aicr_tui/screens/worker_errors.py): the tests read what the screen shows.
    """
    from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

    for _ in range(rounds):
        for _attempt in range(10):
            running = [
                w
                for w in pilot.app.workers
                if w.state not in (WorkerState.CANCELLED, WorkerState.ERROR)
            ]
            try:
                await pilot.app.workers.wait_for_complete(running)
                break
            except (WorkerCancelled, WorkerFailed):
                continue
        await pilot.pause()


async def palette_command(pilot, key: str, typed: str) -> None:
    """Open the command palette with ``key``, type ``typed`` and run the first match."""
    await pilot.press(key)
    await pilot.pause()
    await pilot.press(*typed)
    await wait_until(pilot, lambda: pilot.app.screen.query_one("CommandList").option_count > 0)
    await pilot.press("enter")


async def escape_to(pilot, screen_type: type) -> None:
    """Press escape and assert the wizard is back on a ``screen_type`` screen."""
    await pilot.press("escape")
    await pilot.pause()
    assert isinstance(pilot.app.screen, screen_type), type(pilot.app.screen).__name__


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
        await pilot.pause()


async def pick_sample(pilot, key: str) -> None:
    """Highlight sample ``key`` in the capture list and press enter.

    The demo flow test walks the list with arrow keys; elsewhere the highlight is set
    directly so each test does not pay for a run of key presses.
    """
    app = pilot.app
    keys = [s.key for s in app.state.samples]
    options = app.screen.query_one("#capture-samples")
    options.focus()
    options.highlighted = keys.index(key)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)


async def open_recipe(pilot, key: str) -> None:
    """From the first screen: load sample ``key`` and go on to the recipe screen."""
    await settle(pilot)
    await pick_sample(pilot, key)
    await pilot.press("n")
    await settle(pilot)


def count_layouts(screen: Any) -> list[None]:
    """A list that grows by one each time ``screen`` is laid out from now on (Textual's
    ``Screen._refresh_layout``: every widget placed again)."""
    layouts: list[None] = []
    refresh_layout = screen._refresh_layout

    def counting(*args: Any, **kwargs: Any) -> None:
        layouts.append(None)
        refresh_layout(*args, **kwargs)

    screen._refresh_layout = counting
    return layouts
