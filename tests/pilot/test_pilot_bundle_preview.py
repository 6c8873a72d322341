"""Pilot tests of the bundle preview on recipes the engine resolves from the sample snapshots."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TabbedContent, TextArea, Tree

from aicr_tui.core.services.bundle import split_lines
from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from aicr_tui.screens.widgets.bundle_dialogs import PathPromptModal
from tests.conftest import qualified_recipe
from tests.pilot.validate_fixtures import (
    ScreenHost,
    accept_path_prompt,
    decline_overwrite,
    run_palette_command,
    wait_until,
)

KEYED = "--accelerated-node-toleration nvidia.com/gpu:NoSchedule\n"


@pytest.fixture(scope="module")
def oke_recipe():
    return qualified_recipe("oke", "gb200", "ol", "gpuStack=oci-managed", "oke-gb200-active.yaml")


def _host(recipe, tmp_path: Path, overrides: str = "") -> ScreenHost:
    return ScreenHost(
        lambda: BundlePreviewScreen(
            recipe, default_output=tmp_path / "bundle", overrides=overrides, base_dir=tmp_path
        )
    )


async def _planned(pilot, screen: BundlePreviewScreen) -> None:
    await wait_until(pilot, lambda: screen.result is not None)
    await wait_until(pilot, lambda: screen.result.generation == screen.generation)
    await pilot.pause()


@contextlib.asynccontextmanager
async def _planned_preview(
    recipe, tmp_path: Path, overrides: str, *, size: tuple[int, int]
) -> AsyncIterator[tuple[ScreenHost, Any, BundlePreviewScreen]]:
    """The preview of ``recipe`` in a running app, once its first plan is shown."""
    app = _host(recipe, tmp_path, overrides)
    async with app.run_test(size=size) as pilot:
        screen: BundlePreviewScreen = app.shown
        await _planned(pilot, screen)
        yield app, pilot, screen


async def _edit(pilot, screen: BundlePreviewScreen, text: str) -> None:
    editor = screen.query_one("#overrides-editor", TextArea)
    editor.text = text
    await pilot.pause()
    await _planned(pilot, screen)


def _render(screen: BundlePreviewScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_components_in_deployment_order_and_values_follow_the_cursor(
    aks_recipe, tmp_path
) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        tree = screen.query_one("#components", Tree)
        shown = [node.data[1] for node in tree.root.children if node.data[0] == "component"]
        enabled = {ref.name for ref in aks_recipe.componentRefs if ref.enabled}
        assert shown == [n for n in aks_recipe.deploymentOrder if n in enabled]
        assert screen.selected_component == shown[0]
        assert "001-" in screen.values_text

        target = shown.index("gpu-operator")
        for _ in range(target):
            await pilot.press("down")
        await pilot.pause()
        assert screen.selected_component == "gpu-operator"
        values = screen.values_text
        assert f"{screen.plan.component('gpu-operator').folder}/values.yaml" in values
        assert "driver:" in values


async def test_manifests_of_a_component_render_from_the_plan(aks_recipe, tmp_path) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(120, 40)) as (
        app,
        pilot,
        screen,
    ):
        with_manifests = next(c for c in screen.plan.components if c.manifests)
        tree = screen.query_one("#components", Tree)
        node = next(n for n in tree.root.children if n.data[1] == with_manifests.name)
        tree.move_cursor(node)
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        assert screen.query_one("#bundle-tabs", TabbedContent).active == "manifests"
        text = screen.manifests_text
        for path, body in with_manifests.manifests.items():
            assert f"# {path}" in text
            assert body.strip().splitlines()[0] in text


async def test_a_lock_violation_is_rejected_inline_and_disables_write(aks_recipe, tmp_path) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        assert "ready" in _render(screen, "#bundle-status")

        await _edit(pilot, screen, KEYED + "--set gpu-operator:driver.enabled=true\n")
        verdicts = {line.lineno: line for line in screen.result.lines}
        assert verdicts[1].verdict == "accepted"
        assert verdicts[2].verdict == "rejected"
        assert "ProfileLock" in verdicts[2].message
        assert "aicr-tui recipe --profile gpuStack=operator-managed" in verdicts[2].message
        feedback = _render(screen, "#overrides-feedback")
        assert "L2 ✗ rejected: ProfileLock" in feedback
        assert "write disabled" in _render(screen, "#bundle-status")

        await pilot.press("w")
        await pilot.pause()
        assert app.screen is screen  # no prompt: writing is refused
        assert screen.query_one("#bundle-tabs", TabbedContent).active == "checks"
        assert "Rejected overrides (1)" in _render(screen, "#checks-view")
        assert not (tmp_path / "bundle").exists()

        await _edit(pilot, screen, KEYED)
        assert screen.result.rejected == []
        assert "ready" in _render(screen, "#bundle-status")


async def test_bad_entries_get_the_cli_message_and_good_ones_still_plan(
    aks_recipe, tmp_path
) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        await _edit(
            pilot,
            screen,
            KEYED
            + "--set gpu-operator\n"
            + "--bogus a:b=c\n"
            + "--set no-such-component:x=1\n"
            + "--set gpu-operator:driver.version=580.95.05\n",
        )
        lines = {line.lineno: line for line in screen.result.lines}
        assert lines[2].verdict == "rejected" and "--set" in lines[2].message
        assert lines[3].verdict == "rejected" and "unknown flag --bogus" in lines[3].message
        assert lines[4].verdict == "rejected" and "no-such-component" in lines[4].message
        assert lines[5].verdict == "accepted"
        gpu = screen.plan.component("gpu-operator")
        assert gpu.values["driver"]["version"] == "580.95.05"


async def test_the_wildcard_toleration_blocks_an_aks_bundle(aks_recipe, tmp_path) -> None:
    async with _planned_preview(aks_recipe, tmp_path, "", size=(80, 24)) as (app, pilot, screen):
        checks = [e.check for e in screen.plan.errors]
        assert "CheckWildcardAcceleratedToleration" in checks
        await pilot.press("c")
        await pilot.pause()
        assert "CheckWildcardAcceleratedToleration" in _render(screen, "#checks-view")
        assert "blocking" in _render(screen, "#bundle-status")
        await pilot.press("w")
        await pilot.pause()
        assert app.screen is screen
        assert not (tmp_path / "bundle").exists()


async def test_write_prompts_then_confirms_before_replacing(aks_recipe, tmp_path) -> None:
    app = _host(aks_recipe, tmp_path, KEYED)
    out = tmp_path / "bundle"
    async with app.run_test(size=(80, 24)) as pilot:
        screen: BundlePreviewScreen = app.shown
        await _planned(pilot, screen)
        planned_files = set(screen.plan.files)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, PathPromptModal)
        assert app.screen.query_one(Input).value == str(out)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.written_to is not None)
        written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
        assert planned_files <= written
        assert "checksums.txt" in written
        checksums = (out / "checksums.txt").read_bytes()

        # The directory now exists and is not empty: writing again asks first.
        (out / "local-note.txt").write_text("mine\n")
        await decline_overwrite(pilot, "w")
        assert app.screen is screen
        assert (out / "local-note.txt").exists()

        screen.written_to = None
        await accept_path_prompt(pilot, "w")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.written_to is not None)
        assert not (out / "local-note.txt").exists()
        assert (out / "checksums.txt").read_bytes() == checksums


async def test_an_oke_recipe_plans_without_blocking_checks(oke_recipe, tmp_path) -> None:
    async with _planned_preview(oke_recipe, tmp_path, "", size=(80, 24)) as (app, pilot, screen):
        assert screen.plan.errors == []
        assert "ready" in _render(screen, "#bundle-status")
        assert "oci-managed" in _render(screen, "#bundle-banner")


def test_editor_lines_accept_flag_forms_and_skip_comments() -> None:
    lines = split_lines(
        "# comment\n\n"
        "--set a:b=c\n"
        '--set-json=a:b={"x": 1}\n'
        "a:c=d\n"
        "--dynamic a:e\n"
        "--accelerated-node-toleration k:NoSchedule\n"
        "--set\n"
    )
    got = [(ln.lineno, ln.kind, ln.text, ln.verdict) for ln in lines]
    assert got == [
        (3, "set", "a:b=c", "accepted"),
        (4, "set-json", 'a:b={"x": 1}', "accepted"),
        (5, "set", "a:c=d", "accepted"),
        (6, "dynamic", "a:e", "accepted"),
        (7, "toleration", "k:NoSchedule", "accepted"),
        (8, "set", "", "rejected"),
    ]


async def test_write_is_reachable_from_the_command_palette(aks_recipe, tmp_path) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        bound = {b.action.split("(")[0] for b in screen.BINDINGS if b.action != "back"}
        offered = {action.split("(")[0] for _, _, action in screen.PALETTE_ACTIONS}
        assert bound <= offered
        await run_palette_command(pilot, "write")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPromptModal))
        assert app.screen.query_one(Input).value == str(tmp_path / "bundle")


async def test_typing_in_the_editor_replans_and_marks_the_line(aks_recipe, tmp_path) -> None:
    async with _planned_preview(aks_recipe, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        await pilot.press("o")
        editor = screen.query_one("#overrides-editor", TextArea)
        assert editor.has_focus
        editor.move_cursor(editor.document.end)
        editor.insert("--set gpu-operator:driver.enabled=tru")
        await pilot.press("e")  # the keystroke that completes the line
        await _planned(pilot, screen)
        line = screen.result.lines[-1]
        assert line.raw == "--set gpu-operator:driver.enabled=true"
        assert line.verdict == "rejected" and "ProfileLock" in line.message
        # Letters went to the editor, not to the screen's bindings (w, c, v, m, o).
        assert app.screen is screen
        assert screen.query_one("#bundle-tabs", TabbedContent).active == "overrides"


async def test_a_recipe_that_cannot_be_planned_says_why_and_writes_nothing(
    aks_recipe, tmp_path
) -> None:
    empty = aks_recipe.model_copy(update={"componentRefs": [], "deploymentOrder": []})
    async with _planned_preview(empty, tmp_path, KEYED, size=(80, 24)) as (app, pilot, screen):
        assert screen.plan is None
        assert "recipe has no componentRefs" in screen.result.error
        assert "no plan" in _render(screen, "#bundle-status")
        await pilot.press("w")
        await pilot.pause()
        assert app.screen is screen
        assert "recipe has no componentRefs" in _render(screen, "#checks-view")
        assert not (tmp_path / "bundle").exists()
