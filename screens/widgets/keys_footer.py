"""The footer every wizard step shows: Textual's Footer, also before the app has focus.

Textual's Footer lists no key until the app has focus. In a browser (``aicr-tui serve``,
textual-serve) the app starts without it: the web driver reports the page blurred until
the terminal is clicked, so a newcomer saw every step with an empty footer. The keys do
not depend on focus, so this footer shows them either way.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A Footer that lists the screen's keys whether or not the app has focus."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)
