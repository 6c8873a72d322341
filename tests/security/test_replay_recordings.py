"""``validate --replay``: the exit code comes from the events, verdicts are a closed set, and
a recording's text reaches the terminal without escape sequences (``--plain`` and the TTY
table alike).

Before the fix the shipped failed run, with ``exit_code`` in its last event edited to 0,
256 or 512, exited 0 while its own reports listed a failure, and ``totally-fine`` was
copied into the report.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.recording import load_recording, parse_recording
from tests.conftest import SAMPLES

RECORDINGS = SAMPLES / "validation"
FAILED = RECORDINGS / "aks-nc80adis-training-failed.jsonl"
PASSED = RECORDINGS / "aks-h100-training-passed.jsonl"
ESC = "\x1b"


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, events: list[dict[str, Any]], name: str = "edited.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _edit(
    path: Path, event_type: str, field: str, value: Any, *, which: int = -1
) -> list[dict[str, Any]]:
    events = _events(path)
    matching = [e for e in events if e["type"] == event_type]
    matching[which][field] = value
    return events


@pytest.mark.parametrize("forged", [0, 256, 512, 2, 1])
def test_forged_exit_code_is_refused(tmp_path: Path, forged: int, cli: Any) -> None:
    path = _write(tmp_path, _edit(FAILED, "RunFinished", "exit_code", forged))
    with pytest.raises(AicrError) as refused:
        load_recording(path)
    assert "exit code 8" in refused.value.render()
    result = cli("validate", "--replay", str(path), "--replay-speed", "0", "--plain",
                 "-o", str(tmp_path / "r.json"))  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "edited or is corrupt" in result.stderr
    assert not (tmp_path / "r.json").exists()


def test_passed_run_forged_to_fail_is_refused_too(tmp_path: Path) -> None:
    path = _write(tmp_path, _edit(PASSED, "RunFinished", "exit_code", 8))
    with pytest.raises(AicrError, match="exit code 0"):
        load_recording(path)


@pytest.mark.parametrize(
    ("event_type", "field", "value"),
    [
        ("CheckFinished", "status", "totally-fine"),
        ("CheckFinished", "status", "skipped"),
        ("CheckFinished", "status", "PASSED"),
        ("CheckFinished", "status", ""),
        ("CheckFinished", "status", f"passed{ESC}[8m"),
        ("PhaseFinished", "status", "ok"),
        ("Measurement", "verdict", "great"),
    ],
)
def test_statuses_outside_the_set_are_refused(
    tmp_path: Path, event_type: str, field: str, value: str
) -> None:
    path = _write(tmp_path, _edit(FAILED, event_type, field, value, which=0))
    with pytest.raises(AicrError) as refused:
        load_recording(path)
    message = refused.value.render()
    assert "expected one of" in message and ESC not in message


def test_events_after_run_finished_are_refused(tmp_path: Path) -> None:
    events = _events(PASSED)
    events.append(dict(events[-2]))
    with pytest.raises(AicrError, match="after RunFinished"):
        load_recording(_write(tmp_path, events))


def test_passing_a_failed_run_by_rewriting_statuses_needs_every_event(tmp_path: Path) -> None:
    """The summary counts are checked against the finished checks, so they cannot lie."""
    events = _edit(FAILED, "RunFinished", "failed", 0)
    events = [dict(e) for e in events]
    with pytest.raises(AicrError):
        parse_recording("".join(json.dumps(e) + "\n" for e in events), "x")


def test_shipped_recordings_replay_with_their_computed_exit_codes(cli: Any, tmp_path: Path) -> None:
    for path, code in ((PASSED, 0), (FAILED, 8)):
        result = cli("validate", "--replay", str(path), "--replay-speed", "0", "--plain",
                     "-o", str(tmp_path / f"{path.stem}.json"))  # fmt: skip
        assert result.returncode == code, result.stderr[-400:]


HOSTILE_LINES = [
    f"{ESC}]0;PWNED{ESC}\\title",
    f"{ESC}]8;;https://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\",
    f"{ESC}[2J{ESC}[Hfake prompt$ ",
    "\x9b31mred\x07\x00",
    "[reverse]SPOOF[/reverse] [/] [/bold]",
]


def _hostile_recording(tmp_path: Path) -> Path:
    events = _events(FAILED)
    n = 0
    for event in events:
        if event["type"] == "LogLine":
            event["line"] = HOSTILE_LINES[n % len(HOSTILE_LINES)]
            n += 1
        elif event["type"] == "CheckFinished" and event["status"] == "failed":
            event["message"] = f"{ESC}]2;x{ESC}\\[/]boom"
    return _write(tmp_path, events, "hostile.jsonl")


def test_plain_replay_output_is_terminal_safe(cli: Any, tmp_path: Path) -> None:
    path = _hostile_recording(tmp_path)
    result = cli("validate", "--replay", str(path), "--replay-speed", "0", "--plain",
                 "-o", str(tmp_path / "r.json"))  # fmt: skip
    assert result.returncode == 8, result.stderr[-300:]
    for stream in (result.stderr, result.stdout):
        assert ESC not in stream and "\x9b" not in stream and "\x07" not in stream
        assert "\x00" not in stream
    assert "[reverse]SPOOF[/reverse] [/] [/bold]" in result.stderr
    assert "fake prompt$" in result.stderr and "click" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["results"]["summary"]["failed"] == 1


def test_tty_table_renders_hostile_text_literally(tmp_path: Path) -> None:
    from rich.console import Console

    from aicr_tui.commands.validate import LiveTable

    table = LiveTable()
    for event in load_recording(_hostile_recording(tmp_path)):
        table.apply(event)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200, color_system="truecolor")
    console.print(table.renderable())  # raised MarkupError on "[/]" before
    out = buffer.getvalue()
    assert "\x1b]" not in out and "\x9b" not in out and "\x07" not in out
    assert "\x1b[2J" not in out and "\x1b[H" not in out
    plain = Console(file=io.StringIO(), width=200)
    plain.print(table.renderable())
    assert "[/]boom" in plain.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name",
    [
        "/dev/zero",  # an endless read
        "fifo.yaml",  # a read that blocks forever
        "../outside.recipe.yaml",
        "sub/../../outside.recipe.yaml",
        "link.recipe.yaml",  # a link beside the recording, to a recipe elsewhere
        "/etc/passwd",
        "",
        "a\nb.yaml",
    ],
)
def test_the_wizard_reads_a_recorded_recipe_only_beside_the_recording(
    tmp_path: Path, name: str
) -> None:
    """The wizard's replay chooser opens the recipe a recording names. That name is the
    recording's text: it may only name a regular file beside the recording, never a path
    elsewhere, a device, a FIFO or a link (before, ``/dev/zero`` read until memory ran out
    and a FIFO hung the wizard)."""
    import os
    import shutil
    import threading

    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.services.replay import choose_recording

    outside = tmp_path / "outside.recipe.yaml"
    shutil.copy(RECORDINGS / "aks-h100-training.recipe.yaml", outside)
    here = tmp_path / "recordings"
    here.mkdir()
    os.mkfifo(here / "fifo.yaml")
    (here / "link.recipe.yaml").symlink_to(outside)
    recording = _write(
        here, [{**e, "recipe": name} if e["type"] == "RunStarted" else e for e in _events(PASSED)]
    )
    recipe = load_recipe(str(outside))
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(choose_recording([recording], recipe)))
    worker.daemon = True
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), f"choose_recording hung on {name!r}"
    assert result == [None]


def test_a_recorded_recipe_beside_the_recording_is_still_found(tmp_path: Path) -> None:
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.services.replay import choose_recording

    recording = RECORDINGS / "aks-h100-training-passed.jsonl"
    recipe = load_recipe(str(RECORDINGS / "aks-h100-training.recipe.yaml"))
    choice = choose_recording([recording], recipe)
    assert choice is not None and choice.matches
