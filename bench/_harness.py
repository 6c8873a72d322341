"""Shared measurement helpers for the benchmarks.

Machines here are shared and noisy, so nothing is judged by absolute time: every figure is
taken side by side with a floor measured in the same run, interleaved, and reported as a
median and a ratio.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass
class Row:
    name: str
    value: float
    unit: str
    floor: float | None = None
    budget: str = ""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.floor in (None, 0):
            return None
        return self.value / self.floor  # type: ignore[operator]


def median_time(fn: Callable[[], object], *, repeat: int = 200, warmup: int = 5) -> float:
    """Median wall time of ``fn`` in seconds over ``repeat`` runs."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def run_process(argv: Sequence[str], *, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Run one process; return (wall seconds, peak RSS of that very child in KiB).

    ``os.wait4`` reports the child's own rusage; ``RUSAGE_CHILDREN`` would give the largest
    child so far, so a small command run after a big one would inherit the big one's peak.
    """
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, int(usage.ru_maxrss)


@dataclass
class PairedRuns:
    """Interleaved subject/floor runs: median wall seconds and the largest peak RSS (KiB)."""

    subject_s: float
    floor_s: float
    subject_rss_kib: int
    floor_rss_kib: int


MAX_PAIRS_ENV = "AICR_BENCH_MAX_PAIRS"


def capped_pairs(repeat: int) -> int:
    """``repeat``, capped by $AICR_BENCH_MAX_PAIRS (``make bench`` sets it so the whole run
    fits its two minutes; a module run alone keeps its own count)."""
    raw = os.environ.get(MAX_PAIRS_ENV, "")
    cap = int(raw) if raw.isdigit() and int(raw) > 0 else repeat
    return max(1, min(repeat, cap))


def paired_process_runs(
    subject: Sequence[str], floor: Sequence[str], *, repeat: int = 7
) -> PairedRuns:
    """Interleave subject and floor runs so machine noise hits both alike."""
    s_times, f_times, s_rss, f_rss = [], [], [], []
    for _ in range(capped_pairs(repeat)):
        ft, fr = run_process(floor)
        st, sr = run_process(subject)
        f_times.append(ft)
        f_rss.append(fr)
        s_times.append(st)
        s_rss.append(sr)
    return PairedRuns(
        statistics.median(s_times), statistics.median(f_times), max(s_rss), max(f_rss)
    )


def paired_process_medians(
    subject: Sequence[str], floor: Sequence[str], *, repeat: int = 7
) -> tuple[float, float]:
    """Interleave subject and floor runs so machine noise hits both alike; return medians."""
    runs = paired_process_runs(subject, floor, repeat=repeat)
    return runs.subject_s, runs.floor_s


def import_floor(modules: Sequence[str]) -> list[str]:
    """A process that only imports ``modules`` — the floor for a whole-process command."""
    code = "; ".join(f"import {m}" for m in modules) or "pass"
    return [sys.executable, "-c", code]


def print_table(title: str, rows: Sequence[Row]) -> None:
    print(f"\n== {title}")
    width = max([len("measure"), *(len(r.name) for r in rows)])
    print(f"{'measure':<{width}} {'value':>12}    {'floor':>10} {'ratio':>8}  budget")
    for r in rows:
        floor = "" if r.floor is None else f"{r.floor:.4g}"
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}x"
        line = f"{r.name:<{width}} {r.value:>12.4g} {r.unit:<3} {floor:>10} {ratio:>8}  {r.budget} {r.note}"
        print(line.rstrip(), flush=True)
