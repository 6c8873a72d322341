"""A chart's ``kubeVersion`` (Masterminds semver constraint syntax, as Helm reads it)
against the lowest Kubernetes version a recipe's ``K8s.server.version`` admits."""

from __future__ import annotations

import re

_CLAUSE = re.compile(
    r"^(>=|=>|<=|=<|!=|>|<|=|~>|~|\^)?\s*v?(\d{1,19})(?:\.(\d{1,19}|[xX*]))?"
    r"(?:\.(\d{1,19}|[xX*]))?(?:[-+]\S*)?$"
)


# Helm reads each version number as a 64-bit unsigned integer: at most 20 digits.
_TOO_LONG = re.compile(r"\d{20,}")


def unreadable_number(constraint: str) -> bool:
    """True when the constraint holds a number no version can have (Helm refuses it)."""
    return _TOO_LONG.search(constraint) is not None


def _split(constraint: str) -> list[list[str]]:
    groups: list[list[str]] = []
    for group in constraint.split("||"):
        parts: list[str] = []
        # "a, b" and "a b" both mean AND; an operator may stand apart from its version.
        tokens = [t for t in re.split(r"[\s,]+", group.strip()) if t]
        pending = ""
        for token in tokens:
            if re.fullmatch(r"(>=|=>|<=|=<|!=|>|<|=|~>|~|\^)", token):
                pending = token
                continue
            parts.append(pending + token)
            pending = ""
        if parts:
            groups.append(parts)
    return groups


def _clause_holds(clause: str, v: tuple[int, int, int]) -> bool | None:
    m = _CLAUSE.match(clause)
    if m is None:
        return None
    op = m.group(1) or "="
    major = int(m.group(2))
    minor_s, patch_s = m.group(3), m.group(4)
    wild_minor = minor_s is None or not minor_s.isdigit()
    wild_patch = patch_s is None or not patch_s.isdigit()
    minor = 0 if wild_minor else int(minor_s)
    patch = 0 if wild_patch else int(patch_s)
    c = (major, minor, patch)
    if op in ("~", "~>"):
        upper = (major + 1, 0, 0) if minor_s is None else (major, minor + 1, 0)
        return c <= v < upper
    if op == "^":
        upper = (major + 1, 0, 0) if major > 0 else (0, minor + 1, 0)
        return c <= v < upper
    if op == "=" and (wild_minor or wild_patch):
        if wild_minor:
            return v[0] == major
        return v[:2] == (major, minor)
    return {
        ">=": v >= c,
        "=>": v >= c,
        "<=": v <= c,
        "=<": v <= c,
        ">": v > c,
        "<": v < c,
        "=": v == c,
        "!=": v != c,
    }[op]


def satisfies(constraint: str, version: tuple[int, int, int]) -> bool | None:
    """True/False, or None when the constraint cannot be read."""
    groups = _split(constraint)
    if not groups:
        return None
    any_true = False
    for group in groups:
        results = [_clause_holds(c, version) for c in group]
        if any(r is None for r in results):
            return None
        if all(results):
            any_true = True
    return any_true


def recipe_floor(expression: str) -> tuple[int, int, int] | None:
    """The lowest version a ``K8s.server.version`` expression admits (``>= 1.34`` -> 1.34.0);
    None when it sets no lower bound or holds a number no version can have (the recipe is
    anyone's text: ``>= 1.<5000 digits>`` must not reach ``int``)."""
    if unreadable_number(expression or ""):
        return None
    m = re.match(r"^\s*(>=|>|==|=)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", expression or "")
    if m is None or m.group(1) is None and not re.match(r"^\s*v?\d", expression):
        return None
    op = m.group(1) or "=="
    v = (int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0))
    if op == ">":
        return (v[0], v[1], v[2] + 1)
    return v
