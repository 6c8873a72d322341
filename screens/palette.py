"""Command palette provider: every wizard action, every demo sample and the whole guide.

Opened with ``:`` or ctrl+p. The guide entries are searchable by any word of their
symptom, cause or remedy (so typing ``FailedCreatePodSandBox`` or ``revert`` finds them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from aicr_tui.app import AicrApp


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    run: Callable[[], Any]
    search_text: str = ""


def wizard_commands(app: AicrApp) -> list[PaletteCommand]:
    """The palette's list, built fresh each time so it follows the wizard state."""
    from core.recipe.troubleshooting import GUIDE
    from screens.capture import CaptureScreen
    from screens.recipe import RecipeScreen

    def on_screen(kind: type[Any], action: str) -> Callable[[], Any]:
        def run() -> None:
            if kind is RecipeScreen:
                app.show_recipe()
            elif kind is CaptureScreen:
                app.show_capture()

            async def on_the_new_screen() -> None:
                await app.screen.run_action(action)

            app.call_later(on_the_new_screen)

        return run

    cmds = [
        PaletteCommand(
            "Go to capture", "Step 1: load or fetch provider captures", app.show_capture
        ),
        PaletteCommand("Go to recipe", "Step 2: selection and live qualification", app.show_recipe),
        PaletteCommand(
            "Bundle preview", "Step 3: components, values, overrides, write", app.show_bundle
        ),
        PaletteCommand(
            "Validate",
            "Step 4: replay the recorded run (demo) or validate the recipe live",
            app.show_validation,
        ),
        PaletteCommand(
            "Open capture file",
            "Type a path to a provider dump or snapshot",
            on_screen(CaptureScreen, "open_path"),
        ),
        PaletteCommand(
            "Browse for capture file",
            "Pick a dump in a directory tree",
            on_screen(CaptureScreen, "browse"),
        ),
        PaletteCommand(
            "Fetch live capture",
            "Azure / OCI / Kubernetes through their SDKs",
            on_screen(CaptureScreen, "fetch_live"),
        ),
        PaletteCommand(
            "Switch gpuStack value",
            "Select the other profile value and re-qualify",
            on_screen(RecipeScreen, "switch_profile"),
        ),
        PaletteCommand(
            "Show profile diff",
            "Values the other gpuStack value would change",
            on_screen(RecipeScreen, "toggle_diff"),
        ),
        PaletteCommand(
            "Show recapture command",
            "The commands that capture the missing readings",
            on_screen(RecipeScreen, "recapture"),
        ),
        PaletteCommand(
            "Troubleshooting guide",
            "Symptoms, causes and remedies from the briefs",
            app.action_guide,
        ),
        PaletteCommand("Help", "Every key binding on this screen", app.action_help),
        PaletteCommand("Quit", "Leave aicr-tui", app.exit),
    ]
    for sample in app.state.samples:
        cmds.append(
            PaletteCommand(
                f"Load sample: {sample.title}",
                f"Demo capture ({sample.key})",
                partial(app.load_sample, sample),
            )
        )
    for rec in app.state.recordings:
        cmds.append(
            PaletteCommand(
                f"Replay validation: {rec.name}", "Recorded run", partial(app.show_validation, rec)
            )
        )
    for entry in GUIDE:
        cmds.append(
            PaletteCommand(
                f"Guide: {entry.title}",
                entry.cause[:90],
                partial(app.action_guide, entry.id),
                search_text=entry.text(),
            )
        )
    return cmds


class WizardCommands(Provider):
    """Fuzzy search over the wizard's commands; guide entries also match on their words."""

    def _commands(self) -> list[PaletteCommand]:
        from aicr_tui.app import AicrApp

        app = self.app
        return wizard_commands(app) if isinstance(app, AicrApp) else []

    async def discover(self) -> Hits:
        for cmd in self._commands():
            if not cmd.title.startswith("Guide: "):
                yield DiscoveryHit(cmd.title, cmd.run, help=cmd.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        words = query.lower().split()
        for cmd in self._commands():
            score = matcher.match(cmd.title)
            if (
                score <= 0
                and cmd.search_text
                and words
                and all(w in cmd.search_text for w in words)
            ):
                score = 0.5
            if score > 0:
                yield Hit(
                    score, matcher.highlight(cmd.title), cmd.run, text=cmd.title, help=cmd.help
                )
