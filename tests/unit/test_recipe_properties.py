"""Properties of the merge and ordering primitives, over generated inputs."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aicr_tui.core.documents.recipe_result import ComponentRef
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.tree import deep_merge, get_path, leaf_paths
from aicr_tui.core.recipe.resolver import deployment_order

keys = st.sampled_from(["a", "b", "c", "d"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("xyz", max_size=2))
trees = st.recursive(
    scalars | st.lists(scalars, max_size=2),
    lambda inner: st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
maps = st.dictionaries(keys, trees, max_size=4)


@settings(max_examples=60, deadline=None)
@given(maps, maps)
def test_deep_merge_never_mutates_and_override_leaves_win(base: Any, over: Any) -> None:
    before_b, before_o = copy.deepcopy(base), copy.deepcopy(over)
    merged = deep_merge(base, over)
    assert base == before_b and over == before_o
    for path in leaf_paths(over):
        wanted = get_path(over, path)[1]
        if wanted == {}:
            continue  # an empty map merges into a map as a no-op
        found, value = get_path(merged, path)
        assert found and value == wanted


@settings(max_examples=60, deadline=None)
@given(maps, maps)
def test_value_merge_deletes_nulls(base: Any, over: Any) -> None:
    merged = deep_merge(base, over, delete_nulls=True)

    def has_none(tree: Any) -> bool:
        return isinstance(tree, dict) and any(v is None or has_none(v) for v in tree.values())

    if not has_none(base):
        assert not has_none(merged)
    for key, value in over.items():
        if value is None:
            assert key not in merged


names = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(names, st.lists(names, max_size=3, unique=True), min_size=1))
def test_deployment_order_respects_dependencies_and_is_deterministic(
    graph: dict[str, list[str]],
) -> None:
    refs = {
        n: ComponentRef(name=n, dependencyRefs=[d for d in deps if d in graph and d != n])
        for n, deps in graph.items()
    }
    try:
        order = deployment_order(refs)
    except AicrError as err:
        assert "circular dependencies" in err.message
        return
    assert sorted(order) == sorted(refs)
    position = {n: i for i, n in enumerate(order)}
    for n, ref in refs.items():
        for dep in ref.dependencyRefs:
            assert position[dep] < position[n]
    shuffled = dict(reversed(list(refs.items())))
    assert deployment_order(shuffled) == order
