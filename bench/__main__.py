"""`make bench`: run every benchmark module in turn and print their tables.

Each module is a separate process so one benchmark's imports and caches never flatter
another's floor. Modules that are missing are reported, not silently skipped.
"""

from __future__ import annotations

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


def main() -> int:
    started = time.perf_counter()
    failures = 0
    for module in MODULES:
        try:
            __import__(module)
        except ModuleNotFoundError:
            print(f"\n== {module}: not present")
            failures += 1
            continue
        proc = subprocess.run([sys.executable, "-m", module], check=False)
        if proc.returncode != 0:
            print(f"{module}: exited {proc.returncode}")
            failures += 1
    print(f"\nbench finished in {time.perf_counter() - started:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
