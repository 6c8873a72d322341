"""``aicr_tui.core.live.capture_live``: the one call the CLI and the wizard's worker make.

The tests start loopback servers on 127.0.0.1 (HTTPS for Azure Resource Manager with a
throwaway CA, HTTP for OCI and Kubernetes) answering the REST paths each SDK calls.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from aicr_tui.core.capture.capture import project_dumps
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.live import capture_live, kube_config_available
from tests.unit.live_fakes import (
    LoopbackServer,
    StaticTokenCredential,
    make_tls_files,
    write_kubeconfig,
    write_oci_config,
)
from tests.unit.test_live_azure import CLUSTER as AKS_CLUSTER
from tests.unit.test_live_azure import REST_POOLS, RG, SUB, paged_pools
from tests.unit.test_live_kube import AKS_NODES, LEGACY_DS, OKE_NODES, FakeCluster
from tests.unit.test_live_oci import CLUSTER as OKE_CLUSTER
from tests.unit.test_live_oci import REST_ADDONS, paged_addons


@pytest.fixture
def no_kube(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def test_providers_only_when_no_cluster_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_kube: None
) -> None:
    ca, cert, key = make_tls_files(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    config = write_oci_config(tmp_path)
    lines: list[str] = []
    with (
        LoopbackServer(paged_pools(REST_POOLS), tls=(cert, key)) as arm,
        LoopbackServer(paged_addons(REST_ADDONS)) as oci_api,
    ):
        result = capture_live(
            aks_subscription=SUB,
            aks_resource_group=RG,
            aks_cluster=AKS_CLUSTER,
            azure_credential=StaticTokenCredential(),
            arm_endpoint=arm.url,
            oke_cluster_id=OKE_CLUSTER,
            oci_config_file=str(config),
            oci_service_endpoint=oci_api.url,
            timeout=5,
            progress=lines.append,
        )
    snap = result.snapshot
    assert snap.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Install"
    assert snap.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "installed"
    assert snap.subtype("K8s", "server") is None
    assert result.cluster is None
    assert result.projections.aks_pools is result.aks.projection  # type: ignore[union-attr]
    assert result.projections.oke_addons is result.oke.projection  # type: ignore[union-attr]
    assert any("no Kubernetes configuration" in w for w in result.warnings)
    assert lines and all(isinstance(line, str) for line in lines)
    assert any(line.startswith("aks: ") for line in lines)
    assert any(line.startswith("oke: ") for line in lines)


def test_cluster_and_offline_dump_together(tmp_path: Path) -> None:
    dump = tmp_path / "ds.json"
    dump.write_text(json.dumps(LEGACY_DS))
    offline = project_dumps(legacy_daemonset=str(dump))
    with LoopbackServer(FakeCluster(OKE_NODES)) as kube_api:
        kubeconfig = write_kubeconfig(tmp_path / "kc", kube_api.url)
        result = capture_live(kubeconfig=str(kubeconfig), offline=offline, timeout=5)
    # The cluster read 404 (none), but the dump the user supplied wins, as offline.
    assert result.snapshot.reading("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin") == (
        "active"
    )
    assert result.projections.legacy_plugin is offline.legacy_plugin
    assert result.cluster is not None
    assert result.snapshot.reading("OS", "release", "ID") == "ol"


def test_live_legacy_reading_is_listed_with_the_projections(tmp_path: Path) -> None:
    with LoopbackServer(FakeCluster(AKS_NODES)) as kube_api:
        kubeconfig = write_kubeconfig(tmp_path / "kc", kube_api.url)
        result = capture_live(kubeconfig=str(kubeconfig), timeout=5)
    assert result.projections.legacy_plugin is not None
    assert result.projections.legacy_plugin.daemonset == "absent"


def test_cluster_required_but_missing(no_kube: None) -> None:
    with pytest.raises(AicrError) as info:
        capture_live(cluster=True, oke_cluster_id=OKE_CLUSTER, oci_auth="nope")
    # The provider request is checked first; then an unconfigured cluster is named.
    assert info.value.code is ErrorCode.INVALID_REQUEST
    with pytest.raises(AicrError) as info:
        capture_live()
    assert "no Kubernetes configuration" in info.value.message
    assert not kube_config_available(None, None)


def test_partial_aks_coordinates(no_kube: None) -> None:
    with pytest.raises(AicrError) as info:
        capture_live(aks_subscription=SUB, aks_cluster=AKS_CLUSTER)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "missing --aks-resource-group" in info.value.message


def test_cancelled_before_start() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(AicrError) as info:
        capture_live(cancel=cancel)
    assert info.value.code is ErrorCode.TIMEOUT
