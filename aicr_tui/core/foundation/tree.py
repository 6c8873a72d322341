"""Value trees (Helm values, overrides): dotted paths, merges and copies, in one place.

Paths are dotted (``driver.rdma.enabled``) over plain nested maps.

A path is a list of segments; intersection follows upstream: two paths intersect when they
are equal or one is an ancestor of the other, compared segment by segment, so
``resources`` intersects ``resources.gpus.enabled`` while ``resourcesFoo`` does not.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from aicr_tui.core.foundation.errors import invalid

SEGMENT_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*$")

# Three-state observation of a path in a values tree.
ABSENT = "absent"
BLOCKED = "blocked"
PRESENT = "present"


def split_path(path: str) -> list[str]:
    return path.split(".")


def paths_intersect(a: str, b: str) -> bool:
    sa, sb = split_path(a), split_path(b)
    n = min(len(sa), len(sb))
    return sa[:n] == sb[:n]


def observe(values: Mapping[str, Any], path: str) -> tuple[str, Any]:
    """Return (state, value): present with the value, absent, or blocked by a non-map ancestor."""
    node: Any = values
    segments = split_path(path)
    for i, seg in enumerate(segments):
        if not isinstance(node, Mapping):
            return BLOCKED, None
        if seg not in node:
            return ABSENT, None
        node = node[seg]
        if i == len(segments) - 1:
            return PRESENT, node
    return PRESENT, node


def set_path(values: dict[str, Any], path: str, value: Any, *, where: str) -> None:
    """Set ``path`` creating intermediate maps; a non-map intermediate is an error naming ``where``."""
    segments = split_path(path)
    node: Any = values
    for depth, seg in enumerate(segments[:-1]):
        nxt = node.get(seg)
        if nxt is None:
            nxt = {}
            node[seg] = nxt
        elif not isinstance(nxt, dict):
            walked = ".".join(segments[: depth + 1])
            raise invalid(
                f"{where}: cannot set {path} because {walked} holds a {type_name(nxt)}, not a map"
            )
        node = nxt
    node[segments[-1]] = value


def delete_path(values: dict[str, Any], path: str) -> bool:
    segments = split_path(path)
    node: Any = values
    for seg in segments[:-1]:
        if not isinstance(node, dict) or seg not in node:
            return False
        node = node[seg]
    if isinstance(node, dict) and segments[-1] in node:
        del node[segments[-1]]
        return True
    return False


# Merges are copy-on-write: the result is a new mapping along every path the override
# touches and shares untouched subtrees with its inputs. Treat catalog trees and merge
# results as read-only; call copy_tree before editing one in place.
def deep_merge(
    base: Mapping[str, Any],
    override: Mapping[str, Any],
    *,
    delete_nulls: bool = False,
    keep_nulls: bool = False,
) -> dict[str, Any]:
    """Merge ``override`` over ``base``: maps recurse, anything else replaces.

    Lists are never merged element-wise. With ``delete_nulls`` a ``null`` in ``override``
    removes the key (value resolution); without it the ``null`` is kept (recipe merges,
    where it acts as a delete later). ``keep_nulls`` (with ``delete_nulls``, for chart
    values): the ``null`` still replaces whatever lower layers set but stays in the tree
    as ``null``, which is how Helm is told to delete the chart's own default.
    """
    out = dict(base)
    for key, value in override.items():
        if value is None and delete_nulls:
            if keep_nulls:
                out[key] = None
            else:
                out.pop(key, None)
            continue
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge(current, value, delete_nulls=delete_nulls, keep_nulls=keep_nulls)
        elif isinstance(value, Mapping) and delete_nulls and not keep_nulls:
            out[key] = _drop_nulls(value)
        else:
            out[key] = value
    return out


def _drop_nulls(tree: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: (_drop_nulls(v) if isinstance(v, Mapping) else v)
        for k, v in tree.items()
        if v is not None
    }


def copy_tree(value: Any) -> Any:
    """An independent copy of a value tree (dicts and lists; scalars are immutable)."""
    if isinstance(value, Mapping):
        return {k: copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    return value


def get_path(tree: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """Look up a dotted path; ``(found, value)``. A non-map on the way means not found."""
    state, value = observe(tree, path)
    return state == PRESENT, value


def leaf_paths(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted leaf paths; a list or scalar is a leaf, an empty map is not."""
    paths: list[str] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            paths.extend(leaf_paths(value, f"{path}."))
        else:
            paths.append(path)
    return paths


def deep_merge_typed(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """Typed-override merge: maps recurse, a null deletes the key, other values replace."""
    for key, value in src.items():
        if value is None:
            dst.pop(key, None)
        elif isinstance(value, dict) and isinstance(dst.get(key), dict):
            deep_merge_typed(dst[key], value)
        elif isinstance(value, dict):
            fresh: dict[str, Any] = {}
            deep_merge_typed(fresh, value)
            dst[key] = fresh
        else:
            dst[key] = copy.deepcopy(value)


KindNames = tuple[tuple[type | tuple[type, ...], str], ...]

# The vocabulary of value-tree messages (overrides, chart values).
VALUE_KINDS: KindNames = (
    (bool, "bool"),  # before int: a bool is an int to isinstance
    (int, "int"),
    (float, "float"),
    (str, "string"),
    (list, "list"),
    (dict, "map"),
)


def kind_name(value: Any, names: KindNames) -> str:
    """What ``value`` is called in a message: ``null`` for None, else the name of the first
    entry of ``names`` it is an instance of (so order matters), else its Python type's name.
    Each reader says things in its own source's words (``map`` or ``object``, ``number``)."""
    if value is None:
        return "null"
    for kind, name in names:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def type_name(value: Any) -> str:
    return kind_name(value, VALUE_KINDS)


def validate_path(path: str, flag: str, entry: str) -> None:
    for seg in split_path(path):
        if not SEGMENT_RE.match(seg):
            raise invalid(f"{flag} {entry!r}: path segment {seg!r} must match {SEGMENT_RE.pattern}")


__all__ = [
    "ABSENT",
    "BLOCKED",
    "PRESENT",
    "copy_tree",
    "deep_merge",
    "deep_merge_typed",
    "delete_path",
    "get_path",
    "kind_name",
    "leaf_paths",
    "observe",
    "paths_intersect",
    "set_path",
    "split_path",
    "type_name",
    "VALUE_KINDS",
    "validate_path",
]
