"""kwok node models of the shipped captures (recipes/samples/snapshots/*.yaml).

Each model is the cluster side of a shipped snapshot as the Kubernetes API holds it: nodes
with the labels, taints, providerID, capacity and nodeInfo a kubelet, NFD and GPU Feature
Discovery write on an AKS or OKE GPU pool, and (OKE) the legacy device-plugin DaemonSet.
``aicr-tui snapshot -k`` against them must read what the shipped snapshot holds.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from tests.conftest import SAMPLES

CAPTURES = SAMPLES / "captures"
SNAPSHOTS = SAMPLES / "snapshots"

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
AKS_SUB = "11111111-2222-3333-4444-555555555555"
AKS_NODE_RG = "mc_gpu-rg_gpu-aks_eastus"
AKS_NODE_IMAGE = "AKSUbuntu-2404gen2containerd-202510.19.0"


def _aks_node(pool: str, vmss: str, index: int, *, gpus: int, driver: bool) -> dict[str, Any]:
    name = f"aks-{pool}-{vmss}-vmss{index:06d}"
    labels = {
        "agentpool": pool,
        "kubernetes.azure.com/agentpool": pool,
        "kubernetes.azure.com/cluster": AKS_NODE_RG,
        "kubernetes.azure.com/mode": "user" if gpus else "system",
        "kubernetes.azure.com/node-image-version": AKS_NODE_IMAGE,
        "kubernetes.azure.com/os-sku": "Ubuntu",
        "kubernetes.azure.com/role": "agent",
        "node.kubernetes.io/instance-type": (
            "Standard_ND96isr_H100_v5" if gpus else "Standard_D8ds_v5"
        ),
        "topology.kubernetes.io/region": "eastus",
    }
    spec: dict[str, Any] = {
        "providerID": (
            f"azure:///subscriptions/{AKS_SUB}/resourceGroups/{AKS_NODE_RG}/providers/"
            f"Microsoft.Compute/virtualMachineScaleSets/aks-{pool}-{vmss}-vmss/"
            f"virtualMachines/{index}"
        )
    }
    capacity = (
        {"cpu": "96", "memory": "1900Gi", "pods": "110"}
        if gpus
        else {
            "cpu": "8",
            "memory": "32Gi",
            "pods": "110",
        }
    )
    if gpus:
        labels |= {
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/gpu.count": str(gpus),
        }
        if driver:
            labels |= {
                "nvidia.com/cuda.driver-version.full": "570.172.08",
                "nvidia.com/cuda.driver.major": "570",
            }
        spec["taints"] = [dict(GPU_TAINT)]
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-1059-azure",
                "kubeletVersion": "v1.34.2",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
            },
        },
    }


def aks_nodes(*, driver: bool) -> list[dict[str, Any]]:
    """A system pool node and two gpupool1 H100 nodes (8 GPUs each, the keyed GPU taint);
    ``driver``: GFD's CUDA driver labels are present (the driver is loaded)."""
    return [
        _aks_node("system", "12345678", 0, gpus=0, driver=False),
        _aks_node("gpupool1", "31415926", 0, gpus=8, driver=driver),
        _aks_node("gpupool1", "31415926", 1, gpus=8, driver=driver),
    ]


def _oke_node(ip: str, *, gpus: int, driver: bool) -> dict[str, Any]:
    labels = {
        "kubernetes.io/arch": "arm64",
        "node.kubernetes.io/instance-type": "BM.GPU.GB200.4" if gpus else "VM.Standard.A1.Flex",
        "oci.oraclecloud.com/fault-domain": "FAULT-DOMAIN-1",
        "topology.kubernetes.io/region": "us-ashburn-1",
        "name": "gpu-pool" if gpus else "system-pool",
    }
    spec: dict[str, Any] = {
        "providerID": f"ocid1.instance.oc1.iad.aicrtui{ip.replace('.', '')}",
    }
    capacity = (
        {"cpu": "144", "memory": "900Gi", "pods": "110"}
        if gpus
        else {
            "cpu": "8",
            "memory": "64Gi",
            "pods": "110",
        }
    )
    if gpus:
        labels |= {
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": "NVIDIA-GB200",
        }
        if driver:
            labels["nvidia.com/cuda.driver.major"] = "570"
        spec["taints"] = [dict(GPU_TAINT)]
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "metadata": {"name": ip, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "nodeInfo": {
                "architecture": "arm64",
                "containerRuntimeVersion": "cri-o://1.34.1",
                "kernelVersion": "5.15.0-308.179.6.el8uek.aarch64",
                "kubeletVersion": "v1.34.1",
                "operatingSystem": "linux",
                "osImage": "Oracle Linux Server 8.10",
            },
        },
    }


def oke_nodes(*, driver: bool) -> list[dict[str, Any]]:
    """Two GB200 nodes (4 GPUs each, by node IP as OKE names them) and a CPU node."""
    return [
        _oke_node("10.0.10.23", gpus=4, driver=driver),
        _oke_node("10.0.10.24", gpus=4, driver=driver),
        _oke_node("10.0.20.5", gpus=0, driver=False),
    ]


def legacy_daemonset(*, reconcile: bool = True) -> dict[str, Any]:
    """The shipped legacy-plugin capture's DaemonSet as one would create it: its spec and
    labels, without the server-set metadata and status (the DaemonSet controller writes the
    real status). ``reconcile=False`` drops the addon-manager label (an unrelated workload)."""
    shipped = json.loads((CAPTURES / "oke-legacy-daemonset-active.json").read_text())
    labels = dict(shipped["metadata"]["labels"])
    if not reconcile:
        labels.pop("addonmanager.kubernetes.io/mode")
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": shipped["metadata"]["name"],
            "namespace": "kube-system",
            "labels": labels,
        },
        "spec": copy.deepcopy(shipped["spec"]),
    }


@dataclass(frozen=True)
class Model:
    """A shipped snapshot and what reproduces it: nodes, provider dump flags, legacy DS."""

    snapshot: str
    nodes: list[dict[str, Any]]
    dump_args: list[str] = field(default_factory=list)
    legacy: bool = False


def _aks(snapshot: str, pools: str | None, *, driver: bool = True) -> Model:
    args = ["--aks-gpu-pools", str(CAPTURES / pools)] if pools else []
    return Model(snapshot, aks_nodes(driver=driver), args)


def _oke(snapshot: str, addons: str, *, driver: bool, legacy: bool = False) -> Model:
    return Model(
        snapshot, oke_nodes(driver=driver), ["--oke-addons", str(CAPTURES / addons)], legacy
    )


MODELS = [
    _aks("aks-h100-install.yaml", "aks-pools-install.json"),
    _aks("aks-h100-managed.yaml", "aks-pools-managed.json"),
    _aks("aks-h100-mixed.yaml", "aks-pools-mixed.json"),
    _aks("aks-h100-none.yaml", "aks-pools-none.json", driver=False),
    _aks("aks-h100-no-pools.yaml", None),
    _oke("oke-gb200-active.yaml", "oke-addons-active.json", driver=True),
    _oke("oke-gb200-deleting.yaml", "oke-addons-deleting.json", driver=True),
    _oke("oke-gb200-absent.yaml", "oke-addons-absent.json", driver=False),
    _oke(
        "oke-gb200-absent-legacy-active.yaml", "oke-addons-absent.json", driver=False, legacy=True
    ),
]
