"""A ``bundle --vendor-charts`` helm bundle deploys with no chart repository reachable
(issue 37 item 4): its ``deploy.sh`` installs every step from the bundle's own ``charts/``
archives on the real v1.34 API server, and ``undeploy.sh`` removes it all.

No loopback chart repository runs here (tests/cluster/chart_repository.py is not started),
the Helm cache, config and data homes are empty, and every proxy variable points at a
listener that records each connection and closes it at once: any attempt to fetch a chart
(or anything else) over the network fails, and is counted. The API server on 127.0.0.1 is
reached directly (Go never proxies a loopback address). The bundle is the AKS H100
training one, with the recipe, nodes and flags of the first case of test_deploy_helm.py, less
the charts no profile-owned step needs (kube-prometheus-stack, prometheus-adapter,
cert-manager, kai-scheduler, network-operator: that case deploys them from the stand-in
already) and the monitor whose CRD kube-prometheus-stack would bring (``verify`` of this
bundle finds nothing). Measured on the shared 2-core machine, the test's call: the whole
bundle 228 s; without kube-prometheus-stack, prometheus-adapter, kai-scheduler and
network-operator 180 s; without cert-manager too (this set) 77 s, the file 82 s.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TRAINING,
    ClusterState,
    bundle,
    recipe,
    releases,
    run_script,
    sweep,
    wait_gone,
)
from tests.cluster.livecap_support import model, modelled_cluster
from tests.cluster.test_deploy_helm import GPU_TOLERATION, NO_WEBHOOKS
from tests.conftest import TEST_DATA
from tests.dead_proxy import DeadProxy

ARCHIVES = TEST_DATA / "charts" / "archives"
LIGHTER = [
    "--set", "kube-prometheus-stack:enabled=false",
    "--set", "prometheus-adapter:enabled=false",
    "--set", "cert-manager:enabled=false",
    "--set", "kai-scheduler:enabled=false",
    "--set", "network-operator:enabled=false",
    "--set", "gpuoperator:driver.rdma.useHostMofed=false",
    # its monitor's CRD comes with kube-prometheus-stack (verify names it otherwise)
    "--set", "nvsentinel:podMonitor.enabled=false",
]  # fmt: skip


@pytest.fixture
def dead_proxy() -> Iterator[DeadProxy]:
    proxy = DeadProxy()
    try:
        yield proxy
    finally:
        proxy.close()


def test_the_dead_proxy_refuses_a_chart_fetch(
    cluster: Cluster, dead_proxy: DeadProxy, tmp_path: Path
) -> None:
    """The environment below really cuts the network: helm pulling a chart through it fails,
    and the attempt is counted."""
    env = {**cluster.env, **dead_proxy.env(tmp_path / "helm")}
    proc = subprocess.run(
        ["helm", "pull", "cert-manager", "--repo", "https://charts.jetstack.io", "--version",
         "v1.20.2", "-d", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode != 0, proc.stdout
    assert dead_proxy.connections >= 1, proc.stderr
    assert not list(tmp_path.glob("*.tgz"))


def test_vendored_bundle_deploys_and_undeploys_with_no_chart_repository(
    cluster: Cluster, dead_proxy: DeadProxy, tmp_path: Path
) -> None:
    bundle_dir = bundle(
        recipe(tmp_path, *AKS_TRAINING),
        tmp_path / "bundle",
        *GPU_TOLERATION,
        *NO_WEBHOOKS,
        *LIGHTER,
        "--vendor-charts",
        "--charts",
        str(ARCHIVES),
    )
    assert (bundle_dir / "provenance.yaml").is_file()
    expected = {
        f"{r['namespace']}/{r['name']}"
        for r in releases(bundle_dir)
        if re.search(
            r"(?m)^\s*helm upgrade --install ", (bundle_dir / r["path"] / "install.sh").read_text()
        )
    }
    env = dead_proxy.env(tmp_path / "helm")
    with modelled_cluster(cluster, model("aks-h100-install.yaml").nodes):
        before = ClusterState.read(cluster)
        started = time.monotonic()
        try:
            deployed = run_script(cluster, None, bundle_dir / "deploy.sh", env=env)
            assert deployed.returncode == 0, str(deployed)
            assert "bundle deployed" in deployed.stdout, str(deployed)
            during = ClusterState.read(cluster).added_since(before)
            print(f"deploy.sh: {deployed.seconds:.0f} s; added {sorted(during['releases'])}")
            assert during["releases"] == expected
            listed = json.loads(cluster.helm("list", "-A", "-o", "json").stdout)
            statuses = {f"{r['namespace']}/{r['name']}": r["status"] for r in listed}
            assert {statuses[r] for r in expected} == {"deployed"}, statuses
            # each release is the pinned chart, installed from its archive
            charts = yaml.safe_load((bundle_dir / "provenance.yaml").read_text())["charts"]
            pinned = {
                f"{c['chart']}-{v}"
                for c in charts
                for v in (c["version"], c["version"].lstrip("v"), "v" + c["version"].lstrip("v"))
            }
            installed = {r["chart"] for r in listed if f"{r['namespace']}/{r['name']}" in expected}
            assert installed <= pinned, installed - pinned
            # CRDs go only when asked (issue 32): this bundle made them all, the cluster is the tier's
            undeployed = run_script(
                cluster, None, bundle_dir / "undeploy.sh", "--delete-crds", env=env
            )
            assert undeployed.returncode == 0, str(undeployed)
            left = wait_gone(cluster, before)
            assert not any(left.values()), f"undeploy.sh left behind: {left}"
            # nothing tried the network: no connection ever reached the dead proxy
            assert dead_proxy.connections == 0
        finally:
            swept = sweep(cluster, before)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
