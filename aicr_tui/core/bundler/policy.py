"""The GPU allocation policy (#1327): exactly one whole-GPU advertiser per node.

Two things live here. First, the bundle-time override policy on the policy keys: a
``--dynamic`` on one is refused (the value would be unknowable when validators resolve the
policy from the recipe), a static ``--set`` / ``--set-json`` / ``--set-file`` works but is
deprecated and warned about (one warning per key, naming the recipe-overlay replacement).
Second, the coherence rules of the policy resolver (``read_allocation`` +
``coherence_verdict``): dual advertisement, an inert waiver, no advertiser at all, or the DRA
chart's own install guard (GPUs advertised without the waiver). ``aicr-tui validate``
resolves the policy from the recipe's hydrated values and refuses an incoherent one (exit 2,
``aicr_tui.core.validation.policy``); bundle generation does not run the resolver, so here the same
verdict on the final values is only a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler.model import BlockingError, BundleState
from aicr_tui.core.foundation.tree import PRESENT, observe, paths_intersect

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import SelectedProfile

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


_REPLACEMENT = {
    "enabled": "overrides: {enabled: false}",
    "devicePlugin.enabled": "overrides: {devicePlugin: {enabled: <bool>}}",
    "resources.gpus.enabled": "overrides: {resources: {gpus: {enabled: <bool>}}}",
    "gpuResourcesEnabledOverride": "overrides: {gpuResourcesEnabledOverride: <bool>}",
}


def apply_override_policy(state: BundleState) -> None:
    """Refuse ``--dynamic`` on a policy key; warn (deprecated) on static overrides of one.

    A static override works (the brief: "still work but are deprecated and log a warning"),
    one warning per policy key, naming the recipe-overlay replacement. The component
    ``enabled`` toggle reaches here only through scalar ``--set`` (the typed path refuses it
    when the overrides are parsed) and warns the same way.
    """
    locked = closure_triggered(state)
    static: dict[tuple[str, str], list[str]] = {}
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
            for key in keys:
                static.setdefault((r.component, key), []).append(r.entry.display())
    for (component, key), flags in sorted(static.items()):
        state.warnings.append(
            f"deprecated: {', '.join(dict.fromkeys(flags))} overrides the GPU allocation-policy "
            f"key {component}:{key} at bundle time; it still applies, but validators verify "
            "the recipe-resolved policy, so this change will show up as recipe/cluster drift "
            f"at validation. Replace it with a recipe overlay: componentRefs: - name: "
            f"{component}, {_REPLACEMENT.get(key, 'overrides')} (#1327)"
        )


def _flag(values: Mapping[str, Any], path: str, default: bool) -> bool:
    state, value = observe(dict(values), path)
    if state != PRESENT or value is None:
        return default
    return value is True


POLICY_DEVICE_PLUGIN = "device-plugin-extended-resource"
POLICY_DRA = "dra-resource-claim"
POLICY_EXTERNAL = "external-advertiser"
POLICY_UNSPECIFIED = "unspecified"


@dataclass(frozen=True)
class AllocationReading:
    """What the values say about whole-GPU advertisement (the #1327 policy inputs)."""

    dra: str | None  # the DRA component that renders, if any
    gpus: bool  # DRA resources.gpus.enabled
    waiver: bool  # DRA gpuResourcesEnabledOverride
    plugin: bool  # a GPU Operator device plugin advertises nvidia.com/gpu
    external: bool  # the selected profile names an external advertiser
    profile: str = ""  # "name=value" of the selected profile
    considered: bool = True  # False when no policy component is declared at all

    @property
    def policy(self) -> str:
        if not self.considered:
            return POLICY_UNSPECIFIED
        if self.external:
            return POLICY_EXTERNAL
        return POLICY_DRA if self.gpus else POLICY_DEVICE_PLUGIN


def read_allocation(
    values: Mapping[str, Mapping[str, Any]],
    present: Callable[[str], bool],
    declared: Iterable[str],
    profile: SelectedProfile | None,
) -> AllocationReading:
    """Observe the policy keys: an absent waiver reads false, an absent device-plugin switch on
    an enabled operator reads true, an absent or disabled DRA component gives no DRA reading."""
    names = set(declared)
    considered = any(c in names for c in (*DEVICE_PLUGIN_COMPONENTS, *DRA_COMPONENTS))
    dra = next((c for c in DRA_COMPONENTS if present(c)), None)
    gpus = waiver = False
    if dra is not None:
        gpus = _flag(values[dra], "resources.gpus.enabled", False)
        waiver = _flag(values[dra], "gpuResourcesEnabledOverride", False)
    plugin = any(
        _flag(values[c], "devicePlugin.enabled", True)
        for c in DEVICE_PLUGIN_COMPONENTS
        if present(c)
    )
    external = profile is not None and profile.advertiser == "external"
    shown = f"{profile.name}={profile.value}" if profile is not None else ""
    return AllocationReading(dra, gpus, waiver, plugin, external, shown, considered)


def coherence_verdict(r: AllocationReading) -> str | None:
    """Why the reading is not exactly one whole-GPU advertiser, or None when it is."""
    if not r.considered:
        return None
    dra = r.dra
    fixes = (
        "keep the production default (DRA resources.gpus.enabled=false and "
        "gpuResourcesEnabledOverride=false, gpu-operator devicePlugin.enabled=true) or, for "
        "DRA-only, flip all three together in a recipe overlay"
    )
    if r.external:
        in_recipe = [
            n
            for n, on in (
                ("the GPU Operator device plugin", r.plugin),
                (f"{dra} GPU resources", r.gpus),
            )
            if on
        ]
        if in_recipe:
            verb = "advertises" if len(in_recipe) == 1 else "advertise"
            return (
                f"the selected profile {r.profile} names an external "
                f"nvidia.com/gpu advertiser, but {' and '.join(in_recipe)} also {verb} whole "
                "GPUs: dual advertisement over-admits GPUs; exactly one advertiser per node is "
                "allowed (#1327)"
            )
        if r.waiver and not r.gpus:
            return (
                f"{dra}: gpuResourcesEnabledOverride=true while resources.gpus.enabled=false is "
                "an inert waiver that disarms the chart's dual-advertisement tripwire (#1327)"
            )
        return None
    if r.gpus and not r.waiver:
        return (
            f"{dra}: resources.gpus.enabled=true without gpuResourcesEnabledOverride=true is "
            "refused by the DRA chart's install guard; set both in a recipe overlay (#1327)"
        )
    if r.gpus and r.plugin:
        return (
            f"dual advertisement: both the GPU Operator device plugin and {dra} advertise whole "
            "GPUs; the two allocators keep separate ledgers and can double-allocate the same "
            f"GPU. Exactly one whole-GPU advertiser per node is required: {fixes} (#1327)"
        )
    if not r.gpus and not r.plugin:
        return (
            "no whole-GPU advertiser: the GPU Operator device plugin is off (or the operator "
            f"is not deployed) and DRA GPU resources are off, so nvidia.com/gpu is never "
            f"advertised: {fixes} (#1327)"
        )
    if r.waiver and not r.gpus:
        return (
            f"inert waiver: {dra} gpuResourcesEnabledOverride=true while "
            "resources.gpus.enabled=false disarms the chart's dual-advertisement tripwire "
            f"without doing anything else: {fixes} (#1327)"
        )
    return None


def allocation_verdict(state: BundleState) -> str | None:
    """The coherence verdict on the bundle's final values, or None for one advertiser."""
    reading = read_allocation(
        state.values, state.is_rendered, state.declared, state.recipe.metadata.selectedProfile
    )
    return coherence_verdict(reading)


POLICY_VERDICT_PREFIX = "GPU allocation policy:"


def check_allocation_policy(state: BundleState) -> None:
    """Bundle generation does not run the policy resolver (the brief: only ``validate``
    does, at policy resolution); an incoherent final configuration is a warning here."""
    verdict = allocation_verdict(state)
    if verdict:
        state.warnings.append(
            f"{POLICY_VERDICT_PREFIX} {verdict}. The bundle is written; `aicr-tui validate` "
            "refuses a recipe that resolves this way, and reports recipe/cluster drift when a "
            "bundle-time override caused it"
        )


__all__ = [
    "CHECK",
    "POLICY_DEVICE_PLUGIN",
    "POLICY_VERDICT_PREFIX",
    "POLICY_DRA",
    "POLICY_EXTERNAL",
    "POLICY_UNSPECIFIED",
    "AllocationReading",
    "coherence_verdict",
    "read_allocation",
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
