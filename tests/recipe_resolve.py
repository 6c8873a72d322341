"""``resolve``: a qualification's recipe, or its error raised (tests that need no verdict).

It lived in aicr_tui.core.recipe.qualification, where nothing but tests called it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aicr_tui.core.recipe.qualification import qualify

if TYPE_CHECKING:
    from aicr_tui.core.documents.criteria import Criteria
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.recipe.catalog import Catalog


def resolve(
    catalog: Catalog,
    criteria: Criteria,
    *,
    profile: str | None = None,
    snapshot: Snapshot | None = None,
) -> RecipeResult:
    verdict = qualify(criteria, profile, snapshot, catalog=catalog)
    if verdict.error is not None:
        raise verdict.error
    assert verdict.recipe is not None
    return verdict.recipe
