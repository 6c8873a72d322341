"""The wizard shows hostile captures and recordings as literal text and never crashes.

Pool names, add-on names, add-on error messages, a capture's file name and a recording's
log lines, messages and displays carry Rich/Textual markup and terminal escapes. Before the
fix, ``[/]`` in a pool name raised ``MarkupError`` in the capture table and
``[reverse]SPOOF[/reverse]`` styled the screen. Every widget's rendered text is collected
and must hold the literal (terminal-safe) string, and no escape byte may be rendered.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from textual.widget import Widget
from textual.widgets import DataTable, OptionList, RichLog, Static, Tree
from textual.widgets._data_table import default_cell_formatter

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.markup import WORD_JOINER
from aicr_tui.screens.widgets.text_pane import TextPane
from tests.conftest import SAMPLES
from tests.pilot.wizard_helpers import demo_app, settle, wait_until

ESC = "\x1b"
POOL_NAMES = [
    "[reverse]SPOOF[/reverse]",
    "gpu[/]",
    f"x{ESC}]0;PWNED\x07y[/bold]",
    f"z{ESC}[2Jq[$accent]w",
]
DRIVER = "[@click=app.quit]Install[/]"
ADDON_NAMES = [
    "[/]NvidiaGpuOperator",
    f"[link=https://evil.example]x[/link]{ESC}]8;;https://e{ESC}\\k",
]
ADDON_ERROR = "[reverse]boom[/reverse]\x9b31m\\"
LOG_LINES = [
    "[/]",
    "[reverse]SPOOF[/reverse] passed",
    f"{ESC}]2;title\x07{ESC}[31mred[/red]",
    "tail\\",
]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _hostile_dumps(tmp_path: Path) -> tuple[Path, Path]:
    captures = SAMPLES / "captures"
    pools = json.loads((captures / "aks-pools-mixed.json").read_text())
    while len(pools) < len(POOL_NAMES):
        pools.append(dict(pools[-1]))
    for i, pool in enumerate(pools):
        pool["name"] = POOL_NAMES[i % len(POOL_NAMES)]
        if pool.get("gpuProfile"):
            pool["gpuProfile"]["driver"] = DRIVER
    addons = json.loads((captures / "oke-addons-active.json").read_text())
    for i, addon in enumerate(addons["data"]):
        addon["name"] = ADDON_NAMES[i % len(ADDON_NAMES)]
        addon["addon-error"] = {"code": "[/]E", "message": ADDON_ERROR}
    aks = tmp_path / "[b]pools[reverse]x.json"
    aks.write_text(json.dumps(pools))
    oke = tmp_path / "oke[bold]\\.json"
    oke.write_text(json.dumps(addons))
    return aks, oke


def _hostile_recording(tmp_path: Path) -> Path:
    source = SAMPLES / "validation" / "aks-nc80adis-training-failed.jsonl"
    out = []
    n = 0
    for line in source.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "LogLine":
            event["line"] = LOG_LINES[n % len(LOG_LINES)]
            n += 1
        if event["type"] == "CheckFinished":
            event["message"] = "[/]" + event["message"] + f"{ESC}[5m[reverse]X[/reverse]"
        if event["type"] == "Measurement":
            event["display"] = "[/]" + str(event.get("display", ""))
        if event["type"] == "RunStarted":
            event["recipe"] = "[/]recipe.yaml"
        out.append(json.dumps(event))
    path = tmp_path / "[reverse]run[b].jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def _plain(obj: Any) -> str:
    plain = getattr(obj, "plain", None)
    return str(plain if plain is not None else obj)


def rendered_texts(root: Widget) -> list[str]:
    """The text every widget under ``root`` renders (cells formatted as DataTable does)."""
    texts: list[str] = []
    for widget in root.walk_children(with_self=True):
        if isinstance(widget, DataTable):
            for row_key in widget.rows:
                texts.extend(_plain(default_cell_formatter(c)) for c in widget.get_row(row_key))
        elif isinstance(widget, Tree):
            stack = [widget.root]
            while stack:
                node = stack.pop()
                texts.append(_plain(widget.process_label(node.label)))
                stack.extend(node.children)
        elif isinstance(widget, OptionList):
            texts.extend(
                _plain(widget.get_option_at_index(i).prompt) for i in range(widget.option_count)
            )
        elif isinstance(widget, RichLog):
            texts.extend("".join(seg.text for seg in strip) for strip in widget.lines)
        elif isinstance(widget, TextPane):
            texts.extend(widget.rows)  # the text it wraps to its width, drawn as is
        elif isinstance(widget, Static):
            texts.append(_plain(widget.render()))
    return [t.replace(WORD_JOINER, "") for t in texts]


def assert_literal(texts: list[str], hostile: list[str]) -> None:
    joined = "\n".join(texts)
    assert ESC not in joined and "\x9b" not in joined and "\x07" not in joined
    assert not _CONTROL.search(joined), repr(_CONTROL.search(joined))
    for text in hostile:
        assert safe_text(text) in joined, f"{text!r} not shown literally"


async def test_hostile_capture_in_capture_and_recipe_screens(tmp_path: Path) -> None:
    aks, oke = _hostile_dumps(tmp_path)
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        app.screen.load_files({"aks_pools": str(aks)}, aks.name)
        await settle(pilot)
        assert app.state.capture_label == aks.name
        texts = rendered_texts(app.screen)
        assert_literal(texts, [*POOL_NAMES, DRIVER, aks.name])
        app.screen.load_files({"oke_addons": str(oke)}, oke.name)
        await settle(pilot)
        assert_literal(rendered_texts(app.screen), [oke.name])
        # With a base snapshot the selection qualifies far enough to list every check,
        # the hostile driver reading among them (expected vs observed).
        base = SAMPLES / "snapshots" / "aks-h100-mixed.yaml"
        app.screen.load_files({"aks_pools": str(aks), "snapshot": str(base)}, aks.name)
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot, rounds=3)
        checks = app.screen.query_one("#recipe-checks", TextPane)
        assert checks.rows
        assert_literal(rendered_texts(checks), [DRIVER])
        assert_literal(rendered_texts(app.screen), [DRIVER])
        assert "SPOOF" not in "".join(t for t in rendered_texts(app.screen) if "[reverse]" not in t)
        assert app.is_running
        svg = app.export_screenshot()
        assert ESC not in svg


async def test_hostile_recording_in_the_dashboard(tmp_path: Path) -> None:
    recording = _hostile_recording(tmp_path)
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        app.show_validation(recording)
        await wait_until(pilot, lambda: "summary:" in " ".join(rendered_texts(app.screen)))
        await pilot.press("a")  # the full log of the selected check
        await settle(pilot)
        texts = rendered_texts(app.screen)
        assert_literal(texts, [recording.name, "[/]recipe.yaml", "[reverse]X[/reverse]"])
        joined = "\n".join(texts)
        assert any(safe_text(line) in joined for line in LOG_LINES[:3]), joined
        await pilot.press("escape")
        assert app.is_running
        assert ESC not in app.export_screenshot()
