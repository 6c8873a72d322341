"""Remedies a wizard user can follow (issue 34, item 3): in the wizard a remedy names the
key, the choice or the setting that applies there, never a CLI flag the wizard cannot
take, and each remedy is said once (at 120x40 the same sentence appeared twice)."""

from __future__ import annotations

import re

import pytest

from screens.recipe import RecipeScreen
from screens.remedies import for_wizard
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
    ],
)
def test_every_cli_remedy_the_wizard_shows_is_said_in_its_terms(cli: str) -> None:
    said = for_wizard(cli)
    assert not CLI_FLAG.findall(said), said


def test_charts_remedy_names_the_setting() -> None:
    said = for_wizard("offline? pass --charts DIR with <component>-<version>/ chart trees")
    assert "set AICR_TUI_CHARTS" in said
