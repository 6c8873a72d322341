"""Constraint engine: spec oke.md §4 (paths, grammar, versions, evaluation, §4.10 table)."""

from __future__ import annotations

import pytest

from aicr_tui.core.documents.snapshot import Item, Measurement, Snapshot, Subtype
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.foundation.versions import (
    compare_versions,
    looks_like_version,
    parse_version,
    versions_equal,
)
from aicr_tui.core.recipe.constraints import (
    ConstraintPath,
    ConstraintStatus,
    Op,
    evaluate_constraint,
    evaluate_expression,
    format_scalar,
    parse_expression,
    parse_path,
)
from tests.conftest import invalid_request


def snap(*measurements: tuple[str, dict[str, dict[str, object]]]) -> Snapshot:
    return Snapshot(
        measurements=[
            Measurement(
                type=mtype,
                subtypes=[Subtype(subtype=name, data=data) for name, data in subs.items()],
            )
            for mtype, subs in measurements
        ]
    )


SNAP = snap(
    (
        "K8s",
        {
            "server": {"version": "v1.34.2", "platform": "linux/amd64"},
            "oke-addons": {"nvidia-gpu-plugin": "installed", "addon-count": 3},
            "aks-gpu-pools": {"gpu-driver": "Install", "gpu-pool-count": 2},
            "policy": {"ratio": 1.5, "whole": 3.0},
        },
    ),
    ("OS", {"release": {"ID": "ubuntu", "VERSION_ID": "24.04"}, "sysctl": {}}),
    ("GPU", {"hardware": {"gpu-present": True, "gpu-count": 8}}),
    ("SystemD", {"containerd.service": {"ActiveState": "active"}}),
    ("NodeTopology", {"label": {"nvidia.com/gpu.present": "true|node-a,node-b"}}),
)
SNAP.measurements[1].subtypes[1].data["/proc/sys/kernel/osrelease"] = "6.8.0-1059-azure"


# -- §4.2 path syntax ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("K8s.server.version", ConstraintPath("K8s", "server", "version")),
        (
            "OS.sysctl./proc/sys/kernel/osrelease",
            ConstraintPath("OS", "sysctl", "/proc/sys/kernel/osrelease"),
        ),
        (
            "NodeTopology.label.nvidia.com/gpu.present",
            ConstraintPath("NodeTopology", "label", "nvidia.com/gpu.present"),
        ),
        (
            "SystemD.containerd.service.ActiveState",
            ConstraintPath("SystemD", "containerd.service", "ActiveState"),
        ),
        (
            "SystemD.a.b.c.service.SubState",
            ConstraintPath("SystemD", "a.b.c.service", "SubState"),
        ),
        ("GPU.hardware.model", ConstraintPath("GPU", "hardware", "model")),
        (
            "NetworkTopology.pfs[0].name",
            ConstraintPath("NetworkTopology", "pfs", "name", "0"),
        ),
        (
            "NetworkTopology.pfs[rail=1].name",
            ConstraintPath("NetworkTopology", "pfs", "name", "rail=1"),
        ),
    ],
)
def test_path_split(name: str, path: ConstraintPath) -> None:
    assert parse_path(name) == path
    assert str(parse_path(name)) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "k8s.server.version",
        "Kube.server.version",
        "K8s",
        "K8s.server",
        "K8s.server.",
        "K8s..version",
        "SystemD.containerd",
        "K8s.server.Version",
        "K8s.oke-addons.nvidia-gpu",
        "K8s.aks-gpu-pools.driver",
        "K8s.oke-legacy-plugin.plugin",
    ],
)
def test_bad_paths_are_invalid(name: str) -> None:
    invalid_request(parse_path, name)


def test_type_typo_gets_a_hint() -> None:
    with pytest.raises(AicrError) as info:
        parse_path("K8S.server.version")
    assert 'did you mean "K8s"' in info.value.message


def test_closed_key_typo_gets_a_hint() -> None:
    with pytest.raises(AicrError) as info:
        parse_path("K8s.aks-gpu-pools.gpu-drivers")
    assert "K8s.aks-gpu-pools.gpu-driver" in info.value.message


def test_open_subtypes_accept_any_key() -> None:
    assert parse_path("K8s.node.anything-at-all").key == "anything-at-all"


# -- §4.4 grammar --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "op", "value", "version"),
    [
        (">= 1.34", Op.GE, "1.34", True),
        (">=1.34", Op.GE, "1.34", True),
        ("  <=   v1.2.3  ", Op.LE, "v1.2.3", True),
        ("> 5", Op.GT, "5", True),
        ("< 5", Op.LT, "5", True),
        ("== installed", Op.EQ, "installed", False),
        ("== v1.30", Op.EQ, "v1.30", True),
        ("!= absent", Op.NE, "absent", False),
        ("= Install", Op.EQ, "Install", False),
        ("=Install", Op.EQ, "Install", False),
        ("installed", Op.EXACT, "installed", False),
        ("1.30", Op.EXACT, "1.30", True),
        ("v", Op.EXACT, "v", False),
        ("v1", Op.EXACT, "v1", False),
        ("a.b", Op.EXACT, "a.b", False),
        ("!", Op.EXACT, "!", False),
        ("! x", Op.EXACT, "! x", False),
        ("linux/amd64", Op.EXACT, "linux/amd64", False),
    ],
)
def test_expression_grammar(text: str, op: Op, value: str, version: bool) -> None:
    expr = parse_expression(text)
    assert (expr.op, expr.value, expr.version) == (op, value, version)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "constraint expression cannot be empty"),
        ("   ", "constraint expression cannot be empty"),
        (">=", "constraint value cannot be empty after operator"),
        ("== ", "constraint value cannot be empty after operator"),
        ("=", "constraint value cannot be empty after operator"),
        ("!=", "constraint value cannot be empty after operator"),
        ("!ubuntu", "bare '!' prefix is invalid"),
        ("!absent", "bare '!' prefix is invalid"),
        (">= 1.28.0-gke.-1", "gke"),
        ("< v1.28.0-gke.x", "gke"),
    ],
)
def test_expression_errors(text: str, message: str) -> None:
    with pytest.raises(AicrError) as info:
        parse_expression(text)
    assert message in info.value.message
    assert info.value.code is ErrorCode.INVALID_REQUEST


def test_gke_check_only_applies_to_parseable_comparison_values() -> None:
    assert parse_expression("== 1.28.0-gke.-1").op is Op.EQ
    assert parse_expression(">= not-a-version-gke.1").op is Op.GE


# -- §4.5 versions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts", "extras"),
    [
        ("1", (1,), ""),
        ("v1.34", (1, 34), ""),
        ("1.34.2", (1, 34, 2), ""),
        ("05.007", (5, 7), ""),
        ("1.28.0-gke.1337000", (1, 28, 0), "-gke.1337000"),
        ("6.8.0-1028-aws", (6, 8, 0), "-1028-aws"),
        ("v1.33.5-eks-3025e55", (1, 33, 5), "-eks-3025e55"),
        ("1.30.0+build.5", (1, 30, 0), "+build.5"),
        ("v1.30.0-oke.1", (1, 30, 0), "-oke.1"),
    ],
)
def test_version_parse(text: str, parts: tuple[int, ...], extras: str) -> None:
    v = parse_version(text)
    assert (v.parts, v.extras, v.precision) == (parts, extras, len(parts))


@pytest.mark.parametrize(
    "text",
    ["", "V1.2", "vv1.2", "1.2.3.4", "1..2", ".1", "1.", "a.b", "1.x", "-1.2", "1.2-", "１.2"],
)
def test_version_parse_errors(text: str) -> None:
    if text == "1.2-":
        assert parse_version(text).extras == "-"
        return
    with pytest.raises(AicrError):
        parse_version(text)


@pytest.mark.parametrize(
    ("actual", "expected", "result"),
    [
        ("1.33", "1.33.9", 0),
        ("1.33.9", "1.33", 0),
        ("1", "1.99.99", 0),
        ("1.34.0", "1.33.9", 1),
        ("v1.30.0-oke.1", "1.30", 0),
        ("1.28.0-gke.200", "1.28.0-gke.100", 1),
        ("1.28.0-gke.99", "1.28.0-gke.100", -1),
        ("1.28.0-gke.100", "1.28.0-gke.100", 0),
        ("1.28.0", "1.28.0-gke.100", -1),
        ("1.28.0-gke.100", "1.28.0", 1),
        ("1.28-gke.100", "1.28.0-gke.200", 0),
        ("1.28.0-eks-1", "1.28.0-eks-9", 0),
        ("6.8.0-1059-azure", "6.8.0", 0),
    ],
)
def test_version_compare(actual: str, expected: str, result: int) -> None:
    assert compare_versions(parse_version(actual), parse_version(expected)) == result


def test_versions_equal_ignores_precision_and_extras() -> None:
    assert versions_equal(parse_version("v1.30"), parse_version("1.30.0-x"))
    assert not versions_equal(parse_version("1.30"), parse_version("1.30.1"))


@pytest.mark.parametrize(
    ("text", "looks"),
    [("1.2", True), ("v1.2", True), ("1", False), ("v", False), ("a.b", False), ("x1.y", True)],
)
def test_looks_like_version(text: str, looks: bool) -> None:
    assert looks_like_version(text) is looks


# -- expression evaluation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "actual", "passed"),
    [
        (">= 1.30", "v1.30.0-oke.1", True),
        (">= 1.34", "v1.33.5", False),
        ("> 1.33", "v1.33.9", False),
        ("< 1.35", "v1.34.2", True),
        ("<= 1.34", "1.34.99", True),
        ("== 1.30", "v1.30.0", True),
        ("= 1.30", "v1.30.0", True),
        ("!= 1.30", "v1.30.1", True),
        ("== 24.04", "24.04", True),
        ("== Install", "Install", True),
        ("== Install", "install", False),
        ("!= absent", "installed", True),
        ("absent", "Absent", False),
        ("installed", "  installed  ", True),
        ("1.30", "v1.30", False),
        ("== 1.30", "not-a-version", False),
        ("!= 1.30", "not-a-version", True),
        ("== x.1", "x.1", True),
    ],
)
def test_expression_evaluation(expr: str, actual: str, passed: bool) -> None:
    assert evaluate_expression(parse_expression(expr), actual) is passed


@pytest.mark.parametrize(
    ("expr", "actual", "message"),
    [
        (">= x", "1.2", "cannot parse expected version"),
        (">= 1.2", "linux", "cannot parse actual version"),
        ("< 1.2", "", "cannot parse actual version"),
    ],
)
def test_ordering_needs_versions_on_both_sides(expr: str, actual: str, message: str) -> None:
    with pytest.raises(AicrError) as info:
        evaluate_expression(parse_expression(expr), actual)
    assert message in info.value.message


# -- §4.3 extraction and %v formatting ---------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("x", "x"),
        (3, "3"),
        (True, "true"),
        (False, "false"),
        (1.5, "1.5"),
        (3.0, "3"),
        (1.3, "1.3"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5, "-2.5"),
        (0.0, "0"),
    ],
)
def test_readings_format_like_go(value: object, text: str) -> None:
    assert format_scalar(value) == text  # type: ignore[arg-type]


# -- evaluate_constraint: structured results ----------------------------------------------


def test_pass_result_is_structured() -> None:
    r = evaluate_constraint("K8s.server.version", ">= 1.34", SNAP)
    assert r.status is ConstraintStatus.PASSED and r.passed
    assert (r.name, r.expected, r.actual) == ("K8s.server.version", ">= 1.34", "v1.34.2")
    assert r.message == "expected >= 1.34, got v1.34.2"
    assert r.error is None


def test_clean_fail_names_expected_and_actual() -> None:
    r = evaluate_constraint("K8s.aks-gpu-pools.gpu-driver", "None", SNAP)
    assert r.status is ConstraintStatus.FAILED and not r.passed
    assert r.actual == "Install"
    assert r.message == "expected None, got Install"


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("NetworkTopology.identity.pf-count", "measurement type not found in snapshot"),
        ("K8s.oke-legacy-plugin.nvidia-gpu-device-plugin", "subtype not found in measurement"),
        ("K8s.server.goVersion", "key not found in subtype"),
    ],
)
def test_missing_reading_is_unavailable_never_pass(name: str, detail: str) -> None:
    for expected in ("none", "!= none", ">= 1.0", "== x"):
        r = evaluate_constraint(name, expected, SNAP)
        assert r.status is ConstraintStatus.UNAVAILABLE
        assert not r.passed
        assert r.actual is None
        assert r.error is not None and r.error.has_code(ErrorCode.NOT_FOUND)
        assert detail in r.message
        assert "[NOT_FOUND] value not found in snapshot" in r.error.render()


def test_no_snapshot_is_unavailable() -> None:
    r = evaluate_constraint("K8s.server.version", ">= 1.34", None)
    assert r.status is ConstraintStatus.UNAVAILABLE and not r.passed


def test_invalid_path_is_error() -> None:
    r = evaluate_constraint("Bogus.server.version", ">= 1", SNAP)
    assert r.status is ConstraintStatus.ERROR
    assert r.error is not None and r.error.code is ErrorCode.INVALID_REQUEST
    assert r.message.startswith('invalid constraint path "Bogus.server.version"')


def test_invalid_expression_is_error() -> None:
    r = evaluate_constraint("OS.release.ID", "!ubuntu", SNAP)
    assert r.status is ConstraintStatus.ERROR
    assert "bare '!' prefix is invalid" in r.message


def test_unparseable_version_is_error_with_actual() -> None:
    r = evaluate_constraint("K8s.server.platform", ">= 1.0", SNAP)
    assert r.status is ConstraintStatus.ERROR
    assert r.actual == "linux/amd64"
    assert "cannot parse actual version" in r.message


def test_systemd_and_dotted_keys_evaluate() -> None:
    assert evaluate_constraint("SystemD.containerd.service.ActiveState", "active", SNAP).passed
    assert evaluate_constraint("OS.sysctl./proc/sys/kernel/osrelease", ">= 6.8", SNAP).passed
    r = evaluate_constraint("NodeTopology.label.nvidia.com/gpu.present", "true|node-a,node-b", SNAP)
    assert r.passed


def test_non_string_readings_are_compared_as_go_text() -> None:
    assert evaluate_constraint("GPU.hardware.gpu-present", "true", SNAP).passed
    assert evaluate_constraint("GPU.hardware.gpu-count", ">= 8", SNAP).passed
    assert evaluate_constraint("GPU.hardware.gpu-count", "== 8", SNAP).passed
    assert evaluate_constraint("K8s.policy.whole", "3", SNAP).passed
    assert evaluate_constraint("K8s.policy.ratio", "== 1.5", SNAP).passed
    assert evaluate_constraint("K8s.oke-addons.addon-count", "3", SNAP).passed


def test_first_measurement_and_first_subtype_win() -> None:
    s = snap(
        ("K8s", {"server": {"version": "v1.30.0"}}),
        ("K8s", {"server": {"version": "v1.35.0"}}),
    )
    s.measurements[0].subtypes.append(Subtype(subtype="server", data={"version": "v9.9.9"}))
    r = evaluate_constraint("K8s.server.version", ">= 1.34", s)
    assert r.status is ConstraintStatus.FAILED and r.actual == "v1.30.0"


# -- §4.10 table ---------------------------------------------------------------------------


def test_table_precision_two_tie_with_extras_passes() -> None:
    s = snap(("K8s", {"server": {"version": "v1.30.0-oke.1"}}))
    assert evaluate_constraint("K8s.server.version", ">= 1.30", s).status is ConstraintStatus.PASSED


def test_table_exact_match_is_case_sensitive() -> None:
    s = snap(("K8s", {"oke-addons": {"nvidia-gpu-plugin": "Absent"}}))
    r = evaluate_constraint("K8s.oke-addons.nvidia-gpu-plugin", "absent", s)
    assert r.status is ConstraintStatus.FAILED


def test_table_bare_bang_is_an_error() -> None:
    for actual in ("ubuntu", "rhel", ""):
        s = snap(("OS", {"release": {"ID": actual}}))
        r = evaluate_constraint("OS.release.ID", "!ubuntu", s)
        assert r.status is ConstraintStatus.ERROR
        assert r.error is not None and r.error.code is ErrorCode.INVALID_REQUEST


# -- item selectors ------------------------------------------------------------------------


def item_snap() -> Snapshot:
    sub = Subtype(
        subtype="pfs",
        items=[
            Item(data={"name": "mlx5_0", "rail": 0}, context={"node": "a"}),
            Item(data={"name": "mlx5_1", "rail": 1}, context={"node": "a"}),
            Item(data={"name": "mlx5_2", "rail": 1}, context={"node": "b"}),
        ],
    )
    return Snapshot(measurements=[Measurement(type="NetworkTopology", subtypes=[sub])])


def test_item_selectors() -> None:
    s = item_snap()
    assert evaluate_constraint("NetworkTopology.pfs[0].name", "mlx5_0", s).passed
    assert evaluate_constraint("NetworkTopology.pfs[rail=0].name", "mlx5_0", s).passed
    assert evaluate_constraint("NetworkTopology.pfs[node=b].name", "mlx5_2", s).passed
    assert evaluate_constraint("NetworkTopology.pfs[0].node", "a", s).passed


def test_item_selector_no_match_is_unavailable_and_many_is_conflict() -> None:
    s = item_snap()
    r = evaluate_constraint("NetworkTopology.pfs[rail=7].name", "x", s)
    assert r.status is ConstraintStatus.UNAVAILABLE
    r = evaluate_constraint("NetworkTopology.pfs[9].name", "x", s)
    assert r.status is ConstraintStatus.UNAVAILABLE
    r = evaluate_constraint("NetworkTopology.pfs[rail=1].name", "x", s)
    assert r.status is ConstraintStatus.ERROR
    assert r.error is not None and r.error.code is ErrorCode.CONFLICT
