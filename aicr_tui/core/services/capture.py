"""The capture the user is working on, and the selection qualified against it.

The CLI (``aicr-tui recipe --snapshot``) and the wizard make the same calls here, so they
cannot disagree about which file is what, what a capture holds, which criteria the capture
fills in, or what the verdict is:

- :func:`recognise_kind` tells a file's kind from its content (never its name).
- :func:`open_capture_file` decides how an opened file changes the current capture: a
  snapshot replaces it; a provider dump for the capture's own service is added to it, one
  for another service (or with nothing loaded) starts a new capture.
- :func:`load_capture` builds the snapshot from the capture's files.
- :func:`qualify_selection` derives the criteria the user left open from the snapshot
  (the user's choices always win), qualifies, and retries once without a derived
  dimension no overlay covers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import read_document

if TYPE_CHECKING:
    import threading

    from aicr_tui.core.capture.capture import CaptureResult
    from aicr_tui.core.documents.criteria import Criteria
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.recipe.qualification import QualificationVerdict

SNAPSHOT = "snapshot"
AKS_POOLS = "aks_pools"
OKE_ADDONS = "oke_addons"
LEGACY_DAEMONSET = "legacy_daemonset"
DUMP_KINDS: tuple[str, ...] = (AKS_POOLS, OKE_ADDONS, LEGACY_DAEMONSET)
KINDS: tuple[str, ...] = (SNAPSHOT, *DUMP_KINDS)

KIND_LABELS: dict[str, str] = {
    SNAPSHOT: "snapshot",
    AKS_POOLS: "AKS node pools (az aks nodepool list)",
    OKE_ADDONS: "OKE add-ons (oci ce cluster list-addons)",
    LEGACY_DAEMONSET: "OKE legacy DaemonSet (kubectl get daemonsets)",
}
KIND_SERVICE: dict[str, str] = {AKS_POOLS: "aks", OKE_ADDONS: "oke", LEGACY_DAEMONSET: "oke"}

# Criteria a snapshot can name: the fingerprint's service, accelerator and OS.
CRITERIA_FIELDS: tuple[str, ...] = ("service", "accelerator", "os", "intent", "platform")

_UNRECOGNISED = (
    "expected a snapshot (kind: Snapshot), the JSON array of `az aks nodepool list -o json`, "
    "the JSON object of `oci ce cluster list-addons --all --output json` or the List of "
    "`kubectl get daemonsets -n kube-system -o json`"
)


# --------------------------------------------------------------------------- recognition
def _fold(mapping: Mapping[Any, Any]) -> dict[str, Any]:
    """Keys case-folded, as Go's encoding/json matches struct fields."""
    return {str(k).casefold(): v for k, v in mapping.items()}


def recognise_kind(text: str, source: str) -> str:
    """The capture kind of a file's content: one of :data:`KINDS`; raises when it is none."""
    stripped = text.lstrip()
    document: Any = None
    if stripped[:1] in ("{", "["):
        try:
            document = json.loads(stripped)
        except (ValueError, RecursionError):
            document = None
    if isinstance(document, list):
        if all(isinstance(p, dict) for p in document):
            return AKS_POOLS
        raise invalid(
            f'cannot tell what "{source}" holds: a JSON array of non-objects; {_UNRECOGNISED}'
        )
    if isinstance(document, dict):
        folded = _fold(document)
        kind = str(folded.get("kind") or "")
        if kind == "Snapshot" or "measurements" in folded:
            return SNAPSHOT
        if kind in ("List", "DaemonSetList", "DaemonSet") or "items" in folded:
            return LEGACY_DAEMONSET
        if "data" in folded:
            return OKE_ADDONS
        raise invalid(
            f'cannot tell what "{source}" holds: a JSON object with keys '
            f"{', '.join(sorted(folded)[:5]) or '(none)'}; {_UNRECOGNISED}"
        )
    # Not JSON: the only YAML capture is a snapshot; its parser gives the precise error.
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    try:
        loaded = load_yaml_plain(text, f'capture file "{source}"')
    except AicrError:
        loaded = None
    if isinstance(loaded, dict):
        return SNAPSHOT
    raise invalid(
        f'cannot tell what "{source}" holds: it is neither JSON nor a YAML snapshot; {_UNRECOGNISED}'
    )


def read_capture_kind(path: str) -> str:
    """Read ``path`` with the document rules and recognise its kind."""
    return recognise_kind(read_document(path, "capture"), path)


# --------------------------------------------------------------------------- the capture
@dataclass(frozen=True)
class Capture:
    """What the capture is made of: at most one file per kind."""

    files: Mapping[str, str] = field(default_factory=dict)

    def service(self, snapshot: Snapshot | None = None) -> str:
        """The service this capture is for: its dumps', else its snapshot's fingerprint."""
        for kind in DUMP_KINDS:
            if kind in self.files:
                return KIND_SERVICE[kind]
        if snapshot is not None:
            from aicr_tui.core.documents.criteria import criteria_from_snapshot

            return criteria_from_snapshot(snapshot).get("service", "")
        return ""

    def names(self) -> str:
        return " + ".join(Path(self.files[k]).name for k in KINDS if k in self.files)


@dataclass(frozen=True)
class OpenedFile:
    """How opening one file changes the capture (see :func:`open_capture_file`)."""

    kind: str
    path: str
    capture: Capture
    change: str  # "replaced" | "new" | "added"
    replaced: str = ""  # the file of the same kind the added one replaces

    def describe(self) -> str:
        """One sentence saying what was loaded and what happened to the capture."""
        name = Path(self.path).name
        what = KIND_LABELS[self.kind]
        if self.change == "added":
            instead = f", replacing {Path(self.replaced).name}" if self.replaced else ""
            return f"Loaded {name} ({what}): added to the current capture{instead}"
        if self.change == "replaced":
            return f"Loaded {name} ({what}): it replaces the previous capture"
        return f"Loaded {name} ({what}): a new capture"


def open_capture_file(
    path: str, current: Capture, current_snapshot: Snapshot | None = None
) -> OpenedFile:
    """Recognise ``path`` and say what the capture becomes.

    A snapshot replaces the capture. A provider dump for the same service as the current
    capture is added to it (replacing a dump of its own kind); otherwise it starts a new
    capture of its own.
    """
    kind = read_capture_kind(path)
    if kind == SNAPSHOT:
        change = "replaced" if current.files else "new"
        return OpenedFile(kind, path, Capture({SNAPSHOT: path}), change)
    if current.files and current.service(current_snapshot) == KIND_SERVICE[kind]:
        files = dict(current.files)
        replaced = files.get(kind, "")
        files[kind] = path
        return OpenedFile(kind, path, Capture(files), "added", replaced)
    return OpenedFile(kind, path, Capture({kind: path}), "new")


def load_capture(capture: Capture, *, cancel: threading.Event | None = None) -> CaptureResult:
    """The snapshot of the capture's files: its dumps attached to its snapshot (or a new one)."""
    # The projections are imported here, not with the module: `recipe` never needs them.
    from aicr_tui.core.capture.capture import CaptureResult, Projections, capture_offline
    from aicr_tui.core.documents.snapshot import load_snapshot

    files = capture.files
    if not files:
        raise invalid("the capture is empty: open a snapshot or a provider dump")
    base = load_snapshot(files[SNAPSHOT]) if files.get(SNAPSHOT) else None
    if any(files.get(k) for k in DUMP_KINDS):
        return capture_offline(
            aks_pools=files.get(AKS_POOLS),
            oke_addons=files.get(OKE_ADDONS),
            legacy_daemonset=files.get(LEGACY_DAEMONSET),
            base=base,
            cancel=cancel,
        )
    assert base is not None
    return CaptureResult(snapshot=base, projections=Projections(), warnings=[])


# --------------------------------------------------------------------------- qualification
def derive_criteria(
    snapshot: Snapshot | None, given: Mapping[str, str | None]
) -> tuple[dict[str, str | None], tuple[str, ...]]:
    """The criteria with the dimensions the user left open filled from the snapshot's
    fingerprint (service, accelerator, OS; never intent or platform). Returns the criteria
    and the names of the dimensions that came from the snapshot."""
    out: dict[str, str | None] = {f: given.get(f) or None for f in CRITERIA_FIELDS}
    derived: list[str] = []
    if snapshot is not None:
        from aicr_tui.core.documents.criteria import criteria_from_snapshot

        for dim, value in criteria_from_snapshot(snapshot).items():
            if not out.get(dim):
                out[dim] = value
                derived.append(dim)
    return out, tuple(derived)


@dataclass(frozen=True)
class SelectionVerdict:
    """A qualification and how its criteria were made."""

    verdict: QualificationVerdict
    criteria: Criteria
    derived: tuple[str, ...] = ()  # dimensions filled from the snapshot
    relaxed: tuple[str, ...] = ()  # derived dimensions dropped because no overlay covers them
    notes: tuple[str, ...] = ()  # what happened, for -v and the wizard's capture line


def qualify_selection(
    given: Mapping[str, str | None],
    profile: str | None,
    snapshot: Snapshot | None,
    *,
    nodes: object = None,
    catalog: Catalog | None = None,
    capture_warnings: Sequence[str] = (),
) -> SelectionVerdict:
    """Qualify the user's selection against ``snapshot``.

    ``given`` holds what the user chose (empty values are open); open service, accelerator
    and OS come from the snapshot. When no overlay covers a derived dimension (and none was
    excluded by a constraint) it is dropped once and the resolution retried; a dimension the
    user stated is never dropped. Raises only for criteria values that do not parse.
    """
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.qualification import qualify
    from aicr_tui.core.recipe.resolver import CoverageError

    cat = catalog if catalog is not None else load_catalog()
    values, derived = derive_criteria(snapshot, given)
    notes: list[str] = []
    if derived:
        notes.append(
            "criteria from the snapshot: "
            + ", ".join(f"{d}={values[d]}" for d in derived)
            + " (a stated value wins)"
        )
    criteria = parse_criteria(**values, nodes=nodes, registered=cat.registered)
    warnings = list(capture_warnings)
    verdict = qualify(criteria, profile, snapshot, catalog=cat, capture_warnings=warnings)
    relaxed: tuple[str, ...] = ()
    err = verdict.error
    if isinstance(err, CoverageError) and not verdict.excluded_overlays:
        relax = [d for d in err.dimensions if d in derived]
        if relax and len(relax) == len(err.dimensions):
            notes.append(
                "no overlay covers "
                + ", ".join(f"{d}={criteria.value(d)}" for d in relax)
                + " from the snapshot; resolved without it"
            )
            criteria = criteria.model_copy(update={d: "any" for d in relax})
            verdict = qualify(criteria, profile, snapshot, catalog=cat, capture_warnings=warnings)
            relaxed = tuple(relax)
    if snapshot is not None:
        from aicr_tui.core.recipe.capture_match import criteria_conflicts
        from aicr_tui.core.recipe.qualification import mark_conflicts

        stated = {f: given.get(f) or None for f in CRITERIA_FIELDS}
        conflicts = criteria_conflicts(stated, snapshot)
        if conflicts:
            mark_conflicts(
                verdict, conflicts, {**stated, **{d: values[d] for d in derived}}, snapshot
            )
    return SelectionVerdict(verdict, criteria, derived, relaxed, tuple(notes))
