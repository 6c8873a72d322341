"""The Helm engine in a child process, bounded in time and memory.

A chart's templates are a program: ``{{ range until 100000 }}`` inside another, an
``include`` that includes itself twice per level, a ``repeat`` of a billion characters.
So every engine call (loading a chart, checking its schema, rendering it, parsing a
rendered document) runs in one child process (:mod:`aicr_tui.core.verify._engine_child`, started on
first use and kept for the run, so the real charts pay one start-up, not one per render).
The child caps its own memory and CPU (``RLIMIT_AS``/``RLIMIT_CPU``); the parent waits
for each answer only until the chart's wall deadline and then kills the child's process
group. One chart's calls share one deadline (:func:`chart_budget`); once it has passed,
that chart's remaining calls fail at once with the same one line, and the next call starts
a fresh child. Limits: ``aicr_tui.core.foundation.limits`` (charts section).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.limits import (
    RENDER_CPU_FACTOR,
    RENDER_MEMORY_BYTES,
    RENDER_OUTPUT_BYTES,
    RENDER_SECONDS,
)

_HEADER = struct.Struct(">I")
_MAX_ANSWER = 8 * RENDER_OUTPUT_BYTES
_ROOT = str(Path(__file__).resolve().parents[3])
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from aicr_tui.core.verify._engine_child import main; main()"
)


class RenderError(Exception):
    """A template, values or engine error, as one line."""


class RenderLimit(RenderError):
    """The engine overran a limit (time, CPU, memory) and was stopped."""


class EngineMissing(RenderError):
    """``helm_python`` cannot be imported in the child."""


class ChartRefusedError(RenderError):
    """The chart holds a link, a special file or a schema reference verify refuses."""


def _positive_env(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise invalid(f"{name}={text[:40]}: expected a positive number")
    return value


def render_seconds() -> float:
    """The wall budget of one chart (``AICR_TUI_VERIFY_SECONDS``, default 30)."""
    return _positive_env("AICR_TUI_VERIFY_SECONDS", RENDER_SECONDS)


def memory_bytes() -> int:
    """The memory the engine child may add (``AICR_TUI_VERIFY_MEMORY_MIB``, default 1 GiB)."""
    mib = _positive_env("AICR_TUI_VERIFY_MEMORY_MIB", RENDER_MEMORY_BYTES / (1024 * 1024))
    return int(mib * 1024 * 1024)


_local = threading.local()


@contextlib.contextmanager
def chart_budget() -> Iterator[None]:
    """Every engine call inside shares one wall deadline of :func:`render_seconds`
    (nested budgets keep the outer one)."""
    if getattr(_local, "deadline", None) is not None:
        yield
        return
    _local.deadline = time.monotonic() + render_seconds()
    _local.expired = None
    try:
        yield
    finally:
        _local.deadline = None
        _local.expired = None


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024 * 1024) else f"{n >> 30} GiB"


class _Child:
    def __init__(self, memory: int, deadline: float) -> None:
        self.memory = memory
        self.recycle = False
        self.charts: set[int] = set()
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-P", "-c", _CHILD, _ROOT, str(memory)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        try:
            self.version = str(self.answer(deadline, "starting the Helm engine"))
        except BaseException:
            self.kill()
            raise

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def send(self, request: dict[str, Any]) -> None:
        data = json.dumps(request, default=str).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(_HEADER.pack(len(data)) + data)
        self.proc.stdin.flush()

    def _stopped(self, what: str) -> RenderLimit:
        self.kill()
        code = self.proc.returncode
        if code == -signal.SIGXCPU:
            why = "it used more than its CPU time limit"
        else:
            why = (
                f"it ran out of memory (the limit is {_mib(self.memory)} above the engine's own) "
                f"or crashed (exit status {code})"
            )
        return RenderLimit(f"{what}: the Helm engine stopped, {why}")

    def _read(self, sel: selectors.BaseSelector, n: int, deadline: float, what: str) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                self.kill()
                raise RenderLimit(
                    f"{what} did not finish within {render_seconds():g} s (the limit per "
                    "chart); the Helm engine was stopped"
                )
            chunk = os.read(fd, min(n - len(buf), 1 << 20))
            if not chunk:
                raise self._stopped(what)
            buf += chunk
        return bytes(buf)

    def answer(self, deadline: float, what: str) -> Any:
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout.fileno(), selectors.EVENT_READ)
            size = _HEADER.unpack(self._read(sel, _HEADER.size, deadline, what))[0]
            if size > _MAX_ANSWER:
                self.kill()
                raise RenderLimit(f"{what}: the Helm engine's answer is too large")
            body = self._read(sel, size, deadline, what)
        message = json.loads(body)
        if "error" in message:
            kind = message.get("kind")
            text = str(message["error"])
            if kind == "refused":
                raise ChartRefusedError(text)
            if kind == "memory":
                self.kill()
                raise RenderLimit(f"{what}: {text}")
            if what == "starting the Helm engine":
                raise EngineMissing(text)
            raise RenderError(text)
        self.recycle = bool(message.get("recycle"))
        return message.get("ok")


class Engine:
    """The one child, shared by every verifier in the process (calls are serialised)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self._next_id = 0

    def new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def _deadline(self) -> float:
        expired = getattr(_local, "expired", None)
        if expired:
            raise RenderLimit(expired)
        deadline = getattr(_local, "deadline", None)
        return float(deadline) if deadline is not None else time.monotonic() + render_seconds()

    def _live(self, deadline: float) -> _Child:
        memory = memory_bytes()
        child = self._child
        stale = child is not None and (child.memory != memory or child.recycle)
        if child is not None and (stale or child.proc.poll() is not None):
            child.kill()
            child = self._child = None
        if child is None:
            child = self._child = _Child(memory, deadline)
        return child

    def version(self) -> str:
        with self._lock:
            return self._live(self._deadline()).version

    def call(self, op: str, what: str, chart: tuple[int, str] | None = None, **body: Any) -> Any:
        """Run ``op`` in the child; ``chart`` (id, source path) is loaded there first when
        this child has not loaded it yet (a replaced child reloads what it needs)."""
        with self._lock:
            deadline = self._deadline()
            try:
                child = self._live(deadline)
                if chart is not None and chart[0] not in child.charts and op != "load":
                    self._request(child, deadline, f"loading chart {chart[1]}", "load",
                                  {"id": chart[0], "path": chart[1]})  # fmt: skip
                    child.charts.add(chart[0])
                result = self._request(child, deadline, what, op, body)
                if op == "load":
                    child.charts.add(int(body["id"]))
                return result
            except RenderLimit as exc:
                self._child = None
                if getattr(_local, "deadline", None) is not None:
                    _local.expired = str(exc)
                raise

    @staticmethod
    def _request(child: _Child, deadline: float, what: str, op: str, body: dict[str, Any]) -> Any:
        cpu = max(1.0, (deadline - time.monotonic()) * RENDER_CPU_FACTOR)
        try:
            child.send({"op": op, "cpu": cpu, **body})
        except (BrokenPipeError, OSError):
            raise child._stopped(what) from None
        return child.answer(deadline, what)

    def close(self) -> None:
        """End the child: its stdin closes, so it leaves its loop; killed if it lingers."""
        child, self._child = self._child, None
        if child is None:
            return
        with contextlib.suppress(OSError):
            if child.proc.stdin is not None:
                child.proc.stdin.close()
        try:
            child.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()


ENGINE = Engine()
atexit.register(ENGINE.close)


def warm_up() -> None:
    """Start the engine child in a background thread, so its start-up overlaps other work;
    a failure is left for the first real call to report."""

    def start() -> None:
        with contextlib.suppress(Exception):
            ENGINE.version()

    threading.Thread(target=start, name="helm-engine-start", daemon=True).start()
