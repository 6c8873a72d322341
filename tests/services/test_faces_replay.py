"""Replay, face against face: ``aicr-tui validate --replay`` in a subprocess and the
dashboard's replay source (``ReplaySource``, what the wizard plays) open a recording through
``aicr_tui.core.services.replay.open_replay``: the same report from the same recording, the same
refusal of an incomplete one.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.services.errors import error_line
from aicr_tui.core.validation.progress import ProgressModel
from aicr_tui.core.validation.reports.ctrf import CtrfBuilder, render_ctrf
from aicr_tui.screens.validate_dashboard import ReplaySource
from tests.conftest import SAMPLES, run_cli

RECORDINGS = SAMPLES / "validation"


def _dashboard_reads(path: Path) -> tuple[str, ProgressModel]:
    """Everything the dashboard's source yields, into its report builder and its model."""
    builder, model = CtrfBuilder(), ProgressModel()

    async def drain() -> None:
        async for event in ReplaySource(path, speed=0).events(threading.Event()):
            builder(event)
            model.apply(event)

    asyncio.run(drain())
    return render_ctrf(builder.report()), model


@pytest.mark.parametrize(
    "name", ["aks-nc80adis-training-failed.jsonl", "aks-h100-training-unmeasured.jsonl"]
)
def test_the_same_recording_gives_the_same_report(name: str, tmp_path: Path) -> None:
    report = tmp_path / "ctrf.json"
    proc = run_cli(
        "validate", "--replay", str(RECORDINGS / name), "--replay-speed", "0", "-o", str(report)
    )
    assert proc.returncode == 8, proc.stderr
    ctrf, model = _dashboard_reads(RECORDINGS / name)
    assert report.read_text() == ctrf
    assert model.summary is not None and model.summary.exit_code == proc.returncode


def test_both_refuse_an_incomplete_recording_with_the_same_line(tmp_path: Path) -> None:
    lines = (RECORDINGS / "aks-h100-training-passed.jsonl").read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(x for x in lines if '"RunFinished"' not in x) + "\n")
    proc = run_cli("validate", "--replay", str(cut), "--replay-speed", "0")
    assert proc.returncode == 2 and proc.stdout == ""
    with pytest.raises(AicrError) as refused:
        _dashboard_reads(cut)
    assert proc.stderr.splitlines() == [f"aicr-tui: error: {error_line(refused.value)}"]
    assert "no RunFinished event" in proc.stderr
