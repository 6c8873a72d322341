"""Wizard state and the core calls the screens make, in one injectable place.

``WizardServices`` holds the core entry points (open/load a capture and qualify through
``aicr_tui.core.services.capture``, as the CLI does; profile diff; live capture). Every call and
every piece of state is typed with the core type it carries; those types are imported for
the type checker only and the defaults import ``core`` when first called, so starting the
wizard loads no recipe engine. Tests and ``--demo`` pass their own calls through
``create_app(services=...)``. ``WizardState`` is what the user has built so far: the
capture, the snapshot, the selection and the last verdict. Screens read and write it on
the main thread only; workers hand results back in messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aicr_tui.core.capture.capture import CaptureResult, Projections
    from aicr_tui.core.documents.criteria import Criteria
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.live import LiveCaptureResult
    from aicr_tui.core.recipe.qualification import QualificationVerdict, ValueChange
    from aicr_tui.core.services.capture import OpenedFile, SelectionVerdict

    # What a loaded capture is: offline (files) or live; both carry snapshot, projections
    # and warnings.
    LoadedCapture = CaptureResult | LiveCaptureResult
    # Criteria after derivation: every field, open ones None.
    DerivedCriteria = tuple[dict[str, str | None], tuple[str, ...]]

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = PACKAGE_ROOT / "recipes" / "samples"

CRITERIA_FIELDS: tuple[str, ...] = ("service", "accelerator", "os", "intent", "platform")
NO_PLATFORM = "any"


# --------------------------------------------------------------------------- services
def _default_open_file(path: str, files: dict[str, str], snapshot: Snapshot | None) -> OpenedFile:
    """Recognise an opened file and say what the capture becomes (aicr_tui.core.services.capture)."""
    from aicr_tui.core.services.capture import Capture, open_capture_file

    return open_capture_file(path, Capture(dict(files)), snapshot)


def _default_load_capture(files: dict[str, str]) -> CaptureResult:
    from aicr_tui.core.services.capture import Capture, load_capture

    return load_capture(Capture(dict(files)))


def _default_derive(snapshot: Snapshot | None, given: dict[str, str]) -> DerivedCriteria:
    from aicr_tui.core.services.capture import derive_criteria

    return derive_criteria(snapshot, given)


def _criteria(criteria: dict[str, str]) -> Criteria:
    from aicr_tui.core.documents.criteria import parse_criteria

    return parse_criteria(
        service=criteria.get("service"),
        accelerator=criteria.get("accelerator"),
        intent=criteria.get("intent"),
        os=criteria.get("os"),
        platform=criteria.get("platform"),
    )


def _default_qualify(
    criteria: dict[str, str],
    profile: str | None,
    snapshot: Snapshot | None,
    warnings: Sequence[str],
) -> SelectionVerdict:
    """The selection qualified through aicr_tui.core.services.capture, the call ``aicr-tui recipe``
    makes: ``criteria`` holds what the user chose; open dimensions come from the snapshot.
    The ``SelectionVerdict`` holds ``.verdict``, ``.derived``, ``.relaxed`` and ``.notes``."""
    from aicr_tui.core.services.capture import qualify_selection

    return qualify_selection(criteria, profile, snapshot, capture_warnings=warnings)


def _default_diff(criteria: dict[str, str], from_value: str, to_value: str) -> list[ValueChange]:
    from aicr_tui.core.recipe.qualification import profile_value_diff

    return profile_value_diff(_criteria(criteria), from_value, to_value)


def _default_criteria_values(field_name: str) -> list[str]:
    """The values some catalog overlay names for this field (the ones that can resolve),
    falling back to the whole upstream vocabulary when the catalog names none."""
    from aicr_tui.core.documents.criteria import valid_values
    from aicr_tui.core.recipe.catalog import load_catalog

    catalog = load_catalog()
    named = sorted(v for v in catalog.registered.get(field_name, ()) if v != "any")
    return named or list(valid_values(field_name))


def _default_live_capture(
    request: LiveRequest, cancel: threading.Event, progress: Callable[[str], None]
) -> LiveCaptureResult:
    """Live capture through aicr_tui.core.live (the same call as ``aicr-tui snapshot``'s live flags);
    every cloud SDK is imported inside aicr_tui.core.live, only when its provider is asked for."""
    from aicr_tui.core.live import capture_live

    return capture_live(
        kubeconfig=request.kubeconfig,
        context=request.context,
        aks_subscription=request.aks_subscription or None,
        aks_resource_group=request.aks_resource_group or None,
        aks_cluster=request.aks_cluster or None,
        oke_cluster_id=request.oke_cluster_id or None,
        cancel=cancel,
        progress=progress,
    )


@dataclass
class WizardServices:
    """The core calls the wizard makes; replace any of them to test a screen in isolation."""

    open_file: Callable[[str, dict[str, str], Snapshot | None], OpenedFile] = _default_open_file
    load_capture: Callable[[dict[str, str]], LoadedCapture] = _default_load_capture
    derive_criteria: Callable[[Snapshot | None, dict[str, str]], DerivedCriteria] = _default_derive
    qualify: Callable[
        [dict[str, str], str | None, Snapshot | None, Sequence[str]], SelectionVerdict
    ] = _default_qualify
    profile_value_diff: Callable[[dict[str, str], str, str], list[ValueChange]] = _default_diff
    criteria_values: Callable[[str], list[str]] = _default_criteria_values
    live_capture: Callable[[LiveRequest, threading.Event, Callable[[str], None]], LoadedCapture] = (
        _default_live_capture
    )


@dataclass(frozen=True)
class LiveRequest:
    """What the fetch-live form asks for; empty strings mean "not this provider"."""

    kubeconfig: str | None = None
    context: str | None = None
    aks_subscription: str = ""
    aks_resource_group: str = ""
    aks_cluster: str = ""
    oke_cluster_id: str = ""

    @classmethod
    def from_form(cls, values: dict[str, str]) -> LiveRequest:
        """The request the fetch-live form's answers describe (blank fields: not given)."""
        return cls(
            kubeconfig=values.get("kubeconfig") or None,
            context=values.get("context") or None,
            aks_subscription=values.get("aks_subscription", ""),
            aks_resource_group=values.get("aks_resource_group", ""),
            aks_cluster=values.get("aks_cluster", ""),
            oke_cluster_id=values.get("oke_cluster_id", ""),
        )


# --------------------------------------------------------------------------- demo samples
@dataclass(frozen=True)
class DemoSample:
    """One shipped capture set: provider dumps plus the base snapshot they complete."""

    key: str
    title: str
    service: str
    criteria: dict[str, str]
    base_snapshot: str | None = None
    aks_pools: str | None = None
    oke_addons: str | None = None
    legacy_daemonset: str | None = None
    note: str = ""

    def files(self) -> list[str]:
        return [f for f in (self.aks_pools, self.oke_addons, self.legacy_daemonset) if f]

    def missing(self) -> list[str]:
        paths = [*self.files(), *([self.base_snapshot] if self.base_snapshot else [])]
        return [p for p in paths if not Path(p).is_file()]


AKS_CRITERIA = {
    "service": "aks",
    "accelerator": "h100",
    "os": "ubuntu",
    "intent": "training",
    "platform": NO_PLATFORM,
}
OKE_CRITERIA = {
    "service": "oke",
    "accelerator": "gb200",
    "os": "ol",
    "intent": "training",
    "platform": NO_PLATFORM,
}


def demo_samples(samples_dir: Path = SAMPLES_DIR) -> list[DemoSample]:
    """The demo's capture list, in the order a newcomer should walk it."""
    cap = samples_dir / "captures"
    snap = samples_dir / "snapshots"

    def c(name: str) -> str:
        return str(cap / name)

    def s(name: str) -> str:
        return str(snap / name)

    legacy_none = c("oke-legacy-daemonsets-none.json")
    return [
        DemoSample(
            "aks-install",
            "AKS: pools all Install (AKS driver)",
            "aks",
            AKS_CRITERIA,
            s("aks-h100-no-pools.yaml"),
            aks_pools=c("aks-pools-install.json"),
        ),
        DemoSample(
            "aks-none",
            "AKS: pools all None (--gpu-driver none)",
            "aks",
            AKS_CRITERIA,
            s("aks-h100-no-pools.yaml"),
            aks_pools=c("aks-pools-none.json"),
        ),
        DemoSample(
            "aks-mixed",
            "AKS: pools Mixed",
            "aks",
            AKS_CRITERIA,
            s("aks-h100-no-pools.yaml"),
            aks_pools=c("aks-pools-mixed.json"),
        ),
        DemoSample(
            "aks-managed",
            "AKS: AKS-managed GPU pools",
            "aks",
            AKS_CRITERIA,
            s("aks-h100-no-pools.yaml"),
            aks_pools=c("aks-pools-managed.json"),
        ),
        DemoSample(
            "aks-no-reading",
            "AKS: no pool reading",
            "aks",
            AKS_CRITERIA,
            s("aks-h100-no-pools.yaml"),
        ),
        DemoSample(
            "oke-active",
            "OKE: add-on ACTIVE",
            "oke",
            OKE_CRITERIA,
            s("oke-gb200-active.yaml"),
            oke_addons=c("oke-addons-active.json"),
            legacy_daemonset=legacy_none,
        ),
        DemoSample(
            "oke-absent",
            "OKE: add-on absent",
            "oke",
            OKE_CRITERIA,
            s("oke-gb200-absent.yaml"),
            oke_addons=c("oke-addons-absent.json"),
            legacy_daemonset=legacy_none,
        ),
        DemoSample(
            "oke-deleting",
            "OKE: add-on DELETING",
            "oke",
            OKE_CRITERIA,
            s("oke-gb200-deleting.yaml"),
            oke_addons=c("oke-addons-deleting.json"),
            legacy_daemonset=legacy_none,
        ),
        DemoSample(
            "oke-legacy-active",
            "OKE: absent, legacy plugin active",
            "oke",
            OKE_CRITERIA,
            s("oke-gb200-absent-legacy-active.yaml"),
            oke_addons=c("oke-addons-absent.json"),
            legacy_daemonset=c("oke-legacy-daemonset-active.json"),
        ),
    ]


def demo_recordings(samples_dir: Path = SAMPLES_DIR) -> list[Path]:
    """Recorded validation runs shipped for the demo (JSONL event streams)."""
    folder = samples_dir / "validation"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


# --------------------------------------------------------------------------- capture view
@dataclass(frozen=True)
class CaptureRow:
    """One pool, add-on or DaemonSet line on the capture screen."""

    source: str
    name: str
    detail: str
    mode: str


def capture_rows(projections: Projections | None) -> list[CaptureRow]:
    """Flatten the capture projections (AKS pools, OKE add-ons, legacy plugin) into rows."""
    if projections is None:
        return []
    rows: list[CaptureRow] = []
    aks = projections.aks_pools
    if aks is not None:
        source = Path(aks.source).name or "AKS pools"
        for p in aks.pools:
            mode = p.mode if p.is_gpu and p.mode is not None else "(not a GPU pool)"
            rows.append(CaptureRow(source, p.name, p.vm_size, mode))
    oke = projections.oke_addons
    if oke is not None:
        # One row per add-on; the GPU plugin's row carries the reading, next to its
        # lifecycle state (both in the column that stays visible at 80x24).
        source = Path(oke.source).name or "OKE add-ons"
        reading = str(oke.subtype.data.get("nvidia-gpu-plugin", ""))
        plugin_seen = False
        for a in oke.addons:
            mode = f"({a.lifecycle_state})"
            if a.name.casefold() == "nvidiagpuplugin" and not plugin_seen:
                plugin_seen = True
                mode = reading or mode  # installed / addon-<state> names the state
            rows.append(CaptureRow(source, a.name, a.lifecycle_state, mode))
        if not plugin_seen:
            rows.append(CaptureRow(source, "NvidiaGpuPlugin", "not listed", reading))
    legacy = projections.legacy_plugin
    if legacy is not None and legacy.subtype.subtype == "oke-legacy-plugin":
        data = legacy.subtype.data
        rows.append(
            CaptureRow(
                Path(legacy.source or "").name or "legacy DaemonSet",
                "nvidia-gpu-device-plugin",  # kube-system; short, so modes stay visible
                str(data.get("daemonset", "")),
                str(data.get("nvidia-gpu-device-plugin", "")),
            )
        )
    return rows


def capture_warnings(projections: Projections | None) -> list[str]:
    """What the projections warned about (the OKE add-on listing is the one that does)."""
    if projections is None or projections.oke_addons is None:
        return []
    return list(projections.oke_addons.warnings)


def pool_vm_sizes(projections: Projections | None) -> list[str]:
    aks = projections.aks_pools if projections is not None else None
    return [p.vm_size for p in aks.gpu_pools] if aks is not None else []


def snapshot_readings(snapshot: Snapshot | None) -> list[tuple[str, str]]:
    """Every ``Type.subtype.key = value`` reading of a snapshot, in document order."""
    if snapshot is None:
        return []
    rows: list[tuple[str, str]] = []
    for m in snapshot.measurements:
        for s in m.subtypes:
            for key, value in s.data.items():
                rows.append((f"{m.type}.{s.subtype}.{key}", str(value)))
    return rows


# --------------------------------------------------------------------------- verdict view
@dataclass(frozen=True)
class CheckView:
    name: str
    expected: str
    actual: str
    status: str
    source: str
    remedy: str


def verdict_checks(verdict: QualificationVerdict | None) -> list[CheckView]:
    """The verdict's constraint checks as the recipe screen lists them (none without one)."""
    checks = verdict.checks if verdict is not None else []
    return [
        CheckView(
            name=c.name,
            expected=c.expected,
            actual=c.actual or "(no reading)",
            status=c.status.value,
            source=c.source,
            remedy=c.remedy,
        )
        for c in checks
    ]


def verdict_error_text(verdict: QualificationVerdict | None) -> str:
    if verdict is None or verdict.error is None:
        return ""
    return verdict.error.render()


def default_reports_dir() -> Path:
    """Where the dashboard offers to save CTRF/JUnit reports: ``$AICR_TUI_REPORTS_DIR``,
    else the user's state directory as platformdirs names it (``$XDG_STATE_HOME/aicr-tui/
    reports``, ``~/.local/state/aicr-tui/reports`` on Linux; the system's temporary
    directory when there is no home); never the directory the wizard was started in
    (often a checkout)."""
    import os
    import tempfile

    from aicr_tui.core.foundation.cachedir import APP_NAME, user_state_dir

    explicit = os.environ.get("AICR_TUI_REPORTS_DIR")
    if explicit:
        return Path(explicit)
    state = user_state_dir() or os.path.join(tempfile.gettempdir(), APP_NAME)
    return Path(state) / "reports"


@dataclass
class WizardState:
    """What the user has built so far; main-thread only."""

    demo: bool = False
    samples: list[DemoSample] = field(default_factory=list)
    recordings: list[Path] = field(default_factory=list)
    sample_key: str | None = None
    capture: LoadedCapture | None = None
    capture_seq: int = 0  # bumped on every capture load, so screens know it changed
    snapshot: Snapshot | None = None
    capture_label: str = ""
    capture_files: dict[str, str] = field(default_factory=dict)
    capture_note: str = ""  # what the last opened file did to the capture
    last_opened: str = ""  # that file, for "start a new capture with only this file"
    last_change: str = ""  # "new" | "replaced" | "added"
    criteria: dict[str, str] = field(default_factory=lambda: dict(AKS_CRITERIA))
    user_criteria: set[str] = field(default_factory=set)  # fields the user chose: they win
    derived: tuple[str, ...] = ()  # fields filled from the capture's snapshot
    criteria_notes: tuple[str, ...] = ()  # what the last qualification derived or dropped
    profile_value: str | None = None
    choices: dict[str, list[str]] = field(default_factory=dict)
    verdict: QualificationVerdict | None = None
    recipe: RecipeResult | None = None
    last_error: str = ""
    kubeconfig: str | None = None
    kube_context: str | None = None
    output_dir: Path = field(default_factory=Path.cwd)
    reports_dir: Path = field(default_factory=lambda: default_reports_dir())
    bundle_dir: Path | None = None
    deployer: str = "helm"  # the bundle step's layout, kept across visits
    replay_speed: float | None = None  # None: the default pace (a replay lasts seconds)

    @property
    def rows(self) -> list[CaptureRow]:
        return capture_rows(self.projections)

    @property
    def warnings(self) -> list[str]:
        return capture_warnings(self.projections)

    @property
    def projections(self) -> Projections | None:
        return self.capture.projections if self.capture is not None else None

    def recapture_commands(self) -> Sequence[str]:
        from aicr_tui.core.recipe.troubleshooting import (
            AKS_POOLS_DUMP,
            AKS_RECAPTURE,
            OKE_ADDONS_DUMP,
            OKE_LEGACY_DUMP,
            OKE_RECAPTURE,
        )

        if self.criteria.get("service") == "oke":
            return (
                OKE_ADDONS_DUMP,
                OKE_LEGACY_DUMP,
                OKE_RECAPTURE + " --oke-legacy-daemonset legacy.json",
            )
        return (AKS_POOLS_DUMP, AKS_RECAPTURE)
