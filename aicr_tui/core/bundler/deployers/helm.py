"""``--deployer helm`` (default): numbered folders, ``install.sh`` each, root ``deploy.sh``.

Layout: ``NNN-<component>/values.yaml`` (+ ``cluster-values.yaml`` for ``--dynamic``),
``manifests/*.yaml`` and ``install.sh``; ``deploy.sh`` installs strictly in deployment order
and ``undeploy.sh`` removes in reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aicr_tui.core.bundler import prose
from aicr_tui.core.bundler.deployers.common import (
    DeployContext,
    DeployOutput,
    local_chart,
    release_entry,
)
from aicr_tui.core.bundler.deployers.layout import Unit, waitable

if TYPE_CHECKING:
    from aicr_tui.core.bundler.render import ReadinessStep


def render(ctx: DeployContext) -> DeployOutput:
    from aicr_tui.core.bundler import render as r

    out = DeployOutput()
    readiness = _number_with_readiness(ctx) if ctx.config.readiness_hooks else {}
    identity = r.bundle_identity(ctx.components, readiness)
    for comp in ctx.components:
        out.put(f"{comp.folder}/values.yaml", r.values_yaml(comp.values))
        if comp.cluster_values is not None:
            out.put(
                f"{comp.folder}/cluster-values.yaml", r.cluster_values_yaml(comp.cluster_values)
            )
        for mname, body in comp.manifests.items():
            out.put(f"{comp.folder}/manifests/{mname}", body)
        out.put(f"{comp.folder}/install.sh", r.install_sh(comp, identity))
        out.executables.add(f"{comp.folder}/install.sh")
        out.releases.append(r.component_release(comp))
        out.folders[comp.name] = comp.folder
    for comp in ctx.components:
        step = readiness.get(comp.name)
        if step is None:
            continue
        unit = Unit(comp, "readiness", step.release, step.folder, step.index)
        local_chart(out, unit, "helm", step.folder)
        out.releases.insert(
            next(i for i, e in enumerate(out.releases) if e["component"] == comp.name) + 1,
            release_entry(unit),
        )
    out.put("deploy.sh", r.deploy_sh(ctx.components, readiness, identity))
    out.put("undeploy.sh", r.undeploy_sh(ctx.components, readiness, identity))
    out.executables |= {"deploy.sh", "undeploy.sh"}
    out.deploy_text = prose.section("helm")
    return out


def _number_with_readiness(ctx: DeployContext) -> dict[str, ReadinessStep]:
    """``--readiness-hooks``: a ``NNN-<component>-readiness`` folder after each component
    with expected resources; every injected folder shifts the later numbers."""
    from aicr_tui.core.bundler.render import ReadinessStep

    steps: dict[str, ReadinessStep] = {}
    index = 0
    for comp in ctx.components:
        index += 1
        comp.index = index
        comp.folder = f"{index:03d}-{comp.name}"
        if waitable(comp):
            index += 1
            name = f"{comp.name}-readiness"
            steps[comp.name] = ReadinessStep(index, f"{index:03d}-{name}", name, comp.namespace)
    return steps
