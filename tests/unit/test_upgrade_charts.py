"""The upgrade reasons from real chart versions, rendered by the Helm engine.

Sources (tests/data/upstream_charts, provenance in its README and each PROVENANCE.txt):

- ``nvidia-dra-driver-gpu`` v0.4.1 (newest tag) and 0.5.0-dev (main): a real pair of
  published chart versions, unedited;
- ``prometheus-adapter`` 5.3.0 and ``grafana`` 12.3.0 (the subchart vendored inside
  kube-prometheus-stack 84.4.0), rendered with two sets of values each: the chart is real,
  the change is in the values a user upgrades with;
- derived copies of the 0.5.0-dev tree, each with ONE stated change to its ``crds/``, made
  in a temporary directory by :func:`derived` (the vendored tree is never edited). The one
  that drops ``spec.numNodes`` applies the removal the CRD's own description announces
  ("The numNodes parameter is deprecated and will be removed in the next API version"); the
  stored-version and conversion edits are of the kind upstream CRDs make, not taken from a
  published version. For a served version removed, the derived copy is the OLD side (its
  CRD also serves a v1alpha1) and the real 0.5.0-dev tree the new one;
- cert-manager v1.20.2 (its templated CRDs, with ``crds.keep`` on and off).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.yamlio import load_yaml_plain
from aicr_tui.core.verify import upgrade as u
from aicr_tui.core.verify import upgrade_verdicts as uv
from aicr_tui.core.verify.analysis import Verifier
from aicr_tui.core.verify.model import VerifyComponent
from tests.verify.matrix import UPSTREAM_CHARTS

pytest.importorskip("helm_python")

ROOT = Path(__file__).resolve().parents[2]
DRA = "nvidia-dra-driver-gpu"
DRA_NEW = UPSTREAM_CHARTS / f"{DRA}-0.5.0-dev"
DRA_VALUES: dict[str, Any] = load_yaml_plain(
    (ROOT / "aicr_tui/recipes/components/nvidia-dra-driver-gpu/values.yaml").read_text(), "values"
)
CRD_FILE = "crds/resource.nvidia.com_computedomains.yaml"


def comp(
    version: str,
    values: dict[str, Any] | None = None,
    *,
    name: str = DRA,
    chart: str = DRA,
    namespace: str = "nvidia-dra-driver",
) -> VerifyComponent:
    return VerifyComponent(
        name=name,
        folder=f"001-{name}",
        namespace=namespace,
        chart=chart,
        source="https://helm.ngc.nvidia.com/nvidia",
        version=version,
        values=copy.deepcopy(DRA_VALUES if values is None else values),
        manifests={},
    )


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier([UPSTREAM_CHARTS])


def derived(base: Path, version: str, edit: tuple[str, str, str]) -> Verifier:
    """A copy of the 0.5.0-dev tree as chart version ``version`` with one text edit
    (file, old, new) applied; the edit must match."""
    target = base / f"{DRA}-{version}"
    shutil.copytree(DRA_NEW, target)
    chart_yaml = target / "Chart.yaml"
    chart_yaml.write_text(
        chart_yaml.read_text().replace('version: "0.5.0-dev"', f'version: "{version}"')
    )
    path, old, new = edit
    text = (target / path).read_text()
    assert text.count(old) >= 1, f"the edit does not apply to {path}"
    (target / path).write_text(text.replace(old, new))
    return Verifier([base, UPSTREAM_CHARTS])


def reasons(
    verifier: Verifier, old: VerifyComponent, new: VerifyComponent, **kw: str
) -> list[uv.Reason]:
    a = u.rendered_side(old, verifier)
    b = u.rendered_side(new, verifier, **kw)
    assert not a.unknown and not b.unknown, (a.unknown, b.unknown)
    assert a.objects and b.objects
    return u.compare_component(a, b)


def kinds(got: list[uv.Reason]) -> set[tuple[str, str]]:
    return {(r.kind, r.verdict) for r in got}


# ------------------------------------------------------------------- the real pair
def test_real_pair_041_to_050dev_is_a_0x_major_change_and_nothing_else(verifier: Verifier) -> None:
    got = reasons(verifier, comp("v0.4.1"), comp("0.5.0-dev"))
    assert kinds(got) == {(uv.CHART_MAJOR, uv.MANUAL)}


def test_downgrade_keeps_a_value_only_the_newer_chart_reads(verifier: Verifier) -> None:
    """0.5.0-dev added consumableShares; going back to v0.4.1 with it set: ignored."""
    values = {**DRA_VALUES, "consumableShares": "memory"}
    got = reasons(verifier, comp("0.5.0-dev", values), comp("v0.4.1", values))
    ignored = [r for r in got if r.kind == uv.VALUE_IGNORED]
    assert len(ignored) == 1 and ignored[0].verdict == uv.MANUAL
    assert "consumableShares was read by chart" in ignored[0].message
    assert any("downgrade" in r.message for r in got if r.kind == uv.CHART_MAJOR)


# ------------------------------------------------------------------- identity
def test_name_override_renames_the_workloads(verifier: Verifier) -> None:
    got = reasons(
        verifier, comp("0.5.0-dev"), comp("0.5.0-dev", {**DRA_VALUES, "nameOverride": "dra"})
    )
    renamed = {r.message.split(" is renamed ")[0] for r in got if r.kind == uv.RENAMED}
    assert "Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller" in renamed
    assert "DaemonSet nvidia-dra-driver/nvidia-dra-driver-gpu-kubelet-plugin" in renamed
    assert {r.verdict for r in got if r.kind == uv.RENAMED} == {uv.MANUAL}


def test_namespace_move_is_delete_and_create_and_a_release_clash(verifier: Verifier) -> None:
    """A new namespace is a new Helm release; its cluster-scoped objects (ClusterRoles,
    DeviceClasses) are still owned by the release in the old namespace: Helm refuses."""
    got = reasons(verifier, comp("0.5.0-dev"), comp("0.5.0-dev", namespace="dra-system"))
    moved = [r for r in got if r.kind == uv.MOVED]
    assert any(r.message.startswith("Deployment nvidia-dra-driver/") for r in moved)
    assert (uv.RELEASE_RENAMED, uv.BLOCKED) in kinds(got)


def test_release_renamed_over_the_same_objects_is_blocked(verifier: Verifier) -> None:
    got = reasons(verifier, comp("0.5.0-dev"), comp("0.5.0-dev"), release="dra")
    assert kinds(got) == {(uv.RELEASE_RENAMED, uv.BLOCKED)}


# ------------------------------------------------------------------- immutable fields
def test_selector_labels_override_changes_the_selectors(verifier: Verifier) -> None:
    values = {**DRA_VALUES, "selectorLabelsOverride": {"app": "dra"}}
    got = reasons(verifier, comp("0.5.0-dev"), comp("0.5.0-dev", values))
    blocked = [r.message for r in got if r.kind == uv.IMMUTABLE and r.verdict == uv.BLOCKED]
    assert any(
        m.startswith("Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller: spec.selector")
        for m in blocked
    )
    assert any(
        m.startswith(
            "DaemonSet nvidia-dra-driver/nvidia-dra-driver-gpu-kubelet-plugin: spec.selector"
        )
        for m in blocked
    )


def _adapter(values: dict[str, Any]) -> VerifyComponent:
    return comp(
        "5.3.0",
        values,
        name="prometheus-adapter",
        chart="prometheus-adapter",
        namespace="monitoring",
    )


def test_service_cluster_ip_and_type_in_prometheus_adapter(verifier: Verifier) -> None:
    before = {"service": {"clusterIP": "10.0.0.50"}}
    got = reasons(verifier, _adapter(before), _adapter({"service": {"clusterIP": "10.0.0.60"}}))
    assert (uv.IMMUTABLE, uv.BLOCKED) in kinds(got)
    assert any("spec.clusterIP" in r.message for r in got)
    got = reasons(verifier, _adapter({}), _adapter({"service": {"type": "NodePort"}}))
    assert kinds(got) == {(uv.IMMUTABLE, uv.MANUAL)}


def test_grafana_statefulset_volume_claim_size_is_blocked(tmp_path: Path) -> None:
    """The grafana chart kube-prometheus-stack 84.4.0 vendors, copied unedited under the
    <component>-<version> name the chart lookup uses."""
    shutil.copytree(
        UPSTREAM_CHARTS / "kube-prometheus-stack-84.4.0/charts/grafana", tmp_path / "grafana-12.3.0"
    )
    v = Verifier([tmp_path])

    def grafana(size: str) -> VerifyComponent:
        values = {"persistence": {"enabled": True, "type": "statefulset", "size": size}}
        return comp("12.3.0", values, name="grafana", chart="grafana", namespace="monitoring")

    got = reasons(v, grafana("10Gi"), grafana("20Gi"))
    blocked = [r for r in got if r.kind == uv.IMMUTABLE and r.verdict == uv.BLOCKED]
    assert blocked and "spec.volumeClaimTemplates" in blocked[0].message
    assert "PersistentVolumeClaims" in blocked[0].steps[0]


def test_job_template_from_a_manifest_is_blocked(verifier: Verifier) -> None:
    """A component's raw manifest (no chart) holding a Job, as recipe manifests do."""
    job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: tune\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: t\n        image: {}\n"
    old = VerifyComponent(
        "tuning", "001-tuning", "gpu", "", "", "", {}, {"job.yaml": job.format("t:1")}
    )
    new = VerifyComponent(
        "tuning", "001-tuning", "gpu", "", "", "", {}, {"job.yaml": job.format("t:2")}
    )
    got = reasons(verifier, old, new)
    assert kinds(got) == {(uv.IMMUTABLE, uv.BLOCKED)}
    assert "Job gpu/tune: spec.template" in got[0].message


# ------------------------------------------------------------------- CRDs (derived copies)
def test_crd_field_removed_as_announced(tmp_path: Path) -> None:
    v = derived(
        tmp_path,
        "0.5.1-numnodes",
        (CRD_FILE, "              numNodes:", "              numNodesRemoved:"),
    )
    got = reasons(v, comp("0.5.0-dev"), comp("0.5.1-numnodes"))
    field = [r for r in got if r.kind == uv.CRD_FIELD_REMOVED]
    assert field and "spec.numNodes" in field[0].message and field[0].verdict == uv.MANUAL
    assert (uv.CRD_NOT_UPGRADED, uv.MANUAL) in kinds(got)  # crds/: helm upgrade skips it


def test_crd_stored_version_removed_is_blocked(tmp_path: Path) -> None:
    v = derived(tmp_path, "0.5.1-v1", (CRD_FILE, "  - name: v1beta1", "  - name: v1"))
    got = reasons(v, comp("0.5.0-dev"), comp("0.5.1-v1"))
    assert (uv.CRD_STORED_VERSION_REMOVED, uv.BLOCKED) in kinds(got)
    assert uv.worst(r.verdict for r in got) == uv.BLOCKED


def test_crd_conversion_strategy_change(tmp_path: Path) -> None:
    hook = "  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        service: {name: dra-webhook, namespace: nvidia-dra-driver}\n  group: resource.nvidia.com"
    v = derived(tmp_path, "0.5.1-webhook", (CRD_FILE, "  group: resource.nvidia.com", hook))
    got = reasons(v, comp("0.5.0-dev"), comp("0.5.1-webhook"))
    assert (uv.CRD_CONVERSION, uv.MANUAL) in kinds(got)


# ------------------------------------------------------------------- unknown
def test_missing_chart_source_is_unknown_never_safe(verifier: Verifier) -> None:
    a = u.rendered_side(comp("0.5.0-dev"), verifier)
    b = u.rendered_side(comp("0.6.0"), verifier)
    assert b.objects is None and "cannot be rendered" in b.unknown
    got = u.compare_component(a, b)
    assert uv.worst(r.verdict for r in got) == uv.UNKNOWN


def _cert_manager(crds: dict[str, Any]) -> VerifyComponent:
    return comp(
        "v1.20.2",
        {"crds": crds},
        name="cert-manager",
        chart="cert-manager",
        namespace="cert-manager",
    )


def test_crds_dropped_from_cert_manager_are_kept_or_deleted(verifier: Verifier) -> None:
    """cert-manager templates its CRDs (crds.enabled) with helm.sh/resource-policy: keep
    unless crds.keep=false: turning crds.enabled off leaves them, or deletes every
    Certificate with them."""
    got = reasons(verifier, _cert_manager({"enabled": True}), _cert_manager({"enabled": False}))
    kept = [r for r in got if r.kind == uv.KEPT]
    assert any("CustomResourceDefinition certificates.cert-manager.io" in r.message for r in kept)
    assert uv.worst(r.verdict for r in got) == uv.SAFE
    got = reasons(
        verifier,
        _cert_manager({"enabled": True, "keep": False}),
        _cert_manager({"enabled": False, "keep": False}),
    )
    deleted = [r for r in got if r.kind == uv.DELETED]
    assert deleted and {r.verdict for r in deleted} == {uv.BLOCKED}
    assert any("every custom resource of it" in r.message for r in deleted)


def test_crd_served_version_removed(tmp_path: Path) -> None:
    """The old side is a derived copy whose ComputeDomain CRD also serves v1alpha1 (not
    stored); the new side is the real 0.5.0-dev tree, which serves v1beta1 only."""
    import yaml

    target = tmp_path / f"{DRA}-0.4.9-alpha"
    shutil.copytree(DRA_NEW, target)
    chart_yaml = target / "Chart.yaml"
    chart_yaml.write_text(
        chart_yaml.read_text().replace('version: "0.5.0-dev"', 'version: "0.4.9-alpha"')
    )
    crd = yaml.safe_load((target / CRD_FILE).read_text())
    alpha = {"name": "v1alpha1", "served": True, "storage": False,
             "schema": {"openAPIV3Schema": {"type": "object"}}}  # fmt: skip
    crd["spec"]["versions"].insert(0, alpha)
    (target / CRD_FILE).write_text(yaml.safe_dump(crd))
    got = reasons(Verifier([tmp_path, UPSTREAM_CHARTS]), comp("0.4.9-alpha"), comp("0.5.0-dev"))
    removed = [r for r in got if r.kind == uv.CRD_VERSION_REMOVED]
    assert len(removed) == 1 and removed[0].verdict == uv.MANUAL
    assert "computedomains.resource.nvidia.com: served version v1alpha1" in removed[0].message
    assert (uv.CRD_NOT_UPGRADED, uv.MANUAL) in kinds(got)
