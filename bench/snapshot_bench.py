"""Offline capture benchmark: ``aicr-tui snapshot --no-cluster`` with provider dumps.

1. Whole process: ``aicr-tui snapshot --no-cluster --aks-gpu-pools F --oke-addons F -o out``
   (bounded reads, both projections, render, atomic write) interleaved with the
   third-party floor ``python -c "import pydantic, ruamel.yaml"``; budget <= 1.25x. Peak
   RSS of each process is measured with ``wait4``.
2. In-process: projecting each sample dump and a whole ``capture_offline`` + render, the
   work the wizard's capture screen repeats when a file is loaded (information, no budget).
3. Lazy imports: an offline capture must not load cloud SDKs, the UI or a schema validator.

Run: ``python -m bench.snapshot_bench``. Not a timed test.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bench._harness import REPO, Row, cli, heavy_modules_row, median_time
from bench._oneshot import run_bench, versus_floor

CAPTURES = REPO / "aicr_tui" / "recipes" / "samples" / "captures"
AKS_DUMP = CAPTURES / "aks-pools-mixed.json"
OKE_DUMP = CAPTURES / "oke-addons-active.json"
LEGACY_DUMP = CAPTURES / "oke-legacy-daemonset-active.json"
REPEAT = 9
BUDGET = 1.25


def snapshot_args(out: Path) -> list[str]:
    return [
        "snapshot",
        "--no-cluster",
        "--aks-gpu-pools",
        str(AKS_DUMP),
        "--oke-addons",
        str(OKE_DUMP),
        "-o",
        str(out),
    ]


def process_rows(workdir: Path) -> list[Row]:
    subject = [*cli(), *snapshot_args(workdir / "snapshot.yaml")]
    check = subprocess.run(subject, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise SystemExit(f"aicr-tui snapshot failed: {check.stderr.strip()}")
    label = "aicr-tui snapshot --no-cluster (2 dumps)"
    return [versus_floor(label, subject, repeat=REPEAT, budget=BUDGET)]


def in_process_rows() -> list[Row]:
    from aicr_tui.core.capture.aks_pools import project_aks_pools
    from aicr_tui.core.capture.capture import capture_offline
    from aicr_tui.core.capture.oke_addons import project_oke_addons
    from aicr_tui.core.capture.oke_legacy import project_legacy_daemonset
    from aicr_tui.core.documents.snapshot import render_snapshot

    aks, oke, legacy = AKS_DUMP.read_bytes(), OKE_DUMP.read_bytes(), LEGACY_DUMP.read_bytes()
    rows = [
        Row(
            f"project {AKS_DUMP.name} ({len(aks)} B)",
            median_time(lambda: project_aks_pools(aks, "aks"), repeat=100) * 1e3,
            "ms",
        ),
        Row(
            f"project {OKE_DUMP.name} ({len(oke)} B)",
            median_time(lambda: project_oke_addons(oke, "oke"), repeat=100) * 1e3,
            "ms",
        ),
        Row(
            f"project {LEGACY_DUMP.name} ({len(legacy)} B)",
            median_time(lambda: project_legacy_daemonset(legacy, "legacy"), repeat=100) * 1e3,
            "ms",
        ),
    ]

    def capture_and_render() -> str:
        result = capture_offline(
            aks_pools=str(AKS_DUMP), oke_addons=str(OKE_DUMP), legacy_daemonset=str(LEGACY_DUMP)
        )
        return render_snapshot(result.snapshot)

    rows.append(
        Row(
            "capture_offline (3 dumps, bounded reads) + render YAML",
            median_time(capture_and_render, repeat=40) * 1e3,
            "ms",
        )
    )
    return rows


def collect() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="aicr-snapshot-bench-") as tmp:
        workdir = Path(tmp)
        rows = process_rows(workdir)
        rows.append(heavy_modules_row("snapshot --no-cluster", snapshot_args(workdir / "l.yaml")))
    return rows + in_process_rows()


def main() -> int:
    return run_bench("snapshot --no-cluster", collect)


if __name__ == "__main__":
    raise SystemExit(main())
