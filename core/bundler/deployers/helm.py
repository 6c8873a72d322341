"""``--deployer helm`` (default): numbered folders, ``install.sh`` each, root ``deploy.sh``.

Layout: ``NNN-<component>/values.yaml`` (+ ``cluster-values.yaml`` for ``--dynamic``),
``manifests/*.yaml`` and ``install.sh``; ``deploy.sh`` installs strictly in deployment order
and ``undeploy.sh`` removes in reverse.
"""

from __future__ import annotations

from typing import Any

from core.bundler.deployers.common import DeployContext, DeployOutput


def render(ctx: DeployContext) -> DeployOutput:
    from core.bundler import render as r

    out = DeployOutput()
    for comp in ctx.components:
        out.put(f"{comp.folder}/values.yaml", r.values_yaml(comp.values))
        if comp.cluster_values is not None:
            out.put(
                f"{comp.folder}/cluster-values.yaml", r.cluster_values_yaml(comp.cluster_values)
            )
        for mname, body in comp.manifests.items():
            out.put(f"{comp.folder}/manifests/{mname}", body)
        out.put(f"{comp.folder}/install.sh", r.install_sh(comp))
        out.executables.add(f"{comp.folder}/install.sh")
        entry: dict[str, Any] = {
            "component": comp.name,
            "name": comp.name,
            "namespace": comp.namespace,
            "path": comp.folder,
        }
        if comp.manifests:
            entry["manifest"] = [f"{comp.folder}/manifests/{m}" for m in sorted(comp.manifests)]
        out.releases.append(entry)
        out.folders[comp.name] = comp.folder
    out.put("deploy.sh", r.deploy_sh(ctx.components))
    out.put("undeploy.sh", r.undeploy_sh(ctx.components))
    out.executables |= {"deploy.sh", "undeploy.sh"}
    out.deploy_text = (
        "```sh\nsha256sum -c checksums.txt   # verify the bundle\n"
        "./deploy.sh                  # every component, in order\n```\n\n"
        "`deploy.sh` runs `helm upgrade --install` for each chart (pinned source and version, "
        "waiting for readiness) and then applies that component's manifests, strictly in the "
        "recipe's deploymentOrder. Each `NNN-<component>/install.sh` does the same for one "
        "component. `./undeploy.sh` removes everything in reverse order.\n"
    )
    return out
