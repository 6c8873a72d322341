"""What the one-shot command benchmarks (recipe, query, snapshot, bundle) share.

Each of them times whole ``aicr-tui`` processes against the third-party floor
``python -c "import pydantic, ruamel.yaml"``, interleaved in the same run, and runs the
same way (compiled bytecode, private warmed catalog cache, one table or ``make bench``
rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench import _harness
from bench._harness import Row

FLOOR_NOTE = "floor = import pydantic, ruamel.yaml"
# ``recipe`` and ``bundle`` (and ``query``) as whole processes: at most twice the floor. A
# guard against regressions, not a goal: using pydantic and ruamel.yaml as designed costs a
# few tens of milliseconds, and that is worth it (issue 36 withdrew the 1.25x/1.5x budgets,
# which rewarded re-implementing the libraries).
WHOLE_PROCESS_GUARD = 2.0


def versus_floor(
    label: str,
    argv: Sequence[str],
    *,
    repeat: int,
    budget: float | None = None,
    note: str = "",
    env: _harness.Env | None = None,
) -> Row:
    """Median wall time of ``argv`` beside the library floor (pairs interleaved), as a
    row budgeted at ``budget`` times the floor (information when None); ``env`` changes
    the command's environment."""
    runs = _harness.paired_process_runs(argv, _harness.library_floor(), repeat=repeat, env=env)
    limits = _harness.ratio_budget(budget) if budget is not None else {}
    return Row(
        label,
        runs.subject_s * 1e3,
        "ms",
        floor=runs.floor_s * 1e3,
        note=note or f"{FLOOR_NOTE}; {cpu_note(runs)}; {_harness.load_note()}",
        **limits,  # type: ignore[arg-type]
    )


def default_cache_row(label: str, argv: Sequence[str], home: str, *, repeat: int = 5) -> Row:
    """``argv`` as users run it: without $AICR_TUI_CACHE_DIR (which every other row sets,
    for a private cache), so the default cache directory is looked up as on their machines
    (under ``home``, a private $HOME warmed by one run first). Information beside the
    budgeted row of the same command."""
    env: _harness.Env = {_harness.CACHE_ENV: None, "XDG_CACHE_HOME": None, "HOME": home}
    _harness.process_usage(argv, env=env)
    row = versus_floor(f"{label}, default cache directory", argv, repeat=repeat, env=env)
    row.note = f"info: {_harness.CACHE_ENV} unset (cache in ~/.cache, warm); {row.note}"
    return row


def cpu_note(runs: _harness.PairedRuns) -> str:
    """The same pairs' CPU medians (user + system): what load on a shared machine
    inflates least, beside the wall-time verdict."""
    if runs.floor_cpu_s <= 0:
        return "cpu not measured"
    ratio = runs.subject_cpu_s / runs.floor_cpu_s
    return f"cpu {runs.subject_cpu_s * 1e3:.0f}/{runs.floor_cpu_s * 1e3:.0f} ms = {ratio:.2f}x"


def run_bench(title: str, collect: Callable[[], list[Row]]) -> int:
    """Prepare the environment, collect the rows, print (or hand over) the table; exit 1
    when a budget is missed (reported, not fatal)."""
    _harness.prepare_environment()
    rows = collect()
    _harness.report(title, rows)
    return 1 if _harness.missed(rows) else 0
