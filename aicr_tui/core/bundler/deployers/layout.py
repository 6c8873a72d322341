"""The folder model every deployer shares: install units, their order and their tiers.

A rendered component becomes one to three *units* (upstream: localformat folder kinds):

- ``upstream``: a chart from its repository (``values.yaml``, ``cluster-values.yaml`` for
  ``--dynamic``, ``upstream.env`` with CHART/REPO/VERSION; no ``Chart.yaml``);
- ``local``: a manifest-only component as a local chart (``Chart.yaml`` + ``templates/`` +
  ``values.yaml``);
- ``post``: the raw manifests of a component that also has an upstream chart, as a local
  chart installed after it (``NNN-<component>-post``);
- ``readiness`` (``--readiness-hooks``): a local chart whose Job waits for the component's
  ``expectedResources`` to roll out (``NNN-<component>-readiness``).

Units are numbered 1-based in deployment order, each injected folder shifting the later
numbers. A unit's dependencies are the last unit of every component it depends on (edges to
skipped components are already pruned) plus its own earlier unit; its *tier* is one more
than its deepest dependency's, or its position with ``--serial`` (strictly sequential).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from aicr_tui.core.foundation.digest import sha256_hex

if TYPE_CHECKING:
    from aicr_tui.core.bundler.deployers.config import DeployerConfig
    from aicr_tui.core.bundler.model import ComponentPlan

UnitKind = Literal["upstream", "local", "post", "readiness"]


@dataclass
class Unit:
    component: ComponentPlan
    kind: UnitKind
    name: str
    """Release / Application name: the component's, or ``<component>-post``/``-readiness``."""
    folder: str
    index: int
    deps: list[str] = field(default_factory=list)
    tier: int = 1

    @property
    def namespace(self) -> str:
        return self.component.namespace

    @property
    def local(self) -> bool:
        return self.kind != "upstream"


def build_units(
    components: list[ComponentPlan], config: DeployerConfig, *, numbered: bool = True
) -> list[Unit]:
    """Units in deployment order with their dependencies and tiers."""
    units: list[Unit] = []
    last: dict[str, str] = {}

    def add(comp: ComponentPlan, kind: UnitKind, name: str, deps: list[str]) -> None:
        index = len(units) + 1
        folder = f"{index:03d}-{name}" if numbered else name
        units.append(Unit(comp, kind, name, folder, index, deps))
        last[comp.name] = name

    for comp in components:
        upstream = [last[d] for d in comp.dependencies if d in last]
        if comp.has_chart:
            add(comp, "upstream", comp.name, upstream)
            if comp.manifests:
                add(comp, "post", f"{comp.name}-post", [comp.name])
        else:
            add(comp, "local", comp.name, upstream)
        if config.readiness_hooks and waitable(comp):
            add(comp, "readiness", f"{comp.name}-readiness", [last[comp.name]])
    by_name = {u.name: u for u in units}
    for pos, unit in enumerate(units):
        if config.serial:
            unit.deps = [units[pos - 1].name] if pos else []
            unit.tier = pos + 1
        else:
            unit.tier = 1 + max((by_name[d].tier for d in unit.deps), default=0)
    return units


READINESS_KINDS = {
    "Deployment": "deployment",
    "DaemonSet": "daemonset",
    "StatefulSet": "statefulset",
}


def waitable(comp: ComponentPlan) -> bool:
    return any(r.get("kind") in READINESS_KINDS for r in comp.expected_resources)


def tiers(units: list[Unit]) -> list[list[Unit]]:
    out: dict[int, list[Unit]] = {}
    for unit in units:
        out.setdefault(unit.tier, []).append(unit)
    return [out[t] for t in sorted(out)]


def chart_reference(comp: ComponentPlan) -> str:
    """``oci://registry/path/chart`` for an OCI source, else the chart name."""
    chart = comp.chart or comp.name
    if comp.source.startswith("oci://"):
        return f"{comp.source.rstrip('/')}/{chart}"
    return chart


def repository_name(url: str) -> str:
    """A stable DNS-1123 name for a chart repository URL (host and path, then a digest)."""
    body = url.split("://", 1)[-1].lower()
    slug = "".join(ch if ch.isalnum() else "-" for ch in body).strip("-")
    while "--" in slug:
        slug = slug.replace("--", "-")
    digest = sha256_hex(url.encode())[:8]
    return f"{slug[:50].rstrip('-')}-{digest}"


def escape_helm_template(text: str) -> str:
    """Raw manifest text made inert for Helm's template engine (``{{``/``}}`` printed)."""
    if "{{" not in text and "}}" not in text:
        return text
    left, right = "\x00L\x00", "\x00R\x00"
    text = text.replace("{{", left).replace("}}", right)
    return text.replace(left, '{{ "{{" }}').replace(right, '{{ "}}" }}')


def chart_yaml(name: str, description: str, app_version: str) -> dict[str, Any]:
    """A generated local chart's ``Chart.yaml`` (upstream: version = the tool version)."""
    from aicr_tui.core import __version__

    return {
        "apiVersion": "v2",
        "name": name,
        "description": description,
        "type": "application",
        "version": __version__,
        "appVersion": app_version or __version__,
        "annotations": {
            "aicr.run/component-version": app_version or "",
            "aicr.run/generated-by": f"aicr-tui {__version__}",
        },
    }


def upstream_env(comp: ComponentPlan) -> str:
    """``upstream.env``: where the chart comes from, as shell-safe assignments."""
    from aicr_tui.core.bundler.shell import quote

    return (
        "# Chart source of this folder (sourced by install tooling; data only).\n"
        f"CHART={quote(comp.chart or comp.name)}\n"
        f"REPO={quote(comp.source)}\n"
        f"VERSION={quote(comp.version)}\n"
    )


def readiness_manifests(unit: Unit, deployer: str) -> str:
    """The readiness Job (and the RBAC it needs) for one component's expected resources.

    One container per resource runs ``kubectl rollout status`` with the names as separate
    arguments (no shell). Under helm the Job is a post-install/post-upgrade hook, which
    ``helm --wait`` waits for; under Argo CD it is a plain resource (a running Job keeps the
    Application Progressing, so the next sync wave waits), replaced on every sync.
    """
    from aicr_tui.core.bundler.deployers.skeletons import load_documents
    from aicr_tui.core.bundler.render import go_yaml

    comp = unit.component
    targets = [
        r for r in comp.expected_resources if r.get("kind") in READINESS_KINDS and r.get("name")
    ]
    namespaces = sorted({str(r.get("namespace") or comp.namespace) for r in targets})
    sa, role, binding, job = load_documents("readiness.yaml")
    name = unit.name
    sa["metadata"].update(name=name, namespace=comp.namespace)
    docs: list[dict[str, Any]] = [sa]
    for ns in namespaces:
        r = _copy(role)
        r["metadata"].update(name=name, namespace=ns)
        b = _copy(binding)
        b["metadata"].update(name=name, namespace=ns)
        b["roleRef"]["name"] = name
        b["subjects"][0].update(name=name, namespace=comp.namespace)
        docs += [r, b]
    job["metadata"].update(name=name, namespace=comp.namespace)
    if deployer == "helm":
        job["metadata"]["annotations"] = {
            "helm.sh/hook": "post-install,post-upgrade",
            "helm.sh/hook-delete-policy": "before-hook-creation",
        }
    else:
        job["metadata"]["annotations"] = {
            "argocd.argoproj.io/sync-options": "Force=true,Replace=true"
        }
    spec = job["spec"]["template"]["spec"]
    spec["serviceAccountName"] = name
    (template,) = spec["containers"]
    containers = []
    for i, r in enumerate(targets):
        c = _copy(template)
        ns = str(r.get("namespace") or comp.namespace)
        c["name"] = f"wait-{i}"
        c["args"] = [
            "rollout",
            "status",
            f"{READINESS_KINDS[str(r['kind'])]}/{r['name']}",
            "--namespace",
            ns,
            "--timeout=1500s",
        ]
        containers.append(c)
    spec["containers"] = containers
    docs.append(job)
    return "---\n".join(go_yaml(d) for d in docs)


def _copy(value: Any) -> Any:
    from aicr_tui.core.foundation.tree import copy_tree

    return copy_tree(value)
