"""Bundle preview: components in deployment order, final values and manifests, overrides, write.

The screen is a face over ``aicr_tui.core.bundler``: every change in the overrides editor re-plans
the bundle (``plan_bundle``) in a thread worker and shows, per editor line, whether the
bundler accepts it, accepts it with a warning, or rejects it with the message the CLI
would print. Blocking checks keep the write action disabled. Writing asks for the output
directory, confirms before replacing a non-empty one, and runs ``write_bundle`` in a
thread worker. The Charts tab renders every step's pinned chart with the plan's values
through Helm's own engine (``aicr_tui.core.verify``, the same check as ``aicr-tui verify``) in a
thread worker after each plan, and lists the findings per component before anything is
written. Chart sources: ``verify_charts`` or ``$AICR_TUI_CHARTS`` (directories separated
by ``:``), else Helm pulls the pins into the cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static, TabbedContent, TabPane, TextArea, Tree

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.services.bundle import FeedbackCache, PreviewResult, warning_text
from aicr_tui.screens.markup import escape_markup
from aicr_tui.screens.widgets.bundle_dialogs import ConfirmModal, PathPromptModal
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from aicr_tui.screens.worker_errors import WorkerScreen

if TYPE_CHECKING:
    from aicr_tui.core.bundler import BundlePlan, ComponentPlan
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.verify.analysis import Verifier

SYNTAX_THEME = "ansi_dark"
PLAN_DEBOUNCE_S = 0.15

VERDICT_MARK = {
    "accepted": ("✓", "green"),
    "warning": ("!", "yellow"),
    "rejected": ("✗", "bold red"),
}

EDITOR_HELP = (
    "# one entry per line, as on the command line:\n"
    "#   --set component:path=value      --set-json component:path={...}\n"
    "#   --set-file component:path=FILE  --dynamic component:path\n"
    "#   --accelerated-node-toleration key[=value]:Effect\n"
)


class PlanReady(Message):
    """A re-plan finished (posted from the planning thread)."""

    def __init__(self, result: PreviewResult) -> None:
        super().__init__()
        self.result = result


class VerifyReady(Message):
    """A chart verification finished (posted from the verify thread)."""

    def __init__(self, generation: int, text: str, findings: int) -> None:
        super().__init__()
        self.generation = generation
        self.text = text
        self.findings = findings


class BundleWriteFinished(Message):
    def __init__(self, out_dir: Path, files: int, error: str = "") -> None:
        super().__init__()
        self.out_dir = out_dir
        self.files = files
        self.error = error


class BundlePreviewScreen(WorkerScreen[Path | None]):
    """Preview and write the bundle for one recipe.

    Dismisses with the written directory (``None`` when left without writing) and posts
    :class:`BundlePreviewScreen.Written` when a bundle lands on disk.
    """

    CSS_PATH = Path(__file__).with_suffix(".tcss")

    # The five tab keys share one footer entry ("tabs"), so the footer fits 80 columns.
    TABS = Binding.Group("tabs")
    BINDINGS = [
        Binding("w", "write", "Write", id="bundle.write"),
        Binding("o", "edit_overrides", "Overrides", id="bundle.overrides"),
        Binding("d", "cycle_deployer", "Deployer", id="bundle.deployer"),
        Binding("v", "show_tab('values')", "Values", id="bundle.values", group=TABS),
        Binding("m", "show_tab('manifests')", "Manifests", id="bundle.manifests", group=TABS),
        Binding("c", "show_tab('checks')", "Checks", id="bundle.checks", group=TABS),
        Binding("f", "show_tab('files')", "Files", id="bundle.files", group=TABS),
        Binding("k", "show_tab('charts')", "Charts", id="bundle.charts", group=TABS),
        Binding("escape", "back", "Back", id="bundle.back"),
        Binding("f7", "select_overrides", "Select all", id="bundle.select_all", show=False),
        Binding("f8", "clear_overrides", "Clear overrides", id="bundle.clear", show=False),
    ]

    PALETTE_ACTIONS = (
        ("Bundle: write", "Write the bundle to a directory (asks before replacing)", "write"),
        ("Bundle: edit overrides", "--set / --set-json / --set-file / --dynamic", "edit_overrides"),
        (
            "Bundle: show values",
            "Final values.yaml of the selected component",
            "show_tab('values')",
        ),
        (
            "Bundle: show manifests",
            "Rendered manifests of the selected component",
            "show_tab('manifests')",
        ),
        (
            "Bundle: next deployer",
            "helm → helmfile → argocd → argocd-helm → flux (the layout written)",
            "cycle_deployer",
        ),
        (
            "Bundle: show files",
            "Every file of the bundle and its entry point",
            "show_tab('files')",
        ),
        (
            "Bundle: show checks",
            "Blocking checks, rejected overrides, warnings, notes",
            "show_tab('checks')",
        ),
        (
            "Bundle: select all overrides",
            "Select the whole overrides editor (f7)",
            "select_overrides",
        ),
        ("Bundle: clear overrides", "Empty the overrides editor (f8)", "clear_overrides"),
        (
            "Bundle: show chart findings",
            "Every chart rendered with Helm: values it ignores, schema, CRDs, Kubernetes 1.34",
            "show_tab('charts')",
        ),
    )

    class DeployerChanged(Message):
        """The layout picked with ``d``: the app keeps it for the next visit."""

        def __init__(self, deployer: str) -> None:
            super().__init__()
            self.deployer = deployer

    class Written(Message):
        """A bundle was written to ``out_dir``."""

        def __init__(self, out_dir: Path) -> None:
            super().__init__()
            self.out_dir = out_dir

    def __init__(
        self,
        recipe: RecipeResult,
        *,
        default_output: Path,
        overrides: str = "",
        base_dir: Path | None = None,
        deployer: str = "helm",
        verify_charts: list[Path] | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.recipe = recipe
        self.deployer = deployer
        self.default_output = Path(default_output)
        self.base_dir = base_dir
        self.initial_overrides = overrides
        self.result: PreviewResult | None = None
        self.generation = 0
        self.selected_component = ""
        self.selected_manifest = ""
        self.written_to: Path | None = None
        self.writing = False
        self._debounce: Timer | None = None
        self._feedback_cache: FeedbackCache = {}
        self.verify_charts = verify_charts
        self._verifier: Verifier | None = None
        self.charts_text = ""  # what the Charts tab shows (the verify report)
        self.values_text = ""  # what the Values tab shows (YAML, highlighted on screen)
        self.manifests_text = ""
        self.files_text = ""  # what the Files tab shows: the file list, then the entry point

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static("", id="bundle-banner", markup=False)
        with Horizontal(id="bundle-body"):
            tree: Tree[tuple[str, str, str]] = Tree("deployment order", id="components")
            tree.show_root = False
            yield tree
            with TabbedContent(id="bundle-tabs", initial="values"):
                with TabPane("Values", id="values"):
                    with VerticalScroll(id="values-scroll"):
                        yield Static("", id="values-view", markup=False)
                with TabPane("Manifests", id="manifests"):
                    with VerticalScroll(id="manifests-scroll"):
                        yield Static("", id="manifests-view", markup=False)
                with TabPane("Overrides", id="overrides"):
                    with Vertical(id="overrides-box"):
                        yield TextArea(
                            self.initial_overrides or EDITOR_HELP,
                            id="overrides-editor",
                            show_line_numbers=True,
                            soft_wrap=False,
                        )
                        yield Static("", id="overrides-feedback", markup=False)
                with TabPane("Checks", id="checks"):
                    with VerticalScroll(id="checks-scroll"):
                        yield Static("", id="checks-view", markup=False)
                with TabPane("Files", id="files"):
                    with VerticalScroll(id="files-scroll"):
                        yield Static("", id="files-view", markup=False)
                with TabPane("Charts", id="charts"):
                    with VerticalScroll(id="charts-scroll"):
                        yield Static("rendering the charts…", id="charts-view", markup=False)
        yield Static("", id="bundle-status", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self._paint_banner()
        self._replan()
        self.query_one("#components", Tree).focus()

    # ------------------------------------------------------------- planning
    @on(TextArea.Changed, "#overrides-editor")
    def _overrides_changed(self) -> None:
        # Every edit re-plans; a burst of keystrokes is planned once, PLAN_DEBOUNCE_S after
        # the last one, so planning threads never pile up behind fast typing.
        self.generation += 1
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(PLAN_DEBOUNCE_S, self._replan)

    def _replan(self) -> None:
        self._debounce = None
        self.generation += 1
        text = self.query_one("#overrides-editor", TextArea).text
        self._plan_worker(text, self.generation)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="bundle-plan",
        description="plan the bundle",
    )
    def _plan_worker(self, text: str, generation: int) -> None:
        from aicr_tui.core.bundler.deployers.config import deployer_config
        from aicr_tui.core.services.bundle import preview

        result = preview(
            self.recipe,
            text,
            deployer=deployer_config(self.deployer),
            base_dir=self.base_dir,
            generation=generation,
            feedback_cache=self._feedback_cache,
        )
        self.post_message(PlanReady(result))

    def on_plan_ready(self, message: PlanReady) -> None:
        if message.result.generation != self.generation:
            return  # a newer edit is already being planned
        self.result = message.result
        with self.app.batch_update():
            self._paint_tree()
            self._paint_selection()
            self._paint_feedback()
            self._paint_checks()
            self._paint_files()
            self._paint_status()
            self._paint_banner()
        plan = self.plan
        if plan is not None and not plan.errors:
            self._verify_worker(plan, message.result.generation)
        else:
            self._show_charts("not verified: the plan has blocking errors (see Checks)")

    # ---------------------------------------------------------- chart verify
    def _chart_dirs(self) -> list[Path]:
        import os

        if self.verify_charts is not None:
            return list(self.verify_charts)
        env = os.environ.get("AICR_TUI_CHARTS", "")
        return [Path(p) for p in env.split(os.pathsep) if p]

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="bundle-verify",
        description="render the charts with Helm",
    )
    def _verify_worker(self, plan: BundlePlan, generation: int) -> None:
        from aicr_tui.core.foundation.errors import AicrError
        from aicr_tui.core.services.bundle import chart_verifier, verify
        from aicr_tui.screens.remedies import for_wizard

        try:
            if self._verifier is None:
                self._verifier = chart_verifier(self._chart_dirs())
            report = verify(plan, self._verifier)
        except AicrError as err:
            text = f"not verified: {for_wizard(err.render())}"
            self.post_message(VerifyReady(generation, text, 0))
            return
        self.post_message(VerifyReady(generation, report.render_text(), len(report.findings)))

    def on_verify_ready(self, message: VerifyReady) -> None:
        if message.generation != self.generation:
            return
        self._show_charts(message.text, message.findings)

    def _show_charts(self, text: str, findings: int = 0) -> None:
        from aicr_tui.core.foundation.textsafe import safe_text

        self.charts_text = safe_text(text, multiline=True)
        style = "yellow" if findings else ""
        self.query_one("#charts-view", Static).update(Text(self.charts_text, style=style))

    # --------------------------------------------------------------- painting
    @property
    def plan(self) -> BundlePlan | None:
        return self.result.plan if self.result is not None else None

    def _paint_banner(self) -> None:
        criteria = self.recipe.criteria
        shown = (criteria.service, criteria.accelerator, criteria.intent, criteria.os)
        parts = ["bundle", " ".join(v for v in shown if v not in ("", "any"))]
        profile = self.recipe.metadata.selectedProfile
        if profile is not None:
            parts.append(f"{profile.name}={profile.value}")
        parts.append(f"deployer {self.deployer} (d: next)")
        if self.plan is not None:
            parts.append(f"{len(self.plan.components)} components")
        self.query_one("#bundle-banner", Static).update(
            safe_text(" · ".join(p for p in parts if p))
        )

    def _paint_files(self) -> None:
        """Every file the deployer writes, then its entry point as it will be written."""
        view = self.query_one("#files-view", Static)
        plan = self.plan
        if plan is None:
            self.files_text = ""
            view.update(Text("no plan — see Checks", style="dim"))
            return
        files = plan.files
        entry = plan.entrypoint
        listing = "".join(
            f"# {path}  ({len(files[path])} bytes){'  <- entry point' if path == entry else ''}\n"
            for path in files
        )
        body = files.get(entry, b"").decode("utf-8", "replace") if entry else ""
        self.files_text = f"{listing}\n# --- {entry} ---\n{body}"
        if entry.endswith(".sh"):
            view.update(
                Syntax(
                    self.files_text,
                    "bash",
                    theme=SYNTAX_THEME,
                    word_wrap=False,
                    background_color="default",
                )
            )
        else:
            view.update(_yaml_view(self.files_text))

    def _paint_tree(self) -> None:
        tree: Tree[tuple[str, str, str]] = self.query_one("#components", Tree)
        plan = self.plan
        names = [c.name for c in plan.components] if plan is not None else []
        component_nodes = [
            node for node in tree.root.children if node.data and node.data[0] == "component"
        ]
        skipped_now = sorted(plan.skipped.items()) if plan is not None else []
        skipped_shown = [
            (node.data[1], node.data[2])
            for node in tree.root.children
            if node.data and node.data[0] == "skipped"
        ]
        if (
            plan is not None
            and names == [n.data[1] for n in component_nodes if n.data]
            and (skipped_now == skipped_shown)
        ):
            # Same components: refresh labels, and manifest children only where they changed.
            for node, component in zip(component_nodes, plan.components, strict=True):
                manifests = sorted(component.manifests)
                if [c.data[2] if c.data else "" for c in node.children] != manifests:
                    node.remove_children()
                    for path in manifests:
                        node.add_leaf(escape_markup(path), data=("manifest", component.name, path))
                node.allow_expand = bool(manifests)
                node.set_label(_component_label(component, plan))
            return
        tree.clear()
        if plan is None:
            return
        for component in plan.components:
            node = tree.root.add(
                _component_label(component, plan),
                data=("component", component.name, ""),
                expand=False,
            )
            for path in sorted(component.manifests):
                node.add_leaf(escape_markup(path), data=("manifest", component.name, path))
            # No expand arrow where there is nothing to expand: the name keeps the columns.
            node.allow_expand = bool(component.manifests)
        for name, reason in skipped_now:
            tree.root.add_leaf(
                Text(safe_text(f"– {name} (skipped)"), style="dim"), data=("skipped", name, reason)
            )
        if not self.selected_component or plan.component(self.selected_component) is None:
            self.selected_component = plan.components[0].name if plan.components else ""
        tree.root.expand()
        for index, node in enumerate(tree.root.children):
            if node.data and node.data[1] == self.selected_component:
                tree.move_cursor_to_line(index)
                break

    def _paint_selection(self) -> None:
        plan = self.plan
        values_view = self.query_one("#values-view", Static)
        manifests_view = self.query_one("#manifests-view", Static)
        component = plan.component(self.selected_component) if plan is not None else None
        if component is None:
            message = self.result.error if self.result and self.result.error else "no component"
            values_view.update(
                Text(
                    safe_text(message, multiline=True),
                    style="red" if self.result and self.result.error else "dim",
                )
            )
            manifests_view.update("")
            self.values_text = self.manifests_text = ""
            return
        self.values_text = self._values_text(component)
        values_view.update(_yaml_view(self.values_text))
        manifests = component.manifests
        if not manifests:
            self.manifests_text = ""
            manifests_view.update(
                Text(safe_text(f"{component.name} renders no manifests"), style="dim")
            )
            return
        if self.selected_manifest in manifests:
            chosen = {self.selected_manifest: manifests[self.selected_manifest]}
        else:
            chosen = dict(sorted(manifests.items()))
        self.manifests_text = "".join(
            f"# {path}\n{body.rstrip()}\n" for path, body in chosen.items()
        )
        manifests_view.update(_yaml_view(self.manifests_text))

    def _values_text(self, component: ComponentPlan) -> str:
        """The values.yaml exactly as it will be written (plus cluster-values for --dynamic)."""
        plan = self.plan
        files = plan.files if plan is not None else {}
        written = files.get(f"{component.folder}/values.yaml")
        if isinstance(written, bytes):
            text = written.decode("utf-8", "replace")
        else:
            from aicr_tui.core.foundation.yamlio import dump_yaml

            text = dump_yaml(component.values)
        header = f"# {component.folder}/values.yaml — {component.chart or component.name}"
        if component.version:
            header += f" {component.version}"
        out = f"{header}\n{text}"
        cluster = files.get(f"{component.folder}/cluster-values.yaml")
        if isinstance(cluster, bytes):
            out += f"\n# {component.folder}/cluster-values.yaml (--dynamic)\n"
            out += cluster.decode("utf-8", "replace")
        return out

    def _paint_feedback(self) -> None:
        result = self.result
        view = self.query_one("#overrides-feedback", Static)
        if result is None:
            view.update("")
            return
        text = Text(
            "one per line: --set c:path=v · --set-json c:path=JSON · --set-file c:path=FILE"
            " · --dynamic c:path · --accelerated-node-toleration key[=value]:Effect"
            " · f7 select all · f8 clear",
            style="dim",
        )
        if not result.lines:
            text.append("\nno overrides: the recipe's values as resolved", style="dim")
        for line in result.lines:
            mark, style = VERDICT_MARK[line.verdict]
            if text:
                text.append("\n")
            text.append(f"L{line.lineno} {mark} ", style=style)
            text.append(line.verdict, style=style)
            if line.message:
                text.append(f": {safe_text(line.message)}")
        if result.error:
            text.append(f"\n✗ {safe_text(result.error)}", style="bold red")
        view.update(text)

    def _paint_checks(self) -> None:
        view = self.query_one("#checks-view", Static)
        plan = self.plan
        text = Text()
        if self.result is not None and self.result.error:
            text.append("✗ the bundle cannot be planned\n", style="bold red")
            text.append(f"  {safe_text(self.result.error)}\n")
        rejected = self.result.rejected if self.result is not None else []
        if rejected:
            text.append(f"Rejected overrides ({len(rejected)})\n", style="bold red")
            for line in rejected:
                text.append(f"✗ L{line.lineno} ", style="bold red")
                text.append(f"{safe_text(line.raw)}\n", style="bold")
                text.append(f"  {safe_text(line.message)}\n")
            text.append("\n")
        if plan is None:
            view.update(text)
            return
        if plan.errors:
            text.append(f"Blocking ({len(plan.errors)})\n", style="bold red")
            for error in plan.errors:
                text.append("✗ ", style="bold red")
                text.append(safe_text(f"{error.check}"), style="bold")
                if error.component:
                    text.append(safe_text(f" [{error.component}]"))
                text.append(f"\n  {safe_text(error.message)}\n")
        else:
            text.append("✓ no blocking checks\n", style="green")
        if plan.warnings:
            text.append(f"\nWarnings ({len(plan.warnings)})\n", style="bold yellow")
            for warning in plan.warnings:
                text.append("! ", style="yellow")
                text.append(f"{safe_text(warning_text(warning))}\n")
        notes = plan.notes
        if notes:
            text.append(f"\nNotes ({len(notes)})\n", style="bold")
            for note in notes:
                text.append(f"· {safe_text(warning_text(note))}\n", style="dim")
        view.update(text)

    def _paint_status(self) -> None:
        status = self.query_one("#bundle-status", Static)
        plan = self.plan
        rejected = len(self.result.rejected) if self.result else 0
        if plan is None:
            status.update(Text("✗ no plan — see Checks", style="bold red"))
            status.set_class(True, "-blocked")
            return
        parts: list[str] = []
        blocked = bool(plan.errors) or rejected > 0
        if plan.errors:
            parts.append(f"✗ {len(plan.errors)} blocking")
        if rejected:
            parts.append(f"✗ {rejected} override line{'s' if rejected != 1 else ''} rejected")
        if self.written_to is not None and not blocked:
            # The written path leads (and wraps if it must): it is what the user needs next.
            parts.append(f"✓ written to {self.written_to}")
        elif blocked:
            parts.append("write disabled")
        else:
            parts.append(f"✓ ready · w writes {self.default_output}")
        if plan.warnings:
            parts.append(f"{len(plan.warnings)} warnings")
        status.update(safe_text(" · ".join(parts)))
        status.set_class(blocked, "-blocked")
        status.set_class(not blocked, "-ready")

    # ----------------------------------------------------------------- events
    @on(Tree.NodeHighlighted, "#components")
    def _node_highlighted(self, event: Tree.NodeHighlighted[tuple[str, str, str]]) -> None:
        data = event.node.data
        if not data:
            return
        kind, name, extra = data
        if kind == "skipped":
            self.query_one("#values-view", Static).update(
                Text(safe_text(f"{name} is not in the bundle: {extra}"), style="dim")
            )
            return
        self.selected_component = name
        self.selected_manifest = extra if kind == "manifest" else ""
        self._paint_selection()

    @on(Tree.NodeSelected, "#components")
    def _node_selected(self, event: Tree.NodeSelected[tuple[str, str, str]]) -> None:
        data = event.node.data
        if data and data[0] == "manifest":
            self.query_one("#bundle-tabs", TabbedContent).active = "manifests"

    def on_bundle_write_finished(self, message: BundleWriteFinished) -> None:
        self.writing = False
        if message.error:
            self.notify(
                escape_markup(message.error),
                title="Bundle not written",
                severity="error",
                timeout=8,
            )
            return
        self.written_to = message.out_dir
        self._paint_status()
        self.notify(
            f"{message.files} files written to {escape_markup(message.out_dir)}",
            title="Bundle written",
        )
        self.post_message(self.Written(message.out_dir))

    # ---------------------------------------------------------------- actions
    def action_show_tab(self, tab: str) -> None:
        self.query_one("#bundle-tabs", TabbedContent).active = tab

    def action_cycle_deployer(self) -> None:
        """Preview (and write) the next layout: helm, helmfile, argocd, argocd-helm, flux."""
        from aicr_tui.core.bundler.deployers.config import DEPLOYERS

        self.deployer = DEPLOYERS[(DEPLOYERS.index(self.deployer) + 1) % len(DEPLOYERS)]
        self.post_message(self.DeployerChanged(self.deployer))
        self.written_to = None
        self._paint_banner()
        self._replan()

    def action_edit_overrides(self) -> None:
        self.action_show_tab("overrides")
        editor = self.query_one("#overrides-editor", TextArea)
        editor.focus()
        # Never on a comment line: typing there would turn the comment into a value.
        if not editor.text.endswith("\n"):
            editor.insert("\n", editor.document.end)
        editor.move_cursor(editor.document.end)

    def action_select_overrides(self) -> None:
        self.action_edit_overrides()
        self.query_one("#overrides-editor", TextArea).select_all()

    def action_clear_overrides(self) -> None:
        """Empty the editor (the plan re-runs with no overrides: the CLI's defaults)."""
        editor = self.query_one("#overrides-editor", TextArea)
        editor.text = ""
        editor.focus()

    def action_back(self) -> None:
        editor = self.query_one("#overrides-editor", TextArea)
        if editor.has_focus:
            self.query_one("#components", Tree).focus()
            return
        if len(self.app.screen_stack) > 1:
            self.dismiss(self.written_to)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Letter keys belong to the editor while it has focus.
        if action in ("write", "edit_overrides", "show_tab", "cycle_deployer"):
            try:
                editor = self.query_one("#overrides-editor", TextArea)
            except Exception:
                return True
            if editor.has_focus:
                return False
        return True

    def action_write(self) -> None:
        plan = self.plan
        if self.writing:
            self.notify("a write is already running", severity="warning")
            return
        rejected = self.result.rejected if self.result is not None else []
        if plan is None or plan.errors or rejected:
            if plan is None:
                reason = "the bundle cannot be planned; see Checks"
            elif plan.errors:
                count = len(plan.errors)
                reason = f"{count} blocking check{'s' if count != 1 else ''}: fix them first"
            else:
                reason = f"override line L{rejected[0].lineno} is rejected: fix or remove it first"
            self.notify(escape_markup(reason), title="Write disabled", severity="error")
            self.action_show_tab("checks")
            return

        def chosen(path: Path | None) -> None:
            if path is None:
                return
            if path.is_dir() and any(path.iterdir()):

                def confirmed(yes: bool | None) -> None:
                    if yes:
                        self._start_write(path, force=True)

                self.app.push_screen(
                    ConfirmModal(
                        "Replace the directory?",
                        f'"{path}" exists and is not empty. Replace its contents with this '
                        "bundle? The old contents are removed only after the new bundle is "
                        "complete.",
                        yes_label="Replace",
                    ),
                    confirmed,
                )
                return
            self._start_write(path, force=False)

        self.app.push_screen(
            PathPromptModal(
                "Write the bundle",
                self.written_to or self.default_output,
                help_text="Output directory (created if missing).",
            ),
            chosen,
        )

    def _start_write(self, path: Path, *, force: bool) -> None:
        self.writing = True
        self._write_worker(self.plan, path, force)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="bundle-write",
        description="write the bundle",
    )
    def _write_worker(self, plan: BundlePlan, out_dir: Path, force: bool) -> None:
        from aicr_tui.core.foundation.errors import AicrError
        from aicr_tui.core.services.bundle import write

        try:
            result = write(plan, out_dir, force=force)
        except AicrError as err:
            self.post_message(BundleWriteFinished(out_dir, 0, err.render()))
            return
        except OSError as exc:
            detail = exc.strerror or str(exc)
            self.post_message(
                BundleWriteFinished(out_dir, 0, f'cannot write "{out_dir}": {detail}')
            )
            return
        self.post_message(BundleWriteFinished(Path(result.out_dir), len(result.files)))


def _component_label(component: ComponentPlan, plan: BundlePlan) -> Text:
    """``NNN name``, numbered like the folder this deployer writes for the component (a
    layout that adds folders, helmfile's ``-post`` or readiness steps, shifts the numbers
    after them), so the list and the Files tab say the same step."""
    label = Text(f"{_step_number(component)} ", style="dim")
    label.append(safe_text(component.name))
    if any(e.component == component.name for e in plan.errors):
        label.append(" ✗", style="bold red")
    return label


def _step_number(component: ComponentPlan) -> str:
    head, dash, _ = component.folder.rpartition("/")[2].partition("-")
    return head if dash and head.isdigit() else f"{component.index:03d}"


def _yaml_view(text: str) -> Syntax:
    # A manifest or value from a recipe may hold escape bytes: the view shows them stripped.
    return Syntax(
        safe_text(text, multiline=True),
        "yaml",
        theme=SYNTAX_THEME,
        word_wrap=False,
        background_color="default",
    )
