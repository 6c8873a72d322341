"""Text from documents reaches the terminal and the reports only as escaped text (issue 25,
family 7): a recording's recipe name and check names (the replay header, the progress
lines, the JUnit and CTRF reports) and ``query`` output of ``--data`` values.

Rules checked, over every hostile value of ``tests/security/hostile_text.py``:

* no raw terminal-active character (C0 but tab/newline, DEL, C1, U+2028/2029, the bidi
  controls, a lone surrogate) is ever written to stdout, stderr or a report;
* a line break inside a name never starts a line of its own (no forged verdict line);
* machine-readable output keeps the value exact: JSON escapes (``\\u001b``), a YAML
  double-quoted scalar, decoded back to the very same string;
* the JUnit file is well-formed XML 1.0 (parsed by expat).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.yamlio import load_yaml_plain
from aicr_tui.core.recipe.query import render_value
from tests.conftest import REPO, SAMPLES, _cli_path
from tests.security.hostile_text import DOCUMENT_TEXT, FORGED_VERDICTS

PASSED = SAMPLES / "validation" / "aks-h100-training-passed.jsonl"
QUERY = ("query", "--service", "aks", "--accelerator", "h100", "--intent", "training")
VALUES = "components.gpu-operator.values.aicrHostile"

ACTIVE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]")
IDS = [name for name, _ in DOCUMENT_TEXT]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """The installed CLI with bytes output: text mode would turn a raw CR into a newline."""
    env = dict(os.environ, NO_COLOR="1", TERM="dumb")
    env.pop("AICR_AKS_GPU_POOLS_PATH", None)
    return subprocess.run(
        [*_cli_path(), *args], cwd=cwd, env=env, capture_output=True, timeout=120, check=False
    )


def _as_read(value: Any) -> Any:
    """``value`` as a YAML reader (and a recording's reader) gives it back: a lone surrogate,
    which UTF-8 cannot carry, becomes U+FFFD, as Go decodes it."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, dict):
        return {_as_read(k): _as_read(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_read(v) for v in value]
    return value


def _decoded(data: bytes, where: str) -> str:
    text = data.decode("utf-8")  # strict: the output is valid UTF-8
    hit = ACTIVE.search(text)
    assert hit is None, (
        f"{where}: raw {hit.group()!r} at {hit.start()}: {text[hit.start() - 60 :]!r}"
    )
    return text


def _no_forged_line(text: str, value: str, where: str) -> None:
    for segment in LINE_BREAK.split(value)[1:]:
        if segment.strip():
            for line in text.splitlines():
                assert not line.startswith(segment), (where, line)


# ----------------------------------------------------------------- recordings and reports
def _hostile_recording(path: Path, value: str) -> str:
    """The shipped recording with its recipe name, the not-applicable check's name, message
    and evidence line replaced by ``value``; returns the check's original name."""
    events = [json.loads(line) for line in PASSED.read_text().splitlines() if line.strip()]
    name = next(
        e["check"] for e in events if e["type"] == "CheckFinished" and e["status"] != "passed"
    )
    started = next(i for i, e in enumerate(events) if e.get("check") == name)
    evidence = {"type": "LogLine", "t": events[started]["t"], "phase": events[started]["phase"]}
    events.insert(started + 1, {**evidence, "check": name, "line": value})
    for e in events:
        if e["type"] == "RunStarted":
            e["recipe"] = value
        if e["type"] == "PhaseStarted":
            e["checks"] = [value if c == name else c for c in e["checks"]]
        if e.get("check") == name:
            e["check"] = value
            if e["type"] == "CheckFinished":
                e["message"] = value
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return name


@pytest.mark.parametrize(("label", "value"), DOCUMENT_TEXT, ids=IDS)
def test_replay_header_lines_and_reports_show_a_recordings_text_escaped(
    tmp_path: Path, label: str, value: str
) -> None:
    rec, junit = tmp_path / "run.jsonl", tmp_path / "junit.xml"
    _hostile_recording(rec, value)
    proc = _cli("validate", "--replay", str(rec), "--replay-speed", "0", "--junit", str(junit))
    assert proc.returncode == 0, proc.stderr[-800:]
    err = _decoded(proc.stderr, "stderr")
    header = err.splitlines()[0]
    assert header.startswith("replaying run.jsonl (recorded "), header
    assert header.endswith("; nothing runs against a cluster"), header
    _no_forged_line(err, value, "stderr")

    out = _decoded(proc.stdout, "CTRF on stdout")
    ctrf = json.loads(out)
    names = [t["name"] for t in ctrf["results"]["tests"]]
    exact = _as_read(value)
    assert exact in names, "the CTRF report must keep the name exactly (JSON escapes)"
    hostile = next(t for t in ctrf["results"]["tests"] if t["name"] == exact)
    assert hostile["message"] == exact and exact in hostile["stdout"]

    raw = junit.read_bytes()
    _decoded(raw, "JUnit file")
    root = ET.fromstring(raw)  # expat: a well-formed XML 1.0 document or an error
    for case in root.iter("testcase"):
        for attr in ("name", "classname"):
            assert LINE_BREAK.search(case.get(attr, "")) is None, (attr, case.get(attr))
            assert ACTIVE.search(case.get(attr, "")) is None
    for element in root.iter():
        for text in (element.text or "", *element.attrib.values()):
            assert ACTIVE.search(text) is None, (element.tag, text)


def test_a_recording_file_name_is_escaped_in_the_header(tmp_path: Path) -> None:
    rec = tmp_path / "a\x1b]0;pwned\x07\x1b[2J\n✓ all checks passed.jsonl"
    rec.write_bytes(PASSED.read_bytes())
    proc = _cli("validate", "--replay", str(rec), "--replay-speed", "0", "-o", os.devnull)
    assert proc.returncode == 0, proc.stderr[-500:]
    err = _decoded(proc.stderr, "stderr")
    # the OSC and the CSI are removed whole, the line break becomes a space
    assert err.splitlines()[0].startswith("replaying a ✓ all checks passed.jsonl (recorded ")
    _no_forged_line(err, rec.name, "stderr")


def test_the_live_table_title_of_a_replay_is_escaped() -> None:
    from aicr_tui.commands.validate import LiveTable
    from aicr_tui.core.services.replay import replay_header
    from aicr_tui.core.validation.recording import parse_recording

    for _, value in [*DOCUMENT_TEXT, *((n, t) for n, t in FORGED_VERDICTS)]:
        events = parse_recording(
            "".join(
                json.dumps({**json.loads(line), "recipe": value}) + "\n"
                if '"RunStarted"' in line
                else line + "\n"
                for line in PASSED.read_text().splitlines()
            ),
            "rec",
        )
        title = LiveTable(replay_header("rec.jsonl", events)).title
        assert ACTIVE.search(title) is None and LINE_BREAK.search(title) is None, title


# ---------------------------------------------------------------------------- query
def _data_layer(root: Path, tree: dict[str, Any]) -> Path:
    """A ``--data`` layer overriding the shipped gpu-operator values with ``tree`` added."""
    comp = root / "components" / "gpu-operator"
    comp.mkdir(parents=True)
    base = (
        REPO / "aicr_tui" / "recipes" / "components" / "gpu-operator" / "values.yaml"
    ).read_text()
    # JSON is YAML: the flow mapping, with \u escapes, carries every value exactly
    (comp / "values.yaml").write_text(base + "\naicrHostile: " + json.dumps(tree) + "\n")
    (root / "registry.yaml").write_text(
        "apiVersion: aicr.run/v1alpha1\nkind: ComponentRegistry\ncomponents: []\n"
    )
    return root


def _tree(value: str) -> dict[str, Any]:
    return {"value": value, "list": [value, "plain"], "nested": {value: value}}


def _check_query_output(text: str, value: Any, fmt: str) -> None:
    if fmt == "json":
        assert json.loads(text) == value
    elif isinstance(value, str) and not text.startswith('"'):
        assert text == value + "\n"  # a plain string, printed as is
    else:
        assert load_yaml_plain(text, "query output") == _as_read(value)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize(("label", "value"), DOCUMENT_TEXT, ids=IDS)
def test_query_rendering_is_exact_data_and_never_raw_controls(
    label: str, value: str, fmt: str
) -> None:
    for selected in (value, _tree(value), [value]):
        text = render_value(selected, fmt)
        _decoded(text.encode("utf-8"), f"{fmt} of {type(selected).__name__}")
        _check_query_output(text, selected, fmt)
        _no_forged_line(text, value, fmt)


@pytest.fixture(scope="module")
def hostile_layer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("data")
    tree = {f"v{i}": value for i, (_, value) in enumerate(DOCUMENT_TEXT) if not _LONE.search(value)}
    return _data_layer(root, tree), tree


_LONE = re.compile("[\ud800-\udfff]")


def test_query_cli_refuses_a_data_layer_holding_a_lone_surrogate(tmp_path: Path) -> None:
    """A lone surrogate cannot reach Go's readers, so a --data layer holding one is refused at
    input (one line naming the file), never printed as U+FFFD."""
    layer = _data_layer(tmp_path, {"v": "a\ud800b"})
    proc = _cli(*QUERY, "--data", str(layer), "--selector", VALUES, "-t", "yaml")
    assert proc.returncode == 2, proc.stderr[-500:]
    lines = _decoded(proc.stderr, "stderr").splitlines()
    assert len(lines) == 1 and "values.yaml" in lines[0] and "U+D800" in lines[0], lines
    assert proc.stdout == b""


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_query_cli_map_of_every_hostile_value(
    hostile_layer: tuple[Path, dict[str, Any]], fmt: str
) -> None:
    layer, tree = hostile_layer
    proc = _cli(*QUERY, "--data", str(layer), "--selector", VALUES, "-t", fmt)
    assert proc.returncode == 0, proc.stderr[-500:]
    text = _decoded(proc.stdout, f"query -t {fmt}")
    _check_query_output(text, _as_read(tree), fmt)
    for value in tree.values():
        _no_forged_line(text, value, fmt)


SCALARS = [c for c in DOCUMENT_TEXT if c[0] in {
    "OSC 0 title BEL", "OSC 8 hyperlink", "CSI clear screen", "C1 CSI 0x9b", "DCS string",
    "backspace overwrite", "carriage return overwrite", "bidi override", "newline forges line",
    "newline then check mark", "CR then verdict", "line separator then verdict", "DEL",
}]  # fmt: skip


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize(("label", "value"), SCALARS, ids=[n for n, _ in SCALARS])
def test_query_cli_scalar(
    hostile_layer: tuple[Path, dict[str, Any]], label: str, value: str, fmt: str
) -> None:
    layer, tree = hostile_layer
    key = next(k for k, v in tree.items() if v == value)
    proc = _cli(*QUERY, "--data", str(layer), "--selector", f"{VALUES}.{key}", "-t", fmt)
    assert proc.returncode == 0, proc.stderr[-500:]
    text = _decoded(proc.stdout, f"query -t {fmt}")
    _check_query_output(text, value, fmt)
    _no_forged_line(text, value, fmt)
