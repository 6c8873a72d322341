"""CRD before CR, for real: the AKS bundle's network-operator step applies a NicClusterPolicy
(manifests/nic-cluster-policy-aks.yaml) after the network-operator chart, whose ``crds/``
directory holds the NicClusterPolicy CRD.

Shuffled (the custom resource first, its CRD not installed), the real API server refuses it
the way every user of a GitOps tool or a hand-made script has seen ("no matches for kind ...
ensure CRDs are installed first"). In the generated order the step runs ``wait_for_kind``
first: the test runs the bundle's own step runner (cut from its deploy.sh) while the CRD is
still absent, sees it poll API discovery, then installs the CRD (the vendored chart's, as helm
would) and sees the wait end and the same manifest accepted.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import time
from pathlib import Path

import yaml

from tests.cluster.chart_repository import CHARTS
from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TOLERATION,
    AKS_TRAINING,
    SCRIPT_ENV,
    ClusterState,
    bundle,
    recipe,
    sweep,
    wait_gone,
)

CRD_NAME = "nicclusterpolicies.mellanox.com"


def nic_cluster_policy_crd() -> dict[str, object]:
    """The NicClusterPolicy CRD from the vendored network-operator chart's ``crds/``."""
    with tarfile.open(
        fileobj=io.BytesIO((CHARTS / "network-operator-26.4.1.tgz").read_bytes())
    ) as tar:
        for member in tar.getmembers():
            if "/crds/" in member.name and member.name.endswith(".yaml"):
                handle = tar.extractfile(member)
                assert handle is not None
                for doc in yaml.safe_load_all(handle.read()):
                    if isinstance(doc, dict) and doc.get("metadata", {}).get("name") == CRD_NAME:
                        return doc
    raise AssertionError(f"{CRD_NAME} not in the vendored network-operator chart")


def _step_runner(deploy_sh: Path) -> str:
    """deploy.sh's header, the bundle's identity (the runner's marks read it) and its step
    runner, without its steps: the functions it runs."""
    text = deploy_sh.read_text(encoding="utf-8")
    head, _, rest = text.partition("STEPS=(")
    after_steps = rest.partition("\n")[2]
    start = after_steps.index("# ---- step runner")
    identity = after_steps[:start]
    runner = after_steps[start : after_steps.index("# ---- end of step runner")]
    return head + "STEPS=(004)\n" + identity + runner


def test_a_custom_resource_before_its_crd_is_refused_and_the_scripts_wait_prevents_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    bundle_dir = bundle(recipe(tmp_path, *AKS_TRAINING), tmp_path / "b", *AKS_TOLERATION)
    # the step's folder, numbered by the catalog's deployment order
    (step,) = bundle_dir.glob("[0-9][0-9][0-9]-network-operator")
    manifest = step / "manifests" / "nic-cluster-policy-aks.yaml"
    deploy = (bundle_dir / "deploy.sh").read_text(encoding="utf-8")
    # the generated order: chart, then the wait for the kind, then the manifest
    chart_at = deploy.index("-- network-operator network-operator")
    wait_at = deploy.index("wait_for_kind mellanox.com/v1alpha1 NicClusterPolicy")
    assert chart_at < wait_at < deploy.index(f"{step.name}/manifests/nic-cluster-policy-aks.yaml")
    before = ClusterState.read(cluster)
    assert CRD_NAME not in before.crds
    try:
        # shuffled: the custom resource before its CRD
        # (a fresh discovery cache: with one cached while an earlier test's CRD of this kind
        # existed, kubectl would POST and the server answer NotFound instead)
        cache = f"--cache-dir={tmp_path / 'kube-cache'}"
        refused = cluster.kubectl("apply", cache, "-f", str(manifest), check=False)
        assert refused.returncode != 0
        assert 'no matches for kind "NicClusterPolicy"' in refused.stderr, refused.stderr
        assert "ensure CRDs are installed first" in refused.stderr, refused.stderr

        # the script's order: wait_for_kind polls discovery until the CRD is Established
        driver = tmp_path / "wait-then-apply.sh"
        driver.write_text(
            _step_runner(bundle_dir / "deploy.sh")
            + "\nwait_for_kind mellanox.com/v1alpha1 NicClusterPolicy\n"
            + f"kubectl apply -f {manifest}\n",
            encoding="utf-8",
        )
        env = {
            **cluster.env,
            **SCRIPT_ENV,
            "AICR_DEPLOY_TIMEOUT": "120",
            "AICR_DEPLOY_RETRY_DELAY": "1",
        }
        proc = subprocess.Popen(
            ["bash", str(driver)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(4)
            assert proc.poll() is None, "wait_for_kind returned before the CRD existed"
            cluster.apply(nic_cluster_policy_crd(), server_side=True)
            out, err = proc.communicate(timeout=150)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, f"{out}\n{err}"
        assert "waiting for kind NicClusterPolicy (mellanox.com/v1alpha1) to be served" in err
        policy = cluster.get("nicclusterpolicies.mellanox.com", "nic-cluster-policy")
        assert policy is not None, out
    finally:
        cluster.kubectl(
            "delete", "nicclusterpolicies.mellanox.com", "--all", "--ignore-not-found", check=False
        )
        sweep(cluster, before)
        assert not any(wait_gone(cluster, before).values())
