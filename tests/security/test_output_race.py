"""Atomic, race-free output: without ``--force`` the emptiness check and the swap are one
``rename(2)``, so a directory filled meanwhile, or a concurrent run that got there first, is
never replaced; SIGTERM cleans staging like SIGINT; the outputs of one command land all or
nothing."""

from __future__ import annotations

import errno
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.bundler import writer as bundler_writer
from aicr_tui.core.foundation import fileio
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from tests.conftest import _cli_path
from tests.unit.test_nothing_lost_support import (
    KEYED,
    image,
    plan_variant,
    recipe_text,
    run_cli_dying_at_rename,
    siblings,
)

PASSED = "aicr_tui/recipes/samples/validation/aks-h100-training-passed.jsonl"


def _paused_writer(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make the thread named "A" stop after staging and verifying, just before the commit."""
    reached, go_on = threading.Event(), threading.Event()
    real = bundler_writer._verify

    def verify(plan: Any, stage: Path) -> None:
        real(plan, stage)
        if threading.current_thread().name == "A":
            reached.set()
            assert go_on.wait(30)

    monkeypatch.setattr(bundler_writer, "_verify", verify)
    return reached, go_on


def _run_a(out: Path, result: dict[str, Any], *, force: bool = False) -> threading.Thread:
    def run() -> None:
        try:
            write_bundle(plan_variant(1), out, force=force)
            result["A"] = "ok"
        except BaseException as err:  # the test inspects it
            result["A"] = err

    return threading.Thread(target=run, name="A")


def test_directory_filled_between_check_and_swap_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's reproduction: before, the swap replaced the filled directory (exit 0,
    the other program's files deleted)."""
    out = tmp_path / "out"
    for fresh in (True, False):  # the path absent, or present and empty, at the check
        if not fresh:
            out.mkdir()
        reached, go_on = _paused_writer(monkeypatch)
        result: dict[str, Any] = {}
        a = _run_a(out, result)
        a.start()
        assert reached.wait(30)
        out.mkdir(exist_ok=True)
        (out / "theirs.txt").write_text("not yours")
        go_on.set()
        a.join(30)
        err = result["A"]
        assert isinstance(err, AicrError) and err.exit_code == 2, err
        assert "\n" not in err.render() and '"' + str(out) + '"' in err.render()
        assert image(out) == {"theirs.txt": b"not yours"}
        assert siblings(tmp_path) == ["out"], "staging was left behind"
        (out / "theirs.txt").unlink()
        out.rmdir()


def test_two_writers_to_one_fresh_path_exactly_one_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stops before its commit; B writes the whole bundle; A then must lose with
    CONFLICT (exit 2), and B's bundle stays, complete."""
    out = tmp_path / "out"
    reached, go_on = _paused_writer(monkeypatch)
    result: dict[str, Any] = {}
    a = _run_a(out, result)
    a.start()
    assert reached.wait(30)
    write_bundle(plan_variant(2), out)  # B, in this thread
    go_on.set()
    a.join(30)
    err = result["A"]
    assert isinstance(err, AicrError) and err.code is ErrorCode.CONFLICT and err.exit_code == 2
    assert image(out) == plan_variant(2).files
    assert siblings(tmp_path) == ["out"]


def test_concurrent_cli_runs_without_force(tmp_path: Path) -> None:
    """Real processes started together: whatever the timing, one exits 0 and the other 2
    with one line, and the directory holds one complete bundle."""
    (tmp_path / "recipe.yaml").write_text(recipe_text())
    env = dict(os.environ, NO_COLOR="1", TERM="dumb")
    for round_ in range(2):
        out = f"out{round_}"
        args = [*_cli_path(), "bundle", "-r", "recipe.yaml", "-o", out,
                f"--accelerated-node-toleration={KEYED}"]  # fmt: skip
        procs = [
            subprocess.Popen(args, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        done = [(p.wait(120), p.stderr.read() if p.stderr else "") for p in procs]
        codes = sorted(code for code, _ in done)
        assert codes == [0, 2], done
        loser = next(err for code, err in done if code == 2)
        assert len(loser.strip().splitlines()) == 1 and f'"{out}"' in loser, loser
        listed = (tmp_path / out / "checksums.txt").read_text().splitlines()
        assert len(listed) + 1 == len(image(tmp_path / out))
    assert sorted(siblings(tmp_path)) == ["out0", "out1", "recipe.yaml"]


def test_sigterm_cleans_staging_and_keeps_the_previous_output(tmp_path: Path) -> None:
    (tmp_path / "recipe.yaml").write_text(recipe_text())
    out = tmp_path / "out"
    write_bundle(plan_variant(1), out)
    before = image(out)
    proc = run_cli_dying_at_rename(
        "SIGTERM", "bundle", "-r", "recipe.yaml", "-o", "out", "--force",
        f"--accelerated-node-toleration={KEYED}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip() == "aicr-tui: terminated"
    assert image(out) == before
    assert sorted(siblings(tmp_path)) == ["out", "recipe.yaml"]
    # a file output (the recipe) too
    (tmp_path / "r.yaml").write_text("previous\n")
    proc = run_cli_dying_at_rename(
        "SIGTERM", "recipe", "--service", "aks", "--accelerator", "h100", "--intent",
        "training", "-o", "r.yaml", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 143, proc.stderr
    assert (tmp_path / "r.yaml").read_text() == "previous\n"
    assert sorted(siblings(tmp_path)) == ["out", "r.yaml", "recipe.yaml"]


def test_validate_reports_are_all_or_nothing(tmp_path: Path) -> None:
    """--junit is written only if the CTRF report is too (before: report.xml stayed after
    the JSON report failed)."""
    from tests.conftest import run_cli

    junit = tmp_path / "report.xml"
    proc = run_cli("validate", "--replay", PASSED, "--replay-speed", "0",
                   "--junit", str(junit), "-o", "/dev/full")  # fmt: skip
    assert proc.returncode == 2 and "ENOSPC" in proc.stderr.strip().splitlines()[-1]
    assert siblings(tmp_path) == [], "report.xml was left behind"
    junit.write_text("previous\n")
    proc = run_cli("validate", "--replay", PASSED, "--replay-speed", "0",
                   "--junit", str(junit), "-o", "/dev/full")  # fmt: skip
    assert proc.returncode == 2
    assert junit.read_text() == "previous\n" and siblings(tmp_path) == ["report.xml"]


@pytest.mark.parametrize("failing_rename", [1, 2, 3])
def test_output_set_puts_previous_files_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_rename: int
) -> None:
    names = ["a.json", "b.xml", "c.jsonl"]
    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "c.jsonl").write_text("old c")
    real = os.replace
    calls = 0

    def flaky(src: Any, dst: Any) -> None:
        nonlocal calls
        if str(src).endswith(".tmp"):
            calls += 1
            if calls == failing_rename:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(AicrError) as info, fileio.OutputSet() as out:
        for name in names:
            out.add(tmp_path / name, f"new {name}".encode(), what="report")
        out.commit()
    assert "ENOSPC" in info.value.render() and info.value.exit_code == 2
    assert siblings(tmp_path) == ["a.json", "c.jsonl"]
    assert (tmp_path / "a.json").read_text() == "old a"
    assert (tmp_path / "c.jsonl").read_text() == "old c"
    monkeypatch.setattr(os, "replace", real)
    with fileio.OutputSet() as out:
        for name in names:
            out.add(tmp_path / name, f"new {name}".encode(), what="report")
        out.commit()
    assert {n: (tmp_path / n).read_text() for n in names} == {n: f"new {n}" for n in names}
    assert siblings(tmp_path) == sorted(names)
