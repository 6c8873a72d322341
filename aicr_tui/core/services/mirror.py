"""``mirror list``: every image and chart a bundle pulls, from its rendered objects.

A bundle directory is read as ``aicr-tui verify`` reads it (its steps, values with
``cluster-values.yaml`` on top, manifests), plus its readiness charts; a recipe is planned
first as ``aicr-tui bundle`` would plan it with default options (an AKS recipe with the
keyed GPU toleration the AKS brief requires). Each step's chart is rendered offline with
Helm's own engine from ``--charts`` directories (else pulled into the cache), and its
objects are walked for images (:mod:`aicr_tui.core.bundler.mirror`). A chart that cannot be
rendered makes the list incomplete, and the list says which step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aicr_tui.core.bundler.mirror import Chart, MirrorList, collect
from aicr_tui.core.foundation.errors import invalid

READINESS_SUFFIX = "-readiness"


def recipe_input(path: Path) -> Any:
    """The VerifyInput of the bundle ``aicr-tui bundle`` would plan from this recipe file
    with default options (for AKS, the keyed GPU toleration the AKS brief requires)."""
    return _recipe_input(path)


def _recipe_input(path: Path) -> Any:
    from aicr_tui.core.bundler import refusal
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.services.bundle import AKS_KEYED_TOLERATION, options_from_flags, plan
    from aicr_tui.core.verify.api import plan_input

    recipe = load_recipe(str(path))
    tolerations = [AKS_KEYED_TOLERATION] if recipe.criteria.service == "aks" else []
    bundle_plan = plan(recipe, options_from_flags(accelerated_node_toleration=tolerations))
    if bundle_plan.errors:
        raise refusal(bundle_plan.errors)
    return plan_input(bundle_plan)


def _readiness_charts(bundle: Path) -> list[tuple[str, str, Path]]:
    """(release, namespace, folder) of the bundle's readiness charts (``--readiness-hooks``)."""
    from aicr_tui.core.foundation.fileio import read_document
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    info_path = bundle / "bundle-info.yaml"
    info = load_yaml_plain(read_document(info_path, "bundle-info.yaml"), str(info_path))
    releases = (info.get("layout") or {}).get("releases") if isinstance(info, dict) else None
    out: list[tuple[str, str, Path]] = []
    for rel in releases if isinstance(releases, list) else []:
        if not isinstance(rel, dict):
            continue
        name = str(rel.get("name") or "")
        folder = str(rel.get("path") or "")
        if not name.endswith(READINESS_SUFFIX):
            continue
        parts = folder.split("/")
        if not folder or any(not p or p.startswith(".") for p in parts):
            raise invalid(f"{info_path}: release {name} names a folder outside the bundle")
        target = bundle / folder
        if (target / "Chart.yaml").is_file():
            out.append((name, str(rel.get("namespace") or ""), target))
    return out


def _helm_values(path: Path) -> dict[str, Any]:
    """A values file as Helm reads it."""
    from aicr_tui.core.foundation.fileio import read_document
    from aicr_tui.core.verify import helm

    try:
        doc = helm.parse_document(read_document(path, "values"))
    except helm.RenderError as exc:
        raise invalid(f"{path} is not a values file Helm can read", str(exc)) from None
    return doc or {}


def mirror_list(
    source: str, *, charts: Sequence[Path] = (), pull_timeout: float | None = None
) -> MirrorList:
    """What the bundle at ``source`` (a bundle directory or a recipe file) pulls."""
    from aicr_tui.core.services.bundle import chart_verifier
    from aicr_tui.core.verify.api import bundle_input
    from aicr_tui.core.verify.objects import RenderedStep, render_chart, rendered_step

    path = Path(source)
    if path.is_dir():
        data = bundle_input(path)
        vendored = path / "charts"
        if not charts and (path / "provenance.yaml").is_file() and vendored.is_dir():
            charts = [vendored]  # a --vendor-charts bundle: its own archives
        readiness = _readiness_charts(path)
    elif path.is_file():
        data = _recipe_input(path)
        readiness = []
    else:
        raise invalid(f"{source}: no such bundle directory or recipe file")
    verifier = chart_verifier(charts, pull_timeout=pull_timeout)
    mirror = MirrorList()
    for comp in data.components:
        if comp.has_chart:
            mirror.charts.append(
                Chart(
                    comp.name,
                    comp.chart.rsplit("/", 1)[-1] or comp.name,
                    comp.source,
                    comp.version,
                    comp.namespace,
                )
            )
        step = rendered_step(verifier, comp)
        if step.problem:
            mirror.unrendered.append(f"{comp.name}: {step.problem}")
        if step.stand_in:
            mirror.stand_ins.append(f"{comp.name}: {step.stand_in}")
        collect(mirror, comp.name, step.objects)
    for release, namespace, folder in readiness:
        values_path = folder / "values.yaml"
        values: dict[str, Any] = {}
        if values_path.is_file():
            values = _helm_values(values_path)
        step = RenderedStep(release)
        render_chart(folder, values, release=release, namespace=namespace, out=step)
        if step.problem:
            mirror.unrendered.append(f"{release}: {step.problem}")
        collect(mirror, release.removesuffix(READINESS_SUFFIX), step.objects)
    return mirror
