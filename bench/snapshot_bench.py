"""Offline capture benchmark: ``aicr-tui snapshot --no-cluster`` with provider dumps.

1. Whole process: ``aicr-tui snapshot --no-cluster --aks-gpu-pools F --oke-addons F -o out``
   (bounded reads, both projections, render, atomic write) beside a process that only
   imports the modules the command loads (the floor), interleaved; the recipe command's
   budget (<= 1.5x its import floor) applies. A second floor, the third-party libraries
   alone, is shown for information. Peak RSS of each process is measured with ``wait4``.
2. In-process: projecting each sample dump and a whole ``capture_offline`` + render, the
   work the wizard's capture screen repeats when a file is loaded (information, no budget).
3. Lazy imports: an offline capture must not load cloud SDKs or the UI.

Run: ``python -m bench.snapshot_bench``. Not a timed test.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench._harness import (
    BIN,
    REPO,
    Row,
    import_floor,
    median_time,
    paired_process_runs,
    print_table,
)

CAPTURES = REPO / "recipes" / "samples" / "captures"
AKS_DUMP = CAPTURES / "aks-pools-mixed.json"
OKE_DUMP = CAPTURES / "oke-addons-active.json"
LEGACY_DUMP = CAPTURES / "oke-legacy-daemonset-active.json"
REPEAT = 7

# What `aicr-tui snapshot --no-cluster` loads (checked by the lazy-import row below).
SAME_MODULES = (
    "pydantic.main",
    "ruamel.yaml",
    "aicr_tui.cli",
    "aicr_tui.commands.snapshot",
    "core.capture.capture",
    "core.documents.snapshot",
    "core.foundation.yamlio",
    "core.foundation.fileio",
)
LIBRARIES = ("pydantic.main", "ruamel.yaml")


def cli() -> list[str]:
    exe = BIN / "aicr-tui"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "aicr_tui"]


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
    same = paired_process_runs(subject, import_floor(SAME_MODULES), repeat=REPEAT)
    libs = paired_process_runs(subject, import_floor(LIBRARIES), repeat=3)
    return [
        Row(
            "aicr-tui snapshot / import of modules it needs",
            same.subject_s * 1e3,
            "ms",
            floor=same.floor_s * 1e3,
            budget="<= 1.5x",
        ),
        Row(
            "aicr-tui snapshot / import of pydantic+ruamel only",
            libs.subject_s * 1e3,
            "ms",
            floor=libs.floor_s * 1e3,
            note="(info, median of 3: includes importing our models)",
        ),
        Row(
            "peak RSS: aicr-tui snapshot / import floor",
            same.subject_rss_kib / 1024,
            "MiB",
            floor=same.floor_rss_kib / 1024,
            note="(info: max over the runs)",
        ),
    ]


def in_process_rows() -> list[Row]:
    from core.capture.aks_pools import project_aks_pools
    from core.capture.capture import capture_offline
    from core.capture.oke_addons import project_oke_addons
    from core.capture.oke_legacy import project_legacy_daemonset
    from core.documents.snapshot import render_snapshot

    aks, oke, legacy = AKS_DUMP.read_bytes(), OKE_DUMP.read_bytes(), LEGACY_DUMP.read_bytes()
    rows = [
        Row(
            f"project {AKS_DUMP.name} ({len(aks)} B)",
            median_time(lambda: project_aks_pools(aks, "aks"), repeat=300) * 1e3,
            "ms",
        ),
        Row(
            f"project {OKE_DUMP.name} ({len(oke)} B)",
            median_time(lambda: project_oke_addons(oke, "oke"), repeat=300) * 1e3,
            "ms",
        ),
        Row(
            f"project {LEGACY_DUMP.name} ({len(legacy)} B)",
            median_time(lambda: project_legacy_daemonset(legacy, "legacy"), repeat=300) * 1e3,
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
            median_time(capture_and_render, repeat=100) * 1e3,
            "ms",
        )
    )
    return rows


def lazy_import_row(workdir: Path) -> Row:
    code = (
        "import sys\nfrom aicr_tui.cli import main\n"
        f"main({snapshot_args(workdir / 'lazy.yaml')!r})\n"
        "print(len([m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes','azure','oci','textual','rich')]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    count = int(out.stdout.strip() or "-1")
    return Row("cloud SDK / UI modules imported by snapshot --no-cluster", count, "", budget="0")


BUDGET_RATIO = 1.5


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="aicr-snapshot-bench-") as tmp:
        workdir = Path(tmp)
        process, lazy = process_rows(workdir), lazy_import_row(workdir)
        whole = process[0]
        met = whole.ratio is not None and whole.ratio <= BUDGET_RATIO and lazy.value == 0
        whole.note = "PASS" if whole.ratio is not None and whole.ratio <= BUDGET_RATIO else "FAIL"
        print_table(
            f"offline capture: whole process (median of {REPEAT}, interleaved)",
            [*process, lazy],
        )
    print_table("offline capture: in-process projections (median)", in_process_rows())
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
