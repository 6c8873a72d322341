"""A hostile Kubernetes API server cannot make a live capture hang, blow up or lie.

``HostileApiServer`` stands in for a hostile (or broken) kube-apiserver: a raw-socket
server on 127.0.0.1 that answers ``/version`` and the DaemonSet read normally and answers
``GET /api/v1/nodes`` (or ``/version``) with one hostile reply: a document nested deeper
than ``MAX_NESTING_DEPTH``, fields of the wrong type, a huge or malformed chunk size, a
gzip decompression bomb (10 GiB of zeros in about 10 MB on the wire), a 1 MiB header or
hundreds of headers, an endless stream of ``HTTP/1.1 100 Continue``, or a body that never
ends. Each case runs ``aicr-tui snapshot -k`` in a subprocess, as a user would, and must end
with one line and exit 6 (a bad server) within the subprocess timeout, with nothing
written, its peak RSS (the child's sampled ``VmHWM``) within 256 MiB. An address-space limit of 2 GiB on
the child keeps a regression from taking the machine's memory with it.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.limits import MAX_API_RESPONSE_BYTES, MAX_NESTING_DEPTH
from tests.conftest import _cli_path
from tests.unit.live_fakes import write_kubeconfig

VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.2", "platform": "linux/amd64"}
MAX_RSS_BYTES = 256 * 1024 * 1024
ADDRESS_SPACE_BYTES = 2 * 1024 * 1024 * 1024
RUN_TIMEOUT_S = 90.0
DEADLINE_S = "30"
MIB = 1024 * 1024

Writer = Callable[[socket.socket], None]


def _json_reply(body: bytes, status: str = "200 OK", extra: bytes = b"") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )


def _node(**changes: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "metadata": {"name": "gpu-0", "labels": {"nvidia.com/gpu.present": "true"}},
        "spec": {"providerID": "azure:///x", "taints": [{"key": "sku", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": "8"},
            "nodeInfo": {"kernelVersion": "6.8.0", "osImage": "Ubuntu 24.04.3 LTS"},
        },
    }
    for path, value in changes.items():
        target = node
        *parents, last = path.split("__")
        for part in parents:
            target = target[part]
        target[last] = value
    return node


def _node_list(*items: Any, **top: Any) -> bytes:
    doc: dict[str, Any] = {"kind": "NodeList", "metadata": {}, "items": list(items)}
    doc.update(top)
    return json.dumps(doc).encode()


def _send(body: bytes, **kw: Any) -> Writer:
    return lambda conn: conn.sendall(_json_reply(body, **kw))


def _nested(depth: int) -> bytes:
    return b'{"kind":"NodeList","items":[' + b"[" * depth + b"]" * depth + b"]}"


def _chunked(first_size_line: bytes, rest: bytes = b"") -> Writer:
    def write(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + first_size_line + b"\r\n" + rest
        )
        _drain(conn, 5.0)

    return write


def _read_head(conn: socket.socket) -> bytes | None:
    """One request head from ``conn``; None when the client closed it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def _drain(conn: socket.socket, seconds: float) -> None:
    """Keep the connection open (without sending) until the client goes or ``seconds``."""
    conn.settimeout(seconds)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        return


def _stream(head: bytes, blocks: Iterator[bytes]) -> Writer:
    def write(conn: socket.socket) -> None:
        conn.sendall(head)
        for block in blocks:
            conn.sendall(block)

    return write


def _gzip_bomb_blocks(total: int) -> Iterator[bytes]:
    """A gzip stream of ``total`` zero bytes, made lazily from one repeated deflate block."""
    zeros = bytes(MIB)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    yield first
    for _ in range(total // MIB - 1):
        yield block
    yield packer.flush()


def _gzip_head() -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )


def _endless(block: bytes, first: bytes = b"", limit: int = 1024 * MIB) -> Iterator[bytes]:
    """``first`` then ``block`` again and again, up to ``limit`` bytes (an attacker would
    not stop; the limit only spares the machine when a regression reads everything)."""
    yield first
    sent = len(first)
    while sent < limit:
        yield block
        sent += len(block)


def _many_headers(count: int) -> Writer:
    extra = b"".join(b"X-H%d: v\r\n" % i for i in range(count))
    return _send(_node_list(_node()), extra=extra)


CASES: dict[str, tuple[str, Writer]] = {
    # nesting
    "nested-150-levels": ("/api/v1/nodes", _send(_nested(MAX_NESTING_DEPTH + 50))),
    "nested-100000-levels": ("/api/v1/nodes", _send(_nested(100_000))),
    "nested-in-version": ("/version", _send(b'{"gitVersion":' + b"[" * 5000 + b"]" * 5000 + b"}")),
    # wrong types where the capture reads fields
    "capacity-a-string": ("/api/v1/nodes", _send(_node_list(_node(status__capacity="lots")))),
    "allocatable-a-list": ("/api/v1/nodes", _send(_node_list(_node(status__allocatable=[1])))),
    "gpu-count-an-object": (
        "/api/v1/nodes",
        _send(_node_list(_node(status__allocatable={"nvidia.com/gpu": {"n": 8}}))),
    ),
    "labels-a-list": ("/api/v1/nodes", _send(_node_list(_node(metadata__labels=[1, 2])))),
    "label-value-an-object": (
        "/api/v1/nodes",
        _send(_node_list(_node(metadata__labels={"nvidia.com/gpu.product": {"x": 1}}))),
    ),
    "metadata-a-string": ("/api/v1/nodes", _send(_node_list(_node(metadata="m")))),
    "name-an-object": ("/api/v1/nodes", _send(_node_list(_node(metadata__name={"a": 1})))),
    "status-a-list": ("/api/v1/nodes", _send(_node_list(_node(status=[1])))),
    "nodeinfo-a-string": ("/api/v1/nodes", _send(_node_list(_node(status__nodeInfo="x")))),
    "kernel-a-number": (
        "/api/v1/nodes",
        _send(_node_list(_node(status__nodeInfo={"kernelVersion": 6.8}))),
    ),
    "spec-a-number": ("/api/v1/nodes", _send(_node_list(_node(spec=7)))),
    "taints-a-string": ("/api/v1/nodes", _send(_node_list(_node(spec__taints="sku")))),
    "taint-key-a-list": ("/api/v1/nodes", _send(_node_list(_node(spec__taints=[{"key": []}])))),
    "items-a-string": ("/api/v1/nodes", _send(_node_list(items="x"))),
    "item-a-number": ("/api/v1/nodes", _send(_node_list(5))),
    "list-metadata-a-list": ("/api/v1/nodes", _send(_node_list(_node(), metadata=[1]))),
    "continue-an-object": (
        "/api/v1/nodes",
        _send(_node_list(_node(), metadata={"continue": {"a": 1}})),
    ),
    "git-version-an-object": ("/version", _send(json.dumps({"gitVersion": {"a": 1}}).encode())),
    "version-a-list": ("/version", _send(b"[1, 2]")),
    "label-key-too-long": (
        "/api/v1/nodes",
        _send(_node_list(_node(metadata__labels={"k" * 400: "v"}))),
    ),
    "too-many-label-keys": (
        "/api/v1/nodes",
        _send(_node_list(_node(metadata__labels={f"key-{i}": "v" for i in range(10_001)}))),
    ),
    # transfer framing
    "chunk-size-huge": ("/api/v1/nodes", _chunked(b"f" * 40, b"{}")),
    "chunk-size-malformed": ("/api/v1/nodes", _chunked(b"zz;", b"{}")),
    "chunk-size-negative": ("/api/v1/nodes", _chunked(b"-10", b"{}")),
    "content-length-huge": (
        "/api/v1/nodes",
        lambda c: (
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 30 + b"\r\n\r\n{}"),
            _drain(c, 5.0),
        ),
    ),
    "body-never-ends": (
        "/api/v1/nodes",
        _stream(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
            _endless(b"0," * 32768, b'{"kind":"NodeList","items":['),
        ),
    ),
    "empty-objects-flood": (
        "/api/v1/nodes",
        _send(b'{"items":[' + b"{}," * ((MAX_API_RESPONSE_BYTES - 64) // 3) + b"{}]}"),
    ),
    # compression
    "gzip-bomb-10-GiB": (
        "/api/v1/nodes",
        _stream(_gzip_head(), _gzip_bomb_blocks(10 * 1024 * MIB)),
    ),
    "brotli-unasked": (
        "/api/v1/nodes",
        _send(b"\x8b\x00\x80{}\x03", extra=b"Content-Encoding: br\r\n"),
    ),
    # headers and interim responses
    "header-of-1-MiB": ("/api/v1/nodes", _send(b"{}", extra=b"X-Pad: " + b"a" * MIB + b"\r\n")),
    "500-headers": ("/api/v1/nodes", _many_headers(500)),
    "endless-100-continue": (
        "/api/v1/nodes",
        _stream(b"", _endless(b"HTTP/1.1 100 Continue\r\n\r\n" * 512)),
    ),
}


class HostileApiServer:
    """Stands in for a hostile kube-apiserver: raw sockets on 127.0.0.1, one hostile reply.

    ``/version`` and the DaemonSet read answer normally (200 and 404) unless the case
    targets ``/version``; ``target`` gets ``writer``, which owns the connection until it
    returns. Every request head received is kept in ``requests``.
    """

    def __init__(self, target: str, writer: Writer) -> None:
        self.target = target
        self.writer = writer
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> HostileApiServer:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                while not self.stop.is_set():
                    head = _read_head(conn)
                    if head is None:
                        return
                    self.requests.append(head)
                    path = head.split(b" ", 2)[1].decode().split("?")[0].rstrip("/")
                    if path == self.target:
                        self.writer(conn)
                        return
                    if path == "/version":
                        conn.sendall(_json_reply(json.dumps(VERSION).encode()))
                    elif path == "/api/v1/nodes":
                        conn.sendall(_json_reply(_node_list(_node())))
                    else:
                        conn.sendall(_json_reply(b"{}", status="404 Not Found"))
            except OSError:
                return


def run_measured(argv: list[str], cwd: Path) -> tuple[int, str, int, float]:
    """Run ``argv``; (exit code, stderr, peak RSS in bytes, seconds). The child runs under
    an address-space limit and is killed at RUN_TIMEOUT_S (then the exit code is -9).

    The peak is the child's own ``VmHWM``, sampled while it runs: ``ru_maxrss`` of a forked
    child starts at the parent's peak (Linux carries it over at exec), so in the whole suite
    it reported pytest's own 312 MiB for every case."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))

    env = dict(os.environ, NO_COLOR="1", TERM="dumb")
    err_path = cwd / "stderr.txt"
    start = time.monotonic()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limit
        )
        timer = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        timer.start()
        peak = [0]
        sampler = threading.Thread(target=_sample_peak, args=(proc.pid, peak), daemon=True)
        sampler.start()
        try:
            _, status = os.waitpid(proc.pid, 0)
        finally:
            timer.cancel()
            sampler.join(timeout=5)
        proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - start
    return proc.returncode, err_path.read_text(errors="replace"), peak[0], took


def _sample_peak(pid: int, peak: list[int]) -> None:
    """Keep the highest ``VmHWM`` of ``pid`` in ``peak[0]`` until it exits (a zombie has none)."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        hwm = next((line for line in text.splitlines() if line.startswith("VmHWM:")), None)
        if hwm is None:
            return
        peak[0] = max(peak[0], int(hwm.split()[1]) * 1024)
        time.sleep(0.005)


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_hostile_api_reply_is_one_line_exit_6_bounded(case: str, tmp_path: Path) -> None:
    target, writer = CASES[case]
    out = tmp_path / "snapshot.yaml"
    with HostileApiServer(target, writer) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        argv = [*_cli_path(), "snapshot", "-k", str(kubeconfig), "--deadline", DEADLINE_S]
        code, stderr, rss, took = run_measured([*argv, "-o", str(out)], tmp_path)
    assert code == 6, (code, stderr[-2000:])
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr[-2000:]
    assert "[SERVICE_UNAVAILABLE]" in stderr and "Traceback" not in stderr, stderr
    assert "\x1b" not in stderr
    assert rss <= MAX_RSS_BYTES, f"peak RSS {rss / MIB:.0f} MiB"
    assert took < RUN_TIMEOUT_S
    assert not out.exists()


LARGE_PAGES = 60


def _large_pages(conn: socket.socket) -> None:
    """Page after page (``continue`` tokens), each one node with a 7 MiB label value;
    the last page ends the list. 420 MiB in all: kept whole, it passes the RSS limit."""
    value = "v" * (7 * MIB)
    for page in range(LARGE_PAGES):
        meta = {"continue": str(page + 1)} if page + 1 < LARGE_PAGES else {}
        node = _node(metadata__name=f"node-{page:03}", metadata__labels={"big": value})
        conn.sendall(_json_reply(_node_list(node, metadata=meta)))
        if page + 1 < LARGE_PAGES and _read_head(conn) is None:
            return


def test_pages_are_folded_not_kept(tmp_path: Path) -> None:
    """Large pages one after another: the capture keeps what it reads of them (a count,
    the chosen node, the keys), not the pages, so it ends in the limit and succeeds."""
    out = tmp_path / "snapshot.yaml"
    with HostileApiServer("/api/v1/nodes", _large_pages) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        argv = [*_cli_path(), "snapshot", "-k", str(kubeconfig), "--deadline", "60"]
        code, stderr, rss, _ = run_measured([*argv, "-o", str(out)], tmp_path)
    assert code == 0, stderr[-2000:]
    assert rss <= MAX_RSS_BYTES, f"peak RSS {rss / MIB:.0f} MiB"
    assert f"node-count: {LARGE_PAGES}" in out.read_text()


def test_client_does_not_ask_for_compression(tmp_path: Path) -> None:
    """What the client sends: no Accept-Encoding asking for gzip (so a compressed reply is
    one the server chose on its own, and is decoded only within the limits)."""
    with HostileApiServer("/none", _send(b"{}")) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        argv = [*_cli_path(), "snapshot", "-k", str(kubeconfig), "-o", str(tmp_path / "s.yaml")]
        code, stderr, _, _ = run_measured(argv, tmp_path)
        heads = [h.lower() for h in server.requests]
    assert code == 0, stderr
    assert heads and not any(b"accept-encoding: gzip" in h for h in heads)
