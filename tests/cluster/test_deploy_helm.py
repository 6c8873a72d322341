"""The helm deployer for real: a catalog recipe's ``deploy.sh`` installs every step with the
real helm v4 CLI against the local v1.34 API server, ``undeploy.sh`` removes it all.

The nodes are kwok fakes modelled on the shipped captures (tests/data/live/cluster-models.yaml),
so ``helm --wait`` sees DaemonSets and Deployments scheduled, Running and Ready; Job pods
(hooks) Succeed. No container runs.

Charts come from ``tests/data/charts/archives`` (vendored, see tests/data/charts/PROVENANCE.md)
through the loopback stand-in for the upstream chart repositories (tests/cluster/chart_repository.py): the
generated scripts run unmodified, helm reaching ``charts.jetstack.io``, ``ghcr.io`` ... through
an HTTPS proxy that answers for those hosts only. The test asserts that every chart was
fetched from it and nothing else was asked for.

Bundles of the same charts collide on cluster-scoped objects, so these tests run one after
another in one module, and each undeploys and sweeps in a ``finally``.
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

# The keyed GPU taint the AKS and OKE capture models carry (AKS bundles refuse the wildcard).
GPU_TOLERATION = ["--accelerated-node-toleration", "nvidia.com/gpu=present:NoSchedule"]
# Admission webhooks served by a chart's own pods never answer under kwok (no container runs;
# the API server's call to the webhook Service fails TLS or times out), and a webhook with
# failurePolicy Fail then refuses every object it covers. Found for real: the Skyhook CR of
# nodewright-customizations is refused by the nodewright chart's mutating webhook ("failed
# calling webhook mutate-skyhook.nvidia.com"). The chart documents `webhook.enable` (values.yaml
# of nodewright-chart-v0.15.1 and of the v0.20.0 values; "true" will enable the webhook setup
# in the operator controller), so the bundle turns it off; nothing else is changed.
NO_WEBHOOKS = ["--set", "nodewright:webhook.enable=false"]
# The kgateway chart vendored as a stand-in for v2.0.0 (tests/data/charts/kgateway-v2.0.0-main,
# a main-branch tag of 2025-02) renders its GatewayParameters with `replicas: {{
# .Values.replicaCount }}`, a top-level key its values.yaml does not define (it has
# controller.replicaCount), so the real API server refused the release: "spec.kube.deployment.
# replicas in body must be of type integer: null". That is the stand-in tree's own template
# bug, not the bundle's: the inference cases give the key the template reads.
KGATEWAY_STAND_IN = ["--set", "kgateway:replicaCount=1"]


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chart_repository.ChartRepositories]:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


CASES: list[Any] = [
    pytest.param(
        ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "aks-h100-install.yaml",
        id="aks-h100-training-azure-managed",
    ),
    pytest.param(
        ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference",
         "--profile", "gpuStack=operator-managed"],
        [*GPU_TOLERATION, *NO_WEBHOOKS, *KGATEWAY_STAND_IN],
        "aks-h100-none.yaml",
        id="aks-h100-inference-operator-managed",
    ),
    pytest.param(
        ["--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "training"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "oke-gb200-active.yaml",
        id="oke-gb200-training-oci-managed",
    ),
    pytest.param(
        ["--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "inference",
         "--profile", "gpuStack=operator-managed"],
        [*GPU_TOLERATION, *NO_WEBHOOKS, *KGATEWAY_STAND_IN],
        "oke-gb200-absent.yaml",
        id="oke-gb200-inference-operator-managed",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("criteria", "flags", "snapshot"), CASES)
def test_deploy_sh_installs_every_step_and_undeploy_sh_removes_it_all(
    cluster: Cluster,
    repos: chart_repository.ChartRepositories,
    tmp_path: Path,
    criteria: list[str],
    flags: list[str],
    snapshot: str,
) -> None:
    bundle_dir = bundle(recipe(tmp_path, *criteria), tmp_path / "bundle", *flags)
    # every step with a chart must end as a deployed release (manifest-only steps have none)
    expected = {
        f"{r['namespace']}/{r['name']}"
        for r in releases(bundle_dir)
        if "helm upgrade --install" in (bundle_dir / r["path"] / "install.sh").read_text()
    }
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
            # every chart came from the loopback stand-in, and nothing else was asked for
            assert not repos.refused, repos.refused
            assert len([q for q in repos.requests if q.endswith(".tgz") or "/blobs/" in q]) >= len(
                expected
            )
            undeployed = run_script(cluster, repos, bundle_dir / "undeploy.sh")
            assert undeployed.returncode == 0, str(undeployed)
            left = wait_gone(cluster, before)
            assert not any(left.values()), f"undeploy.sh left behind: {left}"
        finally:
            swept = sweep(cluster, before)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
