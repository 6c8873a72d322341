"""KubernetesExecutor against a stand-in for the Kubernetes API server on 127.0.0.1.

The HTTP server started by these tests stands in for the API server: it answers the exact
REST paths the official client calls, with JSON in the real API shapes (NodeList, PodList,
Deployment, DaemonSetList, APIResourceList, Namespace, Pod status, pod log text), keeps the
pods the checks create, and records every request so the tests can assert on the paths.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.validation.events import CheckFinished
from aicr_tui.core.validation.kube_executor import KubernetesExecutor
from aicr_tui.core.validation.recipe_view import RecipeView
from tests.conftest import TEST_DATA
from tests.simulated import run_collecting, validation_request
from tests.unit.live_fakes import BackgroundServer

SMI_LOG = (
    TEST_DATA / "validation" / "nvidia_smi_h100_8gpu.txt"
).read_text() + "GPU_CHECK_SUCCESS\n"


def _meta(name: str, ns: str | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "labels": labels or {}}
    if ns:
        m["namespace"] = ns
    return m


def node(name: str) -> dict[str, Any]:
    return {
        "metadata": _meta(
            name,
            labels={
                "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
                "nvidia.com/gpu.present": "true",
            },
        ),
        "spec": {},
        "status": {
            "allocatable": {"cpu": "96", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_template(image: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def deployment(name: str, ns: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, ns, {"app": name, "app.kubernetes.io/version": version}),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "x"}},
            "template": pod_template(f"nvcr.io/nvidia/gpu-operator:{version}"),
        },
        "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1},
    }


def daemonset(name: str, ns: str, ready: int) -> dict[str, Any]:
    return {
        "metadata": _meta(name, ns),
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": pod_template("img:1")},
        "status": {
            "currentNumberScheduled": 2,
            "desiredNumberScheduled": 2,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "numberAvailable": ready,
        },
    }


class FakeApiServer(BackgroundServer):
    def __init__(self, *, forbid: bool = False) -> None:
        self.requests: list[tuple[str, str]] = []
        self.pods: dict[tuple[str, str], dict[str, Any]] = {
            ("gpu-operator", "gpu-operator-abc"): {
                "metadata": _meta("gpu-operator-abc", "gpu-operator", {"app": "gpu-operator"}),
                "spec": {
                    "nodeName": "sys-0",
                    "containers": [{"name": "gpu-operator", "image": "i"}],
                },
                "status": {"phase": "Running"},
            }
        }
        self.logs: dict[tuple[str, str], str] = {}
        self.namespaces = {"gpu-operator": "Active", "default": "Active"}
        self.forbid = forbid
        self.created: list[tuple[str, Any]] = []
        self.leases: dict[str, Any] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: Any, ctype: str = "application/json") -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _status(self, code: int, reason: str) -> None:
                self._send(
                    code,
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "reason": reason,
                        "code": code,
                    },
                )

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n) or b"{}")

            def handle_one(self, method: str) -> None:
                url = urlparse(self.path)
                server.requests.append((method, url.path))
                if server.forbid:
                    return self._status(403, "Forbidden")
                res = server.route(
                    method,
                    url.path,
                    parse_qs(url.query),
                    self._body() if method in ("POST", "PUT") else None,
                )
                if res is None:
                    return self._status(404, "NotFound")
                code, body = res
                self._send(
                    code, body, "text/plain" if isinstance(body, str) else "application/json"
                )

            def do_GET(self) -> None:
                self.handle_one("GET")

            def do_POST(self) -> None:
                self.handle_one("POST")

            def do_DELETE(self) -> None:
                self.handle_one("DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any] | None:
        parts = path.strip("/").split("/")
        if "/leases" in path:  # the run's lease (aicr_tui.core.validation.isolation)
            if method == "POST":
                self.leases[parts[5]] = body
                return 201, body
            held = self.leases.get(parts[5]) if len(parts) == 7 else None
            if method == "DELETE" and held is not None:
                del self.leases[parts[5]]
                return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}
            return None if held is None else (200, held)
        if path == "/api/v1/namespaces" and method == "GET":
            return 200, {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {}, "items": []}
        if path == "/api/v1/nodes":
            return 200, {
                "kind": "NodeList",
                "apiVersion": "v1",
                "metadata": {},
                "items": [node("gpu-0"), node("gpu-1")],
            }
        if path == "/api/v1/namespaces" and method == "POST":
            self.namespaces[body["metadata"]["name"]] = "Active"
            return 201, {**body, "status": {"phase": "Active"}}
        if len(parts) == 4 and parts[:3] == ["api", "v1", "namespaces"]:
            name = parts[3]
            if name not in self.namespaces:
                return None
            if method == "DELETE":
                self.namespaces.pop(name)
                return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}
            return 200, {
                "kind": "Namespace",
                "apiVersion": "v1",
                "metadata": _meta(name),
                "status": {"phase": self.namespaces[name]},
            }
        if (
            len(parts) >= 6
            and parts[:3] == ["api", "v1", "namespaces"]
            and parts[4] == "pods"
            or (len(parts) == 5 and parts[4] == "pods")
        ):
            ns = parts[3]
            if len(parts) == 5:
                if method == "POST":
                    name = body["metadata"]["name"]
                    body["status"] = {
                        "phase": "Succeeded",
                        "containerStatuses": [
                            {
                                "name": body["spec"]["containers"][0]["name"],
                                "image": "i",
                                "imageID": "",
                                "ready": False,
                                "restartCount": 0,
                                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                            }
                        ],
                    }
                    self.pods[(ns, name)] = body
                    cname = body["spec"]["containers"][0]["name"]
                    self.logs[(ns, name)] = SMI_LOG if cname == "nvidia-smi" else "NO_GPU_VISIBLE\n"
                    return 201, body
                want = dict(
                    kv.split("=", 1)
                    for kv in (query.get("labelSelector", [""])[0]).split(",")
                    if "=" in kv
                )
                items = [
                    p
                    for (pns, _), p in self.pods.items()
                    if pns == ns
                    and all(p["metadata"]["labels"].get(k) == v for k, v in want.items())
                ]
                return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}
            key = (ns, parts[5])
            if key not in self.pods:
                return None
            if len(parts) == 7 and parts[6] == "log":
                assert query.get("tailLines") == ["1000"]
                return 200, self.logs.get(key, "")
            if method == "DELETE":
                return 200, self.pods.pop(key)
            return 200, self.pods[key]
        if method == "POST" and (
            path.endswith("/jobs")
            or path.endswith("/trainjobs")
            or path.endswith("/trainingruntimes")
        ):
            self.created.append((path, body))
            return 201, body
        if method == "DELETE" and (
            "/jobs/" in path or "/trainjobs/" in path or "/trainingruntimes/" in path
        ):
            return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}
        if path == "/apis/apps/v1/namespaces/gpu-operator/deployments/gpu-operator":
            return 200, deployment("gpu-operator", "gpu-operator", "v25.10.1")
        if path == "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-dcgm-exporter":
            return 200, daemonset("nvidia-dcgm-exporter", "gpu-operator", 2)
        if path == "/apis/nvidia.com/v1/clusterpolicies/cluster-policy":
            return 200, {
                "apiVersion": "nvidia.com/v1",
                "kind": "ClusterPolicy",
                "metadata": _meta("cluster-policy"),
                "status": {"state": "ready"},
            }
        if path == "/apis/resource.k8s.io/v1":
            names = ["deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"]
            return 200, {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": "resource.k8s.io/v1",
                "resources": [
                    {
                        "name": n,
                        "singularName": n[:-1],
                        "namespaced": n.startswith("resourceclaim"),
                        "kind": n.title(),
                        "verbs": ["get", "list"],
                    }
                    for n in names
                ],
            }
        return None

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


RECIPE = RecipeView.from_document(
    {
        "criteria": {"service": "aks"},
        "componentRefs": [{"name": "gpu-operator", "namespace": "gpu-operator"}],
        "validation": {
            "deployment": {
                "checks": ["operator-health", "gpu-operator-version", "check-nvidia-smi"],
                "constraints": [{"name": "Deployment.gpu-operator.version", "value": ">= v24.6.0"}],
            },
            "conformance": {
                "checks": [
                    "dra-support",
                    "gpu-operator-health",
                    "secure-accelerator-access",
                    "platform-health",
                ]
            },
        },
    }
)


def test_stand_in_api_server_runs_deployment_and_conformance_checks(api: FakeApiServer) -> None:
    req = validation_request(RECIPE, None, poll_s=0.01)
    result, events = run_collecting(req, lambda: KubernetesExecutor.from_host(api.host))
    done = {e.check: e for e in events if isinstance(e, CheckFinished)}
    assert {k: v.status for k, v in done.items()} == {
        "operator-health": "passed",
        "gpu-operator-version": "passed",
        "check-nvidia-smi": "passed",
        "dra-support": "passed",
        "secure-accelerator-access": "passed",
        "gpu-operator-health": "passed",
        "platform-health": "passed",
    }, {k: v.message for k, v in done.items()}
    assert result.exit_code == 0
    assert done["check-nvidia-smi"].extra == {"nodesValidated": "2", "nodesTotal": "2"}
    paths = set(api.requests)
    for expected in [
        ("GET", "/api/v1/nodes"),
        ("GET", "/api/v1/namespaces/gpu-operator/pods"),
        ("GET", "/apis/apps/v1/namespaces/gpu-operator/deployments/gpu-operator"),
        ("POST", "/api/v1/namespaces"),
        ("POST", "/api/v1/namespaces/aicr-validation/pods"),
        ("GET", "/api/v1/namespaces/aicr-validation/pods/nvidia-smi-verify-gpu-0"),
        ("GET", "/api/v1/namespaces/aicr-validation/pods/nvidia-smi-verify-gpu-0/log"),
        ("DELETE", "/api/v1/namespaces/aicr-validation/pods/nvidia-smi-verify-gpu-1"),
        ("GET", "/apis/resource.k8s.io/v1"),
        ("GET", "/apis/nvidia.com/v1/clusterpolicies/cluster-policy"),
        ("DELETE", "/api/v1/namespaces/aicr-validation"),
    ]:
        assert expected in paths, expected
    assert "aicr-validation" not in api.namespaces


def test_stand_in_api_server_refusal_maps_to_unauthorized() -> None:
    with FakeApiServer(forbid=True) as api:
        ex = KubernetesExecutor.from_host(api.host)
        with pytest.raises(AicrError) as info:
            ex.list_nodes()
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "403" in info.value.render()


def test_unreachable_api_is_service_unavailable() -> None:
    with FakeApiServer() as api:
        host = api.host
    ex = KubernetesExecutor.from_host(host)
    ex._timeout = 2.0
    with pytest.raises(AicrError) as info:
        ex.list_nodes()
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "unreachable" in info.value.render()


def test_missing_objects_are_none_not_errors(api: FakeApiServer) -> None:
    ex = KubernetesExecutor.from_host(api.host)
    assert ex.get_workload("Deployment", "nope", "gpu-operator") is None
    assert ex.namespace_phase("nope") is None
    assert ex.served_resources("trainer.kubeflow.org", "v1alpha1") is None
    assert ex.pod_status("nope", "p").phase == "Missing"
    ds = ex.get_workload("DaemonSet", "gpu-operator", "nvidia-dcgm-exporter")
    assert ds is not None and ds.healthy and ds.desired == 2


def test_jobs_and_custom_objects_use_their_rest_paths(api: FakeApiServer) -> None:
    ex = KubernetesExecutor.from_host(api.host)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "aicr-aiperf-1", "namespace": "aicr-validation"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "aiperf", "image": "x"}]}
            }
        },
    }
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "__plural__": "trainjobs",
        "metadata": {"name": "nccl-all-reduce-tj", "namespace": "aicr-validation"},
        "spec": {"runtimeRef": {"name": "nccl-all-reduce-runtime"}},
    }
    ex.create(job)
    ex.create(trainjob)
    ex.delete("batch/v1", "Job", "aicr-validation", "aicr-aiperf-1")
    ex.delete("trainer.kubeflow.org/v1alpha1", "TrainJob", "aicr-validation", "nccl-all-reduce-tj")
    assert [p for p, _ in api.created] == [
        "/apis/batch/v1/namespaces/aicr-validation/jobs",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/aicr-validation/trainjobs",
    ]
    assert "__plural__" not in api.created[1][1]
    assert (
        "DELETE",
        "/apis/batch/v1/namespaces/aicr-validation/jobs/aicr-aiperf-1",
    ) in api.requests
    assert (
        "DELETE",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/aicr-validation/trainjobs/nccl-all-reduce-tj",
    ) in api.requests


def test_a_namespace_that_stays_terminating_is_a_timeout_naming_it(
    api: FakeApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real API server keeps a deleted namespace (Terminating) until everything in it is
    gone, and refuses new objects in it meanwhile: the run neither takes it as usable nor
    reports its cleanup done while it is there (the cluster tier shows both for real)."""
    import aicr_tui.core.validation.kube_executor as executor_module

    monkeypatch.setattr(executor_module, "NAMESPACE_GONE_S", 0.3)
    monkeypatch.setattr(executor_module, "NAMESPACE_POLL_S", 0.05)
    api.namespaces["held"] = "Terminating"
    ex = KubernetesExecutor.from_host(api.host)
    with pytest.raises(AicrError) as info:
        ex.ensure_namespace("held", {})
    assert info.value.code == ErrorCode.TIMEOUT
    assert "namespace held is still being deleted (Terminating)" in info.value.render()
    assert ("POST", "/api/v1/namespaces") not in api.requests

    class Finalized(dict[str, str]):
        """DELETE marks the namespace Terminating; it never goes (a finalizer holds it)."""

        def pop(self, name: str, *default: Any) -> str:
            self[name] = "Terminating"
            return "Terminating"

    api.namespaces = Finalized({"mine": "Active"})
    with pytest.raises(AicrError) as info:
        ex.delete_namespace("mine")
    assert info.value.code == ErrorCode.TIMEOUT
    assert "namespace mine is still being deleted" in info.value.render()
    assert ("DELETE", "/api/v1/namespaces/mine") in api.requests


class PagedApiServer(FakeApiServer):
    """Answers the node list in pages as a real API server does (``limit``, ``continue``)
    and refuses to send it whole: a list read without ``limit`` is answered 413."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.queries: list[dict[str, list[str]]] = []

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any] | None:
        if path != "/api/v1/nodes":
            return super().route(method, path, query, body)
        self.queries.append(query)
        if "limit" not in query:
            return 413, {"kind": "Status", "code": 413, "message": "too large"}
        limit = int(query["limit"][0])
        start = int(query.get("continue", ["0"])[0])
        end = min(self.count, start + limit)
        meta = {"continue": str(end)} if end < self.count else {}
        items = [node(f"gpu-{i:05}") for i in range(start, end)]
        return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": meta, "items": items}


def test_node_list_is_read_in_pages_with_limit_and_continue() -> None:
    """Issue 32: validation listed nodes in one request (at 5,000 nodes the reply is over
    the client's 8 MiB cap); every list is paged like the snapshot's."""
    from aicr_tui.core.validation.kube_executor import PAGE_SIZE

    with PagedApiServer(2 * PAGE_SIZE + 7) as api:
        ex = KubernetesExecutor.from_host(api.host)
        nodes = ex.list_nodes()
    assert [n.name for n in nodes] == [f"gpu-{i:05}" for i in range(2 * PAGE_SIZE + 7)]
    assert all(n.is_gpu_node and n.ready for n in nodes)
    assert [q.get("continue") for q in api.queries] == [
        None,
        [str(PAGE_SIZE)],
        [str(2 * PAGE_SIZE)],
    ]
    assert all(q["limit"] == [str(PAGE_SIZE)] for q in api.queries)


def test_a_list_that_never_ends_is_refused_after_the_page_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import aicr_tui.core.validation.kube_executor as executor_module

    monkeypatch.setattr(executor_module, "MAX_PAGES", 3)

    class Endless(PagedApiServer):
        def route(
            self, method: str, path: str, query: dict[str, list[str]], body: Any
        ) -> tuple[int, Any] | None:
            if path == "/api/v1/nodes":
                return 200, {"kind": "NodeList", "metadata": {"continue": "x"}, "items": []}
            return super().route(method, path, query, body)

    with Endless(0) as api:
        with pytest.raises(AicrError) as info:
            KubernetesExecutor.from_host(api.host).list_nodes()
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "after 3 pages" in info.value.render()


def test_throttled_answer_names_429_and_retry_after() -> None:
    class Throttled(FakeApiServer):
        def route(
            self, method: str, path: str, query: dict[str, list[str]], body: Any
        ) -> tuple[int, Any] | None:
            return 429, {"kind": "Status", "code": 429, "message": "slow down"}

    with Throttled() as api:
        with pytest.raises(AicrError) as info:
            KubernetesExecutor.from_host(api.host).list_nodes()
    text = info.value.render()
    assert info.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "HTTP 429 (Too Many Requests; no Retry-After)" in text and "slow down" in text
    assert "urllib3" not in text and "unreachable" not in text


def test_connection_refused_names_no_library_internals() -> None:
    with FakeApiServer() as api:
        host = api.host
    ex = KubernetesExecutor.from_host(host)
    with pytest.raises(AicrError) as info:
        ex.list_nodes()
    text = info.value.render()
    assert "Connection refused" in text
    for internal in ("urllib3", "HTTPConnection", "Max retries", "object at 0x", "Pool"):
        assert internal not in text, text


def test_an_expired_run_deadline_ends_every_call_at_once(api: FakeApiServer) -> None:
    from aicr_tui.core.foundation.deadline import Deadline

    ex = KubernetesExecutor.from_host(api.host)
    ex.deadline = Deadline(0.0)
    before = len(api.requests)
    with pytest.raises(AicrError) as info:
        ex.list_nodes()
    assert info.value.code is ErrorCode.TIMEOUT
    assert "the validation run did not finish within its total deadline" in info.value.render()
    assert len(api.requests) == before


def test_an_unscheduled_probe_reads_the_schedulers_reason(api: FakeApiServer) -> None:
    message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    api.pods[("aicr-validation", "probe")] = {
        "metadata": _meta("probe", "aicr-validation"),
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
            ],
        },
    }
    status = KubernetesExecutor.from_host(api.host).pod_status("aicr-validation", "probe")
    assert not status.terminal
    assert status.unfinished_reason() == f"never scheduled: Unschedulable: {message}"
