"""Upgrade verdicts from rendered objects, one test per reason (core.bundler.upgrade)."""

from __future__ import annotations

import copy
from typing import Any

from core.bundler.upgrade import (
    BLOCKED,
    MANUAL,
    SAFE,
    UNKNOWN,
    ComponentVerdict,
    compare_crds,
    compare_objects,
    compare_versions,
)


def crd(versions: list[dict[str, Any]], strategy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "group": "nvidia.com",
        "names": {"kind": "ClusterPolicy"},
        "versions": versions,
    }
    if strategy:
        spec["conversion"] = {"strategy": strategy}
    return {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterpolicies.nvidia.com"},
        "spec": spec,
    }


def version(
    name: str,
    *,
    storage: bool,
    served: bool = True,
    fields: tuple[str, ...] = ("driver", "toolkit"),
) -> dict[str, Any]:
    props = {f: {"type": "object"} for f in fields}
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": props}},
            }
        },
    }


def verdict_of(fn: Any, old: Any, new: Any) -> ComponentVerdict:
    v = ComponentVerdict("c")
    fn(v, old, new)
    return v


def test_same_objects_are_safe() -> None:
    objs = [deployment()]
    assert verdict_of(compare_objects, objs, copy.deepcopy(objs)).verdict == SAFE
    c = [crd([version("v1", storage=True)])]
    assert verdict_of(compare_crds, c, copy.deepcopy(c)).verdict == SAFE


def test_crd_stored_version_removed_is_blocked() -> None:
    v = verdict_of(
        compare_crds,
        [crd([version("v1alpha1", storage=True)])],
        [crd([version("v1", storage=True)])],
    )
    assert v.verdict == BLOCKED and "drops stored version v1alpha1" in v.reasons[0].text


def test_crd_served_version_dropped_or_unserved_is_blocked() -> None:
    old = [crd([version("v1", storage=True), version("v1beta1", storage=False)])]
    assert verdict_of(compare_crds, old, [crd([version("v1", storage=True)])]).verdict == BLOCKED
    unserved = [crd([version("v1", storage=True), version("v1beta1", storage=False, served=False)])]
    v = verdict_of(compare_crds, old, unserved)
    assert v.verdict == BLOCKED and "stops serving version v1beta1" in v.reasons[0].text


def test_crd_field_removed_from_stored_version_is_manual() -> None:
    v = verdict_of(
        compare_crds,
        [crd([version("v1", storage=True)])],
        [crd([version("v1", storage=True, fields=("driver",))])],
    )
    assert v.verdict == MANUAL and "spec.toolkit" in v.reasons[0].text


def test_crd_conversion_strategy_change_is_manual() -> None:
    v = verdict_of(
        compare_crds,
        [crd([version("v1", storage=True)])],
        [crd([version("v1", storage=True)], "Webhook")],
    )
    assert v.verdict == MANUAL and "None to Webhook" in v.reasons[0].text


def deployment(
    kind: str = "Deployment", ns: str = "gpu-operator", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    sel = labels or {"app": "gpu-operator"}
    return {
        "kind": kind,
        "metadata": {"name": "gpu-operator", "namespace": ns},
        "spec": {
            "selector": {"matchLabels": sel},
            "template": {
                "metadata": {"labels": sel},
                "spec": {"containers": [{"name": "c", "image": "x:1"}]},
            },
        },
    }


def test_selector_change_is_blocked() -> None:
    for kind in ("Deployment", "DaemonSet", "StatefulSet"):
        v = verdict_of(
            compare_objects,
            [deployment(kind)],
            [deployment(kind, labels={"app.kubernetes.io/name": "gpu-operator"})],
        )
        assert v.verdict == BLOCKED and "spec.selector" in v.reasons[0].text, kind


def test_statefulset_claim_templates_change_is_blocked() -> None:
    old = deployment("StatefulSet")
    old["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "10Gi"}}}}
    ]
    new = copy.deepcopy(old)
    new["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "50Gi"
    v = verdict_of(compare_objects, [old], [new])
    assert v.verdict == BLOCKED and "volumeClaimTemplates" in v.reasons[0].text


def test_job_template_change_is_blocked_unless_a_hook() -> None:
    job = deployment("Job")
    changed = copy.deepcopy(job)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2"
    assert verdict_of(compare_objects, [job], [changed]).verdict == BLOCKED
    for j in (job, changed):
        j["metadata"]["annotations"] = {"helm.sh/hook": "pre-upgrade"}
    assert verdict_of(compare_objects, [job], [changed]).verdict == SAFE  # recreated by Helm


def test_service_cluster_ip_blocked_type_manual() -> None:
    svc = {
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"clusterIP": "10.0.0.10"},
    }
    moved = copy.deepcopy(svc)
    moved["spec"]["clusterIP"] = "10.0.0.11"
    assert verdict_of(compare_objects, [svc], [moved]).verdict == BLOCKED
    typed = copy.deepcopy(svc)
    typed["spec"]["type"] = "LoadBalancer"
    v = verdict_of(compare_objects, [svc], [typed])
    assert v.verdict == MANUAL and "ClusterIP -> LoadBalancer" in v.reasons[0].text


def test_namespace_move_and_removal_are_manual() -> None:
    v = verdict_of(compare_objects, [deployment()], [deployment(ns="nvidia-gpu-operator")])
    assert v.verdict == MANUAL and "moves to namespace nvidia-gpu-operator" in v.reasons[0].text
    gone = verdict_of(compare_objects, [deployment("StatefulSet")], [])
    assert gone.verdict == MANUAL and "volume claims are left behind" in gone.reasons[0].text


def test_chart_major_version_is_manual_and_worst_reason_wins() -> None:
    v = ComponentVerdict("gpu-operator", "v25.10.1", "v26.7.0")
    compare_versions(v)
    assert v.verdict == MANUAL
    v.add(UNKNOWN, "the old chart could not be rendered")
    assert v.verdict == UNKNOWN
    v.add(BLOCKED, "x")
    assert v.verdict == BLOCKED
    minor = ComponentVerdict("gpu-operator", "v26.3.0", "v26.7.0")
    compare_versions(minor)
    assert minor.verdict == SAFE


def test_renamed_release_and_new_value_findings() -> None:
    from dataclasses import dataclass

    from core.services.upgrade import UpgradeReport, _renamed_releases, _value_findings
    from core.verify.model import SCHEMA, UNDEFINED_VALUE, Finding

    @dataclass
    class Comp:
        source: str
        chart: str

    report = UpgradeReport(
        components=[ComponentVerdict("gpu-op"), ComponentVerdict("gpu-operator")]
    )
    _renamed_releases(
        report,
        {"gpu-operator": Comp("https://helm.ngc.nvidia.com/nvidia", "gpu-operator")},
        {"gpu-op": Comp("https://helm.ngc.nvidia.com/nvidia", "gpu-operator")},
    )
    assert report.components[0].verdict == MANUAL
    assert "release renamed from gpu-operator" in report.components[0].reasons[0].text

    @dataclass
    class Report:
        findings: list[Finding]

    class FakeVerifier:
        def verify(self, data: str) -> Report:
            old = [Finding("gpu-operator", UNDEFINED_VALUE, "old.path is not a value", "old.path")]
            new = old + [
                Finding(
                    "gpu-operator",
                    UNDEFINED_VALUE,
                    "driver.usePrecompiled is not a value",
                    "driver.usePrecompiled",
                ),
                Finding(
                    "gpu-operator", SCHEMA, "at '/driver': additional properties 'x' not allowed"
                ),
            ]
            return Report(old if data == "old" else new)

    report = UpgradeReport(components=[ComponentVerdict("gpu-operator")])
    _value_findings(report, FakeVerifier(), "old", "new")
    texts = [(r.verdict, r.text) for r in report.components[0].reasons]
    assert (
        MANUAL,
        "a value the target chart ignores: driver.usePrecompiled is not a value",
    ) in texts
    assert any(v == BLOCKED and "schema" in t for v, t in texts)
    assert not any("old.path" in t for _, t in texts)  # ignored before too: not the upgrade's
