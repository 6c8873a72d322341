"""Capture, face against face: ``aicr-tui`` in a subprocess and the calls the wizard makes
(``aicr_tui.screens.state.WizardServices``, the defaults the app runs with) on the same files give
the same readings and fill in the same criteria.

The CLI side is ``aicr-tui snapshot --no-cluster <dumps>`` (the snapshot it writes) and
``aicr-tui recipe --snapshot <file> -v`` (its "criteria from the snapshot" note); the wizard
side opens the same files one by one as the capture screen does, loads the capture and
derives the criteria from its snapshot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.documents.snapshot import Snapshot, load_snapshot
from aicr_tui.screens.state import WizardServices, snapshot_readings
from tests.conftest import SAMPLES, run_cli

CAPTURES = SAMPLES / "captures"
SNAPSHOTS = SAMPLES / "snapshots"
DERIVED_NOTE = "aicr-tui: criteria from the snapshot: "

# (CLI flag, file) per capture: the dumps of one cluster, as a user would pass them.
DUMP_SETS: dict[str, list[tuple[str, Path]]] = {
    "aks-mixed": [("--aks-gpu-pools", CAPTURES / "aks-pools-mixed.json")],
    "aks-managed": [("--aks-gpu-pools", CAPTURES / "aks-pools-managed.json")],
    "oke-deleting-legacy-none": [
        ("--oke-addons", CAPTURES / "oke-addons-deleting.json"),
        ("--oke-legacy-daemonset", CAPTURES / "oke-legacy-daemonsets-none.json"),
    ],
    "oke-absent-legacy-active": [
        ("--oke-addons", CAPTURES / "oke-addons-absent.json"),
        ("--oke-legacy-daemonset", CAPTURES / "oke-legacy-daemonset-active.json"),
    ],
}


def wizard_capture(paths: list[Path]) -> tuple[Snapshot, dict[str, str | None], tuple[str, ...]]:
    """Open each file as the capture screen does, then load and derive (no user choices)."""
    services = WizardServices()
    files: dict[str, str] = {}
    snapshot = None
    for path in paths:
        opened = services.open_file(str(path), files, snapshot)
        files = dict(opened.capture.files)
        snapshot = services.load_capture(files).snapshot
    assert snapshot is not None
    criteria, derived = services.derive_criteria(snapshot, {})
    return snapshot, criteria, derived


def cli_derived(snapshot_file: Path) -> dict[str, str]:
    """The criteria ``aicr-tui recipe --snapshot`` filled in from the snapshot (-v note)."""
    proc = run_cli("recipe", "--intent", "training", "--snapshot", str(snapshot_file), "-v")
    notes = [line for line in proc.stderr.splitlines() if line.startswith(DERIVED_NOTE)]
    if not notes:
        return {}
    assert len(notes) == 1, proc.stderr
    listed = notes[0][len(DERIVED_NOTE) :].split(" (a stated value wins)")[0]
    return dict(pair.split("=", 1) for pair in listed.split(", "))


@pytest.mark.parametrize("name", sorted(DUMP_SETS))
def test_provider_dumps_give_the_same_readings_and_criteria(name: str, tmp_path: Path) -> None:
    flags = [part for flag, path in DUMP_SETS[name] for part in (flag, str(path))]
    written = tmp_path / "snapshot.yaml"
    proc = run_cli("snapshot", "--no-cluster", *flags, "-o", str(written))
    assert proc.returncode == 0, proc.stderr
    cli_snapshot = load_snapshot(str(written))

    snapshot, criteria, derived = wizard_capture([path for _, path in DUMP_SETS[name]])
    # the same readings (a written snapshot orders each subtype's keys; memory need not)
    assert sorted(snapshot_readings(snapshot)) == sorted(snapshot_readings(cli_snapshot))
    assert snapshot_readings(cli_snapshot), "the capture holds no reading at all"
    assert {d: criteria[d] for d in derived} == cli_derived(written)
    assert derived, "a provider dump names its service"


@pytest.mark.parametrize(
    "snapshot_name", ["aks-h100-install.yaml", "oke-gb200-absent-legacy-active.yaml"]
)
def test_a_snapshot_file_fills_in_the_same_criteria(snapshot_name: str) -> None:
    path = SNAPSHOTS / snapshot_name
    snapshot, criteria, derived = wizard_capture([path])
    assert snapshot_readings(snapshot) == snapshot_readings(load_snapshot(str(path)))
    from_cli = cli_derived(path)
    assert {d: criteria[d] for d in derived} == from_cli
    assert set(from_cli) == {"service", "accelerator", "os"}


def test_a_dump_added_to_a_snapshot_is_what_the_cli_reads_from_both(tmp_path: Path) -> None:
    """The wizard adds a dump to the snapshot it has open; ``recipe --snapshot`` of the
    CLI's snapshot of that dump reads the same provider reading."""
    base = SNAPSHOTS / "aks-h100-no-pools.yaml"
    dump = CAPTURES / "aks-pools-none.json"
    snapshot, criteria, derived = wizard_capture([base, dump])
    written = tmp_path / "pools.yaml"
    proc = run_cli("snapshot", "--no-cluster", "--aks-gpu-pools", str(dump), "-o", str(written))
    assert proc.returncode == 0, proc.stderr
    cli_pools = load_snapshot(str(written)).subtype("K8s", "aks-gpu-pools")
    assert cli_pools is not None
    wizard_pools = snapshot.subtype("K8s", "aks-gpu-pools")
    assert wizard_pools is not None and wizard_pools.data == cli_pools.data
    assert wizard_pools.data["gpu-driver"] == "None"
    assert (criteria["service"], criteria["accelerator"], criteria["os"]) == (
        "aks",
        "h100",
        "ubuntu",
    )
    assert set(derived) == {"service", "accelerator", "os"}
