"""The #1327 GPU allocation policy: resolved by ``validate`` from the recipe's hydrated
values before any cluster work, verified against the cluster by dra-support; bundle-time
overrides of the policy keys only warn."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.recipe_result import render_recipe
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import dump_yaml, load_yaml_plain
from aicr_tui.core.recipe.loading import load_recipe, parse_recipe
from aicr_tui.core.validation.policy import (
    POLICY_DEVICE_PLUGIN,
    POLICY_DRA,
    resolve_allocation_policy,
    view_with_policy,
)
from tests.conftest import SAMPLES

TRAINING = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"
SNAP_OK = str(SAMPLES / "snapshots" / "aks-h100-install.yaml")

WAIVER = {"gpuResourcesEnabledOverride": True}
DRA_GPUS = {"resources": {"gpus": {"enabled": True}}}
NO_PLUGIN = {"devicePlugin": {"enabled": False}}


def overlay(dra: dict[str, Any] | None = None, operator: dict[str, Any] | None = None) -> str:
    """The sample training recipe with extra overrides on the two advertisers (a recipe
    overlay, as the brief says the policy must be configured)."""
    doc = load_yaml_plain(TRAINING.read_text(encoding="utf-8"), str(TRAINING))
    for ref in doc["componentRefs"]:
        extra = {"nvidia-dra-driver-gpu": dra, "gpu-operator": operator}.get(ref["name"])
        if extra:
            merged = copy.deepcopy(ref.get("overrides") or {})
            for k, v in extra.items():
                if isinstance(v, dict) and isinstance(merged.get(k), dict):
                    merged[k] = {**merged[k], **v}
                else:
                    merged[k] = v
            ref["overrides"] = merged
    return dump_yaml(doc)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_stock_recipe_resolves_the_device_plugin_default() -> None:
    policy = resolve_allocation_policy(load_recipe(str(TRAINING)), "recipe.yaml")
    assert policy.name == POLICY_DEVICE_PLUGIN
    assert policy.advertisers == ("gpu-operator device plugin",)


@pytest.mark.parametrize(
    ("dra", "operator", "needle"),
    [
        ({**WAIVER, **DRA_GPUS}, None, "dual advertisement"),
        (None, NO_PLUGIN, "no whole-GPU advertiser"),
        (WAIVER, None, "inert waiver"),
        (DRA_GPUS, NO_PLUGIN, "install guard"),
    ],
)
def test_incoherent_recipes_are_refused_at_resolution(
    tmp_path: Path, dra: dict[str, Any] | None, operator: dict[str, Any] | None, needle: str
) -> None:
    recipe = parse_recipe(overlay(dra, operator), "overlay.yaml")
    with pytest.raises(AicrError) as info:
        resolve_allocation_policy(recipe, "overlay.yaml")
    err = info.value
    assert err.exit_code == 2 and needle in err.render()
    assert err.render().startswith('[INVALID_REQUEST] recipe "overlay.yaml": GPU allocation policy')
    if needle == "dual advertisement":
        assert (
            "GPU Operator device plugin" in err.message and "nvidia-dra-driver-gpu" in err.message
        )


def test_dra_only_overlay_is_accepted_only_with_all_three_values() -> None:
    recipe = parse_recipe(overlay({**WAIVER, **DRA_GPUS}, NO_PLUGIN), "dra-only.yaml")
    policy = resolve_allocation_policy(recipe, "dra-only.yaml")
    assert policy.name == POLICY_DRA
    assert policy.advertisers == ("nvidia-dra-driver-gpu GPU resources",)
    assert view_with_policy(recipe, "dra-only.yaml").allocation_policy == POLICY_DRA


def test_validate_refuses_a_dual_advertised_recipe_before_any_cluster_call(
    cli, tmp_path: Path
) -> None:
    """Reproduction (issue 14): ``validate -r`` on an overlay enabling both advertisers
    exited 0. No --snapshot and a kubeconfig that points nowhere: reaching the cluster would
    fail differently, so exit 2 with the policy line proves nothing was contacted."""
    recipe = write(tmp_path, "dual.yaml", overlay({**WAIVER, **DRA_GPUS}))
    res = cli(
        "validate",
        "-r",
        recipe,
        "-k",
        str(tmp_path / "no-such-kubeconfig"),
        env={"KUBECONFIG": str(tmp_path / "none")},
    )
    assert res.returncode == 2, res.stderr
    (line,) = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert line.startswith(
        f'aicr-tui: error: [INVALID_REQUEST] recipe "{recipe}": GPU allocation policy cannot be resolved: dual advertisement'
    )
    assert "kubeconfig" not in line and res.stdout == ""


@pytest.mark.parametrize(
    ("dra", "operator", "code"),
    [
        ({**WAIVER, **DRA_GPUS}, None, 2),
        (WAIVER, None, 2),
        (None, NO_PLUGIN, 2),
        (DRA_GPUS, NO_PLUGIN, 2),  # partial DRA-only flip: the waiver is missing
        ({**WAIVER, **DRA_GPUS}, NO_PLUGIN, 0),  # the whole DRA-only overlay
        (None, None, 0),
    ],
)
def test_no_cluster_on_the_policy_fixtures(
    cli, tmp_path: Path, dra: Any, operator: Any, code: int
) -> None:
    recipe = write(tmp_path, "r.yaml", overlay(dra, operator))
    res = cli("validate", "-r", recipe, "-s", SNAP_OK, "--no-cluster", "--phase", "readiness")
    assert res.returncode == code, res.stderr
    if code == 0:
        assert "GPU allocation policy: " in res.stderr


def test_bundle_set_device_plugin_off_is_deprecated_not_refused(cli, tmp_path: Path) -> None:
    """Reproduction (issue 14): ``bundle --set gpuoperator:devicePlugin.enabled=false`` exited
    2; the brief says bundle-time overrides still work, deprecated, with a warning."""
    out = tmp_path / "bundle"
    res = cli(
        "bundle",
        "-r",
        str(TRAINING),
        "-o",
        str(out),
        "--accelerated-node-toleration",
        "nvidia.com/gpu:NoSchedule",
        "--set",
        "gpuoperator:devicePlugin.enabled=false",
    )
    assert res.returncode == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if "deprecated" in ln]
    assert len(warnings) == 1
    assert "gpu-operator:devicePlugin.enabled" in warnings[0]
    assert "recipe overlay" in warnings[0] and "devicePlugin: {enabled:" in warnings[0]
    assert (out / "deploy.sh").is_file()


def test_bundle_policy_key_rules() -> None:
    from aicr_tui.core.bundler.api import plan_bundle
    from aicr_tui.core.bundler.overrides import parse_overrides
    from aicr_tui.core.bundler.tolerations import parse_tolerations

    recipe = load_recipe(str(TRAINING))
    keyed = parse_tolerations(["nvidia.com/gpu:NoSchedule"])

    def plan(**kw: Any) -> Any:
        return plan_bundle(recipe, parse_overrides(**kw), accelerated_tolerations=keyed)

    # once per key, even when two entries touch it
    p = plan(
        set_=["gpuoperator:devicePlugin.enabled=false"],
        set_json=['gpuoperator:devicePlugin={"enabled": false}'],
    )
    assert p.errors == []
    assert (
        sum("gpu-operator:devicePlugin.enabled" in w and "deprecated" in w for w in p.warnings) == 1
    )
    # the scalar enabled toggle of an unlocked advertiser warns the same way (the
    # AKS profile owns gpu-operator's presence, so its toggle is the lock's business)
    p = plan(set_=["dradriver:resources.gpus.enabled=true"])
    assert p.errors == [] and any("install guard" in w for w in p.warnings)
    # --set-json / --set-file on enabled, and --dynamic on policy keys, stay refused
    with pytest.raises(AicrError, match="enabled must be set with --set"):
        plan(set_json=["dradriver:enabled=false"])
    p = plan(dynamic=["dradriver:resources.gpus.enabled"])
    assert any(e.check == "GpuAllocationPolicy" for e in p.errors)


def test_drift_between_the_resolved_policy_and_the_cluster_fails_dra_support() -> None:

    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.validation.events import CheckFinished
    from tests.simulated import aks_nd96_scenario, run_simulated

    def dra_support(recipe_text: str, **scenario: Any) -> CheckFinished:
        view = view_with_policy(parse_recipe(recipe_text, "r.yaml"), "r.yaml")
        sc = aks_nd96_scenario()
        for k, v in scenario.items():
            setattr(sc, k, v)
        phases = ("readiness", "conformance")
        _, events, _ = run_simulated(sc, view, load_snapshot(SNAP_OK), phases=phases)
        return next(e for e in events if isinstance(e, CheckFinished) and e.check == "dra-support")

    stock = render_recipe(load_recipe(str(TRAINING)), "yaml")
    assert dra_support(stock).status == "passed"
    # a bundle-time flip made the DRA driver advertise GPUs too: drift, failed closed
    drifted = dra_support(stock, dra_gpu_slices=True)
    assert drifted.status == "failed"
    assert drifted.message.startswith("recipe/cluster drift: the recipe resolves device-plugin")
    # the DRA-only overlay, but the cluster still runs the device plugin
    dra_only = overlay({**WAIVER, **DRA_GPUS}, NO_PLUGIN)
    drifted = dra_support(dra_only, dra_gpu_slices=True)
    assert drifted.status == "failed" and "device plugin still advertises" in drifted.message
