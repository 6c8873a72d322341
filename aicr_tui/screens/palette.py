"""The command palette provider: every wizard action, every demo sample, the whole guide
and the current screen's actions.

Opened with ``:`` or ctrl+p. The guide entries are searchable by any word of their
symptom, cause or remedy (so typing ``FailedCreatePodSandBox`` or ``revert`` finds them).
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from aicr_tui.screens.host import PaletteCommand, WizardHost


class WizardCommands(Provider):
    """The app's one palette provider: the host's commands (fresh each time, so they follow
    the wizard state) and the current screen's ``PALETTE_ACTIONS`` (title, help, action),
    so every key binding of a screen is also reachable from ``:`` / ctrl+p. Guide entries
    also match on their words."""

    def _commands(self) -> list[PaletteCommand]:
        app = self.app
        cmds = app.palette_commands() if isinstance(app, WizardHost) else []
        screen = self.screen
        for title, help_text, action in getattr(screen, "PALETTE_ACTIONS", ()):
            cmds.append(
                PaletteCommand(
                    title,
                    help_text,
                    partial(screen.run_action, action),
                    search_text=f"{title} {help_text}".lower(),
                )
            )
        return cmds

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
