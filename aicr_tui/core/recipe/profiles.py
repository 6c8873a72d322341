"""Configuration profiles (ADR-015): the ``gpuStack`` declaration and its selection.

A service overlay declares one profile (``spec.profile``) with named values; each value
carries constraints (evaluated fail-closed against a snapshot), readiness constraints
(routed to validation) and per-component override fragments that are merged at the
highest recipe precedence. The union of the fragments' leaf paths, plus a synthetic
``enabled`` per component, is the profile's owned-path set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aicr_tui.core.documents.recipe_result import Constraint
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.names import did_you_mean, shown
from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.tree import leaf_paths

IDENT = LazyPattern(r"^[A-Za-z0-9._-]+$")
IDENT_TEXT = "[A-Za-z0-9._-]+"
ADVERTISERS = ("", "external")
MAX_SAFE_INT = 2**53 - 1


class ProfileComponentRef(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    overrides: dict[str, Any] = Field(default_factory=dict)

    @field_validator("overrides", mode="before")
    @classmethod
    def _none(cls, v: Any) -> Any:
        return {} if v is None else v


class ProfileValue(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    advertiser: str = ""
    constraints: list[Constraint] = Field(default_factory=list)
    readinessConstraints: list[Constraint] = Field(default_factory=list)
    componentRefs: list[ProfileComponentRef] = Field(default_factory=list)

    @field_validator("constraints", "readinessConstraints", "componentRefs", mode="before")
    @classmethod
    def _none(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("advertiser", mode="before")
    @classmethod
    def _adv(cls, v: Any) -> Any:
        return "" if v is None else v


class ProfileDeclaration(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    description: str = ""
    default: str
    values: dict[str, ProfileValue]

    def value_names(self) -> list[str]:
        return sorted(self.values)


@dataclass(frozen=True)
class ProfileSelection:
    name: str
    value: str

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


def parse_profile_selection(text: str | None) -> ProfileSelection | None:
    """Parse ``--profile name=value``; empty means "use the declared default" (None)."""
    if text is None or text == "":
        return None
    if text != text.strip() or text.count("=") != 1:
        raise invalid(
            "profile must use the exact name=value form",
            f"got {shown(text, 80)}",
            remedy="for example gpuStack=operator-managed",
        )
    name, _, value = text.partition("=")
    if not IDENT.match(name) or not IDENT.match(value):
        raise invalid(f"profile name and value must match {IDENT_TEXT}")
    return ProfileSelection(name, value)


def select_value(
    decl: ProfileDeclaration | None, selection: ProfileSelection | None
) -> tuple[str, ProfileValue] | None:
    """The selected value name and fragment, or None for an unprofiled composition."""
    if decl is None:
        if selection is not None:
            raise invalid(
                f'profile "{selection.name}" was selected, but the resolved composition declares no profile'
            )
        return None
    if selection is None:
        return decl.default, decl.values[decl.default]
    if selection.name != decl.name:
        raise invalid(
            f'resolved composition declares profile "{decl.name}", not "{selection.name}"'
        )
    if selection.value not in decl.values:
        raise invalid(
            f'profile "{decl.name}" has no value "{selection.value}"; '
            f"valid values: [{' '.join(decl.value_names())}]"
            + did_you_mean(selection.value, decl.value_names())
        )
    return selection.value, decl.values[selection.value]


def owned_paths(decl: ProfileDeclaration) -> dict[str, list[str]]:
    """Per component, the sorted union of leaf paths across all values, plus ``enabled``."""
    owned: dict[str, set[str]] = {}
    for value in decl.values.values():
        for ref in value.componentRefs:
            paths = owned.setdefault(ref.name, {"enabled"})
            paths.update(leaf_paths(ref.overrides))
    return {name: sorted(paths) for name, paths in sorted(owned.items())}


def _check_leaves(tree: dict[str, Any], where: str, *, root: bool = True) -> None:
    for key, value in tree.items():
        if not isinstance(key, str) or key == "" or "." in key:
            raise invalid(f'{where}: override key "{key}" must be non-empty and contain no "."')
        if root and key == "enabled":
            raise invalid(f"{where}: overrides may not set the root key enabled")
        if isinstance(value, dict):
            if not value:
                raise invalid(f'{where}: override "{key}" is an empty map')
            _check_leaves(value, f"{where}.{key}", root=False)
        elif isinstance(value, bool) or value is None or isinstance(value, str | list):
            continue
        elif isinstance(value, int):
            if abs(value) > MAX_SAFE_INT:
                raise invalid(f'{where}: override "{key}" integer is outside ±(2^53−1)')
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise invalid(f'{where}: override "{key}" must be a finite number')
        elif isinstance(value, datetime | date):
            continue
        else:
            raise invalid(f'{where}: override "{key}" has an unsupported value type')


def validate_declaration(decl: ProfileDeclaration, source: str) -> None:
    """Catalog-load checks on a declaration; each failure names the overlay file."""
    where = f'{source}: profile "{decl.name}"'
    if not IDENT.match(decl.name):
        raise invalid(f"{source}: profile name must match {IDENT_TEXT}")
    if not decl.values:
        raise invalid(f"{where} declares no values")
    lowered: dict[str, str] = {}
    for vname in decl.values:
        if not IDENT.match(vname):
            raise invalid(f'{where}: value "{vname}" must match {IDENT_TEXT}')
        if vname.lower() in lowered:
            raise invalid(f'{where}: values "{lowered[vname.lower()]}" and "{vname}" collide')
        lowered[vname.lower()] = vname
    if not IDENT.match(decl.default) or decl.default not in decl.values:
        raise invalid(
            f'{where}: default "{decl.default}" is not a declared value '
            f"(declared: {', '.join(decl.value_names())})"
        )
    surfaces: dict[str, set[str]] = {}
    for vname, value in decl.values.items():
        vwhere = f"{where} value {vname}"
        if value.advertiser not in ADVERTISERS:
            raise invalid(f'{vwhere}: advertiser must be empty or "external"')
        for label, items in (
            ("constraints", value.constraints),
            ("readinessConstraints", value.readinessConstraints),
        ):
            seen: set[str] = set()
            for c in items:
                if not c.name or not c.value:
                    raise invalid(f"{vwhere}: every {label} entry needs a name and a value")
                if c.name in seen:
                    raise invalid(f'{vwhere}: {label} repeats "{c.name}"')
                seen.add(c.name)
        refs_seen: set[str] = set()
        surface: set[str] = set()
        for ref in value.componentRefs:
            if not ref.name:
                raise invalid(f"{vwhere}: a componentRef has no name")
            if ref.name in refs_seen:
                raise invalid(f'{vwhere}: component "{ref.name}" is listed twice')
            refs_seen.add(ref.name)
            _check_leaves(ref.overrides, f"{vwhere} component {ref.name}")
            surface.update(f"{ref.name}:{p}" for p in leaf_paths(ref.overrides))
        surfaces[vname] = surface
    names = sorted(surfaces)
    first = surfaces[names[0]]
    for other in names[1:]:
        if surfaces[other] != first:
            diff = sorted(first ^ surfaces[other])
            raise invalid(
                f'{where}: values "{names[0]}" and "{other}" must own the same paths '
                f"(differ at {', '.join(diff)})"
            )
