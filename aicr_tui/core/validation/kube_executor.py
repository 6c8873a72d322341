"""The :class:`ClusterExecutor` of a real cluster, through the official ``kubernetes`` client
(imported only when one is built).

Every call is blocking and bounded by a request timeout and the run's deadline; a failing
call raises ``AicrError`` with the upstream code (UNAUTHORIZED for 401/403,
SERVICE_UNAVAILABLE when the API cannot be reached), so a check that cannot measure can say
why. Lists are read page by page and folded into the executor's small records.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

from aicr_tui.core.foundation.deadline import MAX_PAGES, Deadline, timeout_error
from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid
from aicr_tui.core.live.kube import api_client, host_client, typed_apis
from aicr_tui.core.live.kube_replies import http_status
from aicr_tui.core.live.progress import page_cap
from aicr_tui.core.validation.executor import (
    WORKLOAD_KINDS,
    ContainerOutcome,
    NodeInfo,
    PodInfo,
    PodOutcome,
    WorkloadInfo,
)

# A namespace being deleted (Terminating) refuses new objects until the namespace controller
# has removed everything in it. A run waits this long, polling every NAMESPACE_POLL_S, for
# the previous run's namespace to go before creating its own, and for its own to go at
# cleanup (so the command exits with the namespace gone, not still Terminating).
NAMESPACE_GONE_S = 120.0
NAMESPACE_POLL_S = 0.5
# Every list is read in pages of this many objects (``limit``/``continue``) and each page is
# folded into the small records below before the next is read, so a 5,000-node cluster is
# read in constant memory: a page of nodes stays far below the 8 MiB reply cap
# (aicr_tui.core.foundation.limits.MAX_API_RESPONSE_BYTES), one object being at most about 6 KiB.
PAGE_SIZE = 250
RUN_DEADLINE_WHAT = "the validation run"


_KIND_PLURALS = {"Pod": "pods", "Job": "jobs", "Namespace": "namespaces"}


def _server_message(exc: BaseException) -> str:
    """The ``message`` of a Kubernetes Status body, when the server sent one."""
    import json

    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip():
        return ""
    try:
        data = json.loads(body)
    except ValueError:
        return " ".join(body.split())[:300]
    msg = data.get("message") if isinstance(data, dict) else None
    return " ".join(str(msg).split())[:300] if msg else ""


def _api_error(exc: BaseException, what: str, host: str) -> AicrError:
    """One line for a failed call: what the server answered (status, its name, Retry-After
    for 429/503, its own message), a reply refused by a wire limit, or what went wrong on
    the wire, never the client library's internals."""
    from aicr_tui.core.live.kube_wire import refused_reply, transport_reason

    hostile = refused_reply(exc)
    if hostile is not None:
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"Kubernetes API at {host} sent a reply that is refused while {what}",
            str(hostile),
        )
    status = getattr(exc, "status", None)
    said = _server_message(exc)
    if isinstance(status, int) and status:
        cause = http_status(status, exc) + (f": {said}" if said else "")
        if status in (401, 403):
            return AicrError(ErrorCode.UNAUTHORIZED, f"Kubernetes API refused {what}", cause)
        if status in (400, 422):
            return AicrError(ErrorCode.INVALID_REQUEST, f"Kubernetes API rejected {what}", cause)
        if status == 409:
            return AicrError(ErrorCode.CONFLICT, f"Kubernetes API refused {what}", cause)
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE, f"Kubernetes API answered {what} with {cause}"
        )
    return AicrError(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"Kubernetes API at {host} unreachable while {what}",
        transport_reason(exc),
    )


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in _map(value).items() if isinstance(v, str | int | float)}


# The node labels a check may read (GPU presence and product, instance type, node pool,
# hostname, topology); a node's other labels (feature discovery adds hundreds) are not kept,
# so what a run holds per node stays small at thousands of nodes.
NODE_LABEL_PREFIXES = (
    "nvidia.com/",
    "kubernetes.io/",
    "node.kubernetes.io/",
    "beta.kubernetes.io/",
    "topology.kubernetes.io/",
    "kubernetes.azure.com/",
    "oke.oraclecloud.com/",
    "oci.oraclecloud.com/",
    "eks.amazonaws.com/",
    "cloud.google.com/",
    "karpenter.sh/",
    "feature.node.kubernetes.io/pci-10de",
)


def _kept_labels(value: Any) -> dict[str, str]:
    return {
        sys.intern(k): sys.intern(v)
        for k, v in _str_map(value).items()
        if k.startswith(NODE_LABEL_PREFIXES)
    }


def node_info(obj: dict[str, Any]) -> NodeInfo:
    """The fields checks read from one Node of a list page (a wrong type reads empty)."""
    meta, spec, status = (_map(obj.get(k)) for k in ("metadata", "spec", "status"))
    ready = any(
        _map(c).get("type") == "Ready" and _map(c).get("status") == "True"
        for c in _seq(status.get("conditions"))
    )
    return NodeInfo(
        _text(meta.get("name")),
        _kept_labels(meta.get("labels")),
        {sys.intern(k): sys.intern(v) for k, v in _str_map(status.get("allocatable")).items()},
        spec.get("unschedulable") is True,
        ready,
    )


def pod_info(obj: dict[str, Any], namespace: str) -> PodInfo:
    meta, spec, status = (_map(obj.get(k)) for k in ("metadata", "spec", "status"))
    return PodInfo(
        _text(meta.get("name")),
        _text(meta.get("namespace")) or namespace,
        _text(status.get("phase")) or "Unknown",
        _text(spec.get("nodeName")),
        _str_map(meta.get("labels")),
    )


def workload_info(kind: str, obj: dict[str, Any]) -> WorkloadInfo:
    meta, spec, st = (_map(obj.get(k)) for k in ("metadata", "spec", "status"))
    pod_spec = _map(_map(spec.get("template")).get("spec"))
    containers = [_map(c) for c in _seq(pod_spec.get("containers"))]
    if kind == "DaemonSet":
        desired = _count(st.get("desiredNumberScheduled"))
        ready = _count(st.get("numberReady"))
        available = _count(st.get("numberAvailable"))
    else:
        replicas = spec.get("replicas")
        desired = _count(replicas) if replicas is not None else 1
        ready = _count(st.get("readyReplicas"))
        available = _count(st.get("availableReplicas"))
    return WorkloadInfo(
        kind,
        _text(meta.get("name")),
        _text(meta.get("namespace")),
        desired,
        ready,
        available,
        _str_map(meta.get("labels")),
        tuple(_text(c.get("image")) for c in containers),
        _str_map(meta.get("annotations")),
    )


_WORKLOAD_PLURALS = {
    "Deployment": "deployments",
    "DaemonSet": "daemonsets",
    "StatefulSet": "statefulsets",
}


def _seg(value: str) -> str:
    """One path segment (a name from a recipe or a reply never changes the path's shape)."""
    return quote(value, safe="")


def resource_path(group: str, version: str, plural: str, namespace: str | None = None) -> str:
    if group in ("", "core"):
        base = f"/api/{_seg(version)}"
    else:
        base = f"/apis/{_seg(group)}/{_seg(version)}"
    return base + (f"/namespaces/{_seg(namespace)}" if namespace else "") + f"/{_seg(plural)}"


class KubernetesExecutor:
    """ClusterExecutor over the official client; build with from_kubeconfig or from_host."""

    def __init__(
        self,
        api_client: Any,
        host: str,
        request_timeout_s: float = 30.0,
        deadline: Deadline | None = None,
    ) -> None:
        apis = typed_apis(api_client)
        self._client = api_client
        self._host = host
        self._timeout = request_timeout_s
        self.deadline = deadline
        # The total a TIMEOUT names (the run's whole deadline; the bound above may be the
        # part of it the checks get).
        self.deadline_total_s: float | None = None
        self.core = apis.core
        self.apps = apis.apps
        self.batch = apis.batch
        self.custom = apis.custom

    @classmethod
    def from_kubeconfig(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        exec_timeout: float = 30.0,
        deadline: Deadline | None = None,
    ) -> KubernetesExecutor:
        """The same configuration rules as a live capture (aicr_tui.core.live.kube.api_client):
        --kubeconfig, $KUBECONFIG, ~/.kube/config, else the in-cluster service account.
        An exec credential plugin is killed after ``exec_timeout`` seconds (or what is left
        of ``deadline``)."""
        seconds = deadline.per_call(exec_timeout) if deadline is not None else exec_timeout
        api, _source = api_client(kubeconfig, context, exec_timeout=seconds)
        return cls(api, str(api.configuration.host), deadline=deadline)

    @classmethod
    def from_host(cls, host: str, token: str | None = None) -> KubernetesExecutor:
        return cls(host_client(host, token), host)

    def _bounded(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call with a total bound: twice the request timeout (the request timeout
        bounds each socket read, so a trickling answer would otherwise never end), and never
        past the run's deadline (then every call ends at once with the run's TIMEOUT)."""
        from aicr_tui.core.foundation.deadline import run_with_deadline

        limit = self.deadline
        per_call, total = self._timeout, 2 * self._timeout
        if limit is not None:
            total_s = self.deadline_total_s or limit.seconds
            if limit.expired():
                raise timeout_error(RUN_DEADLINE_WHAT, total_s)
            per_call, total = limit.per_call(per_call), limit.per_call(total)
        try:
            return run_with_deadline(
                lambda: fn(*args, _request_timeout=per_call, **kwargs),
                total,
                f"the Kubernetes API call ({what})",
            )
        except AicrError as exc:
            if limit is not None and limit.expired() and exc.code == ErrorCode.TIMEOUT:
                raise timeout_error(
                    RUN_DEADLINE_WHAT, self.deadline_total_s or limit.seconds
                ) from None
            raise

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return self._bounded(what, fn, *args, **kwargs)
        except AicrError:
            raise
        except Exception as exc:
            raise _api_error(exc, what, self._host) from exc

    def _call_or_none(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return self._bounded(what, fn, *args, **kwargs)
        except AicrError:
            raise
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return None
            raise _api_error(exc, what, self._host) from exc

    def _get(self, path: str, query: tuple[tuple[str, str], ...], accept: str, timeout: Any) -> Any:
        return self._client.call_api(
            path,
            "GET",
            query_params=list(query),
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
            _request_timeout=timeout,
        )

    def _get_json(
        self, what: str, path: str, query: tuple[tuple[str, str], ...] = ()
    ) -> dict[str, Any] | None:
        """GET ``path`` as one JSON object, read and decoded within the limits (the body is
        read inside the call's bound); None for 404."""
        from aicr_tui.core.live.kube_replies import decode

        def fetch(_request_timeout: Any) -> dict[str, Any]:
            resp = self._get(path, query, "application/json", _request_timeout)
            return decode(resp, f"GET {path}")

        found = self._call_or_none(what, fetch)
        return found if isinstance(found, dict) else None

    def _pages(
        self, what: str, path: str, query: tuple[tuple[str, str], ...] = ()
    ) -> Iterator[dict[str, Any]]:
        """Every object of the list at ``path``, one page (``PAGE_SIZE``) at a time; only
        the current page is held. A 404 is an empty list."""
        token = ""
        page = 0
        while True:
            page += 1
            page_cap(page, MAX_PAGES, f"the Kubernetes API kept answering {what} with a next page")
            params = (*query, ("limit", str(PAGE_SIZE)))
            if token:
                params = (*params, ("continue", token))
            body = self._get_json(what, path, params)
            if body is None:
                return
            items = body.get("items")
            if items is not None and not isinstance(items, list):
                raise AicrError(
                    ErrorCode.SERVICE_UNAVAILABLE,
                    f"the Kubernetes API answered {what} without an items list",
                )
            token = _text(_map(body.get("metadata")).get("continue"))
            del body
            for item in items or []:
                if isinstance(item, dict):
                    yield item
            del items
            if not token:
                return

    def server_address(self) -> str:
        return self._host

    def list_nodes(self) -> list[NodeInfo]:
        return [node_info(n) for n in self._pages("listing nodes", "/api/v1/nodes")]

    def list_pods(self, namespace: str, label_selector: str = "") -> list[PodInfo]:
        query = (("labelSelector", label_selector),) if label_selector else ()
        path = resource_path("", "v1", "pods", namespace)
        return [
            pod_info(p, namespace) for p in self._pages(f"listing pods in {namespace}", path, query)
        ]

    def list_workloads(
        self, kind: str, namespace: str | None = None, label_selector: str = ""
    ) -> list[WorkloadInfo]:
        plural = self._workload_plural(kind)
        what = f"listing {kind}s" + (f" in {namespace}" if namespace else "")
        query = (("labelSelector", label_selector),) if label_selector else ()
        path = resource_path("apps", "v1", plural, namespace)
        return [workload_info(kind, o) for o in self._pages(what, path, query)]

    @staticmethod
    def _workload_plural(kind: str) -> str:
        plural = _WORKLOAD_PLURALS.get(kind)
        if plural is None:
            raise invalid(
                f'workload kind "{kind}" is not supported; expected one of {", ".join(WORKLOAD_KINDS)}'
            )
        return plural

    def get_workload(self, kind: str, namespace: str, name: str) -> WorkloadInfo | None:
        path = resource_path("apps", "v1", self._workload_plural(kind), namespace)
        obj = self._get_json(f"reading {kind} {namespace}/{name}", f"{path}/{_seg(name)}")
        return None if obj is None else workload_info(kind, obj)

    def namespace_phase(self, name: str) -> str | None:
        ns = self._get_json(f"reading namespace {name}", f"/api/v1/namespaces/{_seg(name)}")
        if ns is None:
            return None
        return _text(_map(ns.get("status")).get("phase")) or "Active"

    def _wait_namespace_gone(self, name: str) -> bool:
        """Poll until namespace ``name`` no longer exists (True) or NAMESPACE_GONE_S passes."""
        deadline = time.monotonic() + NAMESPACE_GONE_S
        while self.namespace_phase(name) is not None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(NAMESPACE_POLL_S)
        return True

    def _still_terminating(self, name: str, what: str) -> AicrError:
        return AicrError(
            ErrorCode.TIMEOUT,
            f"namespace {name} is still being deleted (Terminating) {NAMESPACE_GONE_S:.0f}s "
            f"after {what}",
            remedy=f"see what holds it with `kubectl get all,events -n {name}`, or pass another --namespace",
        )

    def ensure_namespace(self, name: str, labels: dict[str, str]) -> bool:
        """Create namespace ``name`` (True), or use it when it exists (False). A namespace
        still being deleted refuses every new object: wait for it to go, then create it."""
        phase = self.namespace_phase(name)
        if phase == "Terminating":
            if not self._wait_namespace_gone(name):
                raise self._still_terminating(name, "this run found it being deleted")
            phase = None
        if phase is not None:
            return False
        body = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": labels},
        }
        try:
            self.core.create_namespace(body, _request_timeout=self._timeout)
        except Exception as exc:
            if getattr(exc, "status", None) == 409:
                return False
            raise _api_error(exc, f"creating namespace {name}", self._host) from exc
        return True

    def delete_namespace(self, name: str, *, wait: bool = True) -> None:
        """Delete namespace ``name`` and (``wait``) wait until the server has removed it."""
        self._call_or_none(f"deleting namespace {name}", self.core.delete_namespace, name)
        if wait and not self._wait_namespace_gone(name):
            raise self._still_terminating(name, "its deletion was requested")

    def served_resources(self, group: str, version: str) -> set[str] | None:
        what = f"discovering {group}/{version}"
        if group in ("", "core"):
            res = self._call_or_none(what, self.core.get_api_resources)
        else:
            res = self._call_or_none(what, self.custom.get_api_resources, group, version)
        if res is None:
            return None
        return {r.name for r in res.resources or []}

    def get_object(
        self, group: str, version: str, plural: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        path = resource_path(group, version, plural, namespace) + f"/{_seg(name)}"
        return self._get_json(f"reading {plural}.{group} {name}", path)

    def list_objects(
        self,
        group: str,
        version: str,
        plural: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
    ) -> list[dict[str, Any]]:
        what = f"listing {plural}" + (f".{group}" if group else "")
        query = (("labelSelector", label_selector),) if label_selector else ()
        return list(self._pages(what, resource_path(group, version, plural, namespace), query))

    def create(self, manifest: dict[str, Any], *, dry_run: bool = False) -> None:
        kind = str(manifest.get("kind", ""))
        api_version = str(manifest.get("apiVersion", ""))
        meta = manifest.get("metadata") or {}
        ns = str(meta.get("namespace", ""))
        what = f"creating {kind} {ns}/{meta.get('name', '')}"
        extra: dict[str, Any] = {"dry_run": "All"} if dry_run else {}
        body = {k: v for k, v in manifest.items() if k != "__plural__"}
        core_create = {
            "Pod": self.core.create_namespaced_pod,
            "Service": self.core.create_namespaced_service,
            "Secret": self.core.create_namespaced_secret,
            "ConfigMap": self.core.create_namespaced_config_map,
        }
        if api_version == "v1" and kind in core_create:
            self._call(what, core_create[kind], ns, body, **extra)
        elif kind == "Job":
            self._call(what, self.batch.create_namespaced_job, ns, body, **extra)
        elif "/" in api_version:
            group, version = api_version.split("/", 1)
            plural = str(manifest.get("__plural__") or kind.lower() + "s")
            self._call(
                what,
                self.custom.create_namespaced_custom_object,
                group,
                version,
                ns,
                plural,
                body,
                **extra,
            )
        else:
            raise invalid(f'cannot create kind "{kind}" ({api_version})')

    def patch_object(
        self,
        group: str,
        version: str,
        plural: str,
        name: str,
        patch: dict[str, Any],
        namespace: str | None = None,
    ) -> None:
        what = f"patching {plural}.{group} {name}"
        if namespace:
            self._call(
                what,
                self.custom.patch_namespaced_custom_object,
                group,
                version,
                namespace,
                plural,
                name,
                patch,
            )
        else:
            self._call(
                what, self.custom.patch_cluster_custom_object, group, version, plural, name, patch
            )

    def raw_get(self, path: str, query: tuple[tuple[str, str], ...] = ()) -> str | None:
        def fetch(_request_timeout: Any) -> str:
            resp = self._get(path, query, "application/json, text/plain, */*", _request_timeout)
            raw = getattr(resp, "data", resp)
            return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)

        text = self._call_or_none(f"reading {path}", fetch)
        return text if isinstance(text, str) else None

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        what = f"deleting {kind} {namespace}/{name}"
        if kind == "Pod":
            self._call_or_none(
                what, self.core.delete_namespaced_pod, name, namespace, grace_period_seconds=0
            )
        elif kind == "Job":
            self._call_or_none(
                what,
                self.batch.delete_namespaced_job,
                name,
                namespace,
                propagation_policy="Foreground",
            )
        elif kind == "Service" and api_version == "v1":
            self._call_or_none(what, self.core.delete_namespaced_service, name, namespace)
        elif kind == "Secret" and api_version == "v1":
            self._call_or_none(what, self.core.delete_namespaced_secret, name, namespace)
        elif kind == "ConfigMap" and api_version == "v1":
            self._call_or_none(what, self.core.delete_namespaced_config_map, name, namespace)
        elif "/" in api_version:
            group, version = api_version.split("/", 1)
            plural = _KIND_PLURALS.get(kind, kind.lower() + "s")
            self._call_or_none(
                what,
                self.custom.delete_namespaced_custom_object,
                group,
                version,
                namespace,
                plural,
                name,
            )
        else:
            raise invalid(f'cannot delete kind "{kind}" ({api_version})')

    def pod_status(self, namespace: str, name: str) -> PodOutcome:
        pod = self._call_or_none(
            f"reading pod {namespace}/{name}", self.core.read_namespaced_pod, name, namespace
        )
        if pod is None:
            return PodOutcome(name, "Missing")
        st = pod.status
        container: ContainerOutcome | None = None
        for cs in (st.container_statuses if st else None) or []:
            state = cs.state
            if state is not None and state.terminated is not None:
                t = state.terminated
                container = ContainerOutcome(
                    int(t.exit_code), t.reason or "", (t.message or "")[:4096]
                )
            elif state is not None and state.waiting is not None:
                w = state.waiting
                container = ContainerOutcome(None, "", w.message or "", w.reason or "")
            break
        unscheduled = ""
        for cond in (st.conditions if st else None) or []:
            if cond.type == "PodScheduled" and cond.status == "False":
                said = " ".join(f"{cond.reason or ''}: {cond.message or ''}".split())
                unscheduled = said.strip(": ")[:400] or "the scheduler has not placed it"
        return PodOutcome(
            name,
            (st.phase if st else None) or "Unknown",
            (pod.spec.node_name if pod.spec else None) or "",
            container,
            unscheduled,
        )

    def pod_logs(
        self, namespace: str, name: str, container: str = "", tail_lines: int = 1000
    ) -> str:
        kwargs: dict[str, Any] = {"tail_lines": tail_lines}
        if container:
            kwargs["container"] = container
        text = self._call(
            f"reading logs of pod {namespace}/{name}",
            self.core.read_namespaced_pod_log,
            name,
            namespace,
            **kwargs,
        )
        return text if isinstance(text, str) else str(text)
