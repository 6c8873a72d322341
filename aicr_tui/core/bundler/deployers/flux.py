"""``--deployer flux``: Flux sources, HelmReleases and Kustomizations.

Layout: ``kustomization.yaml`` (the entrypoint, a kustomize file listing ``sources/``),
``sources/`` (the bundle's own OCIRepository ``--flux-oci-source-name``, one HelmRepository
or OCIRepository per chart source, and ``kustomizations.yaml`` with one Flux Kustomization
per folder), and bare ``<component>/`` folders: ``helmrelease.yaml`` with a kustomize file
that turns ``values.yaml`` (and ``cluster-values.yaml`` for ``--dynamic``) into the
ConfigMaps the HelmRelease reads, and ``manifests/`` for raw manifests (their own
Kustomization, after the chart). Every object lives in ``--flux-namespace``; each
Kustomization waits for what it applied and ``dependsOn`` the components it depends on (the
previous folder with ``--serial``). Push the bundle with ``flux push artifact`` to ``--repo``
(an ``oci://`` URL) and apply the root ``kustomization.yaml`` once.

With ``--vendor-charts`` each chart comes from the bundle's own archive: ``helm push
charts/<chart>-<version>.tgz <repo>/charts`` puts it in the same registry as the bundle, and
the HelmRelease's ``chartRef`` is an OCIRepository of that chart (a HelmChart cannot read a
chart out of the bundle's OCIRepository; its sources are HelmRepository, GitRepository and
Bucket), so Flux reaches no chart repository of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler import prose
from aicr_tui.core.bundler.deployers.common import DeployContext, DeployOutput, values_text
from aicr_tui.core.bundler.deployers.config import OCI_PLACEHOLDER, DeployerConfig
from aicr_tui.core.bundler.deployers.layout import Unit, build_units, repository_name
from aicr_tui.core.bundler.deployers.skeletons import load_document

if TYPE_CHECKING:
    from aicr_tui.core.bundler.vendor import VendoredChart

VENDORED_CHARTS = "charts"
"""``--vendor-charts``: the repository path (under ``--repo``) the archives are pushed to."""
HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
PRUNE_DISABLED = {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
KUSTOMIZE = "kustomize.config.k8s.io/v1beta1"


def render(ctx: DeployContext) -> DeployOutput:
    from aicr_tui.core.bundler import render as r
    from aicr_tui.core.bundler.render import go_yaml

    cfg = ctx.config
    ns = cfg.flux_namespace
    out = DeployOutput()
    units = build_units(ctx.components, cfg, numbered=False)
    sources: dict[str, dict[str, Any]] = {}
    bundle = load_document("flux/ocirepository.yaml")
    bundle["metadata"].update(name=cfg.flux_oci_source_name, namespace=ns)
    bundle["spec"]["url"] = cfg.repo or OCI_PLACEHOLDER
    sources[f"sources/{cfg.flux_oci_source_name}.yaml"] = bundle
    kustomizations: list[dict[str, Any]] = []
    for unit in units:
        comp = unit.component
        folder = comp.name
        if unit.kind == "upstream":
            out.folders[comp.name] = folder
            out.put(f"{folder}/values.yaml", values_text(comp.values))
            if comp.cluster_values is not None:
                out.put(f"{folder}/cluster-values.yaml", r.cluster_values_yaml(comp.cluster_values))
            release = _helmrelease(unit, cfg, sources, ctx.vendored.get(comp.name))
            out.put(f"{folder}/helmrelease.yaml", go_yaml(release))
            out.put(f"{folder}/kustomization.yaml", go_yaml(_kustomize_file(unit, ns)))
            path = f"./{folder}"
            entry: dict[str, Any] = {"path": folder}
        else:
            if unit.kind == "local":
                out.folders[comp.name] = folder
                out.put(f"{folder}/values.yaml", values_text(comp.values))
                namespace = {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": comp.namespace, "annotations": dict(PRUNE_DISABLED)},
                }
                out.put(f"{folder}/manifests/namespace.yaml", go_yaml(namespace))
            for mname in sorted(comp.manifests):
                out.put(f"{folder}/manifests/{mname}", comp.manifests[mname])
            path = f"./{folder}/manifests"
            entry = {
                # a manifest-only component's values sit in its folder, like a chart's
                "path": folder if unit.kind == "local" else f"{folder}/manifests",
                "manifest": [f"{folder}/manifests/{m}" for m in sorted(comp.manifests)],
            }
        kustomizations.append(_flux_kustomization(unit, cfg, path))
        out.releases.append(
            {"component": comp.name, "name": unit.name, "namespace": comp.namespace, **entry}
        )
    for rel, doc in sources.items():
        out.put(rel, go_yaml(doc))
    out.put("sources/kustomizations.yaml", "---\n".join(go_yaml(k) for k in kustomizations))
    root = {
        "apiVersion": KUSTOMIZE,
        "kind": "Kustomization",
        "resources": sorted([*sources, "sources/kustomizations.yaml"]),
    }
    out.put("kustomization.yaml", go_yaml(root))
    out.deploy_text = deploy_text(cfg, sorted(v.file for v in ctx.vendored.values()))
    return out


def _helmrelease(
    unit: Unit,
    cfg: DeployerConfig,
    sources: dict[str, dict[str, Any]],
    vendored: VendoredChart | None = None,
) -> dict[str, Any]:
    comp = unit.component
    ns = cfg.flux_namespace
    hr = load_document("flux/helmrelease.yaml")
    hr["metadata"].update(name=unit.name, namespace=ns)
    spec = hr["spec"]
    spec.update(
        releaseName=unit.name, targetNamespace=comp.namespace, storageNamespace=comp.namespace
    )
    chart = comp.chart or comp.name
    url = comp.source.rstrip("/")
    tag = comp.version
    if vendored is not None:
        # the archive pushed from the bundle to <repo>/charts: helm push tags it by version
        url, tag = (
            f"{(cfg.repo or OCI_PLACEHOLDER).rstrip('/')}/{VENDORED_CHARTS}",
            vendored.oci_tag,
        )
    if url.startswith("oci://"):
        name = f"{unit.name}-chart"
        src = load_document("flux/ocirepository.yaml")
        src["metadata"].update(name=name, namespace=ns)
        src["spec"]["url"] = f"{url}/{chart}"
        src["spec"]["ref"] = {"tag": tag}
        src["spec"]["layerSelector"] = {"mediaType": HELM_LAYER, "operation": "copy"}
        sources[f"sources/{name}.yaml"] = src
        spec["chartRef"] = {"kind": "OCIRepository", "name": name, "namespace": ns}
    else:
        name = repository_name(url)
        src = load_document("flux/helmrepository.yaml")
        src["metadata"].update(name=name, namespace=ns)
        src["spec"]["url"] = url
        sources[f"sources/{name}.yaml"] = src
        spec["chart"] = {
            "spec": {
                "chart": chart,
                "version": comp.version,
                "sourceRef": {"kind": "HelmRepository", "name": name, "namespace": ns},
                "interval": "1h",
            }
        }
    spec["valuesFrom"] = [
        {"kind": "ConfigMap", "name": f"{unit.name}-values", "valuesKey": "values.yaml"}
    ]
    if comp.cluster_values is not None:
        spec["valuesFrom"].append(
            {"kind": "ConfigMap", "name": f"{unit.name}-values", "valuesKey": "cluster-values.yaml"}
        )
    return hr


def _kustomize_file(unit: Unit, ns: str) -> dict[str, Any]:
    files = ["values.yaml"]
    if unit.component.cluster_values is not None:
        files.append("cluster-values.yaml")
    return {
        "apiVersion": KUSTOMIZE,
        "kind": "Kustomization",
        "resources": ["helmrelease.yaml"],
        "configMapGenerator": [
            {
                "name": f"{unit.name}-values",
                "namespace": ns,
                "files": files,
                "options": {"disableNameSuffixHash": True},
            }
        ],
    }


def _flux_kustomization(unit: Unit, cfg: DeployerConfig, path: str) -> dict[str, Any]:
    ks = load_document("flux/kustomization.yaml")
    ks["metadata"].update(name=unit.name, namespace=cfg.flux_namespace)
    spec = ks["spec"]
    spec["path"] = path
    spec["sourceRef"]["name"] = cfg.flux_oci_source_name
    if unit.deps:
        spec["dependsOn"] = [{"name": d} for d in unit.deps]
    return ks


def deploy_text(cfg: DeployerConfig, vendored: list[str] | None = None) -> str:
    from aicr_tui.core.bundler.shell import quote

    repo = cfg.repo or OCI_PLACEHOLDER
    missing = (
        ""
        if cfg.repo
        else prose.phrase(
            "repo", "flux-missing", source=cfg.flux_oci_source_name, placeholder=OCI_PLACEHOLDER
        )
    )
    charts = f"{repo.rstrip('/')}/{VENDORED_CHARTS}"
    pushes = "".join(
        prose.phrase("push", "line", archive=quote(f), target=quote(charts)) for f in vendored or []
    )
    return prose.section(
        "flux",
        pushes=pushes,
        # quoted as the scripts quote: the README invites pasting this block into a shell
        artifact=quote(repo + ":latest"),
        source=cfg.flux_oci_source_name,
        flux_namespace=cfg.flux_namespace,
        missing=missing,
        serial=prose.when(cfg.serial, "serial", "flux"),
        vendored=prose.when(vendored, "vendored", "flux", charts=charts),
    )
