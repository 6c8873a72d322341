"""Issue 33 item 6: the recipe step lists the catalog's recipes (c); enter on one selects
its criteria. The rows are the catalog's (``aicr-tui recipe list``), so this test only
relies on the AKS H100 and OKE GB200 OL training recipes."""

from __future__ import annotations

from textual.widgets import DataTable

from aicr_tui.core.recipe.catalog import load_catalog
from aicr_tui.core.recipe.leaves import recipe_rows
from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.widgets.recipe_list import RecipeListModal
from tests.pilot.fit import screen_lines
from tests.pilot.wizard_helpers import demo_app, open_recipe, settle


def _index(rows, **criteria: str) -> int:  # type: ignore[no-untyped-def]
    want = {"os": "any", "platform": "any", **criteria}
    return next(i for i, r in enumerate(rows) if r.criteria == want)


async def test_c_lists_the_catalog_and_enter_selects_a_recipe(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_recipe(pilot, "aks-install")
        recipe = app.screen
        assert isinstance(recipe, RecipeScreen)
        assert "c: catalog recipes" in "\n".join(screen_lines(app))
        await pilot.press("c")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, RecipeListModal)
        expected = recipe_rows(load_catalog())
        assert [r.name for r in modal.rows] == [r.name for r in expected]
        table = modal.query_one(DataTable)
        assert table.row_count == len(expected)
        # the cursor starts on the recipe the current selection resolves to
        current = modal.rows[table.cursor_row]
        assert current.criteria["service"] == "aks" and current.criteria["accelerator"] == "h100"
        shown = "\n".join(screen_lines(app))
        assert "Recipes the catalog serves" in shown and current.name in shown

        target = _index(modal.rows, service="oke", accelerator="gb200", os="ol", intent="training")
        table.move_cursor(row=target)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is recipe
        crit = app.state.criteria
        assert (crit["service"], crit["accelerator"], crit["os"], crit["intent"]) == (
            "oke",
            "gb200",
            "ol",
            "training",
        )
        # an AKS capture for an OKE recipe: never a pass, and the capture is named
        assert app.state.verdict is not None and not app.state.verdict.ok
        assert "snapshot is from aks/H100" in app.state.last_error

        # escape closes the list without a change
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, RecipeListModal)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is recipe and app.state.criteria["service"] == "oke"
