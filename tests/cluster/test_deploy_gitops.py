"""The GitOps deployers against the real API server: the Argo CD and Flux documents a bundle
generates are accepted by a server-side dry run and then a real server-side apply, and the
argocd-helm root chart installs with the real helm v4 CLI.

No Argo CD or Flux controller runs here: their CRDs are installed from the vendored upstream
schemas (tests/data/crds/PROVENANCE.txt: Application; HelmRelease, HelmRepository,
OCIRepository, Kustomization), so the server validates each object against the real schema
(types, required fields, enums, CEL rules) and stores it. Nothing reconciles them.

Scope: every document of the bundle whose kind is an Argo CD or Flux kind, and Namespaces.
The components' own manifests (NicClusterPolicy, Skyhook, DaemonSets) need the charts' CRDs
and are deployed for real by tests/cluster/test_deploy_helm.py; ``kustomization.yaml`` files
of kind ``kustomize.config.k8s.io`` Kustomization are build inputs for Flux's
kustomize-controller, not API objects, and are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TOLERATION,
    AKS_TRAINING,
    ClusterState,
    bundle,
    recipe,
    sweep,
    wait_gone,
)
from tests.cluster.test_deploy_crd_order import CRD_NAME, nic_cluster_policy_crd
from tests.conftest import TEST_DATA

CRDS = TEST_DATA / "crds"
GITOPS_GROUPS = ("argoproj.io", "toolkit.fluxcd.io")
VENDOR = ["--vendor-charts", "--charts", str(TEST_DATA / "charts" / "archives")]


@pytest.fixture(scope="module")
def gitops_crds(cluster: Cluster) -> Iterator[set[str]]:
    """The vendored Argo CD and Flux CRDs, applied server-side and Established; deleted after."""
    before = ClusterState.read(cluster)
    docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(CRDS.glob("*.yaml"))]
    names = {d["metadata"]["name"] for d in docs}
    try:
        cluster.apply(docs, server_side=True)
        for name in sorted(names):
            cluster.wait_established(name)
        yield names
    finally:
        cluster.kubectl(
            "delete", "crd", *sorted(names), "--ignore-not-found", "--wait=true", timeout=180
        )
        sweep(cluster, before)


def _release_argo_finalizers(cluster: Cluster) -> None:
    """Remove the ``resources-finalizer.argocd.argoproj.io`` finalizer from every Application,
    standing in for the Argo CD controller that would run it (none runs here): without it a
    deleted Application, and so its namespace, stays Terminating for ever."""
    if "applications.argoproj.io" not in cluster.names("crd"):
        return
    for app in cluster.list_objects("applications.argoproj.io", all_namespaces=True):
        meta = app["metadata"]
        if meta.get("finalizers"):
            cluster.kubectl(
                "patch", "applications.argoproj.io", meta["name"], "-n", meta["namespace"],
                "--type", "merge", "-p", '{"metadata":{"finalizers":null}}',
            )  # fmt: skip


def _documents(bundle_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(bundle_dir.rglob("*.yaml")):
        rel = str(path.relative_to(bundle_dir))
        if "/templates/" in f"/{rel}":
            continue  # Helm templates of local charts: rendered by Argo CD, not applied as is
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
                continue
            group = str(doc["apiVersion"]).split("/", 1)[0]
            if group.endswith(GITOPS_GROUPS) or (doc["apiVersion"], doc["kind"]) == (
                "v1",
                "Namespace",
            ):
                out.append((rel, doc))
    return out


@pytest.mark.parametrize(
    ("deployer", "extra", "kinds"),
    [
        ("argocd", ["--repo", "https://git.example.com/platform/aicr-bundle.git"], {"Application"}),
        (
            "flux",
            ["--repo", "oci://registry.example.com/platform/aicr-bundle"],
            {"HelmRelease", "HelmRepository", "OCIRepository", "Kustomization"},
        ),
    ],
)
def test_every_gitops_document_is_accepted_by_a_server_side_apply(
    cluster: Cluster,
    gitops_crds: set[str],
    tmp_path: Path,
    deployer: str,
    extra: list[str],
    kinds: set[str],
) -> None:
    bundle_dir = bundle(
        recipe(tmp_path, *AKS_TRAINING), tmp_path / "b", *AKS_TOLERATION, "-d", deployer, *extra
    )
    docs = _documents(bundle_dir)
    assert kinds <= {d["kind"] for _, d in docs}, sorted({d["kind"] for _, d in docs})
    before = ClusterState.read(cluster)
    try:
        # the namespaces the objects live in (Argo CD's / Flux's own, made by their install)
        for ns in sorted(
            {d["metadata"].get("namespace") for _, d in docs} - {None} - before.namespaces
        ):
            cluster.kubectl("create", "namespace", ns)
        refused = []
        for rel, doc in docs:
            dry = cluster.apply(doc, server_side=True, dry_run=True, check=False)
            if dry.returncode != 0:
                refused.append(
                    f"{rel} {doc['kind']}/{doc['metadata']['name']}: {dry.stderr.strip()}"
                )
        assert not refused, "the server refused:\n" + "\n".join(refused)
        cluster.apply([d for _, d in docs], server_side=True)
        for rel, doc in docs:
            meta = doc["metadata"]
            got = cluster.get(f"{doc['kind'].lower()}.{doc['apiVersion'].split('/')[0]}"
                              if "/" in doc["apiVersion"] else doc["kind"].lower(),
                              meta["name"], meta.get("namespace"))  # fmt: skip
            assert got is not None, f"{rel}: {doc['kind']}/{meta['name']} not stored"
            assert got["spec"] == _pruned_like(doc.get("spec"), got["spec"]), rel
    finally:
        _release_argo_finalizers(cluster)
        sweep(cluster, before)
        assert not any(wait_gone(cluster, before).values())


def _pruned_like(sent: Any, stored: Any) -> Any:
    """``sent`` with the defaults the server added taken from ``stored``: a stored object
    equals what was sent plus defaults, and no field sent was pruned (an undeclared field
    would be dropped silently by the server)."""
    if isinstance(sent, dict) and isinstance(stored, dict):
        missing = set(sent) - set(stored)
        assert not missing, f"pruned by the server: {sorted(missing)}"
        return {k: _pruned_like(sent[k], stored[k]) if k in sent else stored[k] for k in stored}
    if isinstance(sent, list) and isinstance(stored, list) and len(sent) == len(stored):
        return [_pruned_like(a, b) for a, b in zip(sent, stored, strict=True)]
    return sent if sent is not None else stored


def test_the_argocd_helm_root_chart_installs_with_helm(
    cluster: Cluster, gitops_crds: set[str], tmp_path: Path
) -> None:
    """The README's ``helm upgrade --install`` of the root chart, for real; before the fix it
    failed on the first raw custom resource whose CRD an Application brings ("no matches for
    kind NicClusterPolicy"). Now that resource waits for its kind: the install succeeds and
    its notes name it, and once the CRD is there an upgrade renders and applies it."""
    bundle_dir = bundle(
        recipe(tmp_path, *AKS_TRAINING), tmp_path / "b", *AKS_TOLERATION, "-d", "argocd-helm"
    )
    before = ClusterState.read(cluster)
    try:
        cluster.helm(
            "install", "aicr-stack", str(bundle_dir), "--namespace", "argocd", "--create-namespace",
            "--wait", "--timeout", "120s", timeout=180,
        )  # fmt: skip
        apps = cluster.list_objects("applications.argoproj.io", all_namespaces=True)
        assert apps, "the root chart created no Application"
        assert {a["metadata"]["namespace"] for a in apps} == {"argocd"}
        status = json.loads(
            cluster.helm("status", "aicr-stack", "-n", "argocd", "-o", "json").stdout
        )
        assert status["info"]["status"] == "deployed"
        # the NicClusterPolicy waits for its CRD (an Application installs it; none syncs here)
        assert (
            "nic-cluster-policy-aks.yaml (mellanox.com/v1alpha1/NicClusterPolicy"
            in status["info"]["notes"]
        )
        cluster.apply(nic_cluster_policy_crd(), server_side=True)
        cluster.wait_established(CRD_NAME)
        cluster.helm(
            "upgrade", "aicr-stack", str(bundle_dir), "--namespace", "argocd", "--wait", timeout=180
        )
        assert cluster.get("nicclusterpolicies.mellanox.com", "nic-cluster-policy") is not None
        _release_argo_finalizers(cluster)
        cluster.helm("uninstall", "aicr-stack", "-n", "argocd", "--wait", timeout=180)
        assert not cluster.list_objects("applications.argoproj.io", all_namespaces=True)
    finally:
        _release_argo_finalizers(cluster)
        sweep(cluster, before)
        assert not any(wait_gone(cluster, before).values())


def test_a_vendored_argocd_helm_root_chart_installs_with_helm(
    cluster: Cluster, gitops_crds: set[str], tmp_path: Path
) -> None:
    """``--vendor-charts`` with argocd-helm: the real helm v4 CLI installs the root chart from
    the bundle directory that also holds ``charts/*.tgz`` (its ``.helmignore`` keeps them from
    being loaded as subcharts, whose names the root chart's values schema would refuse), and
    the stored Applications install each chart from the OCI repository they are pushed to."""
    oci = "oci://registry.example.com/platform/aicr-bundle"
    bundle_dir = bundle(
        recipe(tmp_path, *AKS_TRAINING), tmp_path / "b", *AKS_TOLERATION, "-d", "argocd-helm",
        "--repo", oci, *VENDOR,
    )  # fmt: skip
    pinned = yaml.safe_load((bundle_dir / "provenance.yaml").read_text())["charts"]
    before = ClusterState.read(cluster)
    try:
        cluster.helm(
            "install", "aicr-stack", str(bundle_dir), "--namespace", "argocd", "--create-namespace",
            "--wait", "--timeout", "120s", timeout=180,
        )  # fmt: skip
        apps = {
            a["metadata"]["name"]: a
            for a in cluster.list_objects("applications.argoproj.io", all_namespaces=True)
        }
        for c in pinned:
            source = apps[c["component"]]["spec"]["source"]
            assert (source["repoURL"], source["chart"]) == (
                oci[len("oci://") :] + "/charts",
                c["chart"],
            ), c["component"]
        _release_argo_finalizers(cluster)
        cluster.helm("uninstall", "aicr-stack", "-n", "argocd", "--wait", timeout=180)
    finally:
        _release_argo_finalizers(cluster)
        sweep(cluster, before)
        assert not any(wait_gone(cluster, before).values())
