"""Criteria resolution: matching overlays, inheritance chains, merge, finalisation.

The steps follow the upstream recipe engine: candidates are the maximal matching
overlays sorted by specificity then name; each candidate's chain (base first) is merged
once; mixins are applied after all chains; a coverage post-condition makes sure every
stated criteria dimension was carried by some applied overlay; finalisation validates
dependencies, computes a topological ``deploymentOrder`` (alphabetical ties, re-sorted
after every pop), fills registry defaults and runs coherence checks.

Merged compositions are memoised per catalog and candidate set. Nothing here mutates a
memoised object: every later step builds new dicts and uses ``model_copy``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core import __version__
from aicr_tui.core.documents.criteria import ANY, DIMENSIONS, FLAGS, Criteria, overlay_matches
from aicr_tui.core.documents.recipe_result import (
    API_V1,
    PHASES,
    ComponentRef,
    Constraint,
    RecipeResult,
    ResultCriteria,
    ResultMetadata,
    Validation,
    ValidationPhase,
)
from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid, not_found
from aicr_tui.core.foundation.tree import deep_merge, leaf_paths
from aicr_tui.core.recipe.catalog import Catalog
from aicr_tui.core.recipe.catalog_models import Overlay

SCALAR_FIELDS = (
    "namespace",
    "chart",
    "type",
    "source",
    "version",
    "tag",
    "valuesFile",
    "path",
    "healthCheckAsserts",
)
IDENTITY_FIELDS = (
    "chart",
    "type",
    "source",
    "version",
    "tag",
    "path",
    "valuesFile",
    "patches",
    "cleanup",
    "expectedResources",
    "healthCheckAsserts",
    "healthCheckSkip",
)
RESULT_VERSION = f"v{__version__}"


@dataclass(frozen=True)
class MergedSpec:
    """A merged composition (read-only; memoised per candidate set)."""

    applied: tuple[str, ...]
    constraints: Mapping[str, Constraint]
    refs: Mapping[str, ComponentRef]
    validation: Validation | None
    mixins: tuple[str, ...]
    constraint_origin: Mapping[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------ candidates
def find_candidates(catalog: Catalog, criteria: Criteria) -> tuple[Overlay, ...]:
    """Maximal matching overlays, ascending specificity, ties by name."""
    return catalog.memoized(("candidates", criteria), lambda: _find_candidates(catalog, criteria))


def _find_candidates(catalog: Catalog, criteria: Criteria) -> tuple[Overlay, ...]:
    matches = [
        ov
        for ov in catalog.overlays.values()
        if ov.criteria is not None and overlay_matches(ov.criteria, criteria)
    ]
    ancestors: set[str] = set()
    for ov in matches:
        ancestors.update(ov.chain[:-1])
    maximal = [ov for ov in matches if ov.name not in ancestors]
    maximal.sort(key=lambda o: (o.criteria.specificity if o.criteria else 0, o.name))
    return tuple(maximal)


def mixins_of(catalog: Catalog, overlay: Overlay) -> list[str]:
    names: list[str] = []
    for element in overlay.chain:
        for m in catalog.overlay(element).spec.mixins:
            if m not in names:
                names.append(m)
    return names


# ----------------------------------------------------------------------------- merge
def merge_ref(base: ComponentRef, ov: ComponentRef) -> ComponentRef:
    """Merge one overlay's view of a component over the accumulated one."""
    update: dict[str, Any] = {}
    for f in SCALAR_FIELDS:
        v = getattr(ov, f)
        if v:
            update[f] = v
    if ov.overrides:
        update["overrides"] = deep_merge(base.overrides, ov.overrides)
    for f in ("patches", "expectedResources"):
        if getattr(ov, f):
            update[f] = getattr(ov, f)
    for f in ("dependencyRefs", "manifestFiles", "preManifestFiles"):
        extra = getattr(ov, f)
        if extra:
            update[f] = _union(getattr(base, f), extra)
    for f in ("cleanup", "healthCheckSkip"):
        if getattr(ov, f):
            update[f] = True
    return base.model_copy(update=update) if update else base


def _union(a: Iterable[str], b: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(a))
    for x in b:
        if x not in out:
            out.append(x)
    return out


def merge_phase(dst: ValidationPhase | None, src: ValidationPhase | None) -> ValidationPhase | None:
    if src is None:
        return dst
    if dst is None:
        return src
    update: dict[str, Any] = {}
    if src.checks is not None:
        update["checks"] = [] if not src.checks else _union(dst.checks or [], src.checks)
    if src.constraints is not None:
        if not src.constraints:
            update["constraints"] = []
        else:
            by_name = {c.name: c for c in dst.constraints or []}
            for c in src.constraints:
                by_name[c.name] = c
            update["constraints"] = list(by_name.values())
    if src.nodeSelection is not None:
        update["nodeSelection"] = src.nodeSelection
    if src.timeout:
        update["timeout"] = src.timeout
    if src.infrastructure:
        update["infrastructure"] = src.infrastructure
    return dst.model_copy(update=update) if update else dst


def merge_validation(dst: Validation | None, src: Validation | None) -> Validation | None:
    if src is None:
        return dst
    if dst is None:
        return src
    update = {p: merge_phase(dst.phase(p), src.phase(p)) for p in PHASES}
    return dst.model_copy(update=update)


def _merge_into(
    refs: dict[str, ComponentRef],
    constraints: dict[str, Constraint],
    origin: dict[str, str],
    source: str,
    new_constraints: Iterable[Constraint],
    new_refs: Iterable[ComponentRef],
) -> None:
    for c in new_constraints:
        constraints[c.name] = c
        origin[c.name] = source
    for r in new_refs:
        existing = refs.get(r.name)
        refs[r.name] = r if existing is None else merge_ref(existing, r)


def merge_candidates(catalog: Catalog, candidates: Iterable[Overlay]) -> MergedSpec:
    """Merge base, every candidate chain (deduplicated) and then the accumulated mixins."""
    cands = tuple(candidates)
    key = ("merged", tuple(c.name for c in cands))
    return catalog.memoized(key, lambda: _merge_candidates(catalog, cands))


def _merge_candidates(catalog: Catalog, cands: tuple[Overlay, ...]) -> MergedSpec:
    base = catalog.base
    refs: dict[str, ComponentRef] = {}
    constraints: dict[str, Constraint] = {}
    origin: dict[str, str] = {}
    _merge_into(refs, constraints, origin, "base", base.spec.constraints, base.spec.componentRefs)
    validation = base.spec.validation
    mixins: list[str] = list(base.spec.mixins)
    applied = ["base"]
    for cand in cands:
        for name in cand.chain[1:]:
            if name in applied:
                continue
            ov = catalog.overlay(name)
            _merge_into(refs, constraints, origin, name, ov.spec.constraints, ov.spec.componentRefs)
            validation = merge_validation(validation, ov.spec.validation)
            mixins = _union(mixins, ov.spec.mixins)
            applied.append(name)
    for mixin_name in mixins:
        _apply_mixin(catalog, mixin_name, refs, constraints, origin)
    return MergedSpec(
        applied=tuple(applied),
        constraints=constraints,
        refs=refs,
        validation=validation,
        mixins=tuple(mixins),
        constraint_origin=origin,
    )


def _apply_mixin(
    catalog: Catalog,
    name: str,
    refs: dict[str, ComponentRef],
    constraints: dict[str, Constraint],
    origin: dict[str, str],
) -> None:
    mixin = catalog.mixins.get(name)
    if mixin is None:
        raise not_found(f'mixin "{name}" is not in the catalog')
    where = f'mixin "{name}" ({mixin.path})'
    for c in mixin.spec.constraints:
        if c.name in constraints:
            raise invalid(f'{where}: constraint "{c.name}" is already set by {origin[c.name]}')
    for ref in mixin.spec.componentRefs:
        _check_empty_maps(ref.overrides, f"{where} component {ref.name}")
        reg = catalog.registry.get(ref.name)
        allow = set(reg.mixinSafeOverridePaths) if reg else set()
        existing = refs.get(ref.name)
        if existing is not None:
            for f in IDENTITY_FIELDS:
                if getattr(ref, f):
                    raise invalid(f'{where}: may not set {f} on existing component "{ref.name}"')
            if ref.overrides:
                taken = _raw_value_paths(catalog, existing)
                for path in leaf_paths(ref.overrides):
                    if path not in allow:
                        raise invalid(
                            f'{where}: override "{ref.name}:{path}" is not in the registry '
                            "mixinSafeOverridePaths"
                        )
                    clash = next((t for t in taken if _intersects(t, path)), None)
                    if clash is not None:
                        raise invalid(
                            f'{where}: override "{ref.name}:{path}" collides with "{clash}" '
                            "already set by the component's values"
                        )
        elif allow:
            if ref.valuesFile:
                raise invalid(f'{where}: may not set valuesFile on "{ref.name}"')
            for path in leaf_paths(ref.overrides):
                if path not in allow:
                    raise invalid(
                        f'{where}: override "{ref.name}:{path}" is not in the registry '
                        "mixinSafeOverridePaths"
                    )
    _merge_into(
        refs, constraints, origin, f"mixin:{name}", mixin.spec.constraints, mixin.spec.componentRefs
    )


def _check_empty_maps(tree: Mapping[str, Any], where: str) -> None:
    for k, v in tree.items():
        if isinstance(v, Mapping):
            if not v:
                raise invalid(f'{where}: override "{k}" is an empty map')
            _check_empty_maps(v, where)


def _raw_value_paths(catalog: Catalog, ref: ComponentRef) -> list[str]:
    paths: list[str] = []
    base_rel = f"components/{ref.name}/values.yaml"
    if catalog.has_file(base_rel):
        paths += leaf_paths(catalog.read_values_file(base_rel))
    if ref.valuesFile and ref.valuesFile != base_rel:
        paths += leaf_paths(catalog.read_values_file(ref.valuesFile))
    paths += leaf_paths(ref.overrides)
    return paths


def _intersects(a: str, b: str) -> bool:
    pa, pb = a.split("."), b.split(".")
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


# -------------------------------------------------------------------------- coverage
class CoverageError(AicrError):
    """A stated criteria dimension no applied overlay carries (INVALID_REQUEST)."""

    def __init__(self, message: str, dimensions: tuple[str, ...]) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)
        self.dimensions = dimensions


def check_coverage(catalog: Catalog, criteria: Criteria, applied: Iterable[str]) -> None:
    """Every stated dimension must be carried by an applied overlay (ancestors count)."""
    # Only overlays of a service carry a dimension: the independent ones (service
    # any, e.g. monitoring-hpa and the accelerator wildcards h100-any, gb200-any)
    # join every matching query, so counting them would serve an accelerator on a
    # service for which no leaf is published.
    applied_overlays = [
        o
        for o in (catalog.overlay(n) for n in applied if n != "base")
        if o.criteria is not None and o.criteria.service not in (ANY, "")
    ]
    stated = criteria.stated()
    uncovered: list[str] = []
    uncovered_dims: list[str] = []
    needed: dict[str, list[str]] = {}  # what the overlays also need -> the values needing it
    for dim, value in stated.items():
        carried = any(
            o.criteria is not None and o.criteria.value(dim) == value for o in applied_overlays
        )
        if not carried:
            completions = sorted(
                {
                    o.criteria.value(dim)
                    for o in catalog.overlays.values()
                    if o.criteria is not None
                    and o.criteria.service not in (ANY, "")
                    and o.criteria.value(dim) not in (ANY, "")
                    and overlay_matches(
                        o.criteria, criteria.model_copy(update={dim: o.criteria.value(dim)})
                    )
                }
            )
            hint = (
                f" (valid with the other criteria: {', '.join(completions)})" if completions else ""
            )
            needs = _missing_dimensions(catalog, criteria, dim, value)
            if needs:
                also = ", ".join(f"{FLAGS[d]} ({'/'.join(v)})" for d, v in needs.items())
                needed.setdefault(also, []).append(f'{dim} "{value}"')
            uncovered.append(f'{dim} "{value}"{hint}')
            uncovered_dims.append(dim)
    gated: list[str] = []
    if criteria.os in (ANY, "") and stated:
        gated = sorted(
            {
                o.criteria.os
                for o in catalog.overlays.values()
                if o.criteria is not None
                and o.criteria.os not in (ANY, "")
                and o.name not in applied
                and overlay_matches(o.criteria, criteria.model_copy(update={"os": o.criteria.os}))
            }
        )
    if gated:
        joint = any(
            o.criteria is not None and all(o.criteria.value(d) == v for d, v in stated.items())
            for o in applied_overlays
        )
        if uncovered or not joint:
            raise CoverageError(
                f"criteria {criteria.label()} need --os: the matching overlays are OS-specific "
                f"(valid: {', '.join(gated)})",
                tuple(uncovered_dims),
            )
    if uncovered:
        nearest = nearest_leaves(catalog, criteria)
        # One sentence: what is not covered, then what the overlays for it also need (said
        # once for the values that need the same thing).
        if len(needed) == 1 and len(next(iter(needed.values()))) == len(uncovered):
            them = "it" if len(uncovered) == 1 else "them"
            also = f"the overlays for {them} also need {next(iter(needed))}"
        else:
            also = "; ".join(
                f"the overlays for {_either(values)} also need {need}"
                for need, values in needed.items()
            )
        raise CoverageError(
            f"no overlay covers the requested {_either(uncovered)} for criteria "
            f"{criteria.label()}"
            + (f": {also}" if also else "")
            + (f"; nearest published leaves: {', '.join(nearest)}" if nearest else ""),
            tuple(uncovered_dims),
        )


def published_leaves(catalog: Catalog) -> list[str]:
    """Overlays naming a service and an accelerator: each is a recipe the catalog serves."""
    return sorted(
        o.name
        for o in catalog.overlays.values()
        if o.criteria is not None
        and o.criteria.service not in (ANY, "")
        and o.criteria.accelerator not in (ANY, "")
    )


def nearest_leaves(catalog: Catalog, criteria: Criteria, limit: int = 3) -> list[str]:
    """The published leaves agreeing with the most stated dimensions: the service weighs
    most, then accelerator and intent, then OS and platform; a leaf is marked down for each
    dimension it pins that the query leaves open. Ties go by name."""
    stated = criteria.stated()
    scored: list[tuple[int, str]] = []
    for name in published_leaves(catalog):
        c = catalog.overlay(name).criteria
        if c is None:
            continue
        score = sum(
            (4 if d == "service" else 2 if d in ("accelerator", "intent") else 1)
            for d, v in stated.items()
            if c.value(d) == v
        ) - sum(1 for d in DIMENSIONS if d not in stated and c.value(d) not in (ANY, ""))
        if score > 0:
            scored.append((-score, name))
    return [name for _, name in sorted(scored)[:limit]]


def _either(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _missing_dimensions(
    catalog: Catalog, criteria: Criteria, dim: str, value: str
) -> dict[str, list[str]]:
    """Unstated dimensions that the overlays carrying ``dim=value`` are specific about."""
    stated = criteria.stated()
    needs: dict[str, set[str]] = {}
    common: set[str] | None = None
    for o in catalog.overlays.values():
        c = o.criteria
        if c is None or c.value(dim) != value:
            continue
        # As in check_coverage: an independent overlay (service any, e.g. h100-any) never
        # carries a dimension, so what it leaves unstated is not what the carriers need.
        if c.service in (ANY, ""):
            continue
        if any(c.value(d) not in (ANY, "", v) for d, v in stated.items()):
            continue
        dims = {d for d in DIMENSIONS if d not in stated and c.value(d) not in (ANY, "")}
        common = dims if common is None else common & dims
        for d in dims:
            needs.setdefault(d, set()).add(c.value(d))
    return {d: sorted(needs[d]) for d in sorted(common or ())}


# ---------------------------------------------------------------------- finalisation
def deployment_order(refs: Mapping[str, ComponentRef]) -> list[str]:
    """Validate dependencies and sort enabled components topologically (alphabetical ties)."""
    for ref in refs.values():
        for dep in ref.dependencyRefs:
            if dep not in refs:
                raise invalid(f'component "{ref.name}" references unknown dependency "{dep}"')
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in refs[name].dependencyRefs:
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep] if dep in path else [name, dep]
                raise invalid(
                    "cannot determine deployment order: circular dependencies exist "
                    f"({' -> '.join(cycle)})"
                )
            if dep not in state:
                visit(dep, [*path, dep])
        state[name] = 2

    for name in sorted(refs):
        if name not in state:
            visit(name, [name])
    enabled = {n for n, r in refs.items() if r.enabled}
    indegree = {n: 0 for n in enabled}
    dependents: dict[str, list[str]] = {n: [] for n in enabled}
    for n in enabled:
        for dep in refs[n].dependencyRefs:
            if dep in enabled:
                indegree[n] += 1
                dependents[dep].append(n)
    queue = sorted(n for n, d in indegree.items() if d == 0)
    order: list[str] = []
    while queue:
        current = queue.pop(0)
        order.append(current)
        for child in dependents[current]:
            indegree[child] -= 1
            if indegree[child] == 0:
                queue.append(child)
        queue.sort()
    if len(order) != len(enabled):
        raise invalid("cannot determine deployment order: circular dependencies exist")
    return order


def apply_registry_defaults(catalog: Catalog, ref: ComponentRef) -> ComponentRef:
    """Fill empty fields from the registry; hydrate healthCheckAsserts from its assert file."""
    update: dict[str, Any] = {}
    typ = ref.type.lower()
    if typ == "helm":
        update["type"] = "Helm"
    elif typ == "kustomize":
        update["type"] = "Kustomize"
    reg = catalog.registry.get(ref.name)
    if reg is None:
        return ref.model_copy(update=update) if update else ref
    typ_final = update.get("type") or ref.type or reg.type
    if not ref.type:
        update["type"] = reg.type
    defaults: dict[str, str] = {}
    if typ_final == "Helm" and reg.helm is not None:
        defaults = {
            "source": reg.helm.defaultRepository,
            "version": reg.helm.defaultVersion,
            "namespace": reg.helm.defaultNamespace,
            "chart": reg.helm.defaultChart,
        }
    elif typ_final == "Kustomize" and reg.kustomize is not None:
        defaults = {
            "source": reg.kustomize.defaultSource,
            "tag": reg.kustomize.defaultTag,
            "path": reg.kustomize.defaultPath,
        }
    # A field the reference leaves empty takes the registry's default, when it has one.
    update.update({k: v for k, v in defaults.items() if v and not getattr(ref, k)})
    if "chart" in update:
        update["chart"] = update["chart"].rsplit("/", 1)[-1]  # a chart name, not a path
    if not ref.manifestFiles and reg.manifestFiles:
        update["manifestFiles"] = list(reg.manifestFiles)
    assert_file = (reg.healthCheck or {}).get("assertFile")
    if assert_file and not ref.healthCheckSkip and not ref.healthCheckAsserts:
        rel = str(assert_file)
        update["healthCheckAsserts"] = catalog.memoized(
            ("assert", rel), lambda: catalog.read_text(rel)
        )
    return ref.model_copy(update=update) if update else ref


def coherence_problems(ref: ComponentRef) -> list[str]:
    """Problems that make an enabled component undeployable."""
    n = ref.name
    out: list[str] = []
    if ref.patches:
        out.append(f'component "{n}" sets patches, which no deployer applies')
    for f in ("chart", "source", "version"):
        v = getattr(ref, f)
        if v and v != v.strip():
            out.append(f'component "{n}" {f} "{v}" has surrounding whitespace')
    if ref.version == "v":
        out.append(f'component "{n}" has a bare "v" version')
    if ref.type == "Helm":
        if ref.tag or ref.path:
            out.append(f'component "{n}" is Helm but sets {"tag" if ref.tag else "path"}')
        if ref.source and not ref.version:
            out.append(f'component "{n}" has a Helm source but no version')
        if ref.chart and not ref.source:
            out.append(f'component "{n}" names a chart but no source')
        if not ref.source and not ref.chart and not ref.manifestFiles:
            out.append(f'component "{n}" has no source, no chart and no manifestFiles')
    elif ref.type == "Kustomize":
        if not ref.path:
            out.append(f'component "{n}" is Kustomize but has no path')
        if ref.tag and not ref.source:
            out.append(f'component "{n}" has a tag but no source')
        if ref.manifestFiles:
            out.append(f'component "{n}" is Kustomize but lists manifestFiles')
    else:
        out.append(f'component "{n}" has unknown type "{ref.type}"')
    return out


def finalize(
    catalog: Catalog,
    criteria: Criteria,
    refs: Mapping[str, ComponentRef],
    constraints: Mapping[str, Constraint],
    validation: Validation | None,
    metadata: ResultMetadata,
    *,
    api_version: str = API_V1,
    memo_key: Any = None,
    configuration: dict[str, Any] | None = None,
) -> RecipeResult:
    """Dependencies, deployment order, registry defaults, coherence; build the result.

    ``memo_key`` names a ``refs`` mapping that is a pure function of the key (the
    qualification layer passes the merged composition, profile value and driver
    override); the finalised components are then computed once per catalog.
    """
    if memo_key is None:
        final_refs, order = _final_components(catalog, refs)
    else:
        final_refs, order = catalog.memoized(
            ("final", memo_key), lambda: _final_components(catalog, refs)
        )
    # The engine's own typed values: built without validation, so a one-shot ``recipe``
    # never pays for building the RecipeResult validator (it validates files it reads).
    return RecipeResult.model_construct(
        apiVersion=api_version,
        metadata=metadata,
        criteria=ResultCriteria.model_construct(**dict(criteria)),
        configuration=configuration,
        constraints=[constraints[k] for k in sorted(constraints)],
        componentRefs=list(final_refs),
        deploymentOrder=list(order),
        validation=validation,
    )


def _final_components(
    catalog: Catalog, refs: Mapping[str, ComponentRef]
) -> tuple[list[ComponentRef], list[str]]:
    order = deployment_order(refs)
    final_refs: list[ComponentRef] = []
    problems: list[str] = []
    for name in sorted(refs):
        if name == "deployer":
            raise invalid('component name "deployer" is reserved')
        ref = apply_registry_defaults(catalog, refs[name])
        if ref.enabled:
            problems += coherence_problems(ref)
        final_refs.append(ref)
    if problems:
        raise invalid("; ".join(sorted(problems)))
    return final_refs, order


def stamp_metadata(applied: Iterable[str], **fields: Any) -> ResultMetadata:
    values: dict[str, Any] = {k: list(v) if isinstance(v, list) else v for k, v in fields.items()}
    return ResultMetadata.model_construct(
        version=RESULT_VERSION, appliedOverlays=list(applied), **values
    )


def with_readiness_constraints(
    validation: Validation | None, extra: Iterable[Constraint], where: str
) -> Validation | None:
    extra = list(extra)
    if not extra:
        return validation
    current = validation.readiness if validation is not None else None
    existing = list(current.constraints or []) if current is not None else []
    names = {c.name for c in existing}
    for c in extra:
        if c.name in names:
            raise invalid(f'{where}: readiness constraint "{c.name}" is already declared')
    phase = (current or ValidationPhase.model_construct()).model_copy(
        update={"constraints": existing + extra}
    )
    base = validation or Validation.model_construct()
    return base.model_copy(update={"readiness": phase})


__all__ = [
    "MergedSpec",
    "apply_registry_defaults",
    "check_coverage",
    "nearest_leaves",
    "published_leaves",
    "deployment_order",
    "find_candidates",
    "finalize",
    "merge_candidates",
    "merge_ref",
    "merge_validation",
]
