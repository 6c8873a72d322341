"""``aicr-tui serve`` offline (issue 34, item 9): the page loads nothing from another host
(textual-serve's page asked a web font service for its font, so offline the palette's icon
was an empty box), it has a favicon, and the access log is one plain line per request,
without padding."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import threading
import time
from urllib.parse import urlsplit

import aiohttp

from tests.conftest import REPO, _cli_path
from tests.security.test_serve_guard import TOKEN, _start

REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url\(\s*["']?([^"')]+)""")


async def _page_and_icon() -> tuple[str, int, tuple[int, str, str]]:
    server, runner, port = await _start()
    try:
        # The page load sets the token cookie the browser then sends with the icon request
        # (an IP-address host needs the jar's unsafe mode to keep it).
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar) as session:
            async with session.get(f"http://127.0.0.1:{port}/?token={TOKEN}") as response:
                assert response.status == 200
                page = await response.text()
            async with session.get(f"http://127.0.0.1:{port}/favicon.ico") as response:
                icon = (response.status, response.content_type, await response.text())
        return page, port, icon
    finally:
        await runner.cleanup()


def test_the_page_loads_nothing_from_another_host_and_has_a_favicon() -> None:
    page, port, (status, content_type, body) = asyncio.run(_page_and_icon())
    references = [a or b for a, b in REFERENCE.findall(page)]
    assert references  # the stylesheet, the script, the fonts, the background, the icon
    for ref in references:
        if ref.startswith("http://www.w3.org/"):
            continue  # an SVG namespace name, never fetched
        parts = urlsplit(ref)
        assert not parts.netloc or parts.netloc == f"127.0.0.1:{port}", ref
    assert "googleapis" not in page and "fonts.g" not in page
    assert re.search(r'url\("[^"]*/static/fonts/RobotoMono-VariableFont_wght\.ttf"\)', page)
    assert '<link rel="icon"' in page
    assert (status, content_type) == (200, "image/svg+xml")
    assert body.startswith("<svg")


def test_the_access_log_is_one_plain_line_per_request() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, NO_COLOR="1", TERM="dumb", PYTHONPATH=str(REPO), COLUMNS="120")
    proc = subprocess.Popen(
        [*_cli_path(), "serve", "--port", str(port), "--no-token"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:

        async def fetch() -> None:
            deadline = time.monotonic() + 30
            while True:
                try:
                    async with aiohttp.ClientSession() as session:
                        for path in ("/", "/favicon.ico"):
                            async with session.get(f"http://127.0.0.1:{port}{path}") as r:
                                assert r.status == 200
                    return
                except aiohttp.ClientConnectorError:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.1)

        asyncio.run(fetch())
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
    logged = [line.rstrip("\n") for line in lines if '"GET ' in line]
    assert logged[-2:] == [
        '127.0.0.1 "GET /" 200 ' + logged[-2].rsplit(" ", 1)[1],
        '127.0.0.1 "GET /favicon.ico" 200 ' + logged[-1].rsplit(" ", 1)[1],
    ]
    for line in logged:
        assert line == line.rstrip(), repr(line)
        assert not line.startswith("INFO")
