"""The catalog's documents as models: overlay and mixin specs, the component registry.

Only their shape lives here; :mod:`aicr_tui.core.recipe.catalog` loads them from files, checks their
names and references across documents, and caches them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aicr_tui.core.documents.criteria import Criteria
from aicr_tui.core.documents.recipe_result import ComponentRef, Constraint, Validation
from aicr_tui.core.recipe.profiles import ProfileDeclaration

REGISTRY_KIND = "ComponentRegistry"


class OverlaySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    base: str = ""
    criteria: dict[str, Any] | None = None
    mixins: list[str] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    componentRefs: list[ComponentRef] = Field(default_factory=list)
    validation: Validation | None = None
    profile: ProfileDeclaration | None = None

    @field_validator("mixins", "constraints", "componentRefs", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("base", mode="before")
    @classmethod
    def _base(cls, v: Any) -> Any:
        return "" if v is None else v


class MixinSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    constraints: list[Constraint] = Field(default_factory=list)
    componentRefs: list[ComponentRef] = Field(default_factory=list)

    @field_validator("constraints", "componentRefs", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return [] if v is None else v


@dataclass
class Overlay:
    name: str
    api_version: str
    spec: OverlaySpec
    path: str
    criteria: Criteria | None = None
    chain: tuple[str, ...] = ()
    owned_paths: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Mixin:
    name: str
    spec: MixinSpec
    path: str


class HelmDefaults(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    defaultRepository: str = ""
    defaultChart: str = ""
    defaultVersion: str = ""
    defaultNamespace: str = ""


class KustomizeDefaults(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    defaultSource: str = ""
    defaultPath: str = ""
    defaultTag: str = ""


class SchedulingGroup(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    nodeSelectorPaths: list[str] = Field(default_factory=list)
    tolerationPaths: list[str] = Field(default_factory=list)
    taintStrPaths: list[str] = Field(default_factory=list)
    requireNodeSelector: bool = False
    requireNodeSelectorIfStorageClassSet: bool = False


class NodeScheduling(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    system: SchedulingGroup | None = None
    accelerated: SchedulingGroup | None = None
    nodeCountPaths: list[str] = Field(default_factory=list)


class ComponentValidation(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    function: str
    severity: str = ""
    conditions: dict[str, list[str]] = Field(default_factory=dict)
    message: str = ""


class RegistryComponent(BaseModel):
    """One registry entry: aliases, chart defaults, scheduling paths, bundle checks."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    name: str
    displayName: str = ""
    valueOverrideKeys: list[str] = Field(default_factory=list)
    helm: HelmDefaults | None = None
    kustomize: KustomizeDefaults | None = None
    manifestFiles: list[str] = Field(default_factory=list)
    healthCheck: dict[str, Any] | None = None
    nodeScheduling: NodeScheduling | None = None
    podScheduling: dict[str, Any] | None = None
    storageClassPaths: list[str] = Field(default_factory=list)
    sharedStorageClassPaths: list[str] = Field(default_factory=list)
    validations: list[ComponentValidation] = Field(default_factory=list)
    mixinSafeOverridePaths: list[str] = Field(default_factory=list)
    manifestValueKeys: list[str] = Field(default_factory=list)
    """Top-level values the chart does not define that only the component's manifests
    read: the manifests render with them, the chart's ``values.yaml`` leaves them out."""

    @property
    def type(self) -> str:
        if self.kustomize is not None and self.kustomize.defaultSource:
            return "Kustomize"
        return "Helm"

    @property
    def namespace(self) -> str:
        return self.helm.defaultNamespace if self.helm else ""

    @property
    def manifest_only(self) -> bool:
        return self.type == "Helm" and not (self.helm and self.helm.defaultRepository)

    @property
    def workload_selector_paths(self) -> list[str]:
        work = (self.podScheduling or {}).get("workload") or {}
        paths = work.get("workloadSelectorPaths") if isinstance(work, dict) else None
        return [str(p) for p in paths] if isinstance(paths, list) else []

    def keys(self) -> list[str]:
        """The name and every alias usable as a ``--set`` prefix."""
        return [self.name, *self.valueOverrideKeys]


class Registry(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    apiVersion: str = ""
    kind: str = REGISTRY_KIND
    components: list[RegistryComponent] = Field(default_factory=list)

    def get(self, name: str) -> RegistryComponent | None:
        return next((c for c in self.components if c.name == name), None)

    def find(self, key: str) -> RegistryComponent | None:
        """Match a component by its name or any of its ``valueOverrideKeys`` aliases."""
        exact = self.get(key)
        if exact is not None:
            return exact
        return next((c for c in self.components if key in c.valueOverrideKeys), None)

    def names(self) -> list[str]:
        return [c.name for c in self.components]
