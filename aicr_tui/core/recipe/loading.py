"""Reading a recipe file: a RecipeResult as written, or a RecipeMetadata re-resolved.

The documents layer parses without touching the catalog; a RecipeMetadata comes back
as a :class:`~aicr_tui.core.documents.recipe_result.RecipeRequest` and is resolved here.
"""

from __future__ import annotations

from pydantic import ValidationError

from aicr_tui.core.documents.criteria import DIMENSIONS, parse_criteria
from aicr_tui.core.documents.recipe_result import RecipeRequest, RecipeResult, read_recipe
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import read_document
from aicr_tui.core.recipe.catalog import Catalog, load_catalog
from aicr_tui.core.recipe.profiles import ProfileDeclaration


def parse_recipe(text: str, source: str, *, catalog: Catalog | None = None) -> RecipeResult:
    """Parse a recipe document; a RecipeMetadata is re-resolved against ``catalog``."""
    doc = read_recipe(text, source)
    if isinstance(doc, RecipeRequest):
        return resolve_request(doc, catalog if catalog is not None else load_catalog())
    return doc


def load_recipe(path: str, *, catalog: Catalog | None = None) -> RecipeResult:
    """Read (bounded) and parse a recipe file."""
    return parse_recipe(read_document(path, "recipe"), str(path), catalog=catalog)


def resolve_request(request: RecipeRequest, catalog: Catalog) -> RecipeResult:
    """A RecipeMetadata given as a recipe: re-resolve its criteria against the catalog.

    Only the criteria are used. A profiled overlay must carry the same declaration the
    catalog resolves to (the declared default is applied), and every mixin it names must
    be named by some applied overlay.
    """
    # Imported here: only a RecipeMetadata is re-resolved (bundle reads a RecipeResult).
    from aicr_tui.core.recipe.qualification import qualify

    source = request.source
    crit = parse_criteria(
        **{k: request.criteria.get(k) for k in (*DIMENSIONS, "nodes")},
        registered=catalog.registered,
    )
    verdict = qualify(crit, None, None, catalog=catalog)
    if verdict.error is not None:
        raise invalid(f'recipe file "{source}": its criteria do not resolve', verdict.error)
    assert verdict.recipe is not None
    if request.profile is not None:
        resolved = (
            catalog.overlay(verdict.profile_source).spec.profile if verdict.profile_source else None
        )
        try:
            mine = ProfileDeclaration.model_validate(request.profile)
        except ValidationError as exc:
            raise invalid(f'recipe file "{source}" has a malformed spec.profile') from exc
        if resolved is None or mine.model_dump() != resolved.model_dump():
            raise invalid(
                f'recipe file "{source}" declares a profile that differs from the catalog\'s '
                "resolved declaration; regenerate it with `aicr-tui recipe`"
            )
    if request.mixins:
        named: set[str] = set()
        for name in verdict.recipe.metadata.appliedOverlays:
            named.update(catalog.overlay(name).spec.mixins)
        dropped = sorted(m for m in request.mixins if m not in named)
        if dropped:
            raise invalid(
                f'recipe file "{source}" declares mixins no applied overlay declares: '
                + ", ".join(dropped)
            )
    return verdict.recipe
