"""``aicr-tui recipe``: resolve criteria and a ``gpuStack`` selection into a RecipeResult.

The selection comes from ``--profile`` or the declared default; ``--snapshot`` only
verifies it. A refused qualification prints one line naming the constraint, the expected
and the observed value and the remedy, exits 2 and writes nothing. ``--explain`` prints
every constraint the verdict evaluated as a table (to stderr when the recipe goes to
stdout, to stdout on a refusal, so stderr keeps its one line).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from aicr_tui.commands._common import emit, info, warn
from aicr_tui.core.foundation.textsafe import safe_text

if TYPE_CHECKING:
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.recipe.qualification import QualificationVerdict


class Once(argparse.Action):
    """A single-value flag given twice is an error (upstream), not "last one wins"."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = getattr(namespace, "_once_seen", set())
        if self.dest in seen:
            parser.error(f"{option_string} was given more than once; pass it a single time")
        seen.add(self.dest)
        namespace._once_seen = seen
        setattr(namespace, self.dest, values)


class OnceCatalogHelp(Once):
    """A criteria flag whose help lists the values the shipped catalog's overlays register.

    The catalog is read only when help is shown (argparse reads ``help`` while formatting),
    never when the flag is parsed; ``{values}`` in the help is replaced by those values.
    """

    @property
    def help(self) -> str | None:
        template: str | None = self.__dict__.get("_help_template")
        if template is None:
            return None
        return template.format(values=registered_values(self.dest))

    @help.setter
    def help(self, value: str | None) -> None:
        self.__dict__["_help_template"] = value


def registered_values(dimension: str) -> str:
    """The values of ``dimension`` the shipped catalog's overlays register, comma-separated
    (``see recipe list`` when the catalog cannot be read)."""
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.recipe.catalog import load_catalog

    try:
        values = sorted(load_catalog().registered.get(dimension, ()))
    except (AicrError, OSError):
        return "see `recipe list`"
    return ", ".join(values) or "none registered"


def add_criteria_arguments(parser: argparse.ArgumentParser) -> None:
    """The criteria, profile, snapshot and catalog flags shared by recipe and query."""
    parser.register("action", "once", Once)
    parser.register("action", "once_catalog_help", OnceCatalogHelp)
    crit = parser.add_argument_group("criteria")
    crit.add_argument(
        "--service",
        action="once_catalog_help",
        metavar="SERVICE",
        help="managed Kubernetes service ({values})",
    )
    crit.add_argument(
        "--accelerator",
        "--gpu",
        dest="accelerator",
        action="once_catalog_help",
        metavar="ACCELERATOR",
        help="GPU ({values})",
    )
    crit.add_argument("--os", action="once_catalog_help", metavar="OS", help="node OS ({values})")
    crit.add_argument(
        "--intent", action="once_catalog_help", metavar="INTENT", help="intent ({values})"
    )
    crit.add_argument(
        "--platform", action="once_catalog_help", metavar="PLATFORM", help="platform ({values})"
    )
    crit.add_argument(
        "--nodes", action="once", metavar="NODES", help="GPU node count (integer >= 0)"
    )
    sel = parser.add_argument_group("selection and verification")
    sel.add_argument(
        "--profile",
        action="once",
        metavar="NAME=VALUE",
        help="configuration profile selection, e.g. gpuStack=operator-managed (default: the declared default)",
    )
    sel.add_argument(
        "-s",
        "--snapshot",
        action="once",
        metavar="FILE",
        help="verify the selection against this snapshot (it also fills criteria the flags leave out)",
    )
    sel.add_argument(
        "--oke-addons",
        action="once",
        metavar="FILE",
        help=(
            "an `oci ce cluster list-addons` dump: Oracle's NvidiaGpuOperator / "
            "NvidiaNetworkOperator add-ons are reported as warnings (the snapshot qualifies)"
        ),
    )
    sel.add_argument(
        "--criteria-strict",
        action="store_true",
        help=(
            "a stated --service/--accelerator/--os that the snapshot contradicts is an error "
            "(exit 2) instead of a warning (env AICR_CRITERIA_STRICT=1)"
        ),
    )
    sel.add_argument(
        "--data",
        action="once",
        metavar="DIR",
        help="external catalog directory layered over the shipped one",
    )


def register(sub: Any) -> None:
    from aicr_tui.cli import VERBOSE_HELP

    parser = sub.add_parser(
        "recipe",
        help="resolve criteria and a gpuStack selection into a version-locked recipe",
        description=(
            "Resolve a RecipeResult. A snapshot verifies the selection (never chooses it); a "
            "failed profile constraint exits 2 naming the observed value and the remedy."
        ),
    )
    add_criteria_arguments(parser)
    out = parser.add_argument_group("output")
    out.add_argument(
        "-o", "--output", action="once", metavar="FILE", help="write here (default: stdout)"
    )
    out.add_argument(
        "-t",
        "--format",
        action="once",
        choices=("yaml", "json"),
        default="yaml",
        help="document format",
    )
    out.add_argument(
        "--explain",
        action="store_true",
        help="print every evaluated constraint as a table (stderr when the recipe goes to stdout)",
    )
    actions = parser.add_subparsers(
        dest="recipe_action", parser_class=type(parser), metavar="ACTION", required=False
    )
    listing = actions.add_parser(
        "list",
        help="list the recipes the catalog serves, with their criteria",
        description=(
            "Every recipe the catalog serves (an overlay naming a service, an accelerator "
            "and an intent) with its criteria; the criteria flags filter the list."
        ),
    )
    listing.register("action", "once", Once)
    for flag, metavar in (
        ("--service", "S"),
        ("--accelerator", "A"),
        ("--os", "OS"),
        ("--intent", "I"),
        ("--platform", "P"),
    ):
        listing.add_argument(
            flag, action="once", metavar=metavar, help=f"only {flag[2:]} {metavar}"
        )
    listing.add_argument(
        "--data", action="once", metavar="DIR", help="external catalog layered over the shipped one"
    )
    # as every command's -v (aicr_tui.cli): SUPPRESS keeps `aicr-tui -v recipe list`
    listing.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
    )
    listing.add_argument(
        "-o",
        "--output",
        "-t",
        "--format",
        dest="output",
        action="once",
        choices=("table", "json", "yaml"),
        default="table",
        help="output format (default: table; -t/--format as for recipe)",
    )


def qualify_from_args(args: argparse.Namespace) -> tuple[Catalog, QualificationVerdict]:
    """Qualify the flags' selection through the capture service (the wizard's call too):
    criteria the flags leave out come from the snapshot's fingerprint, and a derived
    dimension no overlay covers is dropped once (never one the user stated)."""
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.services.capture import qualify_selection

    capture_warnings: list[str] = []
    if getattr(args, "oke_addons", None):
        from aicr_tui.core.capture.oke_addons import load_oke_addons

        capture_warnings = list(load_oke_addons(args.oke_addons).warnings)
    catalog = load_catalog(external=args.data) if args.data else load_catalog()
    snapshot = None
    if args.snapshot:
        from aicr_tui.core.documents.snapshot import load_snapshot

        snapshot = load_snapshot(args.snapshot)
    given = {
        "service": args.service,
        "accelerator": args.accelerator,
        "intent": args.intent,
        "os": args.os,
        "platform": args.platform,
    }
    result = qualify_selection(
        given,
        args.profile,
        snapshot,
        nodes=args.nodes,
        catalog=catalog,
        capture_warnings=capture_warnings,
    )
    for note in result.notes:
        info(note)
    return catalog, result.verdict


def run_list(args: argparse.Namespace) -> int:
    """``recipe list``: the catalog's recipes and their criteria."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.foundation.yamlio import dump_json, dump_yaml
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.leaves import format_rows, recipe_rows, rows_document

    catalog = load_catalog(external=args.data) if args.data else load_catalog()
    filters = {f: getattr(args, f) for f in ("service", "accelerator", "os", "intent", "platform")}
    query = (
        parse_criteria(**filters, registered=catalog.registered) if any(filters.values()) else None
    )
    rows = recipe_rows(catalog, query)
    if args.output == "json":
        text = dump_json(rows_document(rows))
    elif args.output == "yaml":
        text = dump_yaml(rows_document(rows))
    else:
        text = safe_text(format_rows(rows), multiline=True)
    emit(text if text.endswith("\n") else text + "\n", None)
    return 0


def run(args: argparse.Namespace) -> int:
    from aicr_tui.core.documents.recipe_result import render_recipe

    if getattr(args, "recipe_action", None) == "list":
        return run_list(args)

    _, verdict = qualify_from_args(args)
    to_stdout = not args.output or args.output == "-"
    if args.explain:
        # stderr holds one line on a refusal; a stdout recipe keeps stdout for itself.
        # Observed values come from the snapshot: terminal-safe before they are printed.
        table = safe_text(format_verdict(verdict), multiline=True)
        refused = verdict.error is not None
        (sys.stderr if to_stdout and not refused else sys.stdout).write(table)
    if verdict.error is not None:
        raise verdict.error
    assert verdict.recipe is not None
    check_conflicts(verdict, args)
    for message in verdict.warnings:
        warn(message)
    for w in verdict.recipe.metadata.constraintWarnings:
        warn(f"overlay {w.overlay} excluded: constraint {w.constraint} {w.reason}")
    emit(render_recipe(verdict.recipe, args.format), args.output)
    return 0


def criteria_strict(args: argparse.Namespace) -> bool:
    import os

    return bool(getattr(args, "criteria_strict", False)) or os.environ.get(
        "AICR_CRITERIA_STRICT", ""
    ).strip().lower() in ("1", "true", "yes")


def check_conflicts(verdict: QualificationVerdict, args: argparse.Namespace) -> None:
    """Stated criteria the snapshot contradicts: a warning naming both values each, or,
    with ``--criteria-strict``, the refusal (exit 2, nothing written)."""
    if not verdict.conflicts:
        return
    if criteria_strict(args) and verdict.conflict_refusal is not None:
        raise verdict.conflict_refusal
    for conflict in verdict.conflicts:
        warn(
            f"{conflict.message}; the recipe is resolved for the stated value (the capture "
            "does not qualify it; --criteria-strict refuses)"
        )


def format_verdict(verdict: QualificationVerdict) -> str:
    """The verdict as a plain-text table: one row per constraint, remedies beneath."""
    lines: list[str] = []
    lines.append(f"criteria: {verdict.criteria.label()}")
    if verdict.profile_name:
        chosen = verdict.profile_value or verdict.profile_default or ""
        others = ", ".join(verdict.profile_values)
        lines.append(
            f"profile:  {verdict.profile_name}={chosen} (default {verdict.profile_default}; "
            f"values: {others})"
        )
    else:
        lines.append("profile:  none declared")
    lines.append(
        f"snapshot: {'verifying now' if verdict.snapshot_used else 'none: profile constraints deferred to validate'}"
    )
    if verdict.applied_overlays:
        lines.append(f"applied:  {', '.join(verdict.applied_overlays)}")
    if verdict.excluded_overlays:
        lines.append(
            "excluded: " + ", ".join(f"{e.name} ({e.reason})" for e in verdict.excluded_overlays)
        )
    if verdict.gpu_driver_state:
        lines.append(f"driver:   gpuDriverState {verdict.gpu_driver_state}")
    headers = ("STATUS", "CONSTRAINT", "EXPECTED", "OBSERVED", "SOURCE")
    rows = [
        (c.status.upper(), c.name, c.expected, "-" if c.actual is None else c.actual, c.source)
        for c in verdict.checks
    ]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines.append("")
    lines.append("  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip())
    for check, row in zip(verdict.checks, rows, strict=True):
        lines.append("  ".join(v.ljust(widths[i]) for i, v in enumerate(row)).rstrip())
        if check.effect:
            lines.append(f"    effect: {check.effect}")
        if check.remedy and not check.ok:
            lines.append(f"    remedy: {check.remedy}")
    if not rows:
        lines.append("(no constraints evaluated)")
    lines.append("")
    for w in verdict.warnings:
        lines.append(f"warning: {w}")
    if verdict.error is not None:
        lines.append(f"result: REFUSED: {verdict.error.render()}")
    elif verdict.conflicts:
        lines.append(
            "result: RESOLVED, NOT QUALIFIED: the snapshot contradicts the stated "
            + ", ".join(c.dimension for c in verdict.conflicts)
        )
    else:
        lines.append(
            "result: QUALIFIED" if verdict.snapshot_used else "result: RESOLVED (unverified)"
        )
    return "\n".join(lines) + "\n"
