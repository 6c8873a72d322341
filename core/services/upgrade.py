"""``upgrade-check``: each component's verdict for moving from one bundle to another, from
the objects both sides render (offline, Helm's own engine) and compared by
:mod:`core.bundler.upgrade`.

``--from`` is a bundle directory or a recipe file, ``--to`` a recipe file (or a bundle
directory); a recipe is planned as ``aicr-tui bundle`` plans it with default options.
A component whose chart cannot be rendered on either side is ``unknown``. A change of the
``gpuStack`` selection moves GPU driver ownership between the cloud and the GPU Operator:
it is ``blocked`` until the nodes are drained, and the plan is written out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.bundler.upgrade import (
    BLOCKED,
    MANUAL,
    RANK,
    SAFE,
    UNKNOWN,
    ComponentVerdict,
    compare_crds,
    compare_objects,
    compare_versions,
)
from core.foundation.errors import invalid
from core.foundation.record import Record, field


class UpgradeReport(Record):
    components: list[ComponentVerdict] = field(default_factory=list)
    from_selection: str = ""
    to_selection: str = ""
    drain_plan: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        verdicts = [c.verdict for c in self.components] or [SAFE]
        return max(verdicts, key=RANK.__getitem__)


def side(source: str, what: str) -> tuple[Any, Any]:
    """(VerifyInput, RecipeResult) of a bundle directory or a recipe file."""
    from core.recipe.loading import load_recipe
    from core.services.mirror import recipe_input
    from core.verify.api import bundle_input

    path = Path(source)
    if path.is_dir():
        return bundle_input(path), load_recipe(str(path / "recipe.yaml"))
    if path.is_file():
        return recipe_input(path), load_recipe(str(path))
    raise invalid(f"{what} {source}: no such bundle directory or recipe file")


def live_side(
    kubeconfig: str | None, context: str | None, new_input: Any
) -> tuple[Any, dict[str, Any]]:
    """The installed releases of the target's components (by release name, or by chart
    for a renamed one) as the old side: a VerifyInput and each release's objects as Helm
    recorded them. Releases of other charts are not ours to judge and are left out."""
    from core.live.helm_releases import read_releases
    from core.verify.analysis import _documents_of
    from core.verify.model import VerifyComponent, VerifyInput
    from core.verify.objects import RenderedStep

    names = {c.name for c in new_input.components}
    charts = {c.chart.rsplit("/", 1)[-1] for c in new_input.components if c.source}
    comps: list[Any] = []
    rendered: dict[str, Any] = {}
    for rel in read_releases(kubeconfig, context):
        if rel.name not in names and rel.chart not in charts:
            continue
        if rel.name in rendered:
            continue  # one release name in two namespaces: the first (sorted) is compared
        step = RenderedStep(rel.name)
        texts = [(rel.manifest, f"release {rel.namespace}/{rel.name}")]
        texts += [(t, f"release {rel.namespace}/{rel.name} crds/") for t in rel.crds]
        for i, docs in enumerate(_documents_of(texts)):
            if isinstance(docs, ValueError):
                step.problem = step.problem or str(docs)
            elif i == 0:
                step.objects += docs
            else:
                step.crds += [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
        rendered[rel.name] = step
        merged = _coalesce(rel.defaults, rel.values)
        comps.append(
            VerifyComponent(
                rel.name, "(cluster)", rel.namespace, rel.chart, "", rel.version, merged, {}
            )
        )
    return VerifyInput(comps, ""), rendered


def _coalesce(defaults: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    out = dict(defaults)
    for key, value in values.items():
        base = out.get(key)
        out[key] = (
            _coalesce(base, value) if isinstance(base, dict) and isinstance(value, dict) else value
        )
    return out


def _driver_enabled(values: Any) -> bool | None:
    driver = values.get("driver") if isinstance(values, dict) else None
    enabled = driver.get("enabled") if isinstance(driver, dict) else None
    return enabled if isinstance(enabled, bool) else None


def _live_driver_owner(
    report: UpgradeReport, old_input: Any, new_input: Any, new_recipe: Any
) -> None:
    """From a live cluster the selection is not recorded: driver ownership is read from the
    installed GPU Operator's values (driver.enabled) and compared with the target's."""
    old = {c.name: c for c in old_input.components}.get("gpu-operator")
    new = {c.name: c for c in new_input.components}.get("gpu-operator")
    if old is None or new is None:
        return
    before, after = _driver_enabled(old.values), _driver_enabled(new.values)
    if before is None or after is None or before == after:
        return
    owner = {True: "the GPU Operator", False: "the cloud"}
    report.from_selection = f"driver owned by {owner[before]} (installed)"
    report.to_selection = _selection(new_recipe) or f"driver owned by {owner[after]}"
    plan_target = "operator-managed" if after else "managed"
    report.drain_plan = drain_plan(new_recipe.criteria.service, report.from_selection, plan_target)
    for verdict in report.components:
        if verdict.component == "gpu-operator":
            verdict.add(
                BLOCKED,
                f"GPU driver ownership moves from {owner[before]} to {owner[after]} "
                "(driver.enabled): blocked until the GPU nodes are drained (the drain plan below)",
            )


def _selection(recipe: Any) -> str:
    p = recipe.metadata.selectedProfile
    return f"{p.name}={p.value}" if p is not None else ""


def drain_plan(service: str, before: str, after: str) -> list[str]:
    """The steps that move GPU driver ownership safely, in order."""
    to_operator = after.endswith("operator-managed")
    if service == "aks":
        pools = (
            "recreate the GPU node pools with --gpu-driver none (the GPU Operator installs the driver)"
            if to_operator
            else "recreate the GPU node pools with the AKS driver-only install (not "
            "--enable-managed-gpu; AKS installs the driver)"
        )
    elif service == "oke":
        pools = (
            "remove the NvidiaGpuPlugin cluster add-on (the GPU Operator takes over)"
            if to_operator
            else "install the NvidiaGpuPlugin cluster add-on and wait until it is ACTIVE"
        )
    else:
        pools = "move the GPU nodes to the new driver owner"
    return [
        "cordon every GPU node: kubectl cordon -l nvidia.com/gpu.present=true",
        "drain the GPU workloads: kubectl drain -l nvidia.com/gpu.present=true "
        "--ignore-daemonsets --delete-emptydir-data",
        f"{pools}, then recapture and requalify ({after})",
        "apply the new bundle (deploy.sh, or the upgraded releases)",
        "uncordon the GPU nodes and run aicr-tui validate",
    ]


def upgrade_check(
    from_source: str | None,
    to_source: str,
    *,
    charts: Sequence[Path] = (),
    pull_timeout: float | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> UpgradeReport:
    """``from_source`` (a bundle or recipe), or with None the live cluster's releases."""
    from core.services.bundle import chart_verifier

    old = side(from_source, "--from") if from_source is not None else None
    new_input, new_recipe = side(to_source, "--to")
    verifier = chart_verifier(charts, pull_timeout=pull_timeout)
    if old is None:
        old_input, rendered = live_side(kubeconfig, context, new_input)
        return compare_sides(
            old_input, None, new_input, new_recipe, verifier, old_rendered=rendered
        )
    return compare_sides(old[0], old[1], new_input, new_recipe, verifier)


def compare_sides(
    old_input: Any,
    old_recipe: Any,
    new_input: Any,
    new_recipe: Any,
    verifier: Any,
    *,
    old_rendered: dict[str, Any] | None = None,
) -> UpgradeReport:
    """The verdicts for moving from the old side to the new (VerifyInput and recipe each).
    ``old_rendered`` (a live cluster): the old objects as installed, by component; the old
    side is then not rendered, and its recipe is None."""
    from core.verify.objects import rendered_step

    report = UpgradeReport(
        from_selection=_selection(old_recipe) if old_recipe is not None else "",
        to_selection=_selection(new_recipe),
    )
    old_by = {c.name: c for c in old_input.components}
    new_by = {c.name: c for c in new_input.components}
    order = [c.name for c in new_input.components] + [n for n in old_by if n not in new_by]
    for name in order:
        a, b = old_by.get(name), new_by.get(name)
        verdict = ComponentVerdict(name, a.version if a else "", b.version if b else "")
        report.components.append(verdict)
        if a is None:
            verdict.add(SAFE, "new in the target: installed fresh")
            continue
        if b is None:
            verdict.add(
                MANUAL,
                "not in the target: an upgrade leaves it installed; remove it with the old "
                "bundle's undeploy step",
            )
            continue
        compare_versions(verdict)
        if a.source and b.source and a.source != b.source:
            verdict.add(MANUAL, f"chart source changes from {a.source} to {b.source}")
        before = old_rendered[name] if old_rendered is not None else rendered_step(verifier, a)
        after = rendered_step(verifier, b)
        for side, step in (("current", before), ("target", after)):
            if step.problem:
                verdict.add(UNKNOWN, f"the {side} chart could not be rendered: {step.problem}")
        if before.problem or after.problem:
            continue
        crds_a = before.crds + [
            o for o in before.objects if o.get("kind") == "CustomResourceDefinition"
        ]
        crds_b = after.crds + [
            o for o in after.objects if o.get("kind") == "CustomResourceDefinition"
        ]
        compare_crds(verdict, crds_a, crds_b)
        compare_objects(verdict, before.objects, after.objects)
    _renamed_releases(report, old_by, new_by)
    if old_rendered is None:
        _value_findings(report, verifier, old_input, new_input)
    else:
        _live_driver_owner(report, old_input, new_input, new_recipe)
        return report
    if report.from_selection != report.to_selection:
        service = new_recipe.criteria.service
        report.drain_plan = drain_plan(service, report.from_selection, report.to_selection)
        profile = new_recipe.metadata.selectedProfile or old_recipe.metadata.selectedProfile
        owned = sorted(profile.ownedPaths) if profile is not None else ["gpu-operator"]
        for verdict in report.components:
            if verdict.component in owned:
                verdict.add(
                    BLOCKED,
                    f"{report.from_selection or '(no profile)'} -> "
                    f"{report.to_selection or '(no profile)'} moves GPU driver ownership: "
                    "blocked until the GPU nodes are drained (the drain plan below)",
                )
    return report


def _renamed_releases(
    report: UpgradeReport, old_by: dict[str, Any], new_by: dict[str, Any]
) -> None:
    """A chart that leaves under one release name and arrives under another is a rename:
    Helm installs the new release beside the old one (delete and create)."""
    gone = {c.chart.rsplit("/", 1)[-1]: n for n, c in old_by.items() if n not in new_by and c.chart}
    for name, comp in new_by.items():
        before = gone.get(comp.chart.rsplit("/", 1)[-1]) if name not in old_by else None
        if before is None:
            continue
        for verdict in report.components:
            if verdict.component == name:
                verdict.add(
                    MANUAL,
                    f"release renamed from {before}: Helm installs {name} beside {before}, "
                    f"whose objects stay until {before} is uninstalled (objects both claim "
                    "collide)",
                )


def _value_findings(report: UpgradeReport, verifier: Any, old_input: Any, new_input: Any) -> None:
    """What ``verify`` finds in the target values that it did not find in the current ones:
    a value the new chart ignores (manual) or one its values.schema.json refuses (blocked:
    Helm refuses the upgrade)."""
    from core.verify.model import SCHEMA, UNDEFINED_VALUE

    before = verifier.verify(old_input)
    after = verifier.verify(new_input)
    seen = {(f.component, f.kind, f.path or f.message) for f in before.findings}
    by = {v.component: v for v in report.components}
    for f in after.findings:
        verdict = by.get(f.component)
        if verdict is None or (f.component, f.kind, f.path or f.message) in seen:
            continue
        if f.kind == UNDEFINED_VALUE:
            verdict.add(MANUAL, f"a value the target chart ignores: {f.message}")
        elif f.kind == SCHEMA:
            verdict.add(
                BLOCKED, f"the target values fail the chart's schema (Helm refuses): {f.message}"
            )


def upgrading_markdown(report: UpgradeReport, source: str) -> str:
    """``UPGRADING.md`` of a bundle built with ``--upgrade-from``: the verdicts, then the
    steps in order (what blocks first, the drain plan, manual steps, the upgrade itself)."""
    lines = [
        "# Upgrading to this bundle",
        "",
        f"Checked against `{source}` with `aicr-tui upgrade-check` (rendered objects, offline). "
        f"Overall verdict: **{report.verdict}**.",
        "",
        "| component | from | to | verdict |",
        "|---|---|---|---|",
    ]
    for c in report.components:
        lines.append(
            f"| `{c.component}` | {c.from_version or '-'} | {c.to_version or '-'} | {c.verdict} |"
        )
    steps: list[str] = []
    for wanted in (BLOCKED, UNKNOWN):
        for c in report.components:
            for r in c.reasons:
                if r.verdict == wanted and "drain plan" not in r.text:
                    steps.append(f"resolve ({wanted}) `{c.component}`: {r.text}")
    steps += report.drain_plan[:3]
    for c in report.components:
        for r in c.reasons:
            if r.verdict == MANUAL:
                steps.append(f"`{c.component}` (manual): {r.text}")
    steps.append("run `./deploy.sh` (every release is `helm upgrade --install`)")
    steps += report.drain_plan[4:] or ["run `aicr-tui validate` against the upgraded cluster"]
    lines += ["", "## Steps, in order", ""]
    lines += [f"{i}. {step}" for i, step in enumerate(steps, 1)]
    return "\n".join(lines) + "\n"


def with_upgrade_notes(bundle_plan: Any, report: UpgradeReport, source: str) -> Any:
    """``bundle_plan`` carrying ``UPGRADING.md``, with ``checksums.txt`` covering it."""
    from core.bundler import render

    files = {k: v for k, v in bundle_plan.files.items() if k != "checksums.txt"}
    files["UPGRADING.md"] = upgrading_markdown(report, source).encode("utf-8")
    files["checksums.txt"] = render.checksums(files).encode()
    bundle_plan.files = dict(sorted(files.items()))
    return bundle_plan
