"""Remedies a wizard user can follow (issue 34, item 3): in the wizard a remedy names the
key, the choice or the setting that applies there, never a CLI flag the wizard cannot
take, and each remedy is said once (at 120x40 the same sentence appeared twice)."""

from __future__ import annotations

import re

import pytest

from aicr_tui.screens.recipe import RecipeScreen
from aicr_tui.screens.remedies import for_wizard
from tests.pilot.fit import screen_lines
from tests.pilot.wizard_helpers import demo_app, open_recipe, settle

CLI_FLAG = re.compile(r"(?<![\w-])--(?!gpu-driver\b)[a-z][\w-]*")  # az's own flag may be quoted


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_failing_recipe_remedies_name_keys_and_are_said_once(tmp_path, size) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await open_recipe(pilot, "aks-none")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        assert not app.state.verdict.ok
        text = screen.trouble_text()
        assert "--profile" in app.state.last_error  # the CLI's wording, as the core says it
        assert not CLI_FLAG.findall(text), text
        assert "choose gpuStack=operator-managed in the gpuStack list (s switches to it)" in text
        sentences = [s.strip() for s in re.split(r"[;\n]", text) if len(s.strip()) > 30]
        assert len(sentences) == len(set(sentences)), sentences
        shown = "\n".join(screen_lines(app))
        assert "--profile" not in shown and "--aks-gpu-pools" not in shown


@pytest.mark.parametrize(
    "cli",
    [
        (
            "no Kubernetes configuration: pass --kubeconfig FILE, set KUBECONFIG, create "
            "~/.kube/config (az aks get-credentials / oci ce cluster create-kubeconfig), "
            "or capture without a cluster (--no-cluster)"
        ),
        "offline? pass --charts DIR with <component>-<version>/ chart trees",
        "check network access to the chart repository, or pass --charts DIR",
        "rerun without --profile (the gpuStack=azure-managed default)",
        "overlays for it also need --intent (inference/training)",
        (
            "rerun with --profile gpuStack=operator-managed against the same snapshot "
            "(no recapture needed); or bring K8s.aks-gpu-pools.gpu-driver to None"
        ),
        (
            "snapshot is from aks/H100 (provider azure); the recipe is for aks/B200 — take "
            "the capture's values (--accelerator h100 --os ubuntu), or use a snapshot of the "
            "cluster the recipe is for"
        ),
    ],
)
@pytest.mark.parametrize("screen", ["recipe", "drift"])
def test_every_cli_remedy_the_wizard_shows_is_said_in_its_terms(cli: str, screen: str) -> None:
    said = for_wizard(cli, screen)  # type: ignore[arg-type]
    assert not CLI_FLAG.findall(said), said


def test_each_screen_names_its_own_keys() -> None:
    """The recipe step offers s and t itself; the drift screen has neither, so its remedy
    says where the choice is (esc back to the recipe step) and o opens a capture there."""
    cli = (
        "rerun with --profile gpuStack=operator-managed against the same snapshot "
        "(no recapture needed)"
    )
    assert for_wizard(cli) == (
        "choose gpuStack=operator-managed in the gpuStack list (s switches to it) against "
        "the same snapshot (no recapture needed)"
    )
    assert for_wizard(cli, "drift") == (
        "this capture qualifies with gpuStack=operator-managed: choose it in the gpuStack "
        "list of the recipe step (esc goes back to it)"
    )
    conflict = "take the capture's values (--accelerator h100 --os ubuntu)"
    assert for_wizard(conflict) == "press t to take the capture's accelerator=h100, os=ubuntu"
    recapture = "recapture with --aks-gpu-pools"
    assert "with o" in for_wizard(recapture, "drift") and "(l)" in for_wizard(recapture)


def test_charts_remedy_names_the_setting() -> None:
    said = for_wizard("offline? pass --charts DIR with <component>-<version>/ chart trees")
    assert "set AICR_TUI_CHARTS" in said
