"""``aicr-tui upgrade-check --from (RECIPE | BUNDLE_DIR | -k KUBECONFIG) --to (RECIPE |
criteria flags)``: each component's verdict (safe, manual, blocked, unknown) with its
reasons, from the objects both sides' charts render (the verify engine, offline).

Exit codes: 0 every component safe, 10 some manual (none worse), 11 some unknown (none
blocked), 12 some blocked; 2 bad input (and the structured error codes of every command).
``-o markdown`` is the ``UPGRADING.md`` of the upgrade: the verdicts and the steps in order.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aicr_tui.commands._common import add_chart_flags, emit, info


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "upgrade-check",
        help="say per component whether an upgrade is safe, manual, blocked or unknown",
        description=(
            "Render both sides' charts with their values and compare the objects: CRD "
            "versions and stored fields, immutable fields, renamed or moved objects and "
            "releases, the gpuStack driver ownership, chart major versions and values the new "
            "chart ignores. Exit 0 all safe, 10 manual, 11 unknown, 12 blocked, 2 bad input."
        ),
    )
    src = parser.add_argument_group("from (one of)")
    src.add_argument(
        "--from",
        dest="source",
        metavar="RECIPE|BUNDLE_DIR",
        default=None,
        help="the installed side: a recipe file or a directory written by aicr-tui bundle",
    )
    src.add_argument(
        "-k",
        "--kubeconfig",
        metavar="FILE",
        default=None,
        help="the installed side: the live cluster's Helm releases (read-only)",
    )
    src.add_argument("--context", metavar="NAME", default=None, help="kubeconfig context (-k)")
    dst = parser.add_argument_group("to (a recipe file, or criteria)")
    dst.add_argument("--to", dest="target", metavar="RECIPE", default=None, help="target recipe")
    for flag, metavar in (
        ("--service", "SERVICE"),
        ("--accelerator", "ACCELERATOR"),
        ("--os", "OS"),
        ("--intent", "INTENT"),
        ("--platform", "PLATFORM"),
    ):
        dst.add_argument(flag, metavar=metavar, default=None, help=f"target criteria: {flag[2:]}")
    dst.add_argument(
        "--profile",
        metavar="NAME=VALUE",
        default=None,
        help="target gpuStack selection, e.g. gpuStack=operator-managed",
    )
    parser.add_argument(
        "--accelerated-node-toleration",
        action="append",
        default=[],
        metavar="KEY[=VALUE]:EFFECT",
        help="as for bundle, when a side is planned from a recipe (AKS default: "
        "nvidia.com/gpu:NoSchedule)",
    )
    parser.add_argument(
        "--drain-planned",
        action="store_true",
        help="a gpuStack driver ownership change is drained by the written plan: manual, "
        "not blocked",
    )
    add_chart_flags(parser)
    parser.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "markdown"),
        default="table",
        help="table (default), json, or markdown (UPGRADING.md)",
    )
    parser.add_argument(
        "--write", metavar="FILE", default=None, help="write the output here (default: stdout)"
    )


def run(args: argparse.Namespace) -> int:
    from aicr_tui.commands.verify import chart_dirs
    from aicr_tui.core.services import upgrade

    criteria = {f: getattr(args, f) for f in ("service", "accelerator", "os", "intent", "platform")}
    request = upgrade.CheckRequest(
        source=Path(args.source) if args.source else None,
        kubeconfig=args.kubeconfig,
        context=args.context,
        target=Path(args.target) if args.target else None,
        criteria=criteria,
        profile=args.profile,
        charts=chart_dirs(args.charts),
        pull_timeout=args.pull_timeout,
        tolerations=list(args.accelerated_node_toleration),
        drain_planned=args.drain_planned,
    )
    report = upgrade.upgrade_check(request)
    for note in request.notes:
        info(note)
    if args.output == "json":
        from aicr_tui.core.foundation.yamlio import dump_json

        text = dump_json(report.to_json())
    elif args.output == "markdown":
        text = report.render_markdown()
    else:
        text = report.render_table()
    emit(text if text.endswith("\n") else text + "\n", args.write)
    return report.exit_code
