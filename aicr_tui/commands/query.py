"""``aicr-tui query``: resolve like ``recipe`` and print one hydrated value.

``--selector components.gpu-operator.values.driver.enabled`` prints ``false``; scalars
print as plain text, maps and lists as YAML (or JSON with ``--format json``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from aicr_tui.commands._common import warn
from aicr_tui.commands.recipe import add_criteria_arguments


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "query",
        help="print one value of the hydrated recipe (e.g. components.<name>.values.<path>)",
        description="Resolve a recipe like `recipe` does and print the value at --selector.",
    )
    add_criteria_arguments(parser)
    parser.add_argument(
        "--selector",
        action="once",
        required=True,
        metavar="PATH",
        help="dotted path, e.g. components.gpu-operator.values.driver.enabled ('' = everything)",
    )
    parser.add_argument(
        "-t",
        "--format",
        action="once",
        choices=("yaml", "json"),
        default="yaml",
        help="output format",
    )


def run(args: argparse.Namespace) -> int:
    from aicr_tui.commands.recipe import check_conflicts, qualify_from_args
    from aicr_tui.core.recipe.query import hydrate, render_value, select

    catalog, verdict = qualify_from_args(args)
    if verdict.error is not None:
        raise verdict.error
    assert verdict.recipe is not None
    check_conflicts(verdict, args)
    for message in verdict.warnings:
        warn(message)
    value = select(hydrate(catalog, verdict.recipe), args.selector)
    sys.stdout.write(render_value(value, args.format))
    return 0
