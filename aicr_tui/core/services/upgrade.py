"""``upgrade-check``: each component's verdict for moving from what is installed (a recipe,
a written bundle, or a live cluster's Helm releases) to a target recipe.

Both sides are rendered offline by the verify engine (:mod:`aicr_tui.core.verify.upgrade` compares
the objects); a live side is read from Helm's release records (its manifest is what is
installed, so no old chart is needed). The driver ownership (``gpuStack``) is compared
across the whole stack and reported on ``gpu-operator``.

Exit codes (worst component wins, blocked over unknown over manual): 0 all safe,
10 manual, 11 unknown, 12 blocked; 2 bad input, as every command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler.shell import words
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.verify.model import _clean
from aicr_tui.core.verify.upgrade import (
    compare_component,
    index,
    label,
    parse_objects,
    rendered_side,
)
from aicr_tui.core.verify.upgrade_verdicts import (
    ADDED,
    BLOCKED,
    GPU_STACK,
    MANUAL,
    REMOVED,
    SAFE,
    SEVERITY,
    UNKNOWN,
    Reason,
    Side,
    worst,
)

if TYPE_CHECKING:
    from aicr_tui.core.bundler.model import BundlePlan
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.live.helm_releases import HelmRelease
    from aicr_tui.core.services.bundle import BundleOptions
    from aicr_tui.core.verify.analysis import Verifier

EXIT_CODES = {SAFE: 0, MANUAL: 10, UNKNOWN: 11, BLOCKED: 12}
GPU_OPERATOR = "gpu-operator"
OWNED = "object-owned-by-another-release"


@dataclass
class StackSide:
    """Everything one side installs."""

    label: str
    components: dict[str, Side]
    gpu_stack: str = ""
    """The recipe's gpuStack selection ("" when the side has no recipe)."""
    service: str = ""
    others: list[Side] = field(default_factory=list)
    """Live releases that are none of the target's components (their objects still
    belong to them)."""


@dataclass
class ComponentVerdict:
    name: str
    verdict: str
    from_version: str
    to_version: str
    reasons: list[Reason]

    def to_json(self) -> dict[str, Any]:
        return {
            "component": _clean(self.name),
            "verdict": self.verdict,
            "from": _clean(self.from_version),
            "to": _clean(self.to_version),
            "reasons": [
                {
                    "kind": r.kind,
                    "verdict": r.verdict,
                    "message": _clean(r.message),
                    "steps": [_clean(s) for s in r.steps],
                }
                for r in self.reasons
            ],
        }


@dataclass
class UpgradeReport:
    source: str
    target: str
    components: list[ComponentVerdict] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return worst(c.verdict for c in self.components)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "UpgradeCheck",
            "apiVersion": "aicr-tui/v1",
            "from": _clean(self.source),
            "to": _clean(self.target),
            "verdict": self.verdict,
            "exitCode": self.exit_code,
            "components": [c.to_json() for c in self.components],
        }

    def render_table(self) -> str:
        rows = [
            (c.name, c.verdict.upper(), c.from_version or "-", c.to_version or "-")
            for c in self.components
        ]
        heads = ("COMPONENT", "VERDICT", "FROM", "TO")
        widths = [max([len(h)] + [len(_clean(r[i])) for r in rows]) for i, h in enumerate(heads)]
        lines = [f"upgrade check: {_clean(self.source)} -> {_clean(self.target)}", ""]
        lines.append("  ".join(h.ljust(widths[i]) for i, h in enumerate(heads)).rstrip())
        for c, row in zip(self.components, rows, strict=True):
            lines.append("  ".join(_clean(v).ljust(widths[i]) for i, v in enumerate(row)).rstrip())
            for r in c.reasons:
                if r.verdict != SAFE:  # safe notes (unchanged, installed fresh): -o json
                    lines.append(f"    {r.verdict}: {_clean(r.message)}")
        lines.append("")
        counts = {v: sum(1 for c in self.components if c.verdict == v) for v in EXIT_CODES}
        summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        lines.append(f"result: {self.verdict.upper()} ({summary or 'no components'})")
        return "\n".join(lines) + "\n"

    def render_markdown(self) -> str:
        """UPGRADING.md: the verdicts, then the steps in order (blocked and manual first)."""
        out = [
            "# Upgrading",
            "",
            f"From `{_md(self.source)}` to `{_md(self.target)}`: **{self.verdict}** "
            f"(`aicr-tui upgrade-check` exit {self.exit_code}).",
            "",
            "| Component | Verdict | From | To |",
            "|---|---|---|---|",
        ]
        for c in self.components:
            out.append(
                f"| {_md(c.name)} | {c.verdict} | {_md(c.from_version) or '-'} | "
                f"{_md(c.to_version) or '-'} |"
            )
        out += ["", "## Steps, in order", ""]
        n = 0
        ordered = sorted(self.components, key=lambda c: -SEVERITY[c.verdict])
        for c in ordered:
            todo = [r for r in c.reasons if r.verdict != SAFE]
            if not todo:
                continue
            out.append(f"### {_md(c.name)} ({c.verdict})")
            out.append("")
            for r in todo:
                out.append(f"- {r.verdict}: {_md(r.message)}")
                for step in r.steps:
                    n += 1
                    out.append(f"  {n}. {_md(step)}")
            out.append("")
        n += 1
        out.append(
            f"{n}. Run the bundle's `deploy.sh` (helm upgrade --install per component, in order), "
            "then `aicr-tui validate`."
        )
        if any(c.verdict == UNKNOWN for c in self.components):
            out += [
                "",
                "Unknown verdicts: the inputs could not tell (see each reason). Provide the "
                "missing chart sources (`--charts DIR`) and run the check again before upgrading.",
            ]
        return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return _clean(text).replace("|", "\\|").replace("`", "'")


# --------------------------------------------------------------------------- the sides
def _side_of_input(data: Any, verifier: Verifier) -> dict[str, Side]:
    return {comp.name: rendered_side(comp, verifier) for comp in data.components}


def _profile(recipe: RecipeResult) -> str:
    prof = recipe.metadata.selectedProfile
    return prof.value if prof is not None and prof.name == "gpuStack" else ""


def recipe_side(
    recipe: RecipeResult, label: str, verifier: Verifier, options: BundleOptions | None
) -> StackSide:
    from aicr_tui.core.bundler.writer import refusal
    from aicr_tui.core.services.bundle import plan
    from aicr_tui.core.verify.api import plan_input

    bundle_plan = plan(recipe, options)
    if bundle_plan.errors:
        raise refusal(bundle_plan.errors)
    return StackSide(
        label,
        _side_of_input(plan_input(bundle_plan), verifier),
        _profile(recipe),
        recipe.criteria.service,
    )


def recipe_file_side(
    path: str, verifier: Verifier, options: BundleOptions | None = None
) -> StackSide:
    from aicr_tui.core.recipe.loading import load_recipe

    return recipe_side(load_recipe(path), path, verifier, options)


def bundle_side(path: Path, verifier: Verifier) -> StackSide:
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.verify.api import bundle_input

    data = bundle_input(path)
    recipe = load_recipe(str(path / "recipe.yaml"))
    return StackSide(
        str(path), _side_of_input(data, verifier), _profile(recipe), recipe.criteria.service
    )


def release_side(rel: HelmRelease, component: str) -> Side:
    """A live release as one side: its manifest is what is installed."""
    side = Side(
        component=component,
        release=rel.name,
        namespace=rel.namespace,
        chart=rel.chart,
        version=rel.version,
        values=rel.values,
        objects=None,
        defaults=rel.defaults or None,
    )
    if rel.status != "deployed":
        side.unknown = f"release {rel.namespace}/{rel.name} is {rel.status}, not deployed"
        return side
    got = parse_objects([(rel.manifest, f"release {rel.name} manifest")])
    crds = parse_objects([(t, f"release {rel.name} crds/") for t in rel.crds])
    if isinstance(got, str) or isinstance(crds, str):
        side.unknown = got if isinstance(got, str) else str(crds)
        return side
    side.objects, side.crds = got, crds
    return side


def live_side(releases: list[HelmRelease], target: StackSide, source: str) -> StackSide:
    """The releases that are the target's components: by release name, else by chart name
    (a release installed under another name is a rename). Other releases are not ours."""
    out: dict[str, Side] = {}
    taken: set[tuple[str, str]] = set()
    for name, side in target.components.items():
        hit = next((r for r in releases if r.name == name), None)
        if hit is None:
            wanted = {side.chart, side.chart_name, name} - {""}
            hit = next(
                (r for r in releases if r.chart in wanted and (r.namespace, r.name) not in taken),
                None,
            )
        if hit is not None:
            taken.add((hit.namespace, hit.name))
            out[name] = release_side(hit, name)
    others = [release_side(r, r.name) for r in releases if (r.namespace, r.name) not in taken]
    return StackSide(f"live cluster ({source})", out, others=others)


def ownership_reasons(name: str, old: StackSide, new: StackSide) -> list[Reason]:
    """Objects the target component installs that another release owns on the source
    side: Helm refuses to take them (invalid ownership metadata), unless that release is
    upgraded first and drops them (then the order of the steps matters)."""
    side = new.components.get(name)
    if side is None or not side.objects:
        return []
    mine = set(index(side.objects, side.namespace))
    out: list[Reason] = []
    owners = [(n, s) for n, s in old.components.items() if n != name] + [
        (None, s) for s in old.others
    ]
    for owner_name, owner in owners:
        if not owner.objects:
            continue
        clash = sorted(mine & set(index(owner.objects, owner.namespace)))
        if not clash:
            continue
        later = new.components.get(owner_name) if owner_name else None
        still = (
            later is not None
            and later.objects is not None
            and (set(clash) & set(index(later.objects, later.namespace)))
        )
        where = f"release {owner.namespace}/{owner.release}"
        first = label(clash[0])
        if owner_name and later is not None and later.objects is not None and not still:
            out.append(
                Reason(
                    OWNED,
                    MANUAL,
                    f"{len(clash)} object(s) move here from {where} (first: {first}): "
                    f"{owner_name} must be upgraded first, or Helm refuses to take them",
                    (f"upgrade {owner_name} before {name}",),
                )
            )
        else:
            out.append(
                Reason(
                    OWNED,
                    BLOCKED,
                    f"{len(clash)} object(s) are owned by {where} (first: {first}): Helm "
                    "refuses to install them into another release",
                    (f"remove them from {where} first (uninstall it, or upgrade it without them)",),
                )
            )
    return out


# --------------------------------------------------------------------------- gpuStack
def _get(tree: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(tree, dict) or part not in tree:
            return None
        tree = tree[part]
    return tree


def driver_owner(stack: StackSide) -> str:
    """``operator`` when gpu-operator installs the driver, ``cloud`` when the node image
    does, ``""`` when the side cannot tell (gpu-operator absent or its values unknown)."""
    side = stack.components.get(GPU_OPERATOR)
    if side is None:
        return ""
    value = _get(side.values, ("driver", "enabled"))
    if value is None:
        value = _get(side.defaults, ("driver", "enabled"))
    if value is None:
        return ""
    return "operator" if value is True or str(value).lower() == "true" else "cloud"


def drain_plan(source: str, target: str, service: str) -> tuple[str, ...]:
    """The steps that move GPU driver ownership, written out in order."""
    gpu_nodes = "-l nvidia.com/gpu.present=true"
    pool = {
        "aks": "an AKS GPU node pool created with --gpu-driver {mode}",
        "oke": "an OKE node pool on an image {image}",
    }.get(service, "a GPU node pool {image}")
    steps = [
        f"kubectl cordon {gpu_nodes} (stop new GPU work on every GPU node)",
        f"kubectl drain {gpu_nodes} --ignore-daemonsets --delete-emptydir-data (move or "
        "end the running GPU workloads)",
    ]
    if target == "cloud":
        steps += [
            "upgrade gpu-operator from the bundle (driver.enabled=false: the operator removes "
            "its driver DaemonSet)",
            "replace the GPU nodes with "
            + pool.format(mode="Install", image="that ships the NVIDIA driver"),
        ]
    else:
        steps += [
            "replace the GPU nodes with "
            + pool.format(mode="None", image="without the NVIDIA driver"),
            "upgrade gpu-operator from the bundle (driver.enabled=true) and wait for "
            "nvidia-driver-daemonset to be ready on every GPU node",
        ]
    steps += [
        f"kubectl uncordon {gpu_nodes}",
        "aicr-tui validate the cluster against the target recipe",
    ]
    return tuple(steps)


def gpu_stack_reason(old: StackSide, new: StackSide, *, drain_planned: bool) -> Reason | None:
    a, b = driver_owner(old), driver_owner(new)
    if not a or not b:
        if old.gpu_stack and new.gpu_stack and old.gpu_stack != new.gpu_stack:
            return Reason(
                GPU_STACK,
                UNKNOWN,
                f"gpuStack changes from {old.gpu_stack} to {new.gpu_stack}, and the driver "
                "owner of one side cannot be read (gpu-operator values unknown)",
            )
        return None
    if a == b:
        return None
    what = f"{old.gpu_stack} -> {new.gpu_stack}: " if old.gpu_stack and new.gpu_stack else ""
    message = (
        f"gpuStack {what}the GPU driver moves from the {a} to the {b}; every GPU node "
        "loses its driver while the other owner takes over"
    )
    if drain_planned:
        return Reason(GPU_STACK, MANUAL, message + " (drain plan acknowledged)",
                      drain_plan(a, b, new.service or old.service))  # fmt: skip
    return Reason(
        GPU_STACK,
        BLOCKED,
        message + "; blocked without a drain plan (follow the steps, then pass --drain-planned)",
        drain_plan(a, b, new.service or old.service),
    )


# --------------------------------------------------------------------------- the check
def check(old: StackSide, new: StackSide, *, drain_planned: bool = False) -> UpgradeReport:
    report = UpgradeReport(old.label, new.label)
    stack = gpu_stack_reason(old, new, drain_planned=drain_planned)
    names = list(new.components) + [n for n in old.components if n not in new.components]
    for name in names:
        a, b = old.components.get(name), new.components.get(name)
        reasons: list[Reason] = []
        if a is None and b is not None:
            reasons.append(
                Reason(
                    ADDED, SAFE, f"not installed on the source side: installed fresh ({b.version})"
                )
            )
            if b.unknown:
                reasons.append(Reason("not-known", UNKNOWN, f"target side: {b.unknown}"))
        elif b is None and a is not None:
            reasons.append(
                Reason(
                    REMOVED,
                    MANUAL,
                    f"the target does not install {name}: release {a.namespace}/{a.release} "
                    "stays installed until it is uninstalled",
                    (
                        f"helm uninstall {words(a.release)} -n {words(a.namespace)} once "
                        "nothing depends on it",
                    ),
                )
            )
        elif a is not None and b is not None:
            reasons = compare_component(a, b)
        reasons += ownership_reasons(name, old, new)
        if name == GPU_OPERATOR and stack is not None:
            reasons.append(stack)
        verdict = worst(r.verdict for r in reasons)
        report.components.append(
            ComponentVerdict(
                name,
                verdict,
                a.version if a else "",
                b.version if b else "",
                reasons,
            )
        )
    if stack is not None and GPU_OPERATOR not in names:
        report.components.append(ComponentVerdict(GPU_OPERATOR, stack.verdict, "", "", [stack]))
    return report


# --------------------------------------------------------------------------- a bundle's UPGRADING.md
UPGRADING = "UPGRADING.md"


def plan_side(bundle_plan: BundlePlan, label: str, verifier: Verifier) -> StackSide:
    """The side a bundle plan installs (the values its files hold)."""
    from aicr_tui.core.verify.api import plan_input

    recipe = bundle_plan.recipe
    return StackSide(
        label,
        _side_of_input(plan_input(bundle_plan), verifier),
        _profile(recipe),
        recipe.criteria.service,
    )


def source_side(path: Path, verifier: Verifier, options: BundleOptions | None = None) -> StackSide:
    """``--from`` / ``--upgrade-from``: a bundle directory, else a recipe file."""
    if path.is_dir():
        return bundle_side(path, verifier)
    if not path.is_file():
        raise invalid(f"{path}: no such file or directory", "expected a recipe file or a bundle")
    return recipe_file_side(str(path), verifier, options)


def add_upgrading(bundle_plan: BundlePlan, report: UpgradeReport) -> None:
    """Put ``UPGRADING.md`` (the verdicts and the steps in order) into the plan's files,
    with ``checksums.txt`` recomputed to cover it."""
    from aicr_tui.core.bundler import render

    files = dict(bundle_plan.files)
    files.pop("checksums.txt", None)
    files[UPGRADING] = report.render_markdown().encode("utf-8")
    files["checksums.txt"] = render.checksums(files).encode()
    bundle_plan.files.clear()
    bundle_plan.files.update(files)


# --------------------------------------------------------------------------- the one call per action
@dataclass
class CheckRequest:
    """What ``upgrade-check`` is asked (the CLI's flags; the wizard would fill the same)."""

    source: Path | None = None
    """A recipe file or a bundle directory (else ``kubeconfig``)."""
    kubeconfig: str | None = None
    context: str | None = None
    target: Path | None = None
    """The target recipe file (else ``criteria`` and ``profile``)."""
    criteria: dict[str, str | None] = field(default_factory=dict)
    profile: str | None = None
    charts: list[Path] = field(default_factory=list)
    pull_timeout: float = 60.0
    tolerations: list[str] = field(default_factory=list)
    """Accelerated-node tolerations for planning a recipe side (AKS default: keyed)."""
    drain_planned: bool = False
    notes: list[str] = field(default_factory=list)
    """Filled: what qualification derived (the CLI prints them with -v)."""


def _options(tolerations: list[str], service: str) -> BundleOptions:
    from aicr_tui.core.services.bundle import AKS_KEYED_TOLERATION, options_from_flags

    given = list(tolerations) or ([AKS_KEYED_TOLERATION] if service == "aks" else [])
    return options_from_flags(accelerated_node_toleration=given)


def _target_side(req: CheckRequest, verifier: Verifier) -> StackSide:
    stated = any(req.criteria.values()) or bool(req.profile)
    if req.target is not None and stated:
        raise invalid("--to and criteria flags both given", "name the target one way")
    if req.target is not None:
        from aicr_tui.core.recipe.loading import load_recipe

        if not req.target.is_file():
            raise invalid(f"--to {req.target}: not a file", "expected a recipe file")
        recipe = load_recipe(str(req.target))
        options = _options(req.tolerations, recipe.criteria.service)
        return recipe_side(recipe, str(req.target), verifier, options)
    if not stated:
        raise invalid("no target: pass --to RECIPE or criteria (--service, --accelerator, …)")
    from aicr_tui.core.services.capture import qualify_selection

    result = qualify_selection(req.criteria, req.profile, None, nodes=None)
    req.notes += list(result.notes)
    verdict = result.verdict
    if verdict.error is not None:
        raise verdict.error
    if verdict.recipe is None:
        raise invalid("the criteria resolve to no recipe")
    label = verdict.criteria.label() + (f" {req.profile}" if req.profile else "")
    options = _options(req.tolerations, verdict.recipe.criteria.service)
    return recipe_side(verdict.recipe, label, verifier, options)


def upgrade_check(req: CheckRequest) -> UpgradeReport:
    """``aicr-tui upgrade-check``: both sides read and rendered, then compared."""
    from aicr_tui.core.verify.api import chart_verifier

    if (req.source is None) == (req.kubeconfig is None):
        raise invalid(
            "name the installed side once: --from RECIPE|BUNDLE_DIR or -k KUBECONFIG",
            "both given" if req.source is not None else "neither given",
        )
    if req.context and not req.kubeconfig:
        raise invalid("--context needs -k KUBECONFIG")
    if not req.pull_timeout > 0:
        raise invalid(f"--pull-timeout {req.pull_timeout:g}: expected a positive number of seconds")
    if req.source is not None and not req.source.exists():
        raise invalid(f"--from {req.source}: no such file or directory")
    verifier = chart_verifier(req.charts, pull_timeout=req.pull_timeout)
    target = _target_side(req, verifier)
    if req.kubeconfig is not None:
        from aicr_tui.core.live.helm_releases import read_releases

        releases, where = read_releases(req.kubeconfig, req.context)
        old = live_side(releases, target, where)
    else:
        assert req.source is not None
        old = source_side(req.source, verifier, _options(req.tolerations, target.service))
    return check(old, target, drain_planned=req.drain_planned)


def upgrading_for_plan(
    bundle_plan: BundlePlan,
    source: Path,
    label: str,
    *,
    charts: list[Path],
    pull_timeout: float,
    options: BundleOptions | None,
) -> str:
    """``bundle --upgrade-from``: the check from ``source`` to the plan, written into the
    plan as UPGRADING.md; returns the overall verdict."""
    from aicr_tui.core.verify.api import chart_verifier

    if not source.exists():
        raise invalid(f"--upgrade-from {source}: no such file or directory")
    verifier = chart_verifier(charts, pull_timeout=pull_timeout)
    report = check(source_side(source, verifier, options), plan_side(bundle_plan, label, verifier))
    add_upgrading(bundle_plan, report)
    return report.verdict
