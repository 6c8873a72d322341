"""The parts of a recipe that validation reads, from the RecipeResult document.

Validation consumes the plain document form (what ``recipe.yaml`` holds), so it works with
any loader that produces it: ``RecipeView.from_document(doc)`` or ``RecipeView.of(obj)`` for
a pydantic RecipeResult.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.documents.recipe_result import PHASES
from aicr_tui.core.foundation.errors import invalid

VALIDATION_PHASES = PHASES  # as a recipe declares them


@dataclass(frozen=True)
class RecipeConstraint:
    name: str
    value: str
    remediation: str = ""
    unit: str = ""


@dataclass(frozen=True)
class ExpectedResource:
    kind: str
    name: str
    namespace: str


@dataclass(frozen=True)
class ComponentView:
    name: str
    namespace: str
    enabled: bool
    expected_resources: tuple[ExpectedResource, ...] = ()


@dataclass(frozen=True)
class PhaseSpec:
    checks: tuple[str, ...] = ()
    constraints: tuple[RecipeConstraint, ...] = ()

    def constraint(self, name: str) -> RecipeConstraint | None:
        for c in self.constraints:
            if c.name == name:
                return c
        return None


@dataclass(frozen=True)
class RecipeView:
    source: str
    criteria: dict[str, str]
    constraints: tuple[RecipeConstraint, ...]
    components: tuple[ComponentView, ...]
    phases: dict[str, PhaseSpec] = field(default_factory=dict)
    selected_profile: str = ""
    # The #1327 GPU allocation policy resolved from the recipe's hydrated values
    # (aicr_tui.core.validation.policy); "" when it was not resolved (then checks do not compare it).
    allocation_policy: str = ""

    @classmethod
    def of(cls, recipe: Any, source: str = "recipe") -> RecipeView:
        if isinstance(recipe, RecipeView):
            return recipe
        if isinstance(recipe, dict):
            return cls.from_document(recipe, source)
        for attr in ("to_document", "model_dump"):
            fn = getattr(recipe, attr, None)
            if callable(fn):
                doc = fn(mode="json") if attr == "model_dump" else fn()
                if isinstance(doc, dict):
                    return cls.from_document(doc, source)
        raise invalid(f"{source} is not a recipe document")

    @classmethod
    def from_document(cls, doc: dict[str, Any], source: str = "recipe") -> RecipeView:
        crit = doc.get("criteria") or {}
        criteria = {str(k): str(v) for k, v in crit.items()} if isinstance(crit, dict) else {}
        constraints = _constraints(doc.get("constraints"), f"{source} constraints")
        comps: list[ComponentView] = []
        for i, ref in enumerate(doc.get("componentRefs") or []):
            if not isinstance(ref, dict) or not ref.get("name"):
                raise invalid(f"{source} componentRefs[{i}] has no name")
            raw_overrides = ref.get("overrides")
            overrides: dict[str, Any] = raw_overrides if isinstance(raw_overrides, dict) else {}
            enabled = not (overrides.get("enabled") is False or overrides.get("install") is False)
            ns = str(ref.get("namespace") or "")
            expected: list[ExpectedResource] = []
            for r in ref.get("expectedResources") or []:
                if isinstance(r, dict) and r.get("kind") and r.get("name"):
                    expected.append(
                        ExpectedResource(
                            str(r["kind"]), str(r["name"]), str(r.get("namespace") or ns)
                        )
                    )
            comps.append(ComponentView(str(ref["name"]), ns, enabled, tuple(expected)))
        phases: dict[str, PhaseSpec] = {}
        validation = doc.get("validation") or {}
        if not isinstance(validation, dict):
            raise invalid(f"{source} validation is not a mapping")
        for phase in VALIDATION_PHASES:
            block = validation.get(phase)
            if block is None:
                continue
            if not isinstance(block, dict):
                raise invalid(f"{source} validation.{phase} is not a mapping")
            checks = block.get("checks") or []
            if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
                raise invalid(f"{source} validation.{phase}.checks is not a list of names")
            phases[phase] = PhaseSpec(
                tuple(checks),
                _constraints(block.get("constraints"), f"{source} validation.{phase}.constraints"),
            )
        meta = doc.get("metadata") or {}
        prof = meta.get("selectedProfile") if isinstance(meta, dict) else None
        selected = ""
        if isinstance(prof, dict) and prof.get("name"):
            selected = f"{prof.get('name')}={prof.get('value', '')}"
        return cls(source, criteria, constraints, tuple(comps), phases, selected)

    def phase(self, name: str) -> PhaseSpec:
        return self.phases.get(name, PhaseSpec())

    def component(self, name: str) -> ComponentView | None:
        for c in self.components:
            if c.name == name:
                return c
        return None

    def has_enabled(self, name: str) -> bool:
        c = self.component(name)
        return c is not None and c.enabled

    def declared_checks(self) -> dict[str, tuple[str, ...]]:
        return {p: spec.checks for p, spec in self.phases.items() if p != "readiness"}


def _constraints(raw: Any, where: str) -> tuple[RecipeConstraint, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise invalid(f"{where} is not a list")
    out: list[RecipeConstraint] = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or not c.get("name"):
            raise invalid(f"{where}[{i}] has no name")
        value = c.get("value")
        out.append(
            RecipeConstraint(
                str(c["name"]),
                "" if value is None else str(value),
                str(c.get("remediation") or ""),
                str(c.get("unit") or ""),
            )
        )
    return tuple(out)
