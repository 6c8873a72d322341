"""``--deployer argocd``: ``app-of-apps.yaml`` plus one ``application.yaml`` per folder.

The bundle is pushed to a Git repository (``--repo``); the root Application syncs every
``*/application.yaml`` in it. An upstream chart's Application has two sources, the chart
(pinned repository and version) and the bundle repository as ``$values`` for the folder's
``values.yaml``; local charts (raw manifests, manifest-only components, readiness hooks)
are one Git source at their folder. With ``--vendor-charts`` the chart source is the chart
unpacked in the bundle itself (``<folder>/chart/``, a path in the same Git repository), so
Argo CD reaches no chart repository. ``argocd.argoproj.io/sync-wave`` is the unit's
dependency tier (its position with ``--serial``). ``--dynamic`` is refused: Argo CD has no
install-time values file, use ``--deployer argocd-helm``. ``--set deployer:<key>=<value>``
sets the project, the Applications' namespace, the target revision and the destination.
"""

from __future__ import annotations

from typing import Any

from aicr_tui.core.bundler import prose
from aicr_tui.core.bundler.deployers.common import (
    DeployContext,
    DeployOutput,
    release_entry,
    unit_files,
)
from aicr_tui.core.bundler.deployers.config import REPO_PLACEHOLDER, DeployerConfig
from aicr_tui.core.bundler.deployers.layout import Unit, build_units
from aicr_tui.core.bundler.deployers.skeletons import load_document

VENDORED_CHART = "chart"
"""``--vendor-charts``: the folder (inside a unit's) that holds its chart unpacked."""


def render(ctx: DeployContext) -> DeployOutput:
    from aicr_tui.core.bundler.render import go_yaml

    cfg = ctx.config
    out = DeployOutput()
    units = build_units(ctx.components, cfg)
    repo = cfg.repo or REPO_PLACEHOLDER
    root = load_document("argocd/app-of-apps.yaml")
    root["metadata"].update(name=cfg.app_name, namespace=cfg.option("namespace"))
    spec = root["spec"]
    spec["project"] = cfg.option("project")
    spec["source"].update(repoURL=repo, targetRevision=cfg.option("targetRevision"))
    spec["destination"].update(
        server=cfg.option("destinationServer"), namespace=cfg.option("namespace")
    )
    out.put("app-of-apps.yaml", go_yaml(root))
    for unit in units:
        unit_files(out, unit, "argocd")
        archive = ctx.vendored.get(unit.component.name) if unit.kind == "upstream" else None
        if archive is not None:
            for rel, data in archive.tree().items():
                out.files[f"{unit.folder}/{VENDORED_CHART}/{rel}"] = data
        out.put(
            f"{unit.folder}/application.yaml",
            go_yaml(application(unit, cfg, repo, vendored=archive is not None)),
        )
        out.releases.append(release_entry(unit))
        if unit.kind in ("upstream", "local"):
            out.folders[unit.component.name] = unit.folder
    out.deploy_text = deploy_text(cfg, "app-of-apps.yaml", vendored=bool(ctx.vendored))
    return out


def application(
    unit: Unit, cfg: DeployerConfig, repo: str, *, vendored: bool = False
) -> dict[str, Any]:
    comp = unit.component
    app = load_document("argocd/application.yaml")
    app["metadata"].update(name=unit.name, namespace=cfg.option("namespace"))
    app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = str(unit.tier)
    spec = app["spec"]
    spec["project"] = cfg.option("project")
    spec["destination"].update(server=cfg.option("destinationServer"), namespace=unit.namespace)
    revision = cfg.option("targetRevision")
    if unit.kind == "upstream" and vendored:
        spec["sources"] = [
            {
                "repoURL": repo,
                "targetRevision": revision,
                "path": f"{unit.folder}/{VENDORED_CHART}",
                "helm": {
                    "releaseName": unit.name,
                    "valueFiles": [f"$values/{unit.folder}/values.yaml"],
                },
            },
            {"repoURL": repo, "targetRevision": revision, "ref": "values"},
        ]
    elif unit.kind == "upstream":
        chart_repo = comp.source.rstrip("/")
        if chart_repo.startswith("oci://"):
            chart_repo = chart_repo[len("oci://") :]
        spec["sources"] = [
            {
                "repoURL": chart_repo,
                "chart": comp.chart or comp.name,
                "targetRevision": comp.version,
                "helm": {
                    "releaseName": unit.name,
                    "valueFiles": [f"$values/{unit.folder}/values.yaml"],
                },
            },
            {"repoURL": repo, "targetRevision": revision, "ref": "values"},
        ]
    else:
        spec["source"] = {
            "repoURL": repo,
            "targetRevision": revision,
            "path": unit.folder,
            "helm": {"releaseName": unit.name, "valueFiles": ["values.yaml"]},
        }
    return app


def deploy_text(cfg: DeployerConfig, root: str, *, vendored: bool = False) -> str:
    from aicr_tui.core.bundler.shell import quote

    repo = (
        prose.phrase("repo", "given", repo=cfg.repo)
        if cfg.repo
        else prose.phrase("repo", "argocd-missing", root=root, placeholder=REPO_PLACEHOLDER)
    )
    return prose.section(
        "argocd",
        namespace=quote(cfg.option("namespace")),
        root_word=quote(root),
        repo=repo,
        revision=cfg.option("targetRevision"),
        root=root,
        app=cfg.app_name,
        serial=prose.when(cfg.serial, "serial", "argocd"),
        charts=prose.phrase("vendored", "argocd", chart_dir=VENDORED_CHART)
        if vendored
        else prose.phrase("not-vendored", "argocd"),
    )
