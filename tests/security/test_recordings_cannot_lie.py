"""Recordings cannot lie (issue 35, family 6).

A recording is a file anyone may edit. Before the fix, the shipped run that exited 8 (one
declared check not measured) replayed as passed, exit 0, once its header's mode fields were
flipped (``allow_unmeasured`` true, or ``mode`` ``no-cluster``) and ``exit_code`` set to 0:
the replay trusted the header. ``-r``/``-s``/``-k`` beside ``--replay`` were silently
ignored, and ``--replay-speed`` took ``nan``, ``1e-300`` and ``0.0000001`` (a 110 s sample
replayed over 35 years).

Now a header whose mode fields disagree with the events (or with the recorded final
message) is refused; a replay's verdict is recomputed from the events with this command's
``--allow-unmeasured`` (never the recorded one); the run's inputs beside ``--replay`` are
refused with one line; and ``--replay-speed`` takes 0 (no pacing) or a finite factor in the
documented range.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.services.replay import MAX_REPLAY_SPEED, MIN_REPLAY_SPEED, open_replay
from aicr_tui.core.validation.recording import parse_recording
from tests.conftest import SAMPLES

RECORDINGS = SAMPLES / "validation"
UNMEASURED = RECORDINGS / "aks-h100-training-unmeasured.jsonl"
PASSED = RECORDINGS / "aks-h100-training-passed.jsonl"
FAILED = RECORDINGS / "aks-nc80adis-training-failed.jsonl"
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
SUFFIX = " (allowed by --allow-unmeasured)"


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aicr_tui", "validate", *args],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _edited(source: Path, **header: Any) -> list[dict[str, Any]]:
    events = _events(source)
    events[0].update(header)
    return events


def _finish(events: list[dict[str, Any]], code: int, message: str | None = None) -> None:
    events[-1]["exit_code"] = code
    if message is not None:
        events[-1]["message"] = message


def _lies(source: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    e = _edited(source, allow_unmeasured=True)
    _finish(e, 0)
    out["allow_unmeasured flipped, exit 0"] = e
    e = _edited(source, allow_unmeasured=True)
    _finish(e, 0, _events(source)[-1]["message"] + SUFFIX)
    out["allow_unmeasured flipped, exit 0, message edited"] = e
    e = _edited(source, mode="no-cluster")
    _finish(e, 0)
    out["mode no-cluster, exit 0"] = e
    e = _edited(source, mode="no-cluster")
    _finish(e, 0, "")
    out["mode no-cluster, exit 0, message emptied"] = e
    e = _edited(source, mode="no-cluster", allow_unmeasured=True)
    _finish(e, 0, "")
    out["both flipped"] = e
    e = _edited(source, mode="replay")
    out["mode replay"] = e
    e = _edited(source, mode="Cluster")
    out["mode outside the vocabulary"] = e
    e = _edited(source, allow_unmeasured="yes")
    out["allow_unmeasured not a bool"] = e
    return out


LIES = list(_lies(UNMEASURED))


@pytest.mark.parametrize("case", LIES)
def test_an_edited_header_never_replays_as_passed(case: str, tmp_path: Path) -> None:
    path = _write(tmp_path, _lies(UNMEASURED)[case])
    res = _cli(
        "--replay", str(path), "--replay-speed", "0", "--plain", "-o", str(tmp_path / "r.json")
    )
    assert res.returncode in (2, 8), f"{case}: exit {res.returncode}\n{res.stderr}"
    assert "Traceback" not in res.stderr and "[INTERNAL]" not in res.stderr
    if res.returncode == 2:
        assert "recording" in res.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    "case", [c for c in LIES if "message edited" not in c and c != "mode replay"]
)
def test_an_edited_header_is_refused_when_read(case: str, tmp_path: Path) -> None:
    text = "".join(json.dumps(e) + "\n" for e in _lies(UNMEASURED)[case])
    with pytest.raises(AicrError) as caught:
        parse_recording(text, "edited.jsonl")
    assert "\n" not in caught.value.render().strip()


def test_a_no_cluster_header_on_a_run_that_measured_is_refused(tmp_path: Path) -> None:
    for source in (PASSED, FAILED):
        events = _edited(source, mode="no-cluster")
        with pytest.raises(AicrError, match="no-cluster"):
            parse_recording("".join(json.dumps(e) + "\n" for e in events), "x.jsonl")


def test_a_no_cluster_measurement_beyond_readiness_is_refused(tmp_path: Path) -> None:
    """A --no-cluster run records readiness Measurements (evaluated from the snapshot) and
    replays; a Measurement of a cluster check added to it is refused."""
    rec = tmp_path / "e.jsonl"
    res = _cli("-r", str(RECORDINGS / "aks-h100-training.recipe.yaml"),
               "-s", str(SAMPLES / "snapshots" / "aks-h100-install.yaml"), "--no-cluster",
               "--record", str(rec), "-o", str(tmp_path / "a.json"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    events = _events(rec)
    assert any(e["type"] == "Measurement" and e["phase"] == "readiness" for e in events)
    parse_recording(rec.read_text(encoding="utf-8"), "genuine.jsonl")  # its own run replays
    measured = next(e for e in _events(PASSED) if e["type"] == "Measurement"
                    and e["phase"] == "performance")  # fmt: skip
    at = next(i for i, e in enumerate(events) if e["type"] == "CheckFinished"
              and e["check"] == measured["check"])  # fmt: skip
    events.insert(at, {**measured, "t": events[at]["t"]})
    with pytest.raises(AicrError, match=r"\(Measurement\) records a cluster result"):
        parse_recording("".join(json.dumps(e) + "\n" for e in events), "x.jsonl")


def test_the_recorded_allow_unmeasured_is_not_the_replays_verdict(tmp_path: Path) -> None:
    """A consistent recording of a run with --allow-unmeasured (header, exit code and
    message all say so) replays exit 8 unless this replay is given --allow-unmeasured."""
    path = _write(tmp_path, _lies(UNMEASURED)["allow_unmeasured flipped, exit 0, message edited"])
    res = _cli("--replay", str(path), "--replay-speed", "0", "--plain", "-o", str(tmp_path / "a"))
    assert res.returncode == 8, res.stderr
    assert "not measured: performance/nccl-all-reduce-bw" in res.stderr
    res = _cli("--replay", str(path), "--replay-speed", "0", "--plain", "--allow-unmeasured",
               "-o", str(tmp_path / "b"))  # fmt: skip
    assert res.returncode == 0, res.stderr


def test_genuine_recordings_still_replay() -> None:
    for source, code in ((PASSED, 0), (FAILED, 8), (UNMEASURED, 8)):
        res = _cli("--replay", str(source), "--replay-speed", "0", "--plain", "-o", os.devnull)
        assert res.returncode == code, (source.name, res.stderr)


RUN_INPUTS = [
    ("-r", "x.yaml"), ("--recipe", "x.yaml"), ("-s", "s.yaml"), ("--snapshot", "s.yaml"),
    ("-k", "kc"), ("--kubeconfig", "kc"), ("--context", "c"), ("--phase", "performance"),
    ("--skip-check", "nccl-all-reduce-bw"), ("--no-cluster", None), ("--fail-fast", None),
    ("--data", "d"), ("--aks-gpu-pools", "p.json"), ("--oke-addons", "a.json"),
    ("--no-cleanup", None),
]  # fmt: skip


@pytest.mark.parametrize(("flag", "value"), RUN_INPUTS)
def test_run_inputs_beside_replay_are_refused(flag: str, value: str | None, tmp_path: Path) -> None:
    args = [flag] if value is None else [flag, value]
    res = _cli("--replay", str(PASSED), "--replay-speed", "0", "--plain", *args,
               "-o", str(tmp_path / "r.json"))  # fmt: skip
    assert res.returncode == 2, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and flag in lines[0] and "--replay" in lines[0], res.stderr
    assert not (tmp_path / "r.json").exists()


BAD_SPEEDS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e-300", "0.0000001", "1e300", "-1",
              "-0.5", "0.001", str(MIN_REPLAY_SPEED / 2), str(MAX_REPLAY_SPEED * 2)]  # fmt: skip
GOOD_SPEEDS = ["0", "1", "10", "0.5", str(MIN_REPLAY_SPEED), str(MAX_REPLAY_SPEED)]


@pytest.mark.parametrize("speed", BAD_SPEEDS)
def test_replay_speed_outside_the_range_is_refused(speed: str, tmp_path: Path) -> None:
    with pytest.raises(AicrError) as caught:
        open_replay(PASSED, float(speed))
    assert "--replay-speed" in caught.value.render()
    res = _cli("--replay", str(PASSED), f"--replay-speed={speed}", "--plain",
               "-o", str(tmp_path / "r.json"))  # fmt: skip
    assert res.returncode == 2, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--replay-speed" in lines[0], res.stderr


@pytest.mark.parametrize("speed", GOOD_SPEEDS)
def test_replay_speed_in_the_range_is_accepted(speed: str) -> None:
    assert open_replay(PASSED, float(speed)).speed == float(speed)


def test_the_range_is_documented() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "aicr_tui", "validate", "--help"],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    help_text = " ".join(res.stdout.split())
    assert f"{MIN_REPLAY_SPEED:g}" in help_text and f"{MAX_REPLAY_SPEED:g}" in help_text
