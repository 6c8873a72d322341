"""Readiness pre-flight: re-evaluate every recipe constraint against the snapshot.

Inputs are the recipe's top-level constraints (profile constraints included) followed by
``validation.readiness.constraints``. Every constraint is evaluated and reported; the run is
refused (INVALID_REQUEST, exit 2) on the first that fails or cannot be evaluated, with the
upstream messages, and a recipe that declares constraints but comes with no snapshot is
refused outright. No cluster work happens before this passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from aicr_tui.core.documents.snapshot import Snapshot
from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.recipe.constraints import ConstraintStatus, evaluate_constraint
from aicr_tui.core.validation.recipe_view import RecipeConstraint, RecipeView

NO_SNAPSHOT_MESSAGE = (
    "readiness constraints are declared but no snapshot is available to evaluate them "
    "— supply a snapshot"
)

# Where a missing provider reading comes from, so the refusal names the capture flag.
_CAPTURE_HINTS = {
    "K8s.aks-gpu-pools.": "capture the snapshot with --aks-gpu-pools (az aks nodepool list -o json)",
    "K8s.oke-addons.": "capture the snapshot with --oke-addons (oci ce cluster list-addons)",
    "K8s.oke-legacy-plugin.": "capture the snapshot against the cluster (legacy DaemonSet probe)",
}


@dataclass(frozen=True)
class ReadinessOutcome:
    name: str
    expected: str
    actual: str | None
    status: str  # passed | failed | error
    message: str
    source: str  # "recipe" (top-level), "readiness" or "capture" (criteria vs snapshot)
    remediation: str = ""

    @property
    def log_line(self) -> str:
        actual = self.actual if self.actual is not None else ""
        if self.status == "passed":
            return f'readiness constraint passed name={self.name} expected="{self.expected}" actual={actual}'
        if self.status == "failed":
            return f'readiness constraint failed: name={self.name} expected="{self.expected}" actual={actual}'
        return f"readiness constraint could not be evaluated: name={self.name}: {self.message}"


def readiness_constraints(recipe: RecipeView) -> list[tuple[RecipeConstraint, str]]:
    items: list[tuple[RecipeConstraint, str]] = [(c, "recipe") for c in recipe.constraints]
    items += [(c, "readiness") for c in recipe.phase("readiness").constraints]
    return items


def capture_conflicts(recipe: RecipeView, snapshot: Snapshot | None) -> list[ReadinessOutcome]:
    """A failed outcome for each recipe criterion (service, accelerator, OS) the snapshot
    contradicts: a capture of another cluster never passes readiness."""
    from aicr_tui.core.recipe.capture_match import (
        conflict_summary,
        criteria_conflicts,
        take_capture_remedy,
    )

    if snapshot is None:
        return []
    stated: dict[str, str | None] = dict(recipe.criteria)
    conflicts = criteria_conflicts(stated, snapshot)
    if not conflicts:
        return []
    summary = conflict_summary(conflicts, stated, snapshot)
    return [
        ReadinessOutcome(
            f"criteria.{c.dimension}",
            c.stated,
            c.observed.value,
            "failed",
            f"readiness check failed: {summary}",
            "capture",
            take_capture_remedy(conflicts),
        )
        for c in conflicts
    ]


def evaluate_readiness(recipe: RecipeView, snapshot: Snapshot | None) -> list[ReadinessOutcome]:
    """Evaluate every readiness constraint, after the recipe's criteria against what the
    snapshot records; never raises for data problems."""
    out: list[ReadinessOutcome] = capture_conflicts(recipe, snapshot)
    for c, source in readiness_constraints(recipe):
        result = evaluate_constraint(c.name, c.value, snapshot)
        if result.status is ConstraintStatus.PASSED:
            status = "passed"
            message = f"expected {c.value}, got {result.actual}"
        elif result.status is ConstraintStatus.FAILED:
            status = "failed"
            message = f"readiness check failed: {c.name} expected {c.value}, got {result.actual}"
        else:
            status = "error"
            cause = result.error.message if result.error is not None else result.message
            if result.error is not None and result.error.cause is not None:
                inner = result.error.cause
                detail = inner.message if isinstance(inner, AicrError) else str(inner)
                cause = f"{cause}: {detail}" if detail and detail not in cause else cause
            message = f"readiness check could not evaluate: {c.name}: {cause}"
        out.append(
            ReadinessOutcome(c.name, c.value, result.actual, status, message, source, c.remediation)
        )
    return out


def readiness_refusal(
    recipe: RecipeView, snapshot: Snapshot | None, outcomes: list[ReadinessOutcome]
) -> AicrError | None:
    """The error that refuses the run, or None when readiness passed."""
    if snapshot is None and readiness_constraints(recipe):
        return invalid(
            NO_SNAPSHOT_MESSAGE,
            remedy="pass -s snapshot.yaml, or drop --no-cluster so a live capture is taken",
        )
    for o in outcomes:
        if o.status == "passed":
            continue
        remedy = o.remediation or None
        if o.status == "error" and remedy is None:
            remedy = next((h for p, h in _CAPTURE_HINTS.items() if o.name.startswith(p)), None)
        return invalid(o.message, remedy=remedy)
    return None
