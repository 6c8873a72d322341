"""The profile lock: bundle-time overrides may restate a profile-owned path, never change it.

On a recipe with ``metadata.selectedProfile`` every owned path (plus, when the profile owns
GPU advertisement, the #1327 closure) is compared between the recipe's own values and the
final bundle values, as a three-state observation (present with canonical bytes / absent /
blocked by a non-map ancestor). Any difference is refused with the path, the selected value
and the ``aicr-tui recipe --profile`` that selects the other value. A ``--dynamic`` on an
owned path is refused whatever its value; dropping an owned component is refused too.
A legacy recipe without ``selectedProfile`` has no lock.
"""

from __future__ import annotations

import json
from typing import Any

from aicr_tui.core.bundler.model import BlockingError, BundleState
from aicr_tui.core.bundler.policy import POLICY_SELECTORS, closure_triggered
from aicr_tui.core.foundation.tree import BLOCKED, PRESENT, observe, paths_intersect

CHECK = "ProfileLock"


def effective_lock_set(state: BundleState) -> dict[str, list[str]]:
    profile = state.recipe.metadata.selectedProfile
    if profile is None:
        return {}
    locks = {c: sorted(set(paths)) for c, paths in profile.ownedPaths.items()}
    if closure_triggered(state):
        for component, selectors in POLICY_SELECTORS.items():
            if state.recipe_enabled(component):
                merged = set(locks.get(component, [])) | set(selectors) | {"enabled"}
                locks[component] = sorted(merged)
    return locks


def canonical(state: str, value: Any) -> str:
    if state != PRESENT:
        return state
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def describe(state: str, value: Any) -> str:
    if state == PRESENT:
        return (
            json.dumps(value, ensure_ascii=False, default=str)
            if not isinstance(value, str)
            else value
        )
    return "absent" if state != BLOCKED else "unreachable (a parent is not a map)"


def other_values(state: BundleState, component: str, path: str, attempted: tuple[str, Any]) -> str:
    """The profile value(s) to regenerate with, preferring one that sets the attempted value."""
    profile = state.recipe.metadata.selectedProfile
    assert profile is not None
    decl = find_declaration(state, profile.name, profile.value)
    if decl is None:
        return "<other value>"
    others = [v for v in decl.value_names() if v != profile.value]
    for name in others:
        fragment: dict[str, Any] = next(
            (r.overrides for r in decl.values[name].componentRefs if r.name == component), {}
        )
        obs = observe(fragment, path)
        if attempted[0] == PRESENT and canonical(*obs) == canonical(*attempted):
            return str(name)
    return "|".join(others) if others else "<other value>"


def find_declaration(state: BundleState, name: str, value: str) -> Any:
    """The catalog's declaration of the selected profile (matched by name and value)."""
    for overlay in [state.catalog.base, *state.catalog.overlays.values()]:
        decl = overlay.spec.profile
        if decl is not None and decl.name == name and value in decl.values:
            return decl
    return None


def _others(state: BundleState) -> str:
    profile = state.recipe.metadata.selectedProfile
    assert profile is not None
    decl = find_declaration(state, profile.name, profile.value)
    others = [v for v in (decl.value_names() if decl else []) if v != profile.value]
    return "|".join(others) if others else "<value>"


def _culprit(state: BundleState, component: str, path: str) -> str:
    entries = [
        e
        for e in state.entries_for(component)
        if e.kind != "dynamic" and paths_intersect(e.path, path)
    ]
    return entries[-1].display() if entries else "a bundle-time override"


def check_profile_lock(state: BundleState) -> None:
    profile = state.recipe.metadata.selectedProfile
    if profile is None:
        return
    selected = f"{profile.name}={profile.value}"
    locks = effective_lock_set(state)
    for component in sorted(locks):
        paths = locks[component]
        if component in state.skipped and state.recipe_enabled(component):
            state.errors.append(
                BlockingError(
                    CHECK,
                    f"{component} is owned by the selected profile {selected} and cannot be "
                    f"dropped from the bundle ({state.skipped[component]}); to change GPU stack "
                    f"ownership regenerate with `aicr-tui recipe --profile {profile.name}="
                    f"{_others(state)}`",
                    component,
                )
            )
            continue
        for r in state.resolved:
            if r.component != component or r.entry.kind != "dynamic":
                continue
            hit = next((p for p in paths if paths_intersect(p, r.entry.path)), None)
            if hit is not None:
                state.errors.append(
                    BlockingError(
                        CHECK,
                        f"{r.entry.display()}: install-time path {component}:{r.entry.path} "
                        f"intersects profile-owned path {component}:{hit} of {selected}; owned "
                        "paths are fixed when the recipe is generated",
                        component,
                    )
                )
        if not state.is_rendered(component):
            continue
        before = state.recipe_values.get(component, {})
        after = state.values[component]
        for path in paths:
            if path == "enabled":
                continue
            was, now = observe(before, path), observe(after, path)
            if canonical(*was) == canonical(*now):
                continue
            other = other_values(state, component, path, now)
            state.errors.append(
                BlockingError(
                    CHECK,
                    f"profile-owned path {component}:{path} diverged from the selected profile "
                    f"{selected}: the profile sets {describe(*was)}, {_culprit(state, component, path)} "
                    f"makes it {describe(*now)}; to change it regenerate the recipe with "
                    f"`aicr-tui recipe --profile {profile.name}={other}`",
                    component,
                )
            )


__all__ = ["CHECK", "check_profile_lock", "effective_lock_set", "find_declaration"]
