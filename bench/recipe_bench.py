"""Recipe engine benchmark: live re-qualification and the one-shot ``recipe`` and ``query``.

1. In-process: the wizard re-resolves and re-verifies on every keystroke, so one
   ``qualify(criteria, profile, snapshot)`` on the demo snapshots must stay within 1 ms
   (median over many runs, catalog already loaded, as in the running wizard).
2. Whole process: ``aicr-tui recipe`` (criteria only, and with ``--snapshot`` of an AKS
   sample) and ``aicr-tui query``, each interleaved with the third-party floor
   ``python -c "import pydantic, ruamel.yaml"``; guard <= 2.0x (a guard against
   regressions, not a goal: ``_oneshot.WHOLE_PROCESS_GUARD``). A first run on an empty
   catalog cache is shown for information.
3. None of them imports a cloud SDK, the UI or a schema validator.

Run: ``python -m bench.recipe_bench``. Not a timed test.
"""

from __future__ import annotations

import os
import tempfile

from bench._harness import (
    CACHE_ENV,
    REPO,
    Row,
    cli,
    heavy_modules_row,
    library_floor,
    median_time,
    run_process,
)
from bench._oneshot import WHOLE_PROCESS_GUARD, default_cache_row, run_bench, versus_floor

SNAPS = REPO / "aicr_tui" / "recipes" / "samples" / "snapshots"
CASES = (
    ("AKS default, pools Install", "aks", "h100", "ubuntu", None, "aks-h100-install"),
    ("AKS default, pools None (refused)", "aks", "h100", "ubuntu", None, "aks-h100-none"),
    (
        "AKS operator-managed, pools None",
        "aks",
        "h100",
        "ubuntu",
        "gpuStack=operator-managed",
        "aks-h100-none",
    ),
    ("OKE default, add-on installed", "oke", "gb200", "ol", None, "oke-gb200-active"),
    (
        "OKE operator-managed, add-on absent",
        "oke",
        "gb200",
        "ol",
        "gpuStack=operator-managed",
        "oke-gb200-absent",
    ),
)
CRITERIA = ("--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training")
RECIPE_ARGS = ("recipe", *CRITERIA)
SNAPSHOT = SNAPS / "aks-h100-install.yaml"
QUERY_ARGS = ("query", *CRITERIA, "--selector", "components.gpu-operator.values.driver")
BUDGET = WHOLE_PROCESS_GUARD
REPEAT = 9


def in_process_rows() -> list[Row]:
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.qualification import qualify

    load_catalog()
    rows = []
    for label, service, accel, os_name, profile, snap in CASES:
        criteria = parse_criteria(service=service, accelerator=accel, os=os_name, intent="training")
        snapshot = load_snapshot(str(SNAPS / f"{snap}.yaml"))
        verdict = qualify(criteria, profile, snapshot)
        seconds = median_time(
            lambda c=criteria, p=profile, s=snapshot: qualify(c, p, s), repeat=150, warmup=10
        )
        state = "ok" if verdict.ok else "refused"
        rows.append(
            Row(
                f"qualify: {label}",
                seconds * 1e3,
                "ms",
                budget="<= 1 ms",
                note=state,
                limit=1.0,
                check="max",
            )
        )
    return rows


def commands(out: str) -> list[tuple[str, list[str]]]:
    return [
        ("aicr-tui recipe (criteria only)", [*cli(), *RECIPE_ARGS, "-o", out]),
        (
            f"aicr-tui recipe --snapshot {SNAPSHOT.stem}",
            [*cli(), *RECIPE_ARGS, "--snapshot", str(SNAPSHOT), "-o", out],
        ),
        ("aicr-tui query", [*cli(), *QUERY_ARGS]),
    ]


def process_rows(out: str) -> list[Row]:
    rows = []
    for label, argv in commands(out):
        run_process(argv)  # warm the private catalog cache (and prove the command succeeds)
        rows.append(versus_floor(label, argv, repeat=REPEAT, budget=BUDGET))
    with tempfile.TemporaryDirectory(prefix="aicr-bench-home-") as home:
        label, argv = commands(out)[0]
        rows.append(default_cache_row(label, argv, home))
    with tempfile.TemporaryDirectory(prefix="aicr-bench-cold-") as cold:
        argv = commands(out)[0][1]
        env = {CACHE_ENV: cold}
        floor_s, _ = run_process(library_floor())
        cold_s, _ = run_process(argv, env=env)
        rows.append(
            Row(
                "aicr-tui recipe, empty catalog cache (one run)",
                cold_s * 1e3,
                "ms",
                floor=floor_s * 1e3,
                note="info: the first run after an install or a catalog edit",
            )
        )
    return rows


def collect() -> list[Row]:
    rows = in_process_rows()
    with tempfile.TemporaryDirectory(prefix="aicr-bench-recipe-") as tmp:
        out = os.path.join(tmp, "r.yaml")
        rows += process_rows(out)
        rows.append(heavy_modules_row("recipe", [*RECIPE_ARGS, "-o", out]))
        rows.append(heavy_modules_row("query", list(QUERY_ARGS)))
    return rows


def main() -> int:
    return run_bench("recipe and query", collect)


if __name__ == "__main__":
    raise SystemExit(main())
