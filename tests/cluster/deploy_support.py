"""Bundles deployed for real: render a catalog recipe, run its scripts against the local
cluster, and list what the API server holds before, during and after.

The cluster is shared by the tier, and bundles of the same charts collide on cluster-scoped
objects (CRDs, webhook configurations, ClusterRoles), so a deployed bundle is always undeployed
and then swept (:func:`sweep`) in a ``finally``, whatever the test's outcome.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.chart_repository import ChartRepositories
from tests.cluster.conftest import Cluster
from tests.conftest import run_cli

# Bounds of the generated scripts' own runner: each helm/kubectl call at most this long, no
# retries (a failure is reported at once, not three times later).
SCRIPT_ENV = {
    "AICR_DEPLOY_TIMEOUT": "240",
    "AICR_DEPLOY_RETRIES": "0",
    "AICR_DEPLOY_RETRY_DELAY": "0",
    "AICR_DEPLOY_KILL_AFTER": "5",
}
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
# Churn the control plane makes on its own while a test runs, and ComponentStatus (not
# stored objects: no uid, no resourceVersion).
VOLATILE = frozenset(
    {"events", "events.events.k8s.io", "leases.coordination.k8s.io", "endpoints",
     "endpointslices.discovery.k8s.io", "componentstatuses"}
)  # fmt: skip

# An object of the API: (apiVersion, kind, namespace or "-", name) -> (uid, resourceVersion).
Key = tuple[str, str, str, str]
Inventory = dict[Key, tuple[str, str]]


# The AKS H100 training criteria and the keyed GPU toleration AKS bundles need.
AKS_TRAINING = [
    "--service",
    "aks",
    "--accelerator",
    "h100",
    "--os",
    "ubuntu",
    "--intent",
    "training",
]
AKS_TOLERATION = ["--accelerated-node-toleration", "nvidia.com/gpu=present:NoSchedule"]


def recipe(tmp: Path, *criteria: str) -> Path:
    out = tmp / "recipe.yaml"
    proc = run_cli("recipe", *criteria, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def bundle(recipe_file: Path, out: Path, *flags: str) -> Path:
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(out), *flags)
    assert proc.returncode == 0, proc.stderr
    return out


def releases(bundle_dir: Path) -> list[dict[str, Any]]:
    info = yaml.safe_load((bundle_dir / "bundle-info.yaml").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = info["layout"]["releases"]
    return found


@dataclass
class ClusterState:
    """What a bundle may leave behind, listed through the API."""

    crds: set[str]
    namespaces: set[str]
    releases: set[str]
    webhooks: set[str]
    cluster_roles: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, cluster: Cluster) -> ClusterState:
        listed = json.loads(
            cluster.helm(
                "list",
                "--all-namespaces",
                "--deployed",
                "--failed",
                "--pending",
                "--superseded",
                "-o",
                "json",
            ).stdout
        )
        webhooks = {
            f"{kind}/{name}"
            for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
            for name in cluster.names(kind)
        }
        return cls(
            crds=cluster.names("crd"),
            namespaces=cluster.names("namespaces"),
            releases={f"{r['namespace']}/{r['name']}" for r in listed},
            webhooks=webhooks,
            cluster_roles=cluster.names("clusterroles"),
        )

    def added_since(self, before: ClusterState) -> dict[str, set[str]]:
        return {
            "crds": self.crds - before.crds,
            "namespaces": self.namespaces - before.namespaces,
            "releases": self.releases - before.releases,
            "webhooks": self.webhooks - before.webhooks,
            "clusterroles": self.cluster_roles - before.cluster_roles,
        }


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def __str__(self) -> str:
        return (
            f"{' '.join(self.argv)} exited {self.returncode} after {self.seconds:.0f} s\n"
            f"--- stderr (tail)\n{self.stderr[-5000:]}\n--- stdout (tail)\n{self.stdout[-2500:]}"
        )


def run_script(
    cluster: Cluster,
    repos: ChartRepositories | None,
    script: Path,
    *args: str,
    timeout: float = 1200,
    env: dict[str, str] | None = None,
) -> Run:
    """Run a generated script as a user would (bash, from anywhere), with the cluster's helm
    and kubectl on PATH and the loopback chart repositories standing in for upstream
    (``repos``; ``env``: more variables, set last)."""
    extra = env or {}
    env = dict(cluster.env)
    env.update(SCRIPT_ENV)
    if repos is not None:
        env.update(repos.env())
    env.update(extra)
    argv = ["bash", str(script), *args]
    started = time.monotonic()
    proc = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    return Run(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def sweep(cluster: Cluster, before: ClusterState) -> dict[str, set[str]]:
    """Remove whatever a (failed) run left beyond ``before``: releases, webhook
    configurations, namespaces, CRDs, ClusterRoles. Returns what it found (empty after a
    clean undeploy), so the caller can tell a clean undeploy from a swept one."""
    left = ClusterState.read(cluster).added_since(before)
    for rel in sorted(left["releases"]):
        ns, name = rel.split("/", 1)
        cluster.helm(
            "uninstall",
            "-n",
            ns,
            "--no-hooks",
            "--ignore-not-found",
            name,
            check=False,
            timeout=180,
        )
    for hook in sorted(left["webhooks"]):
        cluster.kubectl("delete", hook, "--ignore-not-found", check=False)
    if left["clusterroles"]:
        cluster.kubectl(
            "delete",
            "clusterrole",
            *sorted(left["clusterroles"]),
            "--ignore-not-found",
            check=False,
        )
    if left["namespaces"]:
        cluster.kubectl(
            "delete", "namespace", *sorted(left["namespaces"]), "--ignore-not-found", "--wait=true",
            check=False, timeout=300,
        )  # fmt: skip
    if left["crds"]:
        cluster.kubectl(
            "delete", "crd", *sorted(left["crds"]), "--ignore-not-found", "--wait=true",
            check=False, timeout=300,
        )  # fmt: skip
    return left


def wait_gone(cluster: Cluster, before: ClusterState, timeout: float = 240) -> dict[str, set[str]]:
    """Poll until nothing the bundle added remains (namespace and CRD deletion is
    asynchronous: ``Terminating`` until their finalizers ran); return what remains at the end."""
    deadline = time.monotonic() + timeout
    while True:
        left = ClusterState.read(cluster).added_since(before)
        if not any(left.values()) or time.monotonic() > deadline:
            return left
        time.sleep(2)


def inventory(cluster: Cluster) -> Inventory:
    """Every object of every listable resource, all namespaces:
    (apiVersion, kind, namespace, name) -> (uid, resourceVersion). A resource whose CRD is
    deleted between the discovery and the list (undeploy --delete-crds has just run) is
    listed again from a fresh discovery."""
    template = (
        '{{range .items}}{{.apiVersion}} {{.kind}} {{or .metadata.namespace "-"}} '
        '{{.metadata.name}} {{.metadata.uid}} {{.metadata.resourceVersion}}{{"\\n"}}{{end}}'
    )
    for _ in range(10):
        names = [
            n
            for n in cluster.kubectl("api-resources", "--verbs=list", "-o", "name").stdout.split()
            if n not in VOLATILE
        ]
        listed = cluster.kubectl(
            "get", ",".join(names), "--all-namespaces", "-o", f"go-template={template}",
            timeout=120, check=False,
        )  # fmt: skip
        if listed.returncode == 0:
            break
        assert "the server could not find the requested resource" in listed.stderr, listed.stderr
        time.sleep(2)
    else:
        raise AssertionError(f"the API could not be listed: {listed.stderr}")
    out = listed.stdout
    found: Inventory = {}
    for line in out.splitlines():
        api, kind, ns, name, uid, rv = line.split(" ")
        found[(api, kind, ns, name)] = (uid, rv)
    return found


def changes(
    before: Inventory, after: Inventory, theirs: Callable[[Key], bool] = lambda _: False
) -> dict[str, list[Key]]:
    """Objects gone, added, replaced (other uid), and objects ``theirs`` names (another
    team's) modified."""
    return {
        "gone": sorted(set(before) - set(after)),
        "added": sorted(set(after) - set(before)),
        "replaced": sorted(k for k in set(before) & set(after) if before[k][0] != after[k][0]),
        "theirs modified": sorted(
            k for k in set(before) & set(after) if theirs(k) and before[k] != after[k]
        ),
    }


def settled(
    cluster: Cluster,
    before: Inventory,
    theirs: Callable[[Key], bool] = lambda _: False,
    timeout: float = 240,
) -> dict[str, list[Key]]:
    """Poll until the inventory matches ``before`` (namespace and CRD deletion run on after
    the script returns); the changes left at the end."""
    deadline = time.monotonic() + timeout
    while True:
        found = changes(before, inventory(cluster), theirs)
        if not any(found.values()) or time.monotonic() > deadline:
            return found
        time.sleep(3)


def kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` (the script's own, started in a new session):
    timeout(1) runs helm in a process group of its own, which a kill of the script's group
    misses (found: the orphaned helm finished the install after the script was killed)."""
    out = subprocess.run(["ps", "-eo", "pid=,sid="], capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        pid, _, session = line.strip().partition(" ")
        if session.strip() == str(sid):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
