"""Offline capture: provider dumps on disk projected into a Snapshot.

The CLI (``aicr-tui snapshot``) and the wizard's capture screen both call
:func:`capture_offline`. Every projection runs before anything else is touched, so a bad
dump fails in milliseconds with exit 2 and nothing written; the readings are then
attached to the first K8s measurement of the base snapshot (created when absent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aicr_tui.core.capture.aks_pools import AksPoolsProjection, load_aks_pools
from aicr_tui.core.capture.oke_addons import OkeAddonsProjection, load_oke_addons
from aicr_tui.core.capture.oke_legacy import LegacyPluginProjection, load_legacy_daemonset
from aicr_tui.core.documents.snapshot import Snapshot, new_snapshot

if TYPE_CHECKING:
    import threading

Projection = AksPoolsProjection | OkeAddonsProjection | LegacyPluginProjection


@dataclass(frozen=True)
class Projections:
    """The projections that ran, for screens that list pools, add-ons and their modes."""

    aks_pools: AksPoolsProjection | None = None
    oke_addons: OkeAddonsProjection | None = None
    legacy_plugin: LegacyPluginProjection | None = None

    def all(self) -> list[Projection]:
        found: list[Projection | None] = [self.aks_pools, self.oke_addons, self.legacy_plugin]
        return [p for p in found if p is not None]


@dataclass(frozen=True)
class CaptureResult:
    snapshot: Snapshot
    projections: Projections
    warnings: list[str] = field(default_factory=list)


def project_dumps(
    *,
    aks_pools: str | None = None,
    oke_addons: str | None = None,
    legacy_daemonset: str | None = None,
    cancel: threading.Event | None = None,
) -> Projections:
    """Run every requested projection; the first bad dump raises (exit 2).

    ``cancel`` (set by the wizard's worker) stops a read with a TIMEOUT error (exit 5).
    """
    return Projections(
        aks_pools=load_aks_pools(aks_pools, cancel=cancel) if aks_pools else None,
        oke_addons=load_oke_addons(oke_addons, cancel=cancel) if oke_addons else None,
        legacy_plugin=(
            load_legacy_daemonset(legacy_daemonset, cancel=cancel) if legacy_daemonset else None
        ),
    )


def attach_projections(snapshot: Snapshot, projections: Projections) -> CaptureResult:
    """Attach each projection's subtype to the snapshot's first K8s measurement."""
    for projection in projections.all():
        snapshot.attach("K8s", projection.subtype)
    warnings = list(projections.oke_addons.warnings) if projections.oke_addons else []
    return CaptureResult(snapshot=snapshot, projections=projections, warnings=warnings)


def capture_offline(
    *,
    aks_pools: str | None = None,
    oke_addons: str | None = None,
    legacy_daemonset: str | None = None,
    base: Snapshot | None = None,
    cancel: threading.Event | None = None,
) -> CaptureResult:
    """Project the given dumps and attach them to ``base`` (a copy) or a fresh snapshot."""
    projections = project_dumps(
        aks_pools=aks_pools,
        oke_addons=oke_addons,
        legacy_daemonset=legacy_daemonset,
        cancel=cancel,
    )
    snapshot = base.model_copy(deep=True) if base is not None else new_snapshot()
    return attach_projections(snapshot, projections)
