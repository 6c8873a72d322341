"""The cluster a validation run talks to, behind one interface.

Checks call :class:`ClusterExecutor`; :class:`KubernetesExecutor` implements it with the
official ``kubernetes`` client (:mod:`aicr_tui.core.validation.kube_executor`, which imports it only
when one is built), and tests and the demo
recordings use an in-memory implementation (``tests.simulated.SimulatedCluster``). Every call is
blocking and bounded by a request timeout; a failing call raises ``AicrError`` with the
upstream code (UNAUTHORIZED for 401/403, SERVICE_UNAVAILABLE when the API cannot be
reached), so a check that cannot measure can say why.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aicr_tui.core.foundation.errors import AicrError

GPU_RESOURCE = "nvidia.com/gpu"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")


@dataclass(frozen=True)
class NodeInfo:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    ready: bool = True

    @property
    def gpu_count(self) -> int:
        raw = self.allocatable.get(GPU_RESOURCE, "0")
        try:
            return int(raw)
        except ValueError:
            return 0

    @property
    def is_gpu_node(self) -> bool:
        return self.gpu_count > 0 or self.labels.get("nvidia.com/gpu.present") == "true"

    @property
    def instance_type(self) -> str:
        for key in INSTANCE_TYPE_LABELS:
            if self.labels.get(key):
                return self.labels[key]
        return ""


@dataclass(frozen=True)
class PodInfo:
    name: str
    namespace: str
    phase: str
    node: str = ""
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadInfo:
    kind: str
    name: str
    namespace: str
    desired: int
    ready: int
    available: int
    labels: dict[str, str] = field(default_factory=dict)
    images: tuple[str, ...] = ()
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        if self.desired <= 0:
            return False
        if self.kind == "Deployment":
            return self.available >= self.desired
        return self.ready >= self.desired


@dataclass(frozen=True)
class ContainerOutcome:
    exit_code: int | None
    reason: str = ""
    message: str = ""
    waiting_reason: str = ""


@dataclass(frozen=True)
class PodOutcome:
    name: str
    phase: str  # Pending | Running | Succeeded | Failed | Unknown | Missing
    node: str = ""
    container: ContainerOutcome | None = None
    # The scheduler's word when the pod is not scheduled (its PodScheduled condition:
    # "Unschedulable: 0/3 nodes are available: ...").
    unscheduled: str = ""

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def unfinished_reason(self) -> str:
        """Why a pod that is not terminal has not finished, in the scheduler's or the
        kubelet's words: never scheduled (its condition), never started (its container's
        waiting reason and message), or started and still running."""
        if self.phase == "Missing":
            return "the pod is gone (deleted before it finished)"
        if self.unscheduled:
            return f"never scheduled: {self.unscheduled}"
        c = self.container
        if c is not None and c.waiting_reason:
            said = f"{c.waiting_reason}: {c.message}" if c.message else c.waiting_reason
            return f"never started: {said}"
        if not self.node:
            return f"pod {self.phase}, not scheduled yet (no scheduler event)"
        if self.phase == "Pending":
            return f"pod Pending on {self.node}: the kubelet has not started its container"
        return f"pod {self.phase} on {self.node}: started, did not finish within its budget"


class ClusterExecutor(Protocol):
    """What checks need from a cluster. All calls block; all are bounded."""

    def server_address(self) -> str: ...
    def list_nodes(self) -> list[NodeInfo]: ...
    def list_pods(self, namespace: str, label_selector: str = "") -> list[PodInfo]: ...
    def list_workloads(
        self, kind: str, namespace: str | None = None, label_selector: str = ""
    ) -> list[WorkloadInfo]: ...
    def get_workload(self, kind: str, namespace: str, name: str) -> WorkloadInfo | None: ...
    def namespace_phase(self, name: str) -> str | None: ...
    def ensure_namespace(self, name: str, labels: dict[str, str]) -> bool: ...
    def delete_namespace(self, name: str, *, wait: bool = True) -> None: ...
    def served_resources(self, group: str, version: str) -> set[str] | None: ...
    def get_object(
        self, group: str, version: str, plural: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None: ...
    def list_objects(
        self,
        group: str,
        version: str,
        plural: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
    ) -> list[dict[str, Any]]: ...
    def create(self, manifest: dict[str, Any], *, dry_run: bool = False) -> None: ...
    def patch_object(
        self,
        group: str,
        version: str,
        plural: str,
        name: str,
        patch: dict[str, Any],
        namespace: str | None = None,
    ) -> None: ...
    def raw_get(self, path: str, query: tuple[tuple[str, str], ...] = ()) -> str | None: ...
    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> None: ...
    def pod_status(self, namespace: str, name: str) -> PodOutcome: ...
    def pod_logs(
        self, namespace: str, name: str, container: str = "", tail_lines: int = 1000
    ) -> str: ...


def wait_for_pod(
    executor: ClusterExecutor,
    namespace: str,
    name: str,
    timeout_s: float,
    *,
    poll_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    cancel: threading.Event | None = None,
) -> PodOutcome:
    """Poll a pod until it is terminal, ``timeout_s`` passes or ``cancel`` is set."""
    deadline = clock() + timeout_s
    status = executor.pod_status(namespace, name)
    while not status.terminal and clock() < deadline:
        if cancel is not None and cancel.is_set():
            break
        sleep(min(poll_s, max(0.0, deadline - clock())))
        status = executor.pod_status(namespace, name)
    return status


def first_pod(executor: ClusterExecutor, namespace: str, selector: str) -> PodInfo | None:
    pods = sorted(executor.list_pods(namespace, selector), key=lambda p: p.name)
    return pods[0] if pods else None


def service_proxy_path(namespace: str, service: str, port: int | str, path: str) -> str:
    """The API server's proxy path to ``path`` on a Service port (reached from outside)."""
    return f"/api/v1/namespaces/{namespace}/services/{service}:{port}/proxy/{path.lstrip('/')}"


def rejection_text(err: AicrError) -> str:
    """The API server's own words when it refused a request (the cause of ``err``)."""
    return f"{err.message} {err.cause or ''}".strip()


def is_admission_rejection(err: AicrError) -> bool:
    """An admission webhook (not RBAC, not the transport) refused the object."""
    text = rejection_text(err).lower()
    return "admission webhook" in text and "denied" in text
