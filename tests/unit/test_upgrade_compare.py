"""The upgrade comparators on synthetic object pairs: one test per reason, each pair the
smallest that shows it (the same reasons from real chart versions: test_upgrade_charts)."""

from __future__ import annotations

import copy
from typing import Any

from aicr_tui.core.verify import upgrade as u
from aicr_tui.core.verify import upgrade_verdicts as uv


def deployment(name: str = "ctl", ns: str = "gpu", selector: str = "ctl") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/name": "x"}},
        "spec": {
            "selector": {"matchLabels": {"app": selector}},
            "template": {"metadata": {"labels": {"app": selector}}, "spec": {"containers": []}},
        },
    }


def side(objects: list[dict[str, Any]] | None, **kw: Any) -> uv.Side:
    base: dict[str, Any] = {
        "component": "c",
        "release": "c",
        "namespace": "gpu",
        "chart": "c",
        "version": "1.0.0",
        "values": {},
        "objects": objects,
    }
    base.update(kw)
    return uv.Side(**base)


def kinds(reasons: list[uv.Reason]) -> list[tuple[str, str]]:
    return [(r.kind, r.verdict) for r in reasons]


def crd(versions: list[dict[str, Any]], strategy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"group": "example.com", "versions": versions}
    if strategy:
        spec["conversion"] = {"strategy": strategy}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": spec,
    }


def version(name: str, *, storage: bool, props: dict[str, Any] | None = None) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props or {}}},
    }
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}


# ------------------------------------------------------------------------ CRDs
def test_removed_served_version_is_manual() -> None:
    old = crd([version("v1alpha1", storage=False), version("v1", storage=True)])
    new = crd([version("v1", storage=True)])
    got = u.compare_crd(old, new, templated=True)
    assert kinds(got) == [(uv.CRD_VERSION_REMOVED, uv.MANUAL)]
    assert "v1alpha1" in got[0].message


def test_removed_stored_version_is_blocked_with_the_migration_steps() -> None:
    old = crd([version("v1alpha1", storage=True)])
    new = crd([version("v1", storage=True)])
    got = u.compare_crd(old, new, templated=True)
    assert kinds(got) == [(uv.CRD_STORED_VERSION_REMOVED, uv.BLOCKED)]
    assert any("storedVersions" in s for s in got[0].steps)


def test_field_removed_from_the_stored_version_is_manual_and_named() -> None:
    props = {"size": {"type": "integer"}, "color": {"type": "object", "properties": {"hue": {}}}}
    old = crd([version("v1", storage=True, props=props)])
    fewer = {"size": {"type": "integer"}}
    got = u.compare_crd(old, crd([version("v1", storage=True, props=fewer)]), templated=True)
    assert kinds(got) == [(uv.CRD_FIELD_REMOVED, uv.MANUAL)]
    # the removed map only, not each of its children
    assert "spec.color" in got[0].message and "spec.color.hue" not in got[0].message


def test_conversion_strategy_change_is_manual() -> None:
    old = crd([version("v1", storage=True)])
    new = crd([version("v1", storage=True)], strategy="Webhook")
    assert kinds(u.compare_crd(old, new, templated=True)) == [(uv.CRD_CONVERSION, uv.MANUAL)]


def test_a_crds_directory_change_also_needs_a_manual_apply() -> None:
    old = crd([version("v1alpha1", storage=False), version("v1", storage=True)])
    new = crd([version("v1", storage=True)])
    got = kinds(u.compare_crd(old, new, templated=False))
    assert (uv.CRD_NOT_UPGRADED, uv.MANUAL) in got
    assert u.compare_crd(new, copy.deepcopy(new), templated=False) == []


# ------------------------------------------------------------------------ immutable fields
def test_selector_change_is_blocked_for_each_workload_kind() -> None:
    for kind in ("Deployment", "DaemonSet", "StatefulSet"):
        old = deployment()
        old["kind"] = kind
        new = copy.deepcopy(old)
        new["spec"]["selector"] = {"matchLabels": {"app": "other"}}
        key = u.key_of(old, "gpu")
        got = u.compare_immutable(key, old, new)
        assert kinds(got) == [(uv.IMMUTABLE, uv.BLOCKED)], kind
        assert "spec.selector" in got[0].message and "immutable" in got[0].message


def test_statefulset_volume_claim_templates_change_is_blocked() -> None:
    old = deployment()
    old["kind"] = "StatefulSet"
    old["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "10Gi"}}}}
    ]
    new = copy.deepcopy(old)
    new["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "20Gi"
    got = u.compare_immutable(u.key_of(old, "gpu"), old, new)
    assert kinds(got) == [(uv.IMMUTABLE, uv.BLOCKED)]
    assert "volumeClaimTemplates" in got[0].message


def test_job_template_change_is_blocked_and_a_hook_job_is_not_compared() -> None:
    old = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "gpu"},
        "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "m:1"}]}}},
    }
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "m:2"
    assert kinds(u.compare_immutable(u.key_of(old, "gpu"), old, new)) == [
        (uv.IMMUTABLE, uv.BLOCKED)
    ]
    hook_old, hook_new = copy.deepcopy(old), copy.deepcopy(new)
    for obj in (hook_old, hook_new):
        obj["metadata"]["annotations"] = {"helm.sh/hook": "pre-upgrade"}
    got = u.compare_component(side([hook_old]), side([hook_new]))
    assert [r for r in got if r.kind == uv.IMMUTABLE] == []


def test_service_cluster_ip_and_type() -> None:
    old = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"clusterIP": "10.0.0.10", "type": "ClusterIP"}}  # fmt: skip
    key = u.key_of(old, "gpu")
    moved_ip = copy.deepcopy(old)
    moved_ip["spec"]["clusterIP"] = "10.0.0.11"
    assert kinds(u.compare_immutable(key, old, moved_ip)) == [(uv.IMMUTABLE, uv.BLOCKED)]
    unset = copy.deepcopy(old)
    del unset["spec"]["clusterIP"]
    assert u.compare_immutable(key, old, unset) == []  # the allocated address is kept
    nodeport = copy.deepcopy(old)
    nodeport["spec"]["type"] = "NodePort"
    assert kinds(u.compare_immutable(key, old, nodeport)) == [(uv.IMMUTABLE, uv.MANUAL)]
    external = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                "spec": {"type": "ExternalName", "externalName": "x.example"}}  # fmt: skip
    # the 1.34 server drops an unchanged cluster IP when the type becomes ExternalName
    assert kinds(u.compare_immutable(key, unset, external)) == [(uv.IMMUTABLE, uv.MANUAL)]
    assert "cluster IP is released" in u.compare_immutable(key, unset, external)[0].message
    headless = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                "spec": {"clusterIP": "None"}}  # fmt: skip
    # an unset clusterIP keeps "None": accepted, still headless
    got = u.compare_immutable(key, headless, unset)
    assert kinds(got) == [(uv.IMMUTABLE, uv.MANUAL)] and "stays headless" in got[0].message
    assert kinds(u.compare_immutable(key, headless, old)) == [(uv.IMMUTABLE, uv.BLOCKED)]


def test_an_immutable_configmap_cannot_change_its_data() -> None:
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
           "immutable": True, "data": {"a": "1"}}  # fmt: skip
    new = copy.deepcopy(old)
    new["data"]["a"] = "2"
    key = u.key_of(old, "gpu")
    got = u.compare_immutable(key, old, new)
    assert (
        kinds(got) == [(uv.IMMUTABLE, uv.BLOCKED)] and "ConfigMap gpu/cfg: data" in got[0].message
    )
    assert u.compare_immutable(key, old, copy.deepcopy(old)) == []
    mutable = {**old, "immutable": False}
    assert u.compare_immutable(key, mutable, new) == []


# ------------------------------------------------------------------------ identity
def test_renamed_object_is_delete_and_create_with_what_it_drops() -> None:
    old, new = deployment("ctl"), deployment("controller")
    got = u.compare_component(side([old]), side([new]))
    assert kinds(got) == [(uv.RENAMED, uv.MANUAL)]
    assert "deletes" in got[0].message and "pods" in got[0].message


def test_object_moved_to_another_namespace() -> None:
    got = u.compare_component(side([deployment(ns="gpu")]), side([deployment(ns="gpu-system")]))
    assert kinds(got) == [(uv.MOVED, uv.MANUAL)]
    assert "gpu-system" in got[0].message


def test_a_statefulset_no_longer_installed_loses_its_volumes() -> None:
    sts = deployment("db")
    sts["kind"] = "StatefulSet"
    got = u.compare_component(side([sts]), side([]))
    assert kinds(got) == [(uv.DELETED, uv.MANUAL)]
    assert "PersistentVolumeClaims" in got[0].message


def test_release_renamed_over_owned_objects_is_blocked_else_manual() -> None:
    same = deployment()
    got = u.compare_component(side([same]), side([copy.deepcopy(same)], release="c2"))
    assert kinds(got) == [(uv.RELEASE_RENAMED, uv.BLOCKED)]
    assert any("helm uninstall c" in s for s in got[0].steps)
    got = u.compare_component(
        side([same]), side([deployment("other-ctl", selector="o")], release="c2")
    )
    assert (uv.RELEASE_RENAMED, uv.MANUAL) in kinds(got)


# ------------------------------------------------------------------------ values, versions
def test_chart_major_version() -> None:
    assert kinds(u.compare_versions("1.9.0", "2.0.0", "c")) == [(uv.CHART_MAJOR, uv.MANUAL)]
    assert kinds(u.compare_versions("v0.4.1", "0.5.0-dev", "c")) == [(uv.CHART_MAJOR, uv.MANUAL)]
    assert u.compare_versions("1.2.0", "1.3.5", "c") == []
    assert kinds(u.compare_versions("main", "1.0.0", "c")) == [(uv.NOT_KNOWN, uv.UNKNOWN)]


def test_value_the_new_chart_ignores() -> None:
    old = side([], defaults={"driver": {"root": "/"}}, raw_values={"driver": {"root": "/"}})
    new = side(
        [],
        values={"driver": {"root": "/run"}, "extra": {"a": 1}, "labels": {"k": "v"}},
        defaults={"driver": {"hostRoot": "/"}, "labels": {}},
        raw_values={"driver": {"hostRoot": "/"}, "labels": {}},
    )
    got = u.ignored_values(old, new)
    # driver.root: read by the old chart, renamed in the new one. extra: defined by
    # neither chart (no change of the upgrade; verify reports it). labels: {} is a
    # free-form map, defining everything under it.
    assert kinds(got) == [(uv.VALUE_IGNORED, uv.MANUAL)]
    assert "driver.root was read by chart" in got[0].message
    # without the old chart, every value the new one ignores is named
    old.defaults = old.raw_values = None
    got = u.ignored_values(old, new)
    assert sorted(r.message.split(" ")[1] for r in got) == ["driver.root", "extra"]


# ------------------------------------------------------------------------ verdicts
def test_unknown_is_never_safe_and_blocked_wins() -> None:
    got = u.compare_component(side(None, unknown="chart c 1.0.0 cannot be rendered"), side([]))
    assert uv.worst(r.verdict for r in got) == uv.UNKNOWN
    assert uv.worst([uv.MANUAL, uv.UNKNOWN, uv.BLOCKED, uv.SAFE]) == uv.BLOCKED
    assert uv.worst([uv.MANUAL, uv.UNKNOWN]) == uv.UNKNOWN
    assert uv.worst([]) == uv.SAFE


def test_unchanged_sides_are_safe_even_without_a_chart() -> None:
    a = side(None, unknown="only a stand-in", identity="same")
    b = side(None, unknown="only a stand-in", identity="same")
    assert kinds(u.compare_component(a, b)) == [(uv.UNCHANGED, uv.SAFE)]
    b.identity = "other"
    assert uv.worst(r.verdict for r in u.compare_component(a, b)) == uv.UNKNOWN
