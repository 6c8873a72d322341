"""Go ``encoding/json`` compatible decoding of provider dumps.

Provider dumps are decoded upstream by Go's encoding/json into small structs. The
readings must match byte for byte, so the rules that follow from that decoder are kept
here: keys match field tags case-insensitively, duplicate keys are applied in order
(the last wins, a JSON null resets pointers and slices but leaves strings alone, a
second object merges into the first), a known field of the wrong JSON type is an error,
unknown fields of any type are ignored, and trailing data after the value is an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.tree import KindNames, kind_name


class JsonPairs(list[tuple[str, Any]]):
    """A JSON object with its key order and duplicate keys kept."""


class JsonNumber(str):
    """A JSON number kept as its literal text (it is only ever type-checked, never used)."""


class GoDecodeError(ValueError):
    """The input does not decode into the Go struct it is meant for."""


def _reject_constant(name: str) -> Any:
    raise GoDecodeError(f"invalid character in JSON: {name} is not a JSON value")


_LONE_SURROGATE = LazyPattern("[\ud800-\udfff]")
_SURROGATE_ESCAPE = LazyPattern(r"\\u[dD][89abcdefABCDEF]")


def _clean_text(text: str) -> str:
    # Go replaces an escaped lone surrogate with U+FFFD; Python would keep it, and it
    # could never be written back out as UTF-8.
    return _LONE_SURROGATE.sub("\ufffd", text)


def _clean(value: Any) -> Any:
    if isinstance(value, JsonNumber):
        return value
    if isinstance(value, str):
        return _clean_text(value)
    if isinstance(value, JsonPairs):
        return JsonPairs((_clean_text(k), _clean(v)) for k, v in value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def load_json_pairs(raw: bytes) -> Any:
    """Parse JSON bytes the way Go's scanner accepts them, keeping duplicate keys.

    Objects become :class:`JsonPairs`, numbers :class:`JsonNumber`. Invalid UTF-8 inside
    strings becomes U+FFFD as in Go. Raises :class:`GoDecodeError` with a short reason.
    """
    text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(
            text,
            object_pairs_hook=JsonPairs,
            parse_int=JsonNumber,
            parse_float=JsonNumber,
            parse_constant=_reject_constant,
        )
    except GoDecodeError:
        raise
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise GoDecodeError("unexpected end of JSON input") from exc
        raise GoDecodeError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise GoDecodeError(_TOO_DEEP) from exc
    if not _SURROGATE_ESCAPE.search(text):
        return value  # no escaped surrogate, nothing to clean
    try:
        return _clean(value)
    except RecursionError as exc:
        raise GoDecodeError(_TOO_DEEP) from exc


_TOO_DEEP = "JSON nesting is deeper than this reader supports"
# JSON's own words for what load_json_pairs returns; JsonNumber before str, JsonPairs
# before list (each subclasses the other).
_JSON_KINDS: KindNames = (
    (bool, "bool"),
    (JsonNumber, "number"),
    (str, "string"),
    (JsonPairs, "object"),
    (list, "array"),
)


def pairs_to_plain(value: Any) -> Any:
    """Turn :func:`load_json_pairs` output into plain values (duplicate keys: last wins)."""
    try:
        return _pairs_to_plain(value)
    except RecursionError as exc:
        raise GoDecodeError(_TOO_DEEP) from exc


def _pairs_to_plain(value: Any) -> Any:
    if isinstance(value, JsonNumber):
        text = str(value)
        if any(c in text for c in ".eE"):
            return float(text)
        return int(text) if len(text) <= 4000 else float(text)
    if isinstance(value, JsonPairs):
        return {k: _pairs_to_plain(v) for k, v in value}
    if isinstance(value, list):
        return [_pairs_to_plain(v) for v in value]
    return value


def json_kind(value: Any) -> str:
    """The JSON type name of a decoded value, for error messages."""
    return kind_name(value, _JSON_KINDS)


def go_fold(text: str) -> str:
    """Fold ``text`` for Go's case-insensitive key and EqualFold comparisons."""
    out = []
    for ch in text:
        up = ch.upper()
        out.append(up.lower() if len(up) == 1 else ch.lower())
    return "".join(out)


def go_equal_fold(a: str, b: str) -> bool:
    return go_fold(a) == go_fold(b)


def go_lower(text: str) -> str:
    """Go's strings.ToLower: simple per-rune mapping, so U+0130 lowers to a plain ``i``."""
    return text.replace("\u0130", "i").lower()


@dataclass(frozen=True)
class GoField:
    """One field of a Go struct: its JSON tag and kind.

    ``kind`` is ``string``, ``struct_ptr`` (``*T``: null sets nil, an object merges into
    an existing value) or ``struct_slice`` (``[]T``: elements are decoded in place into the
    existing backing array, as Go does).
    """

    tag: str
    kind: str
    fields: tuple[GoField, ...] = ()


GoStruct = dict[str, Any]


def new_go_struct(fields: tuple[GoField, ...]) -> GoStruct:
    out: GoStruct = {}
    for f in fields:
        out[f.tag] = "" if f.kind == "string" else None
    return out


@dataclass
class GoSlice:
    """A Go slice: the elements in use plus every element ever written to its backing array."""

    backing: list[GoStruct]
    length: int

    @property
    def items(self) -> list[GoStruct]:
        return self.backing[: self.length]


def decode_go_struct(value: Any, fields: tuple[GoField, ...], target: GoStruct, where: str) -> None:
    """Decode ``value`` into ``target`` in place (JSON null leaves a struct untouched)."""
    if value is None:
        return
    if not isinstance(value, JsonPairs):
        raise GoDecodeError(f"cannot unmarshal {json_kind(value)} into {where} (an object)")
    folded = {go_fold(f.tag): f for f in fields}
    for key, item in value:
        field = next((f for f in fields if f.tag == key), None) or folded.get(go_fold(key))
        if field is not None:
            _decode_go_field(item, field, target, f"{where}.{field.tag}")


def decode_go_slice(
    value: Any, fields: tuple[GoField, ...], current: GoSlice | None, where: str
) -> GoSlice | None:
    if value is None:
        return None
    if not isinstance(value, list) or isinstance(value, JsonPairs):
        raise GoDecodeError(f"cannot unmarshal {json_kind(value)} into {where} (an array)")
    backing = current.backing if current is not None else []
    for i, element in enumerate(value):
        if i >= len(backing):
            backing.append(new_go_struct(fields))
        decode_go_struct(element, fields, backing[i], f"{where}[{i}]")
    if not value:
        return GoSlice([], 0)
    return GoSlice(backing, len(value))


def _decode_go_field(value: Any, field: GoField, target: GoStruct, where: str) -> None:
    if field.kind == "string":
        if value is None:
            return
        if not isinstance(value, str) or isinstance(value, JsonNumber):
            raise GoDecodeError(f"cannot unmarshal {json_kind(value)} into {where} (a string)")
        target[field.tag] = value
    elif field.kind == "struct_ptr":
        if value is None:
            target[field.tag] = None
            return
        if not isinstance(value, JsonPairs):
            raise GoDecodeError(f"cannot unmarshal {json_kind(value)} into {where} (an object)")
        if target[field.tag] is None:
            target[field.tag] = new_go_struct(field.fields)
        decode_go_struct(value, field.fields, target[field.tag], where)
    elif field.kind == "struct_slice":
        target[field.tag] = decode_go_slice(value, field.fields, target[field.tag], where)
    else:
        raise ValueError(f"unknown Go field kind {field.kind!r}")
