"""A component's resolved Helm values (the tree helpers live in aicr_tui.core.foundation.tree)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aicr_tui.core.foundation.tree import copy_tree, deep_merge

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import ComponentRef
    from aicr_tui.core.recipe.catalog import Catalog


def resolve_component_values(
    catalog: Catalog, ref: ComponentRef, *, keep_nulls: bool = False
) -> dict[str, Any]:
    """A component's values: base values.yaml < valuesFile < inline overrides.

    Without a valuesFile and without overrides the result is ``{}`` (values are never
    discovered by name alone). ``null`` deletes a key at every layer; with ``keep_nulls``
    (the bundler's chart values) it is kept as ``null`` so Helm deletes the chart default
    too (a recipe's ``controller.affinity.nodeAffinity: null``). The returned tree is an
    independent copy the caller may edit.
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
            merged = deep_merge(
                merged,
                catalog.read_values_file(ref.valuesFile),
                delete_nulls=True,
                keep_nulls=keep_nulls,
            )
    if ref.overrides:
        merged = deep_merge(merged, ref.overrides, delete_nulls=True, keep_nulls=keep_nulls)
    result: dict[str, Any] = copy_tree(merged)
    return result
