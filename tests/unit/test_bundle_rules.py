"""Bundle-time rules: override application, profile lock, #1327 policy, blocking checks."""

from __future__ import annotations

from typing import Any

import pytest

from aicr_tui.core.bundler import check_override_entry
from aicr_tui.core.foundation.errors import AicrError
from tests.unit.test_bundle_support import (
    demo_recipe,
    errors_of,
    legacy,
    plan,
    with_driver_state,
    with_overrides,
)

FOUR_FLAG = (
    "gpuoperator:driver.enabled=true",
    "gpuoperator:toolkit.enabled=true",
    "gpuoperator:operator.runtimeClass=nvidia",
    "dradriver:nvidiaDriverRoot=/run/nvidia/driver",
)


def values(p, component: str) -> dict:
    comp = p.component(component)
    assert comp is not None
    return comp.values


# ------------------------------------------------------------------ overrides
def test_unknown_component_lists_the_recipe() -> None:
    with pytest.raises(AicrError) as exc:
        plan(demo_recipe("aks-azure"), set_=("nosuch:x=1",))
    text = exc.value.render()
    assert 'unknown component "nosuch"' in text and "recipe declares: cert-manager," in text


def test_override_of_a_dropped_component_cannot_take_effect() -> None:
    with pytest.raises(AicrError) as exc:
        plan(
            demo_recipe("aks-azure"),
            set_=("networkoperator:enabled=false", "networkoperator:operator.x=1"),
        )
    assert "networkoperator:operator.x cannot take effect: component network-operator is not" in (
        exc.value.render()
    )
    assert "--set networkoperator:enabled=false" in exc.value.render()


def test_enabled_must_parse_and_recipe_disabled_stays_disabled() -> None:
    with pytest.raises(AicrError, match="enabled must be a boolean"):
        plan(demo_recipe("aks-azure"), set_=("nfd:enabled=maybe",))
    disabled = with_overrides(demo_recipe("aks-azure"), "prometheus-adapter", {"enabled": False})
    with pytest.raises(AicrError, match="disabled by the recipe and cannot be re-enabled"):
        plan(disabled, set_=("prometheusadapter:enabled=true",))
    p = plan(disabled, set_=("prometheusadapter:enabled=0",))
    assert p.component("prometheus-adapter") is None


def test_precedence_set_then_file_then_json(tmp_path) -> None:
    f = tmp_path / "v.yaml"
    f.write_text("version: from-file\nextra: 1\n")
    p = plan(
        demo_recipe("aks-azure"),
        set_=("nfd:master.replicaCount=2", "nfd:master.replicaCount=3"),
        set_file=(f"nfd:gc={f}",),
        set_json=('nfd:gc={"version": "from-json"}',),
    )
    v = values(p, "nfd")
    assert v["master"]["replicaCount"] == 3
    # same path: the JSON entry replaces the file entry wholesale
    assert v["gc"]["version"] == "from-json" and "extra" not in v["gc"]


def test_exact_name_wins_over_alias() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        set_=("gpu-operator:gdrcopy.version=a", "gpuoperator:gdrcopy.version=b"),
    )
    assert values(p, "gpu-operator")["gdrcopy"]["version"] == "a"


def test_typed_null_deletes_and_non_map_ancestor_is_refused() -> None:
    p = plan(demo_recipe("aks-azure"), set_json=('nfd:master={"replicaCount": null}',))
    assert "replicaCount" not in values(p, "nfd").get("master", {})
    with pytest.raises(AicrError, match="holds a"):
        plan(demo_recipe("aks-azure"), set_=("nfd:x=1", "nfd:x.y=2"))


def test_dynamic_moves_the_path_to_cluster_values() -> None:
    p = plan(demo_recipe("aks-azure"), dynamic=("gpuoperator:gdrcopy.enabled",))
    comp = p.component("gpu-operator")
    assert comp is not None and comp.cluster_values == {"gdrcopy": {"enabled": False}}
    assert "enabled" not in comp.values.get("gdrcopy", {})
    cv = p.files[f"{comp.folder}/cluster-values.yaml"].decode()
    assert "gdrcopy:\n  enabled: false" in cv
    assert f"-f {comp.folder}/cluster-values.yaml" in p.files["deploy.sh"].decode()


# ------------------------------------------------------------------ profile lock
def test_lock_rejects_a_diverging_owned_path_with_the_remedy() -> None:
    p = plan(demo_recipe("aks-azure"), set_=("gpuoperator:driver.enabled=true",))
    (msg,) = errors_of(p, "ProfileLock")
    assert "gpu-operator:driver.enabled" in msg
    assert "gpuStack=azure-managed" in msg and "the profile sets false" in msg
    assert "aicr-tui recipe --profile gpuStack=operator-managed" in msg


def test_lock_accepts_identical_restatements() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        set_=(
            "gpuoperator:driver.enabled=false",
            "gpuoperator:operator.runtimeClass=nvidia-container-runtime",
            "gpuoperator:enabled=true",
        ),
    )
    assert p.errors == []


def test_lock_covers_typed_parents_dynamic_and_presence() -> None:
    r = demo_recipe("aks-azure")
    p = plan(r, set_json=('gpuoperator:driver={"enabled": true}',))
    assert any("gpu-operator:driver.enabled" in m for m in errors_of(p, "ProfileLock"))
    p = plan(r, dynamic=("gpuoperator:driver.enabled",))
    assert any("intersects profile-owned path" in m for m in errors_of(p, "ProfileLock"))
    p = plan(r, set_=("nv-sentinel:enabled=false",))
    assert any(
        "nvsentinel is owned by the selected profile" in m for m in errors_of(p, "ProfileLock")
    )
    p = plan(r, set_=("nv-sentinel:labeler.assumeDriverInstalled=false",))
    assert any("nvsentinel:labeler.assumeDriverInstalled" in m for m in errors_of(p, "ProfileLock"))


def test_unowned_paths_keep_ordinary_semantics() -> None:
    p = plan(demo_recipe("aks-operator"), set_=("gpuoperator:gdrcopy.enabled=true",))
    assert p.errors == []
    assert values(p, "gpu-operator")["gdrcopy"]["enabled"] is True


def test_legacy_recipe_takes_the_four_flag_tuple() -> None:
    r = legacy(with_driver_state(demo_recipe("aks-azure"), "absent"), pre_nvsentinel=True)
    blocked = plan(r)
    assert errors_of(blocked, "CheckDriverOwnershipCoherence")
    p = plan(r, set_=FOUR_FLAG)
    assert p.errors == []
    v = values(p, "gpu-operator")
    assert (v["driver"]["enabled"], v["toolkit"]["enabled"], v["operator"]["runtimeClass"]) == (
        True,
        True,
        "nvidia",
    )
    assert values(p, "nvidia-dra-driver-gpu")["nvidiaDriverRoot"] == "/run/nvidia/driver"
    # the same tuple is refused on the profiled recipe
    profiled = plan(with_driver_state(demo_recipe("aks-azure"), "absent"), set_=FOUR_FLAG)
    assert len(errors_of(profiled, "ProfileLock")) == 4


# --------------------------------------------------------- #1327 allocation policy
def test_static_policy_override_is_deprecated_and_partial_flip_only_warned() -> None:
    # The brief: bundle generation does not invoke the policy resolver (validate does), so
    # the partial flip is written with its verdict as a warning, never blocked here.
    p = plan(demo_recipe("aks-azure"), set_=("dradriver:resources.gpus.enabled=true",))
    assert any("deprecated" in w and "dradriver:resources.gpus.enabled" in w for w in p.warnings)
    assert errors_of(p, "GpuAllocationPolicy") == []
    (msg,) = [w for w in p.warnings if w.startswith("GPU allocation policy:")]
    assert "install guard" in msg and "aicr-tui validate" in msg


def test_full_dra_only_flip_is_accepted_with_warnings() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        set_=(
            "dradriver:gpuResourcesEnabledOverride=true",
            "dradriver:resources.gpus.enabled=true",
            "gpuoperator:devicePlugin.enabled=false",
        ),
    )
    assert p.errors == []
    assert sum("deprecated" in w for w in p.warnings) == 3  # one per policy key
    assert not any(w.startswith("GPU allocation policy:") for w in p.warnings)
    assert any("DRA-only GPU allocation is experimental" in n for n in p.notes)
    assert "deprecated" in p.files["README.md"].decode()


@pytest.mark.parametrize(
    ("sets", "needle"),
    [
        (
            ("dradriver:gpuResourcesEnabledOverride=true", "dradriver:resources.gpus.enabled=true"),
            "dual advertisement",
        ),
        (("gpuoperator:devicePlugin.enabled=false",), "no whole-GPU advertiser"),
        (("dradriver:gpuResourcesEnabledOverride=true",), "inert waiver"),
    ],
)
def test_partial_flips_are_warned_with_the_resolver_verdict(
    sets: tuple[str, ...], needle: str
) -> None:
    p = plan(demo_recipe("aks-azure"), set_=sets)
    assert errors_of(p, "GpuAllocationPolicy") == []
    (msg,) = [w for w in p.warnings if w.startswith("GPU allocation policy:")]
    assert needle in msg and "exactly one" in msg.lower() or needle in msg


def test_dynamic_on_policy_keys_and_typed_enabled_are_rejected() -> None:
    p = plan(demo_recipe("aks-azure"), dynamic=("gpuoperator:devicePlugin",))
    (msg,) = errors_of(p, "GpuAllocationPolicy")
    assert (
        "--dynamic gpuoperator:devicePlugin" in msg and "gpu-operator:devicePlugin.enabled" in msg
    )
    with pytest.raises(AicrError, match="enabled must be set with --set"):
        plan(demo_recipe("aks-azure"), set_json=("dradriver:enabled=false",))


def test_oke_external_advertiser_locks_the_policy_keys() -> None:
    r = demo_recipe("oke-oci")
    assert r.metadata.selectedProfile is not None
    assert r.metadata.selectedProfile.advertiser == "external"
    assert values(plan(r), "gpu-operator")["devicePlugin"]["enabled"] is False
    p = plan(r, set_=("gpuoperator:devicePlugin.enabled=true",))
    assert any("gpu-operator:devicePlugin.enabled" in m for m in errors_of(p, "ProfileLock"))
    assert not any("deprecated" in w for w in p.warnings)


# ------------------------------------------------------------- blocking checks
def test_wildcard_toleration_blocks_aks_until_keyed_or_opted_out() -> None:
    r = demo_recipe("aks-azure")
    for tolerations in (None, [":NoSchedule"]):
        p = plan(r, tolerations=tolerations)
        (msg,) = errors_of(p, "CheckWildcardAcceleratedToleration")
        assert "renders a wildcard (keyless) accelerated-node toleration" in msg
        assert "--accelerated-node-toleration nvidia.com/gpu:NoSchedule" in msg
    optout = plan(
        r,
        tolerations=None,
        set_=(
            "networkoperator:enabled=false",
            "gpuoperator:driver.rdma.useHostMofed=false",
            "nodewrightcustomizations:enabled=false",
        ),
    )
    assert optout.errors == []
    assert optout.component("nodewright-customizations") is None
    assert not any("CheckHostMofed" in w for w in optout.warnings)


def test_oke_is_not_subject_to_the_wildcard_check() -> None:
    assert plan(demo_recipe("oke-oci"), tolerations=None).errors == []


def test_host_mofed_warning_when_network_operator_is_dropped() -> None:
    p = plan(demo_recipe("aks-azure"), set_=("networkoperator:enabled=false",))
    assert p.errors == []
    (w,) = [w for w in p.warnings if w.startswith("CheckHostMofedWithoutNetworkOperator")]
    assert "--set gpuoperator:driver.rdma.useHostMofed=false" in w
    assert "CheckHostMofedWithoutNetworkOperator" in p.files["README.md"].decode()


def test_driver_ownership_rule1_absent_driver() -> None:
    p = plan(with_driver_state(demo_recipe("aks-azure"), "absent"))
    (msg,) = errors_of(p, "CheckDriverOwnershipCoherence")
    assert "gpuDriverState: absent" in msg and "driverless" in msg
    assert "--gpu-driver none" in msg and "--profile gpuStack=operator-managed" in msg
    assert plan(with_driver_state(demo_recipe("aks-operator"), "absent")).errors == []
    assert plan(with_driver_state(demo_recipe("aks-azure"), "preinstalled")).errors == []
    bad = plan(with_driver_state(demo_recipe("aks-azure"), "gone"))
    assert any('"gone"' in m for m in errors_of(bad, "CheckDriverOwnershipCoherence"))


def test_driver_ownership_rule2_dra_root_lockstep() -> None:
    r = legacy(demo_recipe("aks-azure"))
    p = plan(r, set_=FOUR_FLAG[:3])
    (msg,) = errors_of(p, "CheckDriverOwnershipCoherence")
    assert 'nvidiaDriverRoot is "/"' in msg
    assert "--set dradriver:nvidiaDriverRoot=/run/nvidia/driver" in msg
    preflip = plan(r, set_=("dradriver:nvidiaDriverRoot=/run/nvidia/driver",))
    (msg,) = errors_of(preflip, "CheckDriverOwnershipCoherence")
    assert "legacy pre-flip signature" in msg
    p = plan(r, set_=(*FOUR_FLAG, "gpuoperator:hostPaths.driverInstallDir=/opt/nv"))
    assert any("/opt/nv" in m for m in errors_of(p, "CheckDriverOwnershipCoherence"))


def test_driver_ownership_toggles_install_dir_and_dynamic() -> None:
    r = legacy(demo_recipe("aks-azure"))
    p = plan(r, set_json=('gpuoperator:driver.enabled="false"',))
    (msg,) = errors_of(p, "CheckDriverOwnershipCoherence")
    assert "not a boolean" in msg
    p = plan(r, set_=("gpuoperator:hostPaths.driverInstallDir=/",))
    assert any("#1106" in m for m in errors_of(p, "CheckDriverOwnershipCoherence"))
    p = plan(r, dynamic=("gpuoperator:hostPaths.driverInstallDir",))
    assert any("cluster-values.yaml" in m for m in errors_of(p, "CheckDriverOwnershipCoherence"))


NV_LABEL_OFF = "nv-sentinel:labeler.assumeDriverInstalled=false"


def test_nvsentinel_driver_label_gate() -> None:
    r = legacy(demo_recipe("aks-azure"))

    def label_errors(*set_: str, recipe: Any = r) -> list[str]:
        return errors_of(plan(recipe, set_=set_), "CheckNVSentinelDriverLabelDetectable")

    (msg,) = label_errors(NV_LABEL_OFF)
    assert "labeler.assumeDriverInstalled" in msg and "metadata-collector" in msg
    assert "syslog-health-monitor-regular" in msg and "0 desired" in msg
    assert "--set nv-sentinel:labeler.assumeDriverInstalled=true" in msg
    collector_off = "nv-sentinel:global.metadataCollector.enabled=false"
    syslog_off = "nv-sentinel:global.syslogHealthMonitor.enabled=false"
    assert label_errors(NV_LABEL_OFF, collector_off, syslog_off) == []
    (msg,) = label_errors(NV_LABEL_OFF, collector_off)
    assert "metadata-collector" not in msg and "syslog-health-monitor-kata" in msg
    assert label_errors(NV_LABEL_OFF, recipe=legacy(demo_recipe("aks-operator"))) == []
    dyn = plan(r, dynamic=("nv-sentinel:labeler.assumeDriverInstalled",))
    assert any("--dynamic" in m for m in errors_of(dyn, "CheckNVSentinelDriverLabelDetectable"))


def test_nvsentinel_runtime_class_coherence() -> None:
    r = legacy(demo_recipe("aks-azure"))
    wrong_class = "nv-sentinel:metadata-collector.runtimeClassName=nvidia"
    p = plan(r, set_=(wrong_class,))
    (msg,) = errors_of(p, "CheckNVSentinelRuntimeClassCoherence")
    assert '"nvidia"' in msg and '"nvidia-container-runtime"' in msg
    assert 'RuntimeClass "nvidia" not found' in msg and "FailedCreate" in msg
    assert "--set nv-sentinel:metadata-collector.runtimeClassName=nvidia-container-runtime" in msg
    off = plan(r, set_=(wrong_class, "nv-sentinel:global.metadataCollector.enabled=false"))
    assert errors_of(off, "CheckNVSentinelRuntimeClassCoherence") == []
    empty = plan(r, set_json=('nv-sentinel:metadata-collector.runtimeClassName=""',))
    assert errors_of(empty, "CheckNVSentinelRuntimeClassCoherence") == []


def test_info_checks_are_notes() -> None:
    p = plan(demo_recipe("aks-azure"))
    assert any("--workload-selector is not set" in n for n in p.notes)
    assert any("--accelerated-node-selector is not set" in n for n in p.notes)
    p = plan(
        demo_recipe("aks-azure"),
        accelerated_node_selector={"a": "b"},
        workload_selector={"c": "d"},
    )
    assert not any("is not set" in n for n in p.notes)
    assert values(p, "nodewright-customizations")["acceleratedNodeSelector"] == {"a": "b"}
    # gpu-operator has no daemonsets.nodeSelector (issue 13: the chart ignored it).
    assert "nodeSelector" not in values(p, "gpu-operator").get("daemonsets", {})


def test_readme_operational_notes_follow_the_profile() -> None:
    azure = plan(demo_recipe("aks-azure")).files["README.md"].decode()
    assert "/var/run/nvidia-container-devices" in azure
    assert "does not revert tuning" in azure
    assert "GDRCopy" in azure and "gdrdrv" in azure
    assert "public.ecr.aws" in azure
    operator = plan(demo_recipe("aks-operator")).files["README.md"].decode()
    assert "/var/run/nvidia-container-devices" not in operator
    assert "gpuoperator:gdrcopy.enabled=true enables it" in operator


def test_check_override_entry_feedback() -> None:
    r = demo_recipe("aks-azure")
    (fb,) = check_override_entry(r, "set", "gpuoperator:gdrcopy.enabled=true")
    assert fb.level == "ok"
    fbs = check_override_entry(r, "set", "gpuoperator:driver.enabled=true")
    assert {f.level for f in fbs} == {"error"}
    assert any("ProfileLock" in f.message for f in fbs)
    fbs = check_override_entry(r, "set", "gpuoperator:devicePlugin.enabled=false")
    assert {f.level for f in fbs} == {"warning"}  # deprecated, not refused
    assert any("deprecated" in f.message for f in fbs)
    # the coherence verdict is about every entry together: the editor takes it from the plan
    assert not any("no whole-GPU advertiser" in f.message for f in fbs)
    fbs = check_override_entry(r, "dynamic", "gpuoperator:devicePlugin.enabled")
    assert {f.level for f in fbs} == {"error"}
    (fb,) = check_override_entry(r, "set-json", "gpuoperator:driver={")
    assert fb.level == "error" and "--set-json" in fb.message


def test_host_mofed_warning_for_a_recipe_without_network_operator() -> None:
    r = with_overrides(demo_recipe("aks-azure"), "network-operator", {"enabled": False})
    assert not any("CheckHostMofed" in w for w in plan(r).warnings)
    p = plan(r, set_=("gpuoperator:driver.rdma.useHostMofed=true",))
    assert any("(it is currently true)" in w for w in p.warnings)


def test_bundler_imports_no_ui_or_cloud_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, aicr_tui.core.bundler, aicr_tui.core.bundler.api\n"
        "bad = [m for m in ('textual', 'rich', 'aicr_tui.screens', 'kubernetes', 'azure', 'oci') "
        "if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_system_scheduling_defaults_to_the_wildcard_and_takes_flags() -> None:
    from aicr_tui.core.bundler.tolerations import parse_tolerations

    p = plan(demo_recipe("aks-azure"))
    cm = values(p, "cert-manager")
    assert cm["tolerations"] == [{"operator": "Exists"}]
    assert cm["webhook"]["tolerations"] == [{"operator": "Exists"}]
    assert "nodeSelector" not in cm or cm["nodeSelector"] != {"role": "system"}
    # nfd worker.tolerations is both a system and an accelerated path: accelerated wins
    assert values(p, "nfd")["worker"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    p = plan(
        demo_recipe("aks-azure"),
        system_tolerations=parse_tolerations(["CriticalAddonsOnly:NoSchedule"]),
        system_node_selector={"role": "system"},
    )
    cm = values(p, "cert-manager")
    assert cm["nodeSelector"] == {"role": "system"}
    assert cm["cainjector"]["nodeSelector"] == {"role": "system"}
    assert cm["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert values(p, "gpu-operator")["operator"]["nodeSelector"] == {"role": "system"}


def test_recipe_inline_scheduling_values_opt_out_or_append() -> None:
    r = with_overrides(demo_recipe("aks-azure"), "cert-manager", {"tolerations": []})
    assert values(plan(r), "cert-manager")["tolerations"] == []
    own = {"key": "own", "operator": "Exists"}
    r = with_overrides(demo_recipe("aks-azure"), "cert-manager", {"tolerations": [own]})
    assert values(plan(r), "cert-manager")["tolerations"] == [own, {"operator": "Exists"}]


def test_required_node_selector() -> None:
    import dataclasses

    from aicr_tui.core.recipe.catalog import load_catalog

    catalog = load_catalog()
    reg = catalog.registry.model_copy(deep=True)
    entry = reg.get("gpu-operator")
    assert entry is not None and entry.nodeScheduling and entry.nodeScheduling.system
    entry.nodeScheduling.system.requireNodeSelector = True
    strict = dataclasses.replace(catalog, registry=reg)
    p = plan(demo_recipe("aks-azure"), catalog=strict)
    (msg,) = errors_of(p, "RequiredNodeSelector")
    assert "gpu-operator requires --system-node-selector" in msg and "operator.nodeSelector" in msg
    assert (
        plan(demo_recipe("aks-azure"), catalog=strict, system_node_selector={"a": "b"}).errors == []
    )
