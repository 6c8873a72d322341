"""Drift between two snapshots, and the recipe constraints a drift makes fail."""

from __future__ import annotations

from typing import Any

from aicr_tui.core.capture.drift import ReadingChange, compare_snapshots
from aicr_tui.core.documents.snapshot import Snapshot, load_snapshot, parse_snapshot
from aicr_tui.core.services.drift import diff_snapshots
from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"


def _snap(data: dict[str, Any], items: list[dict[str, Any]] | None = None) -> Snapshot:
    sub: dict[str, Any] = {"subtype": "node", "data": data}
    if items is not None:
        sub["items"] = [{"data": d} for d in items]
    doc = {"kind": "Snapshot", "measurements": [{"type": "K8s", "subtypes": [sub]}]}
    import json

    return parse_snapshot(json.dumps(doc), "test")


def test_install_to_none_names_the_driver_reading() -> None:
    old = load_snapshot(str(SNAPS / "aks-h100-install.yaml"))
    new = load_snapshot(str(SNAPS / "aks-h100-none.yaml"))
    result = compare_snapshots(old, new)
    changed = {c.path: (c.old, c.new) for c in result.changes}
    assert changed == {
        "K8s.aks-gpu-pools.gpu-driver": ("Install", "None"),
        "K8s.aks-gpu-pools.gpu-pools": (
            "gpupool1=Install,gpupool2=Install",
            "gpupool1=None,gpupool2=None",
        ),
        "GPU.hardware.driver-loaded": ("true", "false"),
    }
    assert all(c.change == "changed" for c in result.changes)
    assert result.unmeasured == []
    assert compare_snapshots(old, old).changes == []


def test_added_removed_and_unmeasured_are_told_apart() -> None:
    old = _snap({"a": 1, "b": "x"})
    new = _snap({"a": 1, "c": True})
    result = compare_snapshots(old, new)
    assert result.changes == [
        ReadingChange("K8s.node.b", "x", None, "removed"),
        ReadingChange("K8s.node.c", None, "true", "added"),
    ]
    # A subtype one side never measured is not drift: it is listed as unmeasured.
    empty = parse_snapshot('{"kind": "Snapshot", "measurements": [{"type": "GPU"}]}', "t")
    gone = compare_snapshots(old, empty)
    assert gone.changes == []
    assert [(c.path, c.old, c.new, c.change) for c in gone.unmeasured] == [
        ("K8s.node.a", "1", None, "unmeasured"),
        ("K8s.node.b", "x", None, "unmeasured"),
    ]


def test_item_readings_compare_by_position() -> None:
    old = _snap({}, items=[{"name": "n1", "ready": True}, {"name": "n2", "ready": True}])
    new = _snap({}, items=[{"name": "n1", "ready": False}])
    paths = {(c.path, c.old, c.new, c.change) for c in compare_snapshots(old, new).changes}
    assert paths == {
        ("K8s.node.items[0].ready", "true", "false", "changed"),
        ("K8s.node.items[1].name", "n2", None, "removed"),
        ("K8s.node.items[1].ready", "true", None, "removed"),
    }


def test_recipe_constraint_that_now_fails_carries_the_qualification_remedy(
    aks_recipe: Any,
) -> None:
    old = load_snapshot(str(SNAPS / "aks-h100-install.yaml"))
    new = load_snapshot(str(SNAPS / "aks-h100-none.yaml"))
    report = diff_snapshots(old, new, recipe=aks_recipe)
    assert report.drifted
    failing = report.now_failing
    assert [c.name for c in failing] == ["K8s.aks-gpu-pools.gpu-driver"]
    check = failing[0]
    assert (check.expected, check.old, check.new) == ("Install", "Install", "None")
    assert check.source == "gpuStack=azure-managed"
    # The remedy is qualification's own: the other profile value passes on this snapshot.
    assert "--profile gpuStack=operator-managed" in check.remedy
    assert "recreate the GPU pools" in check.remedy
    assert report.verdict is not None
    assert report.verdict.old_ok and not report.verdict.new_ok
    assert 'constraint "K8s.aks-gpu-pools.gpu-driver" failed' in report.verdict.new_reason
    # Constraints that still hold are reported as holding, not as failures.
    held = {c.name for c in report.constraints if c.new_status == "passed"}
    assert "K8s.server.version" in held


def test_no_drift_no_failures(aks_recipe: Any) -> None:
    old = load_snapshot(str(SNAPS / "aks-h100-install.yaml"))
    report = diff_snapshots(old, old, recipe=aks_recipe)
    assert not report.drifted and report.now_failing == []
    assert report.verdict is not None and report.verdict.old_ok and report.verdict.new_ok


def test_unmeasured_reading_makes_a_constraint_unavailable_not_passed(aks_recipe: Any) -> None:
    old = load_snapshot(str(SNAPS / "aks-h100-install.yaml"))
    new = load_snapshot(str(SNAPS / "aks-h100-no-pools.yaml"))
    report = diff_snapshots(old, new, recipe=aks_recipe)
    by_name = {c.name: c for c in report.constraints}
    pools = by_name["K8s.aks-gpu-pools.gpu-driver"]
    assert pools.new_status in ("unavailable", "failed")
    assert pools in report.now_failing
    assert "--aks-gpu-pools" in pools.remedy
