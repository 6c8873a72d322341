"""Bundle rendering time, in-process and as a whole ``aicr-tui bundle`` process.

Reports, for the AKS (azure-managed) and OKE (oci-managed) demo recipes made by the engine:

- in-process ``plan_bundle`` (plan + render, every file in memory): the first (cold) call
  in a fresh process and the median of warm re-plans, the figure the wizard's overrides
  editor pays per keystroke; plus a warm re-plan with one override that changes a value;
- ``write_bundle`` of that plan (staged directory, checksum verification, rename);
- whole-process ``aicr-tui bundle`` interleaved with the third-party floor
  ``python -c "import pydantic, ruamel.yaml"`` (guard <= 2.0x, ``_oneshot.WHOLE_PROCESS_GUARD``:
  against regressions, not a goal), and, when this build has
  it, ``bundle --verify`` against the local charts, reported separately (information; one
  process of ~25 s, so under ``make bench`` only with ``AICR_BENCH_VERIFY=1``);
- no cloud SDK, UI or schema-validator module imported by ``bundle``.

Run with ``python -m bench.bundle_bench``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._harness import (
    REPO,
    ROWS_ENV,
    Row,
    cli,
    heavy_modules_row,
    median_time,
    run_process,
)
from bench._oneshot import WHOLE_PROCESS_GUARD, default_cache_row, run_bench, versus_floor

KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]
DEMOS = {
    "aks h100 training azure-managed": ("aks", "h100", "ubuntu", "training"),
    "oke gb200 training oci-managed": ("oke", "gb200", "ol", "training"),
}
BUDGET = WHOLE_PROCESS_GUARD
VERIFY_ENV = "AICR_BENCH_VERIFY"
REPEAT = 9


def verify_wanted() -> bool:
    """``bundle --verify`` is one process of tens of seconds: measured when this module runs
    alone, under ``make bench`` (its two-minute budget) only when asked for."""
    return not os.environ.get(ROWS_ENV) or os.environ.get(VERIFY_ENV) == "1"


def has_verify() -> bool:
    out = subprocess.run([*cli(), "bundle", "--help"], capture_output=True, text=True, check=False)
    return "--verify" in out.stdout


def cold_plan_ms(recipe_path: Path) -> float:
    """First plan in a fresh interpreter (catalog loaded beforehand, as the CLI does)."""
    code = (
        "import time\n"
        "from aicr_tui.core.recipe.loading import load_recipe\n"
        "from aicr_tui.core.recipe.catalog import load_catalog\n"
        "from aicr_tui.core.bundler import plan_bundle, parse_overrides, parse_tolerations\n"
        f"r = load_recipe({str(recipe_path)!r}); load_catalog()\n"
        "t = time.perf_counter()\n"
        "plan_bundle(r, parse_overrides(), accelerated_tolerations="
        "parse_tolerations(['nvidia.com/gpu:NoSchedule']))\n"
        "print((time.perf_counter() - t) * 1000)\n"
    )
    samples = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples)


def measure(
    label: str, criteria: tuple[str, str, str, str], root: Path, *, headline: bool
) -> list[Row]:
    from aicr_tui.core.bundler import parse_overrides, parse_tolerations, plan_bundle, write_bundle
    from aicr_tui.core.recipe.loading import load_recipe

    service, accel, os_, intent = criteria
    tol = parse_tolerations(["nvidia.com/gpu:NoSchedule"])
    recipe_path = root / f"{service}.yaml"
    subprocess.run(
        [*cli(), "recipe", "--service", service, "--accelerator", accel, "--os", os_,
         "--intent", intent, "-o", str(recipe_path)],
        check=True, capture_output=True,
    )  # fmt: skip
    recipe = load_recipe(str(recipe_path))
    empty = parse_overrides()
    counter = [0]

    def replan_same() -> None:
        plan_bundle(recipe, empty, accelerated_tolerations=tol)

    def replan_changed() -> None:
        counter[0] += 1  # a new value every time, so no memoised text is reused for nfd
        o = parse_overrides(set_=[f"nfd:master.replicaCount={counter[0]}"])
        plan_bundle(recipe, o, accelerated_tolerations=tol)

    plan = plan_bundle(recipe, empty, accelerated_tolerations=tol)

    def write() -> None:
        counter[0] += 1
        write_bundle(plan, root / f"out-{service}-{counter[0]}")

    rows = [
        Row(f"{label}: cold plan+render (fresh process)", cold_plan_ms(recipe_path), "ms"),
        Row(f"{label}: warm re-plan, same overrides", median_time(replan_same, repeat=40) * 1000, "ms"),
        Row(f"{label}: warm re-plan, one value changed", median_time(replan_changed, repeat=40) * 1000, "ms"),
        Row(f"{label}: write_bundle ({len(plan.files)} files)", median_time(write, repeat=10, warmup=1) * 1000, "ms"),
    ]  # fmt: skip
    subject = [*cli(), "bundle", "-r", str(recipe_path), "-o", str(root / f"cli-{service}"),
               "--force", *KEYED]  # fmt: skip
    run_process(subject)
    # The OKE bundle is information beside the budgeted AKS one: fewer pairs.
    rows.append(
        versus_floor(f"{label}: aicr-tui bundle (whole process)", subject,
                     repeat=REPEAT if headline else 3, budget=BUDGET if headline else None)
    )  # fmt: skip
    if headline and not verify_wanted():
        rows.append(Row(f"{label}: aicr-tui bundle --verify (local charts)", float("nan"), "ms",
                        note=f"info: not run under make bench (Helm renders every chart, ~25 s); "
                             f"python -m bench.bundle_bench or {VERIFY_ENV}=1 runs it"))  # fmt: skip
    elif headline and has_verify():
        charts = [REPO / "tests" / "data" / "upstream_charts", REPO / "tests" / "data" / "charts"]
        local = [arg for d in charts if d.is_dir() for arg in ("--charts", str(d))]
        verify = [*subject, "--verify", *local]
        try:  # one pair: Helm renders every chart, seconds per run
            rows.append(versus_floor(f"{label}: aicr-tui bundle --verify (local charts)", verify,
                                     repeat=1, note="info: reported separately"))  # fmt: skip
        except RuntimeError as exc:  # reported, not fatal: the figure above still stands
            rows.append(Row(f"{label}: aicr-tui bundle --verify", float("nan"), "ms",
                            note=f"info: could not run: {exc}"))  # fmt: skip
    if headline:
        with tempfile.TemporaryDirectory(prefix="aicr-bench-home-") as home:
            rows.append(default_cache_row(f"{label}: aicr-tui bundle", subject, home))
        rows.append(heavy_modules_row("bundle", subject[len(cli()) :]))
    return rows


def collect() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bundle-bench.") as tmp:
        for i, (label, criteria) in enumerate(DEMOS.items()):
            rows += measure(label, criteria, Path(tmp), headline=i == 0)
    return rows


def main() -> int:
    return run_bench("bundle", collect)


if __name__ == "__main__":
    raise SystemExit(main())
