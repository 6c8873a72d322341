"""A select whose value ← and → change in place: one key per change, no list to open.

Choosing in a Textual Select takes three keys (enter opens the list, an arrow moves, enter
chooses) and the list opening and closing moves the focus twice, each time restyling,
re-laying out the screen and rebuilding the footer. On the recipe screen every change of a
criterion re-qualifies the selection, so ← and → step the focused select to the previous or
next value (wrapping around) and the verdict follows that one key. Enter, space, ↑ and ↓
still open the list for browsing (type a few letters there to jump to a value).

The select is a whole one-line form row: its label, its value and the arrow are drawn by
one widget (Textual's Select shows the value with three widgets, and each row had a label
and a container besides). A new value repaints that line alone, without the layout of the
whole screen a Select asks for (the row's height is fixed, so nothing can move), and every
frame the recipe screen paints has fewer widgets to go through.

It is built from Textual's public widgets (a drawn line and an OptionList), not from
Select's private parts, and looks and behaves as the compact Select it replaced.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option
from textual.widgets.select import InvalidSelectValueError

from aicr_tui.screens.widgets.drawn_line import DrawnLine
from aicr_tui.screens.widgets.kept_lines import KeptLines

# One footer entry for both keys: "←→ Value".
_VALUE_KEYS = Binding.Group("Value", compact=True)
LABEL_WIDTH = 13  # " accelerator " : the widest criterion name, a blank either side
_SEARCH_RESET = 0.7  # seconds without a key before typing in the list starts a new search


class ValueRow(DrawnLine):
    """The row as one line: `` label  value  ▼`` (▲ while the list is open)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"value-row--label", "value-row--arrow"}
    DEFAULT_CSS = """
    ValueRow {
        width: 1fr;
        height: 1;
        padding: 0 1 0 0;
        color: $foreground;
        background: $surface;
        pointer: pointer;
        &:ansi {
            color: ansi_default;
            background: ansi_default;
        }
        /* the label sits on the form, not on the select's surface */
        & > .value-row--label {
            color: $foreground;
            background: $background;
        }
        & > .value-row--arrow {
            color: $foreground 50%;
        }
    }
    """

    def __init__(self, label: str) -> None:
        super().__init__()
        self.row_label = label

    def look_up_styles(self) -> tuple[Style, ...]:
        base = self.rich_style
        return (
            base,
            base + self.get_component_rich_style("value-row--label"),
            base + self.get_component_rich_style("value-row--arrow"),
        )

    def draw_line(self, width: int) -> Strip:
        base, label_style, arrow_style = self.line_styles()
        select = self.parent
        expanded = isinstance(select, RowSelect) and select.expanded
        shown = select.prompt_of(select.value) if isinstance(select, RowSelect) else ""
        value = Text.from_markup(shown)
        value.end = ""
        room = max(width - LABEL_WIDTH - 2, 0)
        value.truncate(room, overflow="ellipsis", pad=True)
        segments = [
            # The blank before the label has no text colour, so the label's own text
            # starts after it (an SVG export would otherwise start the label with it).
            Segment(" ", Style(bgcolor=label_style.bgcolor)),
            Segment(self.row_label.ljust(LABEL_WIDTH - 1), label_style),
            *Segment.apply_style(value.render(self.app.console), base),
            Segment(" ", base),
            Segment("▲" if expanded else "▼", arrow_style),
        ]
        return Strip(segments).crop_extend(0, width, base)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if isinstance(self.parent, RowSelect):
            self.parent.expanded = not self.parent.expanded


class ValueList(OptionList):
    """The open list of values, over the screen under the row's value. Typing jumps to
    the first value that contains what was typed (earliest match first)."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "dismiss", "Dismiss menu")]
    ALLOW_SELECT = False

    @dataclass
    class Dismissed(Message):
        """The list is to close; ``lost_focus`` when it closes because the focus left."""

        lost_focus: bool = False

    def __init__(self) -> None:
        super().__init__(compact=True)
        self._query = ""
        self._typed_at = 0.0

    def action_dismiss(self) -> None:
        self.post_message(self.Dismissed())

    def on_blur(self, _event: events.Blur) -> None:
        self.post_message(self.Dismissed(lost_focus=True))
        self.suppress_click()

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return character is not None and character.isprintable()

    def on_key(self, event: events.Key) -> None:
        if event.character is None or not event.is_printable:
            return
        event.stop()
        event.prevent_default()
        now = time.monotonic()
        if now - self._typed_at > _SEARCH_RESET:
            self._query = ""
        self._typed_at = now
        self._query += event.character.lower()
        best: tuple[int, int] | None = None  # (where the text matched, option index)
        for index in range(self.option_count):
            prompt = self.get_option_at_index(index).prompt
            plain = prompt.plain if isinstance(prompt, Text) else str(prompt)
            at = plain.lower().find(self._query)
            if at != -1 and (best is None or at < best[0]):
                best = (at, index)
        if best is not None:
            self.highlighted = best[1]
            self.scroll_to_highlight()

    @on(OptionList.OptionHighlighted)
    def _keep_highlight(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()  # moving through the list chooses nothing


class RowSelect(Vertical, KeptLines, can_focus=True):
    """A compact, never blank select of strings drawn as one labelled form row; enter,
    space, ↑ and ↓ open the list of its values."""

    DEFAULT_CSS = f"""
    RowSelect {{
        height: auto;
        color: $foreground;
        &:focus > ValueRow {{
            background-tint: $foreground 5%;
        }}
        /* the list opens under the values, not under the label */
        & > ValueList {{
            width: 1fr;
            display: none;
            height: auto;
            max-height: 12;
            overlay: screen;
            constrain: none inside;
            margin-left: {LABEL_WIDTH};
            color: $foreground;
            border: tall $border-blurred;
            background: $surface;
            &:focus {{
                background-tint: $foreground 5%;
            }}
            & > .option-list--option {{
                padding: 0 1;
            }}
        }}
        &.-expanded > ValueList {{
            display: block;
        }}
    }}
    """

    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,down,space,up", "show_list", "Show menu", show=False),
    ]

    expanded: var[bool] = var(False, init=False)
    """True while the list of values is open."""
    value: var[str] = var("", init=False)
    """The chosen value (one of the options' values)."""

    class Changed(Message):
        """The value changed (by a key, the list or the program)."""

        def __init__(self, select: RowSelect, value: str) -> None:
            super().__init__()
            self.select = select
            self.value = value

        @property
        def control(self) -> RowSelect:
            return self.select

    def __init__(
        self, options: list[tuple[str, str]], *, label: str, id: str | None = None
    ) -> None:
        """``options``: (markup prompt, value) pairs, at least one; ``label``: the row's
        name. The first option is chosen until something else is."""
        super().__init__(id=id)
        self.row_label = label
        self._options = self._checked(options)

    @staticmethod
    def _checked(options: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        if not options:
            raise ValueError("a CycleSelect needs at least one option")
        return tuple(options)

    @property
    def options(self) -> tuple[tuple[str, str], ...]:
        """The (markup prompt, value) pairs, in order."""
        return self._options

    @property
    def values(self) -> list[str]:
        return [value for _, value in self._options]

    def prompt_of(self, value: str) -> str:
        """The prompt shown for ``value`` (empty when it is not an option)."""
        return next((prompt for prompt, v in self._options if v == value), "")

    def compose(self) -> ComposeResult:
        yield ValueRow(self.row_label)
        yield ValueList()

    def on_mount(self) -> None:
        self._fill_list()
        self.value = self._options[0][1]

    def _fill_list(self) -> None:
        values = self.query_one(ValueList)
        values.clear_options()
        values.add_options([Option(prompt) for prompt, _ in self._options])

    def set_options(self, options: list[tuple[str, str]]) -> None:
        """Offer ``options`` instead; the first one is chosen (as a Select does)."""
        self._options = self._checked(options)
        if self.is_mounted:
            self._fill_list()
        self.value = self._options[0][1]
        self._redraw_row()  # the same value may have a new prompt

    def validate_value(self, value: str) -> str:
        if value not in self.values:
            raise InvalidSelectValueError(f"Illegal select value {value!r}.")
        return value

    def watch_value(self, value: str) -> None:
        if not self.is_mounted:
            return
        self.query_one(ValueList).highlighted = self.values.index(value)
        self._redraw_row()
        self.post_message(self.Changed(self, value))

    def _redraw_row(self) -> None:
        for row in self.query(ValueRow):
            row.redraw()

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self._redraw_row()  # the arrow points up while the list is open
        if expanded:
            values = self.query_one(ValueList)
            values.focus(scroll_visible=False)
            if self.value in self.values:
                values.highlighted = self.values.index(self.value)
                values.scroll_to_highlight()

    def action_show_list(self) -> None:
        self.expanded = True

    @on(ValueList.Dismissed)
    def _dismissed(self, event: ValueList.Dismissed) -> None:
        event.stop()
        self.expanded = False
        if not event.lost_focus:
            self.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        value = self._options[event.option_index][1]
        if value != self.value:
            self.value = value
        self.focus()
        self.expanded = False


class CycleSelect(RowSelect):
    """A RowSelect whose value ← / → step in place."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous value", id="select.previous", group=_VALUE_KEYS),
        Binding("right", "step(1)", "Next value", id="select.next", group=_VALUE_KEYS),
    ]

    def __init__(
        self, options: list[tuple[str, str]], *, label: str, id: str | None = None
    ) -> None:
        super().__init__(options, label=label, id=id)
        # Values that mean the same as another (the default option stands for the value it
        # resolves to): one key press never lands on a value that changes nothing.
        self.same_as: dict[str, str] = {}

    def action_step(self, step: int) -> None:
        """Set the value ``step`` options away from the current one, wrapping around and
        passing over options that mean the same as the current one."""
        values = self.values
        if self.expanded or len(values) < 2:
            return
        index = values.index(self.value) if self.value in values else -1
        current = self.same_as.get(self.value, self.value)
        for offset in range(1, len(values)):
            candidate = values[(index + step * offset) % len(values)]
            if self.same_as.get(candidate, candidate) != current:
                self.value = candidate
                return
