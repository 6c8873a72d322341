"""Step 2, recipe: the selection as selects, the qualification verdict live on every change.

Each change re-runs ``qualify`` (the call ``aicr-tui recipe`` makes): on the UI thread once
the core is warm for the capture and criteria, so the verdict is on screen in the
keystroke's own frame; the first one (and any slow one) in an exclusive thread worker, so
a newer selection cancels an older one. Which other ``gpuStack`` values qualify (what ``s``
offers) is cached per capture and criteria. A failed verdict fills the troubleshooting
panel with the cause and the remedies as keys; ``d`` shows the values the other
``gpuStack`` value would change, side by side.

The layout stays put while the selection changes (``←``/``→`` step a select, one key per
value): the troubleshooting panel is always on screen (with nothing to fix it offers the
keys), the constraint list and the troubleshooting text are panes that draw their own
lines (``TextPane``), the verdict line is repainted in place when it keeps its number of
lines, and the footer is one line: a verdict repaints the widgets whose text changed and
never lays the screen out again (Textual places every widget again and repaints what
moved, which took longer than the verdict). Every widget on the screen keeps the lines it
painted (``KeptLines``): a frame repaints the box around everything that changed, which
is most of the screen, and the widgets in it that did not change hand their lines back.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static
from textual.worker import Worker

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.host import HostedScreen
from aicr_tui.screens.markup import escape_markup
from aicr_tui.screens.recipe_results import (
    ChoicesReady,
    DiffReady,
    VerdictReady,
    diff_cell,
    finding_line,
    profile_info,
    qualifying_values,
)
from aicr_tui.screens.remedies import for_wizard
from aicr_tui.screens.state import (
    CRITERIA_FIELDS,
    NO_PLATFORM,
    pool_vm_sizes,
    verdict_checks,
    verdict_error_text,
)
from aicr_tui.screens.widgets.cycle_select import CycleSelect
from aicr_tui.screens.widgets.fit_table import FitTable
from aicr_tui.screens.widgets.kept_lines import (
    KeptHeader,
    KeptHorizontal,
    KeptStatic,
    KeptVertical,
)
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.static_text import set_text
from aicr_tui.screens.widgets.text_pane import TextPane
from aicr_tui.screens.widgets.verdict_line import VerdictLine
from aicr_tui.screens.widgets.wizard_dialogs import TextModal
from aicr_tui.screens.widgets.wizard_filter import FilterBar, matches

if TYPE_CHECKING:
    from aicr_tui.core.recipe.capture_match import CriteriaConflict
    from aicr_tui.core.recipe.qualification import QualificationVerdict
    from aicr_tui.core.recipe.troubleshooting import Finding

DEFAULT_VALUE = "__default__"
# A qualification of at most this much CPU time runs inline on the UI thread (requalify).
INLINE_QUALIFY_MS = 8.0


class RecipeScreen(HostedScreen):
    """Criteria and gpuStack selects; verdict, constraints, troubleshooting, profile diff."""

    CSS_PATH = "recipe.tcss"
    TITLE = "2 Recipe"
    BINDINGS: ClassVar[list[BindingType]] = [
        # Short words: the whole footer fits 80 columns, with a select's "←→ Value" too;
        # ? lists every key. `l` does what esc does (back to the capture step) and the
        # troubleshooting panel names it, so the footer leaves it out for room.
        Binding("s", "switch_profile", "Switch", id="recipe.switch"),
        Binding("b", "bundle", "Bundle", id="recipe.bundle"),
        Binding("v", "validate", "Validate", id="recipe.validate"),
        Binding("d", "toggle_diff", "Diff", id="recipe.diff"),
        Binding("l", "load_capture", "Load", id="recipe.load", show=False),
        Binding("r", "recapture", "Recapture", id="recipe.recapture"),
        # Named in the troubleshooting panel when the capture contradicts the selection.
        Binding("t", "take_capture", "Take capture's value", id="recipe.take", show=False),
        Binding("c", "recipe_list", "Recipes", id="recipe.list", show=False),
        Binding("D", "drift", "Drift", id="recipe.drift", key_display="D", show=False),
        Binding("escape", "back", "Back", id="recipe.back", show=False),
        Binding("g", "guide", "Guide", id="recipe.guide", show=False),
        Binding("slash", "filter", "Filter", id="recipe.filter", key_display="/", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seq = 0
        self._populating = False
        self._findings: list[Finding] = []
        self.last_latency_ms: float | None = None  # qualify() alone, in the worker
        self.last_roundtrip_ms: float | None = None  # selection change -> verdict rendered
        self.shown_seq = 0  # the selection whose verdict is rendered (bench/wizard_bench)
        self.verdict_shown_at = 0.0  # perf_counter() when it was
        self._asked_at = 0.0
        self._qualified_inputs: tuple[object, ...] | None = None
        self._qualifying: tuple[str, ...] = ()
        # Per capture and criteria: which gpuStack values qualify (what `s` may offer).
        self._value_ok: dict[tuple[object, ...], dict[str, bool]] = {}
        self._inline = False  # the first qualification runs in a worker (catalog load)
        self._diff_title = ""  # the diff being computed: `current  ->  other`
        # The troubleshooting panel has a failure or a finding to show. The panel is always
        # there, so a verdict that flips between pass and fail moves nothing on screen.
        self._troubled = False
        self._ok = False  # the last verdict shown passed
        self._shown_text: dict[str, str] = {}  # what _update_static last set, per widget
        self.diff_rows: list[tuple[str, str, str, str]] = []

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield KeptHeader(icon="◆")
        with KeptVertical(id="recipe-body"):
            with KeptHorizontal(id="recipe-top"):
                with KeptVertical(id="recipe-form"):
                    for field in CRITERIA_FIELDS:
                        yield CycleSelect(self._choices(field), label=field, id=f"sel-{field}")
                    yield CycleSelect(
                        [("(default)", DEFAULT_VALUE)], label="gpuStack", id="sel-profile"
                    )
                    yield KeptStatic("", id="recipe-capture", markup=False)
                with KeptVertical(id="recipe-main"):
                    yield VerdictLine(id="verdict-line")
                    yield TextPane(id="recipe-checks", zebra=True, pad=1)
            yield TextPane(id="trouble-panel")
            with KeptVertical(id="diff-panel"):
                yield Static("", id="diff-title", markup=False)
                yield FitTable(id="diff-table")
        yield FilterBar(id="recipe-filter")
        yield KeysFooter()

    def _choices(self, field: str) -> list[tuple[str, str]]:
        """The select's options: the catalog's values once loaded, else the current value."""
        values = [v for v in self.state.choices.get(field, []) if v != "any"]
        current = self.state.criteria.get(field)
        if current and current != NO_PLATFORM and current not in values:
            values.append(current)
        choices = [(escape_markup(v), v) for v in values]
        if field == "platform":
            choices.insert(0, ("(none)", NO_PLATFORM))
        return choices

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="choices",
        description="Load the catalog's criteria values",
    )
    def _load_choices(self) -> None:
        choices = {f: self.wizard.services.criteria_values(f) for f in CRITERIA_FIELDS}
        self.post_message(ChoicesReady(choices, ""))

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        """A failed worker's line goes where its result would have: the catalog values'
        notification, the diff's title."""
        if worker.group == "choices":
            self.post_message(ChoicesReady({}, message))
        elif worker.group == "diff":
            self.post_message(DiffReady([], self._diff_title, message))
        else:
            super().worker_failed(worker, message)

    @on(ChoicesReady)
    def _choices_ready(self, message: ChoicesReady) -> None:
        if message.error:
            self.notify(
                f"Catalog values unavailable: {escape_markup(message.error)}", severity="error"
            )
            return
        self.state.choices = message.choices
        self.sync_from_state()

    def on_mount(self) -> None:
        self.sub_title = "selection and live qualification"
        self.query_one("#diff-panel").display = False
        self._watch_selects()
        if not self.state.choices:
            self._load_choices()

    def on_screen_resume(self) -> None:
        # Also sent on the first show: the one place the selects follow the wizard state.
        self.sync_from_state()

    def sync_from_state(self) -> None:
        """Set the selects from the wizard state; re-qualify when the inputs changed."""
        self._populating = True
        try:
            for field in CRITERIA_FIELDS:
                select = self.query_one(f"#sel-{field}", CycleSelect)
                value = self.state.criteria.get(field) or (
                    NO_PLATFORM if field == "platform" else ""
                )
                options = self._choices(field)
                current = select.values
                if current != [v for _, v in options]:
                    select.set_options(options)
                if value in {v for _, v in options} and select.value != value:
                    select.value = value
        finally:
            self.call_after_refresh(self._end_populating)
        self._show_capture_line()
        inputs = self._inputs()
        if inputs != self._qualified_inputs:
            self.requalify()

    def _show_capture_line(self) -> None:
        """Which capture the verdict is against, and which criteria it filled in."""
        state = self.state
        label = state.capture_label or "none (criteria-only: constraints are recorded)"
        lines = [f"capture: {label}"]
        if state.derived:
            lines.append("from the capture: " + ", ".join(state.derived))
        for note in state.criteria_notes:
            if note.startswith("no overlay covers"):
                lines.append(note)
        self._update_static("#recipe-capture", safe_text("\n".join(lines), multiline=True))

    def _inputs(self) -> tuple[object, ...]:
        """What a verdict depends on: the selection and which capture is loaded."""
        state = self.state
        return (tuple(sorted(self._criteria().items())), state.profile_value, state.capture_seq)

    def _end_populating(self) -> None:
        self._populating = False

    # -- qualification ------------------------------------------------------------------
    def _watch_selects(self) -> None:
        """Follow each select's value as it is set, not only through its bubbled Changed.

        The watcher runs inside the select's own handling of the choosing key, so the
        verdict is rendered in the same frame as the select closing. A Changed message
        bubbles up five containers and reaches the screen only after that frame and the
        footer's rebuild for the focus change (tens of milliseconds later). Values set by
        this screen (``_populating``) are skipped here as in ``_changed``; the Changed that
        follows finds the state already up to date.
        """
        for select in self.query(CycleSelect):
            self.watch(select, "value", partial(self._select_value, select), init=False)

    def _select_value(self, select: CycleSelect, value: object) -> None:
        if self._populating or value != select.value:
            return
        self._chosen(select.id or "", value)

    @on(CycleSelect.Changed)
    def _changed(self, event: CycleSelect.Changed) -> None:
        if self._populating or event.value != event.select.value:
            return  # ours (set_options picks a first option before the real one), or stale
        self._chosen(event.select.id or "", event.value)

    def _chosen(self, select_id: str, value: object) -> None:
        """The user chose ``value`` in select ``select_id``: update the selection and
        re-qualify (nothing when the state already has it)."""
        if select_id == "sel-profile":
            chosen = None if value == DEFAULT_VALUE else str(value)
            if chosen == self.state.profile_value:
                return
            self.state.profile_value = chosen
        elif select_id.startswith("sel-"):
            field = select_id[4:]
            if self.state.criteria.get(field) == value:
                return
            self.state.criteria[field] = str(value)
            # A value the user picks wins over the capture's from now on.
            self.state.user_criteria.add(field)
            self.state.derived = tuple(d for d in self.state.derived if d != field)
            if field == "service":
                self.state.profile_value = None
        else:
            return
        self.requalify()

    def requalify(self) -> None:
        """Qualify the current selection and show the verdict.

        Once the core is warm (the last qualification took at most ``INLINE_QUALIFY_MS``
        of CPU) the verdict is computed here, on the UI thread, with the other gpuStack
        values not yet known for these criteria (what ``s`` may offer), and is on screen
        in the same frame as the keystroke: handing a sub-millisecond call to a thread
        cost 30-45 ms in GIL hand-offs, on every first step to new criteria. The first
        qualification (the catalog loads) and any after a slow one run in a worker, so
        the screen never freezes.
        """
        self._qualified_inputs = self._inputs()
        self._asked_at = time.perf_counter()
        self._seq += 1
        derived = set(self.state.derived)
        given = {k: v for k, v in self._criteria().items() if k not in derived}
        profile = self.state.profile_value
        if not self._inline:
            self._qualify(self._seq, given, profile)
            return
        self._verdict(self._qualification(self._seq, given, profile))

    def _criteria(self) -> dict[str, str]:
        return {k: v for k, v in self.state.criteria.items() if v and v != NO_PLATFORM}

    def _alternatives_key(self, given: dict[str, str]) -> tuple[object, ...]:
        """What the set of qualifying gpuStack values depends on: the capture and the
        criteria (not the value chosen, which only says which one is current)."""
        return (self.state.capture_seq, tuple(sorted(given.items())))

    def _qualification(self, seq: int, given: dict[str, str], profile: str | None) -> VerdictReady:
        """``given``: the criteria the user chose or kept; open ones follow the snapshot,
        as ``aicr-tui recipe --snapshot`` derives them (one core call for both).

        Runs on the UI thread or in a worker: it reads the wizard state and writes only
        the per-capture cache of which values qualify (a dict update, atomic under the
        GIL). The other gpuStack values not yet known for these criteria are qualified
        too, so ``s`` can offer one. ``elapsed_ms`` is wall time; ``fastest_ms``, what
        decides whether the next one runs inline, is CPU time: a call in a worker waits
        for the GIL while the UI runs, and its wall time says little of what it would
        cost inline.
        """
        from aicr_tui.core.services.errors import error_line

        started = time.perf_counter()
        started_cpu = time.thread_time()
        selection = f"gpuStack={profile}" if profile else None
        services = self.wizard.services
        snapshot, warnings = self.state.snapshot, self.state.warnings
        notes: tuple[str, ...] = ()
        try:
            result = services.qualify(given, selection, snapshot, warnings)
            verdict: QualificationVerdict | None = result.verdict
            notes = result.notes
            error = ""
        except Exception as exc:
            verdict, error = None, error_line(exc)
        elapsed = (time.perf_counter() - started) * 1000
        fastest = (time.thread_time() - started_cpu) * 1000
        qualifying: tuple[str, ...] | None = ()
        if verdict is not None and not error:
            known = self._value_ok.setdefault(self._alternatives_key(given), {})
            name, values, default, selected = profile_info(verdict)
            current = selected or default
            if current:
                known[current] = verdict.ok
            fastest = min(fastest, self._qualify_values(given, name, values, known))
            qualifying = qualifying_values(values, current, known)
        message = VerdictReady(seq, verdict, error, elapsed, qualifying=qualifying, notes=notes)
        message.fastest_ms = fastest
        return message

    def _qualify_values(
        self, given: dict[str, str], name: str, values: list[str], known: dict[str, bool]
    ) -> float:
        """Record whether each gpuStack value not yet in ``known`` qualifies the capture;
        return the fastest of those qualifications in CPU ms (inf when none ran)."""
        services = self.wizard.services
        snapshot, warnings = self.state.snapshot, self.state.warnings
        fastest = float("inf")
        for other in values:
            if other in known:
                continue
            started = time.thread_time()
            try:
                alt = services.qualify(given, f"{name}={other}", snapshot, warnings)
            except Exception:
                known[other] = False
                continue
            fastest = min(fastest, (time.thread_time() - started) * 1000)
            known[other] = alt.verdict.ok
        return fastest

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="verdict",
        description="Qualify the selection against the snapshot",
    )
    def _qualify(self, seq: int, given: dict[str, str], profile: str | None) -> None:
        self.post_message(self._qualification(seq, given, profile))

    @on(VerdictReady)
    def _verdict(self, message: VerdictReady) -> None:
        if message.seq != self._seq:
            return  # a newer selection is on its way
        # Inline from now on only while the core answers within a frame's share.
        self._inline = message.fastest_ms <= INLINE_QUALIFY_MS
        state = self.state
        state.verdict = message.verdict
        state.criteria_notes = message.notes
        self._set_qualifying(message.qualifying or ())
        self._show_capture_line()
        ok = message.verdict is not None and message.verdict.ok and not message.error
        self._ok = ok
        state.recipe = message.verdict.recipe if ok and message.verdict is not None else None
        state.last_error = message.error or verdict_error_text(message.verdict)
        self.last_latency_ms = message.elapsed_ms
        # The troubleshooting first: the verdict line counts the guide notes it finds.
        self._render_trouble(ok)
        self._render_verdict(message)
        self._update_profile_select()
        if self.query_one("#diff-panel").display:
            self._compute_diff()
        self.verdict_shown_at = time.perf_counter()
        self.last_roundtrip_ms = (self.verdict_shown_at - self._asked_at) * 1000
        self.shown_seq = message.seq

    def _update_profile_select(self) -> None:
        name, values, default, selected = profile_info(self.state.verdict)
        select = self.query_one("#sel-profile", CycleSelect)
        options = [
            (f"default: {escape_markup(default)}" if default else "(default)", DEFAULT_VALUE)
        ]
        options += [(escape_markup(v), v) for v in values]
        # "default: azure-managed" and "azure-managed" resolve alike: → steps past the twin.
        select.same_as = {DEFAULT_VALUE: default} if default else {}
        current = self.state.profile_value or DEFAULT_VALUE
        if [v for _, v in options] != select.values:
            self._populating = True
            select.set_options(options)
            self.call_after_refresh(self._end_populating)
        if current in {v for _, v in options} and select.value != current:
            self._populating = True
            select.value = current
            self.call_after_refresh(self._end_populating)

    def _render_verdict(self, message: VerdictReady, query: str | None = None) -> None:
        if query is None:
            query = self.query_one(FilterBar).value
        line = self.query_one("#verdict-line", VerdictLine)
        verdict = message.verdict
        ok = verdict is not None and verdict.ok and not message.error
        _, _, default, selected = profile_info(verdict)
        value = selected or self.state.profile_value or default or "default"
        shown_ok: bool | None = ok
        if ok:
            count = len(self._findings)
            notes = f" · g: {count} guide note{'' if count == 1 else 's'}" if count else ""
            if self.state.snapshot:
                text = f"PASS  gpuStack={value} resolves (against the snapshot) · b: bundle{notes}"
            else:  # nothing was checked: neither a green PASS nor a red FAIL
                shown_ok = None
                text = (
                    f"not verified (no capture): gpuStack={value} resolves from the criteria "
                    f"alone · l: load a capture · b: bundle{notes}"
                )
        else:
            failing = [c for c in verdict_checks(verdict) if c.status not in ("passed", "deferred")]
            if failing and not message.error:
                first = failing[0]
                more = f" (+{len(failing) - 1} more)" if len(failing) > 1 else ""
                text = (
                    f"FAIL  gpuStack={value}: {first.name} expected {first.expected}, "
                    f"observed {first.actual}{more}"
                )
            else:
                error = message.error or verdict_error_text(verdict) or "not qualified"
                # The remedy after the dash is in the troubleshooting panel below.
                text = f"FAIL  {error.split(' — ')[0]}"
        line.show(safe_text(text), shown_ok)
        # Two lines per constraint: the name, then status, expected ("want"), observed
        # ("got") and source; at 80 columns the second line wraps, nothing is cut.
        rows = [
            f"{check.name}\n{check.status}: want {check.expected}, "
            f"got {check.actual} · {check.source}"
            for check in verdict_checks(verdict)
            if matches(
                " ".join((check.name, check.status, check.expected, check.actual, check.source)),
                query,
            )
        ]
        self.query_one("#recipe-checks", TextPane).show(
            rows, header="constraint / status: want, got · from"
        )

    def _render_trouble(self, ok: bool) -> None:
        from aicr_tui.core.recipe.troubleshooting import DiagnosisContext, diagnose, recipe_view

        state = self.state
        crit = state.criteria
        _, _, default, selected = profile_info(state.verdict)
        ctx = DiagnosisContext(
            snapshot=state.snapshot,
            service=crit.get("service"),
            accelerator=crit.get("accelerator"),
            intent=crit.get("intent"),
            platform=crit.get("platform"),
            profile_value=state.profile_value or selected or default,
            recipe=recipe_view(state.recipe),
            pool_vm_sizes=pool_vm_sizes(state.projections),
            capture_warnings=state.warnings,
        )
        self._findings = diagnose(ctx)
        self._troubled = not ok or any(f.certainty == "shown" for f in self._findings)
        self._place_panels()
        self._show_trouble_text(ok)

    def _place_panels(self) -> None:
        """The troubleshooting panel stays on screen, with or without something to fix, so
        a verdict that flips moves nothing; only the open diff takes its room while there
        is nothing to troubleshoot."""
        panel = self.query_one("#trouble-panel")
        shown = self._troubled or not self.query_one("#diff-panel").display
        if panel.display != shown:
            panel.display = shown

    def _show_trouble_text(self, ok: bool) -> None:
        self.query_one("#trouble-panel", TextPane).show([self._trouble_text(ok)])

    def _update_static(self, selector: str, text: str) -> None:
        """Set a Static's text; unchanged text is left alone, so it costs no layout or
        repaint (each verdict re-renders every panel, most of them unchanged), and text
        that takes as many lines as before repaints the widget alone (see set_text)."""
        if self._shown_text.get(selector) == text:
            return
        self._shown_text[selector] = text
        set_text(self.query_one(selector, Static), text)

    def _set_qualifying(self, qualifying: tuple[str, ...]) -> None:
        """What ``s`` may switch to. The footer is rebuilt (a costly recompose) only when
        whether and where ``s`` switches changed."""
        before = self.switch_target()
        self._qualifying = qualifying
        if self.switch_target() != before:
            self.refresh_bindings()

    def trouble_text(self) -> str:
        """What the troubleshooting panel says is wrong and how to fix it: empty when the
        verdict passes and no finding is shown (the panel then only offers the keys)."""
        return self._trouble_text(False) if self._troubled else ""

    def _trouble_text(self, ok: bool) -> str:
        other = self.switch_target()
        actions = [
            "c: catalog recipes",
            "l: load another capture",
            "r: recapture command",
            "g: guide",
        ]
        if other:
            actions.insert(0, f"s: switch to gpuStack={other} (it qualifies)")
        conflicts = self._conflicts()
        if conflicts:
            taken = ", ".join(f"{c.dimension}={c.observed.value}" for c in conflicts)
            actions.insert(0, f"t: take the capture's {taken}")
        lines = ["   ".join(actions)]
        if not self._troubled:
            lines.insert(0, "Nothing to troubleshoot: the selection qualifies.")
        for conflict in conflicts:
            seen_at = conflict.observed
            lines.append(
                f"The capture contradicts the selection: {conflict.dimension} "
                f"{conflict.stated} was chosen, the capture records {seen_at.value} "
                f"({seen_at.reading}: {seen_at.raw})"
            )
        if not ok and self.state.last_error:
            lines.append(self.state.last_error)
        said = self.state.last_error if not ok else ""
        shown = [f for f in self._findings if f.certainty == "shown"]
        for f in shown:
            lines.append(finding_line(f.entry.title, f.evidence))
            lines.append(f"  cause: {f.entry.cause}")
            lines.append(f"  remedy: {f.entry.remedy}")
        if not ok:
            seen = {f.entry.remedy for f in shown}
            for c in verdict_checks(self.state.verdict):
                # A remedy the error line above already gives is not said again.
                if c.remedy and c.status != "passed" and c.remedy not in seen:
                    seen.add(c.remedy)
                    if c.remedy not in said:
                        lines.append(f"{c.name}: {c.remedy}")
        likely = [f for f in self._findings if f.certainty != "shown"]
        if likely:
            lines.append("Also worth knowing: " + "; ".join(f.entry.title for f in likely))
        return for_wizard("\n".join(lines))

    # -- actions ------------------------------------------------------------------------
    def _conflicts(self) -> list[CriteriaConflict]:
        verdict = self.state.verdict
        return list(verdict.conflicts) if verdict is not None else []

    def action_take_capture(self) -> None:
        """Set every criterion the capture contradicts to the capture's value."""
        conflicts = self._conflicts()
        if not conflicts:
            self.notify("The selection agrees with the capture: nothing to take.")
            return
        state = self.state
        for c in conflicts:
            state.criteria[c.dimension] = c.observed.value
            state.user_criteria.discard(c.dimension)
            if c.dimension == "service":
                state.profile_value = None
        state.derived = tuple(dict.fromkeys((*state.derived, *(c.dimension for c in conflicts))))
        self.sync_from_state()

    def action_recipe_list(self) -> None:
        """Open the catalog's recipes; the chosen row's criteria become the selection."""
        from aicr_tui.core.recipe.catalog import load_catalog
        from aicr_tui.core.recipe.leaves import recipe_rows
        from aicr_tui.core.services.errors import error_line
        from aicr_tui.screens.widgets.recipe_list import RecipeListModal

        try:
            rows = recipe_rows(load_catalog())
        except Exception as exc:
            self.notify(f"Catalog unavailable: {escape_markup(error_line(exc))}", severity="error")
            return
        self.app.push_screen(RecipeListModal(rows, self._criteria()), self.choose_recipe)

    def choose_recipe(self, chosen: dict[str, str] | None) -> None:
        """Select the criteria of a catalog recipe: each dimension it names is set (the
        user's choice from now on); one it leaves open keeps the current value, except the
        platform, which is cleared."""
        if not chosen:
            return
        state = self.state
        if chosen.get("service") != state.criteria.get("service"):
            state.profile_value = None
        for field in CRITERIA_FIELDS:
            value = chosen.get(field)
            if value is None and field != "platform":
                continue
            state.criteria[field] = value or NO_PLATFORM
            state.user_criteria.add(field)
        state.derived = tuple(d for d in state.derived if d not in chosen)
        self.sync_from_state()

    def _other_value(self) -> str | None:
        """The other declared value (what the diff compares against)."""
        _, values, default, selected = profile_info(self.state.verdict)
        current = self.state.profile_value or selected or default
        others = [v for v in values if v != current]
        return others[0] if others else None

    def switch_target(self) -> str | None:
        """The value ``s`` switches to: only one that qualifies the current capture (with
        no capture loaded nothing is verified, so nothing is offered)."""
        if not self.state.snapshot:
            return None
        return self._qualifying[0] if self._qualifying else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_profile":
            return self.switch_target() is not None
        return True

    def action_switch_profile(self) -> None:
        other = self.switch_target()
        if other is None:
            self.notify(
                "No other gpuStack value qualifies this capture: fix the cluster and recapture.",
                severity="warning",
            )
            return
        _, _, default, _ = profile_info(self.state.verdict)
        self.state.profile_value = None if other == default else other
        self._update_profile_select()
        self.requalify()

    def action_toggle_diff(self) -> None:
        panel = self.query_one("#diff-panel")
        panel.display = not panel.display
        self._place_panels()
        if panel.display:
            self._compute_diff()

    def _compute_diff(self) -> None:
        _, _, default, selected = profile_info(self.state.verdict)
        current = self.state.profile_value or selected or default
        other = self._other_value()
        if not current or not other:
            self.query_one("#diff-title", Static).update("No other gpuStack value to compare.")
            return
        self._diff_title = f"{current}  ->  {other}"  # for a failure's line
        self._diff(dict(self._criteria()), current, other)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="diff",
        description="Compute the values the other profile value changes",
    )
    def _diff(self, criteria: dict[str, str], current: str, other: str) -> None:
        changes = self.wizard.services.profile_value_diff(criteria, current, other)
        rows = [(c.component, c.path, diff_cell(c.before), diff_cell(c.after)) for c in changes]
        self.post_message(DiffReady(rows, f"{current}  ->  {other}", ""))

    @on(DiffReady)
    def _diff_ready(self, message: DiffReady) -> None:
        self.diff_rows = message.rows
        title = self.query_one("#diff-title", Static)
        if message.error:
            title.update(safe_text(f"Diff {message.title}: {message.error}"))
        else:
            title.update(
                safe_text(
                    f"Diff {message.title}: {len(message.rows)} value(s) change"
                    if message.rows
                    else f"Diff {message.title}: no value changes"
                )
            )
        table = self.query_one("#diff-table", FitTable)
        current, _, other = message.title.partition("  ->  ")
        # Two lines per value (path, then now -> with the other value); at 80 columns a
        # long line wraps, so neither the path nor the target value is cut.
        header = "component:path / now -> after the switch"  # the values: in the title
        rows = [
            (
                f"diff-{i}",
                (escape_markup(f"{component}:{path}\n  {before}  ->  {after}", multiline=True),),
            )
            for i, (component, path, before, after) in enumerate(message.rows)
        ]
        with self.app.batch_update():
            table.fill((header,), rows, shrink=((0, 20),), height=2)

    def action_load_capture(self) -> None:
        self.wizard.show_capture()

    def action_drift(self) -> None:
        """Compare a second capture with the one this selection qualified on."""
        state = self.state
        if state.snapshot is None or state.recipe is None:
            self.notify(
                "Drift compares a second capture with a qualified one: load a capture and "
                "pick a selection that qualifies first.",
                severity="warning",
            )
            return
        from aicr_tui.screens.drift import DriftScreen

        self.app.push_screen(DriftScreen())

    def recapture_title(self) -> str:
        """The recapture dialog's title, true to the verdict: a missing reading, a failing
        one that needs a fix first, or a refresh."""
        checks = verdict_checks(self.state.verdict)
        failing = [c for c in checks if c.status not in ("passed", "deferred")]
        if self.state.snapshot is None:
            return "Capture a snapshot to verify this selection against"
        if any(c.actual == "(no reading)" for c in failing):
            return "Recapture the snapshot with the missing reading"
        if failing:
            return f"After fixing {failing[0].name}, recapture the snapshot"
        return "Recapture the snapshot (refresh the readings)"

    def action_recapture(self) -> None:
        self.app.push_screen(TextModal(self.recapture_title(), self.state.recapture_commands()))

    def action_bundle(self) -> None:
        self.wizard.show_bundle()

    def action_validate(self) -> None:
        self.wizard.show_validation()

    def action_guide(self) -> None:
        first = self._findings[0].entry.id if self._findings else ""
        self.wizard.action_guide(first)

    def action_back(self) -> None:
        self.wizard.show_capture()

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    @on(FilterBar.FilterChanged)
    def _filter_changed(self, message: FilterBar.FilterChanged) -> None:
        # Re-render from the last verdict; an error that came without a verdict is kept.
        error = "" if self.state.verdict is not None else self.state.last_error
        self._render_verdict(
            VerdictReady(self._seq, self.state.verdict, error, self.last_latency_ms or 0),
            message.text,
        )
