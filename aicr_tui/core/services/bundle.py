"""Planning, previewing and writing a bundle: the calls ``aicr-tui bundle`` and the wizard's
bundle preview both make, so they plan the same bundle from the same inputs and refuse it
with the same words.

- :class:`BundleOptions` is everything a bundle is made of besides the recipe: overrides,
  node scheduling, the deployer layout, the storage class. :func:`options_from_flags`
  builds it from the CLI's flag strings (the first bad one raises, naming its flag).
- :func:`plan` plans the recipe with those options (pure, in memory).
- :func:`preview` is the wizard's overrides editor without widgets: lines written as on the
  command line in, a plan and one verdict per line out (see its docstring).
- :func:`chart_verifier` and :func:`verify` render every chart with Helm (``--verify``,
  the Charts tab); :func:`write` writes a plan (and its verify report) or refuses it.
- :func:`default_override_lines` is what the editor starts with (the AKS keyed toleration).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from aicr_tui.core.bundler import (
    BundleOverrides,
    BundlePlan,
    BundleWriteResult,
    OverrideEntry,
    Toleration,
    check_override_entry,
    parse_entry,
    parse_overrides,
    parse_toleration,
    plan_bundle,
    refusal,
    write_bundle,
)
from aicr_tui.core.bundler.deployers.config import DeployerConfig, deployer_config
from aicr_tui.core.bundler.model import Feedback
from aicr_tui.core.bundler.tolerations import parse_selectors, parse_tolerations
from aicr_tui.core.foundation.errors import AicrError

if TYPE_CHECKING:
    from aicr_tui.core.bundler.vendor import VendoredChart
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.verify.analysis import Verifier
    from aicr_tui.core.verify.model import VerifyReport

# The AKS brief: always bundle with a keyed toleration matching the GPU node taint (a
# wildcard one deadlocks nodewright package pods). The wizard pre-fills this editable line.
AKS_KEYED_TOLERATION = "nvidia.com/gpu:NoSchedule"


def default_override_lines(service: str) -> str:
    """The override-editor lines a bundle for ``service`` starts with ("" for none)."""
    if service == "aks":
        return (
            "# AKS needs a keyed toleration matching the GPU node taint:\n"
            f"--accelerated-node-toleration {AKS_KEYED_TOLERATION}\n"
        )
    return ""


# --------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class BundleOptions:
    """What a bundle is made of besides the recipe. A toleration list of ``None`` (flag
    absent) means upstream's default, the wildcard ``{operator: Exists}``."""

    overrides: BundleOverrides = field(default_factory=BundleOverrides)
    accelerated_tolerations: list[Toleration] | None = None
    accelerated_node_selector: dict[str, str] = field(default_factory=dict)
    workload_selector: dict[str, str] = field(default_factory=dict)
    system_tolerations: list[Toleration] | None = None
    system_node_selector: dict[str, str] = field(default_factory=dict)
    storage_class: str | None = None
    deployer: DeployerConfig = field(default_factory=DeployerConfig)


def options_from_flags(
    *,
    set_: Sequence[str] = (),
    set_json: Sequence[str] = (),
    set_file: Sequence[str] = (),
    dynamic: Sequence[str] = (),
    accelerated_node_toleration: Sequence[str] = (),
    accelerated_node_selector: Sequence[str] = (),
    workload_selector: Sequence[str] = (),
    system_node_toleration: Sequence[str] = (),
    system_node_selector: Sequence[str] = (),
    storage_class: str | None = None,
    deployer: str = "helm",
    deployer_flags: Mapping[str, Any] | None = None,
    base_dir: Path | None = None,
) -> BundleOptions:
    """The options the bundle flags name; the first bad flag raises an AicrError naming it
    (scheduling flags first, then overrides, then the deployer, as ``aicr-tui bundle``).
    ``deployer_flags`` are :func:`~aicr_tui.core.bundler.deployers.config.deployer_config`'s keywords
    (``repo``, ``app_name``, ``serial``, ...)."""
    tolerations = parse_tolerations(list(accelerated_node_toleration))
    selector = parse_selectors(list(accelerated_node_selector), "--accelerated-node-selector")
    workload = parse_selectors(list(workload_selector), "--workload-selector")
    system_tolerations = parse_tolerations(list(system_node_toleration), "--system-node-toleration")
    system_selector = parse_selectors(list(system_node_selector), "--system-node-selector")
    overrides = parse_overrides(
        set_=list(set_),
        set_json=list(set_json),
        set_file=list(set_file),
        dynamic=list(dynamic),
        base_dir=base_dir,
    )
    config = deployer_config(deployer, **dict(deployer_flags or {}))
    return BundleOptions(
        overrides=overrides,
        accelerated_tolerations=tolerations,
        accelerated_node_selector=selector,
        workload_selector=workload,
        system_tolerations=system_tolerations,
        system_node_selector=system_selector,
        storage_class=storage_class,
        deployer=config,
    )


def plan(
    recipe: RecipeResult,
    options: BundleOptions | None = None,
    *,
    vendored: Mapping[str, VendoredChart] | None = None,
) -> BundlePlan:
    """The bundle ``recipe`` makes with ``options``, in memory (refusals are ``.errors``);
    ``vendored`` archives go into it (``--vendor-charts``, see :mod:`aicr_tui.core.services.vendor`)."""
    o = options if options is not None else BundleOptions()
    return plan_bundle(
        recipe,
        o.overrides,
        accelerated_tolerations=o.accelerated_tolerations,
        accelerated_node_selector=o.accelerated_node_selector,
        workload_selector=o.workload_selector,
        system_tolerations=o.system_tolerations,
        system_node_selector=o.system_node_selector,
        storage_class=o.storage_class,
        deployer=o.deployer,
        vendored=vendored,
    )


# --------------------------------------------------------------------------- verify, write
def chart_verifier(charts: Sequence[Path] = (), *, pull_timeout: float | None = None) -> Verifier:
    """A Verifier over local ``charts`` (none: each chart is pulled), with the catalog's
    stand-ins. Keep it for the next plan: it caches what it rendered."""
    # aicr_tui.core.verify loads the Helm engine: imported only when a face asks to verify.
    from aicr_tui.core.verify.api import chart_verifier as make

    if pull_timeout is None:
        return make(list(charts))
    return make(list(charts), pull_timeout=pull_timeout)


def warm_up_verify() -> None:
    """Start the Helm engine child in the background (a failure shows at verify time)."""
    from aicr_tui.core.verify.engine import warm_up

    warm_up()


def verify(bundle_plan: BundlePlan, verifier: Verifier) -> VerifyReport:
    """Every chart of the plan rendered by Helm with the values the plan writes."""
    from aicr_tui.core.verify.api import plan_input

    return verifier.verify(plan_input(bundle_plan))


def write_verify_report(report: VerifyReport, target: Path) -> None:
    from aicr_tui.core.foundation.fileio import atomic_write_text
    from aicr_tui.core.foundation.yamlio import dump_json

    atomic_write_text(target, dump_json(report.to_json()))


def write(
    bundle_plan: BundlePlan,
    out_dir: str | Path,
    *,
    force: bool = False,
    report: VerifyReport | None = None,
) -> BundleWriteResult:
    """Write the plan through a staged directory renamed into place (a non-empty
    ``out_dir`` only with ``force``); a plan with blocking errors is refused, nothing
    written. ``report`` (from :func:`verify`) is saved inside as ``verify-report.json``."""
    if bundle_plan.errors:
        raise refusal(bundle_plan.errors)
    result = write_bundle(bundle_plan, Path(out_dir), force=force)
    if report is not None:
        from aicr_tui.core.verify.api import REPORT_NAME

        write_verify_report(report, result.out_dir / REPORT_NAME)
    return result


# --------------------------------------------------------------------------- the editor
# One entry per line, written as on the command line::
#
#     --set gpu-operator:driver.version=580.95.05
#     --set-json nvsentinel:labeler={"assumeDriverInstalled": true}
#     --set-file gpu-operator:toolkit=./toolkit.yaml
#     --dynamic gpu-operator:driver.repository
#     --accelerated-node-toleration sku=gpu:NoSchedule
#
# ``--flag=entry`` works too, a line without a flag is a ``--set``, and blank lines and
# ``#`` comments are ignored. Every line gets a verdict: *accepted*, *warning* (accepted,
# with the bundler's deprecation or policy note) or *rejected* (with the message the CLI
# would print). GPU allocation-policy keys (#1327) follow the brief: a static ``--set`` of
# one (or of an advertiser's ``enabled``) is a *warning* (deprecated: validators verify the
# recipe-resolved policy, so it shows up as drift; the note names the recipe-overlay
# replacement), and the coherence verdict of all lines together (dual advertisement, no
# advertiser, inert waiver) is added to each policy-key line as a warning, never per line,
# so the three lines of the DRA-only flip read as one coherent change; ``--dynamic`` on a
# policy key and ``--set-json``/``--set-file`` on ``enabled`` stay *rejected*. A rejected
# line is left out of the plan, so the preview still shows what the other lines do.

Verdict = Literal["accepted", "warning", "rejected"]

FLAGS: dict[str, str] = {
    "--set": "set",
    "--set-json": "set-json",
    "--set-file": "set-file",
    "--dynamic": "dynamic",
    "--accelerated-node-toleration": "toleration",
}


@dataclass
class EditorLine:
    """One non-empty, non-comment line of the editor."""

    lineno: int  # 1-based, as the editor shows it
    raw: str
    kind: str = ""  # set | set-json | set-file | dynamic | toleration
    text: str = ""  # the entry after the flag
    entry: OverrideEntry | Toleration | None = None  # once parsed
    verdict: Verdict = "accepted"
    message: str = ""

    @property
    def flag(self) -> str:
        for flag, kind in FLAGS.items():
            if kind == self.kind:
                return flag
        return ""

    def reject(self, message: str) -> None:
        self.verdict = "rejected"
        self.message = message

    def warn(self, message: str) -> None:
        if self.verdict != "rejected":
            self.verdict = "warning"
            self.message = f"{self.message}; {message}" if self.message else message


@dataclass
class PreviewResult:
    """What one re-plan produced: the plan (or why there is none) and per-line verdicts."""

    lines: list[EditorLine] = field(default_factory=list)
    plan: BundlePlan | None = None
    error: str = ""  # a failure not attributable to one line (the plan itself was refused)
    generation: int = 0

    @property
    def rejected(self) -> list[EditorLine]:
        return [line for line in self.lines if line.verdict == "rejected"]


def split_lines(text: str) -> list[EditorLine]:
    """Split the editor text into entries, recognising the flag on each line."""
    out: list[EditorLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        line = EditorLine(lineno=number, raw=stripped)
        head, _, rest = stripped.partition(" ")
        flag, eq, inline = head.partition("=")
        if flag.startswith("--"):
            kind = FLAGS.get(flag)
            if kind is None:
                line.reject(
                    f"unknown flag {flag}; expected one of {', '.join(FLAGS)}",
                )
                out.append(line)
                continue
            line.kind = kind
            line.text = (inline + (" " + rest if rest else "")) if eq else rest.strip()
        else:
            line.kind = "set"
            line.text = stripped
        if not line.text:
            line.reject(f"{line.flag} needs an entry")
        out.append(line)
    return out


def parse_lines(lines: Sequence[EditorLine], *, base_dir: Path | None = None) -> None:
    """Parse each line's entry in place; a bad entry rejects that line only."""
    for line in lines:
        if line.verdict == "rejected":
            continue
        try:
            if line.kind == "toleration":
                line.entry = parse_toleration(line.text)
            else:
                line.entry = parse_entry(line.kind, line.text, base_dir=base_dir)
        except AicrError as err:
            line.reject(err.render())


def overrides_of(lines: Sequence[EditorLine]) -> tuple[BundleOverrides, list[Toleration] | None]:
    """The accepted lines as ``(BundleOverrides, tolerations or None)`` for ``plan_bundle``."""
    entries: dict[str, list[OverrideEntry]] = {k: [] for k in ("set", "set-json", "set-file")}
    entries["dynamic"] = []
    tolerations: list[Toleration] = []
    for line in lines:
        if line.verdict == "rejected" or line.entry is None:
            continue
        if isinstance(line.entry, Toleration):
            tolerations.append(line.entry)
        else:
            entries[line.kind].append(line.entry)
    overrides = BundleOverrides(
        sets=tuple(entries["set"]),
        set_json=tuple(entries["set-json"]),
        set_file=tuple(entries["set-file"]),
        dynamic=tuple(entries["dynamic"]),
    )
    return overrides, (tolerations or None)


FeedbackCache = dict[tuple[str, str, str], list[Feedback]]


def preview(
    recipe: RecipeResult,
    text: str,
    *,
    deployer: DeployerConfig | None = None,
    base_dir: Path | None = None,
    generation: int = 0,
    feedback_cache: FeedbackCache | None = None,
) -> PreviewResult:
    """Parse the editor text and plan the bundle, attributing every refusal to its line.

    Each line gets its lock and policy verdict from ``check_override_entry`` (an ``error``
    rejects the line, a ``warning`` flags it); ``feedback_cache`` keeps the verdict of an
    unchanged line between calls (never for ``--set-file``: its file may change). When the
    plan with every parsed line is refused (and the recipe alone is not), each line is tried
    on its own to find the ones the bundler rejects; those are marked and the plan is made
    from the rest, so the preview never goes blank because of one bad entry.
    """
    config = deployer or DeployerConfig()

    def planner(overrides: BundleOverrides, tolerations: list[Toleration] | None) -> BundlePlan:
        return plan(recipe, BundleOptions(overrides, tolerations, deployer=config))

    def checker(kind: str, entry: str) -> list[Feedback]:
        if kind == "set-file" or feedback_cache is None:
            return check_override_entry(recipe, kind, entry, base_dir=base_dir, deployer=config)
        key = (config.name, kind, entry)
        if key not in feedback_cache:
            feedback_cache[key] = check_override_entry(
                recipe, kind, entry, base_dir=base_dir, deployer=config
            )
        return feedback_cache[key]

    result = PreviewResult(lines=split_lines(text), generation=generation)
    parse_lines(result.lines, base_dir=base_dir)
    for line in result.lines:
        if line.verdict == "rejected" or line.kind == "toleration":
            continue
        _apply_feedback(line, checker(line.kind, line.text))
    try:
        result.plan = planner(*overrides_of(result.lines))
    except AicrError as whole:
        try:
            planner(*overrides_of([]))
        except AicrError:
            # The recipe cannot be planned even without overrides: no line is to blame.
            result.error = whole.render()
            return result
        for line in result.lines:
            if line.verdict == "rejected":
                continue
            try:
                planner(*overrides_of([line]))
            except AicrError as err:
                line.reject(err.render())
        try:
            result.plan = planner(*overrides_of(result.lines))
        except AicrError as err:
            result.error = err.render()
    _attribute_warnings(result)
    return result


def _apply_feedback(line: EditorLine, feedback: list[Feedback]) -> None:
    errors = [item.message for item in feedback if item.level == "error"]
    if errors:
        line.reject("; ".join(errors))
        return
    for item in feedback:
        if item.level == "warning":
            line.warn(item.message)
        elif item.level == "info" and not line.message:
            line.message = item.message


def _attribute_warnings(result: PreviewResult) -> None:
    """Hang each plan warning on the line whose component path it names."""
    if result.plan is None:
        return
    for warning in result.plan.warnings:
        text = warning_text(warning)
        for line in result.lines:
            entry = line.entry
            if line.verdict == "rejected" or not isinstance(entry, OverrideEntry):
                continue
            if text in line.message:
                continue
            if f"{entry.key}:{entry.path}" in text:
                line.warn(text)
            elif text.startswith("GPU allocation policy:") and "allocation-policy key" in (
                line.message
            ):
                line.warn(text)  # the verdict of the lines together, on each policy-key line


def warning_text(item: str | Feedback) -> str:
    """A plan warning or an entry's feedback as one line of text."""
    message = item if isinstance(item, str) else item.message
    return " ".join(message.split())
