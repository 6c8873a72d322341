"""Faults and switches on the real control plane (issue 32): the API server killed in the
middle of a helm step, helm killed under deploy.sh, and switching the GPU stack profile and
then the intent, with and without ``--prune``.

After each fault, at most one rerun of ``deploy.sh`` must reach the cluster a clean deploy
reaches (same objects in the API's inventory), and no run exits 0 unless the API holds
every step's objects. A switch lists what the new bundle no longer contains and leaves it;
``--prune`` removes exactly that (CRDs kept), also on a later run than the switch.

Three bundles of the AKS H100 catalog, trimmed with ``--set C:enabled=false`` to the charts
that exercise each path quickly: A is inference with the azure-managed GPU stack (its GPU
Operator step applies the hardening DaemonSet), B the same with the operator-managed stack
(no DaemonSet), C training (no agentgateway). One cluster run is shared by every case, in
order: clean A (the reference), B over A with the API server killed, B --prune, B with the
API server paused for longer than the run's time limit, C --prune with helm killed, then C's
and B's undeploys. (The pause first left pods NotReady for good under kwok: the
node-lifecycle controller marked them when it lost touch with the nodes, and nothing in the
stand-in made them ready again, as a kubelet does; cluster/kwok-stages.yaml now does.)

The API server is the tier's own process (``.cluster/pids/kube-apiserver.pid``): killed
with SIGKILL and started again with the argv it ran with.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cluster import chart_repository
from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TOLERATION,
    SCRIPT_ENV,
    ClusterState,
    Inventory,
    Key,
    bundle,
    inventory,
    recipe,
    run_script,
    settled,
    sweep,
)
from tests.cluster.livecap_support import model, modelled_cluster

AKS_H100 = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu"]
DROPPED = [
    "kube-prometheus-stack", "k8s-ephemeral-storage-metrics", "network-operator",
    "nodewright-operator", "nodewright-customizations", "kai-scheduler", "prometheus-adapter",
]  # fmt: skip
TRIM = [
    *(f for c in DROPPED for f in ("--set", f"{c}:enabled=false")),
    "--set", "gpuoperator:driver.rdma.useHostMofed=false",
]  # fmt: skip
HARDENING = ("apps/v1", "DaemonSet", "gpu-operator", "nvidia-toolkit-hardening")
AGENTGATEWAY = {"agentgateway-system/agentgateway", "agentgateway-system/agentgateway-crds"}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chart_repository.ChartRepositories]:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


def shape(found: Inventory) -> set[Key]:
    """The objects a deploy defines, to compare two deploys: without Pods, ReplicaSets,
    ControllerRevisions and IPAddresses (names their controllers draw or allocate, and
    history an upgrade adds), and with the revision of Helm's release records dropped (a
    recovered release has more)."""
    out: set[Key] = set()
    for api, kind, ns, name in found:
        if kind in ("Pod", "ReplicaSet", "ControllerRevision", "IPAddress"):
            continue
        if kind == "Secret" and name.startswith("sh.helm.release.v1."):
            name = re.sub(r"\.v\d+$", "", name)
        out.add((api, kind, ns, name))
    return out


def _releases(cluster: Cluster) -> dict[str, str]:
    listed = cluster.helm("list", "-A", "--deployed", "--failed", "--pending", "-o", "json").stdout
    return {f"{r['namespace']}/{r['name']}": r["status"] for r in json.loads(listed)}


class ApiServer:
    """The tier's kube-apiserver process: killed, and started again as it was."""

    def __init__(self, cluster: Cluster) -> None:
        state = cluster.kubeconfig.parent
        self.pid_file = state / "pids" / "kube-apiserver.pid"
        self.log = state / "logs" / "kube-apiserver.log"
        self.cluster = cluster

    @property
    def pid(self) -> int:
        return int(self.pid_file.read_text().strip())

    def kill(self) -> list[str]:
        """SIGKILL it; the argv it ran with."""
        argv = Path(f"/proc/{self.pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        os.kill(self.pid, signal.SIGKILL)
        return [a.decode() for a in argv]

    def start(self, argv: list[str]) -> None:
        with self.log.open("a") as log:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.pid_file.write_text(f"{proc.pid}\n")
        self.cluster.wait_until(
            "the API server answers /readyz again",
            lambda: self.cluster.kubectl("get", "--raw", "/readyz", check=False).stdout == "ok",
            timeout=120,
        )


def _helm_upgrades(sid: int) -> list[tuple[int, str]]:
    """(pid, args) of each ``helm upgrade --install`` running in session ``sid``."""
    out = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,sid=,args="], capture_output=True, text=True, check=False
    ).stdout
    found = []
    for line in out.splitlines():
        pid, session, args = line.split(None, 2)
        if int(session) == sid and re.search(r"(^|/)helm upgrade --install ", args):
            found.append((int(pid), args))
    return found


def _run_with_fault(
    cluster: Cluster,
    repos: chart_repository.ChartRepositories,
    script: Path,
    log: Path,
    release: str,
    fault: Callable[[subprocess.Popen[bytes]], None],
    *args: str,
    env: dict[str, str] | None = None,
) -> int | None:
    """Run ``script`` and call ``fault`` while the helm of ``release`` ("namespace/name")
    runs (seen in the script's session; a poll of ``helm list --pending`` missed installs
    that take 3 s); wait for the script to end. Its exit status, or None when the run ended
    before that helm was seen (its output is in ``log``)."""
    namespace, name = release.split("/")
    full = dict(cluster.env)
    full.update(SCRIPT_ENV)
    full.update(repos.env())
    full.update(env or {})
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", str(script), *args], env=full, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            if any(
                f" --namespace {namespace} " in a and f" -- {name} " in a
                for _, a in _helm_upgrades(proc.pid)
            ):
                fault(proc)
                return proc.wait(timeout=600)
            time.sleep(0.05)
        return None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _kill_helm(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the helm upgrade the script (session ``proc.pid``) is running, nothing else."""
    for pid, _ in _helm_upgrades(proc.pid):
        os.kill(pid, signal.SIGKILL)


def _converged(cluster: Cluster, want: set[Key], timeout: float = 120) -> set[Key]:
    """Poll until the inventory's shape is ``want`` (what a step removes goes on after the
    script); the symmetric difference left at the end."""
    deadline = time.monotonic() + timeout
    while True:
        diff = shape(inventory(cluster)) ^ want
        if not diff or time.monotonic() > deadline:
            return diff
        time.sleep(3)


def test_faults_converge_in_one_rerun_and_switches_prune_exactly_what_is_left(
    cluster: Cluster, repos: chart_repository.ChartRepositories, tmp_path: Path
) -> None:
    flags = [*AKS_TOLERATION, *TRIM]
    for name in "abc":
        (tmp_path / name).mkdir()
    a = bundle(recipe(tmp_path / "a", *AKS_H100, "--intent", "inference"), tmp_path / "A", *flags)
    b = bundle(
        recipe(tmp_path / "b", *AKS_H100, "--intent", "inference",
               "--profile", "gpuStack=operator-managed"),
        tmp_path / "B", *flags,
    )  # fmt: skip
    c = bundle(recipe(tmp_path / "c", *AKS_H100, "--intent", "training"), tmp_path / "C", *flags)
    api = ApiServer(cluster)
    with modelled_cluster(cluster, model("aks-h100-install.yaml").nodes):
        state = ClusterState.read(cluster)
        empty = inventory(cluster)
        started = time.monotonic()
        try:
            # the reference: a clean deploy of A
            run = run_script(cluster, repos, a / "deploy.sh")
            assert run.returncode == 0, str(run)
            clean_a = shape(inventory(cluster))
            assert HARDENING in clean_a
            assert AGENTGATEWAY <= set(_releases(cluster))

            # B over A, the API server killed during the GPU Operator's upgrade and down
            # until the run ends: an INTERRUPTED line naming the API server, exit 1; the
            # switch is listed with the exact --prune command
            log = tmp_path / "killed-api.log"
            argv: list[str] = []

            def kill_api(proc: subprocess.Popen[bytes]) -> None:
                argv.extend(api.kill())
                proc.wait(timeout=300)

            try:
                rc = _run_with_fault(
                    cluster, repos, b / "deploy.sh", log, "gpu-operator/gpu-operator", kill_api,
                    env={"AICR_DEPLOY_TIMEOUT": "60"},
                )  # fmt: skip
            finally:
                if argv:
                    api.start(argv)
            out = log.read_text()
            print(f"API server killed: deploy.sh exit {rc}", *out.splitlines()[-6:], sep="\n  ")
            assert rc == 1, out[-4000:]
            assert "the API server does not answer" in out, out[-4000:]
            assert re.search(r"^INTERRUPTED at step \d{3}", out, re.M), out[-4000:]
            assert "switching bundles: the earlier bundle" in out, out[-4000:]
            assert f"{b / 'deploy.sh'} --prune" in out
            assert '"name":"nvidia-toolkit-hardening"' in out.split("switching bundles", 1)[1]
            run = run_script(cluster, repos, b / "deploy.sh")
            assert run.returncode == 0, str(run)
            # the DaemonSet B no longer contains is left, and still listed on this rerun
            assert "switching bundles" in run.stdout and "nvidia-toolkit-hardening" in run.stdout
            assert not (diff := _converged(cluster, clean_a)), sorted(diff)

            # --prune removes exactly what was left: the hardening DaemonSet
            run = run_script(cluster, repos, b / "deploy.sh", "--prune")
            assert run.returncode == 0, str(run)
            clean_b = clean_a - {HARDENING}
            assert not (diff := _converged(cluster, clean_b)), sorted(diff)

            # B again, the API server paused (SIGSTOP) for 30 s during the GPU Operator's
            # upgrade, longer than the run's time limit (20 s): the run must not exit 0 (the
            # defect: it did, with the cluster not deployed); one rerun converges
            log = tmp_path / "paused-api.log"

            def pause_api(proc: subprocess.Popen[bytes]) -> None:
                os.kill(api.pid, signal.SIGSTOP)
                try:
                    time.sleep(30)
                finally:
                    os.kill(api.pid, signal.SIGCONT)

            rc = _run_with_fault(
                cluster, repos, b / "deploy.sh", log, "gpu-operator/gpu-operator", pause_api,
                env={"AICR_DEPLOY_TIMEOUT": "20"},
            )  # fmt: skip
            out = log.read_text()
            print(f"API server paused: deploy.sh exit {rc}", *out.splitlines()[-6:], sep="\n  ")
            assert rc is not None and rc != 0, out[-4000:]
            assert re.search(
                r"^(TIMEOUT: no result within 20s|INTERRUPTED at step \d{3})", out, re.M
            ), out[-4000:]
            run = run_script(cluster, repos, b / "deploy.sh")
            assert run.returncode == 0, str(run)
            assert not (diff := _converged(cluster, clean_b)), sorted(diff)

            # C (training) --prune over B, helm killed during cert-manager's upgrade: the
            # agentgateway release is pruned; agentgateway-crds is kept, as its chart
            # templates CRDs that helm uninstall would delete; one rerun converges
            log = tmp_path / "killed-helm.log"
            rc = _run_with_fault(
                cluster, repos, c / "deploy.sh", log, "cert-manager/cert-manager", _kill_helm,
                "--prune",
            )  # fmt: skip
            out = log.read_text()
            print(f"helm killed: deploy.sh exit {rc}", *out.splitlines()[-6:], sep="\n  ")
            assert rc == 1, out[-4000:]
            assert re.search(r"^INTERRUPTED at step \d{3}: a command was killed", out, re.M), out[
                -4000:
            ]
            assert "pruning Helm release agentgateway-system/agentgateway\n" in out, out[-4000:]
            assert (
                "keeping Helm release agentgateway-system/agentgateway-crds: helm uninstall "
                "would delete the CRDs its chart templates" in out
            ), out[-4000:]
            run = run_script(cluster, repos, c / "deploy.sh", "--prune")
            assert run.returncode == 0, str(run)
            releases = _releases(cluster)
            assert set(releases.values()) == {"deployed"}, releases
            assert "agentgateway-system/agentgateway" not in releases, releases
            assert "agentgateway-system/agentgateway-crds" in releases, releases
            crds = cluster.names("customresourcedefinitions")
            assert {
                "agentgatewaybackends.agentgateway.dev",
                "gateways.gateway.networking.k8s.io",
            } <= crds

            # C's undeploy removes C's and names what the switch left; B's undeploy (B last
            # deployed the kept release and the Gateway API CRDs) removes the rest
            run = run_script(cluster, repos, c / "undeploy.sh", "--delete-crds")
            assert run.returncode == 0, str(run)
            assert "an earlier switch of bundles left these in place" in run.stdout, str(run)
            assert "release agentgateway-system agentgateway-crds" in run.stdout, str(run)
            run = run_script(cluster, repos, b / "undeploy.sh", "--delete-crds")
            assert run.returncode == 0, str(run)
            assert not any(settled(cluster, empty).values())
        finally:
            if not _api_ready(cluster):
                pytest.fail("the API server did not come back")
            swept = sweep(cluster, state)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")


def _api_ready(cluster: Cluster) -> bool:
    return cluster.kubectl("get", "--raw", "/readyz", check=False, timeout=30).stdout == "ok"
