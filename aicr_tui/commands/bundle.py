"""``aicr-tui bundle``: render a recipe into a deployable helm bundle directory.

Every refusal (bad flag, unknown component, profile lock, allocation policy, a blocking
bundle check) is one line on stderr and exit 2, with nothing written; several blocking
checks are named in that line and listed one by one with ``--explain``. Warnings go to
stderr (when the bundle is written) and into the bundle README. The bundle is staged in a temporary sibling directory
and renamed into place; a non-empty output directory is only replaced with ``--force``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aicr_tui.commands._common import add_chart_flags, done, warn
from aicr_tui.core.foundation.textsafe import safe_text


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "bundle",
        help="render a recipe into a deployable bundle (helm, helmfile, argocd, argocd-helm, flux)",
        description=(
            "Render a recipe into NNN-<component>/ folders with values, manifests and "
            "install scripts, plus deploy.sh, undeploy.sh, README.md, recipe.yaml, "
            "bundle-info.yaml and checksums.txt. Refusals exit 2 and write nothing."
        ),
    )
    parser.add_argument("-r", "--recipe", metavar="FILE", required=True, help="recipe file")
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default="./bundle",
        help="bundle directory (default ./bundle)",
    )
    parser.add_argument(
        "--set",
        dest="set_",
        action="append",
        default=[],
        metavar="C:PATH=VALUE",
        help="scalar value override (component name or alias); C:enabled=false drops C",
    )
    parser.add_argument(
        "--set-json", action="append", default=[], metavar="C:PATH=JSON", help="JSON value override"
    )
    parser.add_argument(
        "--set-file",
        action="append",
        default=[],
        metavar="C:PATH=FILE",
        help="value override read from a YAML or JSON file",
    )
    parser.add_argument(
        "--dynamic",
        action="append",
        default=[],
        metavar="C:PATH",
        help="leave this value to install time (moved to NNN-<c>/cluster-values.yaml)",
    )
    parser.add_argument(
        "--accelerated-node-toleration",
        action="append",
        default=[],
        metavar="KEY[=VALUE]:EFFECT",
        help="toleration for GPU-node workloads (repeatable; default: a wildcard Exists, "
        "which AKS bundles refuse)",
    )
    parser.add_argument(
        "--accelerated-node-selector",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="node selector for GPU-node workloads (repeatable)",
    )
    parser.add_argument(
        "--system-node-toleration",
        action="append",
        default=[],
        metavar="KEY[=VALUE]:EFFECT",
        help="toleration for system (control) workloads (repeatable; default: a wildcard Exists)",
    )
    parser.add_argument(
        "--system-node-selector",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="node selector for system (control) workloads (repeatable)",
    )
    parser.add_argument(
        "--workload-selector",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="label selector of workloads NodeWright must not interrupt (repeatable)",
    )
    parser.add_argument(
        "-d",
        "--deployer",
        default="helm",
        metavar="NAME",
        help="bundle layout: helm (default, deploy.sh), helmfile, argocd, argocd-helm or flux",
    )
    parser.add_argument(
        "--repo",
        default="",
        metavar="URL",
        help="repository the deployer syncs from: Git URL (argocd) or oci:// (flux)",
    )
    parser.add_argument(
        "--app-name",
        default=None,
        metavar="NAME",
        help="root Application / chart name (argocd, argocd-helm; DNS-1123; default aicr-stack)",
    )
    parser.add_argument(
        "--serial",
        action="store_true",
        help="GitOps deployers: one folder at a time instead of by dependency tier",
    )
    parser.add_argument(
        "--readiness-hooks",
        action="store_true",
        help="add a NNN-<component>-readiness folder that waits for its expected resources "
        "(helm, argocd, argocd-helm)",
    )
    parser.add_argument(
        "--flux-namespace",
        default=None,
        metavar="NAMESPACE",
        help="namespace of the Flux objects (flux only; default flux-system)",
    )
    parser.add_argument(
        "--flux-oci-source-name",
        default=None,
        metavar="NAME",
        help="name of the bundle's OCIRepository (flux only; default aicr-bundle)",
    )
    parser.add_argument(
        "--storage-class",
        metavar="NAME",
        default=None,
        help="StorageClass for the PVCs the recipe asks for (the registry's storageClassPaths, "
        "e.g. Prometheus); an explicit --set of the same path wins",
    )
    parser.add_argument("--force", action="store_true", help="replace a non-empty output directory")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="when blocking checks refuse the bundle, print each one (check, component, message) on stdout",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="before writing, render every chart with Helm and check the values (as aicr-tui "
        "verify does); findings exit 8 and write nothing",
    )
    parser.add_argument(
        "--vendor-charts",
        action="store_true",
        help="carry each pinned chart archive in charts/ and install from it (no chart "
        "repository needed; helm, helmfile, argocd: unpacked in the bundle repository, flux "
        "and argocd-helm: pushed to --repo oci://…/charts): archives from --charts, else $AICR_VENDOR_CHARTS_DIR, "
        "else pulled with Helm",
    )
    parser.add_argument(
        "--upgrade-from",
        metavar="RECIPE|BUNDLE_DIR",
        default=None,
        help="what the cluster runs now: write UPGRADING.md (the upgrade-check verdicts and "
        "the steps in order) into the bundle; charts from --charts",
    )
    add_chart_flags(parser)


def run(args: Any) -> int:
    from aicr_tui.core.bundler import refusal
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.services import bundle

    options = bundle.options_from_flags(
        set_=args.set_,
        set_json=args.set_json,
        set_file=args.set_file,
        dynamic=args.dynamic,
        accelerated_node_toleration=args.accelerated_node_toleration,
        accelerated_node_selector=args.accelerated_node_selector,
        workload_selector=args.workload_selector,
        system_node_toleration=args.system_node_toleration,
        system_node_selector=args.system_node_selector,
        storage_class=args.storage_class,
        deployer=args.deployer,
        deployer_flags={
            "repo": args.repo,
            "app_name": args.app_name,
            "serial": args.serial,
            "readiness_hooks": args.readiness_hooks,
            "flux_namespace": args.flux_namespace,
            "flux_oci_source_name": args.flux_oci_source_name,
            "vendor_charts": args.vendor_charts,
        },
    )
    if args.verify:
        bundle.warm_up_verify()  # the Helm engine starts while the plan is built
    if args.vendor_charts:
        from aicr_tui.commands.verify import chart_dirs
        from aicr_tui.core.services.vendor import vendored_plan

        plan = vendored_plan(
            load_recipe(args.recipe),
            options,
            chart_dirs(args.charts),
            pull_timeout=args.pull_timeout,
        )
    else:
        plan = bundle.plan(load_recipe(args.recipe), options)
    for warning in plan.warnings:
        warn(warning)
    if plan.errors:
        if args.explain:
            for blocking in plan.errors:
                sys.stdout.write(f"blocking: {safe_text(blocking.render())}\n")
        raise refusal(plan.errors, explained=args.explain)
    report = None
    if args.verify:
        from aicr_tui.commands.verify import chart_dirs

        verifier = bundle.chart_verifier(chart_dirs(args.charts), pull_timeout=args.pull_timeout)
        report = bundle.verify(plan, verifier)
        sys.stdout.write(report.render_text())
        if report.findings:
            done(f"bundle not written: verify reported {len(report.findings)} finding(s)")
            return report.exit_code
    elif args.charts and not (args.vendor_charts or args.upgrade_from):
        from aicr_tui.core.foundation.errors import invalid

        raise invalid("--charts needs --verify, --vendor-charts or --upgrade-from")
    if args.upgrade_from:
        from aicr_tui.commands.verify import chart_dirs
        from aicr_tui.core.services.upgrade import upgrading_for_plan

        verdict = upgrading_for_plan(
            plan,
            Path(args.upgrade_from),
            args.recipe,
            charts=chart_dirs(args.charts),
            pull_timeout=args.pull_timeout,
            options=options,
        )
        done(f"UPGRADING.md: {verdict} (aicr-tui upgrade-check gives the same verdicts)")
    result = bundle.write(plan, Path(args.output), force=args.force, report=report)
    done(
        f"wrote {len(result.files)} files to {result.out_dir} "
        f"({len(plan.components)} components, {plan.deployer} deployer); "
        f"start from {result.out_dir}/{plan.entrypoint} (see its README.md)"
    )
    return 0
