"""Shared helpers for the wizard's Pilot tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from aicr_tui.app import AicrApp, create_app


def demo_app(tmp_path: Path | None = None) -> AicrApp:
    app = create_app(demo=True)
    app.state.replay_speed = 0.0  # replay the recorded run as fast as it can be applied
    if tmp_path is not None:
        app.state.output_dir = tmp_path
        app.state.reports_dir = tmp_path / "reports"
    return app


async def settle(pilot, rounds: int = 2) -> None:
    """Let thread workers finish and their messages be handled.

    A superseded exclusive worker reports itself cancelled; that is the expected outcome
    of a newer selection, not a failure.
    """
    from textual.worker import WorkerCancelled

    for _ in range(rounds):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            await pilot.app.workers.wait_for_complete(
                [w for w in pilot.app.workers if not w.is_cancelled]
            )
        await pilot.pause()


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
