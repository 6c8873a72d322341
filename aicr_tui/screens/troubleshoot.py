"""The troubleshooting guide as a screen: every symptom, searchable, with what the state shows.

Entries the current capture/selection already shows are marked; ``/`` filters by any word
of the symptom, cause or remedy; ``c`` copies the entry's commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.host import HostedScreen, WizardHost
from aicr_tui.screens.state import pool_vm_sizes
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.widgets.wizard_filter import FilterBar

if TYPE_CHECKING:
    from aicr_tui.core.recipe.troubleshooting import Finding, GuideEntry


class TroubleshootScreen(HostedScreen):
    """Symptom list on the left, cause and remedy of the highlighted one on the right."""

    CSS_PATH = "troubleshoot.tcss"
    TITLE = "Troubleshooting guide"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="guide.back"),
        Binding("slash", "filter", "Filter", id="guide.filter", key_display="/"),
        Binding("c", "copy", "Copy commands", id="guide.copy"),
    ]

    def __init__(self, entry_id: str | None = None) -> None:
        super().__init__()
        self._initial = entry_id
        self._findings: dict[str, Finding] = {}
        self.current: GuideEntry | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="guide-body"):
            yield OptionList(id="guide-list")
            with VerticalScroll(id="guide-detail"):
                yield Static("", id="guide-text", markup=False)
        yield FilterBar(id="guide-filter")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = "symptoms, causes and remedies (AKS and OKE briefs)"
        self._findings = {f.entry.id: f for f in self._diagnose()}
        self._fill("")
        # Open on the named entry, else on the first one the current state shows.
        first = next(iter(self._findings), None)
        if self._initial or first:
            self.select_entry(self._initial or str(first))
        self.query_one("#guide-list", OptionList).focus()

    def _diagnose(self) -> list[Finding]:
        from aicr_tui.core.recipe.troubleshooting import DiagnosisContext, diagnose, recipe_view

        app = self.app
        if not isinstance(app, WizardHost):
            return []
        state = app.state
        crit = state.criteria
        return diagnose(
            DiagnosisContext(
                snapshot=state.snapshot,
                service=crit.get("service"),
                intent=crit.get("intent"),
                platform=crit.get("platform"),
                profile_value=state.profile_value,
                recipe=recipe_view(state.recipe),
                pool_vm_sizes=pool_vm_sizes(state.projections),
                capture_warnings=state.warnings,
            )
        )

    def _fill(self, query: str) -> None:
        from aicr_tui.core.recipe.troubleshooting import GUIDE, search_guide

        entries = search_guide(query) if query.strip() else list(GUIDE)
        # What the current state shows comes first (in diagnosis order), then the rest.
        rank = {entry_id: i for i, entry_id in enumerate(self._findings)}
        entries.sort(key=lambda e: rank.get(e.id, len(rank)))
        options = self.query_one("#guide-list", OptionList)
        options.clear_options()
        for entry in entries:
            mark = ""
            finding = self._findings.get(entry.id)
            if finding is not None:
                mark = "* " if finding.certainty == "shown" else "~ "
            options.add_option(Option(f"{mark}{entry.title}", id=entry.id))
        if entries:
            options.highlighted = 0
            self._show(entries[0])
        else:
            self.current = None
            self.query_one("#guide-text", Static).update(
                safe_text(f'No guide entry mentions "{query}".')
            )

    def select_entry(self, entry_id: str) -> None:
        options = self.query_one("#guide-list", OptionList)
        try:
            index = options.get_option_index(entry_id)
        except Exception:
            self._fill("")
            index = options.get_option_index(entry_id)
        options.highlighted = index
        from aicr_tui.core.recipe.troubleshooting import guide_entry

        self._show(guide_entry(entry_id))

    @on(OptionList.OptionHighlighted, "#guide-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        from aicr_tui.core.recipe.troubleshooting import guide_entry

        if event.option.id:
            self._show(guide_entry(event.option.id))

    def _show(self, entry: GuideEntry) -> None:
        self.current = entry
        lines = [entry.title, "", f"Symptom: {entry.symptom}", "", f"Cause: {entry.cause}", ""]
        lines.append(f"Remedy: {entry.remedy}")
        finding = self._findings.get(entry.id)
        if finding is not None:
            word = "shows this" if finding.certainty == "shown" else "makes this likely"
            lines += ["", f"Your current state {word}: {finding.evidence}"]
        if entry.commands:
            lines += ["", "Commands (c copies):", *(f"  {c}" for c in entry.commands)]
        lines += ["", f"Applies to: {', '.join(entry.services)}"]
        # The evidence quotes the capture (pool names, readings): terminal-safe.
        self.query_one("#guide-text", Static).update(safe_text("\n".join(lines), multiline=True))

    def action_copy(self) -> None:
        if self.current is None or not self.current.commands:
            self.notify("This entry has no commands to copy.", severity="warning")
            return
        self.app.copy_to_clipboard("\n".join(self.current.commands))
        # OSC 52 gets no answer: whether the terminal put it on the clipboard is unknown.
        self.notify(
            "Commands sent to the terminal's clipboard (OSC 52); a terminal without OSC 52 "
            "support ignores it, so select them on screen instead."
        )

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    @on(FilterBar.FilterChanged)
    def _filter_changed(self, message: FilterBar.FilterChanged) -> None:
        self._fill(message.text)

    def action_back(self) -> None:
        self.app.pop_screen()
