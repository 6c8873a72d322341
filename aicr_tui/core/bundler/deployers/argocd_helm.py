"""``--deployer argocd-helm``: the bundle is one Helm chart of Argo CD Applications.

Root: ``Chart.yaml`` (named ``--app-name``), ``values.yaml``, ``values.schema.json``,
``templates/`` (the Applications, the raw manifests, the lock guard) and ``static/`` (each
folder's static values and manifests, ``units.json`` with the order and tiers,
``locks.json`` with the profile-owned paths). Install-time values go under
``components.<name>.values`` and are merged over the static ones; ``--dynamic`` paths are
seeded there. ``templates/lock-guard.yaml`` fails the render when an install-time value
intersects a profile-owned path, so the lock holds after the bundle leaves the bundler.
``--repo`` is ignored (the chart carries everything); push it as an OCI Helm chart or
install it from the directory. With ``--vendor-charts`` ``--repo`` is the OCI repository the
bundle's chart archives are pushed to (``helm push charts/<chart>-<version>.tgz
<repo>/charts``, listed in the README) and each Application installs its chart from there;
``.helmignore`` keeps ``charts/`` out of the root chart (Helm would load the archives as its
subcharts).
"""

from __future__ import annotations

import json
from typing import Any

from aicr_tui.core.bundler import prose
from aicr_tui.core.bundler.deployers.common import DeployContext, DeployOutput
from aicr_tui.core.bundler.deployers.config import OCI_PLACEHOLDER
from aicr_tui.core.bundler.deployers.flux import VENDORED_CHARTS
from aicr_tui.core.bundler.deployers.layout import (
    Unit,
    build_units,
    chart_yaml,
    readiness_manifests,
)
from aicr_tui.core.bundler.deployers.skeletons import text
from aicr_tui.core.bundler.vendor import VENDOR_DIR

TEMPLATES = ("applications.yaml", "manifests.yaml", "lock-guard.yaml", "NOTES.txt")
WAVE = "argocd.argoproj.io/sync-wave"
LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def render(ctx: DeployContext, *, profile: tuple[str, str] | None = None) -> DeployOutput:
    from aicr_tui.core.bundler import render as r
    from aicr_tui.core.bundler.render import go_yaml
    from aicr_tui.core.bundler.shell import quote

    cfg = ctx.config
    out = DeployOutput()
    units = build_units(ctx.components, cfg)
    # --vendor-charts: where the README's helm push lines put the bundle's archives
    pushed_to = f"{(cfg.repo or OCI_PLACEHOLDER).rstrip('/')}/{VENDORED_CHARTS}"
    listed: list[dict[str, Any]] = []
    components: dict[str, Any] = {}
    for unit in units:
        comp = unit.component
        entry: dict[str, Any] = {
            "name": unit.name,
            "component": comp.name,
            "kind": unit.kind,
            "folder": unit.folder,
            "tier": unit.tier,
            "namespace": unit.namespace,
        }
        base = f"static/{unit.folder}"
        if unit.kind == "upstream":
            repo = comp.source.rstrip("/")
            version = comp.version
            archive = ctx.vendored.get(comp.name)
            if archive is not None:
                repo, version = pushed_to, archive.oci_tag
            entry.update(
                repoURL=repo[len("oci://") :] if repo.startswith("oci://") else repo,
                chart=comp.chart or comp.name,
                version=version,
            )
            out.put(f"{base}/values.yaml", r.values_yaml(comp.values))
            out.folders[comp.name] = base
        else:
            files, requires, namespaces = _static_manifests(out, unit, base)
            entry["files"] = files
            if requires:
                entry["requires"] = requires
            if namespaces:
                entry["namespaces"] = namespaces
            if unit.kind == "local":
                out.put(f"{base}/values.yaml", r.values_yaml(comp.values))
                out.folders[comp.name] = base
        listed.append(entry)
        seeded = components.setdefault(comp.name, {"enabled": True, "values": {}})
        if comp.cluster_values:
            seeded["values"] = comp.cluster_values
        release: dict[str, Any] = {
            "component": comp.name,
            "name": unit.name,
            "namespace": unit.namespace,
            "path": base,
        }
        if unit.kind != "upstream":
            release["manifest"] = [f"{base}/{f}" for f in entry["files"]]
        out.releases.append(release)
    locks = {c: sorted(p) for c, p in sorted(ctx.locks.items()) if c in components and p}
    name, value = profile or ("", "")
    out.put("static/units.json", json.dumps({"units": listed}, indent=2) + "\n")
    out.put(
        "static/locks.json",
        json.dumps(
            {"name": name, "profile": f"{name}={value}" if name else "", "paths": locks}, indent=2
        )
        + "\n",
    )
    chart = chart_yaml(cfg.app_name, "AICR bundle as Argo CD Applications", ctx.recipe_version)
    out.put("Chart.yaml", go_yaml(chart))
    values = {
        "argocd": {
            "namespace": cfg.option("namespace"),
            "project": cfg.option("project"),
            "destinationServer": cfg.option("destinationServer"),
        },
        "components": components,
    }
    # a Helm values file: strings Helm's YAML 1.1 reader would retype ("yes") are quoted
    out.put("values.yaml", r.values_yaml(values))
    out.put("values.schema.json", json.dumps(schema(components), indent=2) + "\n")
    for tname in TEMPLATES:
        out.put(f"templates/{tname}", text(f"argocd-helm/{tname}"))
    pushes = ""
    if ctx.vendored:
        out.put(
            ".helmignore",
            f"# the vendored chart archives are pushed, not subcharts\n{VENDOR_DIR}/\n",
        )
        pushes = "".join(
            prose.phrase("push", "line", archive=quote(v.file), target=quote(pushed_to))
            for _n, v in sorted(ctx.vendored.items())
        )
    out.deploy_text = prose.section(
        "argocd-helm",
        pushes=pushes,
        app=quote(cfg.app_name),
        namespace=quote(cfg.option("namespace")),
        serial=prose.when(cfg.serial, "serial", "argocd-helm"),
        vendored=prose.when(ctx.vendored, "vendored", "argocd-helm", pushed_to=pushed_to),
    )
    return out


def _static_manifests(
    out: DeployOutput, unit: Unit, base: str
) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The unit's manifests under ``base`` with their sync-wave set; per file the
    ``group/version/Kind`` of each custom resource in it whose CRD the file does not carry
    (``.Capabilities.APIVersions.Has`` form), so the root chart renders it only once served;
    and the namespaces its objects name (the root chart creates them: nothing else has yet
    when Helm installs it)."""
    from aicr_tui.core.bundler.render import PROTECTED_NAMESPACES, custom_kinds, go_yaml
    from aicr_tui.core.bundler.templates import parse_manifest_documents

    comp = unit.component
    sources: dict[str, str]
    if unit.kind == "readiness":
        sources = {"readiness.yaml": readiness_manifests(unit, "argocd-helm")}
    else:
        sources = dict(comp.manifests)
    files = []
    requires: dict[str, list[str]] = {}
    namespaces: set[str] = set()
    for fname in sorted(sources):
        kinds = [f"{gv}/{kind}" for gv, kind in custom_kinds(sources[fname], fname)]
        if kinds:
            requires[fname] = kinds
        docs = parse_manifest_documents(sources[fname], f"{comp.name}/{fname}")
        annotated = []
        for doc in docs:
            from aicr_tui.core.foundation.tree import copy_tree

            doc = copy_tree(doc)
            meta = doc.setdefault("metadata", {})
            if doc.get("kind") == "Namespace":
                namespaces.discard(str(meta.get("name", "")))
            elif meta.get("namespace") and meta["namespace"] not in PROTECTED_NAMESPACES:
                namespaces.add(str(meta["namespace"]))
            notes = meta.get("annotations") or {}
            meta["annotations"] = {**notes, WAVE: str(unit.tier)}
            annotated.append(go_yaml(doc))
        out.put(f"{base}/{fname}", "---\n".join(annotated))
        files.append(fname)
    shipped = {
        str(d.get("metadata", {}).get("name", ""))
        for fname in sources
        for d in parse_manifest_documents(sources[fname], f"{comp.name}/{fname}")
        if d.get("kind") == "Namespace"
    }
    return files, requires, sorted(namespaces - shipped)


def schema(components: dict[str, Any]) -> dict[str, Any]:
    """``values.schema.json``: the shape of the root chart's values."""
    component = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "enabled": {"type": "boolean", "description": "false leaves the component out"},
            "values": {
                "type": "object",
                "description": "install-time values merged over the bundle's values",
            },
        },
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "AICR bundle (argocd-helm) values",
        "type": "object",
        "additionalProperties": False,
        "required": ["argocd", "components"],
        "properties": {
            "global": {"type": "object"},
            "argocd": {
                "type": "object",
                "additionalProperties": False,
                "required": ["namespace", "project", "destinationServer"],
                "properties": {
                    "namespace": {"type": "string", "pattern": LABEL, "maxLength": 63},
                    "project": {"type": "string", "minLength": 1},
                    "destinationServer": {"type": "string", "minLength": 1},
                },
            },
            "components": {
                "type": "object",
                "additionalProperties": False,
                "properties": {name: component for name in components},
            },
        },
    }
