"""What the one-shot command benchmarks (recipe, query, snapshot, bundle) share.

Each of them times whole ``aicr-tui`` processes against the third-party floor
``python -c "import pydantic, ruamel.yaml"``, interleaved in the same run, and runs the
same way (compiled bytecode, private warmed catalog cache, one table or ``make bench``
rows). Their helpers and this module's two functions are all a bench module imports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench._harness import (
    CACHE_ENV,
    REPO,
    Row,
    cli,
    heavy_modules_row,
    library_floor,
    load_note,
    median_time,
    missed,
    paired_process_runs,
    prepare_environment,
    ratio_budget,
    report,
    run_process,
)

__all__ = [
    "CACHE_ENV",
    "REPO",
    "Row",
    "cli",
    "heavy_modules_row",
    "library_floor",
    "median_time",
    "run_bench",
    "run_process",
    "versus_floor",
]

FLOOR_NOTE = "floor = import pydantic, ruamel.yaml"


def versus_floor(
    label: str, argv: Sequence[str], *, repeat: int, budget: float | None = None, note: str = ""
) -> Row:
    """Median wall time of ``argv`` beside the library floor (pairs interleaved), as a
    row budgeted at ``budget`` times the floor (information when None)."""
    runs = paired_process_runs(argv, library_floor(), repeat=repeat)
    limits = ratio_budget(budget) if budget is not None else {}
    return Row(
        label,
        runs.subject_s * 1e3,
        "ms",
        floor=runs.floor_s * 1e3,
        note=note or f"{FLOOR_NOTE}; {load_note()}",
        **limits,  # type: ignore[arg-type]
    )


def run_bench(title: str, collect: Callable[[], list[Row]]) -> int:
    """Prepare the environment, collect the rows, print (or hand over) the table; exit 1
    when a budget is missed (reported, not fatal)."""
    prepare_environment()
    rows = collect()
    report(title, rows)
    return 1 if missed(rows) else 0
