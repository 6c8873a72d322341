"""Step 1, capture: load provider dumps or fetch them live; show pools, modes and readings.

Loading runs in a thread worker through ``aicr_tui.core.services.capture`` (the calls the CLI
makes) and reports back with a message. An opened file's kind comes from its content: a
snapshot replaces the capture, a provider dump for the capture's service is added to it
(``c`` starts over with only that file), any other dump starts a new capture. Criteria the
user has not chosen follow the capture's snapshot. A bad file shows the CLI's one-line
message inline and leaves the previous capture untouched.
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
from aicr_tui.core.recipe.qualification import AKS_POOLS, OKE_ADDON, OKE_LEGACY
from aicr_tui.core.services.errors import error_line
from aicr_tui.screens.host import HostedScreen
from aicr_tui.screens.markup import escape_markup
from aicr_tui.screens.remedies import for_wizard
from aicr_tui.screens.state import (
    AKS_CRITERIA,
    OKE_CRITERIA,
    DemoSample,
    LiveRequest,
    snapshot_readings,
)
from aicr_tui.screens.widgets.fit_table import FitTable
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.wizard_filter import FilterBar, matches

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.screens.state import LoadedCapture


# The readings the gpuStack verdict turns on, shown first in the readings table.
DECIDING_READINGS = frozenset({AKS_POOLS, OKE_ADDON, OKE_LEGACY})


class CaptureLoaded(Message):
    def __init__(
        self,
        result: LoadedCapture,
        files: dict[str, str],
        label: str,
        sample: str | None,
        *,
        note: str = "",
        change: str = "new",
        opened: str = "",
        criteria: dict[str, str | None] | None = None,
        derived: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.result = result
        self.files = files
        self.label = label
        self.sample = sample
        self.note = note  # what the opened file did to the capture
        self.change = change
        self.opened = opened
        self.criteria = criteria or {}  # criteria filled from the snapshot (user choices kept)
        self.derived = derived


class CaptureFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class LiveProgress(Message):
    """Progress of a live fetch; consecutive updates replace each other in the queue."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LiveProgress)


class CaptureScreen(HostedScreen):
    """Pick captures (samples, files, live) and inspect what they project."""

    CSS_PATH = "capture.tcss"
    TITLE = "1 Capture"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open_path", "Open file", id="capture.open"),
        Binding("c", "only_last", "Only this file", id="capture.only"),
        Binding("t", "browse", "Browse", id="capture.browse", show=False),
        Binding("F", "fetch_live", "Fetch live", id="capture.fetch", key_display="F"),
        Binding("x", "cancel_live", "Cancel fetch", id="capture.cancel", show=False),
        Binding("n", "next", "Recipe", id="capture.next"),
        Binding("slash", "filter", "Filter", id="capture.filter", key_display="/", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._cancel: threading.Event | None = None
        self._filter_target = "capture-readings"

    def _filter_placeholder(self) -> str:
        return f"/ filter {self.FILTER_TARGETS[self._filter_target]} (esc clears)"

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="capture-body"):
            with Vertical(id="capture-left"):
                yield Static("Captures (enter loads)", classes="pane-title")
                yield OptionList(id="capture-samples")
            with Vertical(id="capture-right"):
                yield Static("", id="capture-label", classes="pane-title")
                yield FitTable(id="capture-pools", zebra_stripes=True)
                yield Static("Readings", classes="pane-title")
                yield FitTable(id="capture-readings")
        yield Static("", id="capture-status", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = (
            "enter loads a sample; o opens a file, F fetches live"
            if self.state.samples
            else "o opens a file, t browses, F fetches live"
        )
        options = self.query_one("#capture-samples", OptionList)
        for sample in self.state.samples:
            missing = sample.missing()
            label = sample.title + (" (files missing)" if missing else "")
            options.add_option(Option(label, id=sample.key, disabled=bool(missing)))
        if not self.state.samples:
            options.add_option(
                Option("o: open a file   t: browse   F: fetch live", id="hint", disabled=True)
            )
        self._render_capture()
        enabled = [i for i, o in enumerate(options.options) if not o.disabled]
        if enabled:
            options.highlighted = enabled[0]
        options.focus()

    # -- actions ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "only_last":
            # Only offered while the last opened dump was added to an existing capture.
            return self.state.last_change == "added"
        return True

    def action_only_last(self) -> None:
        """Start a new capture with only the file that was just added to the old one."""
        path = self.state.last_opened
        if self.state.last_change != "added" or not path:
            return
        from aicr_tui.core.services.capture import read_capture_kind

        try:
            kind = read_capture_kind(path)
        except Exception as exc:
            self.post_message(CaptureFailed(error_line(exc)))
            return
        self._status(f"Loading {Path(path).name} alone…")
        self._load(
            {kind: path},
            Path(path).name,
            None,
            note=f"New capture with only {Path(path).name}",
            change="new",
            given=self._given(),
        )

    # Dialogs are imported when first used: they pull in Input, Select and DirectoryTree,
    # which the first screen does not need (cold start budget).
    def action_open_path(self) -> None:
        from aicr_tui.screens.widgets.wizard_dialogs import OpenCaptureModal

        self.app.push_screen(OpenCaptureModal(), self._opened)

    def action_browse(self) -> None:
        root = Path.cwd()
        if self.state.demo and self.state.samples:
            root = Path(self.state.samples[0].files()[0] if self.state.samples[0].files() else ".")
            root = root.parent if root.is_file() else root
        from aicr_tui.screens.widgets.wizard_dialogs import BrowseCaptureModal

        self.app.push_screen(BrowseCaptureModal(root), self._browsed)

    def action_fetch_live(self) -> None:
        from aicr_tui.screens.widgets.wizard_dialogs import LiveCaptureModal

        self.app.push_screen(LiveCaptureModal(), self._fetch_requested)

    def action_cancel_live(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self._status("Cancelling the live capture…")

    def action_next(self) -> None:
        self.wizard.show_recipe()

    FILTER_TARGETS: ClassVar[dict[str, str]] = {
        "capture-samples": "the capture list",
        "capture-pools": "the pools and add-ons",
        "capture-readings": "the readings",
    }

    def action_filter(self) -> None:
        """Filter the pane that has focus (the readings when none of the three has)."""
        focused = self.focused.id if self.focused is not None else None
        if focused in self.FILTER_TARGETS:
            self._filter_target = str(focused)
        # Mounted on first use: an Input on the first screen costs cold-start time.
        bars = self.query(FilterBar)
        if bars:
            bars.first().placeholder = self._filter_placeholder()
            bars.first().open()
            return
        bar = FilterBar(id="capture-filter")
        bar.placeholder = self._filter_placeholder()
        self.mount(bar, before=self.query_one(KeysFooter))
        self.call_after_refresh(bar.open)

    # -- loading ------------------------------------------------------------------------
    def load_sample(self, sample: DemoSample) -> None:
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
        self.state.criteria = dict(sample.criteria)
        self.state.user_criteria = set()  # a sample is a fresh start
        self.state.profile_value = None
        self._point_at(sample.key)
        self._status(f"Loading {sample.title}…")
        self._load(files, sample.title, sample.key, given={})

    def _point_at(self, key: str) -> None:
        """The list's cursor on sample ``key`` (loaded from the palette, it stayed where it
        was, and enter there loaded another capture than the one shown)."""
        options = self.query_one("#capture-samples", OptionList)
        for index, option in enumerate(options.options):
            if option.id == key and options.highlighted != index:
                options.highlighted = index

    def load_files(self, files: dict[str, str], label: str) -> None:
        self._status(f"Loading {label}…")
        self._load(files, label, None, given=self._given())

    @on(OptionList.OptionSelected, "#capture-samples")
    def _sample_chosen(self, event: OptionList.OptionSelected) -> None:
        sample = next((s for s in self.state.samples if s.key == event.option.id), None)
        if sample is not None:
            self.load_sample(sample)

    def _opened(self, path: str | None) -> None:
        if not path:
            return
        self.open_file(path)

    def _browsed(self, path: str | None) -> None:
        if path is None:
            return
        self.open_file(path)

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """An opened file, a load or a live fetch that failed is shown inline; the
        previous capture stays."""
        if worker.group == "capture":
            self.post_message(CaptureFailed(message))
        else:
            super().worker_failed(worker, message)

    def open_file(self, path: str) -> None:
        """Open one file: its kind comes from its content (aicr_tui.core.services.capture)."""
        self._status(f"Opening {Path(path).name}…")
        self._open(path, dict(self.state.capture_files), self.state.snapshot, self._given())

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="capture",
        description="Recognise an opened file and load the capture it makes",
    )
    def _open(
        self, path: str, files: dict[str, str], snapshot: Snapshot | None, given: dict[str, str]
    ) -> None:
        services = self.wizard.services
        opened = services.open_file(path, files, snapshot)
        new_files = dict(opened.capture.files)
        result = services.load_capture(new_files)
        criteria, derived = services.derive_criteria(result.snapshot, given)
        label = " + ".join(Path(new_files[k]).name for k in sorted(new_files))
        self.post_message(
            CaptureLoaded(
                result,
                new_files,
                label,
                None,
                note=opened.describe(),
                change=opened.change,
                opened=path,
                criteria=criteria,
                derived=derived,
            )
        )

    def _given(self) -> dict[str, str]:
        """The criteria the user chose (main thread): they win over the capture's."""
        state = self.state
        return {f: state.criteria[f] for f in state.user_criteria if state.criteria.get(f)}

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="capture",
        description="Project provider dumps into a snapshot",
    )
    def _load(
        self,
        files: dict[str, str],
        label: str,
        sample: str | None,
        *,
        note: str = "",
        change: str = "new",
        given: dict[str, str] | None = None,
    ) -> None:
        services = self.wizard.services
        result = services.load_capture(files)
        criteria, derived = services.derive_criteria(result.snapshot, given or {})
        self.post_message(
            CaptureLoaded(
                result,
                files,
                label,
                sample,
                note=note or f"Loaded {label}",
                change=change,
                criteria=criteria,
                derived=derived,
            )
        )

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="capture",
        description="Fetch a live capture",
    )
    def _fetch(self, request: LiveRequest, cancel: threading.Event, given: dict[str, str]) -> None:
        def progress(text: str) -> None:
            self.post_message(LiveProgress(text))

        result = self.wizard.services.live_capture(request, cancel, progress)
        if cancel.is_set():
            self.post_message(CaptureFailed("live capture cancelled; nothing changed"))
            return
        criteria, derived = self.wizard.services.derive_criteria(result.snapshot, given)
        self.post_message(
            CaptureLoaded(
                result,
                {},
                "live capture",
                None,
                note="Loaded the live capture: it replaces the previous capture",
                change="replaced",
                criteria=criteria,
                derived=derived,
            )
        )

    def _fetch_requested(self, values: dict[str, str] | None) -> None:
        if values is None:
            return
        request = LiveRequest.from_form(values)
        self.state.kubeconfig = request.kubeconfig
        self.state.kube_context = request.context
        self._cancel = threading.Event()
        self._status("Fetching live capture… (x cancels)")
        self._fetch(request, self._cancel, self._given())

    # -- results ------------------------------------------------------------------------
    @on(CaptureLoaded)
    def _loaded(self, message: CaptureLoaded) -> None:
        state = self.state
        state.capture = message.result
        state.capture_seq += 1
        state.snapshot = message.result.snapshot
        state.capture_files = dict(message.files)
        state.capture_label = message.label
        state.sample_key = message.sample
        state.capture_note = message.note
        state.last_change = message.change
        state.last_opened = message.opened
        state.verdict = None
        state.recipe = None
        state.last_error = ""
        if message.sample is None:
            # A new capture: the service's defaults, then the user's choices, then what
            # the snapshot names (nothing of an earlier capture survives).
            service = state.criteria.get("service", "")
            if "service" not in state.user_criteria:
                service = str(message.criteria.get("service") or service)
            criteria = dict(OKE_CRITERIA if service == "oke" else AKS_CRITERIA)
            criteria.update({f: state.criteria[f] for f in state.user_criteria})
            state.criteria = criteria
        for dim in message.derived:
            value = message.criteria.get(dim)
            if value:
                state.criteria[dim] = str(value)
        state.derived = tuple(message.derived)
        if message.sample is None:
            state.profile_value = None
        self._cancel = None
        self._render_capture()
        self.refresh_bindings()
        hint = "   c: only this file" if message.change == "added" else ""
        self._status(f"{message.note}. n: recipe step{hint}")
        for warning in state.warnings:
            self.notify(escape_markup(warning), severity="warning", timeout=8)

    @on(CaptureFailed)
    def _failed(self, message: CaptureFailed) -> None:
        self.state.last_error = message.text
        self._cancel = None
        status = self.query_one("#capture-status", Static)
        status.update(safe_text(for_wizard(message.text), multiline=True))
        status.set_class(True, "error")

    @on(LiveProgress)
    def _progress(self, message: LiveProgress) -> None:
        self._status(message.text)

    @on(FilterBar.FilterChanged)
    def _filter_changed(self, message: FilterBar.FilterChanged) -> None:
        self._render_capture(message.text)

    def _status(self, text: str) -> None:
        status = self.query_one("#capture-status", Static)
        status.update(safe_text(text, multiline=True))
        status.set_class(False, "error")

    def _render_capture(self, query: str | None = None) -> None:
        if query is None:
            bars = self.query(FilterBar)
            query = bars.first().value if bars else ""
        target = self._filter_target

        def q(pane: str) -> str:
            return query if pane == target else ""

        state = self.state
        label = self.query_one("#capture-label", Static)
        label.update(
            f"Capture: {escape_markup(state.capture_label)}"
            if state.capture_label
            else "No capture loaded"
        )
        pools = self.query_one("#capture-pools", FitTable)
        readings = self.query_one("#capture-readings", FitTable)
        with self.app.batch_update():
            self._filter_samples(q("capture-samples"))
            # At 80 columns the projected mode first wraps at its spaces ("(not a GPU
            # pool)"), so the VM size keeps room to break at a "_" rather than mid-token;
            # then the source file, then the size/state, then the name wrap rather than
            # being cut.
            pool_rows = []
            for i, row in enumerate(state.rows):
                cells = (row.name, row.mode, row.detail, row.source)
                if matches(" ".join(cells), q("capture-pools")):
                    pool_rows.append((f"row-{i}", tuple(escape_markup(c) for c in cells)))
            pools.fill(
                ("name", "projected mode", "size / state", "source"),
                pool_rows,
                shrink=((1, 9), (3, 8), (2, 8), (0, 15)),
            )
            # The reading's name first and whole; a long value wraps under itself. The
            # readings that decide the gpuStack verdict (the pools' driver, the add-on
            # state) come first: in document order they sat below the fold at 80x24.
            shown = [
                (path, value)
                for path, value in snapshot_readings(state.snapshot)
                if matches(f"{path} {value}", q("capture-readings"))
            ]
            shown.sort(key=lambda reading: reading[0] not in DECIDING_READINGS)
            readings.fill(
                ("reading", "value"),
                [(path, (escape_markup(path), escape_markup(value))) for path, value in shown],
                shrink=((1, 14), (0, 20)),
            )

    def _filter_samples(self, query: str) -> None:
        """Show the samples whose title matches (all of them for an empty query)."""
        options = self.query_one("#capture-samples", OptionList)
        if not self.state.samples:
            return
        wanted = [s for s in self.state.samples if matches(s.title, query)]
        shown = [o.id for o in options.options]
        if shown == [s.key for s in wanted]:
            return
        options.clear_options()
        for sample in wanted:
            missing = sample.missing()
            label = sample.title + (" (files missing)" if missing else "")
            options.add_option(Option(label, id=sample.key, disabled=bool(missing)))
        if wanted:
            options.highlighted = 0
