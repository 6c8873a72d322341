"""What verification takes in and hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.foundation.limits import FINDING_MAX_CHARS
from aicr_tui.core.foundation.textsafe import safe_line

# Finding kinds, one per check the issue names.
UNDEFINED_VALUE = "undefined-value"
TYPE_MISMATCH = "type-mismatch"
SCHEMA = "values-schema"
TEMPLATE = "template-error"
KUBE_VERSION = "kube-version"
MISSING_CRD = "missing-crd"
INVALID_OBJECT = "invalid-object"
CHART_SOURCE = "chart-source"

NOT_RENDERABLE = "not renderable: values-only source"


def _clean(text: str) -> str:
    """Text that may come from a chart (a ``fail`` message, a name, an engine error) as one
    terminal-safe line of at most :data:`FINDING_MAX_CHARS` characters."""
    text = safe_line(text)
    if len(text) > FINDING_MAX_CHARS:
        text = text[: FINDING_MAX_CHARS - 3] + "..."
    return text


@dataclass(frozen=True)
class Finding:
    """One check that failed; every field is made one terminal-safe line when it is built,
    so neither the text report nor the JSON report carries a chart's escape sequences."""

    component: str
    kind: str
    message: str
    path: str = ""

    def __post_init__(self) -> None:
        for name in ("component", "kind", "message", "path"):
            object.__setattr__(self, name, _clean(getattr(self, name)))

    def render(self) -> str:
        return f"{self.component}: {self.kind}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {
            "component": self.component,
            "kind": self.kind,
            "path": self.path,
            "message": self.message,
        }


@dataclass
class VerifyComponent:
    """One bundle step as the verifier sees it (from a plan or from a bundle directory)."""

    name: str
    folder: str
    namespace: str
    chart: str
    source: str
    version: str
    values: dict[str, Any]
    manifests: dict[str, str]
    """Manifest file name -> YAML text, applied after the chart."""

    @property
    def has_chart(self) -> bool:
        return bool(self.source)


@dataclass
class VerifyInput:
    components: list[VerifyComponent]
    kubernetes_constraint: str
    """The recipe's ``K8s.server.version`` expression ("" when it sets none)."""
    cluster_provided: list[VerifyComponent] = field(default_factory=list)
    """Components the recipe declares but leaves to the cluster (its own add-ons): their
    charts' CRDs count as installed before the first step."""


@dataclass
class ComponentReport:
    name: str
    folder: str
    status: str
    """``verified``, ``verified against stand-in``, ``manifest-only``,
    ``not renderable: values-only source``, ``chart missing``, ``template error``."""
    chart: str = ""
    source: str = ""
    note: str = ""
    objects: int = 0
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "component": _clean(self.name),
            "folder": _clean(self.folder),
            "status": _clean(self.status),
            "chart": _clean(self.chart),
            "source": _clean(self.source),
            "note": _clean(self.note),
            "objects": self.objects,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass
class VerifyReport:
    components: list[ComponentReport]
    kubernetes: str
    engine: str

    @property
    def findings(self) -> list[Finding]:
        return [f for c in self.components for f in c.findings]

    @property
    def exit_code(self) -> int:
        return 8 if self.findings else 0

    def not_verified(self) -> list[ComponentReport]:
        return [c for c in self.components if c.status == NOT_RENDERABLE]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "VerifyReport",
            "apiVersion": "aicr-tui/v1",
            "kubernetes": self.kubernetes,
            "engine": self.engine,
            "findings": len(self.findings),
            "components": [c.to_json() for c in self.components],
        }

    def render_text(self) -> str:
        lines: list[str] = []
        for c in self.components:
            head = f"{_clean(c.folder)}: {_clean(c.status)}"
            if c.chart:
                head += f" ({_clean(c.chart)}"
                head += f" from {_clean(c.source)})" if c.source else ")"
            if c.note:
                head += f"; {_clean(c.note)}"
            if not c.findings and c.status not in (NOT_RENDERABLE,):
                head += f"; {c.objects} object{'' if c.objects == 1 else 's'}, no findings"
            lines.append(head)
            lines += [f"  {f.render()}" for f in c.findings]
        n = len(self.findings)
        skipped = len(self.not_verified())
        tail = f"; {skipped} component(s) not renderable, not verified" if skipped else ""
        lines.append(
            f"{n} finding(s) in {len(self.components)} components "
            f"(Kubernetes {self.kubernetes} schemas, {_clean(self.engine)}){tail}"
        )
        return "\n".join(lines) + "\n"
