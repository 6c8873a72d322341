"""80x24 is first-class (issue 15): every step `make screens` shows, read back from the
screen, cuts nothing.

One app walks the demo the way ``make screens`` does (``tests.make_screens.walk``: AKS
Install / Mixed / None and OKE captures, the recipe step failing and passing, the profile
diff, recapture, guide, help, palette, the bundle preview under every deployer, its
checks, the write dialog, the written bundle, the replayed run and its help). At each step
``check_screen`` compares the screen's text with what the widgets hold (tables scrolled
through) and with the real strings of the step: every reading name and value of the
loaded sample, every pool / add-on cell, every constraint's name, expected and observed
value, every diff path and value, every component, the deployer, the written path, every
key the footer offers, each check the dashboard lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aicr_tui.screens.state import snapshot_readings, verdict_checks
from aicr_tui.screens.widgets.keys_footer import KeysFooter
from tests.make_screens import walk
from tests.pilot.fit import check_screen


def footer_entries(app: Any) -> list[str]:
    """What the footer must show whole: each shown binding's key and description (a
    binding group shows its keys, then the group's description)."""
    out: list[str] = []
    if not app.screen.query(KeysFooter):
        return out  # a dialog: its keys are in its own hint line
    for _, binding, _, _ in app.screen.active_bindings.values():
        if not binding.show:
            continue
        key = app.get_key_display(binding)
        out.append(key if binding.group else f"{key} {binding.description}")
        if binding.group:
            out.append(binding.group.description)
    return out


def step_strings(app: Any) -> list[str]:
    """The real strings this step must show whole."""
    screen, state = app.screen, app.state
    kind = type(screen).__name__
    out = footer_entries(app)
    if kind == "CaptureScreen" and state.snapshot is not None:
        out += [part for pair in snapshot_readings(state.snapshot) for part in pair]
        out += [c for row in state.rows for c in (row.name, row.mode, row.detail, row.source)]
    elif kind == "RecipeScreen":
        for check in verdict_checks(state.verdict):
            out += [check.name, check.expected, check.actual, check.source]
        if state.capture_label:
            out.append(state.capture_label)
        if state.derived:
            out.append(", ".join(state.derived))  # the "from the capture" line
        if screen.query_one("#diff-panel").display:
            for component, path, before, after in screen.diff_rows:
                out += [f"{component}:{path}", before, after]
    elif kind == "BundlePreviewScreen" and screen.plan is not None:
        out += [component.name for component in screen.plan.components]
        out.append(f"deployer {screen.deployer}")
        if screen.written_to is not None:
            out.append(str(screen.written_to))
    elif kind == "PathPromptModal":
        out.append(str(app.state.output_dir / "bundles"))  # the default, whole
    elif kind == "ValidationDashboardScreen":
        for row in screen.model.rows.values():
            out += [row.name, row.measured, row.threshold]
    return [text for text in out if text]


async def test_every_step_fits_80x24_with_nothing_cut(tmp_path: Path) -> None:
    found: dict[str, list[str]] = {}
    steps: list[str] = []

    async def on_step(pilot: Any, name: str) -> None:
        steps.append(name)
        problems = await check_screen(pilot, step_strings(pilot.app))
        if problems:
            found[name] = problems

    await walk((80, 24), None, tmp_path, on_step)
    assert len(steps) == 26, steps  # the walk reached its end
    assert not found, "\n".join(f"{step}:\n  " + "\n  ".join(p) for step, p in found.items())


async def test_the_footer_lists_its_keys_before_the_app_has_focus(tmp_path: Path) -> None:
    """In a browser (``aicr-tui serve``) the app starts blurred until the page is clicked;
    Textual's Footer then showed no key on any step. Every step's footer lists its keys."""
    from textual import events

    from tests.pilot.wizard_helpers import demo_app, settle

    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(events.AppBlur())  # what textual-serve's web driver sends first
        await settle(pilot)
        assert not app.app_focus
        for show in (app.show_capture, app.show_recipe):
            show()  # no key press: a key would give the app focus
            await settle(pilot, 3)
            assert not app.app_focus
            shown = [e.key_display for e in app.screen.query_one(KeysFooter).entries]
            assert "?" in shown and "q" in shown, (type(app.screen).__name__, shown)
