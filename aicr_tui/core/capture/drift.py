"""Drift between two snapshots: the readings that changed, reading by reading.

A reading is addressed as constraints address it, ``Type.subtype.key``; a reading inside a
subtype's items is ``Type.subtype.items[N].key`` (items compare by position, as captured).
Only the first measurement of a type and the first subtype of a name count, as every
consumer of a snapshot reads them. A subtype that one side does not hold at all was not
measured there (a ``--no-cluster`` capture, a capture without the pool dump): its readings
are listed as ``unmeasured`` and are not drift, because nothing says they changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aicr_tui.core.documents.snapshot import Scalar, Snapshot, Subtype

CHANGED = "changed"
ADDED = "added"
REMOVED = "removed"
UNMEASURED = "unmeasured"


@dataclass(frozen=True)
class ReadingChange:
    """One reading that differs: its path, the old and new values (None: absent)."""

    path: str
    old: str | None
    new: str | None
    change: str  # changed | added | removed | unmeasured


@dataclass
class SnapshotComparison:
    changes: list[ReadingChange] = field(default_factory=list)
    unmeasured: list[ReadingChange] = field(default_factory=list)


def reading_text(value: Scalar) -> str:
    """A reading as the snapshot document writes it (booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _subtypes(snapshot: Snapshot) -> dict[tuple[str, str], Subtype]:
    out: dict[tuple[str, str], Subtype] = {}
    for m in snapshot.measurements:
        for s in m.subtypes:
            out.setdefault((m.type, s.subtype), s)
    return out


def _readings(mtype: str, sub: Subtype) -> Iterator[tuple[str, Scalar]]:
    prefix = f"{mtype}.{sub.subtype}"
    for key, value in sub.data.items():
        yield f"{prefix}.{key}", value
    for index, item in enumerate(sub.items or ()):
        for key, value in (item.data or {}).items():
            yield f"{prefix}.items[{index}].{key}", value


def compare_snapshots(old: Snapshot, new: Snapshot) -> SnapshotComparison:
    """The readings of ``new`` that differ from ``old``, in the order the documents hold them."""
    out = SnapshotComparison()
    before, after = _subtypes(old), _subtypes(new)
    seen: set[tuple[str, str]] = set()
    for key in [*before, *after]:
        if key in seen:
            continue
        seen.add(key)
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            present = a if a is not None else b
            assert present is not None
            for path, value in _readings(key[0], present):
                text = reading_text(value)
                out.unmeasured.append(
                    ReadingChange(
                        path,
                        text if a is not None else None,
                        text if b is not None else None,
                        UNMEASURED,
                    )
                )
            continue
        old_values = dict(_readings(key[0], a))
        new_values = dict(_readings(key[0], b))
        for path in [*old_values, *(p for p in new_values if p not in old_values)]:
            if path not in new_values:
                out.changes.append(
                    ReadingChange(path, reading_text(old_values[path]), None, REMOVED)
                )
            elif path not in old_values:
                out.changes.append(ReadingChange(path, None, reading_text(new_values[path]), ADDED))
            else:
                ov, nv = old_values[path], new_values[path]
                if ov != nv or type(ov) is not type(nv):
                    out.changes.append(
                        ReadingChange(path, reading_text(ov), reading_text(nv), CHANGED)
                    )
    return out
