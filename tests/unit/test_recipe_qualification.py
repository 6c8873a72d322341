"""Selection x snapshot x reading matrices (spec aks.md §3.1, oke.md §3.3) on the shipped
catalog and the sample snapshots; rows without a sample edit a sample's reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.criteria import Criteria, parse_criteria
from aicr_tui.core.documents.snapshot import Snapshot, Subtype, load_snapshot
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.catalog import load_catalog
from aicr_tui.core.recipe.qualification import QualificationVerdict, gpu_driver_state, qualify
from tests.conftest import SAMPLES
from tests.unit.test_recipe_fixtures import _private_cache  # noqa: F401  (autouse fixture)

SNAPS = SAMPLES / "snapshots"
AKS = parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="training")
OKE = parse_criteria(service="oke", accelerator="gb200", os="ol", intent="training")
OPERATOR = "gpuStack=operator-managed"
POOLS = "K8s.aks-gpu-pools.gpu-driver"
ADDON = "K8s.oke-addons.nvidia-gpu-plugin"
LEGACY = "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"


def snap(name: str) -> Snapshot:
    return load_snapshot(str(SNAPS / f"{name}.yaml"))


def with_reading(base: str, subtype: str, data: dict[str, object] | None) -> Snapshot:
    """A sample snapshot with one K8s subtype replaced (``None`` removes it)."""
    s = snap(base)
    k8s = s.measurement("K8s")
    assert k8s is not None
    k8s.subtypes = [x for x in k8s.subtypes if x.subtype != subtype]
    if data is not None:
        k8s.subtypes.append(Subtype(subtype=subtype, data=data))  # type: ignore[arg-type]
    return s


def profile_check(v: QualificationVerdict, name: str):  # type: ignore[no-untyped-def]
    found = [c for c in v.checks if c.kind == "profile" and c.name == name]
    assert len(found) == 1, [c.name for c in v.checks]
    return found[0]


def refused(v: QualificationVerdict) -> AicrError:
    assert not v.ok and v.recipe is None and v.error is not None
    assert v.error.exit_code == 2
    return v.error


def overlay_criteria(c: Any) -> Criteria:
    """The user criteria that name exactly what an overlay's ``criteria`` block matches."""
    return parse_criteria(
        service=c.service, accelerator=c.accelerator, intent=c.intent, os=c.os, platform=c.platform
    )


def mismatch(
    criteria: Criteria, profile: str | None, sample: str, seen: str
) -> tuple[QualificationVerdict, AicrError, str]:
    """Qualify against a sample snapshot and assert the refusal names ``seen`` (``expected X,
    observed Y``) and carries a remedy: the verdict, the error and the remedy."""
    v = qualify(criteria, profile, snap(sample))
    err = refused(v)
    assert seen in err.render()
    assert err.remedy is not None
    return v, err, err.remedy


# --------------------------------------------------------------------------- AKS §3.1
def test_aks_no_profile_no_snapshot_records_install_constraint() -> None:
    v = qualify(AKS)
    assert v.ok and v.recipe is not None
    assert v.profile_value == "azure-managed"
    assert {c.name: c.value for c in v.recipe.constraints}[POOLS] == "Install"
    check = profile_check(v, POOLS)
    assert check.status == "deferred" and check.actual is None
    assert v.recipe.metadata.gpuDriverState == ""  # criteria-only records nothing


def test_aks_operator_no_snapshot_records_none_constraint() -> None:
    v = qualify(AKS, OPERATOR)
    assert v.ok and v.recipe is not None
    assert {c.name: c.value for c in v.recipe.constraints}[POOLS] == "None"
    assert profile_check(v, POOLS).status == "deferred"
    assert v.recipe.metadata.selectedProfile is not None
    assert v.recipe.metadata.selectedProfile.value == "operator-managed"


def test_aks_default_with_install_resolves() -> None:
    v = qualify(AKS, None, snap("aks-h100-install"))
    assert v.ok and v.recipe is not None
    c = profile_check(v, POOLS)
    assert (c.status, c.expected, c.actual) == ("passed", "Install", "Install")
    assert v.recipe.metadata.gpuDriverState == "preinstalled"


def test_aks_default_with_none_fails_and_names_the_rerun() -> None:
    v, err, remedy = mismatch(AKS, None, "aks-h100-none", "expected Install, observed None")
    assert (
        err.message
        == 'profile gpuStack=azure-managed constraint "K8s.aks-gpu-pools.gpu-driver" failed'
    )
    assert remedy.startswith(
        "rerun with --profile gpuStack=operator-managed against the same snapshot (no recapture needed)"
    )
    c = profile_check(v, POOLS)
    assert (c.status, c.actual) == ("failed", "None")
    assert c.remedy == err.remedy


@pytest.mark.parametrize("profile", [None, OPERATOR])
@pytest.mark.parametrize(
    ("sample", "observed"),
    [("aks-h100-mixed", "Mixed"), ("aks-h100-managed", "Managed"), (None, "Future")],
)
def test_aks_mixed_managed_unknown_fail_for_either_selection(
    profile: str | None, sample: str | None, observed: str
) -> None:
    s = (
        snap(sample)
        if sample
        else with_reading(
            "aks-h100-install",
            "aks-gpu-pools",
            {"gpu-driver": "Future", "gpu-pool-count": 1, "gpu-pools": "gpupool1=Future"},
        )
    )
    v = qualify(AKS, profile, s)
    err = refused(v)
    assert 'constraint "K8s.aks-gpu-pools.gpu-driver" failed' in err.message
    assert f"observed {observed}" in err.render()
    assert err.remedy is not None and "fix the GPU pools" in err.remedy
    assert "--aks-gpu-pools" in err.remedy and "rerun" not in err.remedy
    assert profile_check(v, POOLS).actual == observed


@pytest.mark.parametrize("profile", [None, OPERATOR])
def test_aks_reading_absent_fails_unavailable(profile: str | None) -> None:
    v = qualify(AKS, profile, snap("aks-h100-no-pools"))
    err = refused(v)
    value = "operator-managed" if profile else "azure-managed"
    assert err.message == (
        f"profile gpuStack={value} cannot be validated because reading "
        '"K8s.aks-gpu-pools.gpu-driver" is unavailable'
    )
    assert err.remedy is not None and "--aks-gpu-pools" in err.remedy
    assert profile_check(v, POOLS).status == "unavailable"


def test_aks_operator_with_none_resolves() -> None:
    v = qualify(AKS, OPERATOR, snap("aks-h100-none"))
    assert v.ok and v.recipe is not None
    assert profile_check(v, POOLS).status == "passed"
    gpu = v.recipe.component("gpu-operator")
    assert gpu is not None and gpu.overrides["driver"]["enabled"] is True


def test_aks_operator_with_install_fails() -> None:
    _, _, remedy = mismatch(AKS, OPERATOR, "aks-h100-install", "expected None, observed Install")
    assert remedy.startswith("rerun without --profile (the gpuStack=azure-managed default)")


def test_aks_old_cluster_removes_the_declaring_overlay() -> None:
    s = snap("aks-h100-install")
    server = s.subtype("K8s", "server")
    assert server is not None
    server.data["version"] = "v1.33.5"
    v = qualify(AKS, None, s)
    err = refused(v)
    # which constraint excluded what, in words a user can act on (issue 15)
    assert err.message.startswith("the snapshot cannot qualify this selection: constraint ")
    assert (
        'constraint K8s.server.version (expected >= 1.34, observed v1.33.5) excluded overlay "'
        in err.message
    )
    assert 'the gpuStack profile that overlay "aks" declares no longer applies' in err.message
    assert "filtering" not in err.message
    assert err.remedy is not None and "upgrade the cluster's Kubernetes version" in err.remedy
    failed = [c for c in v.checks if c.status == "failed"]
    assert failed and failed[0].name == "K8s.server.version" and failed[0].actual == "v1.33.5"


# --------------------------------------------------------------------------- OKE §3.3
def test_oke_no_snapshot_records_constraints() -> None:
    default = qualify(OKE)
    assert default.ok and default.recipe is not None
    names = {c.name: c.value for c in default.recipe.constraints}
    assert names[ADDON] == "installed" and LEGACY not in names
    op = qualify(OKE, OPERATOR)
    assert op.ok and op.recipe is not None
    names = {c.name: c.value for c in op.recipe.constraints}
    assert names[ADDON] == "absent" and names[LEGACY] == "none"
    assert {c.status for c in op.checks if c.kind == "profile"} == {"deferred"}


def test_oke_installed() -> None:
    assert qualify(OKE, None, snap("oke-gb200-active")).ok
    seen = "expected absent, observed installed"
    v, _, remedy = mismatch(OKE, OPERATOR, "oke-gb200-active", seen)
    assert "remove the NvidiaGpuPlugin cluster add-on" in remedy
    assert "oci.oraclecloud.com/disable-gpu-device-plugin=true does not qualify" in remedy
    # every profile constraint is listed, even after the first failure
    assert profile_check(v, LEGACY).status == "passed"


def test_oke_absent() -> None:
    _, _, remedy = mismatch(OKE, None, "oke-gb200-absent", "expected installed, observed absent")
    assert remedy.startswith("rerun with --profile gpuStack=operator-managed")
    ok = qualify(OKE, OPERATOR, snap("oke-gb200-absent"))
    assert ok.ok and ok.recipe is not None
    assert ok.recipe.metadata.selectedProfile is not None
    assert ok.recipe.metadata.selectedProfile.advertiser == ""


@pytest.mark.parametrize("profile", [None, OPERATOR])
@pytest.mark.parametrize("state", ["addon-deleting", "addon-updating", "addon-"])
def test_oke_other_lifecycle_states_fail_naming_the_state(profile: str | None, state: str) -> None:
    s = with_reading(
        "oke-gb200-active", "oke-addons", {"addon-count": 3, "nvidia-gpu-plugin": state}
    )
    v = qualify(OKE, profile, s)
    err = refused(v)
    assert f"observed {state}" in err.render()
    assert err.remedy is not None and "recapture with --oke-addons" in err.remedy


def test_oke_deleting_sample() -> None:
    err = refused(qualify(OKE, None, snap("oke-gb200-deleting")))
    assert "observed addon-deleting" in err.render()


@pytest.mark.parametrize("profile", [None, OPERATOR])
def test_oke_no_addon_reading_fails_unavailable(profile: str | None) -> None:
    s = with_reading("oke-gb200-active", "oke-addons", None)
    err = refused(qualify(OKE, profile, s))
    assert 'reading "K8s.oke-addons.nvidia-gpu-plugin" is unavailable' in err.message
    assert err.remedy is not None and "--oke-addons" in err.remedy


@pytest.mark.parametrize(
    ("legacy", "operator_ok"),
    [("none", True), ("active", False), ("unknown", False), (None, False)],
)
def test_oke_legacy_reading_gates_only_operator_managed(
    legacy: str | None, operator_ok: bool
) -> None:
    addon_absent = with_reading(
        "oke-gb200-absent",
        "oke-legacy-plugin",
        None if legacy is None else {"nvidia-gpu-device-plugin": legacy, "daemonset": legacy},
    )
    v = qualify(OKE, OPERATOR, addon_absent)
    assert v.ok is operator_ok
    if not operator_ok:
        err = refused(v)
        assert LEGACY in err.message
        check = profile_check(v, LEGACY)
        assert check.status == ("unavailable" if legacy is None else "failed")
        assert err.remedy is not None
        if legacy == "active":
            assert "oci.oraclecloud.com/disable-gpu-device-plugin=true" in err.remedy
            assert "migrate" in err.remedy
    # oci-managed never looks at the legacy reading
    addon_installed = with_reading(
        "oke-gb200-active",
        "oke-legacy-plugin",
        None if legacy is None else {"nvidia-gpu-device-plugin": legacy, "daemonset": legacy},
    )
    d = qualify(OKE, None, addon_installed)
    assert d.ok
    assert all(c.name != LEGACY for c in d.checks if c.kind == "profile")


def test_oke_legacy_active_sample() -> None:
    v = qualify(OKE, OPERATOR, snap("oke-gb200-absent-legacy-active"))
    err = refused(v)
    assert "expected none, observed active" in err.render()


def test_oke_conflicting_addon_warning_is_carried() -> None:
    from aicr_tui.core.capture.oke_addons import OkeAddon, conflict_warning

    warning = conflict_warning(OkeAddon("NvidiaGpuOperator", "ACTIVE"))
    v = qualify(OKE, None, snap("oke-gb200-active"), capture_warnings=[warning])
    assert v.ok and v.warnings[0] == warning
    assert "two lifecycle managers" in warning and "disable the NvidiaGpuOperator" in warning


# --------------------------------------------------------------------- driver state
def _gpu(data: dict[str, object]) -> Snapshot:
    s = snap("aks-h100-install")
    hw = s.subtype("GPU", "hardware")
    assert hw is not None
    hw.data = data  # type: ignore[assignment]
    return s


@pytest.mark.parametrize(
    ("data", "state"),
    [
        ({"driver-loaded": True, "gpu-present": True, "gpu-count": 8}, "preinstalled"),
        ({"driver-loaded": False, "gpu-present": True, "gpu-count": 8}, "absent"),
        ({"driver-loaded": "yes", "gpu-count": 8}, ""),
        ({"gpu-count": 8}, ""),
        ({"driver-loaded": False, "gpu-present": False}, ""),
        ({"driver-loaded": False, "gpu-count": 0}, ""),
        ({"driver-loaded": False, "gpu-count": 0.0}, ""),
    ],
)
def test_gpu_driver_state(data: dict[str, object], state: str) -> None:
    assert gpu_driver_state(_gpu(data)) == state


def test_install_pools_without_driver_records_absent_and_warns() -> None:
    s = _gpu({"driver-loaded": False, "gpu-present": True, "gpu-count": 8})
    v = qualify(AKS, None, s)
    assert v.ok and v.recipe is not None
    assert v.recipe.metadata.gpuDriverState == "absent"
    assert any("no loaded driver" in w for w in v.warnings)


def test_none_under_default_fails_before_any_driver_state() -> None:
    v = qualify(AKS, None, snap("aks-h100-none"))
    assert v.gpu_driver_state == ""


# --------------------------------------------------------------------------- misc
def test_every_recipe_constraint_is_in_the_verdict() -> None:
    v = qualify(AKS, None, snap("aks-h100-install"))
    assert v.recipe is not None
    listed = {c.name for c in v.checks}
    assert {c.name for c in v.recipe.constraints} <= listed
    assert all(c.remedy == "" for c in v.checks if c.status == "passed")


def test_shipped_catalog_every_leaf_resolves() -> None:
    cat = load_catalog()
    for ov in cat.overlays.values():
        if ov.criteria is None or ov.criteria.service in ("any", ""):
            continue
        c = ov.criteria
        crit = overlay_criteria(c)
        v = qualify(crit, catalog=cat)
        assert (
            v.error is None
            or "need --os" in v.error.message
            or "no overlay covers" in v.error.message
        ), (
            ov.name,
            v.error,
        )
        if v.recipe is not None:
            assert ov.name in v.recipe.metadata.appliedOverlays


def test_snapshot_never_selects(tmp_path: Path) -> None:
    """A None reading never flips the default: it refuses instead."""
    v = qualify(AKS, None, snap("aks-h100-none"))
    assert v.profile_value == "azure-managed" and not v.ok


def test_aks_default_changes_only_nvsentinel_against_an_unprofiled_copy(tmp_path: Path) -> None:
    """aks.md §2.2: the azure-managed default keeps the pre-profile effective values; only
    NVSentinel gains its two keys and the constraint set gains the pool constraint."""
    import json
    import shutil

    from aicr_tui.core.foundation.yamlio import load_yaml_plain
    from aicr_tui.core.recipe.qualification import _diff_trees
    from aicr_tui.core.recipe.values import resolve_component_values
    from tests.conftest import RECIPES
    from tests.recipe_resolve import resolve

    copy = tmp_path / "recipes"
    shutil.copytree(RECIPES, copy)
    doc = load_yaml_plain((copy / "overlays" / "aks.yaml").read_text(), "aks.yaml")
    doc["apiVersion"] = "aicr.run/v1beta1"
    del doc["spec"]["profile"]
    (copy / "overlays" / "aks.yaml").write_text(json.dumps(doc))
    profiled, legacy = load_catalog(), load_catalog(copy)
    # Issue 33: gb200-aks-* is unpublished and removed; a100 and the dynamo leaf stand in.
    for leaf in (
        "h100-aks-ubuntu-training",
        "a100-aks-ubuntu-training-kubeflow",
        "h100-aks-ubuntu-inference-dynamo",
    ):
        c = profiled.overlays[leaf].criteria
        assert c is not None
        crit = overlay_criteria(c)
        a, b = resolve(profiled, crit), resolve(legacy, crit)
        assert b.apiVersion == "aicr.run/v1" and b.metadata.selectedProfile is None
        changes = []
        for ref in a.componentRefs:
            other = b.component(ref.name)
            assert other is not None
            changes += _diff_trees(
                ref.name,
                "",
                resolve_component_values(legacy, other),
                resolve_component_values(profiled, ref),
            )
        assert {(x.component, x.path) for x in changes} == {
            ("nvsentinel", "labeler"),
            ("nvsentinel", "metadata-collector"),
        }
        extra = {(x.name, x.value) for x in a.constraints} ^ {
            (x.name, x.value) for x in b.constraints
        }
        assert extra == {(POOLS, "Install")}


def _leaf_recipes(service: str, profile: str | None = None):  # type: ignore[no-untyped-def]
    from tests.recipe_resolve import resolve

    cat = load_catalog()
    for name, ov in sorted(cat.overlays.items()):
        c = ov.criteria
        if c is None or c.service != service:
            continue
        crit = overlay_criteria(c)
        yield name, cat, resolve(cat, crit, profile=profile)


def test_every_aks_leaf_pins_the_driver_tuple_per_profile_value() -> None:
    """aks.md §2.3 (upstream aks_driver_profile_tuple_test), on every AKS overlay."""
    from aicr_tui.core.foundation.tree import get_path
    from aicr_tui.core.recipe.values import resolve_component_values

    expected = {
        None: (False, False, "nvidia-container-runtime", "/"),
        OPERATOR: (True, True, "nvidia", "/run/nvidia/driver"),
    }
    for profile, (driver, toolkit, runtime, root) in expected.items():
        for name, cat, r in _leaf_recipes("aks", profile):
            gpu = resolve_component_values(cat, r.component("gpu-operator"))  # type: ignore[arg-type]
            dra = resolve_component_values(cat, r.component("nvidia-dra-driver-gpu"))  # type: ignore[arg-type]
            got = (
                get_path(gpu, "driver.enabled")[1],
                get_path(gpu, "toolkit.enabled")[1],
                get_path(gpu, "operator.runtimeClass")[1],
                get_path(dra, "nvidiaDriverRoot")[1],
            )
            assert got == (driver, toolkit, runtime, root), (name, profile)
            assert r.metadata.selectedProfile is not None
            assert r.metadata.selectedProfile.ownedPaths["nvsentinel"] == [
                "enabled",
                "labeler.assumeDriverInstalled",
                "metadata-collector.runtimeClassName",
            ]


def test_oke_owned_paths_and_advertiser() -> None:
    """oke.md §3.2: identical ownedPaths for both values; oci-managed advertises externally."""
    owned = {
        "gpu-operator": [
            "devicePlugin.enabled",
            "driver.enabled",
            "driver.kernelModuleType",
            "enabled",
            "hostPaths.driverInstallDir",
            "toolkit.enabled",
        ],
        "nvidia-dra-driver-gpu": ["enabled", "nvidiaDriverRoot"],
        "nvsentinel": ["enabled", "labeler.assumeDriverInstalled"],
    }
    for profile, advertiser in ((None, "external"), (OPERATOR, "")):
        for name, _, r in _leaf_recipes("oke", profile):
            sp = r.metadata.selectedProfile
            assert sp is not None and sp.ownedPaths == owned, name
            assert sp.advertiser == advertiser, name


def test_provider_only_snapshot_refuses_with_a_recapture_remedy() -> None:
    """A --no-cluster snapshot carries the pool reading but not the leaf's readings: the
    leaf is excluded (NOT_FOUND) and, with it, the declaring chain; the refusal says why."""
    s = Snapshot(
        measurements=[
            {
                "type": "K8s",
                "subtypes": [
                    {
                        "subtype": "aks-gpu-pools",
                        "data": {
                            "gpu-driver": "Install",
                            "gpu-pool-count": 1,
                            "gpu-pools": "p=Install",
                        },
                    }
                ],
            }
        ]
    )
    err = refused(qualify(AKS, None, s))
    assert "constraint K8s.server.version (expected >= 1.34, no reading) excluded" in err.message
    assert 'overlay "aks" declares no longer applies' in err.message
    assert err.remedy is not None and "--no-cluster" in err.remedy
