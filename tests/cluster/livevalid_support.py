"""Helpers for the live-validation tests of the cluster tier (tests/cluster/test_livevalid_*.py).

A "deployed" cluster without helm: the objects the deployment phase reads are created
directly, and the real controllers make their status true. Every enabled component's
``expectedResources`` becomes a Deployment or DaemonSet in a ``val-`` prefixed namespace,
pinned to this module's kwok nodes (``val-`` nodes, label ``aicr-val/role``); the
kube-controller-manager creates their pods, the scheduler binds them and kwok runs them, so
``readyReplicas`` / ``numberReady`` are the real controllers' counts. The recipe is the
shipped training sample with every namespace prefixed, so nothing collides with the other
engineers' objects (the checks' own cluster-scoped reads, nodes and ``clusterpolicies``,
see the whole cluster, so the tests assert only what foreign objects cannot change).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.conftest import Cluster
from tests.conftest import REPO

PREFIX = "val-"
ROLE_LABEL = "aicr-val/role"
SAMPLES = REPO / "aicr_tui" / "recipes" / "samples"
TRAINING_RECIPE = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"
SNAPSHOT = SAMPLES / "snapshots" / "aks-h100-install.yaml"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
OPERATOR_VERSION = "v26.7.0"
CLUSTER_POLICY_CRD = "clusterpolicies.nvidia.com"

# Every namespaced kind a check can create (aicr_tui/core/validation/checks: probe Pods, NCCL Secret,
# Service and Pods, the Trainer/Dynamo CRs are dry runs or need CRDs this cluster lacks, the
# HPA target Deployment and its HPA, AIPerf Jobs), plus what their controllers derive from
# them (ReplicaSets, EndpointSlices, Events are not listed: the server writes Events).
CHECK_KINDS = (
    "pods",
    "jobs.batch",
    "configmaps",
    "secrets",
    "services",
    "deployments.apps",
    "replicasets.apps",
    "horizontalpodautoscalers.autoscaling",
    "endpointslices.discovery.k8s.io",
    "serviceaccounts",
)


def nodes() -> list[dict[str, Any]]:
    """A system node and two 8-GPU ND96isr GPU nodes with the keyed GPU taint."""
    cpu = {"cpu": "32", "memory": "128Gi", "pods": "250"}
    gpu = {"cpu": "96", "memory": "1900Gi", "pods": "250", "nvidia.com/gpu": "8"}
    out: list[dict[str, Any]] = [
        {
            "metadata": {
                "name": f"{PREFIX}cpu-0",
                "labels": {ROLE_LABEL: "system", "kubernetes.azure.com/agentpool": "system"},
            },
            "status": {"capacity": cpu, "allocatable": cpu},
        }
    ]
    for i in range(2):
        out.append(
            {
                "metadata": {
                    "name": f"{PREFIX}gpu-{i}",
                    "labels": {
                        ROLE_LABEL: "gpu",
                        "kubernetes.azure.com/agentpool": "valgpu",
                        "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
                        "nvidia.com/gpu.present": "true",
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                    },
                },
                "spec": {"taints": [GPU_TAINT]},
                "status": {"capacity": gpu, "allocatable": gpu},
            }
        )
    return out


def ensure_nodes(cluster: Cluster, made: list[str]) -> None:
    """Create this module's kwok nodes (those not already there), appending each name to
    ``made`` as it goes so a caller's ``finally`` deletes exactly what exists."""
    for node in nodes():
        name = node["metadata"]["name"]
        if cluster.get("node", name) is None:
            cluster.create_kwok_node(node)
        made.append(name)


def prefixed_recipe(out_dir: Path, source: Path = TRAINING_RECIPE) -> tuple[Path, dict[str, Any]]:
    """The sample recipe with every component namespace (and expected resource namespace)
    prefixed with ``val-``; returns its path and the document."""
    doc = yaml.safe_load(source.read_text(encoding="utf-8"))
    for ref in doc["componentRefs"]:
        if ref.get("namespace"):
            ref["namespace"] = PREFIX + ref["namespace"]
        for res in ref.get("expectedResources") or []:
            if res.get("namespace"):
                res["namespace"] = PREFIX + res["namespace"]
    path = out_dir / source.name.replace(".recipe", ".val.recipe")
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path, doc


def expected_resources(doc: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of every enabled component's expectedResources."""
    out = []
    for ref in doc["componentRefs"]:
        if ref.get("enabled", True) is False:
            continue
        for res in ref.get("expectedResources") or []:
            out.append((res["kind"], res["namespace"], res["name"]))
    return out


def namespaces_of(doc: Mapping[str, Any]) -> list[str]:
    found = {ref["namespace"] for ref in doc["componentRefs"] if ref.get("namespace")}
    found |= {ns for _, ns, _ in expected_resources(doc)}
    return sorted(found)


def _app_labels(name: str) -> dict[str, str]:
    labels = {"app": name, "app.kubernetes.io/name": name}
    if name == "gpu-operator":
        labels["app.kubernetes.io/version"] = OPERATOR_VERSION.lstrip("v")
    return labels


def workload(kind: str, namespace: str, name: str, *, schedulable: bool = True) -> dict[str, Any]:
    """A Deployment (one replica, on the system node) or a DaemonSet (on the GPU nodes).
    ``schedulable=False`` pins it to a role no node has: it exists and never becomes ready."""
    labels = _app_labels(name)
    role = ("system" if kind == "Deployment" else "gpu") if schedulable else "nowhere"
    image = (
        f"nvcr.io/nvidia/gpu-operator:{OPERATOR_VERSION}"
        if name == "gpu-operator"
        else f"registry.invalid/{name}:1"
    )
    template = {
        "metadata": {"labels": labels},
        "spec": {
            "nodeSelector": {ROLE_LABEL: role},
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "main", "image": image}],
        },
    }
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": template}
    if kind == "Deployment":
        spec["replicas"] = 1
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def deployed_state(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Namespaces and workloads for every expected resource of ``doc``."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        for ns in namespaces_of(doc)
    ]
    docs += [
        workload(k, ns, n)
        for k, ns, n in expected_resources(doc)
        if k in ("Deployment", "DaemonSet")
    ]
    return docs


def workload_ready(cluster: Cluster, kind: str, namespace: str, name: str) -> bool:
    obj = cluster.get(kind.lower() + ".apps", name, namespace)
    if obj is None:
        return False
    st = obj.get("status") or {}
    if kind == "Deployment":
        want = int((obj.get("spec") or {}).get("replicas", 1))
        return want > 0 and int(st.get("availableReplicas") or 0) >= want
    desired = int(st.get("desiredNumberScheduled") or 0)
    return desired > 0 and int(st.get("numberReady") or 0) >= desired


def wait_deployed(cluster: Cluster, doc: Mapping[str, Any]) -> None:
    for kind, ns, name in expected_resources(doc):
        if kind in ("Deployment", "DaemonSet"):
            cluster.wait_until(
                f"{kind} {ns}/{name} ready",
                lambda k=kind, n=ns, m=name: workload_ready(cluster, k, n, m),
                timeout=180,
            )


def delete_namespaces(cluster: Cluster, names: Iterable[str]) -> None:
    names = list(names)
    if names:
        cluster.kubectl(
            "delete", "namespace", *names, "--ignore-not-found", "--wait=true", timeout=300
        )


# -- what a run leaves behind -----------------------------------------------------------------


def api_state(cluster: Cluster, namespaces: Iterable[str]) -> dict[str, set[str]]:
    """Every namespace (name) and, in each of ``namespaces`` that exists, every object of
    the kinds a check can create (``kind/name``), as read from the API."""
    all_ns = cluster.names("namespaces")
    state: dict[str, set[str]] = {"namespaces": all_ns}
    for ns in namespaces:
        if ns not in all_ns:
            continue
        for kind in CHECK_KINDS:
            for obj in cluster.list_objects(kind, ns):
                meta = obj["metadata"]
                state.setdefault(ns, set()).add(f"{kind}/{meta['name']}")
    return state


def labelled_leftovers(cluster: Cluster, run_label: str = "aicr.nvidia.com/run-id") -> list[str]:
    """Objects anywhere in the cluster carrying the validation run-id label."""
    left = []
    for kind in CHECK_KINDS:
        for obj in cluster.list_objects(kind, all_namespaces=True, selector=run_label):
            meta = obj["metadata"]
            left.append(f"{kind} {meta.get('namespace')}/{meta['name']}")
    return left


# -- running aicr-tui -------------------------------------------------------------------------


def cli_env(cluster: Cluster) -> dict[str, str]:
    env = dict(os.environ)
    env.update(cluster.env)
    env.pop("AICR_AKS_GPU_POOLS_PATH", None)
    env.pop("AICR_OKE_ADDONS_PATH", None)
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    return env


def cli_argv(*args: str) -> list[str]:
    exe = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "aicr-tui"
    if not exe.is_file():
        exe = REPO / ".venv" / "bin" / "aicr-tui"
    return [str(exe), *args]


def validate(
    cluster: Cluster, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv("validate", "--plain", *args),
        env=cli_env(cluster),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def interrupt_when(
    cluster: Cluster,
    args: list[str],
    ready: Any,
    *,
    timeout: float = 300,
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Start ``aicr-tui validate args``, wait until ``ready()`` returns something truthy
    (polled against the API), send SIGINT and wait for the exit; returns the finished
    process and what ``ready()`` returned."""
    proc = subprocess.Popen(
        cli_argv("validate", "--plain", *args),
        env=cli_env(cluster),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: Any = None
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            seen = ready()
            if seen:
                break
            time.sleep(0.5)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), seen


def short_catalog(data_dir: Path, budgets: Mapping[str, str]) -> Path:
    """``--data DIR`` whose validators/catalog.yaml is the shipped catalog with the given
    checks' ``timeout`` shortened (kwok pods never finish a probe: the budget is the wait)."""
    shipped = yaml.safe_load(
        (REPO / "aicr_tui" / "recipes" / "validators" / "catalog.yaml").read_text()
    )
    entries = [
        dict(e, timeout=budgets[e["name"]]) for e in shipped["validators"] if e["name"] in budgets
    ]
    (data_dir / "validators").mkdir(parents=True, exist_ok=True)
    doc = {k: v for k, v in shipped.items() if k != "validators"}
    doc["validators"] = entries
    (data_dir / "validators" / "catalog.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return data_dir


def ctrf(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
