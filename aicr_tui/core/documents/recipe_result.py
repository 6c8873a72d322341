"""The generated recipe artifact: ``kind: RecipeResult``.

``aicr.run/v1`` for unprofiled results and ``aicr.run/v1beta2`` when a configuration
profile was selected; older ``aicr.run/v1alpha2`` / ``v1alpha3`` / ``v1beta1`` files are
accepted on read. Field order and the omit-when-empty rules follow the upstream artifact,
so the rendered YAML (or JSON) is byte-identical for the same input.

The same :class:`ComponentRef`, :class:`Constraint` and :class:`ValidationPhase` models
describe overlay specs in the catalog, so merging never converts between shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from ruamel.yaml.scalarstring import LiteralScalarString

from aicr_tui.core.foundation import names
from aicr_tui.core.foundation.errors import invalid, validate_document
from aicr_tui.core.foundation.yamlio import dump_json, dump_yaml, load_yaml_plain

RESULT_KIND = "RecipeResult"
API_V1 = "aicr.run/v1"
API_PROFILE = "aicr.run/v1beta2"
API_AUTHORING = "aicr.run/v1beta1"
PROFILE_API_VERSIONS = ("aicr.run/v1beta2", "aicr.run/v1alpha3")
LEGACY_API_VERSIONS = ("aicr.run/v1", "aicr.run/v1beta1", "aicr.run/v1alpha2")
ACCEPTED_API_VERSIONS = LEGACY_API_VERSIONS + PROFILE_API_VERSIONS
CRITERIA_FIELDS = ("service", "accelerator", "intent", "os", "platform")


def _text(v: Any) -> Any:
    """YAML readers hand us numbers for values like ``1.34``; constraints are text."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    return v


class Constraint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    value: str
    severity: str = ""
    remediation: str = ""
    unit: str = ""

    @field_validator("value", "name", mode="before")
    @classmethod
    def _coerce(cls, v: Any) -> Any:
        return _text(v)

    def to_document(self) -> dict[str, Any]:
        return _omit(
            {"name": self.name, "value": self.value}, self, ("severity", "remediation", "unit")
        )


class ComponentRef(BaseModel):
    """One component of a recipe (or an overlay's partial view of it).

    Frozen: resolved refs are shared between results and the catalog memo. Use
    ``model_copy(update=...)`` to derive a changed ref, and never edit ``overrides`` in
    place (``aicr_tui.core.recipe.values.copy_tree`` gives an independent tree).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    namespace: str = ""
    chart: str = ""
    type: str = ""
    source: str = ""
    version: str = ""
    tag: str = ""
    valuesFile: str = ""
    overrides: dict[str, Any] = Field(default_factory=dict)
    patches: list[Any] = Field(default_factory=list)
    dependencyRefs: list[str] = Field(default_factory=list)
    manifestFiles: list[str] = Field(default_factory=list)
    preManifestFiles: list[str] = Field(default_factory=list)
    path: str = ""
    cleanup: bool = False
    expectedResources: list[dict[str, Any]] = Field(default_factory=list)
    healthCheckAsserts: str = ""
    healthCheckSkip: bool = False

    @field_validator("overrides", mode="before")
    @classmethod
    def _overrides(cls, v: Any) -> Any:
        return {} if v is None else v

    @field_validator(
        "patches",
        "dependencyRefs",
        "manifestFiles",
        "preManifestFiles",
        "expectedResources",
        mode="before",
    )
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("version", "tag", "namespace", "chart", "source", mode="before")
    @classmethod
    def _scalars(cls, v: Any) -> Any:
        return _text(v)

    @property
    def enabled(self) -> bool:
        """Disabled by ``overrides.enabled: false`` or ``overrides.install: false``.

        A non-bool value is ignored (the component stays enabled), as upstream does.
        """
        for key in ("enabled", "install"):
            if self.overrides.get(key) is False:
                return False
        return True

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name}
        for field in ("namespace", "chart"):
            if getattr(self, field):
                doc[field] = getattr(self, field)
        doc["type"] = self.type
        doc["source"] = self.source
        for field in (
            "version",
            "tag",
            "valuesFile",
            "overrides",
            "patches",
            "dependencyRefs",
            "manifestFiles",
            "preManifestFiles",
            "path",
            "cleanup",
            "expectedResources",
            "healthCheckAsserts",
            "healthCheckSkip",
        ):
            value = getattr(self, field)
            if value:
                doc[field] = value
        return doc


def check_component_ref(ref: ComponentRef, field: str) -> None:
    """Refuse a ref whose names could not be Kubernetes/Helm names (or would escape a path
    or read as an option); ``field`` locates the ref ("recipe file \"r.yaml\":
    componentRefs[2]"). Empty optional fields mean "not set" and pass."""
    names.COMPONENT_NAME.check(ref.name, f"{field}.name")
    names.check_optional(names.NAMESPACE, ref.namespace, f"{field}.namespace")
    names.check_optional(names.CHART_NAME, ref.chart, f"{field}.chart")
    if ref.type.lower() == "kustomize":
        names.check_optional(names.GIT_SOURCE, ref.source, f"{field}.source")
        names.check_optional(names.GIT_REF, ref.tag, f"{field}.tag")
    else:
        names.check_optional(names.CHART_REPOSITORY, ref.source, f"{field}.source")
    if ref.version.strip() not in ("", "v"):  # the resolver's coherence check words those
        names.CHART_VERSION.check(ref.version.strip(), f"{field}.version")
    names.check_optional(names.CATALOG_PATH, ref.valuesFile, f"{field}.valuesFile")
    for key in ("manifestFiles", "preManifestFiles"):
        for i, rel in enumerate(getattr(ref, key)):
            names.CATALOG_PATH.check(rel, f"{field}.{key}[{i}]")
    for i, dep in enumerate(ref.dependencyRefs):
        names.COMPONENT_NAME.check(dep, f"{field}.dependencyRefs[{i}]")


class ValidationPhase(BaseModel):
    """One validation phase. ``None`` lists mean "not stated" (inherit), ``[]`` clears."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    timeout: str = ""
    constraints: list[Constraint] | None = None
    checks: list[str] | None = None
    nodeSelection: dict[str, Any] | None = None
    infrastructure: Any = None

    @field_validator("timeout", mode="before")
    @classmethod
    def _coerce(cls, v: Any) -> Any:
        return _text(v)

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.timeout:
            doc["timeout"] = self.timeout
        if self.constraints:
            doc["constraints"] = [c.to_document() for c in self.constraints]
        if self.checks:
            doc["checks"] = list(self.checks)
        if self.nodeSelection:
            doc["nodeSelection"] = self.nodeSelection
        if self.infrastructure:
            doc["infrastructure"] = self.infrastructure
        return doc


PHASES = ("readiness", "deployment", "performance", "conformance")


class Validation(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    readiness: ValidationPhase | None = None
    deployment: ValidationPhase | None = None
    performance: ValidationPhase | None = None
    conformance: ValidationPhase | None = None

    def phase(self, name: str) -> ValidationPhase | None:
        value: ValidationPhase | None = getattr(self, name)
        return value

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        for name in PHASES:
            phase = self.phase(name)
            if phase is not None:
                body = phase.to_document()
                if body:
                    doc[name] = body
        return doc


class ExcludedOverlay(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    reason: str = ""


class ConstraintWarning(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    overlay: str
    constraint: str
    expected: str
    actual: str = ""
    reason: str

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "overlay": self.overlay,
            "constraint": self.constraint,
            "expected": self.expected,
        }
        if self.actual:
            doc["actual"] = self.actual
        doc["reason"] = self.reason
        return doc


class SelectedProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    value: str
    advertiser: str = ""
    ownedPaths: dict[str, list[str]] = Field(default_factory=dict)

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "value": self.value}
        if self.advertiser:
            doc["advertiser"] = self.advertiser
        doc["ownedPaths"] = {k: list(self.ownedPaths[k]) for k in sorted(self.ownedPaths)}
        return doc


class ResultMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    version: str = ""
    appliedOverlays: list[str] = Field(default_factory=list)
    excludedOverlays: list[ExcludedOverlay] = Field(default_factory=list)
    constraintWarnings: list[ConstraintWarning] = Field(default_factory=list)
    gpuDriverState: str = ""
    selectedProfile: SelectedProfile | None = None
    mariaDBOperatorState: str = ""

    @field_validator("excludedOverlays", mode="before")
    @classmethod
    def _legacy_excluded(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, list):
            return [{"name": x} if isinstance(x, str) else x for x in v]
        return v

    @field_validator("appliedOverlays", "constraintWarnings", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return [] if v is None else v

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.version:
            doc["version"] = self.version
        if self.appliedOverlays:
            doc["appliedOverlays"] = list(self.appliedOverlays)
        if self.excludedOverlays:
            doc["excludedOverlays"] = [
                {"name": e.name, **({"reason": e.reason} if e.reason else {})}
                for e in self.excludedOverlays
            ]
        if self.constraintWarnings:
            doc["constraintWarnings"] = [w.to_document() for w in self.constraintWarnings]
        if self.gpuDriverState:
            doc["gpuDriverState"] = self.gpuDriverState
        if self.selectedProfile is not None:
            doc["selectedProfile"] = self.selectedProfile.to_document()
        if self.mariaDBOperatorState:
            doc["mariaDBOperatorState"] = self.mariaDBOperatorState
        return doc


class ResultCriteria(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    service: str = "any"
    accelerator: str = "any"
    intent: str = "any"
    os: str = "any"
    platform: str = "any"
    nodes: int = 0

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {f: getattr(self, f) for f in CRITERIA_FIELDS}
        if self.nodes:
            doc["nodes"] = self.nodes
        return doc


class RecipeResult(BaseModel):
    """The resolved, version-locked recipe."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: str = RESULT_KIND
    apiVersion: str = API_V1
    metadata: ResultMetadata = Field(default_factory=ResultMetadata)
    criteria: ResultCriteria = Field(default_factory=ResultCriteria)
    configuration: dict[str, Any] | None = None
    constraints: list[Constraint] = Field(default_factory=list)
    componentRefs: list[ComponentRef] = Field(default_factory=list)
    deploymentOrder: list[str] = Field(default_factory=list)
    validation: Validation | None = None

    @field_validator("constraints", "componentRefs", "deploymentOrder", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("metadata", "criteria", mode="before")
    @classmethod
    def _maps(cls, v: Any) -> Any:
        return {} if v is None else v

    @property
    def profiled(self) -> bool:
        return self.metadata.selectedProfile is not None

    def component(self, name: str) -> ComponentRef | None:
        return next((c for c in self.componentRefs if c.name == name), None)

    def enabled_components(self) -> list[ComponentRef]:
        return [c for c in self.componentRefs if c.enabled]

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "kind": self.kind,
            "apiVersion": self.apiVersion,
            "metadata": self.metadata.to_document(),
            "criteria": self.criteria.to_document(),
        }
        if self.configuration:
            doc["configuration"] = self.configuration
        if self.constraints:
            doc["constraints"] = [c.to_document() for c in self.constraints]
        doc["componentRefs"] = [c.to_document() for c in self.componentRefs]
        doc["deploymentOrder"] = list(self.deploymentOrder)
        if self.validation is not None:
            body = self.validation.to_document()
            if body:
                doc["validation"] = body
        return doc


def _omit(doc: dict[str, Any], model: BaseModel, fields: tuple[str, ...]) -> dict[str, Any]:
    for f in fields:
        v = getattr(model, f)
        if v:
            doc[f] = v
    return doc


def _literal_blocks(value: Any) -> Any:
    """Multi-line strings render as YAML literal blocks (readable Chainsaw asserts)."""
    if isinstance(value, dict):
        return {k: _literal_blocks(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal_blocks(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def render_recipe(result: RecipeResult, fmt: str = "yaml") -> str:
    """Serialise deterministically: same result, byte-identical text."""
    doc = result.to_document()
    if fmt == "json":
        return dump_json(doc)
    if fmt == "yaml":
        return dump_yaml(_literal_blocks(doc))
    raise invalid(f'--format "{fmt}" is not supported; expected yaml or json')


@dataclass(frozen=True)
class RecipeRequest:
    """A RecipeMetadata (catalog overlay) given where a recipe was expected.

    Only its criteria count; the recipe engine re-resolves them against the catalog
    (:func:`aicr_tui.core.recipe.loading.parse_recipe`) and checks the declared profile and mixins.
    Parsing never touches the catalog.
    """

    source: str
    criteria: dict[str, Any]
    profile: Any = None
    mixins: tuple[str, ...] = ()


def read_recipe(text: str, source: str) -> RecipeResult | RecipeRequest:
    """Parse a recipe document; every problem is one line naming ``source``."""
    # a recipe's overrides are Helm values: a lone surrogate is refused (Go cannot hold it)
    raw = load_yaml_plain(text, f'recipe file "{source}"', refuse_lone_surrogates=True)
    return recipe_from_document(raw, source)


def recipe_from_document(raw: Any, source: str) -> RecipeResult | RecipeRequest:
    if not isinstance(raw, dict):
        raise invalid(f'recipe file "{source}" is not a mapping; expected kind: RecipeResult')
    kind = raw.get("kind") or ""
    if kind == "Recipe":
        raise invalid(
            f'recipe file "{source}" has the legacy kind "Recipe"; regenerate it with `aicr-tui recipe`'
        )
    if kind == "RecipeMetadata":
        return _recipe_request(raw, source)
    if kind and kind != RESULT_KIND:
        raise invalid(f'recipe file "{source}" has kind "{kind}", expected "{RESULT_KIND}"')
    api = raw.get("apiVersion") or ""
    if not api:
        raise invalid(
            f'recipe file "{source}" has no apiVersion; expected "{API_V1}" or "{API_PROFILE}"'
        )
    if api not in ACCEPTED_API_VERSIONS:
        raise invalid(
            f'recipe file "{source}" has apiVersion "{api}", which this build does not support '
            f"(expected one of {', '.join(ACCEPTED_API_VERSIONS)})"
        )
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    has_profile = bool(meta.get("selectedProfile")) if isinstance(meta, dict) else False
    if has_profile and api not in PROFILE_API_VERSIONS:
        raise invalid(
            f'recipe file "{source}" carries metadata.selectedProfile but apiVersion "{api}"; '
            f'a profiled recipe must use "{API_PROFILE}"'
        )
    doc = dict(raw)
    doc["kind"] = RESULT_KIND
    result = validate_document(RecipeResult, doc, f'recipe file "{source}"')
    for i, ref in enumerate(result.componentRefs):
        check_component_ref(ref, f'recipe file "{source}": componentRefs[{i}]')
    for i, name in enumerate(result.deploymentOrder):
        names.COMPONENT_NAME.check(name, f'recipe file "{source}": deploymentOrder[{i}]')
    declared = [c.name for c in result.componentRefs]
    dupes = sorted({n for n in declared if declared.count(n) > 1})
    if dupes:
        raise invalid(f'recipe file "{source}" declares component {dupes[0]} more than once')
    if "deployer" in declared:
        raise invalid(f'recipe file "{source}" uses the reserved component name "deployer"')
    return result


def _recipe_request(raw: dict[str, Any], source: str) -> RecipeRequest:
    spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
    criteria = spec.get("criteria") if isinstance(spec, dict) else None
    if not isinstance(criteria, dict) or not criteria:
        raise invalid(
            f'recipe file "{source}" is a RecipeMetadata without criteria; '
            "pass a RecipeResult from `aicr-tui recipe`, or an overlay with criteria"
        )
    declared = spec.get("profile") if isinstance(spec, dict) else None
    mixins = spec.get("mixins") if isinstance(spec, dict) else None
    return RecipeRequest(
        source=source,
        criteria=dict(criteria),
        profile=declared,
        mixins=tuple(str(m) for m in mixins) if isinstance(mixins, list) else (),
    )
