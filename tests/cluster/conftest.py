"""The cluster tier: tests against the real control plane ``make cluster-up`` starts.

``make test-cluster`` starts the cluster when it is not up and runs this directory alone. A
plain ``pytest`` / ``make test`` does not collect it (tests/conftest.py ignores the directory
unless ``--run-cluster`` is given or ``tests/cluster`` is named). The cluster is
etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.34 plus the kwok
controller, bound to 127.0.0.1; nodes are kwok fakes, so pods "run" without containers.

A cluster that cannot be reached FAILS the session when ``AICR_CLUSTER_REQUIRED=1`` (set by
``make test-cluster``) or ``CI`` is set; otherwise (a developer running ``pytest
--run-cluster tests/cluster`` by hand without a cluster) it is skipped with the command to run.

Fixtures and helpers for every cluster test:
- ``cluster`` (session): a :class:`Cluster` with ``kubeconfig``, ``env`` (the environment
  for any subprocess: ``KUBECONFIG``, ``PATH`` with the built kubectl/helm, ``HELM_*_HOME``
  under ``.cluster/helm``) and the helpers ``kubectl``, ``helm``, ``get``, ``list_objects``,
  ``apply``, ``create_kwok_node``, ``delete_nodes``, ``service_account_kubeconfig``,
  ``wait_until`` (and ``condition_true`` for an object's conditions).
- ``namespace``: a fresh namespace, deleted (and waited for) after the test.
- ``kwok_nodes``: ``kwok_nodes(node_dict, ...)`` creates kwok nodes from Node dicts and waits
  until each is Ready; every node it made is deleted after the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

STATE_DIR = Path(os.environ.get("AICR_CLUSTER_STATE") or REPO / ".cluster")
ENV_FILE = STATE_DIR / "env"
# The annotation kwok is started with (--manage-nodes-with-annotation-selector): only nodes
# carrying it are run by kwok; any other node stays NotReady like a node with no kubelet.
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_ANNOTATION_VALUE = "fake"
# Generous bounds: "it ends", not speed (2 shared cores).
DEFAULT_TIMEOUT_S = 120.0
READY_TIMEOUT_S = 90.0


class ClusterCommandError(AssertionError):
    """A kubectl/helm command exited non-zero; the message holds the command and its output."""


def read_env_file(path: Path, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` updated with the ``NAME=value`` lines of ``.cluster/env``; ``$NAME`` in a value
    (the ``PATH=<bin>:$PATH`` line) is expanded against the environment built so far."""
    env = dict(base)
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"{path}: not a NAME=value line: {raw!r}")
        for ref in sorted((k for k in env if f"${k}" in value), key=len, reverse=True):
            value = value.replace(f"${ref}", env[ref])
        env[name] = value
    return env


@dataclass
class Cluster:
    """The running local cluster and the commands to drive it."""

    kubeconfig: Path
    env: dict[str, str]
    bin_dir: Path

    # ---- commands -------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        input_text: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` with the cluster's environment (plus ``env``); text output captured.
        With ``check`` a non-zero exit raises :class:`ClusterCommandError` showing both streams."""
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        proc = subprocess.run(
            list(argv),
            env=full_env,
            input=input_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise ClusterCommandError(
                f"{' '.join(argv)} exited {proc.returncode}\n"
                f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
            )
        return proc

    def kubectl(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        """The built kubectl (v1.34) against the admin kubeconfig."""
        return self.run([str(self.bin_dir / "kubectl"), *args], **kw)

    def helm(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        """The built helm v4 CLI (``HELM_*_HOME`` under ``.cluster/helm``)."""
        return self.run([str(self.bin_dir / "helm"), *args], **kw)

    # ---- reading the API ------------------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """One object as a dict, or None when the server answers NotFound."""
        ns = ["-n", namespace] if namespace else []
        proc = self.kubectl("get", kind, name, *ns, "-o", "json", check=False)
        if proc.returncode != 0:
            if "NotFound" in proc.stderr or "not found" in proc.stderr:
                return None
            raise ClusterCommandError(f"kubectl get {kind} {name}: {proc.stderr}")
        obj: dict[str, Any] = json.loads(proc.stdout)
        return obj

    def list_objects(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        all_namespaces: bool = False,
        selector: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every object of ``kind`` (``pods``, ``deployments.apps``, ``crd`` ...) as dicts.
        Cluster-scoped kinds ignore ``namespace``."""
        args = ["get", kind, "-o", "json"]
        if all_namespaces:
            args.append("--all-namespaces")
        elif namespace:
            args += ["-n", namespace]
        if selector:
            args += ["-l", selector]
        items: list[dict[str, Any]] = json.loads(self.kubectl(*args).stdout)["items"]
        return items

    def names(self, kind: str, namespace: str | None = None, **kw: Any) -> set[str]:
        """The names of :meth:`list_objects`."""
        return {o["metadata"]["name"] for o in self.list_objects(kind, namespace, **kw)}

    def api_resources(self) -> set[str]:
        """``kubectl api-resources`` names (``plural.group``), for discovery checks."""
        out = self.kubectl("api-resources", "-o", "name").stdout
        return {line.strip() for line in out.splitlines() if line.strip()}

    # ---- writing --------------------------------------------------------------------------
    def apply(
        self,
        docs: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        server_side: bool = False,
        dry_run: bool = False,
        namespace: str | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """``kubectl apply`` of one object or a list of objects (dicts; sent as a v1 List).
        ``server_side`` uses server-side apply; ``dry_run`` asks the server (``--dry-run=server``)."""
        items = [docs] if isinstance(docs, Mapping) else list(docs)
        payload = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        args = ["apply", "-f", "-"]
        if server_side:
            args += ["--server-side", "--field-manager=aicr-tui-tests"]
        if dry_run:
            args.append("--dry-run=server")
        if namespace:
            args += ["-n", namespace]
        return self.kubectl(*args, input_text=payload, check=check)

    def wait_established(self, crd: str, timeout: float = 60) -> None:
        """Until CRD ``crd`` is Established and its kind is in the API server's discovery
        (what helm's capabilities and kubectl's mappings read). Not ``kubectl wait``: it
        fails at once on a CRD whose status has no conditions yet (".status.conditions
        accessor error: <nil>", a CI failure on a CRD created a moment before)."""

        def established() -> bool:
            found = self.get("customresourcedefinitions", crd)
            if found is None:
                return False
            conditions = found.get("status", {}).get("conditions") or []
            if not any(
                c.get("type") == "Established" and c.get("status") == "True" for c in conditions
            ):
                return False
            spec = found["spec"]
            served = [v["name"] for v in spec["versions"] if v.get("served")]
            listed = self.kubectl(
                "get", "--raw", f"/apis/{spec['group']}/{served[0]}", check=False
            ).stdout
            return f'"name":"{spec["names"]["plural"]}"' in listed

        self.wait_until(f"CRD {crd} established and served", established, timeout=timeout)

    def wait_until(
        self,
        what: str,
        predicate: Callable[[], Any],
        *,
        timeout: float = READY_TIMEOUT_S,
        interval: float = 0.5,
    ) -> Any:
        """Poll ``predicate`` until it returns something truthy (returned); fail naming ``what``."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: not reached after {timeout:.0f} s")
            time.sleep(interval)

    # ---- kwok nodes -----------------------------------------------------------------------
    def create_kwok_node(
        self, node: Mapping[str, Any], *, wait_ready: bool = True
    ) -> dict[str, Any]:
        """Create a fake node from a Node dict (``metadata`` with at least ``name``; optional
        ``labels``, ``annotations``, ``spec`` (taints ...), ``status`` (capacity, allocatable,
        nodeInfo: kept by kwok)). The kwok annotation and the kubelet's standard labels are
        added unless given. Waits until the node is Ready; returns the node as read back.
        The caller deletes it (the ``kwok_nodes`` fixture does)."""
        meta = dict(node.get("metadata") or {})
        name = str(meta.get("name") or "")
        if not name:
            raise ValueError("create_kwok_node: the node dict needs metadata.name")
        annotations = {KWOK_ANNOTATION: KWOK_ANNOTATION_VALUE, **(meta.get("annotations") or {})}
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "type": "kwok",
            **(meta.get("labels") or {}),
        }
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            **{k: v for k, v in node.items() if k not in ("apiVersion", "kind", "metadata")},
            "metadata": {**meta, "annotations": annotations, "labels": labels},
        }
        self.kubectl("create", "-f", "-", input_text=json.dumps(body))
        if not wait_ready:
            got = self.get("node", name)
            assert got is not None
            return got
        return dict(self.wait_until(f"kwok node {name} Ready", lambda: self._ready_node(name)))

    def _ready_node(self, name: str) -> dict[str, Any] | None:
        got = self.get("node", name)
        if got and condition_true(got, "Ready"):
            return got
        return None

    def delete_nodes(self, names: Sequence[str]) -> None:
        """Delete nodes by name and wait until they are gone."""
        if names:
            self.kubectl("delete", "node", *names, "--ignore-not-found", "--wait=true")

    # ---- other identities -----------------------------------------------------------------
    def service_account_kubeconfig(
        self, namespace: str, name: str, path: Path, *, duration: str = "1h"
    ) -> Path:
        """Write to ``path`` a kubeconfig that authenticates as ServiceAccount
        ``namespace/name`` (a TokenRequest token; same server and CA as the admin's), for
        running a command with only the RBAC that account is bound to. The account must exist."""
        token = self.kubectl(
            "create", "token", name, "-n", namespace, f"--duration={duration}"
        ).stdout.strip()
        view = json.loads(self.kubectl("config", "view", "--raw", "-o", "json").stdout)
        server = view["clusters"][0]["cluster"]
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "aicr-local", "cluster": server}],
            "users": [{"name": f"{namespace}-{name}", "user": {"token": token}}],
            "contexts": [
                {
                    "name": "aicr-local-sa",
                    "context": {"cluster": "aicr-local", "user": f"{namespace}-{name}"},
                }
            ],
            "current-context": "aicr-local-sa",
        }
        path.write_text(json.dumps(config), encoding="utf-8")
        path.chmod(0o600)
        return path


def condition_true(obj: Mapping[str, Any], kind: str) -> bool:
    """``status.conditions`` of ``obj`` has ``type == kind`` with ``status == "True"``."""
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return bool(cond.get("status") == "True")
    return False


def _cluster_required() -> bool:
    return os.environ.get("AICR_CLUSTER_REQUIRED") == "1" or bool(os.environ.get("CI"))


def _unavailable(reason: str) -> None:
    message = f"the local cluster is not available: {reason}. Start it with `make cluster-up`."
    if _cluster_required():
        pytest.fail(message + " (AICR_CLUSTER_REQUIRED/CI is set: a missing cluster fails)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def cluster() -> Cluster:
    """The cluster ``make cluster-up`` started (``.cluster/env``), checked with ``/readyz``."""
    if not ENV_FILE.is_file():
        _unavailable(f"{ENV_FILE} does not exist")
    env = read_env_file(ENV_FILE, os.environ)
    kubeconfig = Path(env.get("KUBECONFIG", ""))
    bin_dir = Path(env.get("PATH", "").split(os.pathsep)[0])
    if not kubeconfig.is_file() or not (bin_dir / "kubectl").is_file():
        _unavailable(f"{ENV_FILE} names no kubeconfig or kubectl ({kubeconfig}, {bin_dir})")
    found = Cluster(kubeconfig=kubeconfig, env=env, bin_dir=bin_dir)
    ready = found.kubectl("get", "--raw", "/readyz", check=False, timeout=30)
    if ready.returncode != 0 or ready.stdout.strip() != "ok":
        _unavailable(f"/readyz answered {ready.stdout.strip()!r} {ready.stderr.strip()[:300]!r}")
    return found


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A fresh namespace for one test; deleted, and waited for, afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    cluster.kubectl("create", "namespace", name)
    yield name
    cluster.kubectl("delete", "namespace", name, "--ignore-not-found", "--wait=true", timeout=180)


@pytest.fixture
def kwok_nodes(cluster: Cluster) -> Iterator[Callable[..., list[dict[str, Any]]]]:
    """``kwok_nodes(node_dict, ...)``: create fake nodes (``Cluster.create_kwok_node``), each
    waited Ready; the created nodes are returned and deleted after the test."""
    made: list[str] = []

    def create(*nodes: Mapping[str, Any], wait_ready: bool = True) -> list[dict[str, Any]]:
        out = []
        for node in nodes:
            got = cluster.create_kwok_node(node, wait_ready=wait_ready)
            made.append(got["metadata"]["name"])
            out.append(got)
        return out

    yield create
    cluster.delete_nodes(made)
