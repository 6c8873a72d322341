"""CTRF and JUnit from the event stream; JSONL record/replay reproduces the report exactly."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.events import (
    CheckFinished,
    CheckStarted,
    Event,
    LogLine,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.outcome import exit_code_for
from aicr_tui.core.validation.recording import Recorder, load_recording, parse_recording, replay
from aicr_tui.core.validation.reports.ctrf import CtrfBuilder, ctrf_from_events, render_ctrf
from aicr_tui.core.validation.reports.junit import render_junit
from aicr_tui.core.validation.stream import EventStream
from tests.simulated import DEMOS, SAMPLES, demo_recording

PASSED = SAMPLES / "aks-h100-training-passed.jsonl"
FAILED = SAMPLES / "aks-nc80adis-training-failed.jsonl"
UNMEASURED = SAMPLES / "aks-h100-training-unmeasured.jsonl"


def test_ctrf_shape_matches_upstream_fields() -> None:
    report = ctrf_from_events(load_recording(PASSED))
    assert report["reportFormat"] == "CTRF" and report["specVersion"] == "0.0.1"
    assert report["timestamp"] == "2026-11-30T00:53:20Z"
    results = report["results"]
    assert results["tool"]["name"] == "aicr-tui"
    summary = results["summary"]
    # readiness is not a test (reproduction, issue 14: it changed the totals CI reads)
    assert summary["tests"] == len(results["tests"]) == 15
    assert (summary["passed"], summary["failed"], summary["skipped"], summary["other"]) == (
        14,
        0,
        1,
        0,
    )
    assert summary["start"] == 1796000000000 and summary["stop"] > summary["start"]
    by_name = {t["name"]: t for t in results["tests"]}
    nccl = by_name["nccl-all-reduce-bw"]
    assert nccl["suite"] == ["performance"] and nccl["status"] == "passed" and nccl["duration"] > 0
    assert nccl["extra"]["verdict"] == "passed"
    assert "RESULT: NCCL All Reduce bandwidth: 157.29 GB/s" in nccl["stdout"]
    assert "Constraint: >= 150 → true" in nccl["stdout"]
    assert any("0.9 x 150" in line for line in nccl["stdout"])
    assert "K8s.server.version" not in by_name
    assert {t["suite"][0] for t in results["tests"]} == {"deployment", "conformance", "performance"}
    ready = {r["name"]: r for r in results["extra"]["readiness"]}
    assert ready["K8s.server.version"] == {
        "name": "K8s.server.version",
        "verdict": "passed",
        "message": "expected >= 1.34, got v1.34.2",
    }
    assert len(ready) == 5
    assert by_name["check-nvidia-smi"]["extra"] == {
        "nodesTotal": "2",
        "nodesValidated": "2",
        "verdict": "passed",
    }
    robust = by_name["robust-controller"]
    assert (robust["status"], robust["extra"]["verdict"]) == ("skipped", "not applicable")


def ctrf_by_name(recording: Any) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The CTRF report of a recording, and its tests by name."""
    report = ctrf_from_events(load_recording(recording))
    return report, {t["name"]: t for t in report["results"]["tests"]}


def test_failed_sample_reports_both_outcomes() -> None:
    report, by_name = ctrf_by_name(FAILED)
    assert by_name["secure-accelerator-access"]["status"] == "failed"
    nccl = by_name["nccl-all-reduce-bw"]
    assert (nccl["status"], nccl["extra"]["verdict"]) == ("skipped", "not applicable")
    assert "not applicable" in nccl["message"]
    assert report["results"]["summary"]["failed"] == 1


def test_unmeasured_gate_is_ctrf_other_never_a_pass() -> None:
    report, by_name = ctrf_by_name(UNMEASURED)
    nccl = by_name["nccl-all-reduce-bw"]
    assert (nccl["status"], nccl["extra"]["verdict"]) == ("other", "not measured")
    assert "could not be pulled" in nccl["message"]
    assert report["results"]["summary"]["other"] == 1


def test_junit_mirrors_the_ctrf_report() -> None:
    report = ctrf_from_events(load_recording(FAILED))
    root = ET.fromstring(render_junit(report))
    assert root.tag == "testsuites"
    assert root.get("tests") == "15" and root.get("failures") == "1"
    assert root.get("skipped") == "2" and root.get("errors") == "0"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["deployment", "conformance", "performance"]
    case = suites["conformance"].find("testcase[@name='secure-accelerator-access']")
    assert case is not None and case.find("failure") is not None
    skipped = suites["performance"].find("testcase[@name='nccl-all-reduce-bw']/skipped")
    assert skipped is not None and "not applicable" in (skipped.get("message") or "")
    assert skipped.get("type") == "not applicable"
    prop = suites["performance"].find("testcase[@name='nccl-all-reduce-bw']/properties/property")
    assert prop is not None and (prop.get("name"), prop.get("value")) == (
        "verdict",
        "not applicable",
    )
    unmeasured = ET.fromstring(render_junit(ctrf_from_events(load_recording(UNMEASURED))))
    error = unmeasured.find(".//testcase[@name='nccl-all-reduce-bw']/error")
    assert error is not None and error.get("type") == "not measured"
    assert unmeasured.get("errors") == "1"


def test_junit_survives_escape_sequences_and_xml_illegal_characters() -> None:
    """Reproduction (issue 14): a captured log line with an ANSI escape or another
    XML-illegal character made the JUnit file unparseable."""
    hostile = [
        "\x1b[31mred\x1b[0m text",
        "bell\x07 and nul\x00 and vt\x0b and esc\x1b alone",
        "\x1b]0;title\x07osc",
        "<tag> & 'quotes' \"double\"",
        "fffe\ufffe ffff\uffff surrogate\ud800 end",
    ]
    events: list[Event] = [
        RunStarted(0.0, "run", 1796000000000, ("deployment",), "cluster"),
        CheckStarted(0.1, "deployment", "operator-health\x1b[2J"),
        *[LogLine(0.2, "deployment", "operator-health\x1b[2J", line) for line in hostile],
        CheckFinished(0.3, "deployment", "operator-health\x1b[2J", "failed", "boom\x1b[1m\x00"),
    ]
    text = render_junit(ctrf_from_events(events))
    root = ET.fromstring(text)  # parses
    case = root.find(".//testcase")
    assert case is not None and case.get("name") == "operator-health"
    out = case.findtext("system-out") or ""
    assert "\x1b" not in text and "\x00" not in out
    assert "red text" in out and "<tag> & 'quotes'" in out and "osc" in out
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "boom"


@pytest.mark.parametrize("filename", sorted(DEMOS))
def test_every_report_of_every_shipped_recording_parses(filename: str) -> None:
    events = load_recording(SAMPLES / filename)
    report = ctrf_from_events(events)
    again = json.loads(render_ctrf(report))
    assert again == report
    statuses = {"passed", "failed", "skipped", "pending", "other"}
    verdicts = {"passed", "failed", "not applicable", "not measured"}
    for t in again["results"]["tests"]:
        assert t["status"] in statuses and t["extra"]["verdict"] in verdicts
        assert t["suite"][0] != "readiness"
    summary = again["results"]["summary"]
    assert summary["tests"] == sum(summary[k] for k in statuses)
    root = ET.fromstring(render_junit(report))
    assert root.get("tests") == str(summary["tests"])
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert finished and finished[-1].exit_code == exit_code_for(events)


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
