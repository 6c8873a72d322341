"""Parsing of --set / --set-json / --set-file / --dynamic and the scheduling flags."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.bundler.overrides import parse_bool_go, parse_entry, parse_overrides, type_scalar
from aicr_tui.core.bundler.tolerations import parse_selectors, parse_toleration, parse_tolerations
from aicr_tui.core.foundation.errors import AicrError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("false", False),
        ("True", "True"),
        ("42", 42),
        ("-7", -7),
        ("+3", 3),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("9223372036854775808", 9.223372036854775808e18),
        ("abc", "abc"),
        ("1_000", "1_000"),
        (" 1", " 1"),
        ("v1.2", "v1.2"),
        ("/run/nvidia/driver", "/run/nvidia/driver"),
    ],
)
def test_scalar_typing_follows_upstream(text: str, expected: object) -> None:
    value = type_scalar(text)
    assert value == expected
    assert type(value) is type(expected)


def test_inf_and_nan_become_floats() -> None:
    assert math.isinf(type_scalar("Inf"))
    assert math.isnan(type_scalar("NaN"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", True), ("t", True), ("TRUE", True), ("0", False), ("F", False), ("False", False)],
)
def test_enabled_uses_go_parse_bool(text: str, expected: bool) -> None:
    assert parse_bool_go(text) is expected


def test_parse_bool_rejects_other_words() -> None:
    assert parse_bool_go("yes") is None
    assert parse_bool_go("off") is None


def test_set_splits_at_first_colon_and_equals() -> None:
    o = parse_overrides(set_=["gpuoperator:driver.version=580.1:2=3"])
    (e,) = o.sets
    assert (e.key, e.path, e.value) == ("gpuoperator", "driver.version", "580.1:2=3")
    assert e.display() == "--set gpuoperator:driver.version=580.1:2=3"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        (
            {"set_": ["gpuoperator.driver=1"]},
            "--set 'gpuoperator.driver=1': expected component:path=value",
        ),
        ({"set_": ["gpuoperator:driver.enabled"]}, "expected component:path=value"),
        ({"set_": ["gpuoperator:driver.enabled="]}, "the value after '=' is empty"),
        ({"set_": [":driver.enabled=1"]}, "the component before ':' is empty"),
        ({"set_": ["gpuoperator:=1"]}, "the value path after ':' is empty"),
        ({"set_": ["gpuoperator:driver..enabled=1"]}, "path segment ''"),
        ({"set_": ["gpuoperator:driver._x=1"]}, "path segment '_x'"),
        ({"set_json": ['deployer:appName="x"']}, "argocd"),
        ({"dynamic": ["deployer:appName"]}, "never typed"),
        (
            {"set_json": ["gpuoperator:driver={bad"]},
            "--set-json 'gpuoperator:driver={bad': the value is not valid JSON",
        ),
        ({"set_json": ["gpuoperator:enabled=false"]}, "enabled must be set with --set"),
        ({"set_file": ["gpuoperator:enabled=x.yaml"]}, "enabled must be set with --set"),
        (
            {"set_file": ["gpuoperator:driver=/nonexistent/x.yaml"]},
            'file "/nonexistent/x.yaml" does not exist',
        ),
        (
            {"dynamic": ["gpuoperator:driver.version=1"]},
            "--dynamic 'gpuoperator:driver.version=1': expected component:path without a value",
        ),
    ],
)
def test_bad_entries_name_the_flag_and_entry(kwargs: dict[str, list[str]], needle: str) -> None:
    with pytest.raises(AicrError) as exc:
        parse_overrides(**kwargs)
    assert exc.value.exit_code == 2
    assert needle in exc.value.render()


def test_set_json_and_set_file_values(tmp_path) -> None:
    f = tmp_path / "env.yaml"
    f.write_text("- name: A\n  value: '1'\n")
    o = parse_overrides(
        set_json=['gpuoperator:driver={"version": "580", "enabled": false}'],
        set_file=[f"gpuoperator:toolkit.env={f}"],
    )
    assert o.set_json[0].value == {"version": "580", "enabled": False}
    assert o.set_file[0].value == [{"name": "A", "value": "1"}]
    assert [e.kind for e in o.typed_entries()] == ["set-file", "set-json"]


def test_set_file_relative_to_base_dir(tmp_path) -> None:
    (tmp_path / "v.json").write_text('{"a": 1}')
    e = parse_entry("set-file", "nfd:worker=v.json", base_dir=tmp_path)
    assert e.value == {"a": 1}


def test_parse_entry_unknown_kind() -> None:
    with pytest.raises(AicrError, match="unknown override kind"):
        parse_entry("set-yaml", "a:b=c")


def test_tolerations() -> None:
    t = parse_toleration("nvidia.com/gpu:NoSchedule")
    assert t.to_values() == {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    t = parse_toleration("dedicated=gpu:NoExecute")
    assert t.to_values() == {
        "key": "dedicated",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoExecute",
    }
    assert parse_toleration(":NoSchedule").is_wildcard
    assert parse_tolerations([]) is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("nvidia.com/gpu", "exactly one ':'"),
        ("a:b:NoSchedule", "exactly one ':'"),
        (
            "nvidia.com/gpu:Never",
            "effect 'Never' must be one of NoSchedule, PreferNoSchedule, NoExecute",
        ),
    ],
)
def test_bad_tolerations(text: str, needle: str) -> None:
    with pytest.raises(AicrError) as exc:
        parse_toleration(text)
    assert "--accelerated-node-toleration" in exc.value.render()
    assert needle in exc.value.render()


def test_selectors() -> None:
    assert parse_selectors(["a=b", "c=d.e"], "--x") == {"a": "b", "c": "d.e"}
    # issue 35: a value outside the Kubernetes label grammar ("d=e") is refused at input
    with pytest.raises(AicrError, match="is not a valid label value"):
        parse_selectors(["c=d=e"], "--x")
    with pytest.raises(AicrError, match="--x 'nokey': expected key=value"):
        parse_selectors(["nokey"], "--x")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_every_int64_types_as_int(n: int) -> None:
    assert type_scalar(str(n)) == n and isinstance(type_scalar(str(n)), int)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_any_value_text_round_trips_through_display(text: str) -> None:
    typed = type_scalar(text)
    if isinstance(typed, float) and not math.isfinite(typed):
        # issue 35: NaN/Inf cannot be held by a values file Helm reads, refused at input
        with pytest.raises(AicrError, match="not a finite number"):
            parse_overrides(set_=[f"nfd:master.label={text}"])
        return
    o = parse_overrides(set_=[f"nfd:master.label={text}"])
    (e,) = o.sets
    assert e.text == text and e.display() == f"--set nfd:master.label={text}"
    assert isinstance(e.value, bool | int | float | str)


def test_scalar_typing_keeps_a_trailing_newline_as_text() -> None:
    """Go's ParseInt/ParseFloat reject "5\\n", so the value stays a string."""
    from aicr_tui.core.bundler.overrides import type_scalar

    assert type_scalar("5") == 5
    assert type_scalar("5\n") == "5\n"
    assert type_scalar("1.5\n") == "1.5\n"
