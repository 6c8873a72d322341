"""``aicr-tui serve`` against a hostile client: the token never reaches the log, a session's
terminal size is clamped, and an oversized, malformed or flooding websocket closes that
session without growing the server or the wizard.

Most tests run the real aiohttp application textual-serve builds, guarded by
``GuardedServer``, on a free loopback port, with real aiohttp clients; each session runs
``fake_session_app.py`` (it stands in for the wizard process and logs what the server passed
on through its stdin pipe). The access-log and memory tests run the real ``aicr-tui serve``
command in a subprocess, the latter with the real wizard per session.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import WSMsgType, web

from aicr_tui.cli import build_parser
from aicr_tui.commands import serve
from aicr_tui.core.foundation import limits
from tests.conftest import _cli_path

TOKEN = "s3cr3t-token-for-tests-0123456789abcdefXYZ"
SESSION_APP = shlex.join([sys.executable, str(Path(__file__).with_name("fake_session_app.py"))])
MIB = 1024 * 1024
RSS_LIMIT = 256 * MIB


@pytest.fixture
def session_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "session.jsonl"
    monkeypatch.setenv("AICR_FAKE_SESSION_LOG", str(path))
    return path


@pytest.fixture
async def server(session_log: Path) -> AsyncIterator[tuple[Any, int]]:
    guarded = serve.build_server(
        build_parser().parse_args(["serve", "--port", "8000"]), token=TOKEN
    )
    guarded.command = SESSION_APP
    app = await guarded._make_app()
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    guarded.port = port
    try:
        yield guarded, port
    finally:
        for _ in range(100):  # let a closing session's wizard exit before the loop goes
            if guarded.sessions == 0:
                break
            await asyncio.sleep(0.05)
        await runner.cleanup()


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def _wait_for(path: Path, predicate: Any, seconds: float = 10.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    while True:
        events = _events(path)
        if predicate(events) or time.monotonic() > deadline:
            return events
        await asyncio.sleep(0.05)


def _quit_seen(events: list[dict[str, Any]]) -> bool:
    return any(e.get("meta", {}).get("type") == "quit" or e.get("eof") for e in events)


async def _connect(
    session: aiohttp.ClientSession, port: int, query: str = "width=80&height=24"
) -> aiohttp.ClientWebSocketResponse:
    return await session.ws_connect(
        f"http://127.0.0.1:{port}/ws?token={TOKEN}&{query}",
        headers={"Origin": f"http://127.0.0.1:{port}"},
        max_msg_size=0,
    )


async def _until_closed(ws: aiohttp.ClientWebSocketResponse, seconds: float = 10.0) -> int | None:
    """Read until the server closes; the close code (None when it never closed)."""
    try:
        async with asyncio.timeout(seconds):
            async for message in ws:
                if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.ERROR):
                    break
    except TimeoutError:
        return None
    return ws.close_code


# -- terminal size -------------------------------------------------------------------------
LO_W, HI_W = limits.SERVE_COLUMNS
LO_H, HI_H = limits.SERVE_ROWS


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        ("0", "0", (LO_W, LO_H)),
        ("-5", "-99999", (LO_W, LO_H)),
        ("1000000000", "1000000000", (HI_W, HI_H)),
        ("9" * 60, "9" * 60, (HI_W, HI_H)),
        ("abc", "", (80, 24)),
        ("120", "40", (120, 40)),
    ],
)
async def test_start_size_is_clamped(
    server: tuple[Any, int], session_log: Path, width: str, height: str, expected: tuple[int, int]
) -> None:
    _, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port, f"width={width}&height={height}")
        events = await _wait_for(session_log, lambda ev: any("start" in e for e in ev))
        await ws.close()
    start = next(e["start"] for e in events if "start" in e)
    assert (int(start["columns"]), int(start["rows"])) == expected


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (0, 0, (LO_W, LO_H)),
        (-1, -(2**63), (LO_W, LO_H)),
        (10**12, 10**12, (HI_W, HI_H)),
        (200, 60, (200, 60)),
    ],
)
async def test_resize_is_clamped(
    server: tuple[Any, int], session_log: Path, width: int, height: int, expected: tuple[int, int]
) -> None:
    _, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        await ws.send_str(json.dumps(["resize", {"width": width, "height": height}]))
        events = await _wait_for(
            session_log, lambda ev: any(e.get("meta", {}).get("type") == "resize" for e in ev)
        )
        await ws.close()
    resize = next(e["meta"] for e in events if e.get("meta", {}).get("type") == "resize")
    assert (resize["width"], resize["height"]) == expected


# -- malformed and oversized messages ------------------------------------------------------
MALFORMED = [
    "not json",
    "{",
    json.dumps({"stdin": "x"}),
    json.dumps("stdin"),
    json.dumps([]),
    json.dumps([7, "x"]),
    json.dumps(["stdin", 42]),
    json.dumps(["stdin", ["x"]]),
    json.dumps(["resize", {"width": "80", "height": 24}]),
    json.dumps(["resize", {"width": True, "height": 24}]),
    json.dumps(["resize", {"width": 80.5, "height": 24}]),
    json.dumps(["resize", "80x24"]),
    json.dumps(["resize", {}]),
    '["stdin", "\\ud800"]',
    "[" * 20_000 + "]" * 20_000,
    '["resize", {"width": ' + "9" * 5000 + ', "height": 24}]',
    '["ping", ' + "[" * 5000 + "]" * 5000 + "]",
]


@pytest.mark.parametrize("text", MALFORMED, ids=range(len(MALFORMED)))
async def test_malformed_message_closes_the_session(
    server: tuple[Any, int], session_log: Path, text: str
) -> None:
    guarded, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        await ws.send_str(text)
        code = await _until_closed(ws)
    assert code == 1007
    events = await _wait_for(session_log, _quit_seen)
    assert _quit_seen(events), events
    assert not any("data" in e for e in events)
    for _ in range(100):  # the slot is freed once the wizard process has exited
        if guarded.sessions == 0:
            break
        await asyncio.sleep(0.05)
    assert guarded.sessions == 0


@pytest.mark.parametrize(
    "size", [limits.SERVE_MAX_FRAME_BYTES + 1, MIB, 3 * MIB], ids=["cap+1", "1MiB", "3MiB"]
)
async def test_oversized_frame_closes_the_session(
    server: tuple[Any, int], session_log: Path, size: int
) -> None:
    _, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        await ws.send_str(json.dumps(["stdin", "x" * size]))
        code = await _until_closed(ws)
    assert code == 1009
    events = await _wait_for(session_log, _quit_seen)
    assert _quit_seen(events)
    assert not any("data" in e for e in events), "an oversized frame reached the wizard"


async def test_binary_oversized_frame_closes_the_session(
    server: tuple[Any, int], session_log: Path
) -> None:
    _, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        await ws.send_bytes(b"\0" * (2 * MIB))
        assert await _until_closed(ws) == 1009
    assert _quit_seen(await _wait_for(session_log, _quit_seen))


async def test_stdin_over_its_limit_closes_and_a_paste_under_it_passes(
    server: tuple[Any, int], session_log: Path
) -> None:
    _, port = server
    cap = limits.SERVE_MAX_STDIN_BYTES
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        # textual.js sends JSON.stringify's text: non-ASCII as it is, not as \\u escapes.
        await ws.send_str(json.dumps(["stdin", "é" * (cap // 2)], ensure_ascii=False))
        events = await _wait_for(session_log, lambda ev: any("data" in e for e in ev))
        assert [e["data"] for e in events if "data" in e] == [cap]
        await ws.send_str(json.dumps(["stdin", "é" * (cap // 2) + "x"], ensure_ascii=False))
        assert await _until_closed(ws) == 1009
    events = await _wait_for(session_log, _quit_seen)
    assert [e["data"] for e in events if "data" in e] == [cap]


async def test_a_flood_of_small_messages_is_cut_off(
    server: tuple[Any, int], session_log: Path
) -> None:
    _, port = server
    chunk = 16 * 1024
    sent = 0
    started = time.monotonic()
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        try:
            for _ in range(1000):  # 16 MiB as fast as the socket takes it
                await ws.send_str(json.dumps(["stdin", "y" * chunk]))
                sent += chunk
        except (ConnectionError, aiohttp.ClientConnectionError):
            pass
        code = await _until_closed(ws)
    elapsed = time.monotonic() - started
    assert code == 1008
    events = await _wait_for(session_log, _quit_seen)
    delivered = sum(e["data"] for e in events if "data" in e)
    budget = limits.SERVE_INPUT_BURST_BYTES + limits.SERVE_INPUT_BYTES_PER_S * elapsed
    assert delivered <= budget < sent


async def test_a_flood_of_resizes_is_cut_off(server: tuple[Any, int], session_log: Path) -> None:
    _, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        try:
            for i in range(20_000):
                await ws.send_str(json.dumps(["resize", {"width": 80 + i % 2, "height": 24}]))
        except (ConnectionError, aiohttp.ClientConnectionError):
            pass
        assert await _until_closed(ws) == 1008
    events = await _wait_for(session_log, _quit_seen)
    resizes = [e for e in events if e.get("meta", {}).get("type") == "resize"]
    assert len(resizes) < 20_000


async def test_ordinary_traffic_passes(server: tuple[Any, int], session_log: Path) -> None:
    """What textual.js sends: resize, stdin keys, ping (answered), blur and focus."""
    guarded, port = server
    async with aiohttp.ClientSession() as session:
        ws = await _connect(session, port)
        await ws.send_str(json.dumps(["resize", {"width": 100, "height": 30}]))
        for key in "hello\r":
            await ws.send_str(json.dumps(["stdin", key]))
        await ws.send_str(json.dumps(["ping", "1733212800000"]))
        reply = await ws.receive_json(timeout=10)
        assert reply == ["pong", "1733212800000"]
        await ws.send_str(json.dumps(["blur"]))
        await ws.send_str(json.dumps(["focus"]))
        await ws.send_str(json.dumps(["unknown-kind", 1]))
        events = await _wait_for(
            session_log, lambda ev: any(e.get("meta", {}).get("type") == "focus" for e in ev)
        )
        assert not ws.closed
        await ws.close()
    assert [e["data"] for e in events if "data" in e] == [1] * 6
    kinds = [e["meta"]["type"] for e in events if "meta" in e]
    assert kinds[:3] == ["resize", "blur", "focus"]


# -- the real command: the access log and memory ---------------------------------------------
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, str]]:
    """``aicr-tui serve`` on a free port; yields the process, the port and its token."""
    port = _free_port()
    env = {**os.environ, "COLUMNS": "120", "PYTHONUNBUFFERED": "1"}
    out = open(tmp_path / "serve.out", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [*_cli_path(), "serve", "--port", str(port)],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    token = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not token:
        text = (tmp_path / "serve.out").read_text(encoding="utf-8", errors="replace")
        found = re.search(r"\?token=([A-Za-z0-9_-]+)", text)
        if found:
            token = found.group(1)
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) != 0:
                    token = ""
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    try:
        assert token, (tmp_path / "serve.out").read_text(errors="replace")
        yield proc, port, token
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                pass
        # Whatever of the session is left (a wizard still reading a backlog) goes too.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        out.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(20)


async def _raw_get(port: int, path: str, headers: dict[str, str] | None = None) -> int:
    async with aiohttp.ClientSession() as session:
        async with session.get(
            f"http://127.0.0.1:{port}{path}", headers=headers, allow_redirects=False
        ) as response:
            await response.read()
            return response.status


def test_the_access_log_never_holds_the_token(
    serve_process: tuple[subprocess.Popen[bytes], int, str], tmp_path: Path
) -> None:
    proc, port, token = serve_process
    near_miss = token[:-1] + ("A" if token[-1] != "A" else "B")

    async def requests() -> list[int]:
        return [
            await _raw_get(port, f"/?token={near_miss}"),  # refused: logged with its query
            await _raw_get(port, f"/download/x?token={near_miss}&a=1"),
            await _raw_get(port, f"/?token={token}"),
            await _raw_get(
                port,
                "/static/js/textual.js",
                {"Referer": f"http://127.0.0.1:{port}/?token={token}", "Cookie": "x=1"},
            ),
            await _raw_get(port, f"/?fontsize=16&token={token}"),
            await _raw_get(port, "/%1b]0;owned%07%1b[2J?x=1", {"Authorization": f"token {token}"}),
        ]

    statuses = asyncio.run(requests())
    assert statuses[0] == 403 and statuses[2] == 200 and statuses[3] == 403
    _stop(proc)
    log = (tmp_path / "serve.out").read_text(encoding="utf-8", errors="replace")
    startup, _, access = log.partition("\n")
    assert token in startup  # the start URL, printed once for the user
    assert token not in access and near_miss not in access
    assert token[:16] not in access and near_miss[:16] not in access
    # The log still says what happened, one line per request, without control characters.
    lines = [line for line in access.splitlines() if "GET" in line]
    assert len(lines) == len(statuses), access
    for line, status in zip(lines, statuses, strict=True):
        assert re.search(rf'"GET [^ ?"]*" {status} ', line), line
    assert "\x1b" not in access and "\x07" not in access


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def test_huge_frames_to_the_real_wizard_stay_bounded(
    serve_process: tuple[subprocess.Popen[bytes], int, str],
) -> None:
    """A few 3 MiB stdin frames (under aiohttp's default 4 MiB cap) once took the wizard past
    3 GiB; now the first one closes the session. The peak RSS of the server and of every
    process it started is sampled from /proc while the session runs."""
    proc, port, token = serve_process
    peaks: dict[int, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for pid in _tree(proc.pid):
                peaks[pid] = max(peaks.get(pid, 0), _hwm(pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    async def attack() -> int | None:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(
                f"http://127.0.0.1:{port}/ws?token={token}&width=100&height=30",
                headers={"Origin": f"http://127.0.0.1:{port}"},
                max_msg_size=0,
            )
            first = await ws.receive(timeout=60)  # the wizard drew its first screen
            assert first.type == WSMsgType.BINARY
            for _ in range(4):
                try:
                    await ws.send_str(json.dumps(["stdin", "jk" * (3 * MIB // 2)]))
                except (ConnectionError, aiohttp.ClientConnectionError):
                    break
            return await _until_closed(ws, 60)

    try:
        code = asyncio.run(attack())
        # The closed session's wizard exits (sampled all the while); the server keeps serving.
        deadline = time.monotonic() + 30
        while len(_tree(proc.pid)) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        sampler.join()
    assert len(peaks) >= 2, "the wizard process was never seen"
    assert max(peaks.values()) <= RSS_LIMIT, {pid: peak // MIB for pid, peak in peaks.items()}
    # 1009 from the server; 1006 when the close lands while the client is still sending.
    assert code in (1009, 1006)
    assert _tree(proc.pid) == [proc.pid]
    assert asyncio.run(_raw_get(port, f"/?token={token}")) == 200


# -- the gate alone, on a clock the test moves ------------------------------------------------
def test_gate_rate_refills_with_time() -> None:
    from aicr_tui.commands.serve_session import Forward, InputGate, Refuse

    now = [0.0]
    gate = InputGate(clock=lambda: now[0])
    key = json.dumps(["stdin", "k" * 1000])
    sent = 0
    while isinstance(gate.text(key), Forward):
        sent += 1
        assert sent < 10_000
    # The burst is spent (the bytes bucket, 1 MiB, at ~1 KiB a message) ...
    assert sent * len(key) <= limits.SERVE_INPUT_BURST_BYTES
    assert sent * len(key) > limits.SERVE_INPUT_BURST_BYTES - 2 * len(key)
    # ... and refills at the documented rate: one second buys SERVE_INPUT_BYTES_PER_S more.
    now[0] += 1.0
    more = 0
    while isinstance(gate.text(key), Forward):
        more += 1
    assert abs(more * len(key) - limits.SERVE_INPUT_BYTES_PER_S) <= 2 * len(key)
    refused = gate.text(key)
    assert isinstance(refused, Refuse) and refused.code == 1008


def test_gate_message_count_limit() -> None:
    from aicr_tui.commands.serve_session import Forward, InputGate, Refuse

    now = [0.0]
    gate = InputGate(clock=lambda: now[0])
    focus = json.dumps(["focus"])
    results = [gate.text(focus) for _ in range(limits.SERVE_MESSAGES_BURST + 1)]
    assert all(isinstance(r, Forward) for r in results[:-1])
    assert isinstance(results[-1], Refuse) and "messages a second" in results[-1].reason
    now[0] += 1.0
    assert isinstance(gate.text(focus), Forward)


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (None, None, (80, 24)),
        ("+100", "30", (100, 30)),
        ("-0", "1e3", (LO_W, 24)),
        ("٣", "x", (80, 24)),
    ],
)
def test_query_size(width: str | None, height: str | None, expected: tuple[int, int]) -> None:
    from aicr_tui.commands.serve_session import query_size

    assert query_size(width, height) == expected
