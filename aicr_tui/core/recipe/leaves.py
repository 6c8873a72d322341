"""The recipes the catalog serves, as ``aicr-tui recipe list`` and the wizard list them.

A row is an overlay whose criteria name a service, an accelerator and an intent: a
combination a user can ask for and get a recipe of its own (its OS and platform may be
``any``). Rows are read from the loaded catalog, so they follow whatever overlays it holds
(an external ``--data`` catalog included); nothing here names a leaf.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.documents.criteria import ANY, DIMENSIONS, Criteria
from aicr_tui.core.recipe.catalog import Catalog

REQUIRED: tuple[str, ...] = ("service", "accelerator", "intent")
COLUMNS: tuple[str, ...] = ("service", "accelerator", "os", "intent", "platform")


@dataclass(frozen=True)
class RecipeRow:
    """One recipe the catalog serves: its overlay and criteria."""

    name: str
    criteria: dict[str, str]  # the five dimensions; "any" where the overlay leaves one open
    base: str
    mixins: tuple[str, ...]
    leaf: bool  # no other overlay builds on it

    def to_document(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "criteria": dict(self.criteria),
            "base": self.base,
            "mixins": list(self.mixins),
            "leaf": self.leaf,
        }

    def selection(self) -> dict[str, str]:
        """The criteria to choose this recipe with (open dimensions left out)."""
        return {k: v for k, v in self.criteria.items() if v and v != ANY}


def _sort_key(row: RecipeRow) -> tuple[str, ...]:
    # "any" first within a dimension: the general recipe before its refinements.
    return tuple("" if row.criteria[c] == ANY else row.criteria[c] for c in COLUMNS) + (row.name,)


def _matches(values: Mapping[str, str], query: Criteria) -> bool:
    """Each dimension ``query`` states is the row's own value (a row that leaves it open
    does not match: ``--os ol`` lists the recipes written for Oracle Linux)."""
    return all(values[d] == v for d, v in query.stated().items())


def recipe_rows(catalog: Catalog, query: Criteria | None = None) -> list[RecipeRow]:
    """Every overlay a user can ask for (service, accelerator and intent stated), sorted by
    criteria; with ``query``, only those naming each value it states."""
    bases = {o.spec.base for o in catalog.overlays.values()}
    rows: list[RecipeRow] = []
    for name, overlay in catalog.overlays.items():
        crit = overlay.criteria
        if name == "base" or crit is None:
            continue
        values = {d: str(crit.value(d)) for d in DIMENSIONS}
        if any(values[d] in ("", ANY) for d in REQUIRED):
            continue
        if query is not None and not _matches(values, query):
            continue
        rows.append(
            RecipeRow(
                name=name,
                criteria={c: values[c] or ANY for c in COLUMNS},
                base=overlay.spec.base,
                mixins=tuple(overlay.spec.mixins),
                leaf=name not in bases,
            )
        )
    return sorted(rows, key=_sort_key)


def format_rows(rows: list[RecipeRow]) -> str:
    """The rows as a plain-text table (header first), one line each."""
    headers = ("RECIPE", *(c.upper() for c in COLUMNS))
    cells = [(r.name, *(r.criteria[c] for c in COLUMNS)) for r in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    lines += ["  ".join(v.ljust(widths[i]) for i, v in enumerate(row)).rstrip() for row in cells]
    return "\n".join(lines) + "\n"


def rows_document(rows: list[RecipeRow]) -> Mapping[str, Any]:
    return {"kind": "RecipeList", "recipes": [r.to_document() for r in rows]}
