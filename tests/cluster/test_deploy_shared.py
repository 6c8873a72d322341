"""A bundle on a cluster it shares with another team (issue 32): deploy.sh and undeploy.sh
touch only what the bundle created, and an interrupted deploy converges on a rerun.

Before anything runs, "another team" owns: CRDs the bundle's charts also carry
(servicemonitors/prometheusrules.monitoring.coreos.com, NFD's nodefeaturerules, the GPU
Operator's nvidiadrivers.nvidia.com), one custom resource in each; a namespace with their
ConfigMap; the namespace gpu-operator with their ConfigMap and a DaemonSet named like the
bundle's nvidia-toolkit-hardening; and a Helm release named gpu-operator in their own namespace.
An inventory of the API (every listable resource, all namespaces: apiVersion, kind, namespace,
name, uid) is taken before; after the bundle's undeploy it must be the same, and each of the
team's objects keeps its resourceVersion (nothing of theirs was changed).

One deploy is shared by the cases (cluster time is the CI budget): undeploy of the bundle
never deployed, deploy refused by their DaemonSet, deploy SIGKILLed during a helm install and
rerun, undeploy keeping the CRDs, undeploy --delete-crds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import chart_repository
from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TOLERATION,
    AKS_TRAINING,
    SCRIPT_ENV,
    ClusterState,
    Key,
    bundle,
    changes,
    inventory,
    kill_session,
    recipe,
    run_script,
    settled,
    sweep,
)
from tests.cluster.livecap_support import model, modelled_cluster

# The charts that hold what the other team also runs (NFD's, the monitoring and nvidia.com
# CRDs, the hardening DaemonSet) and kai-scheduler (its chart makes custom resources Helm
# keeps on uninstall); the rest of the leaf is dropped to keep the tier in its time budget.
# nvidia-dra-driver-gpu and nvsentinel stay: the azure-managed profile owns them. The team
# runs its own Prometheus operator: a bundle with prometheus-operator-crds (its chart templates
# the CRDs the team has) is refused before any change; the deployed one drops it, as its
# users would, and its monitors then live in the team's CRDs.
DROPPED = [
    "kube-prometheus-stack", "k8s-ephemeral-storage-metrics", "network-operator",
    "nodewright-operator", "nodewright-customizations", "prometheus-adapter",
]  # fmt: skip
TRIM_KEEPING_CRDS = [
    *(f for c in DROPPED for f in ("--set", f"{c}:enabled=false")),
    "--set", "gpuoperator:driver.rdma.useHostMofed=false",
]  # fmt: skip
TRIM = [*TRIM_KEEPING_CRDS, "--set", "prometheus-operator-crds:enabled=false"]
TEAM = "team-a"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chart_repository.ChartRepositories]:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


def _crd(plural: str, group: str, kind: str, scope: str = "Namespaced") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}", "labels": {"team": TEAM}},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1" if group != "nfd.k8s-sigs.io" else "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }  # fmt: skip


THEIR_CRDS = [
    _crd("servicemonitors", "monitoring.coreos.com", "ServiceMonitor"),
    _crd("prometheusrules", "monitoring.coreos.com", "PrometheusRule"),
    _crd("podmonitors", "monitoring.coreos.com", "PodMonitor"),
    _crd("nodefeaturerules", "nfd.k8s-sigs.io", "NodeFeatureRule", "Cluster"),
    _crd("nvidiadrivers", "nvidia.com", "NVIDIADriver", "Cluster"),
]
THEIR_CRS = [
    {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
     "metadata": {"name": "theirs", "namespace": TEAM}, "spec": {"endpoints": []}},
    {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
     "metadata": {"name": "theirs", "namespace": TEAM}, "spec": {"groups": []}},
    {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule",
     "metadata": {"name": "theirs"}, "spec": {"rules": []}},
    {"apiVersion": "nvidia.com/v1", "kind": "NVIDIADriver",
     "metadata": {"name": "theirs"}, "spec": {"driverType": "gpu"}},
]  # fmt: skip
THEIR_DAEMONSET = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "nvidia-toolkit-hardening", "namespace": "gpu-operator"},
    "spec": {
        "selector": {"matchLabels": {"app": "theirs"}},
        "template": {
            "metadata": {"labels": {"app": "theirs"}},
            "spec": {"nodeSelector": {"team": "none"}, "containers": [{"name": "c", "image": "busybox"}]},
        },
    },
}  # fmt: skip


def _their_objects(cluster: Cluster, tmp: Path) -> None:
    """What the other team runs before the bundle comes."""
    cluster.apply(THEIR_CRDS)
    for crd in THEIR_CRDS:
        cluster.wait_established(crd["metadata"]["name"])
    for ns in (TEAM, "gpu-operator"):
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        cluster.apply(
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "theirs", "namespace": ns}, "data": {"keep": "me"}}
        )  # fmt: skip
    cluster.wait_until(
        "their CR kinds served", lambda: cluster.apply(THEIR_CRS, check=False).returncode == 0
    )
    cluster.apply(THEIR_DAEMONSET)
    chart = tmp / "their-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: theirs\nversion: 1.0.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: their-release\ndata:\n  a: b\n"
    )
    cluster.helm("install", "--namespace", TEAM, "gpu-operator", str(chart))


def _remove_their_objects(cluster: Cluster) -> None:
    cluster.helm(
        "uninstall", "--namespace", TEAM, "--ignore-not-found", "gpu-operator", check=False
    )
    for doc in [THEIR_DAEMONSET, *THEIR_CRS]:
        cluster.kubectl(
            "delete", "--ignore-not-found", "-f", "-", input_text=json.dumps(doc), check=False
        )
    for ns in (TEAM, "gpu-operator"):
        cluster.kubectl(
            "delete", "namespace", ns, "--ignore-not-found", "--wait=true", check=False, timeout=180
        )
    for crd in THEIR_CRDS:
        cluster.kubectl("delete", "crd", crd["metadata"]["name"], "--ignore-not-found", check=False)


def _theirs(key: Key) -> bool:
    api, kind, ns, name = key
    return (
        ns == TEAM
        or name in ("theirs", "their-release")
        or (
            kind == "CustomResourceDefinition"
            and name in {c["metadata"]["name"] for c in THEIR_CRDS}
        )
        or (kind == "Namespace" and name in (TEAM, "gpu-operator"))
    )


def _kill_during_helm(
    cluster: Cluster, repos: chart_repository.ChartRepositories, script: Path, log: Path
) -> str:
    """Start deploy.sh and SIGKILL it (its whole process group, helm included) once a
    release is pending; the release killed, or "" when the run ended first (its output in
    ``log``)."""
    env = dict(cluster.env)
    env.update(SCRIPT_ENV)
    env.update(repos.env())
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", str(script)], env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            listed = cluster.helm("list", "-A", "--pending", "-o", "json", check=False).stdout
            pending = [r for r in json.loads(listed or "[]") if r["namespace"] != TEAM]
            # a release after the first, so the killed run has done a step before it
            if pending and pending[0]["name"] != "nfd":
                kill_session(proc.pid)
                proc.wait(timeout=30)
                return f"{pending[0]['namespace']}/{pending[0]['name']}"
            time.sleep(0.3)
        return ""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_the_bundle_touches_only_what_it_created_and_a_killed_deploy_converges(
    cluster: Cluster, repos: chart_repository.ChartRepositories, tmp_path: Path
) -> None:
    leaf = recipe(tmp_path, *AKS_TRAINING)
    bundle_dir = bundle(leaf, tmp_path / "bundle", *AKS_TOLERATION, *TRIM)
    deploy, undeploy = bundle_dir / "deploy.sh", bundle_dir / "undeploy.sh"
    with_crds = bundle(leaf, tmp_path / "bundle-crds", *AKS_TOLERATION, *TRIM_KEEPING_CRDS)
    with modelled_cluster(cluster, model("aks-h100-install.yaml").nodes):
        state = ClusterState.read(cluster)
        started = time.monotonic()
        try:
            _their_objects(cluster, tmp_path)
            before = inventory(cluster)

            # a bundle never deployed: its undeploy (even --delete-crds) changes nothing
            run = run_script(cluster, repos, undeploy, "--delete-crds")
            assert run.returncode == 0, str(run)
            assert not any(changes(before, inventory(cluster), _theirs).values())

            # the chart prometheus-operator-crds templates CRDs they have: refused with one
            # line each (and their DaemonSet) before any step, where Helm refused only at
            # its step, after the earlier steps had run
            run = run_script(cluster, repos, with_crds / "deploy.sh")
            assert run.returncode == 1, str(run)
            refused = sorted(ln for ln in run.stderr.splitlines() if ln.startswith("REFUSED: "))
            assert [ln.split(" exists and is not ")[0] for ln in refused] == [
                "REFUSED: CustomResourceDefinition/podmonitors.monitoring.coreos.com",
                "REFUSED: CustomResourceDefinition/prometheusrules.monitoring.coreos.com",
                "REFUSED: CustomResourceDefinition/servicemonitors.monitoring.coreos.com",
                "REFUSED: DaemonSet/gpu-operator/nvidia-toolkit-hardening",
            ], str(run)
            assert all(
                "not Helm release monitoring/prometheus-operator-crds's" in ln for ln in refused[:3]
            ), refused
            assert "deploy.sh: nothing was changed" in run.stderr, str(run)
            assert not any(changes(before, inventory(cluster), _theirs).values())

            # their same-named DaemonSet: deploy refuses it, with one line, before any change
            run = run_script(cluster, repos, deploy)
            assert run.returncode == 1, str(run)
            refused = [ln for ln in run.stderr.splitlines() if ln.startswith("REFUSED: ")]
            assert len(refused) == 1, str(run)
            assert refused[0].startswith(
                "REFUSED: DaemonSet/gpu-operator/nvidia-toolkit-hardening exists and is not ours"
            )
            assert "--adopt DaemonSet/gpu-operator/nvidia-toolkit-hardening" in refused[0]
            assert not any(changes(before, inventory(cluster), _theirs).values())

            # they move it away; a deploy killed during a helm install, then rerun, converges
            cluster.kubectl("delete", "daemonset", "-n", "gpu-operator", "nvidia-toolkit-hardening")
            before = inventory(cluster)
            log = tmp_path / "killed-deploy.log"
            killed = _kill_during_helm(cluster, repos, deploy, log)
            print(f"killed deploy.sh while {killed or 'nothing'} was pending")
            assert killed, (
                f"deploy.sh ended before a helm install was caught pending:\n{log.read_text()[-4000:]}"
            )
            rerun = run_script(cluster, repos, deploy)
            assert rerun.returncode == 0, str(rerun)
            assert f"recovering Helm release {killed}" in rerun.stdout, str(rerun)
            statuses = {
                f"{r['namespace']}/{r['name']}": r["status"]
                for r in json.loads(cluster.helm("list", "-A", "-o", "json").stdout)
            }
            assert set(statuses.values()) == {"deployed"}, statuses
            during = changes(before, inventory(cluster), _theirs)
            assert not during["gone"] and not during["replaced"], during
            assert not during["theirs modified"], during
            # their namespace was used as it is: not relabelled
            ns = cluster.get("namespace", "gpu-operator")
            assert ns is not None and "aicr-tui/bundle" not in ns["metadata"].get("labels", {})

            # undeploy: CRDs stay by default, listed with what is in them
            run = run_script(cluster, repos, undeploy)
            assert run.returncode == 0, str(run)
            assert "keeping CRD " in run.stdout and "--delete-crds" in run.stdout, str(run)
            assert "keeping namespace gpu-operator: this bundle did not create it" in run.stdout
            assert cluster.get("configmap", "their-release", TEAM) is not None
            left = changes(before, inventory(cluster), _theirs)
            assert not left["gone"] and not left["theirs modified"], left
            assert any(k[1] == "CustomResourceDefinition" for k in left["added"]), left

            # --delete-crds: only the CRDs the bundle created go; then nothing is left
            run = run_script(cluster, repos, undeploy, "--delete-crds")
            assert run.returncode == 0, str(run)
            assert not any(settled(cluster, before, _theirs).values())
        finally:
            swept = sweep(cluster, state)
            _remove_their_objects(cluster)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
