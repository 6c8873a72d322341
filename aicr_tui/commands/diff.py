"""``aicr-tui diff OLD (NEW | -k KUBECONFIG)``: the readings that drifted between two captures.

Prints each reading that changed (path, old, new) as a table or ``-o json``. With
``-r recipe.yaml`` each of the recipe's constraints is evaluated on both sides the way
qualification evaluates them, and those that now fail are named with their remedy, with
the recipe's verdict on each side.

Exit codes: 0 when the comparison ran (drift or not) unless ``--fail-on-drift``; with it,
0 when no reading changed and no recipe constraint now fails, 9 when readings changed but
every recipe constraint still holds (or no recipe was given), 10 when a recipe constraint
now fails. Bad input is one line and exit 2, as everywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aicr_tui.commands._common import emit, warn
from aicr_tui.core.foundation.textsafe import safe_line

if TYPE_CHECKING:
    from aicr_tui.core.services.drift import DriftReport

EXIT_DRIFTED = 9
EXIT_CONSTRAINT_FAILS = 10


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "diff",
        help="show the readings that drifted between two snapshots (or a snapshot and the cluster)",
        description=(
            "Compare OLD with NEW (a snapshot) or with the live cluster (-k). With -r, name "
            "the recipe constraints that now fail, with their remedy. --fail-on-drift exits 9 "
            "when readings changed and 10 when a recipe constraint now fails."
        ),
    )
    parser.add_argument("old", metavar="OLD", help="the snapshot the recipe was qualified on")
    parser.add_argument("new", metavar="NEW", nargs="?", help="the newer snapshot")
    live = parser.add_argument_group("the live cluster as NEW")
    live.add_argument("-k", "--kubeconfig", metavar="KUBECONFIG", help="capture the cluster as NEW")
    live.add_argument("--context", metavar="CONTEXT", help="kubeconfig context")
    live.add_argument(
        "--aks-gpu-pools", metavar="FILE", help="attach this `az aks nodepool list -o json` dump"
    )
    live.add_argument(
        "--oke-addons", metavar="FILE", help="attach this `oci ce cluster list-addons` dump"
    )
    live.add_argument(
        "--deadline", type=float, metavar="SECONDS", help="time the live capture may take"
    )
    parser.add_argument(
        "-r", "--recipe", metavar="FILE", help="re-evaluate this recipe's constraints on NEW"
    )
    parser.add_argument(
        "-o",
        "--format",
        choices=("table", "json"),
        default="table",
        help="output format (default table)",
    )
    parser.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="exit 9 when a reading changed, 10 when a recipe constraint now fails",
    )


def run(args: argparse.Namespace) -> int:
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.services.drift import capture_live_side, diff_snapshots

    live = bool(args.kubeconfig or args.context)
    if live and args.new:
        raise invalid("pass NEW or -k/--context for the live cluster, not both")
    if not live and not args.new:
        raise invalid("diff needs NEW (a snapshot) or -k KUBECONFIG for the live cluster")
    if not live and (args.aks_gpu_pools or args.oke_addons or args.deadline is not None):
        raise invalid("--aks-gpu-pools, --oke-addons and --deadline apply to -k only")
    if args.deadline is not None and not 0 < args.deadline <= 3600:
        raise invalid(f"--deadline {args.deadline:g} is out of range: expected 0 < SECONDS <= 3600")
    recipe = None
    catalog = None
    if args.recipe:
        from aicr_tui.core.recipe.catalog import load_catalog
        from aicr_tui.core.recipe.loading import load_recipe

        catalog = load_catalog()
        recipe = load_recipe(args.recipe, catalog=catalog)
    old = load_snapshot(args.old)
    if live:
        new, warnings = capture_live_side(
            kubeconfig=args.kubeconfig,
            context=args.context,
            aks_pools=args.aks_gpu_pools,
            oke_addons=args.oke_addons,
            deadline=args.deadline,
        )
        for message in warnings:
            warn(message)
        new_source = f"live cluster ({args.kubeconfig or 'default kubeconfig'})"
    else:
        new = load_snapshot(args.new)
        new_source = args.new
    report = diff_snapshots(old, new, recipe=recipe, catalog=catalog)
    if args.format == "json":
        from aicr_tui.core.foundation.yamlio import dump_json

        emit(dump_json(report_document(report, args.old, new_source, args.recipe)), None)
    else:
        emit(format_report(report, args.old, new_source, args.recipe), None)
    if not args.fail_on_drift:
        return 0
    if report.now_failing:
        return EXIT_CONSTRAINT_FAILS
    return EXIT_DRIFTED if report.drifted else 0


def report_document(report: DriftReport, old: str, new: str, recipe: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "old": old,
        "new": new,
        "drifted": report.drifted,
        "changes": [
            {"path": c.path, "old": c.old, "new": c.new, "change": c.change} for c in report.changes
        ],
        "unmeasured": [{"path": c.path, "old": c.old, "new": c.new} for c in report.unmeasured],
    }
    if recipe is not None and report.verdict is not None:
        v = report.verdict
        doc["recipe"] = {
            "file": recipe,
            "selection": v.selection,
            "verdict": {
                "old": {"qualified": v.old_ok, "reason": v.old_reason},
                "new": {"qualified": v.new_ok, "reason": v.new_reason},
            },
            "constraints": [
                {
                    "name": c.name,
                    "expected": c.expected,
                    "old": c.old,
                    "new": c.new,
                    "oldStatus": c.old_status,
                    "newStatus": c.new_status,
                    "source": c.source,
                    "nowFails": c.now_fails,
                    "remedy": c.remedy,
                    "effect": c.effect,
                }
                for c in report.constraints
            ],
        }
    return doc


def _table(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    out += ["  ".join(v.ljust(widths[i]) for i, v in enumerate(r)).rstrip() for r in rows]
    return out


def _cell(value: str | None) -> str:
    return "-" if value is None else safe_line(value) or '""'


def format_report(report: DriftReport, old: str, new: str, recipe: str | None) -> str:
    """The drift as plain text: the changed readings, then the recipe's constraints."""
    lines = [f"old: {safe_line(old)}", f"new: {safe_line(new)}", ""]
    if report.changes:
        lines += _table(
            ("READING", "OLD", "NEW", "CHANGE"),
            [(safe_line(c.path), _cell(c.old), _cell(c.new), c.change) for c in report.changes],
        )
        count = len(report.changes)
        lines.append(f"{count} reading{'s' if count != 1 else ''} changed")
    else:
        lines.append("no reading changed")
    if report.unmeasured:
        side = {True: "NEW", False: "OLD"}
        lines.append(
            f"{len(report.unmeasured)} reading(s) measured on one side only (not drift): "
            + ", ".join(
                f"{safe_line(c.path)} (not in {side[c.new is None]})" for c in report.unmeasured[:5]
            )
            + (", …" if len(report.unmeasured) > 5 else "")
        )
    if recipe is not None and report.verdict is not None:
        v = report.verdict
        label = safe_line(v.selection) or "(no profile)"
        word = {True: "qualified", False: "REFUSED"}
        lines += ["", f"recipe: {safe_line(recipe)}"]
        lines.append(f"verdict: {label} {word[v.old_ok]} -> {word[v.new_ok]}")
        if not v.new_ok:
            lines.append(f"    because: {safe_line(v.new_reason)}")
        rows = []
        for c in report.constraints:
            state = "FAILS" if c.now_fails else ("holds" if c.new_status == "passed" else "failed")
            rows.append(
                (state, safe_line(c.name), safe_line(c.expected), _cell(c.old), _cell(c.new))
            )
        if rows:
            lines.append("")
            table = _table(("STATE", "CONSTRAINT", "EXPECTED", "OLD", "NEW"), rows)
            lines.append(table[0])
            for c, row in zip(report.constraints, table[1:], strict=True):
                lines.append(row)
                if c.new_status != "passed" and c.remedy:
                    lines.append(f"    remedy: {safe_line(c.remedy)}")
    return "\n".join(lines) + "\n"
