"""Issue 13's reproductions, each measured with the real charts vendored in tests/data/upstream_charts."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from aicr_tui.core.bundler import parse_overrides, plan_bundle
from aicr_tui.core.bundler.tolerations import parse_selectors, parse_tolerations
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import dump_yaml
from aicr_tui.core.verify import helm
from aicr_tui.core.verify.analysis import Verifier
from aicr_tui.core.verify.api import _stand_ins, plan_input, verify_plan
from aicr_tui.core.verify.model import KUBE_VERSION, MISSING_CRD, TYPE_MISMATCH, UNDEFINED_VALUE
from tests.verify import matrix


@cache
def verifier() -> Verifier:
    return Verifier(matrix.chart_dirs(), stand_ins=_stand_ins(None))


@cache
def recipe(service: str, intent: str = "training") -> Any:
    return next(
        r
        for c, r in matrix.cases()
        if c.service == service
        and c.intent == intent
        and c.platform is None
        and c.profile
        and c.profile.endswith(("azure-managed", "oci-managed"))
    )


def bundle(service: str = "aks", *, set_: tuple[str, ...] = (), set_json: tuple[str, ...] = (),
           set_file: tuple[str, ...] = (), **kw: Any) -> Any:  # fmt: skip
    kw.setdefault("accelerated_tolerations", parse_tolerations(matrix.KEYED))
    overrides = parse_overrides(
        set_=list(set_), set_json=list(set_json), set_file=list(set_file), dynamic=[]
    )
    return plan_bundle(recipe(service), overrides, **kw)


def kinds(report: Any) -> list[tuple[str, str, str]]:
    return [(f.component, f.kind, f.path) for f in report.findings]


# ------------------------------------------------------------ values the chart ignores
@pytest.mark.parametrize(
    ("entry", "component", "path"),
    [
        ("--set=gpuoperator:driver.useOpenKernelModules=true", "gpu-operator", "driver.useOpenKernelModules"),
        ("--set=gpuoperator:driver.maxParallelUpgrades=5", "gpu-operator", "driver.maxParallelUpgrades"),
        ("--set=gpuoperator:cdi.default=false", "gpu-operator", "cdi.default"),
        ('--set-json=gpuoperator:daemonsets.nodeSelector={"a":"b"}', "gpu-operator", "daemonsets.nodeSelector"),
        ("--set=networkoperator:deployCR=true", "network-operator", "deployCR"),
        ('--set-json=networkoperator:rdmaSharedDevicePlugin={"deploy":true}', "network-operator", "rdmaSharedDevicePlugin"),
    ],
)  # fmt: skip
def test_values_the_pinned_chart_ignores_are_named(entry: str, component: str, path: str) -> None:
    flag, _, text = entry.partition("=")
    p = bundle(**{"set_" if flag == "--set" else "set_json": (text,)})
    assert kinds(verify_plan(p, verifier=verifier())) == [(component, UNDEFINED_VALUE, path)]


def test_an_undefined_value_the_chart_does_read_is_not_reported() -> None:
    """Render with and without: a key missing from values.yaml that templates still read
    (an extra nodeSelector label under a map the chart defines) changes the output."""
    p = bundle(set_json=('certmanager:nodeSelector={"pool":"system"}',))
    assert verify_plan(p, verifier=verifier()).findings == []


def test_type_mismatch_against_the_chart_default() -> None:
    p = bundle(set_json=('gpuoperator:dcgmExporter.serviceMonitor.enabled="true"',))
    found = kinds(verify_plan(p, verifier=verifier()))
    assert ("gpu-operator", TYPE_MISMATCH, "dcgmExporter.serviceMonitor.enabled") in found


# ------------------------------------------------------------------- install order
def test_cert_manager_servicemonitor_needs_the_prometheus_crds_first() -> None:
    p = bundle()
    order = [c.name for c in p.components]
    # Issue 33: the CRDs come from prometheus-operator-crds (upstream's split), so
    # cert-manager waits for the CRD release only, not for the whole stack.
    assert order.index("prometheus-operator-crds") < order.index("cert-manager")
    assert order.index("cert-manager") < order.index("kube-prometheus-stack")
    data = plan_input(p)
    assert verifier().verify(data).findings == []
    # The order the catalog had before: cert-manager first, so its ServiceMonitor has no CRD.
    data.components.sort(key=lambda c: c.name != "cert-manager")
    found = kinds(verifier().verify(data))
    assert ("cert-manager", MISSING_CRD, "ServiceMonitor/cert-manager") in found


# ------------------------------------------------------------------- kubeVersion
def test_oke_floor_satisfies_the_dra_chart_kube_version() -> None:
    p = bundle("oke")
    data = plan_input(p)
    assert data.kubernetes_constraint == ">= 1.32"
    assert verifier().verify(data).findings == []
    data.kubernetes_constraint = ">= 1.28"  # the OKE floor before the fix
    found = kinds(verifier().verify(data))
    assert ("nvidia-dra-driver-gpu", KUBE_VERSION, "") in found


# ------------------------------------------------------------------------ null kept
def test_a_recipe_null_reaches_helm_as_null() -> None:
    p = bundle()
    comp = p.component("nvidia-dra-driver-gpu")
    text = p.files[f"{comp.folder}/values.yaml"].decode()
    read = helm.parse_document(text)
    assert read is not None and read["controller"]["affinity"] == {"nodeAffinity": None}
    # and Helm drops the chart's control-plane affinity for the controller
    chart = helm.load_chart(matrix.UPSTREAM_CHARTS / "nvidia-dra-driver-gpu-v0.4.1")
    rendered = chart.render(read, release=comp.name, namespace=comp.namespace)
    controller = next(t for n, t in rendered.items() if n.endswith("templates/controller.yaml"))
    assert "node-role.kubernetes.io/control-plane" not in controller
    without = {
        **read,
        "controller": {k: v for k, v in read["controller"].items() if k != "affinity"},
    }
    kept = chart.render(without, release=comp.name, namespace=comp.namespace)
    assert "node-role.kubernetes.io/control-plane" in next(
        t for n, t in kept.items() if n.endswith("templates/controller.yaml")
    )


# ---------------------------------------------------------------- ambiguous strings
AMBIGUOUS = (
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "NO",
    "1:30",
    "0x1F",
    "1_000",
    "~",
    "=",
    ".inf",
)


@pytest.mark.parametrize("word", AMBIGUOUS)
def test_ambiguous_strings_stay_strings_for_helm(word: str, tmp_path: Any) -> None:
    import json

    f = tmp_path / "v.yaml"
    f.write_text(json.dumps(word))
    p = bundle(
        set_=(f"gpuoperator:driver.version={word}",),
        set_json=(f"gpuoperator:driver.repository={json.dumps(word)}",),
        set_file=(f"gpuoperator:driver.image={f}",),
    )
    comp = p.component("gpu-operator")
    read = helm.parse_document(p.files[f"{comp.folder}/values.yaml"].decode())
    assert read is not None
    driver = read["driver"]
    assert (driver["version"], driver["repository"], driver["image"]) == (word,) * 3


def test_unquoted_the_same_words_would_not_be_strings() -> None:
    """Why the quoting exists: the YAML 1.2 emitter writes these plain and Helm reads them
    back as booleans, null or numbers."""
    read = helm.parse_document(dump_yaml({"a": "yes", "b": "off", "c": "On", "d": "n"}))
    assert read == {"a": True, "b": False, "c": True, "d": False}


# ---------------------------------------------------------------- node-exporter
def test_node_exporter_keeps_tolerating_gpu_nodes_under_system_flags() -> None:
    p = bundle(
        system_tolerations=parse_tolerations(["CriticalAddonsOnly=true:NoSchedule"]),
        system_node_selector=parse_selectors(["pool=system"], "--system-node-selector"),
    )
    comp = p.component("kube-prometheus-stack")
    values = helm.parse_document(p.files[f"{comp.folder}/values.yaml"].decode()) or {}
    assert values["prometheusOperator"]["nodeSelector"] == {"pool": "system"}
    chart = helm.load_chart(matrix.UPSTREAM_CHARTS / "kube-prometheus-stack-84.4.0")
    rendered = chart.render(values, release=comp.name, namespace=comp.namespace)
    ds = next(
        t for n, t in rendered.items() if n.endswith("node-exporter/templates/daemonset.yaml")
    )
    doc = helm.parse_document(ds) or {}
    pod = doc["spec"]["template"]["spec"]
    assert {"effect": "NoSchedule", "operator": "Exists"} in pod["tolerations"]
    assert "pool" not in (pod.get("nodeSelector") or {})


# ------------------------------------------------------------------ --storage-class
def test_storage_class_reaches_the_prometheus_pvc() -> None:
    selector = parse_selectors(["pool=system"], "--system-node-selector")
    p = bundle(storage_class="managed-csi", system_node_selector=selector)
    assert not p.errors
    comp = p.component("kube-prometheus-stack")
    values = helm.parse_document(p.files[f"{comp.folder}/values.yaml"].decode()) or {}
    spec = values["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert spec["storageClassName"] == "managed-csi"
    assert verify_plan(p, verifier=verifier()).findings == []
    # an explicit --set of the same path wins
    path = "prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.storageClassName"
    p = bundle(storage_class="managed-csi", system_node_selector=selector,
               set_=(f"prometheus:{path}=premium",))  # fmt: skip
    values = helm.parse_document(p.files[f"{comp.folder}/values.yaml"].decode()) or {}
    assert (
        values["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"][
            "storageClassName"
        ]
        == "premium"
    )


def test_storage_class_needs_a_system_selector_for_prometheus() -> None:
    p = bundle(storage_class="managed-csi")
    assert [e.check for e in p.errors] == ["RequiredNodeSelector"]
    assert "kube-prometheus-stack requires --system-node-selector" in p.errors[0].message


@pytest.mark.parametrize("bad", ["", "  ", "Managed_CSI"])
def test_storage_class_must_be_a_storage_class_name(bad: str) -> None:
    with pytest.raises(AicrError) as err:
        bundle(storage_class=bad)
    assert "--storage-class" in err.value.render()
