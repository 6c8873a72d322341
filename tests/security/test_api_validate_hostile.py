"""Issue 35 family 5 and issue 32 item 5: what a hostile or overloaded API server does to the
live commands (``snapshot -k`` and ``validate``).

- a body marked ``Content-Encoding: gzip`` (or deflate) that is not: one line, exit 6 (it
  was an uncaught ``zlib.error``, ``[INTERNAL]`` exit 1);
- a throttled server (429 with Retry-After): the line names the status and the wait, not
  "unreachable" and not urllib3's internals;
- a reply over the 8 MiB limit during validation: the check that needed it is not measured
  and says which limit;
- a server that answers every request, slowly (each after a few seconds): ``validate`` ends
  at its total deadline (``--deadline`` or ``AICR_DEADLINE``) with one TIMEOUT line, exit 5,
  instead of running for as long as the checks' budgets add up to.

The ``snapshot`` cases reuse the raw-socket ``HostileApiServer``; ``validate`` talks to
:class:`SlowApiServer`, an HTTP server on 127.0.0.1 that answers the requests validation
makes (namespaces, lists, reads, creates, deletes) in the API's shapes, after ``delay``
seconds, with one route made hostile.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from aicr_tui.core.foundation.limits import MAX_API_RESPONSE_BYTES
from tests.conftest import SAMPLES, _cli_path
from tests.security.test_api_responses_hostile import (
    HostileApiServer,
    _json_reply,
    _node,
    _node_list,
    run_measured,
)
from tests.unit.live_fakes import write_kubeconfig

RECIPE = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"
SNAPSHOT = SAMPLES / "snapshots" / "aks-h100-install.yaml"

NOT_GZIP_CASES: dict[str, bytes] = {
    "gzip-plain-json": _json_reply(_node_list(_node()), extra=b"Content-Encoding: gzip\r\n"),
    "gzip-truncated": _json_reply(
        zlib.compress(_node_list(_node()), wbits=31)[:20], extra=b"Content-Encoding: gzip\r\n"
    ),
    "gzip-garbage": _json_reply(b"\x1f\x8b" + b"\xff" * 64, extra=b"Content-Encoding: gzip\r\n"),
    "deflate-plain-json": _json_reply(_node_list(_node()), extra=b"Content-Encoding: deflate\r\n"),
    "x-gzip-empty": _json_reply(b"", extra=b"Content-Encoding: x-gzip\r\n"),
}

LIBRARY_INTERNALS = ("urllib3", "HTTPConnection", "Max retries", "object at 0x", "Traceback")


def _snapshot(tmp_path: Path, server: HostileApiServer) -> tuple[int, str, Path]:
    out = tmp_path / "snapshot.yaml"
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    argv = [*_cli_path(), "snapshot", "-k", str(kubeconfig), "--deadline", "30", "-o", str(out)]
    code, stderr, _, _ = run_measured(argv, tmp_path)
    return code, stderr, out


@pytest.mark.parametrize("case", sorted(NOT_GZIP_CASES))
def test_a_body_that_is_not_what_its_encoding_says_is_one_line_exit_6(
    case: str, tmp_path: Path
) -> None:
    reply = NOT_GZIP_CASES[case]
    with HostileApiServer("/api/v1/nodes", lambda c: c.sendall(reply)) as server:
        code, stderr, out = _snapshot(tmp_path, server)
    if case == "x-gzip-empty":
        # an empty body decodes to nothing: the reply is non-JSON, still one line exit 6
        assert "non-JSON" in stderr or "not x-gzip data" in stderr, stderr
    else:
        assert "but its body is not" in stderr, stderr
    assert code == 6, (code, stderr)
    assert stderr.count("\n") == 1 and "[SERVICE_UNAVAILABLE]" in stderr, stderr
    assert "[INTERNAL]" not in stderr and not out.exists()


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (
            "429 Too Many Requests",
            b"Retry-After: 30\r\n",
            "HTTP 429 (Too Many Requests; Retry-After: 30)",
        ),
        ("429 Too Many Requests", b"", "HTTP 429 (Too Many Requests; no Retry-After)"),
        (
            "503 Service Unavailable",
            b"Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n",
            "HTTP 503 (Service Unavailable; Retry-After: Wed, 21 Oct 2026 07:28:00 GMT)",
        ),
        ("429 Too Many Requests", b"Retry-After: \x1b[31m9\r\n", "Retry-After: [31m9)"),
        ("500 Internal Server Error", b"", "HTTP 500 (Internal Server Error)"),
    ],
)
def test_snapshot_names_what_a_throttled_server_answered(
    status: str, headers: bytes, expected: str, tmp_path: Path
) -> None:
    body = json.dumps({"kind": "Status", "code": 429, "message": "too many requests"}).encode()
    reply = _json_reply(body, status=status, extra=headers)
    with HostileApiServer("/api/v1/nodes", lambda c: c.sendall(reply)) as server:
        code, stderr, out = _snapshot(tmp_path, server)
    assert code == 6, (code, stderr)
    assert stderr.count("\n") == 1 and expected in stderr, stderr
    assert "\x1b" not in stderr and "unreachable" not in stderr
    assert not any(word in stderr for word in LIBRARY_INTERNALS), stderr
    assert not out.exists()


# -- validate ----------------------------------------------------------------------------

Route = Callable[[str, str], tuple[int, bytes, dict[str, str]] | None]


def _node_item(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
        "spec": {},
        "status": {
            "allocatable": {"nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


class SlowApiServer:
    """Answers what validation asks, each request after ``delay`` seconds; ``hostile``
    may take over a (method, path) first. Objects created are kept (namespaces, pods)."""

    def __init__(self, delay: float = 0.0, hostile: Route | None = None) -> None:
        self.delay = delay
        self.hostile = hostile
        self.namespaces: set[str] = set()
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, code: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = urlparse(self.path).path
                server.requests.append((method, path))
                time.sleep(server.delay)
                found = server.hostile(method, path) if server.hostile else None
                code, body, headers = found or server.route(method, path, raw)
                self._reply(code, body, headers)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def route(self, method: str, path: str, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        parts = path.strip("/").split("/")
        ok: tuple[int, bytes, dict[str, str]]
        missing = (404, json.dumps({"kind": "Status", "code": 404}).encode(), {})
        if method == "POST":
            body = json.loads(raw or b"{}")
            if path == "/api/v1/namespaces":
                self.namespaces.add(body["metadata"]["name"])
            return 201, json.dumps(body).encode(), {}
        if method == "DELETE":
            if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 4:
                self.namespaces.discard(parts[3])
            return 200, b'{"kind":"Status","status":"Success"}', {}
        if path == "/api/v1/nodes":
            items = [_node_item("gpu-0")]
            ok = (
                200,
                json.dumps({"kind": "NodeList", "metadata": {}, "items": items}).encode(),
                {},
            )
            return ok
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 4:
            if parts[3] not in self.namespaces:
                return missing
            doc = {"metadata": {"name": parts[3]}, "status": {"phase": "Active"}}
            return 200, json.dumps(doc).encode(), {}
        if parts[-1] in ("pods", "deployments", "daemonsets", "statefulsets"):
            return 200, b'{"kind":"List","metadata":{},"items":[]}', {}
        return missing

    def __enter__(self) -> SlowApiServer:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def slow_server() -> Iterator[Callable[..., SlowApiServer]]:
    servers: list[SlowApiServer] = []

    def start(delay: float = 0.0, hostile: Route | None = None) -> SlowApiServer:
        server = SlowApiServer(delay, hostile).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__()


def _validate(
    tmp_path: Path, server: SlowApiServer, *extra: str
) -> tuple[int, str, float, dict[str, Any] | None]:
    out = tmp_path / "ctrf.json"
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    argv = [
        *_cli_path(),
        "validate",
        "-r",
        str(RECIPE),
        "-s",
        str(SNAPSHOT),
        "--phase",
        "deployment",
        "-k",
        str(kubeconfig),
        "--plain",
        "-o",
        str(out),
        *extra,
    ]
    code, stderr, _, took = run_measured(argv, tmp_path)
    report = json.loads(out.read_text()) if out.exists() else None
    return code, stderr, took, report


def _messages(report: dict[str, Any] | None) -> dict[str, str]:
    assert report is not None
    return {t["name"]: t.get("message", "") for t in report["results"]["tests"]}


def test_validate_ends_at_its_total_deadline_when_every_answer_is_slow(
    tmp_path: Path, slow_server: Callable[..., SlowApiServer]
) -> None:
    """Each request answered after 1 s (inside the 30 s per-call timeout, so no call
    fails): the deployment phase alone would run for minutes; --deadline 12 ends it."""
    server = slow_server(delay=1.0)
    code, stderr, took, report = _validate(tmp_path, server, "--deadline", "12")
    last = stderr.strip().splitlines()[-1]
    assert code == 5, (code, stderr[-3000:])
    assert "[TIMEOUT]" in last and "total deadline of 12s" in last, stderr[-3000:]
    assert took < 12 + 8, took  # interpreter start and exit on a loaded machine
    assert report is not None  # what was measured is still reported
    assert any("total deadline of 12s passed" in m for m in _messages(report).values())


def test_the_deadline_can_come_from_the_environment(
    tmp_path: Path, slow_server: Callable[..., SlowApiServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_DEADLINE", "8")
    server = slow_server(delay=3.0)
    code, stderr, took, _ = _validate(tmp_path, server)
    assert code == 5 and "total deadline of 8s" in stderr, stderr[-2000:]
    assert took < 8 + 8


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9"])
def test_a_bad_deadline_is_refused_before_any_cluster_work(
    value: str, tmp_path: Path, slow_server: Callable[..., SlowApiServer]
) -> None:
    server = slow_server()
    code, stderr, _, report = _validate(tmp_path, server, f"--deadline={value}")
    assert code == 2 and stderr.count("\n") == 1 and "--deadline" in stderr, stderr
    assert server.requests == [] and report is None


def _throttled(method: str, path: str) -> tuple[int, bytes, dict[str, str]] | None:
    if path == "/api/v1/nodes":
        body = json.dumps({"kind": "Status", "code": 429, "message": "slow down"}).encode()
        return 429, body, {"Retry-After": "7"}
    return None


def _oversized(method: str, path: str) -> tuple[int, bytes, dict[str, str]] | None:
    if path == "/api/v1/nodes":
        return 200, b'{"items":[' + b" " * (MAX_API_RESPONSE_BYTES + 10) + b"]}", {}
    return None


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        (_throttled, "HTTP 429 (Too Many Requests; Retry-After: 7): slow down"),
        (_oversized, f"at most {MAX_API_RESPONSE_BYTES} are read"),
    ],
    ids=["429-retry-after", "body-over-the-limit"],
)
def test_validate_names_what_the_server_answered(
    hostile: Route,
    expected: str,
    tmp_path: Path,
    slow_server: Callable[..., SlowApiServer],
) -> None:
    server = slow_server(hostile=hostile)
    code, stderr, _, report = _validate(tmp_path, server, "--deadline", "60")
    messages = _messages(report)
    assert expected in messages["check-nvidia-smi"], messages
    assert messages["check-nvidia-smi"].count("\n") == 0
    for text in (*messages.values(), stderr):
        assert "unreachable" not in text
        assert not any(word in text for word in LIBRARY_INTERNALS), text
    assert code == 8, (code, stderr[-2000:])
