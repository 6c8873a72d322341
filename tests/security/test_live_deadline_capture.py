"""Live captures end within their total deadline, whatever the server or plugin does.

``TrickleServer`` stands in for a Kubernetes API server, an OCI Container Engine endpoint
or Azure Resource Manager that answers with headers and then one body byte every 2 s: each
socket read succeeds well inside the 15-30 s per-call timeouts, so only a total deadline
ends the call. A kubeconfig ``exec`` plugin that sleeps stands in for a hung ``kubelogin``
or ``oci ce cluster generate-token``. An OCI endpoint that always answers ``opc-next-page``
and a Kubernetes one that always returns a ``continue`` token stand in for endless pages.
"""

from __future__ import annotations

import os
import socket
import ssl
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from tests.unit.live_fakes import (
    BackgroundServer,
    LoopbackServer,
    Reply,
    Request,
    write_kubeconfig,
    write_oci_config,
)

CLUSTER = "ocid1.cluster.oc1.iad.aaaaaaaaexamplecluster"
SLACK_S = 2.5  # a call blocked in a read notices the deadline within one trickle interval


class TrickleServer(BackgroundServer):
    """Accepts connections, sends a 200 with a large Content-Length, then 1 byte per 2 s."""

    def __init__(self, interval_s: float = 2.0, *, tls: tuple[Path, Path] | None = None) -> None:
        self.interval_s = interval_s
        self.context: ssl.SSLContext | None = None
        if tls is not None:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(str(tls[0]), str(tls[1]))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.stop = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self.context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                if self.context is not None:
                    conn = self.context.wrap_socket(conn, server_side=True)
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100000\r\n\r\n["
                )
                while not self.stop.wait(self.interval_s):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def _timed(fn: Any) -> tuple[AicrError, float]:
    start = time.monotonic()
    with pytest.raises(AicrError) as refused:
        fn()
    return refused.value, time.monotonic() - start


def test_kube_trickle_ends_at_the_deadline(tmp_path: Path) -> None:
    from aicr_tui.core.live.kube import collect_cluster

    with TrickleServer() as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        error, took = _timed(lambda: collect_cluster(str(kubeconfig), None, deadline=3))
    assert error.code is ErrorCode.TIMEOUT
    assert "total deadline of 3s" in error.message
    assert "\n" not in error.render()
    assert took < 3 + SLACK_S


def test_oci_trickle_ends_at_the_deadline(tmp_path: Path) -> None:
    from aicr_tui.core.live.oci import list_addons

    config = write_oci_config(tmp_path)
    with TrickleServer() as server:
        error, took = _timed(
            lambda: list_addons(
                CLUSTER, config_file=str(config), service_endpoint=server.url, deadline=3
            )
        )
    assert error.code is ErrorCode.TIMEOUT and "total deadline" in error.message
    assert took < 3 + SLACK_S


def test_azure_trickle_ends_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aicr_tui.core.live.azure import cluster_ref, list_agent_pools
    from tests.unit.live_fakes import StaticTokenCredential, make_tls_files

    ca, cert, key = make_tls_files(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))  # ARM only takes a token over TLS
    with TrickleServer(tls=(cert, key)) as server:
        error, took = _timed(
            lambda: list_agent_pools(
                cluster_ref("00000000-0000-0000-0000-000000000000", "rg", "aks"),
                credential=StaticTokenCredential(),
                arm_endpoint=server.url,
                deadline=3,
            )
        )
    assert error.code is ErrorCode.TIMEOUT and "total deadline" in error.message
    assert took < 3 + SLACK_S


def test_endless_oci_pages_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aicr_tui.core.live.oci as oci_live

    monkeypatch.setattr(oci_live, "MAX_PAGES", 15)
    config = write_oci_config(tmp_path)

    def endless(request: Request) -> Reply:
        page = int(request.param("page") or 0)
        return Reply(200, [], {"opc-next-page": str(page + 1)})

    with LoopbackServer(endless) as server:
        error, _ = _timed(
            lambda: oci_live.list_addons(
                CLUSTER, config_file=str(config), service_endpoint=server.url
            )
        )
        assert len(server.requests) == 15
    assert "15 pages" in error.message


def test_endless_node_pages_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aicr_tui.core.live.kube as kube_live

    monkeypatch.setattr(kube_live, "MAX_PAGES", 12)

    def endless(request: Request) -> Reply:
        if request.path == "/version":
            return Reply(200, {"gitVersion": "v1.34.2", "platform": "linux/amd64"})
        return Reply(200, {"kind": "NodeList", "items": [], "metadata": {"continue": "again"}})

    with LoopbackServer(endless) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        error, _ = _timed(lambda: kube_live.collect_cluster(str(kubeconfig), None))
        assert sum(r.path == "/api/v1/nodes" for r in server.requests) == 12
    assert "12 pages" in error.message


def _hanging_plugin(tmp_path: Path) -> tuple[Path, Path]:
    pid_file = tmp_path / "plugin.pid"
    plugin = tmp_path / "hang-plugin"
    plugin.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    return plugin, pid_file


def _exec_kubeconfig(path: Path, server: str, plugin: Path) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: c\n  cluster:\n    server: {server}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
        "users:\n- name: u\n  user:\n    exec:\n"
        "      apiVersion: client.authentication.k8s.io/v1beta1\n"
        f"      command: {plugin}\n"
        "      interactiveMode: Never\n"
    )
    return path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie counts as gone (its parent has not reaped it yet).
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


def test_hanging_exec_plugin_is_killed_and_named(tmp_path: Path) -> None:
    from aicr_tui.core.live.kube import collect_cluster

    plugin, pid_file = _hanging_plugin(tmp_path)
    with LoopbackServer(lambda _: Reply(200, {})) as server:
        kubeconfig = _exec_kubeconfig(tmp_path / "kubeconfig", server.url, plugin)
        error, took = _timed(lambda: collect_cluster(str(kubeconfig), None, timeout=1.5))
    assert error.code is ErrorCode.TIMEOUT
    assert "exec credential plugin" in error.message and str(plugin) in error.message
    assert took < 1.5 + SLACK_S
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the plugin process was left running"


def test_hanging_exec_plugin_in_the_validation_executor(tmp_path: Path) -> None:
    from aicr_tui.core.validation.kube_executor import KubernetesExecutor

    plugin, _ = _hanging_plugin(tmp_path)
    with LoopbackServer(lambda _: Reply(200, {})) as server:
        kubeconfig = _exec_kubeconfig(tmp_path / "kubeconfig", server.url, plugin)
        error, took = _timed(
            lambda: KubernetesExecutor.from_kubeconfig(str(kubeconfig), None, exec_timeout=1.5)
        )
    assert error.code is ErrorCode.TIMEOUT
    assert took < 1.5 + SLACK_S


def test_validation_executor_call_has_a_total_deadline() -> None:
    from aicr_tui.core.validation.kube_executor import KubernetesExecutor

    with TrickleServer() as server:
        executor = KubernetesExecutor.from_host(server.url)
        executor._timeout = 2.0  # per call; the trickle keeps every read inside it
        error, took = _timed(executor.list_nodes)
    assert error.code is ErrorCode.TIMEOUT
    assert took < 2.0 * 2 + SLACK_S


def test_cli_snapshot_trickle_is_one_line(tmp_path: Path, cli: Any) -> None:
    with TrickleServer() as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        start = time.monotonic()
        result = cli(
            "snapshot", "-k", str(kubeconfig), "--deadline", "3", "-o", str(tmp_path / "s.yaml")
        )
        took = time.monotonic() - start
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert "total deadline" in result.stderr
    assert took < 3 + SLACK_S + 5  # plus interpreter start-up
    assert not (tmp_path / "s.yaml").exists()
