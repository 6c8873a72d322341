"""The GPU allocation policy (#1327): exactly one whole-GPU advertiser per node.

Two things live here. First, the bundle-time override policy on the policy keys: a
``--dynamic`` on one is refused (the value would be unknowable when validators resolve the
policy from the recipe), a static ``--set`` / ``--set-json`` / ``--set-file`` works but is
deprecated and warned about. Second, the coherence verdict on the final values: dual
advertisement, an inert waiver, no advertiser at all, or the DRA chart's own install guard
(GPUs advertised without the waiver) all block the bundle, so a partial flip of the
DRA-only overlay cannot ship.
"""

from __future__ import annotations

from typing import Any

from core.bundler.model import BlockingError, BundleState
from core.bundler.paths import PRESENT, observe, paths_intersect

CHECK = "GpuAllocationPolicy"

DEVICE_PLUGIN_COMPONENTS = ("gpu-operator", "gpu-operator-ocp")
DRA_COMPONENTS = ("nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-ocp")

POLICY_SELECTORS: dict[str, tuple[str, ...]] = {
    "gpu-operator": ("devicePlugin.enabled",),
    "gpu-operator-ocp": ("devicePlugin.enabled",),
    "nvidia-dra-driver-gpu": ("gpuResourcesEnabledOverride", "resources.gpus.enabled"),
    "nvidia-dra-driver-gpu-ocp": ("gpuResourcesEnabledOverride", "resources.gpus.enabled"),
}


def policy_keys(component: str) -> tuple[str, ...]:
    """The selector paths plus the component-level ``enabled`` toggle."""
    selectors = POLICY_SELECTORS.get(component)
    return (*selectors, "enabled") if selectors else ()


def matching_policy_keys(component: str, path: str) -> list[str]:
    return sorted(k for k in policy_keys(component) if paths_intersect(k, path))


def closure_triggered(state: BundleState) -> bool:
    """Whether the selected profile owns advertisement (so the lock, not a warning, applies)."""
    profile = state.recipe.metadata.selectedProfile
    if profile is None:
        return False
    if profile.advertiser == "external":
        return True
    for component, paths in profile.ownedPaths.items():
        for selector in POLICY_SELECTORS.get(component, ()):
            if any(p != "enabled" and paths_intersect(p, selector) for p in paths):
                return True
    return False


def apply_override_policy(state: BundleState) -> None:
    """Refuse ``--dynamic`` on a policy key; warn (deprecated) on static overrides of one."""
    locked = closure_triggered(state)
    static: dict[str, list[str]] = {}
    for r in state.resolved:
        keys = matching_policy_keys(r.component, r.entry.path)
        if not keys:
            continue
        if r.entry.kind == "dynamic":
            state.errors.append(
                BlockingError(
                    CHECK,
                    f"{r.entry.display()} intersects the GPU allocation-policy key "
                    f"{r.component}:{keys[0]}; the policy is resolved from the recipe when "
                    "validators run, so an install-time value cannot be known. Set it in a "
                    "recipe overlay instead (#1327)",
                    r.component,
                )
            )
        elif not locked:
            static.setdefault(r.component, []).append(f"{r.entry.key}:{r.entry.path}")
    for component in sorted(static):
        paths = ", ".join(sorted(set(static[component])))
        state.warnings.append(
            f"deprecated: bundle-time overrides of GPU allocation-policy keys ({paths}) of "
            f"{component} still apply, but validators verify the recipe-resolved policy, so "
            "this change will show up as recipe/cluster drift at validation; configure the "
            "allocation policy in a recipe overlay (#1327)"
        )


def _flag(values: dict[str, Any], path: str, default: bool) -> bool:
    state, value = observe(values, path)
    if state != PRESENT or value is None:
        return default
    return value is True


def allocation_verdict(state: BundleState) -> str | None:
    """The coherence verdict on the final values, or None when one advertiser is configured."""
    declared = [c for c in (*DEVICE_PLUGIN_COMPONENTS, *DRA_COMPONENTS) if c in state.declared]
    if not declared:
        return None
    dra = next((c for c in DRA_COMPONENTS if state.is_rendered(c)), None)
    gpus = waiver = False
    if dra is not None:
        gpus = _flag(state.values[dra], "resources.gpus.enabled", False)
        waiver = _flag(state.values[dra], "gpuResourcesEnabledOverride", False)
    plugin = any(
        _flag(state.values[c], "devicePlugin.enabled", True)
        for c in DEVICE_PLUGIN_COMPONENTS
        if state.is_rendered(c)
    )
    profile = state.recipe.metadata.selectedProfile
    external = profile is not None and profile.advertiser == "external"
    fixes = (
        "keep the production default (DRA resources.gpus.enabled=false and "
        "gpuResourcesEnabledOverride=false, gpu-operator devicePlugin.enabled=true) or, for "
        "DRA-only, flip all three together in a recipe overlay"
    )
    if external:
        in_recipe = [
            n
            for n, on in (
                ("the GPU Operator device plugin", plugin),
                (f"{dra} GPU resources", gpus),
            )
            if on
        ]
        if in_recipe:
            verb = "advertises" if len(in_recipe) == 1 else "advertise"
            return (
                f"the selected profile {profile.name}={profile.value} names an external "  # type: ignore[union-attr]
                f"nvidia.com/gpu advertiser, but {' and '.join(in_recipe)} also {verb} whole "
                "GPUs: dual advertisement over-admits GPUs; exactly one advertiser per node is "
                "allowed (#1327)"
            )
        if waiver and not gpus:
            return (
                f"{dra}: gpuResourcesEnabledOverride=true while resources.gpus.enabled=false is "
                "an inert waiver that disarms the chart's dual-advertisement tripwire (#1327)"
            )
        return None
    if gpus and not waiver:
        return (
            f"{dra}: resources.gpus.enabled=true without gpuResourcesEnabledOverride=true is "
            "refused by the DRA chart's install guard; set both in a recipe overlay (#1327)"
        )
    if gpus and plugin:
        return (
            f"dual advertisement: both the GPU Operator device plugin and {dra} advertise whole "
            "GPUs; the two allocators keep separate ledgers and can double-allocate the same "
            f"GPU. Exactly one whole-GPU advertiser per node is required: {fixes} (#1327)"
        )
    if not gpus and not plugin:
        return (
            "no whole-GPU advertiser: the GPU Operator device plugin is off (or the operator "
            f"is not deployed) and DRA GPU resources are off, so nvidia.com/gpu is never "
            f"advertised: {fixes} (#1327)"
        )
    if waiver and not gpus:
        return (
            f"inert waiver: {dra} gpuResourcesEnabledOverride=true while "
            "resources.gpus.enabled=false disarms the chart's dual-advertisement tripwire "
            f"without doing anything else: {fixes} (#1327)"
        )
    return None


def check_allocation_policy(state: BundleState) -> None:
    verdict = allocation_verdict(state)
    if verdict:
        state.errors.append(BlockingError(CHECK, verdict))


__all__ = [
    "CHECK",
    "DEVICE_PLUGIN_COMPONENTS",
    "DRA_COMPONENTS",
    "POLICY_SELECTORS",
    "allocation_verdict",
    "apply_override_policy",
    "check_allocation_policy",
    "closure_triggered",
    "matching_policy_keys",
    "policy_keys",
]
