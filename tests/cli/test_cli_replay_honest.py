"""`validate --replay` says it is a replay (issue 15): it named the file nowhere, printed
"validating against the live cluster — validation workloads will be created" and "cleanup:
deleted namespace aicr-validation" as if it did them, and took 23-163 s at the default pace.
"""

from __future__ import annotations

from aicr_tui.core.services.replay import default_replay_speed
from aicr_tui.core.validation.recording import load_recording
from tests.conftest import REPO, SAMPLES

RECORDINGS = sorted((SAMPLES / "validation").glob("*.jsonl"))
TRAINING = SAMPLES / "validation" / "aks-h100-training-passed.jsonl"


def test_a_replay_names_its_file_and_claims_no_live_action(cli) -> None:
    res = cli("validate", "--replay", str(TRAINING), "--replay-speed", "0", "--plain")
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert lines[0].startswith("replaying aks-h100-training-passed.jsonl (recorded 20"), lines[0]
    assert "recipe aks-h100-training.recipe.yaml)" in lines[0]
    live = [ln for ln in lines if "live cluster" in ln or "deleted namespace" in ln]
    assert live, "the recording holds the run's live messages"
    for line in live:  # each one is shown as what was recorded, not as done now
        assert "recorded:" in line, line


def test_the_default_pace_plays_every_shipped_recording_in_a_few_seconds() -> None:
    """The pace the CLI and the dashboard use without --replay-speed (computed, not timed)."""
    assert RECORDINGS
    for path in RECORDINGS:
        events = load_recording(path)
        span = max(e.t for e in events)
        assert span > 20, path.name  # recorded runs last far longer than a replay should
        assert span / default_replay_speed(events) <= 5.0, path.name


def test_replay_speed_is_documented(cli) -> None:
    res = cli("validate", "--help")
    assert "--replay-speed" in res.stdout
    assert "--replay-speed" in (REPO / "README.md").read_text()
    assert "serve --demo" in (REPO / "README.md").read_text()  # and the browser demo is in the tour
