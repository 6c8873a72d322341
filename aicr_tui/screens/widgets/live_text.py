"""Text widgets of the validation dashboard that follow a live run: the log pane, whose
shown tail is replaced without laying the screen out, and banners whose height follows
every update."""

from __future__ import annotations

import re
from typing import Self

from rich.cells import cell_len
from rich.text import Text
from textual.geometry import Region
from textual.widgets import RichLog, Static

from aicr_tui.screens.widgets.textual_adapter import (
    count_pending_layout,
    drop_pending_layout,
    has_pending_writes,
)


class TailLog(RichLog):
    """The log pane: a RichLog whose shown tail can be replaced without a screen relayout.

    A flood repaints the pane with the burst's newest lines: clear, then one write of the
    same number of lines. Each step changes the log's virtual size (to nothing, then back),
    which asks the screen for a full reflow (7-40 ms of the event loop measured at 80x24
    under 5,000 events/s, several times a second). When the log ends up with the same
    virtual size it had, nothing on the screen moved: only its lines are repainted.
    """

    def replace(self, text: Text) -> None:
        """Show ``text`` in place of every line (the same as ``clear()`` then ``write()``)."""
        before = self.virtual_size
        self.clear()
        self.write_lines(text)
        if self.virtual_size == before and self.is_mounted and not has_pending_writes(self):
            # The same scrollable size: no layout to redo, only the repaint clear() asked.
            drop_pending_layout(self)

    def write_lines(self, text: Text) -> None:
        """Write ``text``'s lines: prose wraps at the pane's width, a column-aligned line
        (NCCL's result table, a ``kubectl get`` listing) stays whole on one line and the
        pane scrolls sideways to it, so its columns still line up and nothing is lost."""
        width = self.scrollable_content_region.width
        prose: list[str] = []
        for line in text.plain.split("\n"):
            if len(line) <= width or not _COLUMNS.search(line):
                prose.append(line)
                continue
            if prose:
                self.write(Text("\n".join(prose)))
                prose = []
            self.write(Text(line, no_wrap=True, overflow="ignore"), width=cell_len(line))
        if prose:
            self.write(Text("\n".join(prose)))


# A column-aligned line: two runs of at least two blanks between words.
_COLUMNS = re.compile(r"\S {2,}\S.*\S {2,}\S")


class WrappedLine(Static):
    """A Static of ``height: auto`` whose height follows every update, however close.

    Textual caches a widget's box model under a layout counter that ``refresh(layout=True)``
    bumps only when no layout is pending yet. The screen can lay out between two updates
    of one pending layout (another widget asked first: a table row, a log line painted in
    the same pass), caching the first text's height; the second update then leaves the
    counter alone and the widget keeps that height. The finished banner kept the waiting
    banner's single line this way on a loaded machine, its second line hidden. Each
    update that asks for a layout here moves the counter, so the cache cannot answer.
    """

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        if layout:
            count_pending_layout(self)  # Textual counts only the first of pending layouts
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
