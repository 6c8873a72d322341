"""Property tests for the projections: invariants that hold for any dump of the right shape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aicr_tui.core.capture.aks_pools import is_nvidia_gpu_size, pool_mode, project_aks_pools
from aicr_tui.core.capture.oke_addons import project_oke_addons

VM_SIZES = st.sampled_from(
    [
        "Standard_ND96isr_H100_v5",
        "Standard_NC24ads_A100_v4",
        "Standard_NV36ads_A10_v5",
        "Standard_ND96isr_MI300X_v5",
        "Standard_NG32ads_V620_v1",
        "Standard_D8s_v6",
        "",
    ]
)
DRIVERS = st.one_of(st.none(), st.sampled_from(["Install", "None", "", "install", " None"]))
MANAGEMENT = st.one_of(st.none(), st.sampled_from(["Managed", "Unmanaged", "UNMANAGED", "x"]))


@st.composite
def pools(draw: st.DrawFn) -> dict[str, Any]:
    pool: dict[str, Any] = {
        "name": draw(st.text(alphabet="abcXYZ-_0123", min_size=1, max_size=6)),
        "vmSize": draw(VM_SIZES),
        "count": draw(st.integers(0, 10)),
    }
    if draw(st.booleans()):
        profile: dict[str, Any] = {}
        driver = draw(DRIVERS)
        if driver is not None:
            profile["driver"] = driver
        if draw(st.booleans()):
            mode = draw(MANAGEMENT)
            profile["nvidia"] = None if mode is None else {"managementMode": mode}
        pool["gpuProfile"] = profile
    elif draw(st.booleans()):
        pool["gpuProfile"] = None
    return pool


def _expected(doc: list[dict[str, Any]]) -> dict[str, Any]:
    modes = [
        (p["name"], pool_mode(p.get("gpuProfile"))) for p in doc if is_nvidia_gpu_size(p["vmSize"])
    ]
    data: dict[str, Any] = {"gpu-pool-count": len(modes)}
    if modes:
        data["gpu-pools"] = ",".join(sorted(f"{n}={m}" for n, m in modes))
        distinct = {m for _, m in modes}
        data["gpu-driver"] = distinct.pop() if len(distinct) == 1 else "Mixed"
    return data


def _swap_case_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k.swapcase(): _swap_case_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap_case_keys(v) for v in value]
    return value


@settings(max_examples=100, deadline=None)
@given(st.lists(pools(), max_size=6))
def test_aks_projection_matches_the_rules_for_any_pool_list(doc: list[dict[str, Any]]) -> None:
    data = project_aks_pools(json.dumps(doc).encode(), "p").subtype.data
    assert data == _expected(doc)


@settings(max_examples=50, deadline=None)
@given(st.lists(pools(), max_size=5), st.sampled_from([None, 2]))
def test_aks_projection_ignores_key_case_and_whitespace(
    doc: list[dict[str, Any]], indent: int | None
) -> None:
    plain = project_aks_pools(json.dumps(doc).encode(), "p").subtype.data
    swapped = project_aks_pools(json.dumps(_swap_case_keys(doc), indent=indent).encode(), "p")
    assert swapped.subtype.data == plain


ADDON_NAMES = st.sampled_from(
    ["NvidiaGpuPlugin", "nvidiagpuplugin", "CoreDNS", "KubeProxy", "NvidiaGpuPlugin ", ""]
)
STATES = st.sampled_from(["ACTIVE", "active", "DELETING", "FAILED", "NEEDS_ATTENTION", ""])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(ADDON_NAMES, STATES), max_size=6))
def test_oke_projection_first_plugin_decides(entries: list[tuple[str, str]]) -> None:
    doc = {"data": [{"name": n, "lifecycle-state": s} for n, s in entries]}
    data = project_oke_addons(json.dumps(doc).encode(), "a").subtype.data
    assert data["addon-count"] == len(entries)
    first = next((s for n, s in entries if n.lower() == "nvidiagpuplugin"), None)
    if first is None:
        assert data["nvidia-gpu-plugin"] == "absent"
    elif first.upper() == "ACTIVE":
        assert data["nvidia-gpu-plugin"] == "installed"
    else:
        assert data["nvidia-gpu-plugin"] == "addon-" + first.lower()
