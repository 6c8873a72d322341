"""Recipe engine benchmark: live re-qualification and the one-shot ``aicr-tui recipe``.

1. In-process: the wizard re-resolves and re-verifies on every keystroke, so one
   ``qualify(criteria, profile, snapshot)`` on the demo snapshots must stay within 1 ms
   (median over many runs, catalog already loaded, as in the running wizard).
2. Whole process: ``aicr-tui recipe …`` against a process that only imports the libraries
   the command needs (budget ≤ 1.5x). Two floors are shown side by side: the third-party
   libraries alone (pydantic, ruamel.yaml) and the same modules the command imports
   (those libraries plus our own ``core`` models), so the table separates "our models cost
   to import" from "the work the command does".

Run: ``python -m bench.recipe_bench``. Not a timed test.
"""

from __future__ import annotations

import sys

from bench._harness import (
    BIN,
    REPO,
    Row,
    import_floor,
    median_time,
    paired_process_medians,
    print_table,
)

SNAPS = REPO / "recipes" / "samples" / "snapshots"
CASES = (
    (
        "AKS default, pools Install",
        "aks",
        "h100",
        "ubuntu",
        None,
        "aks-h100-install",
    ),
    ("AKS default, pools None (refused)", "aks", "h100", "ubuntu", None, "aks-h100-none"),
    (
        "AKS operator-managed, pools None",
        "aks",
        "h100",
        "ubuntu",
        "gpuStack=operator-managed",
        "aks-h100-none",
    ),
    (
        "OKE default, add-on installed",
        "oke",
        "gb200",
        "ol",
        None,
        "oke-gb200-active",
    ),
    (
        "OKE operator-managed, add-on absent",
        "oke",
        "gb200",
        "ol",
        "gpuStack=operator-managed",
        "oke-gb200-absent",
    ),
)
RECIPE_ARGS = (
    "recipe",
    "--service",
    "aks",
    "--accelerator",
    "h100",
    "--os",
    "ubuntu",
    "--intent",
    "training",
)


def in_process_rows() -> list[Row]:
    from core.documents.criteria import parse_criteria
    from core.documents.snapshot import load_snapshot
    from core.recipe.catalog import load_catalog
    from core.recipe.qualification import qualify

    load_catalog()
    rows = []
    for label, service, accel, os_name, profile, snap in CASES:
        criteria = parse_criteria(service=service, accelerator=accel, os=os_name, intent="training")
        snapshot = load_snapshot(str(SNAPS / f"{snap}.yaml"))
        verdict = qualify(criteria, profile, snapshot)
        seconds = median_time(
            lambda c=criteria, p=profile, s=snapshot: qualify(c, p, s), repeat=500, warmup=20
        )
        state = "ok" if verdict.ok else "refused"
        rows.append(Row(f"qualify: {label}", seconds * 1e3, "ms", budget="<= 1 ms", note=state))
    return rows


def process_rows() -> list[Row]:
    exe = str(BIN / "aicr-tui")
    subject = [exe, *RECIPE_ARGS, "-o", "/dev/null"]
    libs = import_floor(["pydantic.main", "ruamel.yaml"])
    same = import_floor(
        [
            "pydantic.main",
            "ruamel.yaml",
            "aicr_tui.cli",
            "aicr_tui.commands.recipe",
            "core.recipe.qualification",
            "core.documents.snapshot",
            "core.documents.recipe_result",
        ]
    )
    s1, f1 = paired_process_medians(subject, same, repeat=9)
    s2, f2 = paired_process_medians(subject, libs, repeat=9)
    return [
        Row(
            "aicr-tui recipe / import of modules it needs",
            s1 * 1e3,
            "ms",
            floor=f1 * 1e3,
            budget="<= 1.5x",
        ),
        Row(
            "aicr-tui recipe / import of pydantic+ruamel only",
            s2 * 1e3,
            "ms",
            floor=f2 * 1e3,
            note="(info: includes building our pydantic models)",
        ),
    ]


def check_lazy_imports() -> Row:
    """The one-shot command must not pull in cloud SDKs or the UI."""
    import subprocess

    code = (
        "import sys\nfrom aicr_tui.cli import main\n"
        f"main({list(RECIPE_ARGS) + ['-o', '/dev/null']!r})\n"
        "print(len([m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes','azure','oci','textual','rich')]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    count = int(out.stdout.strip() or "-1")
    return Row("cloud SDK / UI modules imported by recipe", count, "", budget="0")


def main() -> int:
    rows = in_process_rows()
    print_table("recipe engine: in-process re-resolve + verdict (median of 500)", rows)
    print_table(
        "recipe engine: whole process (median of 9, interleaved)",
        [*process_rows(), check_lazy_imports()],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
