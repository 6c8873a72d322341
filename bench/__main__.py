"""`make bench`: run every benchmark module in turn, then print ONE table of every figure,
its floor, ratio, budget and verdict, and a summary of the run.

Each module is a separate process so one benchmark's imports and caches never flatter
another's floor; it appends its rows to a file this command reads back ($AICR_BENCH_ROWS).
A module's exit status says how it went: 0 every budget met, 1 a budget missed (the table
says which, with the measured ratio), anything else or a traceback an error. Missing
modules are reported, not silently skipped. This command exits non-zero only when a
benchmark could not run: a missed budget is a finding to report, not a crash.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._harness import (
    GUARD_NOTE,
    MAX_PAIRS_ENV,
    ROWS_ENV,
    Row,
    cli,
    library_floor,
    paired_process_runs,
    prepare_environment,
    print_table,
)

MODULES = (
    "bench.recipe_bench",
    "bench.bundle_bench",
    "bench.snapshot_bench",
    "bench.validation_bench",
    "bench.wizard_bench",
    "bench.dashboard_bench",
)
TOTAL_BUDGET_S = 120.0
# Interleaved subject/floor process pairs per whole-process measurement under `make bench`.
MAX_PAIRS = 9


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_module(module: str) -> tuple[str, float]:
    """Run one benchmark module; return (status, wall seconds)."""
    if importlib.util.find_spec(module) is None:
        print(f"\n== {module}: not present")
        return "missing", 0.0
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    env = dict(os.environ)
    env.setdefault(MAX_PAIRS_ENV, str(MAX_PAIRS))
    proc = subprocess.run(
        [sys.executable, "-m", module], stderr=subprocess.PIPE, text=True, check=False, env=env
    )
    elapsed = time.perf_counter() - started
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    cpu = f"cpu {children_cpu_s() - cpu_before:5.1f}s"
    if "Traceback (most recent call last)" in proc.stderr or proc.returncode not in (0, 1):
        return f"{cpu}  error (exit {proc.returncode})", elapsed
    # A module signals a missed budget by exiting 1; one that always exits 0 is judged by
    # its table alone, so the label says only what the exit status says.
    verdict = "exit 0" if proc.returncode == 0 else "exit 1: a budget missed, see its table"
    return f"{cpu}  {verdict}", elapsed


RECIPE_ARGS = (
    "recipe",
    "--service=aks",
    "--accelerator=h100",
    "--os=ubuntu",
    "--intent=training",
)


def memory_rows() -> list[Row]:
    """Peak RSS of each whole-process command beside its floor (one paired run: RSS is steady)."""
    from bench.snapshot_bench import snapshot_args

    exe = cli()
    rows = []
    with tempfile.TemporaryDirectory(prefix="aicr-bench-memory-") as tmp:
        work = Path(tmp)
        recipe = work / "recipe.yaml"
        subprocess.run([*exe, *RECIPE_ARGS, "-o", str(recipe)], check=True)
        wizard = [sys.executable, "-m", "bench.wizard_bench", "--child"]
        libs = library_floor()
        cases = (
            ("aicr-tui recipe", [*exe, *RECIPE_ARGS, "-o", str(work / "r.yaml")], libs,
             "import pydantic, ruamel.yaml"),
            ("aicr-tui bundle", [*exe, "bundle", "-r", str(recipe), "-o", str(work / "b"),
             "--force", "--accelerated-node-toleration=nvidia.com/gpu:NoSchedule"], libs,
             "import pydantic, ruamel.yaml"),
            ("aicr-tui snapshot --no-cluster", [*exe, *snapshot_args(work / "s.yaml")], libs,
             "import pydantic, ruamel.yaml"),
            ("wizard to first screen (headless 80x24)", [*wizard, "wizard"], [*wizard, "bare"],
             "bare Textual app"),
        )  # fmt: skip
        for label, subject, floor, floor_name in cases:
            runs = paired_process_runs(subject, floor, repeat=1)
            rows.append(
                Row(
                    f"peak RSS: {label}",
                    runs.subject_rss_kib / 1024,
                    "MiB",
                    floor=runs.floor_rss_kib / 1024,
                    note=f"floor = {floor_name}",
                )
            )
    return rows


def collected(path: str) -> tuple[list[Row], list[str]]:
    rows, sections = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            sections.append(data.pop("section"))
            rows.append(Row(**data))
    return rows, sections


def main() -> int:
    started = time.perf_counter()
    prepare_environment()  # compiled bytecode and one warmed private catalog cache for all
    fd, rows_file = tempfile.mkstemp(prefix="aicr-bench-rows-", suffix=".jsonl")
    os.close(fd)
    os.environ[ROWS_ENV] = rows_file
    results = []
    for module in MODULES:
        print(f"running {module} ...", flush=True)
        results.append((module, *run_module(module)))
    memory: list[Row] = []
    try:
        mem_started, cpu_before = time.perf_counter(), children_cpu_s()
        print("running peak memory ...", flush=True)
        memory = memory_rows()
        cpu = children_cpu_s() - cpu_before
        results.append(
            ("peak memory", f"cpu {cpu:5.1f}s  measured", time.perf_counter() - mem_started)
        )
    except Exception as exc:  # report and go on: the module tables above still stand
        print(f"\n== peak memory: could not measure: {exc}")
        results.append(("peak memory", "error", 0.0))
    rows, sections = collected(rows_file)
    os.unlink(rows_file)
    rows += memory
    sections += ["peak memory (wait4 ru_maxrss, one paired run)"] * len(memory)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print_table(f"make bench: every figure, its floor and budget (load {load})", rows,
                sections=sections)  # fmt: skip
    met = sum(1 for r in rows if r.verdict == "met")
    missed = [r.name for r in rows if r.verdict == "MISSED"]
    print(
        f"\nbudgets met: {met}; missed: {len(missed)}"
        + (f" ({'; '.join(missed)})" if missed else "")
    )
    print(f"({GUARD_NOTE})")
    total = time.perf_counter() - started
    print("\n== summary")
    width = max(len(m) for m, _, _ in results)
    for module, status, seconds in results:
        print(f"{module:<{width}}  {seconds:6.1f}s  {status}")
    verdict = "within" if total <= TOTAL_BUDGET_S else "OVER"
    cpu_total = children_cpu_s()
    print(
        f"{'total':<{width}}  {total:6.1f}s  cpu {cpu_total:5.1f}s  {verdict} the "
        f"{TOTAL_BUDGET_S:.0f}s budget (cpu ~ wall on an idle machine: the runs are serial)"
    )
    pairs = os.environ.get(MAX_PAIRS_ENV, str(MAX_PAIRS))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"(process pairs per measurement capped at {pairs} via {MAX_PAIRS_ENV}; load {load})")
    broken = [m for m, status, _ in results if status == "missing" or "error" in status]
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
