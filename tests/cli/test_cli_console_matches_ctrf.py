"""One truth per run (issue 34, item 4): the console's last line and the saved CTRF report
agree on every count, or the line says exactly what the file leaves out (the readiness
pre-flight, which CTRF keeps out of its summary as upstream does)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLES

VAL = SAMPLES / "validation"


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--replay", str(VAL / "aks-h100-training-passed.jsonl"), "--replay-speed", "0"], 0),
        (["--replay", str(VAL / "aks-nc80adis-training-failed.jsonl"), "--replay-speed", "0"], 8),
        (
            [
                "-r",
                str(VAL / "aks-h100-training.recipe.yaml"),
                "-s",
                str(SAMPLES / "snapshots" / "aks-h100-install.yaml"),
                "--phase",
                "readiness",
                "--no-cluster",
            ],
            0,
        ),
    ],
)
def test_console_counts_match_the_saved_ctrf(cli, tmp_path: Path, argv: list[str], code: int):
    out = tmp_path / "r.json"
    res = cli("validate", *argv, "--plain", "-o", str(out), env={"PYTHONPATH": str(REPO)})
    assert res.returncode == code, res.stderr[-2000:]
    summary = json.loads(out.read_text())["results"]["summary"]
    last = res.stderr.splitlines()[-1]
    console = dict(re.findall(r"\b(tests|passed)=(\d+)", last.split(";")[0]))
    note = re.search(
        r"leaves out the (\d+) readiness constraint\(s\) \(tests=(\d+) passed=(\d+)", last
    )
    if note is None:
        assert (int(console["tests"]), int(console["passed"])) == (
            summary["tests"],
            summary["passed"],
        ), last
    else:
        left_out, tests, passed = (int(g) for g in note.groups())
        assert (tests, passed) == (summary["tests"], summary["passed"]), last
        assert int(console["tests"]) - left_out == summary["tests"]
