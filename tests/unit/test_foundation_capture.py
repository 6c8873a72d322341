"""``capture_offline``: projections first, then attach to the first K8s measurement."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from aicr_tui.core.capture.capture import capture_offline, project_dumps
from aicr_tui.core.documents.snapshot import Measurement, Snapshot, Subtype
from aicr_tui.core.foundation.errors import AicrError, ErrorCode

CAPTURES = Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "captures"


def base() -> Snapshot:
    return Snapshot(
        metadata={"source-node": "n"},
        measurements=[
            Measurement(type="GPU", subtypes=[Subtype(subtype="hardware", data={"gpu-count": 8})]),
            Measurement(type="K8s", subtypes=[Subtype(subtype="server", data={"version": "v1"})]),
            Measurement(type="K8s", subtypes=[]),
        ],
    )


def test_all_three_dumps_attach_to_first_k8s_measurement() -> None:
    result = capture_offline(
        aks_pools=str(CAPTURES / "aks-pools-mixed.json"),
        oke_addons=str(CAPTURES / "oke-addons-deleting.json"),
        legacy_daemonset=str(CAPTURES / "oke-legacy-daemonset-active.json"),
        base=base(),
    )
    snap = result.snapshot
    k8s = snap.measurements[1]
    assert [s.subtype for s in k8s.subtypes] == [
        "server",
        "aks-gpu-pools",
        "oke-addons",
        "oke-legacy-plugin",
    ]
    assert snap.measurements[2].subtypes == []
    assert snap.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Mixed"
    assert snap.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "addon-deleting"
    assert snap.reading("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin") == "active"
    p = result.projections
    assert p.aks_pools is not None and [x.mode for x in p.aks_pools.gpu_pools] == [
        "Install",
        "None",
    ]
    assert p.oke_addons is not None and len(p.oke_addons.addons) == 6
    assert p.legacy_plugin is not None and p.legacy_plugin.desired == 3
    assert len(p.all()) == 3
    assert result.warnings == []


def test_base_is_not_mutated() -> None:
    original = base()
    capture_offline(aks_pools=str(CAPTURES / "aks-pools-install.json"), base=original)
    assert [s.subtype for s in original.measurements[1].subtypes] == ["server"]


def test_without_base_a_fresh_snapshot_gets_a_k8s_measurement() -> None:
    result = capture_offline(oke_addons=str(CAPTURES / "oke-addons-absent.json"))
    assert [m.type for m in result.snapshot.measurements] == ["K8s"]
    assert result.snapshot.metadata["timestamp"]
    assert result.projections.aks_pools is None and result.projections.legacy_plugin is None


def test_nothing_given_is_an_empty_capture() -> None:
    result = capture_offline()
    assert result.snapshot.measurements == []
    assert result.projections.all() == []


def test_recapture_replaces_the_existing_reading() -> None:
    first = capture_offline(aks_pools=str(CAPTURES / "aks-pools-install.json"), base=base())
    second = capture_offline(aks_pools=str(CAPTURES / "aks-pools-none.json"), base=first.snapshot)
    names = [s.subtype for s in second.snapshot.measurements[1].subtypes]
    assert names.count("aks-gpu-pools") == 1
    assert second.snapshot.reading("K8s", "aks-gpu-pools", "gpu-driver") == "None"


def test_any_bad_dump_fails_before_anything_is_attached(tmp_path: Path) -> None:
    bad = tmp_path / "addons.json"
    bad.write_text('{"items": []}')
    original = base()
    with pytest.raises(AicrError) as info:
        capture_offline(
            aks_pools=str(CAPTURES / "aks-pools-install.json"), oke_addons=str(bad), base=original
        )
    assert info.value.exit_code == 2 and "no data array" in info.value.message
    assert [s.subtype for s in original.measurements[1].subtypes] == ["server"]


def test_conflicting_addon_warnings_are_surfaced(tmp_path: Path) -> None:
    dump = tmp_path / "addons.json"
    dump.write_text(
        '{"data":[{"name":"NvidiaGpuOperator","lifecycle-state":"ACTIVE"},'
        '{"name":"NvidiaNetworkOperator","lifecycle-state":"ACTIVE"}]}'
    )
    result = capture_offline(oke_addons=str(dump))
    assert len(result.warnings) == 2


def test_project_dumps_runs_each_loader() -> None:
    p = project_dumps(legacy_daemonset=str(CAPTURES / "oke-legacy-daemonsets-none.json"))
    assert p.legacy_plugin is not None and p.legacy_plugin.daemonset == "absent"
    assert p.aks_pools is None and p.oke_addons is None


def test_cancelled_capture_is_a_timeout_naming_the_dump() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(AicrError) as info:
        capture_offline(aks_pools=str(CAPTURES / "aks-pools-install.json"), cancel=cancel)
    assert info.value.code is ErrorCode.TIMEOUT and info.value.exit_code == 5
    assert "AKS GPU pools file read canceled" in info.value.message
