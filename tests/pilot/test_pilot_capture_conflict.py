"""Issue 33 item 3: the wizard never shows PASS for a selection the capture contradicts.

On the AKS H100 capture one stray → on the focused accelerator select chose another GPU
and the verdict read PASS against the snapshot. Now the verdict fails, the
troubleshooting panel names the chosen and the observed value with the reading, and one
key (t) takes the capture's value back.
"""

from __future__ import annotations

from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.widgets.cycle_select import CycleSelect
from tests.pilot.fit import screen_lines
from tests.pilot.test_pilot_wizard_remedies import CLI_FLAG
from tests.pilot.wizard_helpers import demo_app, open_recipe, settle


async def test_a_contradicted_accelerator_never_passes_and_t_takes_the_capture(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        state = app.state
        assert state.criteria["accelerator"] == "h100" and state.verdict.ok
        assert screen.query_one("#verdict-line").render().startswith("PASS")

        select = screen.query_one("#sel-accelerator", CycleSelect)
        select.focus()
        await pilot.pause()
        await pilot.press("right")  # the stray key: another accelerator of the catalog
        await settle(pilot)
        chosen = state.criteria["accelerator"]
        assert chosen != "h100"
        verdict = state.verdict
        assert verdict is not None and not verdict.ok and state.recipe is None
        line = screen.query_one("#verdict-line").render()
        assert line.startswith("FAIL") and "PASS" not in line
        text = screen.trouble_text()
        assert f"accelerator {chosen} was chosen, the capture records h100" in text
        assert "NVIDIA H100 80GB HBM3" in text
        assert "t: take the capture's accelerator=h100" in text
        shown = "\n".join(screen_lines(app))
        assert "t: take the capture's accelerator=h100" in shown
        # The core's remedy, "(--accelerator h100)" for the CLI, names the key (issue 34
        # item 3): no CLI flag in the panel, on the screen or in its text.
        assert "--accelerator" in state.last_error  # the CLI's wording, as the core says it
        assert "press t to take the capture's accelerator=h100" in text
        assert "or load a capture of the cluster the recipe is for (l)" in text
        assert not CLI_FLAG.findall(text), text
        assert not CLI_FLAG.findall(shown), shown

        await pilot.press("t")
        await settle(pilot)
        assert state.criteria["accelerator"] == "h100"
        assert state.verdict is not None and state.verdict.ok
        assert screen.query_one("#verdict-line").render().startswith("PASS")
        assert "take the capture" not in screen.trouble_text()
