"""Qualification: resolve a selection and verify it against a snapshot, with reasons.

One call, :func:`qualify`, is used by ``aicr-tui recipe`` and by the wizard's live panel.
The selection comes only from ``--profile`` (or the declared default); a snapshot only
verifies it. Profile constraints fail closed; ordinary overlay constraints exclude the
overlay and record why. The verdict lists every constraint with its expected value, the
observed value, a status and the remedy the product briefs give for that case.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from aicr_tui.core.documents.criteria import Criteria
from aicr_tui.core.documents.recipe_result import (
    API_PROFILE,
    ComponentRef,
    Constraint,
    ConstraintWarning,
    ExcludedOverlay,
    RecipeResult,
    SelectedProfile,
    Validation,
)
from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid
from aicr_tui.core.foundation.tree import deep_merge, get_path
from aicr_tui.core.recipe.accounting import accounting_configuration, apply_accounting_mode
from aicr_tui.core.recipe.catalog import Catalog, load_catalog
from aicr_tui.core.recipe.catalog_models import Overlay
from aicr_tui.core.recipe.constraints import (
    ConstraintResult,
    ConstraintStatus,
    evaluate_constraint,
)
from aicr_tui.core.recipe.profiles import (
    ProfileDeclaration,
    ProfileValue,
    parse_profile_selection,
    select_value,
)

# The three provider readings' paths, also named where the wizard's capture screen imports them.
from aicr_tui.core.recipe.remedies import AKS_POOLS as AKS_POOLS
from aicr_tui.core.recipe.remedies import OKE_ADDON as OKE_ADDON
from aicr_tui.core.recipe.remedies import OKE_LEGACY as OKE_LEGACY
from aicr_tui.core.recipe.remedies import overlay_remedy, profile_remedy
from aicr_tui.core.recipe.resolver import (
    MergedSpec,
    check_coverage,
    finalize,
    find_candidates,
    merge_candidates,
    mixins_of,
    stamp_metadata,
    with_readiness_constraints,
)
from aicr_tui.core.recipe.values import resolve_component_values

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.recipe.capture_match import CriteriaConflict


class CheckStatus(StrEnum):
    """A verdict check's status: a constraint's evaluation, or deferred (not checkable
    without a snapshot, or checked later by validation)."""

    PASSED = "passed"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    ERROR = "error"
    DEFERRED = "deferred"


DEFERRED = CheckStatus.DEFERRED
LEGACY_AKS_TUPLE = (
    "--set gpuoperator:driver.enabled=true --set gpuoperator:toolkit.enabled=true "
    "--set gpuoperator:operator.runtimeClass=nvidia --set dradriver:nvidiaDriverRoot=/run/nvidia/driver"
)


@dataclass(frozen=True)
class QualificationCheck:
    """One constraint as the verdict shows it."""

    name: str
    expected: str
    actual: str | None
    status: CheckStatus
    kind: str  # profile | overlay | mixin | recipe
    source: str  # "gpuStack=azure-managed", an overlay name, "mixin os-ubuntu", ...
    message: str
    remedy: str = ""
    effect: str = ""

    @property
    def ok(self) -> bool:
        return self.status in (CheckStatus.PASSED, CheckStatus.DEFERRED)


@dataclass(frozen=True)
class ValueChange:
    component: str
    path: str
    before: Any
    after: Any


@dataclass
class QualificationVerdict:
    ok: bool
    criteria: Criteria
    recipe: RecipeResult | None = None
    checks: list[QualificationCheck] = field(default_factory=list)
    error: AicrError | None = None
    warnings: list[str] = field(default_factory=list)
    excluded_overlays: list[ExcludedOverlay] = field(default_factory=list)
    applied_overlays: list[str] = field(default_factory=list)
    profile_name: str | None = None
    profile_value: str | None = None
    profile_values: list[str] = field(default_factory=list)
    profile_default: str | None = None
    profile_source: str | None = None
    gpu_driver_state: str = ""
    snapshot_used: bool = False
    # Stated criteria the snapshot contradicts: the selection never qualifies with one.
    conflicts: list[CriteriaConflict] = field(default_factory=list)
    conflict_refusal: AicrError | None = None  # the refusal under --criteria-strict

    @property
    def failing(self) -> list[QualificationCheck]:
        return [c for c in self.checks if not c.ok]


# ------------------------------------------------------------------------- evaluation
def _evaluate(name: str, expected: str, snapshot: Snapshot) -> ConstraintResult:
    return evaluate_constraint(name, expected, snapshot)


# ------------------------------------------------------------------------- declaration
def _collect_declaration(
    catalog: Catalog, candidates: Sequence[Overlay]
) -> tuple[ProfileDeclaration | None, str | None]:
    sources: list[str] = []
    if catalog.base.spec.profile is not None:
        sources.append("base")
    for cand in candidates:
        for name in cand.chain[1:]:
            if catalog.overlay(name).spec.profile is not None and name not in sources:
                sources.append(name)
    if len(sources) > 1:
        raise invalid(
            f"resolved composition has multiple profile declarations from [{' '.join(sorted(sources))}]"
        )
    if not sources:
        return None, None
    return catalog.overlay(sources[0]).spec.profile, sources[0]


# ----------------------------------------------------------------------- gpu driver
def gpu_driver_state(snapshot: Snapshot | None) -> str:
    """``preinstalled`` / ``absent`` from the sampled node's GPU reading, else ``""``."""
    if snapshot is None:
        return ""
    sub = snapshot.subtype("GPU", "hardware")
    if sub is None:
        return ""
    loaded = sub.data.get("driver-loaded")
    if not isinstance(loaded, bool):
        return ""
    if sub.data.get("gpu-present") is False:
        return ""
    count = sub.data.get("gpu-count")
    if isinstance(count, int | float) and not isinstance(count, bool) and count == 0:
        return ""
    return "preinstalled" if loaded else "absent"


def _fragment_value(value: ProfileValue, component: str, path: str) -> tuple[bool, Any]:
    for ref in value.componentRefs:
        if ref.name == component:
            return get_path(ref.overrides, path)
    return False, None


# ------------------------------------------------------------------------------ qualify
def qualify(
    criteria: Criteria,
    profile: str | None = None,
    snapshot: Snapshot | None = None,
    *,
    catalog: Catalog | None = None,
    capture_warnings: Iterable[str] | None = None,
) -> QualificationVerdict:
    """Resolve ``criteria`` with ``profile`` (``name=value`` or None for the default) and
    verify the selection against ``snapshot`` when one is given. Never raises for bad
    input: problems land in ``verdict.error``."""
    verdict = QualificationVerdict(ok=False, criteria=criteria, snapshot_used=snapshot is not None)
    verdict.warnings.extend(capture_warnings or ())
    try:
        cat = catalog if catalog is not None else load_catalog()
        _qualify(cat, criteria, profile, snapshot, verdict)
    except AicrError as err:
        verdict.error = err
        verdict.recipe = None
    verdict.ok = verdict.error is None and verdict.recipe is not None
    return verdict


@dataclass
class _Filtered:
    """The candidates after snapshot filtering: what merged, what was checked and excluded."""

    merged: MergedSpec = field(init=False)
    checks: list[QualificationCheck] = field(default_factory=list)
    excluded: list[ExcludedOverlay] = field(default_factory=list)
    warnings: list[ConstraintWarning] = field(default_factory=list)
    evaluated: set[str] = field(default_factory=set)


@dataclass
class _Composition:
    """The working composition: the merged spec with the selected profile value applied."""

    refs: dict[str, ComponentRef]
    constraints: dict[str, Constraint]
    origin: dict[str, str]
    validation: Validation | None
    value_name: str | None = None
    value: ProfileValue | None = None
    selected: SelectedProfile | None = None
    checks: list[QualificationCheck] = field(default_factory=list)
    first_failure: AicrError | None = None


def _qualify(
    cat: Catalog,
    criteria: Criteria,
    profile: str | None,
    snapshot: Snapshot | None,
    verdict: QualificationVerdict,
) -> None:
    """The steps of :func:`qualify`: candidates, snapshot filtering, coverage, the profile
    value, deferred checks, driver-state notes, and the finalised recipe."""
    selection = parse_profile_selection(profile)
    if criteria.specificity == 0:
        raise invalid(
            "no criteria provided; pass at least one of --service, --accelerator, --intent, "
            "--os or --platform"
        )
    candidates = list(find_candidates(cat, criteria))
    decl, decl_source = _collect_declaration(cat, candidates)
    if decl is not None:
        verdict.profile_name = decl.name
        verdict.profile_values = decl.value_names()
        verdict.profile_default = decl.default
        verdict.profile_source = decl_source

    filtered = _filter_candidates(cat, candidates, snapshot)
    verdict.excluded_overlays = filtered.excluded
    verdict.applied_overlays = list(filtered.merged.applied)
    verdict.checks = list(filtered.checks)
    _require_declaration_survived(decl_source, filtered, decl)
    check_coverage(cat, criteria, filtered.merged.applied)

    merged = filtered.merged
    comp = _Composition(
        refs=dict(merged.refs),
        constraints=dict(merged.constraints),
        origin=dict(merged.constraint_origin),
        validation=merged.validation,
    )
    picked = select_value(decl if decl_source in merged.applied else None, selection)
    if picked is not None and decl is not None and decl_source is not None:
        verdict.profile_value = picked[0]
        _apply_profile(cat, decl, decl_source, picked, merged, snapshot, filtered.evaluated, comp)
    verdict.checks = comp.checks + filtered.checks + _deferred_checks(comp, filtered.evaluated)
    if comp.first_failure is not None:
        raise comp.first_failure
    verdict.recipe = _finalize_recipe(cat, criteria, snapshot, filtered, comp, verdict)


def _filter_candidates(
    cat: Catalog, candidates: list[Overlay], snapshot: Snapshot | None
) -> _Filtered:
    """Without a snapshot every candidate merges; with one, a candidate whose own (or whose
    mixins') constraint fails is excluded and recorded."""
    out = _Filtered()
    if snapshot is None:
        out.merged = merge_candidates(cat, candidates)
        return out
    surviving = [cand for cand in candidates if _overlay_holds(cand, snapshot, out)]
    merged = merge_candidates(cat, surviving)
    out.merged = _filter_mixins(
        cat, snapshot, surviving, merged, out.checks, out.excluded, out.warnings, out.evaluated
    )
    return out


def _overlay_holds(cand: Overlay, snapshot: Snapshot, out: _Filtered) -> bool:
    """Evaluate one candidate's constraints into ``out``; False excludes the candidate."""
    failed_here = False
    for c in cand.spec.constraints:
        r = _evaluate(c.name, c.value, snapshot)
        out.evaluated.add(c.name)
        if r.status is ConstraintStatus.ERROR:
            raise AicrError(
                r.error.code if r.error else ErrorCode.INVALID_REQUEST,
                f'overlay "{cand.name}" constraint "{c.name}" could not be evaluated',
                r.error or r.message,
            )
        if r.passed:
            out.checks.append(_check(r, "overlay", cand.name, ""))
            continue
        failed_here = True
        reason = (
            f"expected {c.value}, got {r.actual}"
            if r.status is ConstraintStatus.FAILED
            else (r.error.render() if r.error else r.message)
        )
        out.warnings.append(
            ConstraintWarning.model_construct(
                overlay=cand.name,
                constraint=c.name,
                expected=c.value,
                actual=r.actual or "",
                reason=reason,
            )
        )
        out.checks.append(
            _check(
                r,
                "overlay",
                cand.name,
                overlay_remedy(r, c, cand.name),
                effect=f"overlay {cand.name} excluded",
            )
        )
    if failed_here:
        out.excluded.append(
            ExcludedOverlay.model_construct(name=cand.name, reason="constraint-failed")
        )
    return not failed_here


def _require_declaration_survived(
    decl_source: str | None, filtered: _Filtered, decl: ProfileDeclaration | None = None
) -> None:
    if decl_source is None or decl_source in filtered.merged.applied:
        return
    raise invalid(
        _declaration_lost(decl, decl_source, filtered.checks),
        remedy=next(
            (c.remedy for c in filtered.checks if c.status is not CheckStatus.PASSED and c.remedy),
            "fix the failing overlay constraint listed by --explain and recapture",
        ),
    )


def _declaration_lost(
    decl: ProfileDeclaration | None, source: str, checks: Sequence[QualificationCheck]
) -> str:
    """Which snapshot constraint excluded which overlay, so that the profile declaration
    no longer applies: the words a user can act on."""
    name = decl.name if decl is not None else "profile"
    failed = [c for c in checks if c.kind == "overlay" and c.status is not CheckStatus.PASSED]
    parts = []
    for c in failed[:3]:
        seen = "no reading" if c.actual is None else f"observed {c.actual}"
        parts.append(
            f'constraint {c.name} (expected {c.expected}, {seen}) excluded overlay "{c.source}"'
        )
    more = f" (+{len(failed) - 3} more, --explain lists them)" if len(failed) > 3 else ""
    cause = "; ".join(parts) + more if parts else "the snapshot's constraints excluded its overlays"
    return (
        f"the snapshot cannot qualify this selection: {cause}, so the {name} profile that "
        f'overlay "{source}" declares no longer applies'
    )


def _apply_profile(
    cat: Catalog,
    decl: ProfileDeclaration,
    decl_source: str,
    picked: tuple[str, ProfileValue],
    merged: MergedSpec,
    snapshot: Snapshot | None,
    evaluated: set[str],
    comp: _Composition,
) -> None:
    """Apply the selected profile value to ``comp``: its constraints (checked against the
    snapshot, fail closed), readiness constraints and the component fragment it owns."""
    value_name, value = picked
    comp.value_name, comp.value = value_name, value
    label = f"{decl.name}={value_name}"
    owned = cat.overlay(decl_source).owned_paths
    for name in owned:
        ref = comp.refs.get(name)
        if ref is None or not ref.enabled:
            raise invalid(
                f'profile "{decl.name}" references component "{name}", which is not enabled '
                "in the surviving composition"
            )
    for c in value.constraints:
        _add_profile_constraint(decl, value_name, label, c, snapshot, evaluated, comp)
    comp.validation = with_readiness_constraints(
        comp.validation, value.readinessConstraints, f"profile {label}"
    )
    refs = comp.refs
    applied_refs = cat.memoized(
        ("fragment", id(merged), value_name),
        lambda: {
            pref.name: refs[pref.name].model_copy(
                update={"overrides": deep_merge(refs[pref.name].overrides, pref.overrides)}
            )
            for pref in value.componentRefs
        },
    )
    refs.update(applied_refs)
    for pref in value.componentRefs:
        for path in owned.get(pref.name, []):
            if path != "enabled" and not get_path(refs[pref.name].overrides, path)[0]:
                raise invalid(
                    f'profile {label} owned path "{pref.name}:{path}" is missing from the '
                    "component's inline overrides"
                )
    comp.selected = SelectedProfile.model_construct(
        name=decl.name,
        value=value_name,
        advertiser=value.advertiser,
        ownedPaths={k: list(v) for k, v in owned.items()},
    )


def _add_profile_constraint(
    decl: ProfileDeclaration,
    value_name: str,
    label: str,
    c: Constraint,
    snapshot: Snapshot | None,
    evaluated: set[str],
    comp: _Composition,
) -> None:
    existing = comp.constraints.get(c.name)
    if existing is not None and existing.value != c.value:
        raise invalid(
            f'profile {label} constraint "{c.name}" collides with the constraint of the '
            f"same name from {comp.origin.get(c.name, 'an overlay')} ({existing.value})"
        )
    if snapshot is None:
        comp.checks.append(
            QualificationCheck(
                name=c.name,
                expected=c.value,
                actual=None,
                status=DEFERRED,
                kind="profile",
                source=label,
                message="recorded in the recipe; verified by aicr-tui validate readiness",
            )
        )
    else:
        r = _evaluate(c.name, c.value, snapshot)
        evaluated.add(c.name)
        remedy = "" if r.passed else profile_remedy(decl, value_name, r, snapshot, c)
        comp.checks.append(_check(r, "profile", label, remedy))
        if not r.passed and comp.first_failure is None:
            comp.first_failure = _profile_error(label, c, r, remedy)
    comp.constraints[c.name] = c
    comp.origin[c.name] = f"profile {label}"


def _deferred_checks(comp: _Composition, evaluated: set[str]) -> list[QualificationCheck]:
    """Everything else in the recipe that was not evaluated now is re-checked by validate."""
    origin = comp.origin
    return [
        QualificationCheck(
            name=name,
            expected=c.value,
            actual=None,
            status=DEFERRED,
            kind="mixin" if origin.get(name, "").startswith("mixin:") else "overlay",
            source=origin.get(name, "").removeprefix("mixin:"),
            message="recorded in the recipe; verified by aicr-tui validate readiness",
        )
        for name, c in sorted(comp.constraints.items())
        if name not in evaluated and not origin.get(name, "").startswith("profile ")
    ]


def _finalize_recipe(
    cat: Catalog,
    criteria: Criteria,
    snapshot: Snapshot | None,
    filtered: _Filtered,
    comp: _Composition,
    verdict: QualificationVerdict,
) -> RecipeResult:
    """Driver-state notes, metadata, and the finalised (memoised) recipe."""
    state = gpu_driver_state(snapshot)
    verdict.gpu_driver_state = state
    refs = _driver_state_notes(cat, criteria, comp.refs, state, comp.value, comp.selected, verdict)
    overridden = refs is not comp.refs
    # Slurm recipes: the accounting mode's gates (a function of the criteria, hence of the
    # merged composition the memo key names).
    configuration = accounting_configuration(criteria.platform)
    refs = apply_accounting_mode(refs, criteria.platform)
    merged = filtered.merged
    metadata = stamp_metadata(
        merged.applied,
        excludedOverlays=filtered.excluded,
        constraintWarnings=filtered.warnings,
        gpuDriverState=state,
        selectedProfile=comp.selected,
    )
    return finalize(
        cat,
        criteria,
        refs,
        comp.constraints,
        comp.validation,
        metadata,
        api_version=API_PROFILE
        if comp.selected is not None or configuration is not None
        else "aicr.run/v1",
        memo_key=(id(merged), comp.value_name, overridden),
        configuration=configuration,
    )


def _check(
    r: ConstraintResult, kind: str, source: str, remedy: str, effect: str = ""
) -> QualificationCheck:
    return QualificationCheck(
        name=r.name,
        expected=r.expected,
        actual=r.actual,
        status=CheckStatus(r.status),
        kind=kind,
        source=source,
        message=r.message,
        remedy=remedy,
        effect=effect,
    )


def _profile_error(label: str, c: Constraint, r: ConstraintResult, remedy: str) -> AicrError:
    if r.status is ConstraintStatus.UNAVAILABLE:
        return invalid(
            f'profile {label} cannot be validated because reading "{c.name}" is unavailable',
            f"expected {c.value}, observed nothing ({r.message.split(': ', 1)[-1]})",
            remedy=remedy,
        )
    if r.status is ConstraintStatus.FAILED:
        return invalid(
            f'profile {label} constraint "{c.name}" failed',
            f"expected {c.value}, observed {r.actual}",
            remedy=remedy,
        )
    code = r.error.code if r.error is not None else ErrorCode.INTERNAL
    return AicrError(
        code,
        f'failed to evaluate profile constraint "{c.name}"',
        r.error or r.message,
        remedy=remedy,
    )


def _filter_mixins(
    cat: Catalog,
    snapshot: Snapshot,
    surviving: list[Overlay],
    merged: MergedSpec,
    checks: list[QualificationCheck],
    excluded: list[ExcludedOverlay],
    warnings: list[ConstraintWarning],
    evaluated: set[str],
) -> MergedSpec:
    """Evaluate mixin constraints; exclude the candidates that brought a failing mixin."""
    while True:
        failing: dict[str, tuple[Constraint, ConstraintResult]] = {}
        for name, c in sorted(merged.constraints.items()):
            origin = merged.constraint_origin.get(name, "")
            if not origin.startswith("mixin:") or name in evaluated:
                continue
            r = _evaluate(c.name, c.value, snapshot)
            if r.status is ConstraintStatus.ERROR:
                raise AicrError(
                    r.error.code if r.error else ErrorCode.INVALID_REQUEST,
                    f'mixin constraint "{c.name}" could not be evaluated',
                    r.error or r.message,
                )
            mixin = origin.removeprefix("mixin:")
            if r.passed:
                evaluated.add(name)
                checks.append(_check(r, "mixin", mixin, ""))
            else:
                failing[mixin] = (c, r)
        if not failing:
            return merged
        keep: list[Overlay] = []
        for cand in surviving:
            bad = [m for m in mixins_of(cat, cand) if m in failing]
            if not bad:
                keep.append(cand)
                continue
            excluded.append(
                ExcludedOverlay.model_construct(name=cand.name, reason="mixin-constraint-failed")
            )
            for m in bad:
                c, r = failing[m]
                detail = (
                    f"expected {c.value}, got {r.actual}" if r.actual is not None else r.message
                )
                warnings.append(
                    ConstraintWarning.model_construct(
                        overlay=cand.name,
                        constraint=c.name,
                        expected=c.value,
                        actual=r.actual or "",
                        reason=f"mixin-constraint-failed: {detail}",
                    )
                )
        for m, (c, r) in sorted(failing.items()):
            evaluated.add(c.name)
            checks.append(
                _check(r, "mixin", m, overlay_remedy(r, c, f"using mixin {m}"), effect="excluded")
            )
        if len(keep) == len(surviving):
            return merged
        surviving[:] = keep
        merged = merge_candidates(cat, keep)


def _driver_state_notes(
    cat: Catalog,
    criteria: Criteria,
    refs: dict[str, ComponentRef],
    state: str,
    value: ProfileValue | None,
    selected: SelectedProfile | None,
    verdict: QualificationVerdict,
) -> dict[str, ComponentRef]:
    """Warnings and the one auto-override that follow from the sampled node's driver state."""
    gpu = refs.get("gpu-operator")
    if not state or gpu is None or not gpu.enabled:
        return refs
    owned = selected.ownedPaths.get("gpu-operator", []) if selected else []
    if selected is not None and value is not None:
        found, driver_on = _fragment_value(value, "gpu-operator", "driver.enabled")
        label = f"{selected.name}={selected.value}"
        if state == "absent" and found and driver_on is False:
            verdict.warnings.append(
                f"profile {label} leaves the driver to the provider, but the sampled GPU node has "
                "no loaded driver (gpuDriverState: absent); aicr-tui bundle will refuse this "
                "recipe: repair the provider driver install and recapture, or move the pools to "
                "an operator-managed driver, recapture and regenerate with the other profile value"
            )
        if state == "preinstalled" and found and driver_on is True:
            verdict.warnings.append(
                f"profile {label} installs the driver through the GPU Operator, but the sampled "
                "GPU node already has a loaded driver: a second driver may be installed on top"
            )
        return refs
    if "driver.enabled" in owned:
        return refs
    values = resolve_component_values(cat, gpu)
    found, driver_on = get_path(values, "driver.enabled")
    if state == "preinstalled" and found and driver_on is False:
        refs = dict(refs)
        refs["gpu-operator"] = gpu.model_copy(
            update={"overrides": deep_merge(gpu.overrides, {"driver": {"enabled": False}})}
        )
    if state == "absent" and criteria.service == "aks" and (not found or driver_on is False):
        verdict.warnings.append(
            "the sampled GPU node has no loaded driver while this unprofiled AKS recipe leaves "
            f"the driver to AKS (gpuDriverState: absent); bundle with {LEGACY_AKS_TUPLE} for "
            "--gpu-driver none pools, or repair the AKS driver install and recapture"
        )
    return refs


# ------------------------------------------------------------------- capture conflicts
def mark_conflicts(
    verdict: QualificationVerdict,
    conflicts: Sequence[CriteriaConflict],
    stated: dict[str, str | None],
    snapshot: Snapshot,
) -> None:
    """Record stated criteria that ``snapshot`` contradicts: a failed check each (first in
    the list), ``ok`` false, and a refusal that names both sides in place of the recapture
    hint a resolution against the wrong capture would give. The recipe, when one resolved,
    is kept: the CLI warns and writes it unless ``--criteria-strict``."""
    from aicr_tui.core.recipe.capture_match import conflict_error, take_capture_remedy

    if not conflicts:
        return
    verdict.conflicts = list(conflicts)
    checks = [
        QualificationCheck(
            name=f"criteria.{c.dimension}",
            expected=c.stated,
            actual=f"{c.observed.value} ({c.observed.raw})",
            status=CheckStatus.FAILED,
            kind="capture",
            source=c.observed.reading,
            message=c.message,
            remedy=take_capture_remedy([c]),
        )
        for c in conflicts
    ]
    verdict.checks = checks + verdict.checks
    verdict.conflict_refusal = conflict_error(list(conflicts), stated, snapshot)
    if verdict.error is not None:
        verdict.error = conflict_error(list(conflicts), stated, snapshot, verdict.error)
        verdict.recipe = None
    verdict.ok = False


# ------------------------------------------------------------------------ profile diff
def profile_value_diff(
    criteria: Criteria,
    from_value: str,
    to_value: str,
    *,
    catalog: Catalog | None = None,
) -> list[ValueChange]:
    """What switching the profile value changes in the resolved component values."""
    cat = catalog if catalog is not None else load_catalog()
    before = qualify(criteria, _selection(cat, criteria, from_value), None, catalog=cat)
    after = qualify(criteria, _selection(cat, criteria, to_value), None, catalog=cat)
    for v in (before, after):
        if v.error is not None:
            raise v.error
    assert before.recipe is not None and after.recipe is not None
    changes: list[ValueChange] = []
    names = sorted(
        {r.name for r in before.recipe.componentRefs} | {r.name for r in after.recipe.componentRefs}
    )
    for name in names:
        a = before.recipe.component(name)
        b = after.recipe.component(name)
        va = resolve_component_values(cat, a) if a is not None else {}
        vb = resolve_component_values(cat, b) if b is not None else {}
        en_a = a is not None and a.enabled
        en_b = b is not None and b.enabled
        if en_a != en_b:
            changes.append(ValueChange(name, "enabled", en_a, en_b))
        changes.extend(_diff_trees(name, "", va, vb))
    for name in ("constraints",):
        ca = {c.name: c.value for c in before.recipe.constraints}
        cb = {c.name: c.value for c in after.recipe.constraints}
        for key in sorted(set(ca) | set(cb)):
            if ca.get(key) != cb.get(key):
                changes.append(ValueChange(name, key, ca.get(key), cb.get(key)))
    return changes


def _selection(cat: Catalog, criteria: Criteria, value: str) -> str:
    candidates = list(find_candidates(cat, criteria))
    decl, _ = _collect_declaration(cat, candidates)
    if decl is None:
        raise invalid(f"criteria {criteria.label()} resolve to a composition without a profile")
    return f"{decl.name}={value}"


_MISSING = object()


def _diff_trees(component: str, prefix: str, a: Any, b: Any) -> list[ValueChange]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[ValueChange] = []
        for key in sorted(set(a) | set(b), key=str):
            out += _diff_trees(
                component, f"{prefix}{key}.", a.get(key, _MISSING), b.get(key, _MISSING)
            )
        return out
    if a == b and type(a) is type(b):
        return []
    return [
        ValueChange(
            component,
            prefix.rstrip("."),
            None if a is _MISSING else a,
            None if b is _MISSING else b,
        )
    ]
