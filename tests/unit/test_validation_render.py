"""The CLI's progress renderers: one plain line per event, and the live-table state."""

from __future__ import annotations

from aicr_tui.commands.validate import LiveTable, format_event
from aicr_tui.core.validation.events import CheckFinished, CheckStarted, LogLine, RunFinished
from aicr_tui.core.validation.recording import load_recording
from tests.simulated import SAMPLES, gate


def test_plain_lines_name_phase_check_status_and_gate() -> None:
    assert (
        format_event(CheckStarted(1.0, "performance", "nccl-all-reduce-bw", 1800.0))
        == "  performance/nccl-all-reduce-bw running (budget 30m00s)"
    )
    assert (
        format_event(LogLine(1.0, "performance", "nccl-all-reduce-bw", "RESULT: x"))
        == "    performance/nccl-all-reduce-bw | RESULT: x"
    )
    nccl = "nccl-all-reduce-bw"
    line = format_event(gate(nccl, 157.29, "GB/s", ">= 150", "passed", t=2.0, display="157.29"))
    assert (
        line
        == "    performance/nccl-all-reduce-bw gate nccl-all-reduce-bw: 157.29 GB/s vs >= 150 → PASSED"
    )
    na = format_event(gate(nccl, None, "GB/s", ">= 150", "not applicable", t=2.0, note="2 GPUs"))
    assert na is not None and na.endswith("→ NOT APPLICABLE (2 GPUs)")
    assert (
        format_event(CheckFinished(3.0, "deployment", "operator-health", "failed", "no pods", 1500))
        == "  FAILED         deployment/operator-health (1.5s): no pods"
    )
    unmeasured = format_event(
        RunFinished(9.0, 2, 1, 0, 0, 1, 8, "1 declared check(s) not measured")
    )
    assert unmeasured is not None and unmeasured.startswith("validation not measured:")
    refused = format_event(
        RunFinished(0.1, 1, 0, 1, 0, 0, 2, "[INVALID_REQUEST] readiness check failed: x")
    )
    assert refused is not None and "refused" in refused and "INVALID_REQUEST" not in refused


def test_live_table_applies_a_whole_recorded_run() -> None:
    table = LiveTable()
    events = load_recording(SAMPLES / "aks-nc80adis-training-failed.jsonl")
    for e in events:
        table.apply(e)
    rows = {
        (phase, check): (status, latest)
        for phase, check, status, _took, latest in table.rows.values()
    }
    assert rows[("conformance", "secure-accelerator-access")][0] == "failed"
    assert rows[("performance", "nccl-all-reduce-bw")][0] == "not applicable"
    assert "exit=8" in table.footer
    assert table.renderable().row_count == len(rows)
