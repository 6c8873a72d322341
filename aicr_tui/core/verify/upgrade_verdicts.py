"""The vocabulary of an upgrade verdict: verdicts, reason kinds, :class:`Reason`, :class:`Side`.

A verdict is ``safe``, ``manual``, ``blocked`` or ``unknown`` (:data:`SEVERITY` orders them,
:func:`worst` folds them); each :class:`Reason` names its kind (an immutable field, a CRD
version removed, an object renamed, ...). :mod:`aicr_tui.core.verify.upgrade` compares two
:class:`Side` s of a component into reasons; the services and screens read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SAFE = "safe"
MANUAL = "manual"
BLOCKED = "blocked"
UNKNOWN = "unknown"
SEVERITY = {SAFE: 0, MANUAL: 1, UNKNOWN: 2, BLOCKED: 3}
"""A component's verdict is its worst reason's: blocked over unknown over manual."""

# Reason kinds (one per check).
CRD_VERSION_REMOVED = "crd-version-removed"
CRD_STORED_VERSION_REMOVED = "crd-stored-version-removed"
CRD_FIELD_REMOVED = "crd-field-removed"
CRD_CONVERSION = "crd-conversion-changed"
CRD_NOT_UPGRADED = "crd-not-upgraded-by-helm"
IMMUTABLE = "immutable-field"
RENAMED = "object-renamed"
MOVED = "object-moved-namespace"
DELETED = "object-deleted"
KEPT = "object-kept"
RELEASE_RENAMED = "release-renamed"
GPU_STACK = "gpu-stack-changed"
CHART_MAJOR = "chart-major-version"
VALUE_IGNORED = "value-ignored"
NOT_KNOWN = "not-known"
ADDED = "component-added"
UNCHANGED = "unchanged"
REMOVED = "component-removed"


@dataclass(frozen=True)
class Reason:
    kind: str
    verdict: str
    message: str
    steps: tuple[str, ...] = ()
    """What to do, in order, for a manual or blocked reason."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "verdict": self.verdict,
            "message": self.message,
            "steps": list(self.steps),
        }


@dataclass
class Side:
    """One side of a component's upgrade."""

    component: str
    release: str
    namespace: str
    chart: str
    version: str
    values: dict[str, Any]
    objects: list[dict[str, Any]] | None
    """Rendered objects (templates and manifests, hooks excluded); None when not known."""
    crds: list[dict[str, Any]] = field(default_factory=list)
    """CRDs from the chart's crds/ directory (Helm installs them once, never upgrades them)."""
    unknown: str = ""
    """Why the objects are not known ("" when they are)."""
    defaults: dict[str, Any] | None = None
    raw_values: dict[str, Any] | None = None
    """The chart's coalesced defaults and own values.yaml, when the chart was loaded."""
    chart_name: str = ""
    """The name in the chart's Chart.yaml (what a Helm release record names), when loaded."""
    identity: str = ""
    """Chart source, version, values and manifests as one string ("" when not comparable):
    two sides with the same identity install the same objects, whatever the chart holds."""


def worst(verdicts: Iterable[str]) -> str:
    out = SAFE
    for v in verdicts:
        if SEVERITY[v] > SEVERITY[out]:
            out = v
    return out
