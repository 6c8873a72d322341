"""An in-memory cluster for tests and the demo recordings — never used for a live run.

``SimulatedCluster`` implements :class:`ClusterExecutor` over a scripted cluster: nodes,
workloads, namespaces, served API groups and custom objects, and pods whose logs are the
real output formats of the tools the checks run (the nvidia-smi table, nccl-tests
all_reduce_perf, an AIPerf JSON report), generated from the scenario's parameters. Time is a
:class:`VirtualClock` that advances when a check sleeps or calls the API, so a recorded demo
run is reproducible byte for byte.

``python -m tests.simulated`` rewrites the shipped recordings under
``aicr_tui/recipes/samples/validation/``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.foundation.fileio import atomic_write_text
from aicr_tui.core.recipe.loading import load_recipe
from aicr_tui.core.validation.catalog import load_validator_catalog
from aicr_tui.core.validation.checks.base import VALIDATION_NAMESPACE
from aicr_tui.core.validation.events import Event, Measurement
from aicr_tui.core.validation.executor import (
    ContainerOutcome,
    NodeInfo,
    PodInfo,
    PodOutcome,
    WorkloadInfo,
)
from aicr_tui.core.validation.policy import view_with_policy
from aicr_tui.core.validation.recipe_view import RecipeView
from aicr_tui.core.validation.runner import RunResult, ValidationRequest, run_validation
from aicr_tui.core.validation.stream import EventStream

API_LATENCY_S = 0.04


class VirtualClock:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class NodeProfile:
    gpu_name: str = "NVIDIA H100 80GB HBM3"
    driver: str = "580.126.09"
    cuda: str = "13.0"
    memory_mib: int = 81559


@dataclass
class Scenario:
    name: str
    nodes: list[NodeInfo]
    profile: NodeProfile = field(default_factory=NodeProfile)
    gpu_operator_version: str = "v26.7.0"
    isolation_breach: bool = False
    nccl_busbw: float = 157.29
    nccl_seconds: float = 38.0
    inference_throughput: float = 148004.0
    inference_ttft_p99_ms: float = 579.70
    dgd_ready_after_s: float = 45.0
    unhealthy: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    missing_groups: set[str] = field(default_factory=set)
    image_pull_failure: set[str] = field(default_factory=set)
    # NCCL_DEBUG=INFO transport lines the launcher prints before the table (the NVLS / NET
    # markers the transport-variant checks assert); empty for the plain check's scenarios.
    nccl_transport_log: str = ""
    busy_nodes: set[str] = field(default_factory=set)  # pods pinned here never start
    unplaceable_pods: bool = False  # the scheduler places no pod (it says why)
    # conformance capabilities (each knob turns one check to a failure or an unmeasurable)
    dcgm_metrics: tuple[str, ...] = (
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_FB_USED",
    )
    prometheus_scrapes_dcgm: bool = True
    custom_metrics_api: bool = True
    gang_split: bool = False  # kai-scheduler places only one member of the gang
    hpa_scales: bool = True
    autoscaled_pools: tuple[str, ...] = ("gpupool", "ncpool")
    autoscaler_health: str = "Healthy"
    webhook_rejects: bool = True
    gateway_programmed: bool = True
    unreachable_services: set[str] = field(default_factory=set)
    dra_gpu_slices: bool = False  # the DRA driver advertises whole GPUs too (#1327 drift)


@dataclass
class _SimPod:
    info: PodInfo
    created: float
    duration: float
    logs: str
    exit_code: int = 0
    waiting_reason: str = ""


def _node(name: str, sku: str, gpus: int, rdma: bool) -> NodeInfo:
    alloc = {"cpu": "96", "memory": "1900Gi", "nvidia.com/gpu": str(gpus)}
    if rdma:
        alloc["rdma/hca_shared_devices_a"] = "63"
    return NodeInfo(
        name,
        {
            "kubernetes.io/hostname": name,
            "node.kubernetes.io/instance-type": sku,
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "kubernetes.azure.com/agentpool": name.split("-")[1],
        },
        alloc,
    )


def aks_nd96_scenario() -> Scenario:
    """2x Standard_ND96isr_H100_v5: the AKS brief's validated run (NCCL 157.29 GB/s)."""
    nodes = [
        _node(f"aks-gpupool-31415926-vmss00000{i}", "Standard_ND96isr_H100_v5", 8, True)
        for i in range(2)
    ]
    return Scenario("aks-h100-training", nodes)


def aks_nd96_inference_scenario() -> Scenario:
    """1x Standard_ND96isr_H100_v5 serving Qwen/Qwen3-8B: the brief's 148,004 tok/s, 579.70 ms."""
    scenario = aks_nd96_scenario()
    scenario.name = "aks-h100-inference-dynamo"
    scenario.nodes = scenario.nodes[:1]
    return scenario


NCCL_TESTS_IMAGE = (
    "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
)


def aks_nd96_no_egress_scenario() -> Scenario:
    """2x ND96isr on a private cluster without egress to public.ecr.aws: the NCCL image
    cannot be pulled, so the declared 150 GB/s gate is not measured (the AKS brief's caveat)."""
    scenario = aks_nd96_scenario()
    scenario.name = "aks-h100-training-no-egress"
    scenario.image_pull_failure = {NCCL_TESTS_IMAGE}
    return scenario


def aks_nc80_scenario() -> Scenario:
    """2x Standard_NC80adis_H100_v5: full-node floors not applicable; toolkit left permissive."""
    nodes = [
        _node(f"aks-ncpool-27182818-vmss00000{i}", "Standard_NC80adis_H100_v5", 2, False)
        for i in range(2)
    ]
    return Scenario(
        "aks-nc80adis-training",
        nodes,
        profile=NodeProfile(gpu_name="NVIDIA H100 NVL", memory_mib=95830),
        isolation_breach=True,
        nccl_busbw=38.41,
    )


# -- tool output in the real formats -----------------------------------------------------


def nvidia_smi_table(profile: NodeProfile, gpus: int) -> str:
    lines = [
        "Sun Nov 29 21:04:11 2026       ",
        "+-----------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {profile.driver:<22} Driver Version: {profile.driver:<14} CUDA Version: {profile.cuda:<8} |",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for i in range(gpus):
        bus = f"0000{i + 1:04X}:00:00.0"
        lines += [
            f"| {i:>3}  {profile.gpu_name:<29} On  | {bus:>18} Off |                    0 |",
            f"| N/A   {31 + i}C    P0             {69 + i}W /  700W |       1MiB / {profile.memory_mib:>6}MiB |      0%      Default |",
            "|                                         |                        |             Disabled |",
            "+-----------------------------------------+------------------------+----------------------+",
        ]
    lines += [
        "",
        "+-----------------------------------------------------------------------------------------+",
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        "+-----------------------------------------------------------------------------------------+",
        "GPU_CHECK_SUCCESS",
    ]
    return "\n".join(lines) + "\n"


def nccl_all_reduce_output(nodes: list[NodeInfo], peak_busbw: float, profile: NodeProfile) -> str:
    gpus = nodes[0].gpu_count
    nranks = gpus * len(nodes)
    factor = 2 * (nranks - 1) / nranks
    head = [
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    rank = 0
    for n in nodes:
        for d in range(gpus):
            head.append(
                f"#  Rank {rank:>2} Group  0 Pid {1200 + rank:>6} on {n.name} device {d:>2} [0x{0x18 + d:02x}] {profile.gpu_name}"
            )
            rank += 1
    head += [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]
    rows: list[str] = []
    total = 0.0
    sizes = [1024 * 2**i for i in range(25)]  # 1K .. 16G
    # time = fixed latency + size / peak algorithm bandwidth, with the peak chosen so the
    # largest size lands exactly on the scenario's bus bandwidth
    latency_us = 45.0
    largest = sizes[-1]
    t_largest = largest / (peak_busbw / factor * 1e3)
    alg_peak = largest / ((t_largest - latency_us) * 1e3)
    for size in sizes:
        t_us = latency_us + size / (alg_peak * 1e3)
        algbw = size / (t_us * 1e3)
        busbw = algbw * factor
        ip_t = t_us * 0.999
        ip_algbw = size / (ip_t * 1e3)
        total += busbw
        rows.append(
            f"{size:>12}  {size // 4:>12}     float     sum      -1  {_t(t_us):>7}  {algbw:6.2f}  {busbw:6.2f}      0  {_t(ip_t):>7}  {ip_algbw:6.2f}  {ip_algbw * factor:6.2f}      0"
        )
    tail = [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {total / len(sizes):.4f} ",
        "#",
    ]
    return "\n".join(head + rows + tail) + "\n"


def _t(us: float) -> str:
    return f"{us:.2f}" if us < 1000 else f"{us:.0f}" if us >= 10000 else f"{us:.1f}"


def aiperf_report(throughput: float, ttft_p99_ms: float, requests: int, concurrency: int) -> str:
    ttft = {
        "unit": "ms",
        "avg": round(ttft_p99_ms * 0.41, 4),
        "p50": round(ttft_p99_ms * 0.37, 4),
        "p90": round(ttft_p99_ms * 0.78, 4),
        "p95": round(ttft_p99_ms * 0.88, 4),
        "p99": round(ttft_p99_ms, 4),
        "min": round(ttft_p99_ms * 0.05, 4),
        "max": round(ttft_p99_ms * 1.07, 4),
        "std": round(ttft_p99_ms * 0.19, 4),
    }
    duration = requests * 128 / throughput
    doc = {
        "request_throughput": {"unit": "requests/sec", "avg": round(requests / duration, 4)},
        "time_to_first_token": ttft,
        "output_token_throughput": {"unit": "tokens/sec", "avg": round(throughput, 4)},
        "output_sequence_length": {
            "unit": "tokens",
            "avg": 128.0,
            "p50": 128.0,
            "min": 128.0,
            "max": 128.0,
        },
        "benchmark_duration": {"unit": "sec", "avg": round(duration, 4)},
        "request_count": {"unit": "requests", "avg": float(requests)},
        "was_cancelled": False,
        "error_summary": [],
        "input_config": {"loadgen": {"concurrency": concurrency, "request_count": requests}},
    }
    return "===AIPERF-RESULT===\n" + json.dumps(doc, indent=2) + "\n===AIPERF-RESULT===\n"


# -- the cluster -------------------------------------------------------------------------

# What the simulated API server serves besides the recipe's groups (SimulatedCluster.served).
CORE_RESOURCES = frozenset(
    {"pods", "services", "secrets", "configmaps", "serviceaccounts", "events", "endpoints"}
)
BUILTIN_RESOURCES: dict[tuple[str, str], set[str]] = {
    ("apps", "v1"): {"deployments", "daemonsets", "replicasets"},
    ("batch", "v1"): {"jobs"},
    ("autoscaling", "v2"): {"horizontalpodautoscalers"},
    ("coordination.k8s.io", "v1"): {"leases"},
}
CLUSTER_SCOPED = frozenset(
    {"clusterpolicies", "deviceclasses", "resourceslices", "clustertrainingruntimes"}
)


def _selected(obj: dict[str, Any], selector: str) -> bool:
    """``key`` / ``key=value`` terms (comma-separated), as the API server reads them."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, eq, value = term.partition("=")
        if key not in labels or (eq and labels[key] != value):
            return False
    return True


class SimulatedCluster:
    def __init__(self, scenario: Scenario, recipe: RecipeView, clock: VirtualClock) -> None:
        self.s = scenario
        self.clock = clock
        self.nodes = list(scenario.nodes)
        self.namespaces: dict[str, str] = {"default": "Active", "kube-system": "Active"}
        self.workloads: dict[tuple[str, str, str], WorkloadInfo] = {}
        self.pods: dict[tuple[str, str], _SimPod] = {}
        self.objects: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        self.created: list[tuple[str, str, str]] = []
        self.deleted: list[tuple[str, str, str]] = []
        gpu_nodes = len(self.nodes)
        for c in recipe.components:
            if not c.enabled:
                continue
            if c.namespace:
                self.namespaces[c.namespace] = "Active"
            for r in c.expected_resources:
                desired = gpu_nodes if r.kind == "DaemonSet" else 1
                ready = desired
                if (r.kind, r.namespace, r.name) in scenario.unhealthy:
                    desired, ready = scenario.unhealthy[(r.kind, r.namespace, r.name)]
                self.workloads[(r.kind, r.namespace, r.name)] = WorkloadInfo(
                    r.kind,
                    r.name,
                    r.namespace,
                    desired,
                    ready,
                    ready,
                    {"app.kubernetes.io/name": r.name},
                )
                self.namespaces.setdefault(r.namespace, "Active")
        op_ns = next(
            (c.namespace for c in recipe.components if c.name == "gpu-operator"), "gpu-operator"
        )
        self.namespaces.setdefault(op_ns, "Active")
        version = scenario.gpu_operator_version
        self.workloads[("Deployment", op_ns, "gpu-operator")] = WorkloadInfo(
            "Deployment",
            "gpu-operator",
            op_ns,
            1,
            1,
            1,
            {"app": "gpu-operator", "app.kubernetes.io/version": version},
            (f"nvcr.io/nvidia/gpu-operator:{version}",),
        )
        self.workloads.setdefault(
            ("DaemonSet", op_ns, "nvidia-dcgm-exporter"),
            WorkloadInfo(
                "DaemonSet", "nvidia-dcgm-exporter", op_ns, gpu_nodes, gpu_nodes, gpu_nodes
            ),
        )
        self.static_pods: dict[str, list[PodInfo]] = {
            op_ns: [
                PodInfo(
                    "gpu-operator-7d9c6b8f5-x2k4q",
                    op_ns,
                    "Running",
                    "aks-system-0",
                    {"app": "gpu-operator"},
                )
            ]
        }
        self.objects[("nvidia.com", "v1", "clusterpolicies", "", "cluster-policy")] = {
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": "cluster-policy"},
            "status": {"state": "ready"},
        }
        self.served: dict[tuple[str, str], set[str]] = {
            ("resource.k8s.io", "v1"): {
                "deviceclasses",
                "resourceclaims",
                "resourceclaimtemplates",
                "resourceslices",
            },
            ("trainer.kubeflow.org", "v1alpha1"): {
                "trainjobs",
                "trainingruntimes",
                "clustertrainingruntimes",
            },
            ("nvidia.com", "v1alpha1"): {"dynamographdeployments", "dynamocomponentdeployments"},
            ("nvidia.com", "v1"): {"clusterpolicies"},
            # nvidia-dra-driver-gpu's compute domains (every recipe ships the DRA driver)
            ("resource.nvidia.com", "v1beta1"): {"computedomains"},
        }
        if not recipe.has_enabled("kubeflow-trainer"):
            # Trainer serves its API only where the recipe installs it.
            del self.served[("trainer.kubeflow.org", "v1alpha1")]
        if scenario.custom_metrics_api:
            self.served[("custom.metrics.k8s.io", "v1beta1")] = {
                "pods/gpu_utilization",
                "pods/gpu_memory_used",
                "pods/gpu_power_usage",
            }
            self.served[("external.metrics.k8s.io", "v1beta1")] = {"dcgm_gpu_power_usage"}
        for g in scenario.missing_groups:
            for key in [k for k in self.served if k[0] == g]:
                del self.served[key]
        self.op_ns = op_ns
        self.static_pods[op_ns] += [
            PodInfo(
                f"nvidia-dcgm-exporter-{i:05x}",
                op_ns,
                "Running",
                n.name,
                {"app": "nvidia-dcgm-exporter"},
            )
            for i, n in enumerate(self.nodes)
        ]
        self.hpa_changed = 0.0
        self._install_capabilities(recipe)

    def _tick(self, plural: str = "") -> None:
        # The run's own bookkeeping (its lease, the sweep of validation namespaces) takes no
        # simulated time, so the shipped recordings keep their timings.
        if plural in ("leases", "namespaces"):
            return
        self.clock.advance(API_LATENCY_S)

    # -- the conformance capabilities' cluster objects ----------------------------------
    def _crd(self, name: str) -> None:
        self.objects[("apiextensions.k8s.io", "v1", "customresourcedefinitions", "", name)] = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
        }

    def _put(self, group: str, version: str, plural: str, ns: str, obj: dict[str, Any]) -> None:
        self.objects[(group, version, plural, ns, obj["metadata"]["name"])] = obj

    def _install_capabilities(self, recipe: RecipeView) -> None:
        s = self.s
        for n in self.nodes:
            drivers = ["compute-domain.nvidia.com"] + (
                ["gpu.nvidia.com"] if s.dra_gpu_slices else []
            )
            for driver in drivers:
                devices = (
                    [{"name": f"gpu-{i}"} for i in range(n.gpu_count)]
                    if driver == "gpu.nvidia.com"
                    else [{"name": "channel-0"}]
                )
                self._put(
                    "resource.k8s.io",
                    "v1",
                    "resourceslices",
                    "",
                    {
                        "metadata": {"name": f"{n.name}-{driver}"},
                        "spec": {"driver": driver, "nodeName": n.name, "devices": devices},
                    },
                )
        if recipe.has_enabled("kai-scheduler"):
            kai_ns = next(c.namespace for c in recipe.components if c.name == "kai-scheduler")
            for name in ("kai-operator", "kai-scheduler-default", "binder", "podgrouper"):
                self.workloads.setdefault(
                    ("Deployment", kai_ns, name),
                    WorkloadInfo("Deployment", name, kai_ns, 1, 1, 1, {"app": name}),
                )
            for crd in ("queues.scheduling.run.ai", "podgroups.scheduling.run.ai"):
                self._crd(crd)
            for name, parent in (("default", ""), ("default-queue", "default")):
                spec = {"parentQueue": parent} if parent else {}
                self._put(
                    "scheduling.run.ai",
                    "v2",
                    "queues",
                    "",
                    {"metadata": {"name": name}, "spec": spec},
                )
        prom_ns = next(
            (c.namespace for c in recipe.components if c.name == "kube-prometheus-stack"), ""
        )
        if prom_ns:
            for name in ("kube-prometheus-stack-prometheus", "prometheus-operated"):
                self._put(
                    "",
                    "v1",
                    "services",
                    prom_ns,
                    {"metadata": {"name": name}, "spec": {"ports": [{"port": 9090}]}},
                )
        vmss = sorted(
            {
                n.name[:-6]
                for n in self.nodes
                if n.labels.get("kubernetes.azure.com/agentpool") in s.autoscaled_pools
            }
        )
        groups = "\n".join(
            f"  Name:        {g}\n"
            f"  Health:      Healthy (ready={len(self.nodes)} unready=0 minSize=1, maxSize=4))"
            for g in vmss
        )
        self._put(
            "",
            "v1",
            "configmaps",
            "kube-system",
            {
                "metadata": {"name": "cluster-autoscaler-status"},
                "data": {
                    "status": "Cluster-autoscaler status at 2026-11-30 00:53:20 +0000 UTC:\n"
                    f"Cluster-wide:\n  Health:      {s.autoscaler_health} (ready={len(self.nodes) + 1})\n"
                    f"\nNodeGroups:\n{groups}\n"
                },
            },
        )
        if recipe.has_enabled("dynamo-platform"):
            ns = next(c.namespace for c in recipe.components if c.name == "dynamo-platform")
            self._crd("dynamographdeployments.nvidia.com")
            svc = "dynamo-platform-dynamo-operator-webhook-service"
            self._put(
                "admissionregistration.k8s.io",
                "v1",
                "validatingwebhookconfigurations",
                "",
                {
                    "metadata": {"name": "dynamo-platform-validating-webhook"},
                    "webhooks": [
                        {
                            "name": "vdynamographdeployment.nvidia.com",
                            "clientConfig": {"service": {"name": svc, "namespace": ns}},
                            "rules": [
                                {
                                    "apiGroups": ["nvidia.com"],
                                    "apiVersions": ["v1alpha1"],
                                    "operations": ["CREATE", "UPDATE"],
                                    "resources": ["dynamographdeployments"],
                                }
                            ],
                        }
                    ],
                },
            )
            self._put(
                "discovery.k8s.io",
                "v1",
                "endpointslices",
                ns,
                {
                    "metadata": {
                        "name": f"{svc}-x7k2p",
                        "labels": {"kubernetes.io/service-name": svc},
                    },
                    "endpoints": [{"addresses": ["10.244.1.17"], "conditions": {"ready": True}}],
                },
            )
        if recipe.has_enabled("agentgateway"):
            ns = next(c.namespace for c in recipe.components if c.name == "agentgateway")
            for crd in (
                "gatewayclasses.gateway.networking.k8s.io",
                "gateways.gateway.networking.k8s.io",
                "httproutes.gateway.networking.k8s.io",
                "inferencepools.inference.networking.k8s.io",
                "agentgatewayparameters.agentgateway.dev",
            ):
                self._crd(crd)
            accepted = {"type": "Accepted", "status": "True", "reason": "Accepted"}
            self._put(
                "gateway.networking.k8s.io",
                "v1",
                "gatewayclasses",
                "",
                {"metadata": {"name": "agentgateway"}, "status": {"conditions": [accepted]}},
            )
            programmed = {
                "type": "Programmed",
                "status": "True" if s.gateway_programmed else "False",
                "reason": "Programmed" if s.gateway_programmed else "AddressNotAssigned",
            }
            self._put(
                "gateway.networking.k8s.io",
                "v1",
                "gateways",
                ns,
                {
                    "metadata": {"name": "inference-gateway"},
                    "spec": {"gatewayClassName": "agentgateway", "listeners": [{"name": "http"}]},
                    "status": {
                        "conditions": [programmed],
                        "addresses": [{"type": "IPAddress", "value": "10.0.0.42"}],
                    },
                },
            )
            self._put(
                "",
                "v1",
                "services",
                ns,
                {
                    "metadata": {"name": "inference-gateway"},
                    "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
                },
            )

    def _dcgm_metrics(self) -> str:
        lines = []
        for name in self.s.dcgm_metrics:
            lines.append(f"# HELP {name} DCGM field.")
            lines.append(f"# TYPE {name} gauge")
            for n in self.nodes:
                for gpu in range(n.gpu_count):
                    lines.append(
                        f'{name}{{gpu="{gpu}",UUID="GPU-{gpu:08x}",Hostname="{n.name}"}} 42'
                    )
        return "\n".join(lines) + "\n"

    # -- ClusterExecutor -------------------------------------------------------------
    def server_address(self) -> str:
        return f"simulated://{self.s.name}"

    def list_nodes(self) -> list[NodeInfo]:
        self._tick()
        return list(self.nodes)

    def list_pods(self, namespace: str, label_selector: str = "") -> list[PodInfo]:
        self._tick()
        want = dict(p.split("=", 1) for p in label_selector.split(",") if "=" in p)
        pods = list(self.static_pods.get(namespace, []))
        pods += [
            sp.info
            for (ns, _), sp in self.pods.items()
            if ns == namespace and self.clock() >= sp.created
        ]
        return [p for p in pods if all(p.labels.get(k) == v for k, v in want.items())]

    def list_workloads(
        self, kind: str, namespace: str | None = None, label_selector: str = ""
    ) -> list[WorkloadInfo]:
        self._tick()
        return [
            w
            for (k, ns, _), w in self.workloads.items()
            if k == kind and (namespace is None or ns == namespace)
        ]

    def get_workload(self, kind: str, namespace: str, name: str) -> WorkloadInfo | None:
        self._tick()
        found = self.workloads.get((kind, namespace, name))
        scaled = self._hpa_replicas(namespace, name) if found is not None else None
        if found is not None and scaled is not None:
            found = WorkloadInfo(kind, name, namespace, scaled, scaled, scaled, found.labels)
            self.workloads[(kind, namespace, name)] = found
        return found

    def namespace_phase(self, name: str) -> str | None:
        self._tick()
        return self.namespaces.get(name)

    def ensure_namespace(self, name: str, labels: dict[str, str]) -> bool:
        self._tick()
        if name in self.namespaces:
            return False
        self.namespaces[name] = "Active"
        self.created.append(("v1", "Namespace", name))
        return True

    def delete_namespace(self, name: str, *, wait: bool = True) -> None:
        self._tick()
        if self.namespaces.pop(name, None) is not None:
            self.deleted.append(("v1", "Namespace", name))
            for key in [k for k in self.pods if k[0] == name]:
                del self.pods[key]

    def served_resources(self, group: str, version: str) -> set[str] | None:
        self._tick()
        found = self.served.get((group, version))
        return set(found) if found is not None else None

    def list_objects(
        self,
        group: str,
        version: str,
        plural: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
    ) -> list[dict[str, Any]]:
        self._tick(plural)
        if (group, plural) == ("", "pods") and namespace is not None:
            return [
                {"metadata": {"name": p.name, "namespace": p.namespace, "labels": p.labels}}
                for p in self.list_pods(namespace)
                if _selected({"metadata": {"labels": p.labels}}, label_selector)
            ]
        if (group, plural) == ("apps", "deployments") and namespace is not None:
            return [
                {"metadata": {"name": w.name, "namespace": w.namespace, "labels": w.labels}}
                for w in self.list_workloads("Deployment", namespace)
                if _selected({"metadata": {"labels": w.labels}}, label_selector)
            ]
        return [
            {k: v for k, v in obj.items() if k != "__created"}
            for (g, v, p, ns, _), obj in sorted(self.objects.items())
            if g == group
            and v == version
            and p == plural
            and (namespace is None or ns == namespace)
            and _selected(obj, label_selector)
        ]

    def _discovery(self, path: str) -> str | None:
        """API discovery as the server answers it: ``/api/v1``, ``/apis`` (each group's
        versions, the first served one preferred) and ``/apis/<group>/<version>``."""
        served = {**BUILTIN_RESOURCES, **self.served}
        if path == "/api/v1":
            names = CORE_RESOURCES
        elif path == "/apis":
            groups: dict[str, list[str]] = {}
            for g, v in served:
                groups.setdefault(g, []).append(v)
            return json.dumps(
                {
                    "kind": "APIGroupList",
                    "groups": [
                        {
                            "name": g,
                            "versions": [{"version": v} for v in vs],
                            "preferredVersion": {"version": vs[0]},
                        }
                        for g, vs in groups.items()
                    ],
                }
            )
        elif path.count("/") == 3 and path.startswith("/apis/"):
            _, _, group, version = path.split("/")
            names = served.get((group, version))  # type: ignore[assignment]
            if names is None:
                return None
        else:
            return None
        return json.dumps(
            {
                "kind": "APIResourceList",
                "resources": [
                    {
                        "name": n,
                        "namespaced": n not in CLUSTER_SCOPED,
                        "kind": n.split("/")[0].rstrip("s").title(),
                        "verbs": ["get", "list", "create", "delete"],
                    }
                    for n in sorted(names)
                ],
            }
        )

    def raw_get(self, path: str, query: tuple[tuple[str, str], ...] = ()) -> str | None:
        from aicr_tui.core.foundation.errors import AicrError, ErrorCode

        self._tick()
        if path == "/api/v1" or path.startswith("/apis") and path.count("/") <= 3:
            return self._discovery(path)
        for svc in self.s.unreachable_services:
            if f"/services/{svc}:" in path:
                raise AicrError(
                    ErrorCode.SERVICE_UNAVAILABLE,
                    f"Kubernetes API failed reading {path}",
                    "503 Service Unavailable: no endpoints available for service",
                )
        if path.endswith(
            f"/namespaces/{self.op_ns}/services/nvidia-dcgm-exporter:9400/proxy/metrics"
        ):
            return self._dcgm_metrics()
        if "/services/kube-prometheus-stack-prometheus:9090/proxy/api/v1/query" in path:
            result = []
            if self.s.prometheus_scrapes_dcgm:
                result = [
                    {
                        "metric": {
                            "__name__": "DCGM_FI_DEV_GPU_UTIL",
                            "gpu": str(g),
                            "Hostname": n.name,
                        },
                        "value": [1796000000, "42"],
                    }
                    for n in self.nodes
                    for g in range(n.gpu_count)
                ]
            return json.dumps(
                {"status": "success", "data": {"resultType": "vector", "result": result}}
            )
        if path.startswith("/apis/custom.metrics.k8s.io/v1beta1/namespaces/"):
            if not self.s.custom_metrics_api:
                return None
            ns = path.split("/")[5]
            items = []
            if ns == self.op_ns and self.s.prometheus_scrapes_dcgm:
                items = [
                    {"describedObject": {"kind": "Pod", "name": p.name}, "value": "42"}
                    for p in self.static_pods.get(ns, [])
                    if p.labels.get("app") == "nvidia-dcgm-exporter"
                ]
            return json.dumps({"kind": "MetricValueList", "items": items})
        return None

    def patch_object(
        self,
        group: str,
        version: str,
        plural: str,
        name: str,
        patch: dict[str, Any],
        namespace: str | None = None,
    ) -> None:
        self._tick(plural)
        obj = self.objects[(group, version, plural, namespace or "", name)]
        for key, value in patch.items():
            if isinstance(value, dict) and isinstance(obj.get(key), dict):
                obj[key] = {**obj[key], **value}
            else:
                obj[key] = value
        if plural == "horizontalpodautoscalers":
            self.hpa_changed = self.clock()

    def _hpa_replicas(self, ns: str, name: str) -> int | None:
        hpa = self.objects.get(("autoscaling", "v2", "horizontalpodautoscalers", ns, name))
        if hpa is None or not self.s.hpa_scales:
            return None
        if self.clock() - self.hpa_changed < 20.0:
            return None
        target = hpa["spec"]["metrics"][0]["external"]["target"]["averageValue"]
        return (
            int(hpa["spec"]["maxReplicas"]) if target == "1m" else int(hpa["spec"]["minReplicas"])
        )

    def get_object(
        self, group: str, version: str, plural: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        self._tick(plural)
        obj = self.objects.get((group, version, plural, namespace or "", name))
        if obj is None:
            return None
        if obj.get("kind") == "DynamoGraphDeployment":
            ready = self.clock() - float(obj["__created"]) >= self.s.dgd_ready_after_s
            obj = {k: v for k, v in obj.items() if k != "__created"}
            obj["status"] = {"state": "successful" if ready else "pending"}
        return obj

    def _add_pod(
        self,
        ns: str,
        name: str,
        node: str,
        labels: dict[str, str],
        duration: float,
        logs: str,
        image: str,
        exit_code: int = 0,
    ) -> None:
        waiting = "ImagePullBackOff" if image in self.s.image_pull_failure else ""
        if self.s.unplaceable_pods:
            node = ""
        self.pods[(ns, name)] = _SimPod(
            PodInfo(name, ns, "Pending", node, labels),
            self.clock(),
            duration,
            logs,
            exit_code,
            waiting,
        )

    def create(self, manifest: dict[str, Any], *, dry_run: bool = False) -> None:
        from aicr_tui.core.foundation.errors import AicrError, ErrorCode

        kind = manifest["kind"]
        self._tick(str(manifest.get("__plural__") or ""))
        meta = manifest["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        labels = dict(meta.get("labels") or {})
        if dry_run:
            if self.s.webhook_rejects and kind in ("DynamoGraphDeployment", "TrainJob"):
                raise AicrError(
                    ErrorCode.INVALID_REQUEST,
                    f"Kubernetes API rejected creating {kind} {ns}/{name}",
                    f'400 Bad Request: admission webhook "v{kind.lower()}.nvidia.com" denied the '
                    "request: spec.services.Frontend.componentType: unsupported value",
                )
            return
        if kind == "Lease":
            group, version = manifest["apiVersion"].split("/", 1)
            if (group, version, "leases", ns, name) in self.objects:
                raise AicrError(
                    ErrorCode.CONFLICT,
                    f"Kubernetes API refused creating Lease {ns}/{name}",
                    f'HTTP 409 (Conflict): leases.coordination.k8s.io "{name}" already exists',
                )
        self.created.append((manifest["apiVersion"], kind, f"{ns}/{name}"))
        if kind == "Pod":
            spec = manifest["spec"]
            node = spec.get("nodeName", "")
            container = spec["containers"][0]
            info = next((n for n in self.nodes if n.name == node), None)
            if spec.get("schedulerName") == "kai-scheduler":
                members = sum(1 for k in self.pods if k[1].startswith(name.rsplit("-", 1)[0]))
                placed = "" if self.s.gang_split and members >= 1 else "aks-system-0"
                self._add_pod(ns, name, placed, labels, 6.0, "gang member scheduled\n", "alpine")
            elif container["name"] == "launcher":
                logs = self.s.nccl_transport_log + nccl_all_reduce_output(
                    self.nodes, self.s.nccl_busbw, self.s.profile
                )
                self._add_pod(
                    ns,
                    name,
                    self.nodes[0].name,
                    labels,
                    self.s.nccl_seconds,
                    logs,
                    container["image"],
                )
            elif container["name"] == "worker":
                self._add_pod(ns, name, node, labels, 3600.0, "", container["image"])
            elif container["name"] == "nvidia-smi":
                logs = nvidia_smi_table(self.s.profile, info.gpu_count if info else 0)
                self._add_pod(ns, name, node, labels, 7.5, logs, container["image"])
            elif container["name"] == "probe":
                if self.s.isolation_breach and info is not None:
                    devs = "\n".join(f"/dev/nvidia{i}" for i in range(info.gpu_count))
                    gpus = "\n".join(
                        f"GPU {i}: {self.s.profile.gpu_name} (UUID: GPU-{i:08x}-5e1d-4c3a-9b7f-{i:012x})"
                        for i in range(info.gpu_count)
                    )
                    logs = f"GPU device nodes visible:\n{devs}\n{gpus}\nISOLATION_BREACH\n"
                else:
                    logs = "NO_GPU_VISIBLE\n"
                self._add_pod(ns, name, node, labels, 4.0, logs, container["image"])
            else:
                self._add_pod(ns, name, node, labels, 1.0, "", container["image"])
        elif kind == "TrainJob":
            launcher = f"{name}-launcher-0-0-{hashlib.sha256(name.encode()).hexdigest()[:5]}"
            image = self._runtime_image(ns)
            logs = self.s.nccl_transport_log + nccl_all_reduce_output(
                self.nodes, self.s.nccl_busbw, self.s.profile
            )
            self._add_pod(
                ns,
                launcher,
                self.nodes[0].name,
                {
                    **labels,
                    "jobset.sigs.k8s.io/jobset-name": name,
                    "jobset.sigs.k8s.io/replicatedjob-name": "launcher",
                },
                self.s.nccl_seconds,
                logs,
                image,
            )
        elif kind == "Job":
            pod = f"{name}-q7w2x"
            concurrency, requests = (
                256 * self.nodes[0].gpu_count,
                max(1000, 256 * self.nodes[0].gpu_count * 8),
            )
            progress = "".join(
                f"INFO     Profiling: {pct}% ({requests * pct // 100}/{requests} requests)\n"
                for pct in (10, 25, 50, 75, 90, 100)
            )
            logs = (
                "INFO     endpoint is serving requests\n"
                f"INFO     Warmup: {concurrency} requests at concurrency {concurrency}\n"
                + progress
                + "INFO     Benchmark complete; exporting profile_export_aiperf.json\n"
                + aiperf_report(
                    self.s.inference_throughput, self.s.inference_ttft_p99_ms, requests, concurrency
                )
            )
            image = manifest["spec"]["template"]["spec"]["containers"][0]["image"]
            self._add_pod(
                ns, pod, self.nodes[0].name, {**labels, "job-name": name}, 95.0, logs, image
            )
        elif kind == "Deployment":
            replicas = int(manifest["spec"].get("replicas", 1))
            self.workloads[("Deployment", ns, name)] = WorkloadInfo(
                "Deployment", name, ns, replicas, replicas, replicas, labels
            )
        elif kind in ("Service", "Secret", "ConfigMap"):
            plural = kind.lower() + "s"
            self.objects[("", "v1", plural, ns, name)] = {
                k: v for k, v in manifest.items() if k != "__plural__"
            }
        else:
            group, version = manifest["apiVersion"].split("/", 1)
            plural = manifest.get("__plural__") or kind.lower() + "s"
            body = {k: v for k, v in manifest.items() if k != "__plural__"}
            body["__created"] = self.clock()
            self.objects[(group, version, plural, ns, name)] = body
            if plural == "horizontalpodautoscalers":
                self.hpa_changed = self.clock()

    def _runtime_image(self, ns: str) -> str:
        for (g, _v, plural, o_ns, _n), obj in self.objects.items():
            if g == "trainer.kubeflow.org" and plural == "trainingruntimes" and o_ns == ns:
                jobs = obj["spec"]["template"]["spec"]["replicatedJobs"]
                return str(
                    jobs[0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]
                )
        return ""

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        self._tick("leases" if kind == "Lease" else "")
        self.deleted.append((api_version, kind, f"{namespace}/{name}"))
        if kind == "Pod":
            self.pods.pop((namespace, name), None)
        elif kind == "Deployment":
            self.workloads.pop(("Deployment", namespace, name), None)
        elif kind in ("Service", "Secret", "ConfigMap"):
            self.objects.pop(("", "v1", kind.lower() + "s", namespace, name), None)
        elif kind == "TrainJob":
            for key in [
                k
                for k, p in self.pods.items()
                if p.info.labels.get("jobset.sigs.k8s.io/jobset-name") == name
            ]:
                del self.pods[key]
        elif kind == "Job":
            for key in [k for k, p in self.pods.items() if p.info.labels.get("job-name") == name]:
                del self.pods[key]
        else:
            for obj_key in [k for k in self.objects if k[3] == namespace and k[4] == name]:
                del self.objects[obj_key]

    def pod_status(self, namespace: str, name: str) -> PodOutcome:
        self._tick()
        sp = self.pods.get((namespace, name))
        if sp is None:
            return PodOutcome(name, "Missing")
        age = self.clock() - sp.created
        if not sp.info.node:
            # never placed by its scheduler, which says why on the PodScheduled condition
            return PodOutcome(
                name,
                "Pending",
                unscheduled="Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
            )
        if sp.info.node in self.s.busy_nodes:
            return PodOutcome(name, "Pending", sp.info.node)
        if sp.waiting_reason:
            return PodOutcome(
                name,
                "Pending",
                sp.info.node,
                ContainerOutcome(None, "", "Back-off pulling image", sp.waiting_reason),
            )
        if age < 1.0:
            return PodOutcome(
                name, "Pending", sp.info.node, ContainerOutcome(None, "", "", "ContainerCreating")
            )
        if age < sp.duration:
            return PodOutcome(name, "Running", sp.info.node)
        phase = "Succeeded" if sp.exit_code == 0 else "Failed"
        reason = "Completed" if sp.exit_code == 0 else "Error"
        return PodOutcome(name, phase, sp.info.node, ContainerOutcome(sp.exit_code, reason, ""))

    def pod_logs(
        self, namespace: str, name: str, container: str = "", tail_lines: int = 1000
    ) -> str:
        self._tick()
        sp = self.pods.get((namespace, name))
        if sp is None:
            return ""
        age = self.clock() - sp.created
        if age >= sp.duration:
            lines = sp.logs.splitlines(keepends=True)
        else:
            # a running workload has printed a share of its output proportional to its age
            all_lines = sp.logs.splitlines(keepends=True)
            share = max(0.0, (age - 1.0) / max(sp.duration - 1.0, 1e-9))
            lines = all_lines[: int(len(all_lines) * share)]
        return "".join(lines[-tail_lines:])


# -- demo recordings ---------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[1] / "aicr_tui" / "recipes" / "samples" / "validation"
DEMO_STARTED_MS = 1796000000000  # 2026-11-30T00:53:20Z: fixed so regeneration is byte-identical
DEMOS: dict[str, tuple[str, str, str]] = {
    "aks-h100-training-passed.jsonl": (
        "aks_nd96_scenario",
        "aks-h100-training.recipe.yaml",
        "20261130-005320-4e1f0c9a7b2d",
    ),
    "aks-nc80adis-training-failed.jsonl": (
        "aks_nc80_scenario",
        "aks-h100-training.recipe.yaml",
        "20261130-005320-9c3b5d7e1a0f",
    ),
    "aks-h100-training-unmeasured.jsonl": (
        "aks_nd96_no_egress_scenario",
        "aks-h100-training.recipe.yaml",
        "20261130-005320-2b8d4f6a0c1e",
    ),
    "aks-h100-inference-dynamo-passed.jsonl": (
        "aks_nd96_inference_scenario",
        "aks-h100-inference-dynamo.recipe.yaml",
        "20261130-005320-7a5c3e1b9d2f",
    ),
}


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "aks_nd96_scenario": aks_nd96_scenario,
    "aks_nc80_scenario": aks_nc80_scenario,
    "aks_nd96_no_egress_scenario": aks_nd96_no_egress_scenario,
    "aks_nd96_inference_scenario": aks_nd96_inference_scenario,
}


def gate(
    check: str, value: float | None, unit: str, threshold: str, verdict: str, **fields: Any
) -> Measurement:
    """A Measurement of one of ``check``'s gates: a performance gate at t=0 named after the
    check unless ``fields`` (t, phase, name, display, note) say otherwise."""
    fields = {"t": 0.0, "phase": "performance", "name": check, **fields}
    return Measurement(
        check=check, value=value, unit=unit, threshold=threshold, verdict=verdict, **fields
    )


def collecting_stream() -> tuple[EventStream, list[Event]]:
    """An event stream and the list every event published on it is appended to, in order."""
    events: list[Event] = []
    stream = EventStream()
    stream.add_sink(events.append)
    return stream, events


def validation_request(recipe: RecipeView, snapshot: Any, **kwargs: Any) -> ValidationRequest:
    """A request against the shipped validator catalog, with no environment overrides, in
    the fixed namespace ``aicr-validation`` unless ``namespace`` is given (the runner's own
    default, a namespace unique to the run, is ``namespace=""``)."""
    kwargs.setdefault("namespace", VALIDATION_NAMESPACE)
    return ValidationRequest(
        recipe=recipe,
        snapshot=snapshot,
        catalog=load_validator_catalog(environ={}),
        environ={},
        **kwargs,
    )


def run_collecting(
    req: ValidationRequest, factory: Callable[[], Any] | None, **kwargs: Any
) -> tuple[RunResult, list[Event]]:
    """Run ``req`` to the end; its result and every event it published, in order."""
    stream, events = collecting_stream()
    result = asyncio.run(run_validation(req, stream, factory, **kwargs))
    return result, events


def run_simulated(
    scenario: Scenario, recipe: RecipeView, snapshot: Any, **kwargs: Any
) -> tuple[RunResult, list[Event], SimulatedCluster]:
    """Validate ``recipe`` against ``scenario`` on a virtual clock (``kwargs`` go to the request)."""
    clock = VirtualClock()
    cluster = SimulatedCluster(scenario, recipe, clock)
    req = validation_request(recipe, snapshot, **kwargs)
    result, events = run_collecting(req, lambda: cluster, clock=clock, sleep=clock.sleep)
    return result, events, cluster


def record_demo(scenario: Scenario, recipe: RecipeView, run_id: str, snapshot: Any) -> list[Event]:
    """Run the full validation against ``scenario`` and return every event, in order."""
    _, events, _ = run_simulated(
        scenario, recipe, snapshot, run_id=run_id, started_ms=DEMO_STARTED_MS, poll_s=2.0
    )
    return events


def demo_recording(filename: str) -> str:
    builder, recipe_file, run_id = DEMOS[filename]
    scenario = SCENARIOS[builder]()
    recipe = view_with_policy(load_recipe(str(SAMPLES / recipe_file)), recipe_file)
    snapshot = load_snapshot(str(SAMPLES.parent / "snapshots" / "aks-h100-install.yaml"))
    events = record_demo(scenario, recipe, run_id, snapshot)
    return "".join(e.to_json() + "\n" for e in events)


def main() -> int:
    for filename in DEMOS:
        atomic_write_text(SAMPLES / filename, demo_recording(filename))
        print(f"wrote {SAMPLES / filename}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
