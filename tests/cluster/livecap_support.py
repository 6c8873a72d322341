"""Clusters that look like the shipped captures: a builder over tests/data/live/cluster-models.yaml.

Each :class:`Model` is the cluster side of one shipped snapshot (aicr_tui/recipes/samples/snapshots/):
kwok nodes with the labels, taints, providerID, capacity/allocatable and ``status.nodeInfo``
a kubelet, NFD and GPU Feature Discovery write on an AKS H100 or OKE GB200 pool, the
provider dump the capture is given for the part only the cloud CLI reads, and (OKE) whether
the legacy device-plugin DaemonSet runs. The AKS nodes follow the pools dump itself (one node
per pool member, its vmSize, mode, node image, nodeLabels and keyed nodeTaints), so the
cluster and the pools reading describe the same cluster.

Every object made here carries the label ``aicr-tui.test/owner=cap`` and every node name the
prefix ``cap-``: the control plane is shared by the tier's tests, so cleanup goes by that
label, and the legacy DaemonSet only schedules onto nodes carrying it.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.conftest import KWOK_ANNOTATION, KWOK_ANNOTATION_VALUE, Cluster, condition_true
from tests.conftest import SAMPLES, TEST_DATA, run_cli

CAPTURES = SAMPLES / "captures"
SNAPSHOTS = SAMPLES / "snapshots"
MODELS_FILE = TEST_DATA / "live" / "cluster-models.yaml"
PREFIX = "cap-"
OWNER_LABEL = "aicr-tui.test/owner"
OWNER = "cap"
OWNER_SELECTOR = f"{OWNER_LABEL}={OWNER}"
# Oracle's opt-out label: the legacy DaemonSet's node affinity excludes nodes carrying it.
OKE_DISABLE_LABEL = "oci.oraclecloud.com/disable-gpu-device-plugin"
LEGACY_NAME = "nvidia-gpu-device-plugin"
LEGACY_NAMESPACE = "kube-system"

Readings = dict[tuple[str, str], dict[str, Any]]


def _facts() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(MODELS_FILE.read_text(encoding="utf-8"))
    return data


def _taint(text: str) -> dict[str, str]:
    """``key=value:Effect`` (AKS's nodeTaints form) as a Node taint."""
    key_value, _, effect = text.partition(":")
    key, _, value = key_value.partition("=")
    return {"key": key, "value": value, "effect": effect}


def _node(
    name: str,
    labels: dict[str, str],
    capacity: dict[str, str],
    node_info: dict[str, str],
    provider_id: str,
    taints: list[dict[str, str]],
) -> dict[str, Any]:
    spec: dict[str, Any] = {"providerID": provider_id}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": node_info["architecture"],
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": node_info["architecture"],
                OWNER_LABEL: OWNER,
                **labels,
            },
            "annotations": {KWOK_ANNOTATION: KWOK_ANNOTATION_VALUE},
        },
        "spec": spec,
        "status": {
            "capacity": dict(capacity),
            "allocatable": dict(capacity),
            "nodeInfo": {
                **node_info,
                # What every kubelet also reports (deterministic per node name).
                "machineID": uuid.uuid5(uuid.NAMESPACE_DNS, f"machine.{name}").hex,
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"system.{name}")).upper(),
                "bootID": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"boot.{name}")),
                "kubeProxyVersion": "",
            },
        },
    }


def aks_nodes(pools_dump: str) -> list[dict[str, Any]]:
    """One node per member of every pool in the ``az aks nodepool list -o json`` dump."""
    facts = _facts()["clouds"]["aks"]
    pools = json.loads((CAPTURES / pools_dump).read_text(encoding="utf-8"))
    rg, sub = facts["node-resource-group"], facts["subscription"]
    nodes = []
    for pool in pools:
        name, vm_size = pool["name"], pool["vmSize"]
        vmss = f"aks-{name}-{facts['vmss'][name]}-vmss"
        capacity = facts["capacity"][vm_size]
        gpu = "nvidia.com/gpu" in capacity
        driver = ((pool.get("gpuProfile") or {}).get("driver")) in facts["driver-loaded-modes"]
        labels = {
            "agentpool": name,
            "kubernetes.azure.com/agentpool": name,
            "kubernetes.azure.com/cluster": rg,
            "kubernetes.azure.com/mode": str(pool["mode"]).lower(),
            "kubernetes.azure.com/node-image-version": pool["nodeImageVersion"],
            "kubernetes.azure.com/nodepool-type": "VirtualMachineScaleSets",
            "kubernetes.azure.com/os-sku": pool["osSku"],
            "kubernetes.azure.com/role": "agent",
            "kubernetes.azure.com/storageprofile": "managed",
            "kubernetes.io/role": "agent",
            "node-role.kubernetes.io/agent": "",
            "node.kubernetes.io/instance-type": vm_size,
            "beta.kubernetes.io/instance-type": vm_size,
            "topology.kubernetes.io/region": facts["region"],
            "topology.kubernetes.io/zone": "0",
            **(pool.get("nodeLabels") or {}),
        }
        if gpu:
            labels["kubernetes.azure.com/accelerator"] = "nvidia"
            labels.update(facts["gpu-labels"])
            if driver:
                labels.update(facts["driver-labels"])
        taints = [_taint(t) for t in pool.get("nodeTaints") or []]
        for index in range(int(pool["count"])):
            provider_id = (
                f"azure:///subscriptions/{sub}/resourceGroups/{rg}/providers/"
                f"Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{index}"
            )
            nodes.append(
                _node(
                    f"{PREFIX}{vmss}{index:06d}",
                    labels,
                    capacity,
                    facts["nodeInfo"],
                    provider_id,
                    taints,
                )
            )
    return nodes


def oke_nodes(*, driver: bool) -> list[dict[str, Any]]:
    """The GB200 pool (nodes named by IP, the keyed GPU taint) and a CPU system pool."""
    facts = _facts()["clouds"]["oke"]
    nodes = []
    for pool in facts["pools"]:
        capacity = facts["capacity"][pool["shape"]]
        for index, ip in enumerate(pool["nodes"]):
            labels = {
                "name": pool["name"],
                "displayName": f"oke-{pool['name']}-{index}",
                "hostname": f"oke-{pool['name']}-{index}",
                "internal_addr": ip,
                "node.kubernetes.io/instance-type": pool["shape"],
                "beta.kubernetes.io/instance-type": pool["shape"],
                "oci.oraclecloud.com/fault-domain": f"FAULT-DOMAIN-{index % 3 + 1}",
                "topology.kubernetes.io/region": facts["region"],
                "topology.kubernetes.io/zone": f"{facts['region']}-AD-1",
                "node-role.kubernetes.io/node": "",
            }
            taints = []
            if pool["gpu"]:
                labels.update(facts["gpu-labels"])
                if driver:
                    labels.update(facts["driver-labels"])
                taints.append(dict(facts["gpu-taint"]))
            provider_id = f"ocid1.instance.oc1.iad.anuwcljcap{ip.replace('.', 'x')}"
            nodes.append(
                _node(f"{PREFIX}{ip}", labels, capacity, facts["nodeInfo"], provider_id, taints)
            )
    return nodes


@dataclass(frozen=True)
class Model:
    """A shipped snapshot and the cluster that reproduces it."""

    snapshot: str
    cloud: str
    nodes: list[dict[str, Any]]
    dump_args: list[str] = field(default_factory=list)
    legacy: bool = False

    @property
    def id(self) -> str:
        return self.snapshot.removesuffix(".yaml")

    def shipped(self) -> dict[str, Any]:
        doc: dict[str, Any] = yaml.safe_load((SNAPSHOTS / self.snapshot).read_text())
        return doc


def models() -> list[Model]:
    out = []
    for entry in _facts()["models"]:
        flag = "--aks-gpu-pools" if entry["cloud"] == "aks" else "--oke-addons"
        dump = [flag, str(CAPTURES / entry["dump"])] if entry.get("dump") else []
        nodes = (
            aks_nodes(entry["pools"])
            if entry["cloud"] == "aks"
            else oke_nodes(driver=bool(entry["driver"]))
        )
        out.append(Model(entry["snapshot"], entry["cloud"], nodes, dump, bool(entry.get("legacy"))))
    return out


MODELS = models()


def model(snapshot: str) -> Model:
    (found,) = [m for m in MODELS if m.snapshot == snapshot]
    return found


# -- nodes --------------------------------------------------------------------------------


def delete_ours(cluster: Cluster) -> None:
    """Every node this module made (by label), the legacy DaemonSet, waited until gone."""
    delete_legacy(cluster)
    cluster.kubectl(
        "delete", "nodes", "-l", OWNER_SELECTOR, "--ignore-not-found", "--wait=true", timeout=180
    )


@contextmanager
def modelled_cluster(cluster: Cluster, nodes: list[dict[str, Any]]) -> Iterator[list[str]]:
    """Create ``nodes`` in one request, wait until kwok reports each Ready; delete them after
    (and any left by an interrupted run before)."""
    delete_ours(cluster)
    names = [n["metadata"]["name"] for n in nodes]
    try:
        cluster.kubectl(
            "create",
            "-f",
            "-",
            input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}),
        )

        def all_ready() -> bool:
            listed = cluster.list_objects("nodes", selector=OWNER_SELECTOR)
            ready = {n["metadata"]["name"] for n in listed if condition_true(n, "Ready")}
            return ready == set(names)

        cluster.wait_until(f"kwok nodes {names} Ready", all_ready)
        yield names
    finally:
        delete_ours(cluster)


# -- the legacy DaemonSet -------------------------------------------------------------------


def legacy_daemonset(*, reconcile: bool = True) -> dict[str, Any]:
    """The shipped legacy-plugin capture's DaemonSet as one would create it: its labels and
    spec, without the server-set metadata and status (the DaemonSet controller writes the
    real status). One addition: node affinity to this module's nodes (the control plane is
    shared) that, as Oracle's plugin does, leaves out nodes labelled
    ``oci.oraclecloud.com/disable-gpu-device-plugin=true``. ``reconcile=False`` drops the
    addon-manager label (an unrelated workload of the same name)."""
    shipped = json.loads((CAPTURES / "oke-legacy-daemonset-active.json").read_text())
    labels = dict(shipped["metadata"]["labels"])
    if not reconcile:
        labels.pop("addonmanager.kubernetes.io/mode")
    spec = copy.deepcopy(shipped["spec"])
    spec["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": OWNER_LABEL, "operator": "In", "values": [OWNER]},
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            {"key": OKE_DISABLE_LABEL, "operator": "NotIn", "values": ["true"]},
                        ]
                    }
                ]
            }
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": LEGACY_NAME, "namespace": LEGACY_NAMESPACE, "labels": labels},
        "spec": spec,
    }


def shipped_legacy_status() -> dict[str, Any]:
    status: dict[str, Any] = json.loads(
        (CAPTURES / "oke-legacy-daemonset-active.json").read_text()
    )["status"]
    return status


def create_legacy(cluster: Cluster, *, reconcile: bool = True, desired: int = 3) -> dict[str, Any]:
    """Create the legacy DaemonSet; wait until its controller observed it and, for ``desired``
    nodes, kwok reports its pods ready. Returns the DaemonSet as read back."""
    cluster.apply(legacy_daemonset(reconcile=reconcile), server_side=True)

    def settled() -> dict[str, Any] | None:
        ds = cluster.get("daemonset", LEGACY_NAME, LEGACY_NAMESPACE)
        if ds is None:
            return None
        status = ds.get("status") or {}
        if status.get("observedGeneration") != ds["metadata"]["generation"]:
            return None
        if status.get("desiredNumberScheduled") != desired:
            return None
        if status.get("numberReady") != desired or status.get("numberAvailable", 0) != desired:
            return None
        return ds

    found: dict[str, Any] = cluster.wait_until(
        f"the legacy DaemonSet observed with {desired} ready pods", settled
    )
    return found


def delete_legacy(cluster: Cluster) -> None:
    cluster.kubectl(
        "delete", "daemonset", LEGACY_NAME, "-n", LEGACY_NAMESPACE,
        "--ignore-not-found", "--wait=true", "--cascade=foreground", timeout=180,
    )  # fmt: skip


# -- capturing and comparing ----------------------------------------------------------------


def readings(doc: dict[str, Any]) -> Readings:
    return {
        (m["type"], s["subtype"]): dict(s.get("data") or {})
        for m in doc["measurements"]
        for s in m["subtypes"]
    }


def contexts(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m["type"], s["subtype"]): dict(s["context"])
        for m in doc["measurements"]
        for s in m["subtypes"]
        if s.get("context")
    }


@dataclass(frozen=True)
class Captured:
    doc: dict[str, Any]
    stderr: str
    nodes: list[dict[str, Any]]  # every node of the cluster while the capture ran


def _node_set(cluster: Cluster) -> tuple[list[dict[str, Any]], set[tuple[str, str, str]]]:
    nodes = cluster.list_objects("nodes")
    key = {
        (n["metadata"]["name"], n["metadata"]["uid"], n["metadata"]["resourceVersion"])
        for n in nodes
    }
    return nodes, key


def capture(
    cluster: Cluster, tmp_path: Path, *args: str, kubeconfig: Path | None = None
) -> Captured:
    """``aicr-tui snapshot -k KUBECONFIG ARGS -t json``; the node list around it is kept (the
    capture reads every node, and another test of the shared tier may add or drop some: a
    capture during which the node set changed is taken again)."""
    kubeconfig = kubeconfig or cluster.kubeconfig
    out = tmp_path / "live.json"
    for _attempt in range(5):
        before_nodes, before = _node_set(cluster)
        proc = run_cli(
            "snapshot", "-k", str(kubeconfig), *args, "-t", "json", "-o", str(out),
            env={"KUBECONFIG": str(kubeconfig), "PATH": cluster.env["PATH"]}, timeout=180,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        after_nodes, after = _node_set(cluster)
        # Same nodes, same label and taint keys (a foreign node turning Ready drops its
        # not-ready taint; heartbeats alone change resourceVersion, not the readings).
        if {k[:2] for k in before} == {k[:2] for k in after} and topology(before_nodes) == topology(
            after_nodes
        ):
            return Captured(json.loads(out.read_text()), proc.stderr, before_nodes)
    raise AssertionError("the cluster's node set kept changing during the capture")


def topology(nodes: list[dict[str, Any]]) -> dict[str, int]:
    """``NodeTopology.summary`` of a node list: nodes, distinct label keys, distinct taint keys."""
    labels = {k for n in nodes for k in (n["metadata"].get("labels") or {})}
    taints = {t["key"] for n in nodes for t in (n.get("spec") or {}).get("taints") or []}
    return {"node-count": len(nodes), "label-count": len(labels), "taint-count": len(taints)}


def server_version(cluster: Cluster) -> dict[str, str]:
    body = json.loads(cluster.kubectl("get", "--raw", "/version").stdout)
    return {
        "version": body["gitVersion"],
        "platform": body["platform"],
        "goVersion": body["goVersion"],
    }


# What a live capture legitimately reads differently from a shipped snapshot, and why. Every
# other field of the shipped snapshot must be read exactly, and the live capture may hold no
# field beyond these additions.
LIVE_DIFFERENCES = """
metadata.timestamp, metadata.version   the time and tool version of this run
metadata.source-node                   the shipped node name with the tier's `cap-` prefix
K8s.server.*                           this control plane's /version (v1.34.4, its goVersion
                                       and platform), not the captured cluster's
K8s.node.source-node, provider-id,     the API capture records them; the shipped samples
  container-runtime-id, operating-system  leave them out (values checked against the node)
OS.release.PRETTY_NAME                 the node's osImage, kept beside ID/VERSION_ID
GPU.hardware.detection-source          `kubernetes-api` (read through the API) where the
                                       agent-made samples say `nfd`
GPU.hardware.driver-loaded             true only from GFD's CUDA driver labels; without them
                                       the API cannot tell a missing driver from a GFD that
                                       never ran, so a shipped `false` is left out (never true)
K8s.oke-legacy-plugin (AKS)            read on every cluster (spec oke.md §2.4): none/absent
NodeTopology.summary                   not in the samples: counts over the cluster's nodes
GPU.hardware context                   node, nvidia.com/gpu.product and instance-type labels of
                                       the GPU node
"""


def expected_live(
    model: Model, server: dict[str, str], nodes: list[dict[str, Any]]
) -> tuple[dict[str, Any], Readings]:
    """The shipped snapshot's metadata and readings turned into what a live capture of the
    modelled cluster must read (see LIVE_DIFFERENCES), from the node list it ran against."""
    shipped = model.shipped()
    want = readings(shipped)
    source = PREFIX + shipped["metadata"]["source-node"]
    (chosen,) = [n for n in model.nodes if n["metadata"]["name"] == source]
    info = chosen["status"]["nodeInfo"]
    want[("K8s", "server")] = dict(server)
    want[("K8s", "node")] |= {
        "source-node": source,
        "provider-id": chosen["spec"]["providerID"],
        "container-runtime-id": info["containerRuntimeVersion"],
        "operating-system": info["operatingSystem"],
    }
    want[("OS", "release")]["PRETTY_NAME"] = info["osImage"]
    hardware = want[("GPU", "hardware")]
    assert hardware.pop("detection-source") == "nfd"
    if hardware.get("driver-loaded") is False:
        del hardware["driver-loaded"]
    want.setdefault(
        ("K8s", "oke-legacy-plugin"), {"nvidia-gpu-device-plugin": "none", "daemonset": "absent"}
    )
    want[("NodeTopology", "summary")] = topology(nodes)
    hardware["detection-source"] = "kubernetes-api"
    return {"source-node": source}, want
