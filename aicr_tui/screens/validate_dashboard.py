"""Validation dashboard: phases, a live table of checks, gates, per-check logs, reports.

The screen reads one validation event stream, from a live run or a replayed recording.
The stream is consumed in a thread worker that only appends events to a bounded inbox
(when the screen falls behind, the producer waits instead of memory growing). On the UI
thread an async worker applies the inbox to a :class:`ProgressModel` in passes cut off
after a small time budget, and separately, at most ten times a second, repaints just what
changed, by row key, inside ``app.batch_update()`` (the table and gates at most four times
a second). Between steps it yields to the event loop, so however fast events arrive a key
waits for at most one step.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import DataTable, Input, RichLog, Static
from textual.worker import Worker

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.validation.progress import (
    LOG_LINES_PER_CHECK,
    PHASE_ORDER,
    TERMINAL_STATUSES,
    Changes,
    CheckRow,
    PhaseProgress,
    ProgressModel,
)
from aicr_tui.core.validation.reports.ctrf import CtrfBuilder
from aicr_tui.screens.markup import escape_markup
from aicr_tui.screens.validate_sources import EventSource, LiveRunSource, ReplaySource
from aicr_tui.screens.widgets.bundle_dialogs import ConfirmModal, PathPromptModal
from aicr_tui.screens.widgets.checks_table import (
    COLUMNS,
    NARROW_BELOW,
    NARROW_ROW_HEIGHT,
    NARROW_WIDTHS,
    STATUS_STYLE,
    WIDE_WIDTHS,
    BrokenCell,
    ChecksTable,
    row_cells,
)
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.live_text import TailLog, WrappedLine
from aicr_tui.screens.worker_errors import WorkerScreen

if TYPE_CHECKING:
    pass

# An apply pass stops after this long so keys are read between passes; after a pass that
# left a backlog the loop sleeps YIELD_S, after one that emptied the inbox DRAIN_INTERVAL_S.
APPLY_BUDGET_S = 0.008
YIELD_S = 0.004
DRAIN_INTERVAL_S = 1 / 30
# Paint cadence: one-line widgets and the log at most every REPAINT_INTERVAL_S; the table
# and gates (re-rendered whole on any change) every TABLE_INTERVAL_S, slower in a backlog.
REPAINT_INTERVAL_S = 0.1
TABLE_INTERVAL_S = 0.25
FLOOD_TABLE_INTERVAL_S = 0.5
# Events waiting between the reader thread and the screen; a full inbox pauses the reader.
QUEUE_CAPACITY = 20_000
# The log pane is a human-speed view: repaint it at most this often during a burst, and
# show at most this many of a burst's newest lines.
LOG_PAINT_INTERVAL_S = 0.1
FLOOD_LOG_INTERVAL_S = 0.3
LIVE_TAIL_LINES = 20
RESET_TAIL_LINES = 20

VERDICT_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "not applicable": "cyan",
    "not measured": "magenta",
    "info": "dim",
}
_END = object()


@dataclass(frozen=True)
class _StreamFailed:
    message: str


class ReportSaved(Message):
    def __init__(self, kind: str, path: Path) -> None:
        super().__init__()
        self.kind = kind
        self.path = path


class ReportFailed(Message):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__()
        self.kind = kind
        self.message = message


class ValidationDashboardScreen(WorkerScreen[None]):
    """Watch a validation run (live or replayed) and save its CTRF / JUnit reports."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")

    BINDINGS = [
        Binding("s", "save_ctrf", "Save CTRF", id="validate.save_ctrf"),
        Binding("j", "save_junit", "Save JUnit", id="validate.save_junit"),
        Binding("f", "toggle_follow", "Follow", id="validate.follow"),
        Binding("slash", "filter", "Filter", id="validate.filter"),
        Binding("a", "full_log", "Full log", id="validate.full_log", show=False),
        Binding("l", "focus_log", "Log", id="validate.focus_log", show=False),
        Binding("t", "focus_table", "Table", id="validate.focus_table", show=False),
        Binding("escape", "back", "Back", id="validate.back"),
    ]

    PALETTE_ACTIONS = (
        (
            "Validation: save CTRF report",
            "JSON report, same as aicr-tui validate --output",
            "save_ctrf",
        ),
        (
            "Validation: save JUnit report",
            "XML report, same as aicr-tui validate --junit",
            "save_junit",
        ),
        (
            "Validation: filter checks",
            "Show only checks matching a phase, name or status",
            "filter",
        ),
        (
            "Validation: follow running check",
            "Toggle moving the cursor to the running check",
            "toggle_follow",
        ),
        ("Validation: full log", "Every kept log line of the selected check", "full_log"),
    )

    def __init__(
        self,
        source: EventSource,
        *,
        report_dir: Path | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.source = source
        self.model = ProgressModel()
        self.report_dir = report_dir if report_dir is not None else Path.cwd()
        self.follow = True
        self.filter_text = ""
        self.selected = ""
        self._shown_seq = 0
        self._log_painted_at = 0.0
        self._inbox: deque[object] = deque()  # append/popleft are thread-safe
        self._table_painted_at = 0.0
        self._table_changes = Changes()
        self._cancel = threading.Event()
        self._ended = False
        # The CTRF builder is the report's only state: a sink fed every event (capped stdout).
        self._report = CtrfBuilder()
        self._report_lock = threading.Lock()
        self.events_applied = 0
        self._banner_text = ""
        self._log_title = ""
        self._gates_lines = -1

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield WrappedLine("", id="run-banner", markup=False)
        with Grid(id="phases"):
            for name in PHASE_ORDER:
                yield Static(name, id=f"phase-{name}", classes="phase", markup=False)
        yield Input(placeholder="filter checks (phase, name, status)", id="filter")
        table = ChecksTable(id="checks", cursor_type="row", zebra_stripes=True)
        yield table
        with Horizontal(id="detail"):
            with Vertical(id="log-box"):
                yield WrappedLine("log", id="log-title", markup=False)
                yield TailLog(
                    id="log", max_lines=LOG_LINES_PER_CHECK, wrap=True, markup=False, min_width=20
                )
            with Vertical(id="gates-box"):
                yield Static("gates", id="gates-title", markup=False)
                with VerticalScroll(id="gates-scroll"):
                    yield WrappedLine("", id="gates", markup=False)
        yield WrappedLine("", id="summary", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one("#checks", DataTable)
        self._narrow = self.app.size.width < NARROW_BELOW
        self._add_columns(table)
        self.query_one("#filter", Input).display = False
        self._paint_banner()
        self._paint_phases(set(PHASE_ORDER))
        self._paint_gates()
        # Everything alive now (modules, the app, the catalog) lives as long as the run: move
        # it out of the collector's reach, or every full collection the event flood triggers
        # rescans it while no key is read (99 ms pauses measured, 458 ms after a long run).
        gc.freeze()
        self._pump()
        self._apply_loop()
        table.focus()

    def on_resize(self) -> None:
        narrow = self.size.width < NARROW_BELOW
        self.set_class(narrow, "narrow")
        if narrow != getattr(self, "_narrow", narrow):
            self._narrow = narrow
            table = self.query_one("#checks", DataTable)
            table.clear(columns=True)
            self._add_columns(table)
            self._rebuild_table()
            self._paint_banner()

    def _add_columns(self, table: DataTable[Any]) -> None:
        widths = NARROW_WIDTHS if self._narrow else WIDE_WIDTHS
        for (key, label), width in zip(COLUMNS, widths, strict=True):
            table.add_column(label, key=key, width=width)

    def on_unmount(self) -> None:
        self._cancel.set()

    # --------------------------------------------------------------- the pump
    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="validate-stream",
        description="read the validation event stream",
    )
    def _pump(self) -> None:
        asyncio.run(self._consume())
        self._inbox.append(_END)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A stream that failed is reported on screen, after the events it did publish,
        and ends the run; never a traceback."""
        if worker.group == "validate-stream":
            self._inbox.append(_StreamFailed(message))
            self._inbox.append(_END)
        else:
            super().worker_failed(worker, message)

    async def _consume(self) -> None:
        """Read the source until it ends or the screen goes away (checked every 0.1 s)."""
        reader = asyncio.create_task(self._read_source())
        while not reader.done():
            if self._cancel.is_set():
                reader.cancel()
                break
            await asyncio.wait({reader}, timeout=0.1)
        with contextlib.suppress(asyncio.CancelledError):
            await reader

    async def _read_source(self) -> None:
        inbox = self._inbox
        report = self._report
        cancel = self._cancel
        async for event in self.source.events(cancel):
            with self._report_lock:
                report(event)
            # Back-pressure: when the screen is behind, the producer waits, memory does not grow.
            while len(inbox) >= QUEUE_CAPACITY:
                await asyncio.sleep(0.002)
            inbox.append(event)

    @work(exclusive=True, exit_on_error=False, group="validate-apply", description="apply events")
    async def _apply_loop(self) -> None:
        """Apply the inbox in short passes and paint on a separate beat.

        Applying, painting and the screen's own refresh each run as their own step of the
        event loop, never back to back in one step, and a pass that left events behind is
        followed by a short sleep: that is where keys are read, so a key waits for at
        most one step however fast events arrive.
        """
        last_paint = 0.0
        while not self._ended:
            self.apply_pending()
            now = time.perf_counter()
            if self._ended or now - last_paint >= REPAINT_INTERVAL_S:
                await asyncio.sleep(0)  # let keys in before painting
                last_paint = time.perf_counter()
                self.paint()
            await asyncio.sleep(YIELD_S if self._inbox else DRAIN_INTERVAL_S)
        self.paint()

    def drain(self) -> int:
        """Apply what is queued (up to APPLY_BUDGET_S) and paint what changed."""
        applied = self.apply_pending()
        self.paint()
        return applied

    def apply_pending(self) -> int:
        """Apply queued events to the model for up to APPLY_BUDGET_S; no painting."""
        if self._ended:
            return 0
        model = self.model
        inbox = self._inbox
        pop = inbox.popleft
        deadline = time.perf_counter() + APPLY_BUDGET_S
        applied = 0
        while inbox:
            item = pop()
            if item is _END:
                self._ended = True
                if model.state == "waiting" and not model.error:
                    model.fail("the event stream ended before the run started")
                elif model.state == "running":
                    model.fail("the event stream ended before the run finished")
                break
            if isinstance(item, _StreamFailed):
                model.fail(item.message)
                continue
            model.apply(item)  # type: ignore[arg-type]
            applied += 1
            if applied & 127 == 0 and time.perf_counter() > deadline:
                break
        self.events_applied += applied
        return applied

    @property
    def painted_to_end(self) -> bool:
        """The source has ended and everything it produced is painted. The model reaches
        its final state a pass before the paint that shows it (painting waits its beat)."""
        return self._ended and not self.model.has_changes() and not self._table_changes

    def paint(self) -> None:
        """Paint whatever changed since the last paint (inside one batch update)."""
        if self.model.has_changes() or self._table_changes:
            with self.app.batch_update():
                self._repaint(self.model.take_changes())

    # ---------------------------------------------------------------- painting
    def _repaint(self, changes: Changes) -> None:
        """Paint what changed. Cheap one-line widgets and the log follow every paint; the
        table and the gates panel, which re-render whole, at most TABLE_INTERVAL_S apart."""
        pending = self._table_changes
        pending.new_rows.extend(changes.new_rows)
        pending.rows |= changes.rows
        pending.started.extend(changes.started)
        pending.gates = pending.gates or changes.gates
        now = time.perf_counter()
        # While a backlog is waiting the table (a whole re-render per update) slows down.
        interval = FLOOD_TABLE_INTERVAL_S if self._inbox else TABLE_INTERVAL_S
        if pending and (now - self._table_painted_at >= interval or self._ended):
            self._table_painted_at = now
            self._table_changes = Changes()
            self._paint_table(pending)
        if changes.phases:
            self._paint_phases(changes.phases)
        if changes.run:
            self._paint_phases({name for name in PHASE_ORDER if name not in self.model.phases})
            self._paint_banner()
            self._paint_summary()
        if self.selected in changes.rows:
            self._paint_log_title()
        self._paint_log()

    def _paint_table(self, changes: Changes) -> None:
        table = self.query_one("#checks", DataTable)
        if self.filter_text and (changes.new_rows or changes.rows):
            # A status change can move a row into or out of the filter: rebuild (filters
            # are rare and the table is small).
            self._rebuild_table()
            changes = Changes(started=changes.started, gates=changes.gates, rows=changes.rows)
        for key in changes.new_rows:
            row = self.model.rows[key]
            if self._visible(row):
                table.add_row(*self._cells(row), key=key, height=self._row_height())
        for key in changes.rows:
            if key in changes.new_rows or self.filter_text:
                continue
            row = self.model.rows[key]
            if key in table.rows:
                for (column, _), value in zip(COLUMNS, self._cells(row), strict=True):
                    table.update_cell(key, column, value)
        if self.follow and changes.started:
            target = changes.started[-1]
            if target in table.rows:
                table.move_cursor(row=table.get_row_index(target), scroll=True)
        if changes.gates or (self.selected and self.selected in changes.rows):
            self._paint_gates()
        if not self.selected and table.row_count:
            cell = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0))
            self._select(str(cell.row_key.value))

    def _cells(self, row: CheckRow) -> tuple[Text | BrokenCell, ...]:
        return row_cells(row, narrow=getattr(self, "_narrow", False))

    def _row_height(self) -> int:
        return NARROW_ROW_HEIGHT if getattr(self, "_narrow", False) else 1

    def _visible(self, row: CheckRow) -> bool:
        needle = self.filter_text.lower()
        if not needle:
            return True
        return needle in f"{row.phase} {row.name} {row.status}".lower()

    def _paint_banner(self) -> None:
        model = self.model
        describe = getattr(self.source, "describe", None)
        parts = [model.state, describe() if callable(describe) else self.source.label]
        if model.mode and model.mode not in parts[1]:
            replayed = isinstance(self.source, ReplaySource)
            parts.append(f"recorded as a {model.mode} run" if replayed else model.mode)
        if model.error:
            parts.append(model.error)
        narrow = getattr(self, "_narrow", False)
        if model.run_id and not narrow:
            parts.append(f"run {model.run_id}")  # in the reports; no room for it at 80x24
        if model.recipe and not (narrow and getattr(self.source, "note", "")):
            parts.append(model.recipe)  # at 80x24 the note already names the recipe
        banner = self.query_one("#run-banner", Static)
        text = safe_text(" · ".join(parts))
        if text != self._banner_text:
            # Wraps (up to four lines at 80 columns): it changes with the run's state only.
            self._banner_text = text
            banner.update(text)
        banner.set_class(model.state == "error", "error")

    def _paint_phases(self, names: set[str]) -> None:
        started = self.model.state != "waiting"
        for name in names:
            phase = self.model.phases.get(name)
            try:
                widget = self.query_one(f"#phase-{name}", Static)
            except NoMatches:
                continue
            if phase is None:
                widget.update(_phase_text(PhaseProgress(name), in_run=not started), layout=False)
                continue
            widget.update(_phase_text(phase, in_run=True), layout=False)
            for status in STATUS_STYLE:
                widget.set_class(phase.status == status, f"-{status.replace(' ', '-')}")

    def _paint_summary(self) -> None:
        summary = self.query_one("#summary", Static)
        if self.model.summary is None:
            summary.update("")
            return
        summary.update(f"summary: {self.model.summary.line()}")
        blocking = self.model.summary.exit_code not in (0, None)
        summary.set_class(blocking, "-failed")
        summary.set_class(not blocking, "-passed")

    def _paint_gates(self) -> None:
        """Gates as measured vs threshold: the selected check's first, then failures, then
        the rest in run order."""
        text = Text()
        gates = self.model.gates()
        if not gates:
            text.append("no gates measured yet", style="dim")

        def rank(item: tuple[CheckRow, Any]) -> int:
            row, gate = item
            if row.key == self.selected:
                return 0
            return 1 if gate.verdict == "failed" else 2

        blocks: list[Text] = []  # one per check: its name, then each gate
        last_check = ""
        for row, gate in sorted(gates, key=rank):
            selected = row.key == self.selected
            if row.key != last_check:
                blocks.append(Text())
                blocks[-1].append(("▶ " if selected else "") + row.name, style="bold")
                last_check = row.key
            block = blocks[-1]
            label = "" if gate.name == row.name else f"{gate.name}: "
            block.append(f"\n  {label}{gate.measured} vs {gate.threshold or '—'} ")
            block.append(gate.verdict, style=VERDICT_STYLE.get(gate.verdict, ""))
            if gate.note and selected:
                block.append(f"\n  {gate.note}", style="dim")
        for block in blocks:
            if text:
                text.append("\n")
            text.append_text(block)
        # The panel scrolls (tab to it) and keeps the most relevant checks on top. Its height
        # follows the text's line count, so the screen is laid out again only when that
        # count changes (a new gate, another selection), not on every repaint.
        panel = self.query_one("#gates", Static)
        width = panel.content_region.width
        lines = len(text.wrap(self.app.console, width)) if width > 0 else 0
        if lines != self._gates_lines:
            self._gates_lines = lines
            panel.update(text)
        else:
            panel.update(text, layout=False)

    def _paint_log(self, *, reset: bool = False, full: bool = False) -> None:
        """Append the selected check's new lines to the log pane, in one write.

        Rendering a log line costs far more than storing it, so the pane shows a tail: on
        selection the newest lines that fit the pane (at least RESET_TAIL_LINES) (``full`` shows every kept line), and
        while lines arrive faster than anyone can read, a repaint at most every
        LOG_PAINT_INTERVAL_S with the newest LIVE_TAIL_LINES of the burst. The model keeps
        the last LOG_LINES_PER_CHECK lines of every check whatever the pane shows.
        """
        log = self.query_one("#log", TailLog)
        row = self.model.rows.get(self.selected)
        if row is None:
            if reset:
                log.clear()
            return
        now = time.perf_counter()
        fresh = row.log_seq - self._shown_seq
        replace = False  # the burst's tail in place of what the pane shows
        if reset or full:
            replace = True
            tail = len(row.logs) if full else max(RESET_TAIL_LINES, log.size.height)
            lines = _tail(row.logs, tail)
            if row.log_seq > len(lines):
                hidden = row.log_seq - len(lines)
                hint = "" if full or len(row.logs) <= tail else " — press a for the kept lines"
                lines.insert(0, f"… {hidden} earlier lines{hint}")
            if row.message and not lines:
                lines = [row.message]
        elif fresh <= 0:
            return
        elif self.model.state == "running" and now - self._log_painted_at < (
            FLOOD_LOG_INTERVAL_S if fresh > LIVE_TAIL_LINES else LOG_PAINT_INTERVAL_S
        ):
            # A burst: every repaint of a growing log relayouts the screen, so slow down.
            return
        elif fresh > LIVE_TAIL_LINES:
            replace = True
            lines = [
                f"… {row.log_seq - LIVE_TAIL_LINES} earlier lines — press a for the kept lines"
            ]
            lines += _tail(row.logs, LIVE_TAIL_LINES)
        else:
            lines = _tail(row.logs, fresh)
        self._shown_seq = row.log_seq
        self._log_painted_at = now
        if replace and lines:
            log.replace(Text("\n".join(lines)))
        elif replace:
            log.clear()
        elif lines:
            log.write_lines(Text("\n".join(lines)))

    def _paint_log_title(self) -> None:
        row = self.model.rows.get(self.selected)
        title = "log"
        if row is not None:
            title = f"log · {row.phase}/{row.name} · {row.status}"
            if row.message:
                title += f" · {row.message}"
        if title != self._log_title:
            # Wraps under a long message; repainted only when the text changes.
            self._log_title = title
            self.query_one("#log-title", Static).update(title)

    def _select(self, key: str) -> None:
        if key == self.selected:
            return
        self.selected = key
        self._paint_log_title()
        self._shown_seq = 0
        self._paint_log(reset=True)
        self._paint_gates()

    # ----------------------------------------------------------------- events
    @on(DataTable.RowHighlighted, "#checks")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._select(str(event.row_key.value))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self._rebuild_table()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#checks", DataTable).focus()

    def _rebuild_table(self) -> None:
        table = self.query_one("#checks", DataTable)
        with self.app.batch_update():
            table.clear()
            for row in self.model.rows.values():
                if self._visible(row):
                    table.add_row(*self._cells(row), key=row.key, height=self._row_height())

    def on_report_saved(self, message: ReportSaved) -> None:
        self.notify(
            f"{message.kind} report written to {escape_markup(message.path)}", title="Saved"
        )

    def on_report_failed(self, message: ReportFailed) -> None:
        self.notify(
            escape_markup(message.message), title=f"{message.kind} not saved", severity="error"
        )

    # ---------------------------------------------------------------- actions
    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        self.notify("following the running check" if self.follow else "follow off")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_full_log(self) -> None:
        """Show every kept line of the selected check (up to LOG_LINES_PER_CHECK)."""
        self._paint_log(full=True)

    def action_focus_log(self) -> None:
        self.query_one("#log", RichLog).focus()

    def action_focus_table(self) -> None:
        self.query_one("#checks", DataTable).focus()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display and (box.has_focus or self.filter_text):
            box.value = ""
            box.display = False
            self.query_one("#checks", DataTable).focus()
            return
        if len(self.app.screen_stack) <= 1:
            return
        if isinstance(self.source, LiveRunSource) and self.model.state in ("waiting", "running"):

            def confirmed(leave: bool | None) -> None:
                if leave:
                    self.dismiss(None)

            self.app.push_screen(
                ConfirmModal(
                    "Stop the validation run?",
                    "A live validation run is still going. Leaving this screen stops it "
                    "before its remaining checks run.",
                    yes_label="Stop and leave",
                ),
                confirmed,
            )
            return
        self.dismiss(None)

    def action_save_ctrf(self) -> None:
        self._ask_and_save("CTRF", "validation-report.json")

    def action_save_junit(self) -> None:
        self._ask_and_save("JUnit", "validation-junit.xml")

    def _ask_and_save(self, kind: str, filename: str) -> None:
        if self.model.state != "finished":
            self.notify(
                f"the run has not finished; the {kind} report can be saved once it does",
                severity="warning",
            )
            return

        def chosen(path: Path | None) -> None:
            if path is None:
                return
            if path.exists():

                def confirmed(yes: bool | None) -> None:
                    if yes:
                        self._write_report(kind, path)

                self.app.push_screen(
                    ConfirmModal(
                        f"Replace {path.name}?",
                        f'"{path}" already exists. Replace it with this run\'s {kind} report?',
                        yes_label="Replace",
                    ),
                    confirmed,
                )
                return
            self._write_report(kind, path)

        self.app.push_screen(
            PathPromptModal(
                f"Save the {kind} report",
                self.report_dir / filename,
                help_text="The file is written atomically; escape cancels.",
            ),
            chosen,
        )

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="validate-report",
        description="write a validation report",
    )
    def _write_report(self, kind: str, path: Path) -> None:
        from aicr_tui.core.foundation.errors import AicrError
        from aicr_tui.core.foundation.fileio import atomic_write_text
        from aicr_tui.core.validation.reports.ctrf import render_ctrf
        from aicr_tui.core.validation.reports.junit import render_junit

        try:
            with self._report_lock:
                report = self._report.report()
            text = render_ctrf(report) if kind == "CTRF" else render_junit(report)
            if path.parent == self.report_dir:
                path.parent.mkdir(parents=True, exist_ok=True)  # the default reports dir
            atomic_write_text(path, text)
        except AicrError as err:
            self.post_message(ReportFailed(kind, err.render()))
            return
        except OSError as exc:
            self.post_message(ReportFailed(kind, f'cannot write "{path}": {exc.strerror or exc}'))
            return
        self.post_message(ReportSaved(kind, path))


STATUS_GLYPH = {
    "queued": "·",
    "running": "▶",
    "passed": "✓",
    "failed": "✗",
    "not applicable": "–",
    "not measured": "!",
}


def _phase_text(phase: PhaseProgress, *, in_run: bool) -> Text:
    """``✓ deployment  ████████ 4/4``: status glyph, name, progress bar, checks done/total."""
    text = Text()
    if not in_run:
        text.append(f"  {phase.name:<11} not in this run", style="dim")
        return text
    style = STATUS_STYLE.get(phase.status, "")
    text.append(f"{STATUS_GLYPH.get(phase.status, '?')} ", style=style)
    text.append(f"{phase.name:<11} ", style="bold")
    width = 8
    total = phase.total or phase.seen
    filled = width if total == 0 and phase.status in TERMINAL_STATUSES else 0
    if total:
        filled = min(width, round(width * phase.done / total))
    text.append("█" * filled, style=style)
    text.append("░" * (width - filled), style="dim")
    text.append(f" {phase.done}/{total}" if total else " –/–")
    return text


def _tail(lines: deque[str], count: int) -> list[str]:
    """The last ``count`` items of a deque without copying all of it."""
    if count >= len(lines):
        return list(lines)
    return list(islice(reversed(lines), count))[::-1]


def replay_screen(path: Path, *, speed: float = 1.0) -> ValidationDashboardScreen:
    """The dashboard on a recorded run, as ``aicr-tui validate --replay`` shows it."""
    return ValidationDashboardScreen(ReplaySource(Path(path), speed=speed))


__all__: Sequence[str] = (
    "EventSource",
    "LiveRunSource",
    "ReplaySource",
    "ValidationDashboardScreen",
    "replay_screen",
)
