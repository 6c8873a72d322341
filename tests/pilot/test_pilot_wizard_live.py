"""Fetch live (F) through the real aicr_tui.core.live call against a Kubernetes API on 127.0.0.1.

The test starts a loopback HTTP server (tests/unit/live_fakes.py) answering /version,
/api/v1/nodes and the legacy DaemonSet GET with bodies in the real API shapes, writes a
kubeconfig pointing at it, and fills the wizard's fetch form with the keyboard.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aicr_tui.screens.capture import CaptureScreen
from tests.pilot.wizard_helpers import settle, wait_until, wizard_running
from tests.unit.live_fakes import LoopbackServer, Reply, write_kubeconfig
from tests.unit.test_live_kube import LEGACY_DS, OKE_NODES, FakeCluster


@contextlib.asynccontextmanager
async def fetching_live(tmp_path: Path, cluster: Any) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The wizard fetching a live capture (F, then ./kc) from ``cluster`` behind a kubeconfig."""
    with LoopbackServer(cluster) as server:
        write_kubeconfig(tmp_path / "kc", server.url)
        async with wizard_running(tmp_path) as (app, pilot):
            await pilot.press("F")
            await pilot.pause()
            await pilot.press("k", "c", "enter")  # kubeconfig field: ./kc
            yield app, pilot, server


async def test_fetch_live_cluster_with_active_legacy_plugin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cluster = FakeCluster(OKE_NODES, daemonset=Reply(200, LEGACY_DS))
    async with fetching_live(tmp_path, cluster) as (app, pilot, server):
        await wait_until(pilot, lambda: app.state.capture_label == "live capture")
        await settle(pilot)
        snap = app.state.snapshot
        assert snap.reading("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin") == "active"
        assert snap.reading("K8s", "server", "version")
        assert any(r.path == "/api/v1/nodes" for r in server.requests)
        assert isinstance(app.screen, CaptureScreen)
        table = app.screen.query_one("#capture-readings")
        assert table.row_count > 5


async def test_fetch_live_forbidden_is_one_line_inline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cluster = FakeCluster(OKE_NODES)
    cluster.nodes_reply = Reply(
        403,
        {
            "kind": "Status",
            "status": "Failure",
            "reason": "Forbidden",
            "code": 403,
            "message": 'nodes is forbidden: User "viewer" cannot list resource "nodes"',
        },
    )
    async with fetching_live(tmp_path, cluster) as (app, pilot, server):
        await wait_until(pilot, lambda: bool(app.state.last_error))
        assert "nodes" in app.state.last_error and "\n" not in app.state.last_error
        assert app.state.snapshot is None


async def test_cancel_a_slow_live_fetch(tmp_path, monkeypatch):
    """The API server answers /version after 1.5 s; x cancels and nothing is loaded."""
    monkeypatch.chdir(tmp_path)
    cluster = FakeCluster(OKE_NODES)
    cluster.version = Reply(200, cluster.version.body, delay_s=1.5)
    async with fetching_live(tmp_path, cluster) as (app, pilot, server):
        await pilot.pause()
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(app.state.last_error), timeout=30)
        assert "cancel" in app.state.last_error
        assert app.state.snapshot is None
