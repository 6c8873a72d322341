"""Live cluster capture against a loopback Kubernetes API server.

Every test here starts a small HTTP server on 127.0.0.1 that answers the paths the
official ``kubernetes`` client calls (``/version``, ``/api/v1/nodes`` with limit/continue
paging, ``/apis/apps/v1/namespaces/kube-system/daemonsets/nvidia-gpu-device-plugin``) with
bodies in the real API shapes, and points the client at it through a kubeconfig.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.capture.oke_legacy import load_legacy_daemonset
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.live.kube import (
    capture_cluster,
    collect_cluster,
    model_from_label,
    os_release_from_image,
    provider_of,
    split_runtime,
)
from aicr_tui.core.recipe.constraints import ConstraintStatus, evaluate_constraint
from tests.conftest import TEST_DATA
from tests.unit.live_fakes import LoopbackServer, Reply, Request, write_kubeconfig

DATA = TEST_DATA / "live"
VERSION = json.loads((DATA / "k8s-version.json").read_text())
AKS_NODES = json.loads((DATA / "k8s-nodes-aks.json").read_text())
OKE_NODES = json.loads((DATA / "k8s-nodes-oke.json").read_text())
LEGACY_DS = json.loads((DATA / "k8s-legacy-daemonset.json").read_text())
DS_PATH = "/apis/apps/v1/namespaces/kube-system/daemonsets/nvidia-gpu-device-plugin"
NOT_FOUND = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": 'daemonsets.apps "nvidia-gpu-device-plugin" not found',
    "reason": "NotFound",
    "code": 404,
}


def forbidden(verb: str, resource: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f'{resource} is forbidden: User "viewer" cannot {verb} resource "{resource}"',
        "reason": "Forbidden",
        "code": 403,
    }


class FakeCluster:
    """Routes for one cluster; each endpoint's reply can be replaced per test."""

    def __init__(self, nodes: dict[str, Any], *, daemonset: Reply | None = None) -> None:
        self.nodes = nodes
        self.version = Reply(200, VERSION)
        self.daemonset = daemonset or Reply(404, NOT_FOUND)
        self.nodes_reply: Reply | None = None

    def __call__(self, request: Request) -> Reply:
        if request.path in ("/version", "/version/"):  # the client asks for /version/
            return self.version
        if request.path == "/api/v1/nodes":
            if self.nodes_reply is not None:
                return self.nodes_reply
            limit = int(request.param("limit") or 0) or len(self.nodes["items"])
            start = int(request.param("continue") or 0)
            page = copy.deepcopy(self.nodes)
            page["items"] = self.nodes["items"][start : start + limit]
            if start + limit < len(self.nodes["items"]):
                page["metadata"]["continue"] = str(start + limit)
            return Reply(200, page)
        if request.path == DS_PATH:
            return self.daemonset
        return Reply(404, {"kind": "Status", "code": 404, "message": request.path})


@pytest.fixture
def serve(tmp_path: Path):
    servers: list[LoopbackServer] = []

    def start(cluster: FakeCluster) -> tuple[LoopbackServer, str]:
        server = LoopbackServer(cluster).__enter__()
        servers.append(server)
        return server, str(write_kubeconfig(tmp_path / f"kubeconfig-{len(servers)}", server.url))

    yield start
    for server in servers:
        server.__exit__()


def readings(snapshot: Any) -> dict[str, Any]:
    return {
        f"{m.type}.{s.subtype}.{k}": v
        for m in snapshot.measurements
        for s in m.subtypes
        for k, v in s.data.items()
    }


def test_aks_cluster_readings(serve) -> None:
    server, kubeconfig = serve(FakeCluster(AKS_NODES))
    snapshot = capture_cluster(kubeconfig, None, timeout=5)
    got = readings(snapshot)
    assert got["K8s.server.version"] == "v1.34.1"
    assert got["K8s.server.platform"] == "linux/amd64"
    assert got["K8s.server.goVersion"] == "go1.24.6"
    # The first GPU node by name is the source node.
    assert snapshot.metadata["source-node"] == "aks-gpupool1-87654321-vmss000000"
    assert got["K8s.node.source-node"] == "aks-gpupool1-87654321-vmss000000"
    assert got["K8s.node.provider"] == "azure"
    assert got["K8s.node.kernel-version"] == "6.8.0-1059-azure"
    assert got["K8s.node.os-image"] == "Ubuntu 24.04.3 LTS"
    assert got["K8s.node.container-runtime-name"] == "containerd"
    assert got["K8s.node.container-runtime-version"] == "1.7.27-1"
    assert got["K8s.node.kubelet-version"] == "v1.34.1"
    assert got["OS.release.ID"] == "ubuntu"
    assert got["OS.release.VERSION_ID"] == "24.04"
    assert got["OS.sysctl./proc/sys/kernel/osrelease"] == "6.8.0-1059-azure"
    assert got["GPU.hardware.gpu-present"] is True
    assert got["GPU.hardware.gpu-count"] == 8
    assert got["GPU.hardware.model"] == "NVIDIA H100 80GB HBM3"
    assert got["GPU.hardware.detection-source"] == "kubernetes-api"
    assert "GPU.hardware.driver-loaded" not in got  # the chosen node has no driver label
    assert got["NodeTopology.summary.node-count"] == 3
    assert got["NodeTopology.summary.taint-count"] == 1
    assert got["K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"] == "none"
    assert got["K8s.oke-legacy-plugin.daemonset"] == "absent"
    paths = [r.path for r in server.requests]
    assert paths.count(DS_PATH) == 1  # exactly one GET of the DaemonSet
    assert all(r.headers.get("authorization") == "Bearer test-token" for r in server.requests)


def test_the_gpu_nodes_instance_type_is_kept_and_read(serve) -> None:
    """Issue 33: the chosen GPU node's VM size goes into the GPU context, where the
    stated accelerator is checked against it."""
    from aicr_tui.core.recipe.capture_match import criteria_conflicts, observed_criteria

    _, kubeconfig = serve(FakeCluster(AKS_NODES))
    snapshot = capture_cluster(kubeconfig, None, timeout=5)
    gpu = snapshot.subtype("GPU", "hardware")
    assert gpu is not None and gpu.context is not None
    assert gpu.context["node.kubernetes.io/instance-type"] == "Standard_ND96isr_H100_v5"
    seen = {(o.value, o.raw) for o in observed_criteria(snapshot)["accelerator"]}
    assert ("h100", "Standard_ND96isr_H100_v5") in seen
    assert [c.stated for c in criteria_conflicts({"accelerator": "gb200"}, snapshot)] == ["gb200"]


def test_live_node_facts_qualify_like_agent_readings(serve) -> None:
    """The catalog's constraint paths evaluate on a live snapshot as on an agent one."""
    _, kubeconfig = serve(FakeCluster(AKS_NODES))
    snapshot = capture_cluster(kubeconfig, None, timeout=5)
    checks = {
        "K8s.server.version": ">= 1.34",
        "OS.release.ID": "ubuntu",
        "OS.release.VERSION_ID": "24.04",
        "OS.sysctl./proc/sys/kernel/osrelease": ">= 6.8",
        "GPU.hardware.model": "NVIDIA H100 80GB HBM3",
    }
    for name, expected in checks.items():
        result = evaluate_constraint(name, expected, snapshot)
        assert result.status is ConstraintStatus.PASSED, (name, result)
    failing = evaluate_constraint("OS.release.ID", "ol", snapshot)
    assert failing.status is ConstraintStatus.FAILED


def test_oke_cluster_with_active_legacy_plugin(serve, tmp_path: Path) -> None:
    cluster = FakeCluster(OKE_NODES, daemonset=Reply(200, LEGACY_DS))
    _, kubeconfig = serve(cluster)
    capture = collect_cluster(kubeconfig, None, timeout=5)
    got = readings(capture.snapshot)
    assert got["OS.release.ID"] == "ol"
    assert got["OS.release.VERSION_ID"] == "8.10"
    assert got["K8s.node.provider"] == "oci"
    assert got["K8s.node.container-runtime-name"] == "cri-o"
    assert got["GPU.hardware.gpu-count"] == 4
    assert got["GPU.hardware.model"] == "NVIDIA GB200"
    assert got["K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"] == "active"
    assert got["K8s.oke-legacy-plugin.daemonset"] == "active"
    assert capture.gpu_node == "10.0.10.21"
    # The same DaemonSet read from a `kubectl get -o json` file gives the same reading.
    dump = tmp_path / "ds.json"
    dump.write_text(json.dumps(LEGACY_DS))
    assert load_legacy_daemonset(dump).subtype == capture.legacy_plugin.subtype


def test_unrelated_same_name_daemonset_reads_none(serve) -> None:
    unrelated = copy.deepcopy(LEGACY_DS)
    unrelated["metadata"]["labels"] = {"app": "custom"}
    _, kubeconfig = serve(FakeCluster(OKE_NODES, daemonset=Reply(200, unrelated)))
    got = readings(capture_cluster(kubeconfig, None, timeout=5))
    assert got["K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"] == "none"
    assert got["K8s.oke-legacy-plugin.daemonset"] == "unrelated"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(403, forbidden("get", "daemonsets")),
        Reply(500, {"kind": "Status", "code": 500, "message": "etcd unavailable"}),
        Reply(200, b"<html>proxy error</html>"),
        Reply(200, LEGACY_DS, delay_s=3),
    ],
    ids=["rbac-denied", "server-error", "not-json", "timeout"],
)
def test_legacy_read_failures_read_unknown(serve, reply: Reply) -> None:
    _, kubeconfig = serve(FakeCluster(OKE_NODES, daemonset=reply))
    capture = collect_cluster(kubeconfig, None, timeout=0.5)
    got = readings(capture.snapshot)
    assert got["K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"] == "unknown"
    assert got["K8s.oke-legacy-plugin.daemonset"] == "unknown"
    assert capture.warnings and "could not read DaemonSet" in capture.warnings[0]


def test_nodes_are_read_page_by_page(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("aicr_tui.core.live.kube.NODE_PAGE_SIZE", 1)
    server, kubeconfig = serve(FakeCluster(AKS_NODES))
    snapshot = capture_cluster(kubeconfig, None, timeout=5)
    node_requests = [r for r in server.requests if r.path == "/api/v1/nodes"]
    assert [r.param("continue") for r in node_requests] == [None, "1", "2"]
    assert all(r.param("limit") == "1" for r in node_requests)
    assert readings(snapshot)["NodeTopology.summary.node-count"] == 3


def test_forbidden_node_list_names_verb_and_resource(serve) -> None:
    cluster = FakeCluster(AKS_NODES)
    cluster.nodes_reply = Reply(403, forbidden("list", "nodes"))
    _, kubeconfig = serve(cluster)
    with pytest.raises(AicrError) as info:
        capture_cluster(kubeconfig, None, timeout=5)
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert 'get and list on "nodes"' in info.value.message
    assert 'cannot list resource "nodes"' in info.value.render()


def test_rejected_credentials_fail_the_capture(serve) -> None:
    cluster = FakeCluster(AKS_NODES)
    cluster.version = Reply(401, {"kind": "Status", "code": 401, "message": "Unauthorized"})
    _, kubeconfig = serve(cluster)
    with pytest.raises(AicrError) as info:
        capture_cluster(kubeconfig, None, timeout=5)
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "HTTP 401" in info.value.message


def test_slow_node_list_is_a_timeout(serve) -> None:
    cluster = FakeCluster(AKS_NODES)
    cluster.nodes_reply = Reply(200, AKS_NODES, delay_s=3)
    _, kubeconfig = serve(cluster)
    with pytest.raises(AicrError) as info:
        capture_cluster(kubeconfig, None, timeout=0.4)
    assert info.value.code is ErrorCode.TIMEOUT
    assert "list nodes" in info.value.message


def test_unreachable_api_server(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:9")
    with pytest.raises(AicrError) as info:
        capture_cluster(str(kubeconfig), None, timeout=2)
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "\n" not in info.value.render()


def test_context_selection(serve) -> None:
    _, kubeconfig = serve(FakeCluster(AKS_NODES))
    assert capture_cluster(kubeconfig, "other", timeout=5).measurements
    with pytest.raises(AicrError) as info:
        capture_cluster(kubeconfig, "missing", timeout=5)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert '--context "missing"' in info.value.message


def test_missing_kubeconfig_file(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        capture_cluster(str(tmp_path / "nope"), None)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "--kubeconfig" in info.value.message


def test_no_configuration_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(AicrError) as info:
        capture_cluster(None, None)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "--no-cluster" in info.value.message


def test_kubeconfig_env_is_used(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    _, kubeconfig = serve(FakeCluster(OKE_NODES))
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    assert readings(capture_cluster(None, None, timeout=5))["OS.release.ID"] == "ol"


def test_cancel_after_first_step_writes_nothing(serve) -> None:
    server, kubeconfig = serve(FakeCluster(AKS_NODES))
    cancel = threading.Event()

    def on_progress(step: Any) -> None:
        if step.done == 1:
            cancel.set()

    with pytest.raises(AicrError) as info:
        capture_cluster(kubeconfig, None, timeout=5, cancel=cancel, progress=on_progress)
    assert info.value.code is ErrorCode.TIMEOUT
    assert DS_PATH not in [r.path for r in server.requests]


def test_cluster_without_gpu_nodes(serve) -> None:
    cpu_only = copy.deepcopy(OKE_NODES)
    cpu_only["items"] = cpu_only["items"][1:]
    _, kubeconfig = serve(FakeCluster(cpu_only))
    capture = collect_cluster(kubeconfig, None, timeout=5)
    got = readings(capture.snapshot)
    assert got["GPU.hardware.gpu-present"] is False
    assert got["GPU.hardware.gpu-count"] == 0
    assert "GPU.hardware.model" not in got
    assert got["K8s.node.source-node"] == "10.0.10.5"
    assert capture.gpu_node is None
    assert any("nvidia.com/gpu" in w for w in capture.warnings)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("Ubuntu 24.04.3 LTS", {"ID": "ubuntu", "VERSION_ID": "24.04"}),
        ("Ubuntu 22.04.5 LTS", {"ID": "ubuntu", "VERSION_ID": "22.04"}),
        ("Oracle Linux Server 8.10", {"ID": "ol", "VERSION_ID": "8.10"}),
        ("Oracle Linux Server 9.5", {"ID": "ol", "VERSION_ID": "9.5"}),
        ("Red Hat Enterprise Linux 9.4 (Plow)", {"ID": "rhel", "VERSION_ID": "9.4"}),
        ("Microsoft Azure Linux 3.0", {"ID": "azurelinux", "VERSION_ID": "3.0"}),
        ("CBL-Mariner/Linux", {"ID": "mariner"}),
        ("Amazon Linux 2023.6.20241031", {"ID": "amzn", "VERSION_ID": "2023"}),
        ("Debian GNU/Linux 12 (bookworm)", {"ID": "debian", "VERSION_ID": "12"}),
        ("SUSE Linux Enterprise Server 15 SP5", {"ID": "sles", "VERSION_ID": "15.5"}),
        ("Some Future OS 1.0", {}),
    ],
)
def test_os_image_mapping(image: str, expected: dict[str, str]) -> None:
    got = os_release_from_image(image)
    assert got.pop("PRETTY_NAME") == image
    assert got == expected


def test_small_helpers() -> None:
    assert split_runtime("containerd://1.7.27") == ("containerd", "1.7.27")
    assert split_runtime("") == ("", "")
    assert provider_of("azure:///subscriptions/x") == "azure"
    assert provider_of("ocid1.instance.oc1.iad.x") == "oci"
    assert provider_of("") == ""
    assert model_from_label("NVIDIA-H100-80GB-HBM3") == "NVIDIA H100 80GB HBM3"
    assert os_release_from_image("") == {}


def _tls_kubeconfig(path: Path, server: str, ca: Path) -> Path:
    write_kubeconfig(path, server)
    text = path.read_text().replace(
        f"    server: {server}\n", f"    server: {server}\n    certificate-authority: {ca}\n"
    )
    path.write_text(text)
    return path


def test_https_api_server_verified_against_the_kubeconfig_ca(tmp_path: Path) -> None:
    from tests.unit.live_fakes import make_tls_files

    ca, cert, key = make_tls_files(tmp_path)
    with LoopbackServer(FakeCluster(OKE_NODES), tls=(cert, key)) as server:
        kubeconfig = _tls_kubeconfig(tmp_path / "kc", server.url, ca)
        snapshot = capture_cluster(str(kubeconfig), None, timeout=5)
        assert readings(snapshot)["K8s.server.version"] == "v1.34.1"
        # A CA that did not sign the server certificate is refused, in one line.
        other = tmp_path / "other"
        other.mkdir()
        wrong_ca, _, _ = make_tls_files(other)
        bad = _tls_kubeconfig(tmp_path / "kc-bad", server.url, wrong_ca)
        with pytest.raises(AicrError) as info:
            capture_cluster(str(bad), None, timeout=5)
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "could not reach" in info.value.message
    assert "\n" not in info.value.render()
