"""Bundle rendering time, in-process and as a whole ``aicr-tui bundle`` process.

Reports, for the AKS (azure-managed) and OKE (oci-managed) demo recipes made by the engine:

- in-process ``plan_bundle`` (plan + render, every file in memory): the first (cold) call
  in a fresh process and the median of warm re-plans, the figure the wizard's overrides
  editor pays per keystroke; plus a warm re-plan with one override that changes a value;
- ``write_bundle`` of that plan (staged directory, checksum verification, rename);
- whole-process ``aicr-tui bundle`` beside a process that only imports the modules the
  command needs (the import floor), interleaved, as a ratio.

Run with ``python -m bench.bundle_bench``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._harness import BIN, Row, import_floor, median_time, paired_process_medians, print_table

KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]
DEMOS = {
    "aks h100 training azure-managed": ("aks", "h100", "ubuntu", "training"),
    "oke gb200 training oci-managed": ("oke", "gb200", "ol", "training"),
}
FLOOR_MODULES = (
    "aicr_tui.cli",
    "aicr_tui.commands.bundle",
    "core.bundler",
    "core.recipe.catalog",
    "core.documents.recipe_result",
    "core.recipe.values",
    "ruamel.yaml",
    "pydantic",
)


def cli() -> list[str]:
    exe = BIN / "aicr-tui"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "aicr_tui"]


def cold_plan_ms(recipe_path: Path) -> float:
    """First plan in a fresh interpreter (catalog loaded beforehand, as the CLI does)."""
    code = (
        "import time\n"
        "from core.recipe.loading import load_recipe\n"
        "from core.recipe.catalog import load_catalog\n"
        "from core.bundler import plan_bundle, parse_overrides, parse_tolerations\n"
        f"r = load_recipe({str(recipe_path)!r}); load_catalog()\n"
        "t = time.perf_counter()\n"
        "plan_bundle(r, parse_overrides(), accelerated_tolerations="
        "parse_tolerations(['nvidia.com/gpu:NoSchedule']))\n"
        "print((time.perf_counter() - t) * 1000)\n"
    )
    samples = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples)


def measure(label: str, criteria: tuple[str, str, str, str], root: Path) -> list[Row]:
    from core.bundler import parse_overrides, parse_tolerations, plan_bundle, write_bundle
    from core.recipe.loading import load_recipe

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
        Row(f"{label}: warm re-plan, same overrides", median_time(replan_same, repeat=60) * 1000, "ms"),
        Row(f"{label}: warm re-plan, one value changed", median_time(replan_changed, repeat=60) * 1000, "ms"),
        Row(f"{label}: write_bundle ({len(plan.files)} files)", median_time(write, repeat=15, warmup=1) * 1000, "ms"),
    ]  # fmt: skip
    subject = [*cli(), "bundle", "-r", str(recipe_path), "-o", str(root / f"cli-{service}"),
               "--force", *KEYED]  # fmt: skip
    s, f = paired_process_medians(subject, import_floor(FLOOR_MODULES), repeat=5)
    rows.append(
        Row(f"{label}: aicr-tui bundle (whole process)", s * 1000, "ms", floor=f * 1000,
            note="floor = import of the modules it needs")
    )  # fmt: skip
    return rows


def main() -> int:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bundle-bench.") as tmp:
        for label, criteria in DEMOS.items():
            rows += measure(label, criteria, Path(tmp))
    print_table("bundle rendering", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
