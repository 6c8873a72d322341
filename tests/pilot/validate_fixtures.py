"""Event scripts and sources shared by the dashboard's pilot, snapshot and bench code.

The events are the real ``aicr_tui.core.validation.events`` types, in the order the runner emits
them, so the dashboard is exercised exactly as a live run or a replay would drive it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.widgets import Static

from aicr_tui.core.validation.events import (
    CheckFinished,
    CheckStarted,
    Event,
    LogLine,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from aicr_tui.screens.palette import WizardCommands
from aicr_tui.screens.widgets.bundle_dialogs import ConfirmModal
from tests.simulated import gate


def short_run(log_lines: int = 30) -> list[Event]:
    """A small run: one failed deployment check, one NCCL gate passing 157.29 vs >= 150."""
    events: list[Event] = [
        RunStarted(
            t=0.0,
            run_id="run-0001",
            started_ms=0,
            phases=("deployment", "performance"),
            mode="replay",
            recipe="recipe.yaml",
        ),
        PhaseStarted(t=0.1, phase="deployment", checks=("operator-health", "expected-resources")),
        CheckStarted(t=0.2, phase="deployment", check="operator-health", timeout_s=300),
    ]
    events += [
        LogLine(
            t=0.3, phase="deployment", check="operator-health", line=f"pod gpu-operator-{i} Running"
        )
        for i in range(log_lines)
    ]
    events += [
        CheckFinished(
            t=1.0, phase="deployment", check="operator-health", status="passed", duration_ms=800
        ),
        CheckStarted(t=1.0, phase="deployment", check="expected-resources"),
        LogLine(
            t=1.5,
            phase="deployment",
            check="expected-resources",
            line="DaemonSet nvidia-driver-daemonset in gpu-operator: not found",
        ),
        CheckFinished(
            t=2.0,
            phase="deployment",
            check="expected-resources",
            status="failed",
            message="1 of 7 expected resources missing",
            duration_ms=1000,
        ),
        PhaseFinished(
            t=2.0, phase="deployment", status="failed", passed=1, failed=1, duration_ms=1900
        ),
        PhaseStarted(t=2.0, phase="performance", checks=("nccl-all-reduce-bw",)),
        CheckStarted(t=2.0, phase="performance", check="nccl-all-reduce-bw", timeout_s=1800),
        LogLine(
            t=200.0,
            phase="performance",
            check="nccl-all-reduce-bw",
            line="NCCL All Reduce bandwidth: 157.29 GB/s",
        ),
        gate("nccl-all-reduce-bw", 157.29, "GB/s", ">= 150", "passed", t=200.0),
        CheckFinished(
            t=236.0,
            phase="performance",
            check="nccl-all-reduce-bw",
            status="passed",
            duration_ms=234000,
        ),
        PhaseFinished(t=236.0, phase="performance", status="passed", passed=1, duration_ms=234000),
        RunFinished(
            t=236.0, tests=3, passed=2, failed=1, not_applicable=0, not_measured=0, exit_code=8
        ),
    ]
    return events


def flood(checks: int = 20, lines_per_check: int = 2_000) -> Iterator[Event]:
    """A long, fast run: many log lines per check, for throughput and memory bounds."""
    names = tuple(f"check-{i:02d}" for i in range(checks))
    yield RunStarted(
        t=0.0, run_id="flood", started_ms=0, phases=("performance",), mode="replay", recipe="bench"
    )
    yield PhaseStarted(t=0.0, phase="performance", checks=names)
    t = 0.0
    for name in names:
        yield CheckStarted(t=t, phase="performance", check=name)
        for i in range(lines_per_check):
            t += 0.001
            yield LogLine(t=t, phase="performance", check=name, line=f"{name} step {i} ok")
        yield gate(name, float(lines_per_check), "lines", ">= 1", "passed", t=t)
        yield CheckFinished(t=t, phase="performance", check=name, status="passed", duration_ms=1000)
    yield PhaseFinished(t=t, phase="performance", status="passed", passed=checks)
    yield RunFinished(
        t=t, tests=checks, passed=checks, failed=0, not_applicable=0, not_measured=0, exit_code=0
    )


class ListSource:
    """An event source over a fixed list (or generator) of events."""

    def __init__(self, events: Iterable[Event], *, label: str = "replay") -> None:
        self._events = events
        self.label = label

    async def events(self, cancel: threading.Event) -> AsyncIterator[Event]:
        for n, event in enumerate(self._events):
            if cancel.is_set():
                return
            if n % 512 == 0:
                await asyncio.sleep(0)
            yield event


class FailingSource:
    """A source whose stream fails the way a bad recording does: one AicrError."""

    label = "replay"

    def __init__(self, error: Exception) -> None:
        self._error = error

    async def events(self, cancel: threading.Event) -> AsyncIterator[Event]:
        raise self._error
        yield  # pragma: no cover - makes this an async generator


class ScreenHost(App[None]):
    """A bare app that shows one screen, standing in for the wizard in tests (with the
    wizard's one palette provider, which offers the shown screen's actions)."""

    COMMANDS: ClassVar[set[Any]] = {WizardCommands}

    def __init__(self, make_screen: Any) -> None:
        super().__init__()
        self._make_screen = make_screen
        self.shown: Any = None

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.shown = self._make_screen()
        self.push_screen(self.shown)


async def wait_until(pilot: Any, predicate: Any, *, timeout: float = 10.0) -> None:
    """Let the app run until ``predicate()`` holds (or fail after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


SAMPLES_DIR = (
    Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "validation"
)


async def accept_path_prompt(pilot: Any, key: str) -> None:
    """Press ``key`` (write, save) and accept the output path the prompt offers."""
    await pilot.press(key)
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


async def decline_overwrite(pilot: Any, key: str) -> None:
    """Press ``key``, accept the path, and answer no when asked to replace what is there."""
    await accept_path_prompt(pilot, key)
    assert isinstance(pilot.app.screen, ConfirmModal)
    await pilot.press("n")
    await pilot.pause()


async def run_palette_command(pilot: Any, typed: str) -> None:
    """Open the command palette, type ``typed`` and run the command it offers first."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*typed)
    await pilot.pause(0.5)
    await pilot.press("enter")
