"""``aicr-tui snapshot -k`` against kwok clusters modelling each shipped capture reads what
the shipped snapshot holds, field by field; the legacy DaemonSet reading follows the real
DaemonSet controller's status; as a ServiceAccount holding only the README's read-only
ClusterRole the capture works, and without ``daemonsets get`` the legacy reading is
``unknown``, never ``none``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.captures import MODELS, SNAPSHOTS, Model, legacy_daemonset, oke_nodes
from tests.cluster.conftest import Cluster
from tests.conftest import REPO, run_cli

# What a live capture reads differently from the shipped samples, by design:
# - K8s.server is this control plane's (v1.34.4, built here), not the captured cluster's;
# - GPU.hardware.detection-source is "kubernetes-api" for a capture through the API (the
#   samples carry the agent's "nfd").
# - GPU.hardware.driver-loaded: the API shows a loaded driver only through GFD's CUDA driver
#   labels; without them the live capture leaves the reading out (not measured) where the
#   agent-made samples say false. It must never read true there.
NOT_COMPARED = {("K8s", "server"): None, ("GPU", "hardware"): {"detection-source"}}
NOT_MEASURED_LIVE = {("GPU", "hardware", "driver-loaded"): False}

Readings = dict[tuple[str, str], dict[str, Any]]


def readings(doc: dict[str, Any]) -> Readings:
    return {
        (m["type"], s["subtype"]): dict(s.get("data") or {})
        for m in doc["measurements"]
        for s in m["subtypes"]
    }


def capture(cluster: Cluster, tmp_path: Path, *args: str, kubeconfig: Path | None = None) -> Any:
    out = tmp_path / "live.json"
    proc = run_cli(
        "snapshot",
        "-k",
        str(kubeconfig or cluster.kubeconfig),
        *args,
        "-t",
        "json",
        "-o",
        str(out),
        env={"KUBECONFIG": str(kubeconfig or cluster.kubeconfig)},
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def no_foreign_nodes(cluster: Cluster) -> None:
    # The capture reads every node of the cluster: another test's nodes would change it.
    foreign = cluster.names("nodes")
    assert not foreign, f"the cluster already has nodes {sorted(foreign)}: run this tier alone"


def create_legacy(cluster: Cluster, *, reconcile: bool = True) -> dict[str, Any]:
    """The legacy DaemonSet, waited until its controller scheduled and kwok readied its pods."""
    cluster.apply(legacy_daemonset(reconcile=reconcile), server_side=True)

    def settled() -> dict[str, Any] | None:
        ds = cluster.get("daemonset", "nvidia-gpu-device-plugin", "kube-system")
        status = (ds or {}).get("status") or {}
        desired = status.get("desiredNumberScheduled") or 0
        if ds and desired > 0 and status.get("numberReady") == desired:
            return ds
        return None

    found: dict[str, Any] = cluster.wait_until("the legacy DaemonSet ready", settled)
    return found


def delete_legacy(cluster: Cluster) -> None:
    cluster.kubectl(
        "delete", "daemonset", "nvidia-gpu-device-plugin", "-n", "kube-system",
        "--ignore-not-found", "--wait=true",
    )  # fmt: skip


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.snapshot.removesuffix(".yaml"))
def test_live_snapshot_reads_like_the_shipped_one(
    cluster: Cluster, kwok_nodes: Any, model: Model, tmp_path: Path
) -> None:
    no_foreign_nodes(cluster)
    kwok_nodes(*model.nodes)
    if model.legacy:
        create_legacy(cluster)
    try:
        live = capture(cluster, tmp_path, *model.dump_args)
    finally:
        if model.legacy:
            delete_legacy(cluster)
    shipped = yaml.safe_load((SNAPSHOTS / model.snapshot).read_text())
    assert live["metadata"]["source-node"] == shipped["metadata"]["source-node"]
    got, want = readings(live), readings(shipped)
    assert got[("K8s", "server")]["version"].startswith("v1.34.")
    for key, data in want.items():
        assert key in got, f"{model.snapshot}: the live capture has no {key[0]}.{key[1]}"
        skipped = NOT_COMPARED.get(key, set())
        if skipped is None:
            continue
        for field_name, value in data.items():
            if field_name in skipped:
                continue
            unmeasured = NOT_MEASURED_LIVE.get((*key, field_name), object())
            if value == unmeasured and field_name not in got[key]:
                continue
            assert got[key].get(field_name) == value, (
                f"{model.snapshot}: {key[0]}.{key[1]}.{field_name} live "
                f"{got[key].get(field_name)!r}, shipped {value!r}"
            )


def test_legacy_daemonset_without_the_reconcile_label_reads_unrelated(
    cluster: Cluster, kwok_nodes: Any, tmp_path: Path
) -> None:
    no_foreign_nodes(cluster)
    kwok_nodes(*oke_nodes(driver=False))
    create_legacy(cluster, reconcile=False)
    try:
        live = capture(cluster, tmp_path)
    finally:
        delete_legacy(cluster)
    assert readings(live)[("K8s", "oke-legacy-plugin")] == {
        "nvidia-gpu-device-plugin": "none",
        "daemonset": "unrelated",
    }


def documented_cluster_role() -> dict[str, Any]:
    """The ClusterRole the README documents for ``snapshot -k`` (its yaml block)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    roles = [
        doc
        for block in blocks
        for doc in [yaml.safe_load(block)]
        if isinstance(doc, dict) and doc.get("metadata", {}).get("name") == "aicr-tui-snapshot"
    ]
    assert len(roles) == 1, "README.md documents the aicr-tui-snapshot ClusterRole once"
    role: dict[str, Any] = roles[0]
    return role


@pytest.mark.parametrize("with_daemonsets", [True, False], ids=["documented", "no-daemonsets"])
def test_capture_as_a_service_account_with_the_documented_role(
    cluster: Cluster, kwok_nodes: Any, namespace: str, tmp_path: Path, with_daemonsets: bool
) -> None:
    no_foreign_nodes(cluster)
    kwok_nodes(*oke_nodes(driver=False))
    role = documented_cluster_role()
    if not with_daemonsets:
        role["rules"] = [r for r in role["rules"] if "daemonsets" not in r.get("resources", [])]
        assert len(role["rules"]) == 2
    role["metadata"] = {"name": f"{namespace}-snapshot"}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{namespace}-snapshot"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": f"{namespace}-snapshot",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "capture", "namespace": namespace}],
    }
    cluster.kubectl("create", "serviceaccount", "capture", "-n", namespace)
    create_legacy(cluster)
    try:
        cluster.apply([role, binding])
        kubeconfig = cluster.service_account_kubeconfig(
            namespace, "capture", tmp_path / "capture.kubeconfig"
        )
        as_sa = {"KUBECONFIG": str(kubeconfig)}
        # The account holds only what the role grants.
        denied = cluster.kubectl("get", "pods", "-A", env=as_sa, check=False)
        assert "forbidden" in denied.stderr.lower()
        live = capture(cluster, tmp_path, kubeconfig=kubeconfig)
    finally:
        cluster.kubectl(
            "delete",
            "clusterrolebinding,clusterrole",
            f"{namespace}-snapshot",
            "--ignore-not-found",
        )
        delete_legacy(cluster)
    got = readings(live)
    assert got[("K8s", "node")]["kernel-version"] == "5.15.0-308.179.6.el8uek.aarch64"
    assert got[("GPU", "hardware")]["gpu-count"] == 4
    legacy = got[("K8s", "oke-legacy-plugin")]
    if with_daemonsets:
        assert legacy == {"nvidia-gpu-device-plugin": "active", "daemonset": "active"}
    else:
        # Forbidden to look is "could not consult", never "not installed".
        assert legacy == {"nvidia-gpu-device-plugin": "unknown", "daemonset": "unknown"}
