"""Drift: how a cluster's readings moved since the capture a recipe was qualified on.

The CLI (``aicr-tui diff``) and the wizard make the same call, :func:`diff_snapshots`:

- the readings that changed, from :func:`aicr_tui.core.capture.drift.compare_snapshots`;
- with a recipe, each of its constraints evaluated on both sides the way qualification
  evaluates them (the recipe's criteria and selected profile are qualified again, so a
  failing constraint carries the very remedy ``aicr-tui recipe`` would print); a
  constraint qualification did not evaluate is evaluated on its own, with the remedy
  qualification gives a recipe constraint;
- the verdict on each side (qualified, or refused and why): the verdict the drift changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aicr_tui.core.capture.drift import ReadingChange, compare_snapshots
from aicr_tui.core.foundation.errors import AicrError

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import Constraint, RecipeResult
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.recipe.qualification import QualificationCheck, QualificationVerdict

PASSED = "passed"


@dataclass(frozen=True)
class ConstraintDrift:
    """One recipe constraint on both sides (``old_*`` empty when there is no old side)."""

    name: str
    expected: str
    old: str | None
    new: str | None
    old_status: str
    new_status: str
    source: str
    remedy: str = ""
    effect: str = ""

    @property
    def now_fails(self) -> bool:
        """Failing on the new side while it held on the old one (or nothing told)."""
        return self.new_status != PASSED and self.old_status in (PASSED, "")


@dataclass(frozen=True)
class VerdictChange:
    """The recipe's qualification on each side: ok, or the reason it was refused."""

    selection: str  # "gpuStack=azure-managed", or "" for a recipe without a profile
    old_ok: bool
    new_ok: bool
    old_reason: str = ""
    new_reason: str = ""

    @property
    def changed(self) -> bool:
        return self.old_ok != self.new_ok


@dataclass
class DriftReport:
    changes: list[ReadingChange] = field(default_factory=list)
    unmeasured: list[ReadingChange] = field(default_factory=list)
    constraints: list[ConstraintDrift] = field(default_factory=list)
    verdict: VerdictChange | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.changes)

    @property
    def now_failing(self) -> list[ConstraintDrift]:
        return [c for c in self.constraints if c.now_fails]


def diff_snapshots(
    old: Snapshot,
    new: Snapshot,
    *,
    recipe: RecipeResult | None = None,
    catalog: Catalog | None = None,
) -> DriftReport:
    """The drift from ``old`` to ``new``; with ``recipe``, its constraints on both sides."""
    comparison = compare_snapshots(old, new)
    report = DriftReport(changes=comparison.changes, unmeasured=comparison.unmeasured)
    if recipe is not None:
        _recheck(recipe, old, new, catalog, report)
    return report


def _selection(recipe: RecipeResult) -> str:
    profile = recipe.metadata.selectedProfile
    return f"{profile.name}={profile.value}" if profile is not None else ""


def _qualify(
    recipe: RecipeResult, snapshot: Snapshot, catalog: Catalog | None
) -> QualificationVerdict | None:
    """The recipe's criteria and selection qualified against ``snapshot``; None when the
    recipe's criteria are not ones this catalog knows (its constraints are then evaluated
    one by one)."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.qualification import qualify

    cat = catalog if catalog is not None else load_catalog()
    crit = recipe.criteria
    try:
        criteria = parse_criteria(
            service=crit.service,
            accelerator=crit.accelerator,
            intent=crit.intent,
            os=crit.os,
            platform=crit.platform,
            nodes=crit.nodes,
            registered=cat.registered,
        )
    except AicrError:
        return None
    return qualify(criteria, _selection(recipe) or None, snapshot, catalog=cat)


def _side(
    constraint: Constraint,
    verdict: QualificationVerdict | None,
    snapshot: Snapshot,
) -> QualificationCheck:
    """The constraint as qualification judged it on this side, else evaluated on its own."""
    from aicr_tui.core.recipe.constraints import evaluate_constraint
    from aicr_tui.core.recipe.qualification import CheckStatus, QualificationCheck
    from aicr_tui.core.recipe.remedies import constraint_remedy

    if verdict is not None:
        for check in verdict.checks:
            if check.name == constraint.name and check.status is not CheckStatus.DEFERRED:
                return check
    r = evaluate_constraint(constraint.name, constraint.value, snapshot)
    return QualificationCheck(
        name=r.name,
        expected=r.expected,
        actual=r.actual,
        status=CheckStatus(r.status),
        kind="recipe",
        source="recipe",
        message=r.message,
        remedy="" if r.passed else constraint_remedy(r, snapshot, constraint),
    )


def _reason(verdict: QualificationVerdict | None, checks: list[QualificationCheck]) -> str:
    if verdict is not None and verdict.error is not None:
        err = verdict.error  # the remedy is printed with the failing constraint itself
        return AicrError(err.code, err.message, err.cause).render()
    failing = [c for c in checks if not c.ok]
    if failing:
        first = failing[0]
        return f'constraint "{first.name}" expected {first.expected}, observed {first.actual}'
    return ""


def _recheck(
    recipe: RecipeResult,
    old: Snapshot,
    new: Snapshot,
    catalog: Catalog | None,
    report: DriftReport,
) -> None:
    old_verdict = _qualify(recipe, old, catalog)
    new_verdict = _qualify(recipe, new, catalog)
    old_checks: list[QualificationCheck] = []
    new_checks: list[QualificationCheck] = []
    for constraint in recipe.constraints:
        before = _side(constraint, old_verdict, old)
        after = _side(constraint, new_verdict, new)
        old_checks.append(before)
        new_checks.append(after)
        report.constraints.append(
            ConstraintDrift(
                name=constraint.name,
                expected=constraint.value,
                old=before.actual,
                new=after.actual,
                old_status=str(before.status),
                new_status=str(after.status),
                source=after.source,
                remedy="" if after.ok else after.remedy,
                effect="" if after.ok else after.effect,
            )
        )
    old_reason = _reason(old_verdict, old_checks)
    new_reason = _reason(new_verdict, new_checks)
    report.verdict = VerdictChange(
        selection=_selection(recipe),
        old_ok=not old_reason,
        new_ok=not new_reason,
        old_reason=old_reason,
        new_reason=new_reason,
    )


def capture_live_side(
    *,
    kubeconfig: str | None,
    context: str | None = None,
    aks_pools: str | None = None,
    oke_addons: str | None = None,
    deadline: float | None = None,
) -> tuple[Snapshot, list[str]]:
    """The live cluster as the new side: a cluster capture, with the provider dumps given
    attached as ``aicr-tui snapshot`` attaches them (a cluster capture alone holds no
    provider readings; those are then listed as unmeasured, never as drift)."""
    from aicr_tui.core.capture.capture import project_dumps
    from aicr_tui.core.live import capture_live

    projections = project_dumps(aks_pools=aks_pools, oke_addons=oke_addons, legacy_daemonset=None)
    captured = capture_live(
        kubeconfig=kubeconfig,
        context=context,
        cluster=True,
        offline=projections,
        deadline=deadline,
    )
    return captured.snapshot, list(captured.warnings)
