"""Command-line values: ``--profile``, ``--set``/``--set-json``/``--set-file``/``--dynamic``,
tolerations and selectors, criteria, constraint paths and expressions (parsed and evaluated
against a real snapshot), versions and durations. Each either parses or fails with one
AicrError line; a flag's error names the flag."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.bundler.overrides import (
    OverrideEntry,
    parse_dynamic,
    parse_set,
    parse_set_file,
    parse_set_json,
    type_scalar,
)
from aicr_tui.core.bundler.tolerations import Toleration, parse_selector, parse_toleration
from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.documents.snapshot import Snapshot, load_snapshot
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.versions import compare_versions, parse_version
from aicr_tui.core.recipe.constraints import (
    ConstraintStatus,
    evaluate_constraint,
    parse_expression,
    parse_path,
)
from aicr_tui.core.recipe.profiles import ProfileSelection, parse_profile_selection
from aicr_tui.core.validation.catalog import parse_duration
from tests.fuzz.fuzz_support import FUZZ, SNAPSHOTS, check_contract, json_values, scratch_dir

# Text that looks like the real thing often enough to get past the first check.
_ALPHABET = st.sampled_from(list('abcAB01._-:=/ \t\n{}[]",!<>+*²é\x00'))
_flagish = st.one_of(st.text(max_size=40), st.text(_ALPHABET, max_size=40))
_component = st.sampled_from(["gpu-operator", "gpuoperator", "deployer", "", "x"])
_path = st.one_of(
    st.sampled_from(["driver.enabled", "enabled", "a..b", ".a", "a.", "-a", "a b", "x"]),
    st.text(_ALPHABET, max_size=12),
)


@st.composite
def _override(draw: st.DrawFn, with_value: bool = True) -> str:
    if draw(st.booleans()):
        return draw(_flagish)
    text = f"{draw(_component)}:{draw(_path)}"
    if with_value:
        value = draw(
            st.one_of(
                _flagish,
                json_values.map(json.dumps),
                st.sampled_from(["1" * 5000, "[" * 5000, "1e999", "-0", "NaN", "true", "0x10"]),
            )
        )
        text += "=" + value
    return text


def _entry_ok(entry: OverrideEntry, kind: str) -> None:
    assert entry.kind == kind
    assert entry.key and entry.path
    assert all(seg for seg in entry.path.split("."))


@FUZZ
@given(_override())
def test_set_and_set_json(text: str) -> None:
    for kind, parse in (("set", parse_set), ("set-json", parse_set_json)):
        out = check_contract(lambda parse=parse: parse(text), names=f"--{kind}")
        if isinstance(out, OverrideEntry):
            _entry_ok(out, kind)


@FUZZ
@given(_override(with_value=False))
def test_dynamic(text: str) -> None:
    out = check_contract(lambda: parse_dynamic(text), names="--dynamic")
    if isinstance(out, OverrideEntry):
        _entry_ok(out, "dynamic")
        assert out.value is None


@FUZZ
@given(st.text(max_size=30))
def test_set_scalar_typing_is_total(text: str) -> None:
    value = type_scalar(text)
    assert isinstance(value, bool | int | float | str)
    if isinstance(value, int) and not isinstance(value, bool):
        assert -(2**63) <= value < 2**63
    if isinstance(value, float) and math.isinf(value):
        assert text.strip().lstrip("+-").lower().startswith("inf")


@functools.cache
def _set_file_dir() -> Path:
    return scratch_dir("set-file")


@FUZZ
@given(st.one_of(st.binary(max_size=120), json_values.map(lambda v: json.dumps(v).encode())))
def test_set_file_contents(raw: bytes) -> None:
    target = _set_file_dir() / "values.yaml"
    target.write_bytes(raw)
    out = check_contract(
        lambda: parse_set_file(f"gpu-operator:driver={target}"), names="--set-file"
    )
    if isinstance(out, OverrideEntry):
        assert out.kind == "set-file"
        json.dumps(out.value)  # plain data only: it is written into the bundle


def test_set_file_paths() -> None:
    d = _set_file_dir()
    (d / "dir").mkdir(exist_ok=True)
    for entry in (
        "c:p=/nonexistent/values.yaml",
        f"c:p={d / 'dir'}",
        "c:p=/dev/null",
        f"c:enabled={d / 'dir'}",
        "c:p=",
    ):
        assert isinstance(check_contract(lambda e=entry: parse_set_file(e)), AicrError)


@FUZZ
@given(_flagish)
def test_profile_selection(text: str) -> None:
    out = check_contract(lambda: parse_profile_selection(text), names="profile")
    if isinstance(out, ProfileSelection):
        assert f"{out.name}={out.value}" == text


@FUZZ
@given(st.one_of(_flagish, st.builds(lambda k, e: f"{k}:{e}", _flagish, _flagish)))
def test_tolerations_and_selectors(text: str) -> None:
    tol = check_contract(lambda: parse_toleration(text), names="--accelerated-node-toleration")
    if isinstance(tol, Toleration):
        assert tol.effect in ("NoSchedule", "PreferNoSchedule", "NoExecute")
    check_contract(lambda: parse_selector(text, "--workload-selector"), names="--workload-selector")


@FUZZ
@given(
    st.one_of(st.none(), _flagish, st.sampled_from(["aks", "oke", "h100", "gb200", "training"])),
    st.one_of(st.none(), _flagish, st.sampled_from(["h100", "GB200", "any"])),
    st.one_of(st.none(), _flagish, st.sampled_from(["-1", "3", "1" * 5000, "²", "1.5"])),
)
def test_criteria(service: str | None, accelerator: str | None, nodes: str | None) -> None:
    check_contract(
        lambda: parse_criteria(
            service=service, accelerator=accelerator, intent=service, os=accelerator, nodes=nodes
        )
    )


# -- constraints ------------------------------------------------------------------------
@functools.cache
def _snapshots() -> tuple[Snapshot, ...]:
    return tuple(load_snapshot(str(p)) for p in sorted(SNAPSHOTS.glob("*.yaml"))[:4])


_constraint_name = st.one_of(
    _flagish,
    st.sampled_from(
        [
            "K8s.server.version",
            "K8s.aks-gpu-pools.gpu-driver",
            "K8s.aks-gpu-pools.gpu-pool-count",
            "K8s.oke-addons.nvidia-gpu-plugin",
            "K8s.aks-gpu-pools.gpu-drivr",
            "SystemD.containerd.service.ActiveState",
            "GPU.smi[0].driver",
            "GPU.smi[²].driver",
            "GPU.smi[99999999999999999999999].x",
            "K8s.node[name=a].x",
            "Foo.bar.baz",
        ]
    ),
    st.builds(
        lambda t, s, k: f"{t}.{s}.{k}",
        st.sampled_from(["K8s", "GPU", "OS", "SystemD"]),
        _flagish,
        _flagish,
    ),
)
_expression = st.one_of(
    _flagish,
    st.builds(
        lambda op, v: f"{op}{v}",
        st.sampled_from([">=", "<=", "!=", "==", ">", "<", "=", "!", ""]),
        st.one_of(
            _flagish,
            st.sampled_from(
                ["1.34", "v1.30.2", "1.2.3-gke.²", "1." + "9" * 5000, "None", "Install", "1.2.3.4"]
            ),
        ),
    ),
)


@FUZZ
@given(_constraint_name, _expression)
def test_constraints_parse_and_evaluate(name: str, expression: str) -> None:
    check_contract(lambda: parse_path(name))
    check_contract(lambda: parse_expression(expression))
    for snapshot in (None, *_snapshots()):
        result = evaluate_constraint(name, expression, snapshot)  # never raises by contract
        assert result.message.strip()
        if result.error is not None:
            assert "\n" not in result.error.render()
        if result.status is ConstraintStatus.PASSED:
            assert snapshot is not None and result.actual is not None
        if result.status in (ConstraintStatus.ERROR, ConstraintStatus.UNAVAILABLE):
            assert result.error is not None


@FUZZ
@given(st.one_of(_flagish, st.sampled_from(["v1.2.3-gke.12", "1." + "9" * 5000])), _flagish)
def test_versions(a: str, b: str) -> None:
    va = check_contract(lambda: parse_version(a))
    vb = check_contract(lambda: parse_version(b))
    if not isinstance(va, AicrError) and not isinstance(vb, AicrError):
        check_contract(lambda: compare_versions(va, vb))  # type: ignore[arg-type]


@FUZZ
@given(st.one_of(_flagish, st.sampled_from(["1h5m", "90s", "1." + "5" * 400 + "h", "5"])))
def test_durations(text: str) -> None:
    out = check_contract(lambda: parse_duration(text, "timeout of validator x"), names="timeout")
    if isinstance(out, float):
        assert out >= 0


def test_flag_edge_values() -> None:
    """The values that crashed before (found by these properties) stay input errors."""
    for entry in ("a:b=" + "1" * 5000, "a:b=" + "[" * 100_000):
        check_contract(lambda e=entry: parse_set(e))
        assert isinstance(check_contract(lambda e=entry: parse_set_json(e)), AicrError)
    assert isinstance(check_contract(lambda: parse_version("1" * 5000)), AicrError)
    assert isinstance(check_contract(lambda: parse_expression(">= 1.2.3-gke.²")), AicrError)
    snap = _snapshots()[0]
    assert evaluate_constraint("K8s.server[²].version", "1", snap).status in (
        ConstraintStatus.ERROR,
        ConstraintStatus.UNAVAILABLE,
    )
