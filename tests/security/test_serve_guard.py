"""``aicr-tui serve`` refuses foreign Host/Origin, a missing or wrong token, and extra sessions.

The server is the real aiohttp application textual-serve builds, guarded by ``GuardedServer``,
listening on a free loopback port; the clients are real aiohttp HTTP and websocket clients.
A browser page on another site is played by a client that sends that site's ``Origin``; a
DNS-rebinding page by one that sends a foreign ``Host`` to 127.0.0.1. Sessions run a
small stand-in process instead of the wizard (the session cap counts processes, not what they run).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from aicr_tui.cli import build_parser
from aicr_tui.commands import serve
from tests.conftest import _cli_path

TOKEN = "t0k3n-for-tests-only-0123456789abcdef"
SESSION_APP = shlex.join([sys.executable, str(Path(__file__).with_name("fake_session_app.py"))])


def _args(*argv: str) -> Any:
    return build_parser().parse_args(["serve", *argv])


async def _start(*argv: str) -> tuple[Any, web.AppRunner, int]:
    server = serve.build_server(_args("--port", "8000", *argv), token=TOKEN)
    server.command = SESSION_APP
    app = await server._make_app()
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    server.port = port  # the guard compares the Host port with the bound one
    return server, runner, port


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[Any, int]]:
    server, runner, port = await _start("--max-sessions", "1")
    try:
        yield server, port
    finally:
        await runner.cleanup()


async def _get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as response:
            return response.status, await response.text()


async def test_index_needs_the_token(guarded: tuple[Any, int]) -> None:
    _, port = guarded
    assert (await _get(port, "/"))[0] == 403
    assert (await _get(port, "/?token=wrong"))[0] == 403
    assert (await _get(port, f"/?token={TOKEN[:-1]}"))[0] == 403
    assert (await _get(port, "/static/js/textual.js"))[0] == 403
    status, body = await _get(port, f"/?token={TOKEN}")
    assert status == 200
    assert "missing or wrong token" in (await _get(port, "/download/x"))[1]
    assert f"ws://127.0.0.1:{port}/ws" in body


async def test_token_cookie_header_and_localhost_name(guarded: tuple[Any, int]) -> None:
    server, port = guarded
    # Browsers keep cookies for IP hosts; aiohttp's jar needs unsafe=True to do the same.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(f"http://127.0.0.1:{port}/?token={TOKEN}") as response:
            assert response.status == 200
            cookie = response.cookies[server.cookie_name]
            assert cookie["httponly"] and cookie["samesite"] == "Strict"
        # The page's assets load with the cookie alone.
        async with session.get(f"http://127.0.0.1:{port}/static/js/textual.js") as response:
            assert response.status == 200
    headers = {"Authorization": f"token {TOKEN}"}
    assert (await _get(port, "/static/js/textual.js", headers))[0] == 200
    headers["Host"] = f"localhost:{port}"
    status, body = await _get(port, "/", headers)
    assert status == 200 and f"ws://localhost:{port}/ws" in body


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "evil.example",
        "127.0.0.1.evil.example:{port}",
        "127.0.0.1:1",
        "user@127.0.0.1:{port}",
        "",
        "[::1]:{port}",
        "localhost.:{port}",
    ],
)
async def test_foreign_host_is_refused(guarded: tuple[Any, int], host: str) -> None:
    """DNS rebinding: the browser sends the attacker's name as Host to our address."""
    _, port = guarded
    status, body = await _get(port, f"/?token={TOKEN}", {"Host": host.format(port=port)})
    assert status == 403, body
    assert "refused" in body


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://127.0.0.1:1",
        "null",
        "http://localhost.evil.example:{port}",
        "file://",
        "http://127.0.0.1:{port}.evil.example",
    ],
)
async def test_foreign_origin_is_refused_for_http_and_websocket(
    guarded: tuple[Any, int], origin: str
) -> None:
    _, port = guarded
    origin = origin.format(port=port)
    status, _ = await _get(port, f"/?token={TOKEN}", {"Origin": origin})
    assert status == 403
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(
                f"http://127.0.0.1:{port}/ws?token={TOKEN}", headers={"Origin": origin}
            )
        assert refused.value.status == 403


async def test_websocket_needs_the_token(guarded: tuple[Any, int]) -> None:
    server, port = guarded
    async with aiohttp.ClientSession() as session:
        for query in ("", "?token=", "?token=nope"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(
                    f"http://127.0.0.1:{port}/ws{query}",
                    headers={"Origin": f"http://127.0.0.1:{port}"},
                )
            assert refused.value.status == 403
    assert server.sessions == 0


async def test_sessions_beyond_the_cap_are_refused(guarded: tuple[Any, int]) -> None:
    server, port = guarded
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    async with aiohttp.ClientSession() as session:
        first = await session.ws_connect(
            f"http://127.0.0.1:{port}/ws?token={TOKEN}&width=80&height=24", headers=origin
        )
        try:
            assert server.sessions == 1
            for _ in range(3):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(
                        f"http://127.0.0.1:{port}/ws?token={TOKEN}", headers=origin
                    )
                assert refused.value.status == 503
            assert server.sessions == 1
        finally:
            await first.close()
        # A closed session frees its slot.
        for _ in range(100):
            if server.sessions == 0:
                break
            await asyncio.sleep(0.05)
        assert server.sessions == 0


def test_no_token_refused_off_loopback(cli: Any) -> None:
    result = cli("serve", "--host", "0.0.0.0", "--no-token")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "requires the token" in result.stderr
    for bad in (
        ["--max-sessions", "0"],
        ["--max-sessions", "17"],
        ["--public-url", "javascript:x"],
    ):
        result = cli("serve", *bad)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr


def test_no_token_allowed_on_loopback_and_wildcard_needs_public_host() -> None:
    server = serve.build_server(_args("--no-token"))
    assert server.token is None
    server = serve.build_server(_args("--host", "0.0.0.0"))
    assert server.token and len(server.token) >= 40
    assert server.allowed_hosts is None  # token and same-origin guard a wildcard bind
    server = serve.build_server(_args("--host", "0.0.0.0", "--public-url", "https://gpu.example"))
    assert server.allowed_hosts == {"gpu.example"}
    assert serve.build_server(_args()).token != serve.build_server(_args()).token


def test_cli_prints_the_token_url_and_enforces_it() -> None:
    """The real ``aicr-tui serve`` process: the start line carries the URL with the token."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, NO_COLOR="1", TERM="dumb")
    proc = subprocess.Popen(
        [*_cli_path(), "serve", "--port", str(port)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert f"http://127.0.0.1:{port}/?token=" in line, line
        url = line.split(" on ", 1)[1].split()[0]

        async def probe_server() -> tuple[int, int]:
            deadline = time.monotonic() + 20
            while True:
                try:
                    return (await _get(port, "/"))[0], (
                        await _get(port, url.split(str(port), 1)[1])
                    )[0]
                except aiohttp.ClientConnectorError:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.1)

        assert asyncio.run(probe_server()) == (403, 200)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
