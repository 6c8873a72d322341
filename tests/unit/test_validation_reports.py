"""CTRF and JUnit from the event stream; JSONL record/replay reproduces the report exactly."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from core.foundation.errors import AicrError
from core.validation.events import Event
from core.validation.recording import Recorder, load_recording, parse_recording, replay
from core.validation.reports.ctrf import CtrfBuilder, ctrf_from_events, render_ctrf
from core.validation.reports.junit import render_junit
from core.validation.simulated import DEMOS, SAMPLES, demo_recording
from core.validation.stream import EventStream

PASSED = SAMPLES / "aks-h100-training-passed.jsonl"
FAILED = SAMPLES / "aks-nc80adis-training-failed.jsonl"


def test_ctrf_shape_matches_upstream_fields() -> None:
    report = ctrf_from_events(load_recording(PASSED))
    assert report["reportFormat"] == "CTRF" and report["specVersion"] == "0.0.1"
    assert report["timestamp"] == "2026-11-30T00:53:20Z"
    results = report["results"]
    assert results["tool"]["name"] == "aicr-tui"
    summary = results["summary"]
    assert summary["tests"] == len(results["tests"]) == 20
    assert (summary["passed"], summary["failed"], summary["skipped"], summary["other"]) == (
        14,
        0,
        6,
        0,
    )
    assert summary["start"] == 1796000000000 and summary["stop"] > summary["start"]
    by_name = {t["name"]: t for t in results["tests"]}
    nccl = by_name["nccl-all-reduce-bw"]
    assert nccl["suite"] == ["performance"] and nccl["status"] == "passed" and nccl["duration"] > 0
    assert "RESULT: NCCL All Reduce bandwidth: 157.29 GB/s" in nccl["stdout"]
    assert "Constraint: >= 150 → true" in nccl["stdout"]
    assert any("0.9 x 150" in line for line in nccl["stdout"])
    ready = by_name["K8s.server.version"]
    assert ready["suite"] == ["readiness"]
    assert ready["message"] == "expected >= 1.34, got v1.34.2"
    assert by_name["check-nvidia-smi"]["extra"] == {"nodesTotal": "2", "nodesValidated": "2"}
    assert [t["suite"][0] for t in results["tests"]][:5] == ["readiness"] * 5


def test_failed_sample_reports_both_outcomes() -> None:
    report = ctrf_from_events(load_recording(FAILED))
    by_name = {t["name"]: t for t in report["results"]["tests"]}
    assert by_name["secure-accelerator-access"]["status"] == "failed"
    assert by_name["nccl-all-reduce-bw"]["status"] == "skipped"
    assert "not applicable" in by_name["nccl-all-reduce-bw"]["message"]
    assert report["results"]["summary"]["failed"] == 1


def test_junit_mirrors_the_ctrf_report() -> None:
    report = ctrf_from_events(load_recording(FAILED))
    root = ET.fromstring(render_junit(report))
    assert root.tag == "testsuites"
    assert root.get("tests") == "20" and root.get("failures") == "1"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["readiness", "deployment", "conformance", "performance"]
    case = suites["conformance"].find("testcase[@name='secure-accelerator-access']")
    assert case is not None and case.find("failure") is not None
    skipped = suites["performance"].find("testcase[@name='nccl-all-reduce-bw']/skipped")
    assert skipped is not None and "not applicable" in (skipped.get("message") or "")


def test_record_then_replay_gives_an_identical_ctrf_report(tmp_path: Path) -> None:
    original = load_recording(PASSED)
    target = tmp_path / "events.jsonl"
    recorder = Recorder(target)
    for e in original:
        recorder(e)
    assert not target.exists()  # nothing until commit
    recorder.commit()
    again = load_recording(target)
    assert again == original

    async def replayed(events: list[Event]) -> str:
        stream = EventStream()
        builder = CtrfBuilder()
        stream.add_sink(builder)
        await replay(events, stream, speed=0)
        return render_ctrf(builder.report())

    assert asyncio.run(replayed(again)) == render_ctrf(ctrf_from_events(original))


def test_replay_keeps_original_pacing_scaled_by_speed() -> None:
    events = load_recording(PASSED)
    waits: list[float] = []
    now = [0.0]

    async def fake_sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    async def go(speed: float) -> None:
        now[0] = 0.0
        await replay(events, EventStream(), speed=speed, sleep=fake_sleep, clock=lambda: now[0])

    asyncio.run(go(1.0))
    assert sum(waits) == pytest.approx(events[-1].t)
    waits.clear()
    asyncio.run(go(4.0))
    assert sum(waits) == pytest.approx(events[-1].t / 4)
    waits.clear()
    asyncio.run(go(0.0))
    assert waits == []


def test_aborted_recording_leaves_no_file_and_bad_recordings_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "events.jsonl"
    rec = Recorder(target)
    rec(load_recording(PASSED)[0])
    rec.abort()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AicrError, match="does not start with a RunStarted"):
        parse_recording('{"type":"LogLine","t":0,"phase":"","check":"","line":"x"}\n', "x.jsonl")
    lines = PASSED.read_text().splitlines()
    with pytest.raises(AicrError, match="goes back in time"):
        parse_recording("\n".join([lines[0], lines[-1], lines[5]]), "x.jsonl")


@pytest.mark.parametrize("filename", sorted(DEMOS))
def test_shipped_recordings_regenerate_byte_for_byte(filename: str) -> None:
    assert demo_recording(filename) == (SAMPLES / filename).read_text(encoding="utf-8")


def test_ctrf_is_json_with_a_trailing_newline() -> None:
    text = render_ctrf(ctrf_from_events(load_recording(PASSED)))
    assert text.endswith("}\n")
    json.loads(text)
