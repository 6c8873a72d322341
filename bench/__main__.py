"""`make bench`: run every benchmark module in turn, print their tables, then a summary.

Each module is a separate process so one benchmark's imports and caches never flatter
another's floor. A module's exit status says how it went: 0 every budget met, 1 a budget
missed (its table says which, with the measured ratio), anything else or a traceback an
error. Missing modules are reported, not silently skipped. This command exits non-zero
only when a benchmark could not run: a missed budget is a finding to report, not a crash.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

MODULES = (
    "bench.recipe_bench",
    "bench.bundle_bench",
    "bench.snapshot_bench",
    "bench.validation_bench",
    "bench.wizard_bench",
    "bench.dashboard_bench",
)
TOTAL_BUDGET_S = 120.0


def run_module(module: str) -> tuple[str, float]:
    """Run one benchmark module; return (status, wall seconds)."""
    if importlib.util.find_spec(module) is None:
        print(f"\n== {module}: not present")
        return "missing", 0.0
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", module], stderr=subprocess.PIPE, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    if "Traceback (most recent call last)" in proc.stderr or proc.returncode not in (0, 1):
        return f"error (exit {proc.returncode})", elapsed
    return ("budgets met" if proc.returncode == 0 else "budget missed, see table"), elapsed


def main() -> int:
    started = time.perf_counter()
    results = [(module, *run_module(module)) for module in MODULES]
    total = time.perf_counter() - started
    print("\n== summary")
    width = max(len(m) for m in MODULES)
    for module, status, seconds in results:
        print(f"{module:<{width}}  {seconds:6.1f}s  {status}")
    verdict = "within" if total <= TOTAL_BUDGET_S else "OVER"
    print(f"{'total':<{width}}  {total:6.1f}s  {verdict} the {TOTAL_BUDGET_S:.0f}s budget")
    broken = [m for m, status, _ in results if status == "missing" or status.startswith("error")]
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
