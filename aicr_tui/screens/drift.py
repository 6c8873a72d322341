"""Drift: a second capture against the one the recipe was qualified on.

Opened from the recipe step (``D``) once a selection qualifies. The second capture comes from
the sample list, a file (``o``) or the live cluster (``F``); it is loaded through the same
calls as the capture step, and compared by ``aicr_tui.core.services.drift`` (what ``aicr-tui diff -r``
prints): the readings that changed, the verdict of the qualified selection on each side,
and each recipe constraint that now fails, with qualification's remedy said in the wizard's
terms (aicr_tui/screens/remedies.py: the choice on the recipe step, never a CLI flag).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.host import HostedScreen
from aicr_tui.screens.markup import escape_markup
from aicr_tui.screens.remedies import for_wizard
from aicr_tui.screens.state import LiveRequest
from aicr_tui.screens.widgets.fit_table import FitTable
from aicr_tui.screens.widgets.keys_footer import KeysFooter

if TYPE_CHECKING:
    from aicr_tui.core.services.drift import DriftReport


class DriftReady(Message):
    def __init__(self, report: DriftReport, label: str) -> None:
        super().__init__()
        self.report = report
        self.label = label


class DriftFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


def _cell(value: str | None) -> str:
    return "-" if value is None else value or '""'


class DriftScreen(HostedScreen):
    """The qualified capture against a second one: changed readings and the verdict."""

    CSS_PATH = "drift.tcss"
    TITLE = "Drift"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open_path", "Open file", id="drift.open"),
        Binding("F", "fetch_live", "Fetch live", id="drift.fetch", key_display="F"),
        Binding("escape", "back", "Back", id="drift.back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: DriftReport | None = None
        self.second_label = ""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="drift-body"):
            with Vertical(id="drift-left"):
                yield Static("Second capture (enter loads)", classes="pane-title")
                yield OptionList(id="drift-samples")
            with Vertical(id="drift-right"):
                yield Static("", id="drift-verdict", markup=False)
                yield Static("Readings that changed", classes="pane-title")
                yield FitTable(id="drift-readings")
                yield Static("Recipe constraints on the second capture", classes="pane-title")
                yield FitTable(id="drift-constraints")
        yield Static("", id="drift-status", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        state = self.state
        self.sub_title = f"against {state.capture_label or 'the qualified capture'}"
        options = self.query_one("#drift-samples", OptionList)
        for sample in state.samples:
            if sample.key == state.sample_key or sample.missing():
                continue
            options.add_option(Option(escape_markup(sample.title), id=sample.key))
        if not options.option_count:
            options.add_option(Option("o: open a file   F: fetch live", id="hint", disabled=True))
        self._verdict_text()
        self._status("Load a second capture: enter picks a sample, o opens a file, F fetches live")
        options.focus()

    # -- loading ------------------------------------------------------------------------
    @on(OptionList.OptionSelected, "#drift-samples")
    def _sample_chosen(self, event: OptionList.OptionSelected) -> None:
        sample = next((s for s in self.state.samples if s.key == event.option.id), None)
        if sample is None:
            return
        files = {
            k: v
            for k, v in (
                ("aks_pools", sample.aks_pools),
                ("oke_addons", sample.oke_addons),
                ("legacy_daemonset", sample.legacy_daemonset),
                ("snapshot", sample.base_snapshot),
            )
            if v
        }
        self._status(f"Loading {sample.title}…")
        self._compare_files(files, sample.title)

    def load_path(self, path: str) -> None:
        """Load ``path`` (a snapshot or a provider dump, told by its content) as NEW."""
        self._status(f"Opening {Path(path).name}…")
        self._compare_opened(path)

    def action_open_path(self) -> None:
        from aicr_tui.screens.widgets.wizard_dialogs import OpenCaptureModal

        self.app.push_screen(OpenCaptureModal(), self._opened)

    def _opened(self, path: str | None) -> None:
        if path:
            self.load_path(path)

    def action_fetch_live(self) -> None:
        from aicr_tui.screens.widgets.wizard_dialogs import LiveCaptureModal

        self.app.push_screen(LiveCaptureModal(), self._fetch_requested)

    def _fetch_requested(self, values: dict[str, str] | None) -> None:
        if values is None:
            return
        request = LiveRequest.from_form(values)
        self._status("Fetching the live capture…")
        self._compare_live(request)

    def action_back(self) -> None:
        self.app.pop_screen()

    def _compare(self, loaded_snapshot: object, label: str) -> None:
        """Worker side: the drift of ``loaded_snapshot`` against the qualified capture."""
        from aicr_tui.core.services.drift import diff_snapshots

        state = self.state
        if state.snapshot is None or state.recipe is None:
            self.post_message(DriftFailed("no qualified capture to compare against"))
            return
        report = diff_snapshots(state.snapshot, loaded_snapshot, recipe=state.recipe)  # type: ignore[arg-type]
        self.post_message(DriftReady(report, label))

    @work(thread=True, exclusive=True, exit_on_error=False, group="drift", description="Drift")
    def _compare_files(self, files: dict[str, str], label: str) -> None:
        result = self.wizard.services.load_capture(files)
        self._compare(result.snapshot, label)

    @work(thread=True, exclusive=True, exit_on_error=False, group="drift", description="Drift")
    def _compare_opened(self, path: str) -> None:
        services = self.wizard.services
        opened = services.open_file(path, {}, None)
        result = services.load_capture(dict(opened.capture.files))
        self._compare(result.snapshot, Path(path).name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="drift", description="Drift")
    def _compare_live(self, request: LiveRequest) -> None:
        result = self.wizard.services.live_capture(request, threading.Event(), lambda _t: None)
        self._compare(result.snapshot, "live capture")

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A capture that cannot be read, opened or fetched is shown inline; nothing else
        changes."""
        if worker.group == "drift":
            self.post_message(DriftFailed(message))
        else:
            super().worker_failed(worker, message)

    # -- results ------------------------------------------------------------------------
    @on(DriftReady)
    def _ready(self, message: DriftReady) -> None:
        self.report = message.report
        self.second_label = message.label
        report = message.report
        self._verdict_text()
        readings = self.query_one("#drift-readings", FitTable)
        constraints = self.query_one("#drift-constraints", FitTable)
        # The readings a now-failing constraint reads come first: at 80x24 they are the
        # rows that stay in view.
        failing = {c.name for c in report.now_failing}
        changes = sorted(report.changes, key=lambda c: c.path not in failing)
        with self.app.batch_update():
            readings.fill(
                ("reading", "qualified", "now"),
                [
                    (
                        f"r-{i}",
                        (
                            escape_markup(c.path),
                            escape_markup(_cell(c.old)),
                            escape_markup(_cell(c.new)),
                        ),
                    )
                    for i, c in enumerate(changes)
                ],
                shrink=((1, 8), (2, 8), (0, 14)),  # values wrap before the path does
            )
            rows = []
            for i, c in enumerate(report.constraints):
                state = (
                    "FAILS" if c.now_fails else ("holds" if c.new_status == "passed" else "failed")
                )
                text = f"{state}  {c.name}  expected {c.expected}, now {_cell(c.new)}"
                rows.append((f"c-{i}", (escape_markup(text),)))
                if c.remedy and c.new_status != "passed":
                    remedy = for_wizard(c.remedy, "drift")
                    rows.append((f"c-{i}-remedy", (escape_markup(f"  remedy: {remedy}"),)))
            constraints.fill(("constraint",), rows, shrink=((0, 20),))
        count = len(report.changes)
        self._status(
            f"{message.label}: {count} reading{'s' if count != 1 else ''} changed, "
            f"{len(report.now_failing)} constraint(s) now fail; esc: back to the recipe"
        )

    @on(DriftFailed)
    def _failed(self, message: DriftFailed) -> None:
        status = self.query_one("#drift-status", Static)
        status.update(safe_text(for_wizard(message.text, "drift"), multiline=True))
        status.set_class(True, "error")

    def verdict_text(self) -> str:
        """The qualified selection's verdict, and what the second capture makes of it."""
        label = self.state.capture_label or "the qualified capture"
        if self.report is None or self.report.verdict is None:
            return f"Qualified on {label}; no second capture loaded yet"
        v = self.report.verdict
        word = {True: "qualified", False: "REFUSED"}
        selection = v.selection or "(no profile)"
        line = (
            f"{selection}: {word[v.old_ok]} on {label} -> {word[v.new_ok]} on {self.second_label}"
        )
        if not v.new_ok and v.new_reason and not self.report.now_failing:
            line += f"\n{for_wizard(v.new_reason, 'drift')}"  # a reason no constraint row shows
        return line

    def _verdict_text(self) -> None:
        widget = self.query_one("#drift-verdict", Static)
        widget.update(safe_text(self.verdict_text(), multiline=True))
        refused = self.report is not None and self.report.verdict is not None
        widget.set_class(refused and not self.report.verdict.new_ok, "refused")  # type: ignore[union-attr]

    def _status(self, text: str) -> None:
        status = self.query_one("#drift-status", Static)
        status.update(safe_text(text, multiline=True))
        status.set_class(False, "error")
