"""``bundle --vendor-charts``: find each pinned chart's archive and plan the bundle with it.

Archives are found as ``verify`` finds charts: ``<component>-<version>.tgz`` or
``<chart>-<version>.tgz`` in the ``--charts`` directories (else in ``$AICR_VENDOR_CHARTS_DIR``),
or, with neither, pulled with Helm into the cache. A chart tree, a values-only source, a
registry-declared stand-in or an archive that is not the pinned chart is refused with one
line: a vendored bundle carries exactly what its recipe pins.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from aicr_tui.core.foundation.errors import invalid

if TYPE_CHECKING:
    from aicr_tui.core.bundler.model import BundlePlan
    from aicr_tui.core.bundler.vendor import VendoredChart
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.services.bundle import BundleOptions

ENV_VENDOR_CHARTS_DIR = "AICR_VENDOR_CHARTS_DIR"


def chart_sources(charts: Sequence[Path]) -> list[Path]:
    """The directories archives are taken from: the flags, else the environment's."""
    if charts:
        return list(charts)
    env = os.environ.get(ENV_VENDOR_CHARTS_DIR, "")
    if not env:
        return []
    path = Path(env)
    if not path.is_dir():
        raise invalid(f"${ENV_VENDOR_CHARTS_DIR} {env}: not a directory", "expected chart archives")
    return [path]


def find_archives(
    bundle_plan: BundlePlan, charts: Sequence[Path], *, pull_timeout: float | None = None
) -> dict[str, VendoredChart]:
    """The checked archive of every chart step of ``bundle_plan``."""
    from aicr_tui.core.bundler.vendor import MAX_ARCHIVE_BYTES, VendoredChart, check_archive
    from aicr_tui.core.foundation.fileio import read_bounded
    from aicr_tui.core.services.bundle import chart_verifier
    from aicr_tui.core.verify.model import VerifyComponent

    dirs = chart_sources(charts)
    verifier = chart_verifier(dirs, pull_timeout=pull_timeout)
    out: dict[str, VendoredChart] = {}
    for comp in bundle_plan.components:
        if not comp.has_chart:
            continue
        pin = f"{comp.chart} {comp.version}"
        src = verifier.source(
            VerifyComponent(
                comp.name,
                comp.folder,
                comp.namespace,
                comp.chart,
                comp.source,
                comp.version,
                {},
                {},
            )
        )
        if src.kind != "chart" or src.path is None:
            raise invalid(f"--vendor-charts: no archive of {comp.name} ({pin})", src.label)
        if src.stand_in:
            raise invalid(
                f"--vendor-charts: {comp.name} ({pin}) resolves to a stand-in chart "
                f"({src.stand_in}); a vendored bundle carries only the pinned chart"
            )
        if not src.path.name.endswith(".tgz") or not src.path.is_file():
            raise invalid(
                f"--vendor-charts: {src.path} is a chart tree; vendoring carries the packaged "
                f"archive of {pin} (helm package it, or put the .tgz beside it)"
            )
        data = read_bounded(src.path, "chart archive", cap=MAX_ARCHIVE_BYTES)
        check_archive(data, comp.chart, comp.version, str(src.path))
        out[comp.name] = VendoredChart(
            comp.name, comp.chart, comp.version, comp.source, str(src.path), data
        )
    return out


def vendored_plan(
    recipe: RecipeResult,
    options: BundleOptions,
    charts: Sequence[Path] = (),
    *,
    pull_timeout: float | None = None,
) -> BundlePlan:
    """The bundle ``recipe`` makes with ``options``, carrying its chart archives (a plan
    refused by its checks is returned as is, before any archive is looked for)."""
    from aicr_tui.core.services.bundle import plan

    first = plan(recipe, options)
    if first.errors:
        return first
    return plan(recipe, options, vendored=find_archives(first, charts, pull_timeout=pull_timeout))
