"""``aicr-tui verify BUNDLE_DIR [--charts DIR]...``: render every step's pinned chart with
the bundle's values through Helm's own engine and report, one line each, what the chart
would ignore, refuse or fail on.

A bundle written with ``--vendor-charts`` is verified from its own ``charts/`` archives
unless ``--charts`` is given (no network needed).

Exit 0 when nothing is found, 8 with findings, 2 for bad input (and when the Helm engine
extra is not installed: the one line says how to install it). The text report goes to
stdout and the JSON report to ``--report`` (default ``BUNDLE_DIR/verify-report.json``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aicr_tui.commands._common import add_chart_flags, info


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "verify",
        help="render a bundle's charts with Helm and report values and objects that would not work",
        description=(
            "For every component: values the chart does not define (and that change nothing), "
            "type mismatches against the chart defaults, values.schema.json violations, "
            "template errors, the chart's kubeVersion against the recipe's K8s.server.version, "
            "custom resources without a CRD installed earlier, and objects invalid against the "
            "Kubernetes 1.34 schemas. Exit 0 clean, 8 findings, 2 bad input."
        ),
    )
    parser.add_argument(
        "bundle", metavar="BUNDLE_DIR", help="a directory written by aicr-tui bundle"
    )
    add_chart_flags(parser)
    parser.add_argument(
        "--report",
        metavar="FILE",
        default=None,
        help="JSON report path (default BUNDLE_DIR/verify-report.json; '-' for none)",
    )


def chart_dirs(values: list[str]) -> list[Path]:
    from aicr_tui.core.foundation.errors import invalid

    out: list[Path] = []
    for text in values:
        path = Path(text)
        if not path.is_dir():
            raise invalid(f"--charts {text}: not a directory", "expected chart trees or .tgz files")
        out.append(path)
    return out


def run(args: Any) -> int:
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.services.bundle import write_verify_report
    from aicr_tui.core.verify.api import REPORT_NAME, bundle_input, chart_verifier

    if args.pull_timeout <= 0:
        raise invalid(
            f"--pull-timeout {args.pull_timeout:g}: expected a positive number of seconds"
        )
    charts = chart_dirs(args.charts)
    bundle = Path(args.bundle)
    vendored = bundle / "charts"
    if not charts and (bundle / "provenance.yaml").is_file() and vendored.is_dir():
        charts = [vendored]  # a --vendor-charts bundle verifies from its own archives
        info(f"charts: the bundle's vendored archives in {vendored}")
    data = bundle_input(bundle)
    verifier = chart_verifier(charts, pull_timeout=args.pull_timeout)
    report = verifier.verify(data)
    sys.stdout.write(report.render_text())
    if args.report != "-":
        target = Path(args.report) if args.report else bundle / REPORT_NAME
        write_verify_report(report, target)
        info(f"JSON report: {target}")
    return report.exit_code
