"""The objects a bundle step creates, rendered offline with Helm's own engine: the chart
with the step's values (hooks included, ``helm test`` pods left out, as an install leaves
them) and the step's raw manifests. ``aicr-tui mirror list`` reads images from these."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aicr_tui.core.verify.analysis import Verifier, _documents_of, _is_test_hook
from aicr_tui.core.verify.model import VerifyComponent

_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".json")


@dataclass
class RenderedStep:
    """A step's objects; ``problem`` says why the chart part could not be rendered."""

    name: str
    objects: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""
    stand_in: str = ""
    """Non-empty when a registry-declared stand-in was rendered in place of the pin."""
    crds: list[dict[str, Any]] = field(default_factory=list)
    """The chart's ``crds/`` files (Helm installs them before the templates, never upgrades)."""


def _parse(texts: list[tuple[str, str]], out: RenderedStep) -> None:
    for (_text, where), docs in zip(texts, _documents_of(texts), strict=True):
        if isinstance(docs, ValueError):
            out.problem = out.problem or f"{where}: {docs}"
            continue
        out.objects += [d for d in docs if not _is_test_hook(d)]


def render_chart(
    path: Path, values: dict[str, Any], *, release: str, namespace: str, out: RenderedStep
) -> None:
    """Render the chart at ``path`` into ``out`` (a template error lands in ``problem``)."""
    from aicr_tui.core.verify import helm

    chart = helm.load_chart(path)
    crd_texts = [(text, f"{chart.name}/crds") for text in chart.crds]
    for docs in _documents_of(crd_texts):
        if not isinstance(docs, ValueError):
            out.crds += [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    try:
        rendered = chart.render(values, release=release, namespace=namespace)
    except helm.RenderError as exc:
        out.problem = f"chart {chart.name} {chart.version} does not render: {exc}"
        return
    templates = [
        t for t in sorted(rendered) if t.endswith(_TEMPLATE_SUFFIXES) and "/tests/" not in t
    ]
    _parse([(rendered[t], t) for t in templates], out)


def rendered_step(verifier: Verifier, comp: VerifyComponent) -> RenderedStep:
    """The objects ``comp`` creates: its chart (found as ``verify`` finds it) rendered with
    its values, then its manifests."""
    from aicr_tui.core.verify import engine, helm

    helm.require_engine()
    out = RenderedStep(comp.name)
    if comp.has_chart:
        src = verifier.source(comp)
        if src.kind != "chart" or src.path is None:
            out.problem = f"chart {comp.chart} {comp.version} was not rendered: {src.label}"
        else:
            out.stand_in = src.stand_in
            with engine.chart_budget():
                render_chart(
                    src.path, comp.values, release=comp.name, namespace=comp.namespace, out=out
                )
    names = sorted(comp.manifests)
    _parse([(comp.manifests[n], f"{comp.folder}/manifests/{n}") for n in names], out)
    return out
