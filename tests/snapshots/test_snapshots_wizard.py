"""SVG snapshots of the wizard's own screens at 80x24 and 120x40.

The screens show sample file names (never temp paths), no clock and no hostname; the only
focused inputs are selects and lists, so no cursor blinks into the picture. Regenerate with
``pytest tests/snapshots/test_snapshots_wizard.py --snapshot-update`` after a deliberate change.
"""

from __future__ import annotations

import pytest

from tests.pilot.wizard_helpers import demo_app, pick_sample, settle

SIZES = [(80, 24), (120, 40)]


def ids(size):
    return f"{size[0]}x{size[1]}"


async def capture_loaded(pilot) -> None:
    await settle(pilot)
    await pick_sample(pilot, "aks-mixed")


async def recipe_failing(pilot) -> None:
    await settle(pilot)
    await pick_sample(pilot, "aks-none")
    await pilot.press("n")
    await settle(pilot, 3)


async def recipe_passing_with_diff(pilot) -> None:
    await recipe_failing(pilot)
    await pilot.press("s")
    await settle(pilot)
    await pilot.press("d")
    await settle(pilot, 3)


async def recipe_capture_conflict(pilot) -> None:
    """Issue 33: the H100 capture with another AKS accelerator chosen (a100, two strays ←
    past gb200): FAIL, the conflict with the observed value, and t to take the capture's
    value."""
    await settle(pilot)
    await pick_sample(pilot, "aks-install")
    await pilot.press("n")
    await settle(pilot, 3)
    pilot.app.screen.query_one("#sel-accelerator").focus()
    await pilot.pause()
    await pilot.press("left", "left")
    await settle(pilot, 3)


async def guide_open(pilot) -> None:
    await settle(pilot)
    await pick_sample(pilot, "oke-legacy-active")
    await pilot.press("g")
    await settle(pilot)


async def help_open(pilot) -> None:
    await settle(pilot)
    await pilot.press("question_mark")
    await settle(pilot)


async def drift_refused(pilot) -> None:
    await settle(pilot)
    await pick_sample(pilot, "aks-install")
    await pilot.press("n")
    await settle(pilot, 3)
    await pilot.press("D")
    await settle(pilot)
    options = pilot.app.screen.query_one("#drift-samples")
    options.highlighted = [o.id for o in options.options].index("aks-none")
    await pilot.press("enter")
    await settle(pilot, 3)


SCENES = {
    "capture": capture_loaded,
    "recipe-failing": recipe_failing,
    "recipe-passing-diff": recipe_passing_with_diff,
    "recipe-capture-conflict": recipe_capture_conflict,
    "guide": guide_open,
    "help": help_open,
    "drift-refused": drift_refused,
}


def steady(scene):
    """Run ``scene``, then let tables finish sizing their columns before the picture."""

    async def run(pilot) -> None:
        await SCENES[scene](pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.2)
        await pilot.pause()

    return run


@pytest.mark.parametrize("size", SIZES, ids=ids)
@pytest.mark.parametrize("scene", list(SCENES))
def test_wizard_screen(snap_compare, scene, size):
    assert snap_compare(demo_app(), terminal_size=size, run_before=steady(scene))
