"""One browser session of ``aicr-tui serve``: every websocket message is checked before the
wizard process sees it, and the access log never names a token.

textual-serve forwards whatever a browser sends: a 3 MiB ``stdin`` frame becomes millions of
key events the wizard queues faster than it handles them (its memory grows by ~25 MiB/s), a
terminal size of 10**12 columns is passed on as it is, and a message that is not JSON ends
in a logged traceback. :class:`InputGate` decides about each message with the limits of
``aicr_tui.core.foundation.limits`` (``SERVE_*``); :func:`run_session` drives one session with it and
closes the websocket (1007 malformed, 1008 over the rate, 1009 too big) on the first message
that breaks one, so the wizard is told to quit and never receives it.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.foundation.limits import (
    SERVE_COLUMNS,
    SERVE_INPUT_BURST_BYTES,
    SERVE_INPUT_BYTES_PER_S,
    SERVE_MAX_FRAME_BYTES,
    SERVE_MAX_STDIN_BYTES,
    SERVE_MESSAGES_BURST,
    SERVE_MESSAGES_PER_S,
    SERVE_ROWS,
)
from aicr_tui.core.foundation.textsafe import escape_controls

log = logging.getLogger("aicr-tui.serve")

CLOSE_MALFORMED = 1007
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
DEFAULT_SIZE = (80, 24)
MAX_PING_CHARS = 64


def clamp(value: int, bounds: tuple[int, int]) -> int:
    low, high = bounds
    return max(low, min(high, value))


def query_size(width: str | None, height: str | None) -> tuple[int, int]:
    """The start size from the websocket URL: clamped, the default where it is not a number."""

    def one(text: str | None, default: int, bounds: tuple[int, int]) -> int:
        text = (text or "").strip()
        # A sign and up to 12 digits; anything longer is "huge" without Python parsing it.
        body = text[1:] if text[:1] in "+-" else text
        if not body.isascii() or not body.isdigit():
            return default
        if len(body) > 12:
            return bounds[0] if text.startswith("-") else bounds[1]
        return clamp(int(text), bounds)

    return one(width, DEFAULT_SIZE[0], SERVE_COLUMNS), one(height, DEFAULT_SIZE[1], SERVE_ROWS)


@dataclass(frozen=True)
class Forward:
    """What to pass to the wizard: ``kind`` is stdin/resize/ping/blur/focus, or ignore."""

    kind: str
    data: Any = None


@dataclass(frozen=True)
class Refuse:
    """Close the session with ``code``; ``reason`` is one line for the log and the peer."""

    code: int
    reason: str


class _Bucket:
    """A token bucket: ``rate`` per second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: float, clock: Any) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.level = burst
        self.stamp = clock()

    def take(self, amount: float) -> bool:
        now = self.clock()
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if amount > self.level:
            return False
        self.level -= amount
        return True


class InputGate:
    """Checks each websocket message of one session against the ``SERVE_*`` limits."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.bytes = _Bucket(SERVE_INPUT_BYTES_PER_S, SERVE_INPUT_BURST_BYTES, clock)
        self.messages = _Bucket(SERVE_MESSAGES_PER_S, SERVE_MESSAGES_BURST, clock)

    def _rate(self, size: int) -> Refuse | None:
        if not self.messages.take(1):
            return Refuse(
                CLOSE_POLICY,
                f"more than {SERVE_MESSAGES_PER_S} messages a second "
                f"(burst {SERVE_MESSAGES_BURST})",
            )
        if not self.bytes.take(size):
            return Refuse(
                CLOSE_POLICY,
                f"more than {SERVE_INPUT_BYTES_PER_S // 1024} KiB a second of input "
                f"(burst {SERVE_INPUT_BURST_BYTES // 1024} KiB)",
            )
        return None

    def binary(self, size: int) -> Forward | Refuse:
        """A binary frame: the browser client sends none; counted, then ignored."""
        return self._rate(size) or Forward("ignore")

    def text(self, text: str) -> Forward | Refuse:
        """A text frame: a JSON ``[type, data]`` envelope as textual.js sends it."""
        size = len(text)  # characters; at most SERVE_MAX_FRAME_BYTES (the frame cap)
        refused = self._rate(size)
        if refused is not None:
            return refused
        try:
            envelope = json.loads(text)
        except (ValueError, RecursionError):
            return Refuse(CLOSE_MALFORMED, "a message that is not JSON")
        if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
            return Refuse(CLOSE_MALFORMED, "a message that is not a [type, data] list")
        kind = envelope[0]
        data = envelope[1] if len(envelope) > 1 else None
        if kind == "stdin":
            return self._stdin(data)
        if kind == "resize":
            return self._resize(data)
        if kind == "ping":
            if not isinstance(data, str | int | float) or isinstance(data, bool):
                return Refuse(CLOSE_MALFORMED, "a ping whose data is not a string or number")
            if len(str(data)) > MAX_PING_CHARS:
                return Refuse(CLOSE_MALFORMED, f"a ping longer than {MAX_PING_CHARS} characters")
            return Forward("ping", data)
        if kind in ("blur", "focus"):
            return Forward(kind)
        return Forward("ignore")

    @staticmethod
    def _stdin(data: Any) -> Forward | Refuse:
        if not isinstance(data, str):
            return Refuse(CLOSE_MALFORMED, "stdin data that is not text")
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            return Refuse(CLOSE_MALFORMED, "stdin data holding a lone surrogate")
        if len(raw) > SERVE_MAX_STDIN_BYTES:
            return Refuse(
                CLOSE_TOO_BIG,
                f"a stdin message of {len(raw)} bytes; at most {SERVE_MAX_STDIN_BYTES}",
            )
        return Forward("stdin", raw)

    @staticmethod
    def _resize(data: Any) -> Forward | Refuse:
        if not isinstance(data, dict):
            return Refuse(CLOSE_MALFORMED, "a resize whose data is not an object")
        width, height = data.get("width"), data.get("height")
        for value in (width, height):
            if not isinstance(value, int) or isinstance(value, bool):
                return Refuse(CLOSE_MALFORMED, "a resize whose width or height is not an integer")
        assert isinstance(width, int) and isinstance(height, int)
        return Forward("resize", (clamp(width, SERVE_COLUMNS), clamp(height, SERVE_ROWS)))


async def pump(websocket: Any, app_service: Any, peer: str) -> None:
    """Pass checked messages from ``websocket`` to ``app_service`` until one breaks a limit
    (the websocket is then closed with its code) or the browser goes away."""
    from aiohttp import WSMsgType

    gate = InputGate()
    async for message in websocket:
        if message.type == WSMsgType.TEXT:
            decision = gate.text(message.data)
        elif message.type == WSMsgType.BINARY:
            decision = gate.binary(len(message.data))
        elif message.type == WSMsgType.ERROR:
            # aiohttp reports a frame over max_msg_size here, after closing with 1009.
            log.warning(
                "aicr-tui serve: session from %s closed: %s",
                peer,
                escape_controls(str(websocket.exception()))[:200],
            )
            return
        else:
            continue
        if isinstance(decision, Refuse):
            log.warning("aicr-tui serve: session from %s closed: %s", peer, decision.reason)
            await websocket.close(code=decision.code, message=decision.reason.encode()[:120])
            return
        if decision.kind == "stdin":
            await app_service.send_bytes(decision.data)
        elif decision.kind == "resize":
            await app_service.set_terminal_size(*decision.data)
        elif decision.kind == "ping":
            await websocket.send_json(["pong", decision.data])
        elif decision.kind == "blur":
            await app_service.blur()
        elif decision.kind == "focus":
            await app_service.focus()


async def run_session(server: Any, request: Any) -> Any:
    """One websocket session: the wizard process at a clamped size, driven by :func:`pump`."""
    from aiohttp import web
    from textual_serve.app_service import AppService

    websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=SERVE_MAX_FRAME_BYTES)
    width, height = query_size(request.query.get("width"), request.query.get("height"))
    peer = escape_controls(str(request.remote or "?"))
    await websocket.prepare(request)

    async def close() -> None:  # the wizard exited: end the browser's side too
        await websocket.close()

    app_service = AppService(
        server.command,
        write_bytes=websocket.send_bytes,
        write_str=websocket.send_str,
        close=close,
        download_manager=server.download_manager,
        debug=server.debug,
    )
    await app_service.start(width, height)
    try:
        await pump(websocket, app_service, peer)
    finally:
        await app_service.stop()
        if not websocket.closed:
            await websocket.close()
    return websocket


def make_access_logger(token: str | None) -> type:
    """An aiohttp access logger that writes the peer, the method, the raw path without its
    query string, the status and the size: no query (``?token=``), no Referer (the page URL
    with its token), no header; the token is masked should it appear in the path, and
    control characters are escaped."""
    from aiohttp.abc import AbstractAccessLogger

    class RedactedAccessLogger(AbstractAccessLogger):
        def log(self, request: Any, response: Any, time: float) -> None:
            path = request.rel_url.raw_path
            if token:
                path = path.replace(token, "<token>")
            self.logger.info(
                '%s "%s %s" %s %s',
                escape_controls(str(request.remote or "-")),
                escape_controls(request.method),
                escape_controls(path).replace('"', "%22"),
                response.status,
                response.body_length,
            )

    return RedactedAccessLogger
