"""The Textual app: one factory for ``aicr-tui``, ``aicr-tui --demo``, ``serve`` and tests.

``create_app`` builds an :class:`AicrApp` holding the wizard state and the core calls
(``WizardServices``); tests inject sample data and replacement calls through it. The flow
is capture -> recipe -> bundle preview -> validation; every step and action is also in the
command palette (``:`` or ctrl+p).
"""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from aicr_tui.screens.host import PaletteCommand, WizardHost
from aicr_tui.screens.palette import WizardCommands
from aicr_tui.screens.state import WizardServices, WizardState, demo_recordings, demo_samples

if TYPE_CHECKING:
    from aicr_tui.screens.bundle_preview import BundlePreviewScreen
    from aicr_tui.screens.state import DemoSample


INTERRUPTED = 130  # the exit status after SIGINT, as a shell reports it


class AicrApp(App[int]):
    """The aicr-tui wizard."""

    TITLE = "aicr-tui"
    SUB_TITLE = "AI Cluster Runtime recipes for AKS and OKE"
    # The capture screen is the default screen, which Textual installs without loading its
    # CSS_PATH (only pushed screens get theirs), so its stylesheet is listed here.
    CSS_PATH = [
        "app.tcss",
        Path(__file__).resolve().parent / "screens" / "capture.tcss",
    ]
    COMMANDS: ClassVar[set[Any]] = {WizardCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help", key_display="?"),
        Binding(
            "colon", "command_palette", "Palette", id="app.palette", key_display=":", show=False
        ),
        Binding(
            "ctrl+p",
            "command_palette",
            "Palette",
            id="app.palette_ctrl_p",
            show=False,
            priority=True,
        ),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("g", "guide", "Guide", id="app.guide", show=False),
    ]

    def __init__(
        self,
        *,
        state: WizardState,
        services: WizardServices,
        start_screen: str | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.services = services
        self.start_screen = start_screen or "capture"
        self._first_screen_up = False
        self._interrupt_pending = False

    # -- flow ---------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        from aicr_tui.screens.capture import CaptureScreen

        return CaptureScreen()

    def on_ready(self) -> None:
        self._first_screen_up = True
        if self._interrupt_pending:
            self.exit(None, INTERRUPTED)

    def interrupt(self) -> None:
        """SIGINT: exit with 130, once the first screen is up (an exit in the middle of its
        mount leaves the screen's own mount handler querying widgets already gone)."""
        if self._first_screen_up:
            self.exit(None, INTERRUPTED)
        else:
            self._interrupt_pending = True

    def on_mount(self) -> None:
        if self.start_screen == "recipe":
            self.show_recipe()
        elif self.start_screen == "guide":
            self.action_guide()

    def _find(self, kind: type[Screen[Any]]) -> Screen[Any] | None:
        return next((s for s in self.screen_stack if isinstance(s, kind)), None)

    def show_capture(self) -> None:
        from aicr_tui.screens.capture import CaptureScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, CaptureScreen):
            self.pop_screen()

    def show_recipe(self) -> None:
        from aicr_tui.screens.recipe import RecipeScreen

        if isinstance(self.screen, RecipeScreen):
            return
        existing = self._find(RecipeScreen)
        if existing is not None:
            while self.screen is not existing:
                self.pop_screen()
            return
        self.push_screen(RecipeScreen())

    def show_bundle(self) -> None:
        recipe = self.state.recipe
        if recipe is None:
            self.notify(self.no_recipe_reason(), severity="warning")
            return
        from aicr_tui.core.services.bundle import default_override_lines
        from aicr_tui.screens.bundle_preview import BundlePreviewScreen

        # the user sees and can edit these lines (AKS: the keyed toleration)
        overrides = default_override_lines(recipe.criteria.service)
        self.push_screen(
            BundlePreviewScreen(
                recipe,
                default_output=self.state.output_dir / "bundles",
                overrides=overrides,
                deployer=self.state.deployer,  # the layout picked on the last visit
            )
        )

    def on_bundle_preview_screen_deployer_changed(
        self, message: BundlePreviewScreen.DeployerChanged
    ) -> None:
        self.state.deployer = message.deployer

    def action_help_quit(self) -> None:
        """ctrl+c quits, as in k9s and most terminal programs (Textual only tells how to
        quit). In a text field ctrl+c copies the selection: the field handles it first."""
        self.exit()

    def on_bundle_preview_screen_written(self, message: BundlePreviewScreen.Written) -> None:
        self.state.bundle_dir = message.out_dir
        from aicr_tui.screens.markup import escape_markup

        self.notify(
            f"Bundle written to {escape_markup(message.out_dir)}. esc then v: replay validation"
        )

    def no_recipe_reason(self) -> str:
        """Why ``b`` and ``v`` have no recipe to use, with the key that fixes it: "pick a
        capture" was said even with a capture loaded and its verdict failing."""
        from aicr_tui.screens.recipe import RecipeScreen

        state = self.state
        if state.verdict is None:
            if state.capture is None:
                return (
                    "No recipe yet: load a capture (enter on a sample, o: open a file), "
                    "then n: the recipe step."
                )
            return "No recipe yet: n: the recipe step qualifies the selection."
        screen = self._find(RecipeScreen)
        target = screen.switch_target() if isinstance(screen, RecipeScreen) else None
        gpu_stack = state.profile_value or "its default"
        base = f"The verdict fails (gpuStack={gpu_stack}): there is no recipe to use"
        if target is not None:
            return f"{base}; s: switch to gpuStack={target}, which qualifies."
        return f"{base}; g: the troubleshooting guide says what to change."

    def show_validation(self, recording: Path | None = None) -> None:
        """Replay a recorded run (the one named, or in the demo the one recorded for this
        recipe), else validate live.

        Without a qualified recipe ``v`` refuses as ``b`` does. The demo plays the recording
        whose recipe has the selection's criteria and profile value; when none has, it plays
        another and says plainly that the data was recorded for another recipe. A live run
        uses the qualified recipe and the current snapshot, and the kubeconfig and context
        of the last live capture (the default kube config otherwise).
        """
        note = ""
        if recording is None:
            if self.state.recipe is None:
                self.notify(self.no_recipe_reason(), severity="warning")
                return
            if self.state.demo and self.state.recordings:
                from aicr_tui.core.services.replay import choose_recording

                choice = choose_recording(self.state.recordings, self.state.recipe)
                if choice is None:
                    self.notify("No readable demo recording to replay.", severity="error")
                    return
                recording = choice.path
                if not choice.matches:
                    note = (
                        f"recorded demo data for another recipe ({choice.recorded_for}), "
                        "not this selection"
                    )
                    self.notify(f"Showing {note}.", severity="warning", timeout=10)
        from aicr_tui.screens.validate_dashboard import (
            LiveRunSource,
            ReplaySource,
            ValidationDashboardScreen,
        )

        source: ReplaySource | LiveRunSource
        if recording is not None:
            source = ReplaySource(
                recording, speed=self.state.replay_speed, label=recording.name, note=note
            )
        elif self.state.recipe is not None:
            source = LiveRunSource(
                self.state.recipe,
                snapshot=self.state.snapshot,
                kubeconfig=self.state.kubeconfig,
                context=self.state.kube_context,
                label="live run",
            )
        else:
            self.notify(
                "Nothing to validate yet: qualify a recipe first (or replay a recording).",
                severity="warning",
            )
            return
        self.push_screen(ValidationDashboardScreen(source, report_dir=self.state.reports_dir))

    # -- actions ------------------------------------------------------------------------
    def action_help(self) -> None:
        from aicr_tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen.for_screen(self.screen))

    def palette_commands(self) -> list[PaletteCommand]:
        """The palette's list, built fresh each time so it follows the wizard state."""
        from aicr_tui.core.recipe.troubleshooting import GUIDE
        from aicr_tui.screens.capture import CaptureScreen
        from aicr_tui.screens.recipe import RecipeScreen

        def on_screen(kind: type[Any], action: str) -> Callable[[], Any]:
            def run() -> None:
                if kind is RecipeScreen:
                    self.show_recipe()
                elif kind is CaptureScreen:
                    self.show_capture()

                async def on_the_new_screen() -> None:
                    await self.screen.run_action(action)

                self.call_later(on_the_new_screen)

            return run

        cmds = [
            PaletteCommand(
                "Go to capture", "Step 1: load or fetch provider captures", self.show_capture
            ),
            PaletteCommand(
                "Go to recipe", "Step 2: selection and live qualification", self.show_recipe
            ),
            PaletteCommand(
                "Bundle preview", "Step 3: components, values, overrides, write", self.show_bundle
            ),
            PaletteCommand(
                "Validate",
                "Step 4: replay the recorded run (demo) or validate the recipe live",
                self.show_validation,
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
                self.action_guide,
            ),
            PaletteCommand("Help", "Every key binding on this screen", self.action_help),
            PaletteCommand("Quit", "Leave aicr-tui", self.exit),
        ]
        for sample in self.state.samples:
            cmds.append(
                PaletteCommand(
                    f"Load sample: {sample.title}",
                    f"Demo capture ({sample.key})",
                    partial(self.load_sample, sample),
                )
            )
        for rec in self.state.recordings:
            cmds.append(
                PaletteCommand(
                    f"Replay validation: {rec.name}",
                    "Recorded run",
                    partial(self.show_validation, rec),
                )
            )
        for entry in GUIDE:
            cmds.append(
                PaletteCommand(
                    f"Guide: {entry.title}",
                    entry.cause[:90],
                    partial(self.action_guide, entry.id),
                    search_text=entry.text(),
                )
            )
        return cmds

    def action_guide(self, entry_id: str = "") -> None:
        from aicr_tui.screens.troubleshoot import TroubleshootScreen

        if isinstance(self.screen, TroubleshootScreen):
            if entry_id:
                self.screen.select_entry(entry_id)
            return
        self.push_screen(TroubleshootScreen(entry_id or None))

    def load_sample(self, sample: DemoSample) -> None:
        from aicr_tui.screens.capture import CaptureScreen

        self.show_capture()
        screen = self._find(CaptureScreen)
        if isinstance(screen, CaptureScreen):
            screen.load_sample(sample)


def as_host(app: AicrApp) -> WizardHost:
    """AicrApp is a WizardHost (mypy checks the structure here; screens only know the host)."""
    return app


def create_app(
    *,
    demo: bool = False,
    services: WizardServices | None = None,
    start_screen: str | None = None,
    state: WizardState | None = None,
) -> AicrApp:
    """Build the wizard. ``demo`` lists the shipped samples and the recorded validation run."""
    if state is None:
        state = WizardState(demo=demo)
        if demo:
            state.samples = demo_samples()
            state.recordings = demo_recordings()
    return AicrApp(state=state, services=services or WizardServices(), start_screen=start_screen)


def freeze_startup_heap() -> None:
    """Move everything alive now (modules, classes, the app and its state) out of the
    garbage collector's reach: it lives as long as the process.

    Otherwise the first full collection, which the first screen's allocations trigger,
    rescans all of it before the screen is interactive (30-80 ms of cold start measured
    with gc.callbacks, bench/wizard_bench.py); the dashboard does the same at mount.
    Objects made later are collected as usual.
    """
    gc.freeze()


def run_wizard(demo: bool = False) -> int:
    """Entry point for ``aicr-tui`` with no subcommand; the exit status of the session.

    A SIGINT (Ctrl-C before the terminal is in raw mode, or ``kill -INT``) while the app
    runs asks it to exit with 130, so Textual restores the terminal and stops its input
    thread; raising KeyboardInterrupt in the middle of its start-up would leave both (and
    the process would never end). Before the event loop runs, it is a KeyboardInterrupt."""
    app = create_app(demo=demo)
    freeze_startup_heap()

    def interrupt(signum: int, frame: object) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise KeyboardInterrupt from None
        loop.call_soon_threadsafe(app.interrupt)

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        result = app.run()
    finally:
        signal.signal(signal.SIGINT, previous)
    if app.return_code == INTERRUPTED:
        raise KeyboardInterrupt
    return int(result or 0)
