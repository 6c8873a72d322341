"""Command palette entries for the bundle preview and validation dashboard.

Each screen lists its own actions in ``PALETTE_ACTIONS`` (title, help, action name); the
provider offers them while that screen is showing, so every key binding of the screen is
also reachable from ``:`` / ctrl+p without remembering the key.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScreenActionsProvider(Provider):
    """Offer the current screen's ``PALETTE_ACTIONS``."""

    def _actions(self) -> list[tuple[str, str, str]]:
        return list(getattr(self.screen, "PALETTE_ACTIONS", ()))

    async def discover(self) -> Hits:
        for title, help_text, action in self._actions():
            yield DiscoveryHit(title, partial(self.screen.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._actions():
            score = max(matcher.match(title), matcher.match(help_text) * 0.8)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self.screen.run_action, action),
                    help=help_text,
                )
