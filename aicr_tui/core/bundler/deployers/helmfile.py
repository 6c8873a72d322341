"""``--deployer helmfile``: ``helmfile.yaml`` runs ``level-N.yaml`` one after another.

Each level holds the units of one dependency tier (one unit per level with ``--serial``);
helmfile installs a level's releases concurrently and processes the sub-helmfiles in
order, so a tier starts once the previous one is installed (``wait: true``). Upstream
charts are pinned by repository and version; raw manifests and manifest-only components
are local charts (``NNN-<component>[-post]/``). ``helmfile apply`` (or ``sync``) from the
bundle root deploys everything; ``helmfile destroy`` removes it.
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
from aicr_tui.core.bundler.deployers.layout import Unit, build_units, repository_name, tiers
from aicr_tui.core.bundler.deployers.skeletons import load_document

TIMEOUT_SECONDS = 1200


def render(ctx: DeployContext) -> DeployOutput:
    from aicr_tui.core.bundler.render import go_yaml

    out = DeployOutput()
    units = build_units(ctx.components, ctx.config)
    root = load_document("helmfile/helmfile.yaml")
    root["helmfiles"] = []
    for level, group in enumerate(tiers(units), 1):
        doc = load_document("helmfile/level.yaml")
        repos: dict[str, dict[str, Any]] = {}
        releases = []
        for unit in group:
            releases.append(_release(unit, repos))
        doc["helmDefaults"]["timeout"] = TIMEOUT_SECONDS
        doc["repositories"] = [repos[k] for k in sorted(repos)]
        if not doc["repositories"]:
            del doc["repositories"]
        doc["releases"] = releases
        name = f"level-{level}.yaml"
        out.put(name, go_yaml(doc))
        root["helmfiles"].append({"path": name})
    out.put("helmfile.yaml", go_yaml(root))
    for unit in units:
        unit_files(out, unit, "helmfile")
        out.releases.append(release_entry(unit))
        if unit.kind in ("upstream", "local"):
            out.folders[unit.component.name] = unit.folder
    out.deploy_text = prose.section(
        "helmfile", serial=prose.when(ctx.config.serial, "serial", "helmfile")
    )
    return out


def _release(unit: Unit, repos: dict[str, dict[str, Any]]) -> dict[str, Any]:
    comp = unit.component
    rel: dict[str, Any] = {"name": unit.name, "namespace": unit.namespace}
    values = [f"{unit.folder}/values.yaml"]
    if unit.kind == "upstream" and comp.vendored:
        rel["chart"] = f"./{comp.vendored}"  # --vendor-charts: the archive in the bundle
    elif unit.kind == "upstream":
        source = comp.source.rstrip("/")
        name = repository_name(source)
        if source.startswith("oci://"):
            repos[name] = {"name": name, "url": source[len("oci://") :], "oci": True}
        else:
            repos[name] = {"name": name, "url": source}
        rel["chart"] = f"{name}/{comp.chart or comp.name}"
        rel["version"] = comp.version
    else:
        rel["chart"] = f"./{unit.folder}"
    if unit.kind in ("upstream", "local") and comp.cluster_values is not None:
        values.append(f"{unit.folder}/cluster-values.yaml")
    rel["values"] = values
    return rel
