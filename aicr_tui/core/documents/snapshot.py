"""The Snapshot document: measurements of a cluster, in the upstream format.

``kind: Snapshot``; ``apiVersion: aicr.run/v1`` is written; ``aicr.run/v1`` and
``aicr.run/v1alpha2`` (and an empty value, for old files) are accepted on read.
Measurements are ``{type, subtypes: [{subtype, data, context?, items?}]}``. Unknown
fields at every level are kept so a snapshot from a newer tool survives a round trip.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aicr_tui.core import __version__
from aicr_tui.core.foundation.errors import invalid, not_found, validate_document
from aicr_tui.core.foundation.fileio import atomic_write_text, read_document
from aicr_tui.core.foundation.yamlio import (
    dump_json,
    dump_yaml,
    load_yaml_plain,
    sort_keys_deep,
    to_plain,
    without_lone_surrogates,
)

SNAPSHOT_KIND = "Snapshot"
SNAPSHOT_API_VERSION = "aicr.run/v1"
ACCEPTED_API_VERSIONS = ("aicr.run/v1", "aicr.run/v1alpha2", "")
MEASUREMENT_TYPES = ("K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology")

Scalar = str | int | float | bool


def _scalarise(value: Any) -> Scalar:
    if isinstance(value, bool | int | float | str):
        return value
    if value is None:
        return ""
    return (
        json.dumps(to_plain(value), sort_keys=True)
        if isinstance(value, dict | list)
        else str(value)
    )


def _mapping(value: Any) -> dict[Any, Any]:
    # pydantic only turns ValueError into a validation error; dict() of a list or a number
    # would raise TypeError and escape as a crash.
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping, got {type(value).__name__}")
    return value


class Item(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    context: dict[str, str] | None = None
    data: dict[str, Scalar] | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _data(cls, v: Any) -> Any:
        return None if v is None else {str(k): _scalarise(x) for k, x in _mapping(v).items()}

    @field_validator("context", mode="before")
    @classmethod
    def _ctx(cls, v: Any) -> Any:
        return None if v is None else {str(k): str(x) for k, x in _mapping(v).items()}


class Subtype(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    subtype: str
    data: dict[str, Scalar] = Field(default_factory=dict)
    context: dict[str, str] | None = None
    items: list[Item] | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _data(cls, v: Any) -> Any:
        return {} if v is None else {str(k): _scalarise(x) for k, x in _mapping(v).items()}

    @field_validator("context", mode="before")
    @classmethod
    def _ctx(cls, v: Any) -> Any:
        return None if v is None else {str(k): str(x) for k, x in _mapping(v).items()}


class Measurement(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    type: str
    subtypes: list[Subtype] = Field(default_factory=list)

    @field_validator("subtypes", mode="before")
    @classmethod
    def _subtypes(cls, v: Any) -> Any:
        return [] if v is None else v


class Snapshot(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)
    kind: str = SNAPSHOT_KIND
    apiVersion: str = SNAPSHOT_API_VERSION
    metadata: dict[str, str] = Field(default_factory=dict)
    measurements: list[Measurement] = Field(default_factory=list)

    @field_validator("metadata", mode="before")
    @classmethod
    def _meta(cls, v: Any) -> Any:
        return {} if v is None else {str(k): str(x) for k, x in _mapping(v).items()}

    # -- look-ups ---------------------------------------------------------------------
    def measurement(self, mtype: str) -> Measurement | None:
        """The first measurement of ``mtype`` (consumers always take the first)."""
        return next((m for m in self.measurements if m.type == mtype), None)

    def subtype(self, mtype: str, name: str) -> Subtype | None:
        m = self.measurement(mtype)
        if m is None:
            return None
        return next((s for s in m.subtypes if s.subtype == name), None)

    def reading_or_none(self, mtype: str, subtype: str, key: str) -> Scalar | None:
        """The value at ``{mtype}.{subtype}.{key}``, or None when any part is absent (a
        reading is never null). The one lookup for callers that treat absence as unknown."""
        s = self.subtype(mtype, subtype)
        return None if s is None else s.data.get(key)

    def reading(self, mtype: str, subtype: str, key: str) -> Scalar:
        """The value at ``{mtype}.{subtype}.{key}``; NOT_FOUND names what was missing."""
        m = self.measurement(mtype)
        if m is None:
            raise not_found("measurement type not found in snapshot", f"type {mtype}")
        s = next((x for x in m.subtypes if x.subtype == subtype), None)
        if s is None:
            raise not_found("subtype not found in measurement", f"{mtype}.{subtype}")
        if key not in s.data:
            raise not_found("key not found in subtype", f"{mtype}.{subtype}.{key}")
        return s.data[key]

    # -- edits -------------------------------------------------------------------------
    def attach(self, mtype: str, subtype: Subtype, *, replace: bool = True) -> None:
        """Attach ``subtype`` to the first ``mtype`` measurement, creating it when absent.

        Product decision (upstream unconfirmed, so configurable): by default a subtype of
        the same name is replaced, so a recapture never leaves two readings where consumers
        would only see the first; ``replace=False`` appends as a plain merge would.
        """
        m = self.measurement(mtype)
        if m is None:
            self.measurements.append(Measurement(type=mtype, subtypes=[subtype]))
            return
        if replace:
            for i, existing in enumerate(m.subtypes):
                if existing.subtype == subtype.subtype:
                    m.subtypes[i] = subtype
                    return
        m.subtypes.append(subtype)

    def to_document(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json", exclude_none=True)
        doc.pop("apiVersion")
        ordered: dict[str, Any] = {
            "kind": doc.pop("kind"),
            "apiVersion": SNAPSHOT_API_VERSION,
            "metadata": sort_keys_deep(doc.pop("metadata")),
            "measurements": [
                {
                    "type": m["type"],
                    "subtypes": [
                        {"subtype": s.pop("subtype"), **sort_keys_deep(s)} for s in m["subtypes"]
                    ],
                    **{k: v for k, v in m.items() if k not in ("type", "subtypes")},
                }
                for m in doc.pop("measurements")
            ],
        }
        ordered.update(doc)
        return ordered


def new_snapshot(source_node: str = "") -> Snapshot:
    return Snapshot(
        metadata={
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "version": f"aicr-tui/{__version__}",
            "source-node": source_node,
        }
    )


def _load_document(text: str, source: str) -> Any:
    """JSON when the text is JSON (YAML readers refuse some characters JSON allows), else YAML."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return without_lone_surrogates(json.loads(text, object_pairs_hook=_unique_keys))
        except _DuplicateKey as exc:
            raise invalid(f'snapshot file "{source}" is not valid JSON', str(exc)) from exc
        except (ValueError, RecursionError):
            pass  # flow-style YAML also starts with a bracket; let the YAML reader judge it
    return load_yaml_plain(text, f'snapshot file "{source}"')


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f'duplicate key "{key}"')
        out[key] = value
    return out


def parse_snapshot(text: str, source: str) -> Snapshot:
    """Parse and gate a snapshot document (YAML or JSON)."""
    try:
        return _parse_snapshot(text, source)
    except RecursionError as exc:
        raise invalid(f'snapshot file "{source}" is nested too deeply to be a snapshot') from exc


def _parse_snapshot(text: str, source: str) -> Snapshot:
    raw = _load_document(text, source)
    if not isinstance(raw, dict):
        raise invalid(
            f'file "{source}" is not a snapshot: expected a mapping with kind, apiVersion and measurements'
        )
    kind = raw.get("kind") or ""
    if kind and kind != SNAPSHOT_KIND:
        raise invalid(
            f'file "{source}" has kind "{kind}", but a "Snapshot" is required; '
            "capture one with `aicr-tui snapshot`"
        )
    api = raw.get("apiVersion") or ""
    if api not in ACCEPTED_API_VERSIONS:
        raise invalid(
            f'snapshot file "{source}" has apiVersion "{api}", which this build does not support '
            f'(expected "{SNAPSHOT_API_VERSION}" or "aicr.run/v1alpha2"); recapture the snapshot'
        )
    measurements = raw.get("measurements")
    usable = [
        m
        for m in (measurements if isinstance(measurements, list) else [])
        if isinstance(m, dict) and isinstance(m.get("type"), str) and m.get("type")
    ]
    if not usable:
        raise invalid(
            f'file "{source}" contains no usable measurements and is not a valid snapshot; '
            "recapture it with `aicr-tui snapshot`"
        )
    raw = dict(raw)
    raw["measurements"] = usable
    raw["kind"] = SNAPSHOT_KIND
    raw["apiVersion"] = api or SNAPSHOT_API_VERSION
    return validate_document(Snapshot, raw, f'snapshot file "{source}"')


def load_snapshot(path: str) -> Snapshot:
    return parse_snapshot(read_document(path, "snapshot"), path)


def render_snapshot(snapshot: Snapshot, fmt: str = "yaml") -> str:
    doc = snapshot.to_document()
    if fmt == "json":
        return dump_json(doc)
    if fmt == "yaml":
        return dump_yaml(doc)
    raise invalid(f'--format "{fmt}" is not supported; expected yaml or json')


def save_snapshot(snapshot: Snapshot, path: str, fmt: str = "yaml") -> None:
    atomic_write_text(path, render_snapshot(snapshot, fmt))
