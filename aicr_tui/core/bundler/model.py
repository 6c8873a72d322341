"""What the bundler hands back: the plan (shown by the wizard, written by the CLI)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from aicr_tui.core.bundler.overrides import BundleOverrides, OverrideEntry
    from aicr_tui.core.documents.recipe_result import ComponentRef, RecipeResult
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.recipe.catalog_models import RegistryComponent


@dataclass(frozen=True)
class BlockingError:
    """A refusal: the plan can be shown but not written while any of these exist."""

    check: str
    message: str
    component: str = ""

    def render(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass(frozen=True)
class Feedback:
    """Live feedback on one override entry (lock, policy, typing)."""

    level: Literal["ok", "info", "warning", "error"]
    message: str


@dataclass
class ComponentPlan:
    name: str
    index: int
    folder: str
    namespace: str
    chart: str
    source: str
    version: str
    values: dict[str, Any]
    cluster_values: dict[str, Any] | None
    manifests: dict[str, str]
    """Rendered manifest file name -> YAML text (empty when gated out)."""
    dependencies: list[str] = field(default_factory=list)
    """Rendered components this one depends on (edges to skipped ones pruned)."""
    expected_resources: list[dict[str, Any]] = field(default_factory=list)
    """The recipe's ``expectedResources`` (kind, name, namespace) for readiness hooks."""
    vendored: str = ""
    """``--vendor-charts``: the chart archive's path in the bundle (``charts/<c>-<v>.tgz``)."""

    @property
    def has_chart(self) -> bool:
        return bool(self.source)


@dataclass
class BundlePlan:
    recipe: RecipeResult
    components: list[ComponentPlan]
    warnings: list[str]
    notes: list[str]
    errors: list[BlockingError]
    files: dict[str, bytes]
    executables: frozenset[str]
    skipped: dict[str, str] = field(default_factory=dict)
    deployer: str = "helm"
    entrypoint: str = "deploy.sh"

    @property
    def ok(self) -> bool:
        return not self.errors

    def component(self, name: str) -> ComponentPlan | None:
        return next((c for c in self.components if c.name == name), None)


@dataclass
class BundleWriteResult:
    out_dir: Path
    files: list[str]
    warnings: list[str]


@dataclass
class ResolvedOverride:
    entry: OverrideEntry
    component: str


@dataclass
class BundleState:
    """Everything the checks read: final values, what renders, and how overrides resolved."""

    recipe: RecipeResult
    catalog: Catalog
    overrides: BundleOverrides
    resolved: list[ResolvedOverride]
    declared: dict[str, ComponentRef]
    rendered: list[str]
    skipped: dict[str, str]
    recipe_values: dict[str, dict[str, Any]]
    values: dict[str, dict[str, Any]]
    injected_tolerations: list[dict[str, Any]]
    tolerations_given: bool
    accelerated_selector: dict[str, str]
    workload_selector: dict[str, str]
    system_tolerations: list[dict[str, Any]] = field(default_factory=list)
    system_selector: dict[str, str] = field(default_factory=dict)
    storage_class: str = ""
    """``--storage-class``: written at every registry storageClassPaths entry ("" = none)."""
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[BlockingError] = field(default_factory=list)

    @property
    def criteria(self) -> dict[str, str]:
        c = self.recipe.criteria
        return {
            "service": c.service,
            "accelerator": c.accelerator,
            "intent": c.intent,
            "os": c.os,
            "platform": c.platform,
        }

    def registry_entry(self, name: str) -> RegistryComponent | None:
        return self.catalog.registry.get(name)

    def is_rendered(self, name: str) -> bool:
        return name in self.values

    def recipe_enabled(self, name: str) -> bool:
        ref = self.declared.get(name)
        return ref is not None and ref.enabled

    def active(self, name: str) -> bool:
        """Declared, enabled by the recipe and not dropped by ``--set <c>:enabled=false``."""
        return self.recipe_enabled(name) and name not in self.skipped

    def entries_for(self, component: str, kinds: tuple[str, ...] = ()) -> list[OverrideEntry]:
        return [
            r.entry
            for r in self.resolved
            if r.component == component and (not kinds or r.entry.kind in kinds)
        ]

    def dynamic_paths(self, component: str) -> list[str]:
        return [e.path for e in self.entries_for(component, ("dynamic",))]

    def effective_values(self, name: str) -> dict[str, Any] | None:
        """Final values when rendered, else the recipe's own values when it is declared."""
        if name in self.values:
            return self.values[name]
        return self.recipe_values.get(name)
