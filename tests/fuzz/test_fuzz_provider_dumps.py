"""Provider dumps (AKS pools, OKE add-ons, the legacy DaemonSet): arbitrary bytes, arbitrary
JSON, JSON shaped like the real dumps with wrong types, and damaged copies of the samples.
Each either projects or fails with one AicrError line naming the file."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.capture.aks_pools import AksPoolsProjection, project_aks_pools
from aicr_tui.core.capture.oke_addons import OkeAddonsProjection, project_oke_addons
from aicr_tui.core.capture.oke_legacy import LegacyPluginProjection, project_legacy_daemonset
from aicr_tui.core.foundation.errors import AicrError
from tests.fuzz.fuzz_support import (
    FUZZ,
    check_contract,
    json_values,
    mutated,
    sample_bytes,
    to_json_bytes,
)

SOURCE = "dumps/fuzz-input.json"


def _aks(raw: bytes) -> AksPoolsProjection | AicrError:
    out = check_contract(lambda: project_aks_pools(raw, SOURCE), names=SOURCE)
    if isinstance(out, AksPoolsProjection):
        # a projection is internally consistent: the count is the GPU pools it listed
        assert out.subtype.data["gpu-pool-count"] == len(out.gpu_pools)
        assert all(p.mode for p in out.gpu_pools)
    return out


def _oke(raw: bytes) -> OkeAddonsProjection | AicrError:
    out = check_contract(lambda: project_oke_addons(raw, SOURCE), names=SOURCE)
    if isinstance(out, OkeAddonsProjection):
        assert out.subtype.data["addon-count"] == len(out.addons)
        reading = out.nvidia_gpu_plugin
        assert reading in ("installed", "absent") or reading.startswith("addon-")
    return out


def _legacy(raw: bytes) -> LegacyPluginProjection | AicrError:
    out = check_contract(lambda: project_legacy_daemonset(raw, SOURCE), names=SOURCE)
    if isinstance(out, LegacyPluginProjection):
        assert (out.plugin, out.daemonset) in {
            ("none", "absent"),
            ("none", "unrelated"),
            ("none", "disabled"),
            ("active", "active"),
        }
    return out


PARSERS = (_aks, _oke, _legacy)


@FUZZ
@given(st.binary(max_size=256))
def test_arbitrary_bytes(raw: bytes) -> None:
    for parse in PARSERS:
        parse(raw)


@FUZZ
@given(json_values)
def test_arbitrary_json(value: Any) -> None:
    raw = to_json_bytes(value)
    for parse in PARSERS:
        parse(raw)


_field = st.one_of(json_values, st.text(max_size=30))


def _object(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Any JSON value, or an object holding any subset of ``fields`` (keys as given)."""
    return st.one_of(json_values, st.fixed_dictionaries({}, optional=fields))


_gpu_profile = _object(driver=_field, nvidia=_object(managementMode=_field))
_pool = _object(
    name=_field,
    vmSize=st.one_of(
        _field,
        st.sampled_from(["Standard_ND96isr_H100_v5", "standard_nc6", "Standard_D2_v3"]),
    ),
    gpuProfile=_gpu_profile,
)


@FUZZ
@given(st.lists(_pool, max_size=6))
def test_aks_pool_shaped_lists(pools: list[Any]) -> None:
    _aks(to_json_bytes(pools))


_addon = _object(name=_field, **{"lifecycle-state": _field})


@FUZZ
@given(st.one_of(json_values, st.lists(_addon, max_size=6)), st.booleans())
def test_oke_addon_shaped_dumps(data: Any, wrap: bool) -> None:
    _oke(to_json_bytes({"data": data} if wrap else data))


_daemonset = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.one_of(st.just("DaemonSet"), _field),
        "metadata": _object(
            name=st.one_of(st.just("nvidia-gpu-device-plugin"), _field),
            namespace=st.one_of(st.just("kube-system"), _field),
            labels=st.one_of(
                json_values,
                st.dictionaries(
                    st.sampled_from(["addonmanager.kubernetes.io/mode", "app"]),
                    st.one_of(st.just("Reconcile"), _field),
                    max_size=2,
                ),
            ),
        ),
        "status": _object(
            desiredNumberScheduled=st.one_of(st.integers(min_value=-3, max_value=5), json_values)
        ),
    },
)


@FUZZ
@given(
    st.one_of(
        _daemonset,
        st.fixed_dictionaries(
            {"items": st.one_of(json_values, st.lists(_daemonset, max_size=4))},
            optional={"kind": st.sampled_from(["List", "DaemonSetList", "Pod"])},
        ),
    )
)
def test_legacy_daemonset_shaped_documents(document: Any) -> None:
    _legacy(to_json_bytes(document))


@FUZZ
@given(st.data())
def test_damaged_copies_of_the_samples(data: st.DataObject) -> None:
    cases = (
        (_aks, "aks-pools-mixed.json"),
        (_aks, "aks-pools-managed.json"),
        (_oke, "oke-addons-active.json"),
        (_legacy, "oke-legacy-daemonset-active.json"),
        (_legacy, "oke-legacy-daemonsets-none.json"),
    )
    for parse, name in cases:
        parse(data.draw(mutated(sample_bytes(name)), label=name))


def test_the_samples_themselves_project() -> None:
    """The strategies above start from valid dumps: make sure they really are valid."""
    assert isinstance(_aks(sample_bytes("aks-pools-mixed.json")), AksPoolsProjection)
    assert isinstance(_oke(sample_bytes("oke-addons-active.json")), OkeAddonsProjection)
    legacy = _legacy(sample_bytes("oke-legacy-daemonset-active.json"))
    assert isinstance(legacy, LegacyPluginProjection) and legacy.plugin == "active"


def test_hostile_edge_inputs() -> None:
    """Inputs that broke naive readers elsewhere: huge numbers, deep nesting, bad UTF-8."""
    deep = b"[" * 100_000
    huge = b"1" * 5000
    for raw in (
        deep,
        b'{"data":' + deep,
        huge,
        b'[{"name":' + huge + b"}]",
        b'{"kind":"DaemonSet","metadata":{"name":"nvidia-gpu-device-plugin"},'
        b'"status":{"desiredNumberScheduled":' + huge + b"}}",
        b'{"kind":"DaemonSet","metadata":{"name":"nvidia-gpu-device-plugin"},'
        b'"status":{"desiredNumberScheduled":1e999}}',
        b"\xff\xfe[\x00]",
        b'[{"name":"\\ud800"}]',
        b"NaN",
        b"[] []",
        b"",
    ):
        for parse in PARSERS:
            parse(raw)
