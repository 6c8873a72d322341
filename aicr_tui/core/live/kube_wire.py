"""Wire limits for the kubernetes client's connections: what a hostile API server can send.

The kubernetes client reads a reply through urllib3 over ``http.client``. ``http.client``
already bounds the head: a status or header line of at most 65,536 bytes (``_MAXLINE``)
and at most 100 headers (``_MAXHEADERS``), checked for the interim ``100 Continue`` heads
too, and urllib3 2.x parses through it without bypassing either. It does not bound the
rest, so a server could keep a capture busy or take the host's memory:

- ``100 Continue`` heads are skipped in a loop without end: at most
  ``MAX_INTERIM_RESPONSES`` are skipped here, then the reply is refused;
- the body is read whole (urllib3's ``.data``): at most ``MAX_API_RESPONSE_BYTES`` are
  read, on the wire and again once decompressed; a ``Content-Length`` or a chunk size
  above it is refused before reading, and a negative chunk size (which ``http.client``
  turns into "read to the end") is refused as malformed;
- urllib3 decompresses a ``Content-Encoding: gzip`` body in one piece (10 GiB of zeros
  arrive as 10 MB). The client never asks for compression (it sends no
  ``Accept-Encoding``), but a server or proxy may compress anyway: gzip and deflate are
  decoded here, in pieces, within the cap, and the header is removed so urllib3 does not
  decode again; any other encoding (``br``, ``zstd``, a chain) is refused.

A reply refused by a limit raises :class:`ReplyRefused` (an ``http.client.HTTPException``,
which urllib3 wraps as a ``ProtocolError``); ``aicr_tui.core.live.kube`` reports it in one line,
exit 6. :func:`bounded_client` puts these limits on an ``ApiClient``'s connections (its
own pool classes, so nothing global is patched).
"""

from __future__ import annotations

import http.client
import zlib
from typing import Any

from aicr_tui.core.foundation.limits import MAX_API_RESPONSE_BYTES, MAX_INTERIM_RESPONSES

CHUNK_BYTES = 64 * 1024
_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class ReplyRefused(http.client.HTTPException):
    """A reply refused by one of the wire limits; the message says which."""


def refused_reply(exc: BaseException | None) -> ReplyRefused | None:
    """The :class:`ReplyRefused` behind ``exc`` (urllib3 wraps it once or twice), or None."""
    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ReplyRefused):
            return item
        todo.extend((getattr(item, "reason", None), item.__cause__, item.__context__, *item.args))
    return None


def retry_after(headers: Any) -> str:
    """The ``Retry-After`` header of a reply, made printable (at most 40 characters), or ""."""
    if headers is None:
        return ""
    try:
        value = headers.get("Retry-After")
    except (AttributeError, TypeError):
        return ""
    text = "".join(ch for ch in str(value or "") if ch.isprintable())
    return " ".join(text.split())[:40]


def transport_reason(exc: BaseException) -> str:
    """What went wrong on the wire, in a few words, without the client library's internals
    (no pool, connection-object or class names): the innermost OS error's text (for
    example "Connection refused"), a timeout, a wire limit, or a connection cut mid-reply."""
    hostile = refused_reply(exc)
    if hostile is not None:
        return str(hostile)
    seen: set[int] = set()
    todo: list[Any] = [exc]
    found: list[BaseException] = []
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        found.append(item)
        todo.extend((getattr(item, "reason", None), item.__cause__, item.__context__, *item.args))
    for item in found:
        if isinstance(item, TimeoutError) or "timed out" in str(item).lower():
            return "no answer in time (read timed out)"
    for item in found:
        if isinstance(item, OSError) and item.strerror:
            return " ".join(str(item.strerror).split())[:120]
    for item in found:
        if isinstance(item, http.client.IncompleteRead):
            return "the connection was closed in the middle of the reply"
        if isinstance(item, http.client.RemoteDisconnected | ConnectionError):
            return "the server closed the connection without a reply"
        if isinstance(item, http.client.HTTPException | ValueError):
            return "the reply is not well-formed HTTP"
    return "the connection failed"


class BoundedHTTPResponse(http.client.HTTPResponse):
    """``http.client``'s response with the limits of the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._interim = 0
        self._raw_total = 0
        self._decoded_total = 0
        self._decoder: Any = None
        self._encoding = ""
        self._raw_done = False

    def _read_status(self) -> Any:
        version, status, reason = super()._read_status()  # type: ignore[misc]
        if status == http.client.CONTINUE:
            self._interim += 1
            if self._interim > MAX_INTERIM_RESPONSES:
                raise ReplyRefused(
                    f"the server sent more than {MAX_INTERIM_RESPONSES} interim "
                    "100 Continue responses"
                )
        return version, status, reason

    def begin(self) -> None:
        super().begin()
        if self.length is not None and self.length > MAX_API_RESPONSE_BYTES:
            raise ReplyRefused(
                f"the reply declares a body of {self.length} bytes; at most "
                f"{MAX_API_RESPONSE_BYTES} are read"
            )
        encodings = [
            part.strip().lower()
            for value in self.msg.get_all("Content-Encoding") or []
            for part in str(value).split(",")
            if part.strip()
        ]
        encodings = [e for e in encodings if e != "identity"]
        if not encodings:
            return
        if len(encodings) > 1 or encodings[0] not in _DECODERS:
            raise ReplyRefused(
                f"the reply is encoded as {', '.join(encodings)[:60]!r}; only gzip or deflate "
                "is decoded"
            )
        self._encoding = encodings[0]
        self._decoder = zlib.decompressobj(_DECODERS[encodings[0]])
        del self.msg["Content-Encoding"]
        del self.msg["Content-Length"]

    def _read_next_chunk_size(self) -> int:
        size = int(super()._read_next_chunk_size())  # type: ignore[misc]
        if size < 0:
            raise ValueError(f"negative chunk size {size}")
        if size > MAX_API_RESPONSE_BYTES:
            raise ReplyRefused(
                f"the reply announces a chunk of {size} bytes; at most "
                f"{MAX_API_RESPONSE_BYTES} are read"
            )
        return size

    def _raw(self, amt: int) -> bytes:
        data = super().read(min(amt, CHUNK_BYTES))
        self._raw_total += len(data)
        if self._raw_total > MAX_API_RESPONSE_BYTES:
            raise ReplyRefused(f"the reply body is larger than {MAX_API_RESPONSE_BYTES} bytes")
        return data

    def _decoded(self, amt: int) -> bytes:
        decoder = self._decoder
        limit = min(amt, CHUNK_BYTES)
        while True:
            try:
                if decoder.unconsumed_tail:
                    out = decoder.decompress(decoder.unconsumed_tail, limit)
                elif decoder.eof or self._raw_done:
                    return b""
                else:
                    raw = self._raw(CHUNK_BYTES)
                    if raw:
                        out = decoder.decompress(raw, limit)
                    else:
                        self._raw_done = True
                        out = decoder.flush()
                        if not decoder.eof:
                            raise ReplyRefused(
                                f"the reply is marked Content-Encoding {self._encoding} but "
                                f"its body is not {self._encoding} data (it ends before the "
                                "compressed stream does)"
                            )
            except zlib.error as exc:
                raise ReplyRefused(
                    f"the reply is marked Content-Encoding {self._encoding} but its body "
                    f"is not {self._encoding} data ({' '.join(str(exc).split())[:80]})"
                ) from None
            self._decoded_total += len(out)
            if self._decoded_total > MAX_API_RESPONSE_BYTES:
                raise ReplyRefused(
                    f"the reply body is larger than {MAX_API_RESPONSE_BYTES} bytes once "
                    "decompressed"
                )
            if out:
                return bytes(out)

    def read(self, amt: int | None = None) -> bytes:
        step = self._raw if self._decoder is None else self._decoded
        if amt is not None:
            return step(amt) if amt > 0 else b""
        parts: list[bytes] = []
        while part := step(CHUNK_BYTES):
            parts.append(part)
        return b"".join(parts)

    def read1(self, n: int = -1) -> bytes:
        return self.read(CHUNK_BYTES if n is None or n < 0 else n)


def _pool_classes() -> dict[str, Any]:
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class BoundedHTTPConnection(HTTPConnection):
        response_class = BoundedHTTPResponse

    class BoundedHTTPSConnection(HTTPSConnection):
        response_class = BoundedHTTPResponse

    class BoundedHTTPConnectionPool(HTTPConnectionPool):
        ConnectionCls = BoundedHTTPConnection

    class BoundedHTTPSConnectionPool(HTTPSConnectionPool):
        ConnectionCls = BoundedHTTPSConnection

    return {"http": BoundedHTTPConnectionPool, "https": BoundedHTTPSConnectionPool}


_POOLS: list[dict[str, Any]] = []


def bounded_client(api: Any) -> Any:
    """``api`` (a kubernetes ``ApiClient``) with its connections under the wire limits."""
    if not _POOLS:
        _POOLS.append(_pool_classes())
    api.rest_client.pool_manager.pool_classes_by_scheme = dict(_POOLS[0])
    return api
