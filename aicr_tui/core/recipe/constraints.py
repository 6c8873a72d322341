"""Constraint evaluation against a snapshot.

A constraint is ``{name, value}``: ``name`` is a measurement path ``{Type}.{Subtype}.{Key}``
and ``value`` an expression (``>= 1.34``, ``== v24.6.0``, ``!= x`` or a bare exact value).
One call, :func:`evaluate_constraint`, returns a structured :class:`ConstraintResult` that
the recipe engine, validation and the screens all read. A missing reading is never a pass:
it is ``unavailable``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING

from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid, not_found
from aicr_tui.core.foundation.memo import text_memo
from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.versions import (
    Version,
    compare_versions,
    looks_like_version,
    parse_version,
    versions_equal,
)

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Scalar, Snapshot

MEASUREMENT_TYPES = ("K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology")

# Subtypes whose key set is closed: a name outside it can never be produced, so a typo is
# an error with a hint rather than a silent "unavailable".
CLOSED_KEYS: dict[tuple[str, str], tuple[str, ...]] = {
    ("K8s", "server"): ("version", "platform", "goVersion"),
    ("K8s", "aks-gpu-pools"): ("gpu-pool-count", "gpu-pools", "gpu-driver"),
    ("K8s", "oke-addons"): ("addon-count", "nvidia-gpu-plugin"),
    ("K8s", "oke-legacy-plugin"): ("nvidia-gpu-device-plugin", "daemonset"),
    ("GPU", "hardware"): ("gpu-present", "gpu-count", "driver-loaded", "detection-source", "model"),
    ("NodeTopology", "summary"): ("node-count", "taint-count", "label-count"),
}

_OPERATORS = (">=", "<=", "!=", "==", ">", "<", "=")
_ITEM_FORM = LazyPattern(r"^(?P<sub>[^.\[\]]+)\[(?P<sel>[^\]]*)\]\.(?P<key>.+)$")


class Op(StrEnum):
    GE = ">="
    LE = "<="
    NE = "!="
    EQ = "=="
    GT = ">"
    LT = "<"
    EXACT = ""


class ConstraintStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    ERROR = "error"


@dataclass(frozen=True)
class ConstraintPath:
    mtype: str
    subtype: str
    key: str
    selector: str | None = None

    def __str__(self) -> str:
        sel = f"[{self.selector}]" if self.selector is not None else ""
        return f"{self.mtype}.{self.subtype}{sel}.{self.key}"


@dataclass(frozen=True)
class Expression:
    op: Op
    value: str
    version: bool

    def __str__(self) -> str:
        return f"{self.op.value} {self.value}" if self.op is not Op.EXACT else self.value


@dataclass(frozen=True)
class ConstraintResult:
    """The outcome of one constraint: what was expected, what was seen, and why."""

    name: str
    expected: str
    actual: str | None
    status: ConstraintStatus
    message: str
    error: AicrError | None = None

    @property
    def passed(self) -> bool:
        return self.status is ConstraintStatus.PASSED


@text_memo
def parse_path(name: str) -> ConstraintPath:
    """Split a constraint name into type, subtype and key (SystemD splits at the last dot)."""
    if not name or not name.strip():
        raise invalid("constraint name is required for snapshot evaluation")
    mtype, sep, rest = name.partition(".")
    if not sep or mtype not in MEASUREMENT_TYPES:
        import difflib

        hint = difflib.get_close_matches(mtype, MEASUREMENT_TYPES, n=1)
        extra = (
            f'; did you mean "{hint[0]}"?'
            if hint
            else f"; expected one of {', '.join(MEASUREMENT_TYPES)}"
        )
        raise invalid(
            f'invalid constraint path "{name}": unknown measurement type "{mtype}"{extra}'
        )
    item = _ITEM_FORM.match(rest)
    if item:
        return ConstraintPath(mtype, item.group("sub"), item.group("key"), item.group("sel"))
    if mtype == "SystemD":
        subtype, sep, key = rest.rpartition(".")
    else:
        subtype, sep, key = rest.partition(".")
    if not sep or not subtype or not key:
        raise invalid(f'invalid constraint path "{name}": expected {{Type}}.{{Subtype}}.{{Key}}')
    closed = CLOSED_KEYS.get((mtype, subtype))
    if closed is not None and key not in closed:
        import difflib

        hint = difflib.get_close_matches(key, closed, n=1)
        extra = (
            f'; did you mean "{mtype}.{subtype}.{hint[0]}"?'
            if hint
            else f"; known keys: {', '.join(closed)}"
        )
        raise invalid(f'invalid constraint path "{name}": no producer emits key "{key}"{extra}')
    return ConstraintPath(mtype, subtype, key)


@text_memo
def parse_expression(text: str) -> Expression:
    s = text.strip() if isinstance(text, str) else str(text).strip()
    if not s:
        raise invalid("constraint expression cannot be empty")
    if s.startswith("!") and not s.startswith("!=") and len(s) > 1 and not s[1].isspace():
        raise invalid("bare '!' prefix is invalid; use '!=' or the separate node-set form")
    for token in _OPERATORS:
        if s.startswith(token):
            value = s[len(token) :].strip()
            if not value:
                raise invalid("constraint value cannot be empty after operator")
            op = Op.EQ if token == "=" else Op(token)
            version = op in (Op.GE, Op.LE, Op.GT, Op.LT) or looks_like_version(value)
            if op in (Op.GE, Op.LE, Op.GT, Op.LT):
                try:
                    parsed: Version | None = parse_version(value)
                except AicrError:
                    parsed = None  # reported when evaluated: "cannot parse expected version"
                if parsed is not None:
                    _ = parsed.gke_build  # an invalid -gke. build is an error at parse time
            return Expression(op, value, version)
    return Expression(Op.EXACT, s, looks_like_version(s))


def format_scalar(value: Scalar) -> str:
    """Render a reading the way Go's %v would."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_go_float(value)
    return str(value)


def format_go_float(value: float) -> str:
    """Go's ``%v`` for a float64: shortest digits, exponent form below 1e-4 or from 1e6 (fmt uses precision 6 for the shortest form)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    from decimal import Decimal

    sign, digits_t, exp = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_t)
    assert isinstance(exp, int)
    point = len(digits) + exp  # position of the decimal point relative to the digits
    x = point - 1  # the decimal exponent of the first digit
    prefix = "-" if sign else ""
    if x < -4 or x >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{prefix}{digits}{'0' * (point - len(digits))}"
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def evaluate_expression(expr: Expression, actual_text: str) -> bool:
    actual = actual_text.strip()
    if expr.op is Op.EXACT:
        return actual == expr.value
    if expr.op in (Op.EQ, Op.NE):
        equal: bool
        if expr.version:
            try:
                equal = versions_equal(parse_version(actual), parse_version(expr.value))
            except AicrError:
                equal = actual == expr.value
        else:
            equal = actual == expr.value
        return equal if expr.op is Op.EQ else not equal
    try:
        expected_v = parse_version(expr.value)
    except AicrError as exc:
        raise invalid(f'cannot parse expected version "{expr.value}"', exc) from exc
    try:
        actual_v = parse_version(actual)
    except AicrError as exc:
        raise invalid(f'cannot parse actual version "{actual}"', exc) from exc
    c = compare_versions(actual_v, expected_v)
    return {Op.GE: c >= 0, Op.LE: c <= 0, Op.GT: c > 0, Op.LT: c < 0}[expr.op]


def extract(snapshot: Snapshot, path: ConstraintPath) -> Scalar:
    if path.selector is None:
        return snapshot.reading(path.mtype, path.subtype, path.key)
    sub = snapshot.subtype(path.mtype, path.subtype)
    if sub is None:
        raise not_found("subtype not found in measurement", f"{path.mtype}.{path.subtype}")
    items = sub.items or []
    sel = path.selector
    if sel.isascii() and sel.isdigit():  # isdigit() alone admits "²", which int() refuses
        # past 18 digits no list is that long, and int() would hit Python's digit limit
        idx = int(sel) if len(sel) <= 18 else len(items)
        if idx >= len(items):
            raise not_found("item index out of range", f"{path}")
        matches = [items[idx]]
    else:
        k, eq, v = sel.partition("=")
        if not eq:
            raise invalid(
                f'invalid item selector "[{sel}]" in "{path}"; expected an index or key=value'
            )
        matches = [
            it
            for it in items
            if (it.data and k in it.data and format_scalar(it.data[k]) == v)
            or (it.context and it.context.get(k) == v)
        ]
    if not matches:
        raise not_found("no item matches selector", f"{path}")
    if len(matches) > 1:
        raise AicrError(
            ErrorCode.CONFLICT, f'selector "[{sel}]" matches {len(matches)} items in "{path}"'
        )
    item = matches[0]
    if item.data and path.key in item.data:
        return item.data[path.key]
    if item.context and path.key in item.context:
        return item.context[path.key]
    raise not_found("key not found in item", f"{path}")


def evaluate_constraint(name: str, expected: str, snapshot: Snapshot | None) -> ConstraintResult:
    """Evaluate one constraint; never raises for data problems, always returns a result."""
    expected_text = "" if expected is None else str(expected)
    result = partial(ConstraintResult, name, expected_text)  # then actual, status, message

    try:
        path = parse_path(name)
    except AicrError as exc:
        return result(None, ConstraintStatus.ERROR, exc.message, exc)
    try:
        expr = parse_expression(expected_text)
    except AicrError as exc:
        return result(
            None, ConstraintStatus.ERROR, f"invalid constraint expression: {exc.message}", exc
        )
    if snapshot is None:
        err = not_found("no snapshot to evaluate against", name)
        unavailable = f'reading "{name}" is unavailable: no snapshot was supplied'
        return result(None, ConstraintStatus.UNAVAILABLE, unavailable, err)
    try:
        raw = extract(snapshot, path)
    except AicrError as exc:
        if exc.has_code(ErrorCode.NOT_FOUND):
            wrapped = not_found("value not found in snapshot", exc)
            unavailable = f'reading "{name}" is unavailable: {exc.message}'
            return result(None, ConstraintStatus.UNAVAILABLE, unavailable, wrapped)
        return result(None, ConstraintStatus.ERROR, exc.message, exc)
    actual = format_scalar(raw)
    try:
        ok = evaluate_expression(expr, actual)
    except AicrError as exc:
        return result(actual, ConstraintStatus.ERROR, exc.render(), exc)
    status = ConstraintStatus.PASSED if ok else ConstraintStatus.FAILED
    return result(actual, status, f"expected {expected_text}, got {actual}")
