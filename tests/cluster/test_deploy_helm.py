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
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import chart_repository
from tests.cluster import livevalid_support as S
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


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chart_repository.ChartRepositories]:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


CASES: list[Any] = [
    pytest.param(
        ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "aks-h100-install.yaml",
        "monitoring",
        id="aks-h100-training-azure-managed",
    ),
    pytest.param(
        ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference",
         "--profile", "gpuStack=operator-managed"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "aks-h100-none.yaml",
        None,
        id="aks-h100-inference-operator-managed",
    ),
    pytest.param(
        ["--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "training"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "oke-gb200-active.yaml",
        "gpu-operator",
        id="oke-gb200-training-oci-managed",
    ),
    pytest.param(
        ["--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "inference",
         "--profile", "gpuStack=operator-managed"],
        [*GPU_TOLERATION, *NO_WEBHOOKS],
        "oke-gb200-absent.yaml",
        None,
        id="oke-gb200-inference-operator-managed",
    ),
]  # fmt: skip


def _validate_the_deployment(
    cluster: Cluster, bundle_dir: Path, snapshot: str, tmp_path: Path
) -> None:
    """``aicr-tui validate --phase deployment`` of the bundle's own recipe against what
    deploy.sh installed: the real charts' objects, read from the API server; the GPU probe
    is withheld (kwok runs no nvidia-smi). What the run creates is gone afterwards (the
    caller's ``wait_gone`` compares the API with the state before deploy.sh).

    Found on the real server: the catalog's expected resources include what no chart
    renders, the GPU Operator's operand DaemonSets (device plugin, GFD, DCGM exporter,
    validator), which the operator creates from its ClusterPolicy only when its controller
    runs; under kwok it never does, and DaemonSets whose nodeSelector needs a label only
    NFD/GFD would put on a GPU node schedule on no node (ready 0/0). expected-resources must
    therefore FAIL, naming each of those with its reason, and never pass; what passes
    (operator-health from the operator's real pod, gpu-operator-version from its real
    Deployment) says what it read."""
    report = tmp_path / "deployment.json"
    proc = S.validate(
        cluster, "-r", str(bundle_dir / "recipe.yaml"), "-s", str(S.SAMPLES / "snapshots" / snapshot),
        "--phase", "deployment", "--skip-check", "check-nvidia-smi", "-o", str(report),
    )  # fmt: skip
    assert report.is_file(), proc.stderr
    tests = {t["name"]: t for t in S.ctrf(report)["results"]["tests"]}
    print("validate:", {name: (t["status"], t.get("message", "")) for name, t in tests.items()})
    assert proc.returncode == 8, proc.stderr + proc.stdout  # a check failed
    er = tests["expected-resources"]
    assert er["status"] == "failed", er
    head, _, listed = er["message"].partition(": ")
    unhealthy = listed.split("; ")
    assert head.endswith("expected resources unhealthy") and head.startswith(
        f"{len(unhealthy)} of "
    )
    operands = {"nvidia-device-plugin-daemonset", "gpu-feature-discovery", "nvidia-dcgm-exporter",
                "nvidia-operator-validator"}  # fmt: skip
    for entry in unhealthy:
        kind_and_name, _, reason = entry.partition(": ")
        name = kind_and_name.rsplit("/", 1)[-1]
        if reason == "not found":
            assert name in operands, entry  # made by the operator at runtime, never by a chart
            kind, ref = kind_and_name.split(" ", 1)
            namespace = ref.split("/", 1)[0]
            assert cluster.get(kind.lower(), name, namespace) is None, entry
        else:
            assert reason == "not ready (ready 0/0, available 0)", entry  # scheduled on no node
    assert tests["operator-health"]["status"] == "passed"
    assert "running" in tests["operator-health"]["message"]
    assert all(t.get("message") for t in tests.values() if t["status"] == "passed"), tests


def _users_namespace(cluster: Cluster, name: str) -> None:
    """A namespace that exists before the bundle, holding an object of its owner's."""
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "owners-own", "namespace": name},
            "data": {"keep": "me"},
        }
    )


@pytest.mark.parametrize(("criteria", "flags", "snapshot", "existing"), CASES)
def test_deploy_sh_installs_every_step_and_undeploy_sh_removes_it_all(
    cluster: Cluster,
    repos: chart_repository.ChartRepositories,
    tmp_path: Path,
    criteria: list[str],
    flags: list[str],
    snapshot: str,
    existing: str | None,
) -> None:
    """``existing``: a namespace of the bundle's that was there before deploy.sh, with its
    owner's ConfigMap; deploy.sh installs into it, undeploy.sh removes the releases from it
    and keeps it (it lacks the ``app.kubernetes.io/created-by=aicr-tui`` label the bundle
    gives the namespaces it makes), the owner's object untouched."""
    bundle_dir = bundle(recipe(tmp_path, *criteria), tmp_path / "bundle", *flags)
    # every step with a chart must end as a deployed release (manifest-only steps have none)
    expected = {
        f"{r['namespace']}/{r['name']}"
        for r in releases(bundle_dir)
        if re.search(
            r"(?m)^\s*helm upgrade --install ", (bundle_dir / r["path"] / "install.sh").read_text()
        )
    }
    with modelled_cluster(cluster, model(snapshot).nodes):
        if existing:
            _users_namespace(cluster, existing)
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
            _validate_the_deployment(cluster, bundle_dir, snapshot, tmp_path)
            # CRDs stay unless asked for (issue 32): the bundle's own go with --delete-crds
            undeployed = run_script(cluster, repos, bundle_dir / "undeploy.sh", "--delete-crds")
            assert undeployed.returncode == 0, str(undeployed)
            left = wait_gone(cluster, before)
            assert not any(left.values()), f"undeploy.sh left behind: {left}"
            if existing:
                assert f"keeping namespace {existing}: this bundle did not create it" in (
                    undeployed.stdout
                ), str(undeployed)
                kept = cluster.get("configmap", "owners-own", existing)
                assert kept is not None and kept["data"] == {"keep": "me"}
                ns = cluster.get("namespace", existing)
                assert ns is not None and ns.get("status", {}).get("phase") == "Active"
        finally:
            swept = sweep(cluster, before)
            if existing:
                cluster.kubectl(
                    "delete", "namespace", existing, "--ignore-not-found", "--wait=true"
                )
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
