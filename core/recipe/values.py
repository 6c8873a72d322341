"""Helm value trees: deep merges and a component's resolved values.

Merges here are copy-on-write: the result is a new mapping along every path the override
touches and shares untouched subtrees with its inputs. Treat catalog trees and merge
results as read-only; call :func:`copy_tree` before editing one in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.documents.recipe_result import ComponentRef
    from core.recipe.catalog import Catalog


def deep_merge(
    base: Mapping[str, Any], override: Mapping[str, Any], *, delete_nulls: bool = False
) -> dict[str, Any]:
    """Merge ``override`` over ``base``: maps recurse, anything else replaces.

    Lists are never merged element-wise. With ``delete_nulls`` a ``null`` in ``override``
    removes the key (value resolution); without it the ``null`` is kept (recipe merges,
    where it acts as a delete later).
    """
    out = dict(base)
    for key, value in override.items():
        if value is None and delete_nulls:
            out.pop(key, None)
            continue
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge(current, value, delete_nulls=delete_nulls)
        elif isinstance(value, Mapping) and delete_nulls:
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
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


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


def resolve_component_values(catalog: Catalog, ref: ComponentRef) -> dict[str, Any]:
    """A component's values: base values.yaml < valuesFile < inline overrides.

    Without a valuesFile and without overrides the result is ``{}`` (values are never
    discovered by name alone). ``null`` deletes a key at every layer. The returned tree is
    an independent copy the caller may edit.
    """
    if not ref.valuesFile and not ref.overrides:
        return {}
    base_rel = f"components/{ref.name}/values.yaml"
    merged: dict[str, Any] = {}
    if ref.valuesFile == base_rel:
        merged = deep_merge(merged, catalog.read_values_file(base_rel), delete_nulls=True)
    else:
        if catalog.has_file(base_rel):
            merged = deep_merge(merged, catalog.read_values_file(base_rel), delete_nulls=True)
        if ref.valuesFile:
            merged = deep_merge(merged, catalog.read_values_file(ref.valuesFile), delete_nulls=True)
    if ref.overrides:
        merged = deep_merge(merged, ref.overrides, delete_nulls=True)
    result: dict[str, Any] = copy_tree(merged)
    return result
