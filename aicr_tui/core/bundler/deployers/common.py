"""What every deployer shares: the folder files of a unit and the render contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler.deployers.layout import (
    Unit,
    chart_yaml,
    escape_helm_template,
    readiness_manifests,
    upstream_env,
)

if TYPE_CHECKING:
    from aicr_tui.core.bundler.deployers.config import DeployerConfig
    from aicr_tui.core.bundler.model import ComponentPlan
    from aicr_tui.core.bundler.vendor import VendoredChart


@dataclass
class DeployContext:
    components: list[ComponentPlan]
    config: DeployerConfig
    locks: dict[str, list[str]]
    """Profile-locked value paths per component (the effective lock set)."""
    recipe_version: str
    vendored: dict[str, VendoredChart] = field(default_factory=dict)
    """``--vendor-charts``: each chart component's checked archive, by component name."""


@dataclass
class DeployOutput:
    files: dict[str, bytes] = field(default_factory=dict)
    executables: set[str] = field(default_factory=set)
    releases: list[dict[str, Any]] = field(default_factory=list)
    """``bundle-info.yaml`` ``layout.releases``, in deployment order."""
    deploy_text: str = ""
    """The README's "Deploy" section for this deployer."""
    folders: dict[str, str] = field(default_factory=dict)
    """Component name -> the folder holding its values (the main unit's)."""

    def put(self, path: str, text: str) -> None:
        self.files[path] = text.encode("utf-8")


def values_text(values: dict[str, Any]) -> str:
    from aicr_tui.core.bundler import render

    return render.values_yaml(values)


def unit_files(out: DeployOutput, unit: Unit, deployer: str, *, prefix: str = "") -> None:
    """Write one unit's folder: upstream chart inputs, or a local chart."""
    from aicr_tui.core.bundler import render

    comp = unit.component
    base = f"{prefix}{unit.folder}"
    if unit.kind == "upstream":
        out.put(f"{base}/values.yaml", values_text(comp.values))
        if comp.cluster_values is not None:
            out.put(f"{base}/cluster-values.yaml", render.cluster_values_yaml(comp.cluster_values))
        out.put(f"{base}/upstream.env", upstream_env(comp))
        return
    local_chart(out, unit, deployer, base)


def local_chart(out: DeployOutput, unit: Unit, deployer: str, base: str) -> None:
    from aicr_tui.core.bundler import render
    from aicr_tui.core.bundler.render import go_yaml

    comp = unit.component
    what = {
        "local": f"{comp.name}: manifest-only component",
        "post": f"{comp.name}: raw manifests applied after its chart",
        "readiness": f"{comp.name}: waits for its expected resources to roll out",
    }[unit.kind]
    out.put(f"{base}/Chart.yaml", go_yaml(chart_yaml(unit.name, what, comp.version)))
    if unit.kind == "local":
        out.put(f"{base}/values.yaml", values_text(comp.values))
        if comp.cluster_values is not None:
            out.put(f"{base}/cluster-values.yaml", render.cluster_values_yaml(comp.cluster_values))
    else:
        out.put(f"{base}/values.yaml", "{}\n")
    if unit.kind == "readiness":
        out.put(f"{base}/templates/readiness.yaml", readiness_manifests(unit, deployer))
        return
    for mname in sorted(comp.manifests):
        out.put(f"{base}/templates/{mname}", escape_helm_template(comp.manifests[mname]))


def release_entry(unit: Unit, *, manifests: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "component": unit.component.name,
        "name": unit.name,
        "namespace": unit.namespace,
        "path": unit.folder,
    }
    if manifests and unit.kind in ("local", "post") and unit.component.manifests:
        entry["manifest"] = [
            f"{unit.folder}/templates/{m}" for m in sorted(unit.component.manifests)
        ]
    return entry


MODULES = {
    "helm": "helm",
    "helmfile": "helmfile",
    "argocd": "argocd",
    "argocd-helm": "argocd_helm",
    "flux": "flux",
}


def render_deployer(ctx: DeployContext, *, profile: tuple[str, str] | None = None) -> DeployOutput:
    """The deployer-specific files of a bundle (the common root files are the caller's)."""
    from importlib import import_module

    module = import_module(f"aicr_tui.core.bundler.deployers.{MODULES[ctx.config.name]}")
    if ctx.config.name == "argocd-helm":
        out: DeployOutput = module.render(ctx, profile=profile)
    else:
        out = module.render(ctx)
    return out
