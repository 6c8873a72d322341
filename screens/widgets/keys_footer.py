"""The footer every wizard step shows: Textual's Footer, also before the app has focus.

Textual's Footer lists no key until the app has focus. In a browser (``aicr-tui serve``,
textual-serve) the app starts without it: the web driver reports the page blurred until
the terminal is clicked, so a newcomer saw every step with an empty footer. The keys do
not depend on focus, so this footer shows them either way.

Textual rebuilds the whole footer (removes and mounts every key, styles and lays them out)
whenever a binding changes. On the recipe screen ``s`` comes and goes with the verdict,
and that rebuild took longer than the verdict itself: a second key pressed at a person's
pace waited for it. When the change is only keys of their own (not in a group) appearing
or vanishing, or turning enabled or disabled, this footer mounts, removes or dims just
those keys.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Per action, as the footer lays it out: (action, binding, enabled, tooltip).
_Entry = tuple[str, Binding, bool, str]


def _entries(screen: Screen[object]) -> list[_Entry]:
    """The footer's keys in order: the first shown binding of each action (as Footer)."""
    seen: dict[str, _Entry] = {}
    for _, binding, enabled, tooltip in screen.active_bindings.values():
        if binding.show and binding.action not in seen:
            seen[binding.action] = (binding.action, binding, enabled, tooltip)
    return list(seen.values())


def _layout_key(entry: _Entry) -> tuple[str, str, str, object]:
    _, binding, _, _ = entry
    return (binding.action, binding.key, binding.description, binding.group)


class KeysFooter(Footer):
    """A Footer that lists the screen's keys whether or not the app has focus."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)
        self._laid_out: list[_Entry] | None = None

    def compose(self) -> ComposeResult:
        self._laid_out = _entries(self.screen) if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not (self.is_attached and screen is self.screen):
            return
        entries = _entries(screen)
        try:
            # The keys mounted here bind to this footer's reactives (as in compose).
            with self._context():
                done = self._laid_out is not None and self._update_in_place(entries)
        except Exception:
            done = False
            raise  # a signal's callback: logged by Textual; the rebuild below still runs
        finally:
            if not done:
                self.call_after_refresh(self.recompose)

    def _update_in_place(self, entries: list[_Entry]) -> bool:
        """Bring the footer from ``self._laid_out`` to ``entries`` by mounting, removing
        and dimming single keys; False (nothing changed) when that cannot do it."""
        assert self._laid_out is not None
        old = {_layout_key(e): e for e in self._laid_out}
        new = {_layout_key(e): e for e in entries}
        kept = [k for k in new if k in old]
        if kept != [k for k in old if k in new]:
            return False  # reordered
        changed = [e for k, e in {**old, **new}.items() if (k in old) != (k in new)]
        if any(binding.group is not None for _, binding, _, _ in changed):
            return False  # a group's keys are laid out together
        widgets = self._key_widgets()
        if any(_layout_key(e) not in widgets for e in self._laid_out):
            return False
        for key in old.keys() - new.keys():
            widgets.pop(key).remove()
        for index, (key, entry) in enumerate(new.items()):
            widget = widgets.get(key)
            action, binding, enabled, tooltip = entry
            if widget is None:
                after = [widgets[k] for k in list(new)[index + 1 :] if k in widgets]
                widget = FooterKey(
                    binding.key,
                    self.app.get_key_display(binding),
                    binding.description,
                    action,
                    disabled=not enabled,
                    tooltip=tooltip,
                ).data_bind(compact=Footer.compact)
                self.mount(widget, before=after[0] if after else None)
                widgets[key] = widget
            elif isinstance(widget, FooterKey) and widget.has_class("-disabled") == enabled:
                widget._disabled = not enabled  # a click on a disabled key rings the bell
                widget.set_class(not enabled, "-disabled")
        self._laid_out = entries
        return True

    def _key_widgets(self) -> dict[tuple[str, str, str, object], Widget]:
        """The footer's widget for each laid-out key: its FooterKey, or the group's
        container for a grouped key (never mounted or removed alone)."""
        found: dict[tuple[str, str, str, object], Widget] = {}
        by_action = {e[0]: _layout_key(e) for e in self._laid_out or ()}
        for child in self.children:
            if isinstance(child, FooterKey) and child.action in by_action:
                found[by_action[child.action]] = child
            else:
                for key in child.query(FooterKey):
                    if key.action in by_action:
                        found.setdefault(by_action[key.action], child)
        return found
