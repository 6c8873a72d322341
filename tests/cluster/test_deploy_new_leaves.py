"""The leaves issue 33 added, deployed for real: an AKS A100 training bundle and an OKE GB200
Ubuntu inference bundle (helm deployer), ``deploy.sh`` against the local v1.34 API server with
every chart from the loopback stand-in for the upstream repositories, then ``undeploy.sh``.

The inference leaf is the one that installs the charts issue 33 brought in, so each is fetched
and installed for real: agentgateway-crds and agentgateway v1.3.1 from the OCI repository
``oci://cr.agentgateway.dev/charts``, prometheus-operator-crds 28.0.1 and
k8s-ephemeral-storage-metrics 1.19.2 from their classic repositories (archives in
tests/data/charts/archives, provenance in tests/data/charts/PROVENANCE.md).

The kwok nodes are the shipped capture models (tests/data/live/cluster-models.yaml): no A100
or GB200 Ubuntu capture is shipped, so the AKS bundle runs on the AKS H100 pool model and the
OKE bundle on the OKE GB200 model whose driver add-on matches the leaf's default gpuStack
(``oci-managed``). Scheduling and readiness under kwok do not depend on the GPU model.
Like tests/cluster/test_deploy_helm.py, these bundles share cluster-scoped objects, so they run
one after another and each undeploys and sweeps in a ``finally``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import chart_repository
from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    ClusterState,
    bundle,
    recipe,
    releases,
    run_script,
    sweep,
    wait_gone,
)
from tests.cluster.livecap_support import model, modelled_cluster

GPU_TOLERATION = ["--accelerated-node-toleration", "nvidia.com/gpu=present:NoSchedule"]
# The nodewright chart's admission webhook is served by its own pod, which never runs under
# kwok (see NO_WEBHOOKS in test_deploy_helm.py); the chart documents webhook.enable.
NO_WEBHOOKS = ["--set", "nodewright:webhook.enable=false"]

CASES: list[Any] = [
    pytest.param(
        ["--service", "aks", "--accelerator", "a100", "--os", "ubuntu", "--intent", "training"],
        "aks-h100-install.yaml",
        {"gpu-operator", "network-operator", "prometheus-operator-crds",
         "k8s-ephemeral-storage-metrics"},
        set(),
        id="aks-a100-ubuntu-training",
    ),
    pytest.param(
        ["--service", "oke", "--accelerator", "gb200", "--os", "ubuntu", "--intent", "inference"],
        "oke-gb200-active.yaml",
        {"agentgateway-crds", "agentgateway", "prometheus-operator-crds",
         "k8s-ephemeral-storage-metrics", "gpu-operator"},
        {"cr.agentgateway.dev"},
        id="oke-gb200-ubuntu-inference",
    ),
]  # fmt: skip


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chart_repository.ChartRepositories]:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


def _chart_steps(bundle_dir: Path) -> dict[str, str]:
    """component name -> "namespace/release" of every step whose install.sh installs a chart.

    A step installs a chart when its body has a ``helm upgrade --install`` command line; the
    runner every install.sh carries names that command in its comments too, so a substring
    test counted manifest-only steps (nodewright-customizations) as releases.
    """
    return {
        r["name"]: f"{r['namespace']}/{r['name']}"
        for r in releases(bundle_dir)
        if any(
            line.startswith("helm upgrade --install ")
            for line in (bundle_dir / r["path"] / "install.sh").read_text().splitlines()
        )
    }


@pytest.mark.parametrize(("criteria", "snapshot", "components", "oci_hosts"), CASES)
def test_new_leaf_deploys_every_chart_and_undeploys(
    cluster: Cluster,
    repos: chart_repository.ChartRepositories,
    tmp_path: Path,
    criteria: list[str],
    snapshot: str,
    components: set[str],
    oci_hosts: set[str],
) -> None:
    bundle_dir = bundle(
        recipe(tmp_path, *criteria), tmp_path / "bundle", *GPU_TOLERATION, *NO_WEBHOOKS
    )
    steps = _chart_steps(bundle_dir)
    expected = set(steps.values())
    # the bundle carries the components issue 33 added to this leaf (each as a chart step)
    assert components <= set(steps), sorted(steps)
    with modelled_cluster(cluster, model(snapshot).nodes):
        before = ClusterState.read(cluster)
        started = time.monotonic()
        try:
            repos.requests.clear()
            deployed = run_script(cluster, repos, bundle_dir / "deploy.sh")
            assert deployed.returncode == 0, str(deployed)
            assert "bundle deployed" in deployed.stdout, str(deployed)
            during = ClusterState.read(cluster).added_since(before)
            print(f"deploy.sh: {deployed.seconds:.0f} s; added {sorted(during['releases'])}")
            assert during["releases"] == expected
            statuses = {
                f"{r['namespace']}/{r['name']}": r["status"]
                for r in json.loads(cluster.helm("list", "-A", "-o", "json").stdout)
            }
            assert {statuses[r] for r in expected} == {"deployed"}, statuses
            # every chart came from the loopback stand-in (OCI ones through its /v2/ API), and
            # nothing else was asked for
            assert not repos.refused, repos.refused
            fetched = [q for q in repos.requests if q.endswith(".tgz") or "/blobs/" in q]
            assert len(fetched) >= len(expected), repos.requests
            for host in oci_hosts:
                assert any(q.startswith(f"{host}/v2/") and "/blobs/" in q for q in fetched), (
                    repos.requests
                )
            # CRDs go only when asked (issue 32): this bundle made them all, the cluster is the tier's
            undeployed = run_script(cluster, repos, bundle_dir / "undeploy.sh", "--delete-crds")
            assert undeployed.returncode == 0, str(undeployed)
            print(f"undeploy.sh: {undeployed.seconds:.0f} s")
            left = wait_gone(cluster, before)
            assert not any(left.values()), f"undeploy.sh left behind: {left}"
        finally:
            swept = sweep(cluster, before)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
