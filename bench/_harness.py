"""Shared measurement helpers for the benchmarks.

Machines here are shared and noisy, so nothing is judged by absolute time: every figure is
taken side by side with a floor measured in the same run, interleaved, and reported as a
median and a ratio.
"""

from __future__ import annotations

import os
import resource
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
    """Run one process; return (wall seconds, peak RSS of that child in KiB)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(
        argv, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(after, before)


def paired_process_medians(
    subject: Sequence[str], floor: Sequence[str], *, repeat: int = 7
) -> tuple[float, float]:
    """Interleave subject and floor runs so machine noise hits both alike; return medians."""
    s_times, f_times = [], []
    for _ in range(repeat):
        f_times.append(run_process(floor)[0])
        s_times.append(run_process(subject)[0])
    return statistics.median(s_times), statistics.median(f_times)


def import_floor(modules: Sequence[str]) -> list[str]:
    """A process that only imports ``modules`` — the floor for a whole-process command."""
    code = "; ".join(f"import {m}" for m in modules) or "pass"
    return [sys.executable, "-c", code]


def print_table(title: str, rows: Sequence[Row]) -> None:
    print(f"\n== {title}")
    print(f"{'measure':<52} {'value':>12} {'floor':>12} {'ratio':>7}  budget")
    for r in rows:
        floor = "" if r.floor is None else f"{r.floor:.4g}"
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}x"
        print(
            f"{r.name:<52} {r.value:>9.4g} {r.unit:<2} {floor:>12} {ratio:>7}  {r.budget} {r.note}".rstrip()
        )
