"""The footer every wizard step shows: the screen's keys on one line, drawn by one widget.

Textual's Footer is a row of widgets, one per key, rebuilt (every key removed, mounted,
styled and laid out again) whenever a binding changes, and it lists no key until the app
has focus. Both hurt here:

- On the recipe screen ``s`` comes and goes with the verdict and the focus moves when a
  select's list opens and closes; each change laid out the whole screen and repainted it,
  which took longer than the verdict itself.
- In a browser (``aicr-tui serve``, textual-serve) the app starts without focus, so a
  newcomer saw every step with an empty footer.

``KeysFooter`` draws the same line Textual's Footer draws (same spacing and the same
``$footer-*`` theme colours; a key group such as ``←→ Value`` as one entry; a disabled key
dimmed), whether or not the app has focus. A change of keys repaints this one line: the
footer's height never changes, so nothing else moves. A click on a key presses it (a
disabled key rings the bell, as in Textual's Footer) and hovering a key highlights it and
shows its tooltip.
"""

from __future__ import annotations

from itertools import groupby
from typing import ClassVar, NamedTuple

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.strip import Strip

from aicr_tui.screens.widgets.drawn_line import DrawnLine


class FooterEntry(NamedTuple):
    """One entry of the footer: a key, or a group's keys under one description."""

    keys: tuple[str, ...]  # the keys a click presses (the first one)
    key_displays: tuple[str, ...]  # what the footer shows for each key
    description: str
    enabled: bool
    tooltip: str
    grouped: bool  # a group: its keys side by side, then the group's description
    compact: bool  # a compact group: no blank between its keys

    @property
    def key_display(self) -> str:
        """The keys as the footer shows them: "s", "←→", "v m c f k"."""
        return ("" if self.compact else " ").join(self.key_displays)


def footer_entries(screen: Screen[object]) -> list[FooterEntry]:
    """The footer's entries in order, as Textual's Footer lays them out: the first shown
    binding of each action; consecutive actions of one group (more than one) together."""
    app = screen.app
    seen: dict[str, tuple[Binding, bool, str]] = {}
    for _, binding, enabled, tooltip in screen.active_bindings.values():
        if binding.show and binding.action not in seen:
            seen[binding.action] = (binding, enabled, tooltip)
    entries: list[FooterEntry] = []
    for group, members in groupby(seen.values(), lambda member: member[0].group):
        bindings = list(members)
        if group is not None and len(bindings) > 1:
            entries.append(
                FooterEntry(
                    tuple(b.key for b, _, _ in bindings),
                    tuple(app.get_key_display(b) for b, _, _ in bindings),
                    group.description,
                    any(enabled for _, enabled, _ in bindings),
                    "; ".join(tooltip or b.description for b, _, tooltip in bindings),
                    True,
                    group.compact,
                )
            )
            continue
        for binding, enabled, tooltip in bindings:
            entries.append(
                FooterEntry(
                    (binding.key,),
                    (app.get_key_display(binding),),
                    binding.description,
                    enabled,
                    tooltip,
                    False,
                    False,
                )
            )
    return entries


class KeysFooter(DrawnLine, can_focus=False):
    """The screen's keys on one line, with or without app focus (module docstring)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keys-footer--key",
        "keys-footer--description",
        "keys-footer--item",
        "keys-footer--hover",
    }
    # The colours and spacing of Textual's Footer and FooterKey.
    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .keys-footer--item {
            background: $footer-item-background;
        }
        & > .keys-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .keys-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .keys-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._entries: list[FooterEntry] = []
        self._spans: list[tuple[int, int]] = []  # each entry's columns on the line
        self._hover: int | None = None

    @property
    def entries(self) -> list[FooterEntry]:
        """What the footer shows, in order."""
        return list(self._entries)

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Each entry's columns on the line as last drawn: (first, past the last)."""
        return list(self._spans)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not (self.is_attached and screen is self.screen):
            return
        entries = footer_entries(screen)
        if entries != self._entries:
            self._entries = entries
            self._hover = None
            self.redraw()

    # -- drawing ------------------------------------------------------------------------
    def draw_line(self, width: int) -> Strip:
        return self._draw().crop_extend(0, width, self.line_styles()[0])

    def look_up_styles(self) -> tuple[Style, ...]:
        style = self.get_component_rich_style
        base = self.rich_style
        item = base + style("keys-footer--item")
        return (
            base,
            item + style("keys-footer--key"),
            item + style("keys-footer--description"),
            base + style("keys-footer--description"),  # a group's label: no item colour
            style("keys-footer--hover"),
            # The blanks around a group are the footer's own background (Textual's
            # margins): no text style, so they never join the text beside them.
            Style.from_color(bgcolor=base.bgcolor),
        )

    def _draw(self) -> Strip:
        _, key, description, label, hovered, gap = self.line_styles()
        segments: list[Segment] = []
        spans: list[tuple[int, int]] = []
        at = 0
        for index, entry in enumerate(self._entries):
            extra = Style(dim=True) if not entry.enabled else Style()
            if index == self._hover:
                extra += hovered
            if entry.grouped:
                # Textual's KeyGroup: one blank, the keys (a blank between each unless the
                # group is compact), one blank, then the description and one blank.
                parts = [(" ", gap)]
                for number, shown in enumerate(entry.key_displays):
                    if number and not entry.compact:
                        parts.append((" ", gap))
                    parts.append((shown, key + extra))
                parts += [(" ", gap), (entry.description, label + extra), (" ", gap)]
            else:
                parts = [(f" {entry.key_display} ", key + extra)]
                if entry.description:
                    parts.append((f"{entry.description} ", description + extra))
            start = at
            for text, text_style in parts:
                segments.append(Segment(text, text_style))
                at += cell_len(text)
            spans.append((start, at))
        self._spans = spans
        return Strip(segments, at)

    # -- mouse --------------------------------------------------------------------------
    def _entry_at(self, x: int) -> int | None:
        return next((i for i, (a, b) in enumerate(self._spans) if a <= x < b), None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        index = self._entry_at(event.x)
        if index is None:
            return
        entry = self._entries[index]
        if entry.enabled:
            self.app.simulate_key(entry.keys[0])
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        index = self._entry_at(event.x)
        if index != self._hover:
            self._hover = index
            self.tooltip = self._entries[index].tooltip or None if index is not None else None
            self.redraw()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.redraw()
