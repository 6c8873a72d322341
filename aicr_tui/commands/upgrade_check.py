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
        ("--service", "S"),
        ("--accelerator", "A"),
        ("--os", "OS"),
        ("--intent", "I"),
        ("--platform", "P"),
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


def _options(args: argparse.Namespace, service: str) -> Any:
    from core.services.bundle import AKS_KEYED_TOLERATION, options_from_flags

    tolerations = list(args.accelerated_node_toleration)
    if not tolerations and service == "aks":
        tolerations = [AKS_KEYED_TOLERATION]
    return options_from_flags(accelerated_node_toleration=tolerations)


def _target(args: argparse.Namespace, verifier: Any) -> Any:
    from core.foundation.errors import invalid
    from core.services import upgrade

    criteria = {f: getattr(args, f) for f in ("service", "accelerator", "os", "intent", "platform")}
    stated = any(criteria.values()) or args.profile
    if args.target and stated:
        raise invalid("--to and criteria flags both given", "name the target one way")
    if args.target:
        from core.recipe.loading import load_recipe

        path = Path(args.target)
        if not path.is_file():
            raise invalid(f"--to {args.target}: not a file", "expected a recipe file")
        recipe = load_recipe(str(path))
        return upgrade.recipe_side(
            recipe, str(path), verifier, _options(args, recipe.criteria.service)
        )
    if not stated:
        raise invalid("no target: pass --to RECIPE or criteria (--service, --accelerator, …)")
    from core.services.capture import qualify_selection

    result = qualify_selection(criteria, args.profile, None, nodes=None)
    for note in result.notes:
        info(note)
    verdict = result.verdict
    if verdict.error is not None:
        raise verdict.error
    assert verdict.recipe is not None
    label = verdict.criteria.label() + (f" {args.profile}" if args.profile else "")
    return upgrade.recipe_side(
        verdict.recipe, label, verifier, _options(args, verdict.recipe.criteria.service)
    )


def run(args: argparse.Namespace) -> int:
    from aicr_tui.commands.verify import chart_dirs
    from core.foundation.errors import invalid
    from core.services import upgrade
    from core.verify.api import chart_verifier

    if bool(args.source) == bool(args.kubeconfig):
        raise invalid(
            "name the installed side once: --from RECIPE|BUNDLE_DIR or -k KUBECONFIG",
            "both given" if args.source else "neither given",
        )
    if args.context and not args.kubeconfig:
        raise invalid("--context needs -k KUBECONFIG")
    if args.pull_timeout <= 0:
        raise invalid(
            f"--pull-timeout {args.pull_timeout:g}: expected a positive number of seconds"
        )
    verifier = chart_verifier(chart_dirs(args.charts), pull_timeout=args.pull_timeout)
    if args.source and not Path(args.source).exists():
        raise invalid(f"--from {args.source}: no such file or directory")
    target = _target(args, verifier)
    if args.kubeconfig:
        from core.live.helm_releases import read_releases

        releases, where = read_releases(args.kubeconfig, args.context)
        old = upgrade.live_side(releases, target, where)
    else:
        old = upgrade.source_side(Path(args.source), verifier, _options(args, target.service))
    report = upgrade.check(old, target, drain_planned=args.drain_planned)
    if args.output == "json":
        from core.foundation.yamlio import dump_json

        text = dump_json(report.to_json())
    elif args.output == "markdown":
        text = report.render_markdown()
    else:
        text = report.render_table()
    emit(text if text.endswith("\n") else text + "\n", args.write)
    return report.exit_code


def add_upgrading(plan: Any, args: argparse.Namespace, options: Any) -> str:
    """``bundle --upgrade-from``: the check from that side to the plan, written into the
    plan as UPGRADING.md; returns the overall verdict."""
    from aicr_tui.commands.verify import chart_dirs
    from core.foundation.errors import invalid
    from core.services import upgrade
    from core.verify.api import chart_verifier

    source = Path(args.upgrade_from)
    if not source.exists():
        raise invalid(f"--upgrade-from {args.upgrade_from}: no such file or directory")
    verifier = chart_verifier(chart_dirs(args.charts), pull_timeout=args.pull_timeout)
    target = upgrade.plan_side(plan, args.recipe, verifier)
    report = upgrade.check(upgrade.source_side(source, verifier, options), target)
    upgrade.add_upgrading(plan, report)
    return report.verdict
