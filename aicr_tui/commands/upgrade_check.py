"""``aicr-tui upgrade-check (--from (BUNDLE_DIR | recipe.yaml) | -k KUBECONFIG) --to (recipe.yaml | BUNDLE_DIR)``.

With ``-k`` the current side is what is installed: each release of the target's charts as
Helm recorded it (chart version, values and the rendered manifest), nothing re-rendered.

Each component gets ``safe``, ``manual``, ``blocked`` or ``unknown`` with its reasons, from
the objects both sides render offline (``--charts`` directories, else each chart pulled):
CRD versions and fields, immutable fields, objects that move or go away, the chart's major
version, and a ``gpuStack`` change (blocked, with the drain plan written out).

Exit codes (the worst verdict): 0 every component safe, 11 manual steps needed, 12 unknown
(a side could not be rendered: never reported safe), 13 blocked; 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from aicr_tui.commands._common import add_chart_flags, emit
from core.foundation.textsafe import safe_line

if TYPE_CHECKING:
    from core.services.upgrade import UpgradeReport

EXIT_CODES = {"safe": 0, "manual": 11, "unknown": 12, "blocked": 13}


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "upgrade-check",
        help="each component's upgrade verdict (safe/manual/blocked/unknown) from rendered objects",
        description=(
            "Render both sides' charts offline and compare the objects. Exit 0 safe, 11 "
            "manual, 12 unknown, 13 blocked, 2 bad input."
        ),
    )
    parser.add_argument(
        "--from", dest="from_", metavar="SOURCE", help="current bundle dir or recipe"
    )
    parser.add_argument(
        "-k",
        "--kubeconfig",
        metavar="K",
        help="instead of --from: the releases installed on this cluster (Helm's release records)",
    )
    parser.add_argument("--context", metavar="C", help="kubeconfig context (with -k)")
    parser.add_argument("--to", required=True, metavar="SOURCE", help="target recipe or bundle dir")
    parser.add_argument(
        "-o", "--format", choices=("table", "json"), default="table", help="output format"
    )
    add_chart_flags(parser)


def run(args: argparse.Namespace) -> int:
    from aicr_tui.commands.verify import chart_dirs
    from core.foundation.errors import invalid
    from core.services.upgrade import upgrade_check

    if args.pull_timeout <= 0:
        raise invalid(
            f"--pull-timeout {args.pull_timeout:g}: expected a positive number of seconds"
        )
    live = bool(args.kubeconfig or args.context)
    if live == bool(args.from_):
        raise invalid("pass --from SOURCE or -k KUBECONFIG (the live cluster), one of them")
    report = upgrade_check(
        None if live else args.from_,
        args.to,
        charts=chart_dirs(args.charts),
        pull_timeout=args.pull_timeout,
        kubeconfig=args.kubeconfig,
        context=args.context,
    )
    if args.format == "json":
        from core.foundation.yamlio import dump_json

        emit(dump_json(report_document(report)), None)
    else:
        emit(format_report(report), None)
    return EXIT_CODES[report.verdict]


def report_document(report: UpgradeReport) -> dict[str, Any]:
    return {
        "verdict": report.verdict,
        "from": {"selection": report.from_selection},
        "to": {"selection": report.to_selection},
        "components": [
            {
                "component": c.component,
                "from": c.from_version,
                "to": c.to_version,
                "verdict": c.verdict,
                "reasons": [{"verdict": r.verdict, "text": r.text} for r in c.reasons],
            }
            for c in report.components
        ],
        "drainPlan": list(report.drain_plan),
    }


def format_report(report: UpgradeReport) -> str:
    rows = [
        (c.verdict.upper(), c.component, c.from_version or "-", c.to_version or "-")
        for c in report.components
    ]
    headers = ("VERDICT", "COMPONENT", "FROM", "TO")
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    for c, row in zip(report.components, rows, strict=True):
        lines.append("  ".join(safe_line(v).ljust(widths[i]) for i, v in enumerate(row)).rstrip())
        for r in c.reasons:
            if r.verdict != "safe" or len(c.reasons) == 1:
                lines.append(f"    {r.verdict}: {safe_line(r.text)}")
    if report.drain_plan:
        lines.append("")
        lines.append(
            f"drain plan ({safe_line(report.from_selection)} -> {safe_line(report.to_selection)}):"
        )
        lines += [f"  {i}. {safe_line(step)}" for i, step in enumerate(report.drain_plan, 1)]
    lines.append("")
    lines.append(f"result: {report.verdict}")
    return "\n".join(lines) + "\n"
