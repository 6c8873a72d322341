"""Read a screen back from the compositor and say what it cuts.

``screen_lines(app)`` is the text a terminal shows (the cells the compositor renders, as
``export_screenshot`` does, without the styles). ``cuts(app, expected)`` compares it with
what the widgets hold:

- every visible DataTable row: each cell's text is whole inside its column (wrapped lines
  count, missing characters do not), the columns fit the table's width and each header
  label is whole; ``check_screen`` scrolls every table through, so rows below the fold
  are checked too;
- every TextPane line (the constraint list, the troubleshooting text) fits the pane and
  shows as the pane holds it; ``check_screen`` scrolls every pane through too;
- every Tree line shows its whole label, every tab its label (an Input scrolls its value:
  a step that must show one whole names it in ``expected``);
- every Footer key and its description are on the footer line;
- every Select shows its whole selected label;
- every Static/Label outside a scrolling pane shows its whole text;
- the Header shows its whole title and sub-title;
- an ellipsis on screen is a cut unless the widget under it holds one itself;
- each of ``expected`` (real strings from the samples) is on screen whole, inside one
  widget, however it wraps.

Whitespace is ignored in the comparisons: a wrap may replace a space by a line break.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import DataTable, Header, Select, Static, Tree

from aicr_tui.screens.widgets.cycle_select import RowSelect
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.text_pane import TextPane

ELLIPSIS = "…"


def _painted(app: Any) -> Console:
    """A console that recorded the whole screen as the compositor paints it now."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console


def screen_lines(app: Any) -> list[str]:
    """The screen's text, one string per row, every row as wide as the screen."""
    width, height = app.size
    lines = _painted(app).export_text().split("\n")[:height]
    return [line.ljust(width) for line in lines]


def styled_screen(app: Any) -> str:
    """The whole screen as the compositor paints it now, colours and all (ANSI)."""
    return _painted(app).export_text(styles=True)


def squash(text: str) -> str:
    return "".join(text.split())


def plain(value: Any) -> str:
    if isinstance(value, Text):
        return value.plain
    if isinstance(value, str):
        return Text.from_markup(value).plain
    return str(value)


def block(lines: list[str], x: int, y: int, width: int, height: int) -> list[str]:
    return [line[max(x, 0) : x + width] for line in lines[max(y, 0) : y + height]]


def _scrolls(widget: Widget) -> bool:
    """Whether the widget sits in a pane that scrolls (its text may be scrolled to)."""
    node = widget.parent
    while isinstance(node, Widget):
        if isinstance(node, ScrollableContainer):
            return True
        node = node.parent
    return False


def _visible(widget: Widget) -> bool:
    return widget.display and widget.region.area > 0 and widget.visible


def _table_cuts(table: DataTable[Any], lines: list[str], seen: set[str] | None = None) -> list[str]:
    """Cuts in the table's visible rows; the text of every cell shown whole goes to ``seen``."""
    problems: list[str] = []
    name = f"#{table.id}" if table.id else "DataTable"
    region = table.scrollable_content_region
    widths = [c.get_render_width(table) for c in table.ordered_columns]
    if sum(widths) > region.width:
        problems.append(f"{name}: columns need {sum(widths)} cells, the table has {region.width}")
    header = table.header_height if table.show_header else 0
    scroll_y, scroll_x = int(table.scroll_y), int(table.scroll_x)
    if header:
        x = -scroll_x
        for width, column in zip(widths, table.ordered_columns, strict=True):
            label = squash(plain(column.label))
            shown = squash("".join(block(lines, region.x + x, region.y, width, header)))
            if label and label not in shown:
                problems.append(f"{name} header: {plain(column.label)!r} shows as {shown!r}")
            x += width
    top = header  # content row of the next table row, before scrolling
    for index in range(table.row_count):
        row_key = table._row_locations.get_key(index)
        height = table.rows[row_key].height
        y = top - scroll_y
        top += height
        if y < header or y + height > region.height:
            continue  # scrolled out of view: reachable, not cut
        x = -scroll_x
        for width, cell in zip(widths, table.get_row_at(index), strict=False):
            text = squash(plain(cell))
            shown = squash("".join(block(lines, region.x + x, region.y + y, width, height)))
            if text and text not in shown:
                problems.append(f"{name} row {index}: {plain(cell)!r} shows as {shown!r}")
            elif seen is not None:
                seen.add(text)
            x += width
    return problems


def _pane_cuts(pane: TextPane, lines: list[str], seen: set[str] | None = None) -> list[str]:
    """Cuts in a TextPane: a wrapped line wider than the pane, or a visible line that does
    not show as the pane holds it; each row whose every line is on screen goes to ``seen``."""
    problems: list[str] = []
    name = f"#{pane.id}" if pane.id else "TextPane"
    region = pane.scrollable_content_region
    content = pane.plain_lines()
    head = sum(1 for row, _ in content if row < 0)
    body = max(region.height - head, 0)
    on_screen = list(range(head)) + [head + int(pane.scroll_y) + y for y in range(body)]
    shown_rows: dict[int, list[bool]] = {}
    for y, index in enumerate(on_screen):
        if index >= len(content):
            break
        row, text = content[index]
        shown = lines[region.y + y][region.x : region.right]
        ok = cell_len(text) <= region.width and squash(text) == squash(shown)
        if not ok:
            problems.append(f"{name} line {index}: {text!r} shows as {shown!r}")
        shown_rows.setdefault(row, []).append(ok)
    for row, oks in shown_rows.items():
        every_line = len(oks) == sum(1 for r, _ in content if r == row)
        if row >= 0 and seen is not None and every_line and all(oks):
            seen.add(squash(pane.rows[row]))
    return problems


def _tree_cuts(tree: Tree[Any], lines: list[str]) -> list[str]:
    problems: list[str] = []
    region = tree.scrollable_content_region
    for y in range(region.height):
        line_no = y + int(tree.scroll_y)
        node = tree.get_node_at_line(line_no)
        if node is None:
            continue
        label = squash(plain(node.label))
        shown = squash(lines[region.y + y][region.x : region.right])
        if label and label not in shown:
            problems.append(f"#{tree.id} line {line_no}: {plain(node.label)!r} shows as {shown!r}")
    return problems


def _footer_cuts(footer: KeysFooter, lines: list[str]) -> list[str]:
    problems: list[str] = []
    region = footer.region
    line = lines[region.y][region.x : region.right] if region.height else ""
    if not footer.entries:
        problems.append("footer shows no keys")
    for entry, (_, end) in zip(footer.entries, footer.spans, strict=True):
        want = f"{entry.key_display} {entry.description}".strip()
        if squash(want) not in squash(line) or end > region.width:
            problems.append(f"footer: {want!r} not whole on {line.strip()!r}")
    return problems


def _select_cuts(select: Select[Any] | RowSelect, lines: list[str]) -> list[str]:
    region = select.region
    shown = "".join(block(lines, region.x, region.y, region.width, region.height))
    label = ""
    options = select.options if isinstance(select, RowSelect) else select._options
    for prompt, value in options:
        if value == select.value:
            label = plain(prompt)
    if label and squash(label) not in squash(shown):
        return [f"#{select.id}: selected {label!r} shows as {shown.strip()!r}"]
    return []


def _static_text(widget: Widget) -> str:
    try:
        return plain(widget.render())
    except Exception:
        return ""


def _static_cuts(widget: Widget, lines: list[str]) -> list[str]:
    text = squash(_static_text(widget))
    if not text:
        return []
    region = widget.content_region
    shown = squash("".join(block(lines, region.x, region.y, region.width, region.height)))
    if text not in shown:
        name = f"#{widget.id}" if widget.id else type(widget).__name__
        return [f"{name}: {_static_text(widget)!r} shows as {shown!r}"]
    return []


def _header_cuts(header: Header, app: Any, lines: list[str]) -> list[str]:
    screen = app.screen
    title = screen.title or app.title
    sub = screen.sub_title or app.sub_title
    line = squash(lines[header.region.y])
    missing = [t for t in (title, sub) if t and squash(t) not in line]
    if missing or ELLIPSIS in line:
        return [f"header: {title!r} — {sub!r} shows as {lines[header.region.y].strip()!r}"]
    return []


def _widget_text(widget: Widget) -> str:
    if isinstance(widget, DataTable):
        return " ".join(plain(c) for row in range(widget.row_count) for c in widget.get_row_at(row))
    return _static_text(widget)


def cuts(app: Any, expected: Iterable[str] = (), seen: set[str] | None = None) -> list[str]:
    """Everything the current screen cuts, as readable lines (empty when nothing is).

    ``seen`` collects the cells shown whole (``check_screen`` scrolls through tables and
    looks for ``expected`` strings there too)."""
    lines = screen_lines(app)
    screen = app.screen
    problems: list[str] = []
    checks: tuple[tuple[type[Widget], Callable[[Any], list[str]]], ...] = (
        (DataTable, lambda w: _table_cuts(w, lines, seen)),
        (TextPane, lambda w: _pane_cuts(w, lines, seen)),
        (KeysFooter, lambda w: _footer_cuts(w, lines)),
        (Select, lambda w: _select_cuts(w, lines)),
        (RowSelect, lambda w: _select_cuts(w, lines)),
        (Header, lambda w: _header_cuts(w, app, lines)),
        (Tree, lambda w: _tree_cuts(w, lines)),
    )
    for kind, check in checks:
        for widget in screen.query(kind):
            if _visible(widget):
                problems += check(widget)
    for widget in screen.query(Static):  # labels, status lines, tabs
        if _visible(widget) and not _scrolls(widget):
            if type(widget).__module__.startswith("textual.widgets._footer"):
                continue
            problems += _static_cuts(widget, lines)
    for y, line in enumerate(lines):
        for x, char in enumerate(line):
            if char != ELLIPSIS:
                continue
            try:
                widget, _ = screen.get_widget_at(x, y)
            except Exception:
                widget = None
            if widget is None or ELLIPSIS not in _widget_text(widget):
                where = type(widget).__name__ if widget is not None else "?"
                problems.append(f"ellipsis at {x},{y} in {where}: {line.strip()!r}")
    whole = [
        squash("".join(block(lines, *w.region)))
        for w in screen.query(Widget)
        if _visible(w) and not w.children
    ]
    for text in expected:
        want = squash(text)
        if not any(want in shown for shown in whole) and not any(
            want in cell for cell in seen or ()
        ):
            problems.append(f"not on screen whole: {text!r}")
    return problems


async def check_screen(pilot: Any, expected: Iterable[str] = ()) -> list[str]:
    """``cuts`` with every table scrolled through row by row (then back): each of
    ``expected`` must be shown whole at one of the positions."""
    app = pilot.app
    seen: set[str] = set()
    expected = list(expected)
    problems = cuts(app, (), seen)
    for table in app.screen.query(DataTable):
        if not _visible(table) or table.max_scroll_y <= 0:
            continue
        start = table.scroll_y
        heights = [
            table.rows[table._row_locations.get_key(i)].height for i in range(table.row_count)
        ]
        tops = [sum(heights[:i]) for i in range(len(heights))]
        view = table.scrollable_content_region.height - table.header_height
        index = 0
        while index < len(heights):
            offset = min(tops[index], int(table.max_scroll_y))
            table.scroll_to(y=offset, animate=False, immediate=True)
            await pilot.pause()
            problems += cuts(app, (), seen)
            after = index
            while after < len(heights) and tops[after] + heights[after] <= offset + view:
                after += 1
            index = max(after, index + 1)  # a row taller than the view is never whole
        table.scroll_to(y=start, animate=False, immediate=True)
        await pilot.pause()
    for pane in app.screen.query(TextPane):
        if not _visible(pane) or pane.max_scroll_y <= 0:
            continue
        start = pane.scroll_y
        body = [row for row, _ in pane.plain_lines() if row >= 0]
        tops = sorted({body.index(row) for row in body})  # each row's first line
        shown_to = -1  # the last body line the previous view showed
        view = pane.scrollable_content_region.height - (len(pane.plain_lines()) - len(body))
        for top in tops:
            end = top + body.count(body[top])
            if end - 1 <= shown_to:
                continue  # whole in the previous view
            offset = min(top, int(pane.max_scroll_y))
            pane.scroll_to(y=offset, animate=False, immediate=True)
            await pilot.pause()
            problems += cuts(app, (), seen)
            shown_to = offset + view - 1
        pane.scroll_to(y=start, animate=False, immediate=True)
        await pilot.pause()
    problems += cuts(app, expected, seen)
    return sorted(set(problems), key=problems.index)
