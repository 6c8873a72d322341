"""Shared measurement helpers for the benchmarks.

Machines here are shared and noisy, so nothing is judged by absolute time: every figure is
taken side by side with a floor measured in the same run, interleaved, and reported as a
median and a ratio.

The floor of an offline one-shot command is the third-party libraries it cannot do without,
``python -c "import pydantic, ruamel.yaml"``, never our own modules: importing and building
our models is part of what the command costs. Whole-process runs use a private catalog parse
cache, warmed once (a user's steady state; the shared ``~/.cache/aicr-tui`` is evicted by
every other checkout's test run), and bytecode compiled for the project's packages, as an
installed wheel has it (this environment sets ``PYTHONDONTWRITEBYTECODE``, under which every
run would otherwise recompile our sources while the libraries' bytecode is cached).

A module run alone prints its own table. Under ``make bench`` (``$AICR_BENCH_ROWS`` set) it
appends its rows as JSON lines to that file instead, and ``bench/__main__`` prints one table.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ROWS_ENV = "AICR_BENCH_ROWS"
MAX_PAIRS_ENV = "AICR_BENCH_MAX_PAIRS"
CACHE_ENV = "AICR_TUI_CACHE_DIR"

# The third-party floor of every offline one-shot command (recipe, query, snapshot, bundle).
LIBRARIES = ("pydantic", "ruamel.yaml")
# Top-level packages an offline one-shot command must never import.
HEAVY = ("kubernetes", "azure", "oci", "textual", "rich", "jsonschema", "kubernetes_validate")


def one_minute_load() -> float:
    return os.getloadavg()[0]


@dataclass
class Row:
    """One figure. ``limit`` with ``check`` makes it a budget: ``ratio`` (value/floor <=
    limit), ``max`` (value <= limit) or ``min`` (value >= limit); without, information.
    ``load`` is the machine's 1-minute load average when the figure was taken (the table
    prints it beside each figure: on a shared machine wall times follow it)."""

    name: str
    value: float
    unit: str
    floor: float | None = None
    budget: str = ""
    note: str = ""
    limit: float | None = None
    check: str = ""
    load: float = field(default_factory=one_minute_load)

    @property
    def ratio(self) -> float | None:
        if self.floor in (None, 0):
            return None
        return self.value / self.floor  # type: ignore[operator]

    @property
    def verdict(self) -> str:
        if self.limit is None or not self.check:
            return ""
        if self.check == "ratio":
            measured = self.ratio
            return "" if measured is None else ("met" if measured <= self.limit else "MISSED")
        if self.check == "max":
            return "met" if self.value <= self.limit else "MISSED"
        return "met" if self.value >= self.limit else "MISSED"


# Printed under every table: a budget guards against a regression; it is not a target to
# optimise for (issue 36: a start-up budget once rewarded re-implementing libraries).
GUARD_NOTE = (
    "budgets are guards against regressions, not goals: none may be met by re-implementing "
    "a library or importing a private module; a missed one is reported with its cost"
)


def ratio_budget(limit: float, what: str = "floor") -> dict[str, object]:
    return {"limit": limit, "check": "ratio", "budget": f"<= {limit:g}x {what}"}


def cli() -> list[str]:
    exe = BIN / "aicr-tui"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "aicr_tui"]


def prepare_environment() -> None:
    """Compile the project's bytecode and give this run a private catalog cache (inherited
    by every child process); see the module docstring for why."""
    for package in ("aicr_tui", "bench"):
        compileall.compile_dir(str(REPO / package), quiet=1, workers=1)
    if not os.environ.get(CACHE_ENV):
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="aicr-bench-cache-")


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


Env = dict[str, str | None]  # variables to set; None removes one from the child's environment


def run_process(argv: Sequence[str], *, env: Env | None = None) -> tuple[float, int]:
    """Run one process; return (wall seconds, peak RSS of that very child in KiB).

    ``os.wait4`` reports the child's own rusage; ``RUSAGE_CHILDREN`` would give the largest
    child so far, so a small command run after a big one would inherit the big one's peak.
    A command that fails is an error of the benchmark, not a fast run.
    """
    usage = process_usage(argv, env=env)
    return usage.wall_s, usage.rss_kib


@dataclass
class Usage:
    """What one process cost: wall seconds, CPU seconds (user + system, all its threads)
    and peak RSS in KiB. CPU is what load on a shared machine inflates least."""

    wall_s: float
    cpu_s: float
    rss_kib: int


def process_usage(argv: Sequence[str], *, env: Env | None = None) -> Usage:
    """Run one process (see ``run_process``) and return its ``Usage``."""
    full_env = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"benchmark command failed (exit {code}): {' '.join(argv)}")
    return Usage(elapsed, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss))


@dataclass
class PairedRuns:
    """Interleaved subject/floor runs: median wall and CPU seconds, the largest peak RSS
    (KiB)."""

    subject_s: float
    floor_s: float
    subject_rss_kib: int
    floor_rss_kib: int
    subject_cpu_s: float = 0.0
    floor_cpu_s: float = 0.0


def capped_pairs(repeat: int) -> int:
    """``repeat``, capped by $AICR_BENCH_MAX_PAIRS (``make bench`` sets it so the whole run
    fits its two minutes; a module run alone keeps its own count)."""
    raw = os.environ.get(MAX_PAIRS_ENV, "")
    cap = int(raw) if raw.isdigit() and int(raw) > 0 else repeat
    return max(1, min(repeat, cap))


def paired_process_runs(
    subject: Sequence[str], floor: Sequence[str], *, repeat: int = 7, env: Env | None = None
) -> PairedRuns:
    """Interleave subject and floor runs so machine noise hits both alike (``env`` changes
    the subject's environment only)."""
    subjects: list[Usage] = []
    floors: list[Usage] = []
    for _ in range(capped_pairs(repeat)):
        floors.append(process_usage(floor))
        subjects.append(process_usage(subject, env=env))
    med = statistics.median
    return PairedRuns(
        med(u.wall_s for u in subjects),
        med(u.wall_s for u in floors),
        max(u.rss_kib for u in subjects),
        max(u.rss_kib for u in floors),
        med(u.cpu_s for u in subjects),
        med(u.cpu_s for u in floors),
    )


def paired_process_medians(
    subject: Sequence[str], floor: Sequence[str], *, repeat: int = 7
) -> tuple[float, float]:
    """Interleave subject and floor runs so machine noise hits both alike; return medians."""
    runs = paired_process_runs(subject, floor, repeat=repeat)
    return runs.subject_s, runs.floor_s


def import_floor(modules: Sequence[str]) -> list[str]:
    """A process that only imports ``modules`` — the floor for a whole-process command."""
    code = ", ".join(modules)
    return [sys.executable, "-c", f"import {code}" if code else "pass"]


def library_floor() -> list[str]:
    """``python -c "import pydantic, ruamel.yaml"``: the floor of the offline commands."""
    return import_floor(LIBRARIES)


def heavy_modules_row(label: str, argv: Sequence[str]) -> Row:
    """How many cloud SDK / UI / schema-validator modules a one-shot command imports."""
    code = (
        "import sys\nfrom aicr_tui.cli import main\n"
        f"rc = main({list(argv)!r})\n"
        f"print(rc, len([m for m in sys.modules if m.split('.')[0] in {HEAVY!r}]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    rc, _, count = out.stdout.strip().rpartition("\n")[2].partition(" ")
    if rc != "0" or not count.isdigit():
        raise RuntimeError(f"{label}: could not count imports: {out.stderr.strip()[-300:]}")
    return Row(
        f"{label}: cloud SDK / UI modules imported",
        float(count),
        "",
        budget="0",
        limit=0,
        check="max",
    )


def load_note() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def report(title: str, rows: Sequence[Row]) -> None:
    """Print the table, or hand the rows to ``make bench``'s single table."""
    target = os.environ.get(ROWS_ENV)
    if not target:
        print_table(title, rows)
        return
    with open(target, "a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({"section": title, **asdict(row)}) + "\n")


def missed(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.verdict == "MISSED"]


def cost(row: Row) -> str:
    """What a missed budget costs, in the row's unit: how far past its limit it is."""
    if row.check == "ratio" and row.floor and row.ratio is not None and row.limit is not None:
        allowed = row.floor * row.limit
        return (
            f"{row.value:.4g} {row.unit} = {row.ratio:.2f}x the floor ({row.floor:.4g} {row.unit}); "
            f"the {row.limit:g}x guard allows {allowed:.4g} {row.unit}: "
            f"{row.value - allowed:.4g} {row.unit} over"
        )
    if row.limit is not None:
        return f"{row.value:.4g} {row.unit} against {row.budget}: {abs(row.value - row.limit):.4g} {row.unit} past it"
    return f"{row.value:.4g} {row.unit}"


def print_table(title: str, rows: Sequence[Row], *, sections: Sequence[str] = ()) -> None:
    print(f"\n== {title}")
    print(f"({GUARD_NOTE})")
    width = max([len("measure"), *(len(r.name) for r in rows)])
    print(
        f"{'measure':<{width}} {'value':>11}     {'floor':>9} {'ratio':>7}  {'budget':<24} "
        f"{'verdict':<7} {'load':>4}  note"
    )
    current = None
    for i, r in enumerate(rows):
        if sections and sections[i] != current:
            current = sections[i]
            print(f"-- {current}")
        floor = "" if r.floor is None else f"{r.floor:.4g}"
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}x"
        verdict = r.verdict or ("info" if not r.budget else "")
        line = (
            f"{r.name:<{width}} {r.value:>11.4g} {r.unit:<4} {floor:>9} {ratio:>7}  "
            f"{r.budget:<24} {verdict:<7} {r.load:>4.1f}  {r.note}"
        )
        print(line.rstrip(), flush=True)
    for r in rows:
        if r.verdict == "MISSED":
            print(f"MISSED {r.name}: {cost(r)}", flush=True)
