"""The screens' only uses of Textual's private names sit in one module, read against one
Textual version: a different installed Textual fails here first, naming what to re-read."""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

from textual.app import App
from textual.widget import Widget
from textual.widgets import RichLog

from aicr_tui.screens.widgets import textual_adapter

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_textual_is_the_one_the_adapter_was_written_for() -> None:
    installed = version("textual")
    assert installed == textual_adapter.WRITTEN_FOR, (
        f"Textual {installed} is installed; aicr_tui/screens/widgets/textual_adapter.py was written "
        f"for {textual_adapter.WRITTEN_FOR}: re-read each private name it uses in the new "
        "version's code, then update WRITTEN_FOR"
    )


def test_the_private_names_the_adapter_uses_still_exist() -> None:
    assert "_set_dirty" in vars(Widget)
    assert "_start_widget" in vars(App)
    assert "self._vertical_scrollbar" in inspect.getsource(Widget.__init__)
    assert "self._layout_required" in inspect.getsource(Widget.__init__)
    assert "self._layout_updates" in inspect.getsource(Widget.__init__)
    assert "self._deferred_renders" in inspect.getsource(RichLog.__init__)
    # Widget._set_dirty is still where Textual drops a widget's cached lines.
    assert "_styles_cache" in inspect.getsource(Widget._set_dirty)


def test_no_other_product_module_uses_a_private_textual_name() -> None:
    private = re.compile(
        r"textual\.[\w.]*\b_|\._(set_dirty|start_widget|vertical_scrollbar|deferred_renders"
        r"|layout_required|layout_updates)\b"
    )
    adapter = Path(inspect.getfile(textual_adapter)).resolve()
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in ("aicr_tui",)
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.resolve() != adapter
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert found == []
