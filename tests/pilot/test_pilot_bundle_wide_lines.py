"""Issue 34 item 7: at 80x24 the bundle preview's Values, Manifests and Files tabs cut lines
on the right (``podMonitorSelectorNilUsesHelmValues: fals``). Each view is as wide as its
longest line and its pane scrolls sideways, so every character can be reached."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.containers import VerticalScroll
from textual.widgets import Static, TabbedContent, Tree

from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from tests.pilot.validate_fixtures import ScreenHost, wait_until


@pytest.mark.parametrize(
    ("tab", "text_of"),
    [
        ("values", lambda s: s.values_text),
        ("manifests", lambda s: s.manifests_text),
        ("files", lambda s: s.files_text),
    ],
)
async def test_no_line_is_cut_at_80x24(aks_recipe, tmp_path: Path, tab, text_of) -> None:
    app = ScreenHost(
        lambda: BundlePreviewScreen(
            aks_recipe, default_output=tmp_path / "bundle", overrides="", base_dir=tmp_path
        )
    )
    async with app.run_test(size=(80, 24)) as pilot:
        screen: BundlePreviewScreen = app.shown
        await wait_until(pilot, lambda: screen.result is not None)
        await wait_until(pilot, lambda: screen.result.generation == screen.generation)
        tree = screen.query_one("#components", Tree)
        wanted = "kube-prometheus-stack" if tab != "manifests" else "gpu-operator"
        line = next(
            i for i in range(tree.last_line + 1) if wanted in str(tree.get_node_at_line(i).label)
        )
        tree.cursor_line = line
        await pilot.pause(0.2)
        screen.query_one("#bundle-tabs", TabbedContent).active = tab
        await pilot.pause(0.3)
        text = text_of(screen)
        assert text, tab
        widest = max(cell_len(line) for line in text.splitlines())
        view = screen.query_one(f"#{tab}-view", Static)
        scroll = screen.query_one(f"#{tab}-scroll", VerticalScroll)
        assert view.content_region.width >= widest, (tab, view.content_region.width, widest)
        assert scroll.max_scroll_x + scroll.scrollable_content_region.width >= widest, tab
