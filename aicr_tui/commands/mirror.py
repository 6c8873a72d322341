"""``aicr-tui mirror list (BUNDLE_DIR | recipe.yaml)``: every image and chart the bundle pulls.

Images come from the objects each step's chart renders (offline, Helm's own engine) and its
manifests: Pod templates (init containers and hooks included), operand images the
operators' custom resources name, and image references handed to operators in their
environment or flags. ``-o text`` (default) lists them; ``-o json`` says where each is
used; ``-o hauler`` and ``-o zarf`` write the manifests those tools pull from.

Exit 0 when every step rendered; 8 when a step's chart could not be rendered (the list is
printed, incomplete, and names the step); 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import Any

from aicr_tui.commands._common import add_chart_flags, emit, warn

EXIT_INCOMPLETE = 8


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "mirror",
        help="list the images and charts a bundle pulls (for air-gapped mirrors)",
        description=(
            "Mirror helpers for air-gapped installs: `mirror list` names every image and "
            "chart a bundle pulls, to copy into a registry the cluster can reach."
        ),
    )
    actions = parser.add_subparsers(dest="mirror_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="every image and chart the bundle pulls, from its rendered objects",
        description=(
            "Render every step's chart offline and list the images its objects name (init "
            "containers, hooks, operands) and the charts. Exit 0 complete, 8 when a chart "
            "could not be rendered (the list names it), 2 bad input."
        ),
    )
    listing.add_argument(
        "source", metavar="BUNDLE_DIR|RECIPE", help="a bundle directory or a recipe file"
    )
    listing.add_argument(
        "-o",
        "--format",
        choices=("text", "json", "hauler", "zarf"),
        default="text",
        help="text (default), json, hauler (content manifests) or zarf (zarf.yaml)",
    )
    listing.add_argument("--output-file", metavar="FILE", help="write here (default: stdout)")
    add_chart_flags(listing)


def run(args: argparse.Namespace) -> int:
    from aicr_tui.core.bundler.mirror import render
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.services.mirror import mirror_list

    if args.pull_timeout <= 0:
        raise invalid(
            f"--pull-timeout {args.pull_timeout:g}: expected a positive number of seconds"
        )
    from aicr_tui.commands.verify import chart_dirs

    mirror = mirror_list(
        args.source, charts=chart_dirs(args.charts), pull_timeout=args.pull_timeout
    )
    emit(render(mirror, args.format), args.output_file)
    for problem in mirror.unrendered:
        warn(f"images not listed for {problem}")
    for note in mirror.stand_ins:
        warn(f"images of {note} come from a stand-in chart, not the pinned one")
    return EXIT_INCOMPLETE if mirror.unrendered else 0
