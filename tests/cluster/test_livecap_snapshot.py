"""``aicr-tui snapshot -k`` against kwok clusters modelling each shipped capture reads what the
shipped snapshot holds, field by field (tests/cluster/livecap_support.py LIVE_DIFFERENCES
lists the fields that legitimately differ, each checked against its own source); the OKE
legacy DaemonSet reading follows the real DaemonSet controller's status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import Cluster
from tests.cluster.livecap_support import (
    LEGACY_NAME,
    LEGACY_NAMESPACE,
    MODELS,
    OKE_DISABLE_LABEL,
    PREFIX,
    Model,
    capture,
    contexts,
    create_legacy,
    expected_live,
    legacy_daemonset,
    model,
    modelled_cluster,
    oke_nodes,
    readings,
    server_version,
    shipped_legacy_status,
)
from tests.conftest import run_cli

LEGACY = ("K8s", "oke-legacy-plugin")


def offline_legacy_reading(dump: Path, tmp_path: Path) -> dict[str, Any]:
    """The legacy reading of ``snapshot --oke-legacy-daemonset DUMP --no-cluster``."""
    out = tmp_path / "offline.json"
    proc = run_cli(
        "snapshot", "--oke-legacy-daemonset", str(dump), "--no-cluster", "-t", "json",
        "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return readings(json.loads(out.read_text()))[LEGACY]


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.id)
def test_live_snapshot_reads_like_the_shipped_one(
    cluster: Cluster, m: Model, tmp_path: Path
) -> None:
    with modelled_cluster(cluster, m.nodes):
        if m.legacy:
            ds = create_legacy(cluster)
            # Real status, written by the DaemonSet controller for three GPU nodes: the
            # shipped capture's status, field for field.
            assert ds["status"] == shipped_legacy_status()
        live = capture(cluster, tmp_path, *m.dump_args)
    meta, want = expected_live(m, server_version(cluster), live.nodes)
    assert live.doc["metadata"]["source-node"] == meta["source-node"]
    got = readings(live.doc)
    assert sorted(got) == sorted(want), f"{m.snapshot}: measurement/subtype set differs"
    for key, data in want.items():
        for name in sorted(set(data) | set(got[key])):
            assert got[key].get(name, "<absent>") == data.get(name, "<absent>"), (
                f"{m.snapshot}: {key[0]}.{key[1]}.{name} live "
                f"{got[key].get(name, '<absent>')!r}, expected {data.get(name, '<absent>')!r}"
            )
    chosen = next(n for n in m.nodes if n["metadata"]["name"] == meta["source-node"])
    labels = chosen["metadata"]["labels"]
    product = labels["nvidia.com/gpu.product"]
    gpu_context = {"node": meta["source-node"], "nvidia.com/gpu.product": product}
    # issue 33: the node's VM size or shape, when labelled, so the accelerator is checked
    instance = labels.get("node.kubernetes.io/instance-type") or labels.get(
        "beta.kubernetes.io/instance-type"
    )
    if instance:
        gpu_context["node.kubernetes.io/instance-type"] = instance
    got_contexts = contexts(live.doc)
    pools = got_contexts.pop(("K8s", "aks-gpu-pools"), None)
    if pools is not None:  # issue 33: the GPU pools' VM sizes, from the pool dump
        assert set(pools) == {"vm-sizes"} and pools["vm-sizes"], pools
    assert got_contexts == {("GPU", "hardware"): gpu_context}
    assert "could not read" not in live.stderr


@pytest.mark.parametrize(
    ("case", "reconcile", "opted_out", "detail"),
    [
        # a same-name DaemonSet without the addon-manager label: an unrelated workload
        ("unlabelled", False, False, "unrelated"),
        # Oracle's opt-out label on every GPU node: the controller's real status says 0
        # desired, observed for the current generation: "disabled", not "unknown"
        ("opted-out", True, True, "disabled"),
    ],
)
def test_legacy_daemonset_that_reads_none(
    cluster: Cluster, tmp_path: Path, case: str, reconcile: bool, opted_out: bool, detail: str
) -> None:
    nodes = oke_nodes(driver=False)
    for node in nodes:
        if opted_out:
            node["metadata"]["labels"][OKE_DISABLE_LABEL] = "true"
    with modelled_cluster(cluster, nodes):
        ds = create_legacy(cluster, reconcile=reconcile, desired=0 if opted_out else 3)
        assert ds["status"]["observedGeneration"] == ds["metadata"]["generation"], case
        live = capture(cluster, tmp_path)
    assert readings(live.doc)[LEGACY] == {"nvidia-gpu-device-plugin": "none", "daemonset": detail}


def test_the_offline_dump_of_the_live_daemonsets_reads_like_the_live_capture(
    cluster: Cluster, tmp_path: Path
) -> None:
    # The README's offline route (`kubectl get daemonsets -n kube-system -o json`) against
    # the same cluster: same reading as the live GET.
    m = model("oke-gb200-absent-legacy-active.yaml")
    dump = tmp_path / "daemonsets.json"
    with modelled_cluster(cluster, m.nodes):
        create_legacy(cluster)
        dump.write_text(
            cluster.kubectl("get", "daemonsets", "-n", LEGACY_NAMESPACE, "-o", "json").stdout
        )
        live = capture(cluster, tmp_path, *m.dump_args)
    assert (
        offline_legacy_reading(dump, tmp_path)
        == readings(live.doc)[LEGACY]
        == {
            "nvidia-gpu-device-plugin": "active",
            "daemonset": "active",
        }
    )


def test_a_daemonset_the_controller_has_not_synced_reads_unknown(
    cluster: Cluster, tmp_path: Path
) -> None:
    # What the real server holds for a new DaemonSet before the controller's first sync
    # (a server-side dry run answers with exactly that object): desiredNumberScheduled 0,
    # no observedGeneration. It must read unknown, not none/disabled.
    body = json.dumps(legacy_daemonset())
    answer = cluster.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", input_text=body)
    obj = json.loads(answer.stdout)
    assert obj["status"].get("desiredNumberScheduled") == 0
    assert "observedGeneration" not in obj["status"]
    assert cluster.get("daemonset", LEGACY_NAME, LEGACY_NAMESPACE) is None
    dump = tmp_path / "unsynced.json"
    dump.write_text(answer.stdout)
    assert offline_legacy_reading(dump, tmp_path) == {
        "nvidia-gpu-device-plugin": "unknown",
        "daemonset": "unknown",
    }


def test_the_node_list_is_read_over_every_page(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One node per page: the real server's continue tokens carry the list to its end.
    import aicr_tui.core.live.kube as kube

    m = model("aks-h100-install.yaml")
    monkeypatch.setattr(kube, "NODE_PAGE_SIZE", 1)
    pages: list[str] = []
    with modelled_cluster(cluster, m.nodes) as names:
        got = kube.collect_cluster(
            str(cluster.kubeconfig), None, progress=lambda p: pages.append(p.message)
        )
    # Other tests of the shared tier may hold nodes too: at least one page per node of ours.
    page_reads = [p for p in pages if p.startswith("listing nodes (page")]
    assert got.node_count >= len(names) and len(page_reads) >= len(names)
    assert page_reads[-1] == f"listing nodes (page {len(page_reads)})"
    assert got.gpu_node == PREFIX + "aks-gpupool1-31415926-vmss000000"
