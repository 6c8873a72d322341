"""Nothing lost when a bundle write fails: a failure at any point (a file write, the inventory
check, either rename, an interrupt, a kill) leaves the previous bundle byte-for-byte intact and
no partial output; concurrent writers to one directory never mix their files."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.foundation import fileio
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from tests.unit.test_nothing_lost_support import (
    KEYED,
    image,
    plan_variant,
    recipe_text,
    run_cli_dying_at_rename,
    siblings,
)


@pytest.fixture
def previous(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    out = tmp_path / "bundle"
    write_bundle(plan_variant(1), out)
    before = image(out)
    assert before == plan_variant(1).files
    return out, before


def _assert_intact(out: Path, before: dict[str, bytes]) -> None:
    assert image(out) == before
    assert siblings(out.parent) == [out.name], "a staging or .old directory was left behind"


@pytest.mark.parametrize("fail_after", [0, 5, 30])
def test_a_failed_file_write_keeps_the_previous_bundle(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch, fail_after: int
) -> None:
    out, before = previous
    real = Path.write_bytes
    written = 0

    def flaky(self: Path, data: Any) -> int:
        nonlocal written
        if written == fail_after:
            raise OSError(errno.ENOSPC, "No space left on device")
        written += 1
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky)
    with pytest.raises(OSError):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


def test_a_staged_file_that_changed_before_the_rename_is_refused(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inventory check re-reads the stage: a corrupted file never reaches the target."""
    out, before = previous
    real = Path.write_bytes

    def corrupting(self: Path, data: Any) -> int:
        if self.name == "values.yaml":
            data = bytes(data) + b"# flipped by a bad disk\n"
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", corrupting)
    with pytest.raises(AicrError, match="does not match its checksum"):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


def test_a_stray_file_in_the_stage_is_refused(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inventory is what is on disk, not the plan: a file no plan wrote (here beside
    the README, as a hidden file) stops the rename."""
    out, before = previous
    real = Path.write_bytes

    def stray(self: Path, data: Any) -> int:
        if self.name == "README.md":
            real(self.parent / ".stray", b"x")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", stray)
    with pytest.raises(AicrError, match="inventory does not match"):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


def test_the_swap_is_atomic_where_the_system_allows(tmp_path: Path) -> None:
    """On Linux the new bundle replaces the old one in one renameat2(RENAME_EXCHANGE)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from-a").write_text("a")
    (b / "from-b").write_text("b")
    if fileio.exchange_paths(a, b):
        assert siblings(a) == ["from-b"] and siblings(b) == ["from-a"]
    else:  # another OS or file system: the two-rename fallback is tested below
        assert siblings(a) == ["from-a"] and siblings(b) == ["from-b"]


def test_a_failed_swap_keeps_the_previous_bundle(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, before = previous

    def broken(a: Path, b: Path) -> bool:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fileio, "exchange_paths", broken)
    with pytest.raises(OSError):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


@pytest.mark.parametrize("failing_call", [1, 2])
def test_a_failed_rename_keeps_the_previous_bundle(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch, failing_call: int
) -> None:
    """Without an atomic swap, call 1 moves the old bundle aside and call 2 moves the new one
    in; either may fail."""
    out, before = previous
    real = os.replace
    calls = 0

    def flaky(src: Any, dst: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == failing_call:
            raise OSError(errno.EIO, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(fileio, "exchange_paths", lambda a, b: False)
    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


@pytest.mark.parametrize("atomic_swap", [True, False])
def test_an_interrupt_at_the_rename_keeps_the_previous_bundle(
    previous: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch, atomic_swap: bool
) -> None:
    out, before = previous
    real = os.replace

    def interrupted(src: Any, dst: Any) -> None:
        if str(src).endswith(".staging"):
            raise KeyboardInterrupt
        real(src, dst)

    def interrupted_swap(a: Path, b: Path) -> bool:
        raise KeyboardInterrupt

    if atomic_swap:
        monkeypatch.setattr(fileio, "exchange_paths", interrupted_swap)
    else:
        monkeypatch.setattr(fileio, "exchange_paths", lambda a, b: False)
        monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(plan_variant(2), out, force=True)
    _assert_intact(out, before)


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
def test_a_cli_run_stopped_between_staging_and_rename(tmp_path: Path, signal_name: str) -> None:
    """The real ``aicr-tui bundle`` process, stopped when its bundle is staged and verified.

    SIGINT: the run cleans up after itself (exit 130, nothing left). SIGKILL: no code runs
    after the kill, so the hidden staging directory stays, but the bundle at the target path
    is still the previous one, complete.
    """
    (tmp_path / "recipe.yaml").write_text(recipe_text())
    out = tmp_path / "out"
    write_bundle(plan_variant(1), out)
    before = image(out)
    args = ("bundle", "-r", "recipe.yaml", "-o", "out", "--force")
    proc = run_cli_dying_at_rename(
        signal_name,
        *args,
        f"--accelerated-node-toleration={KEYED}",
        "--set=gpu-operator:nodeStatusExporter.enabled=2",
        cwd=tmp_path,
    )
    assert image(out) == before
    left = [n for n in siblings(tmp_path) if n not in ("recipe.yaml", "out")]
    if signal_name == "SIGINT":
        assert proc.returncode == 130, proc.stderr
        assert proc.stderr.strip() == "aicr-tui: interrupted"
        assert left == []
    else:
        assert proc.returncode == -9
        assert all(n.startswith(".out.") and n.endswith(".staging") for n in left), left


def test_concurrent_writers_never_mix_files(tmp_path: Path) -> None:
    """Four threads replace one bundle directory at once, many times over: the result is
    always exactly one writer's complete bundle, and a writer that loses the race says so."""
    plans = [plan_variant(n) for n in range(4)]
    out = tmp_path / "bundle"
    for _ in range(5):
        barrier = threading.Barrier(len(plans))
        outcomes: list[str] = []

        def write(i: int, barrier: threading.Barrier = barrier, got: list[str] = outcomes) -> None:
            barrier.wait(10)
            try:
                write_bundle(plans[i], out, force=True)
                got.append("ok")
            except AicrError as err:  # only a lost race may fail, and it must say so
                got.append("conflict" if err.code is ErrorCode.CONFLICT else err.render())

        threads = [threading.Thread(target=write, args=(i,)) for i in range(len(plans))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(set(outcomes)) in (["ok"], ["conflict", "ok"]), outcomes
        assert len(outcomes) == len(plans)
        assert image(out) in [p.files for p in plans]
        assert siblings(tmp_path) == ["bundle"]


def test_the_losing_rename_is_a_conflict_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an atomic swap the old bundle is moved aside, then the new one in: force both
    interleavings of two writers deterministically (threads paused inside os.replace)."""
    out = tmp_path / "bundle"
    write_bundle(plan_variant(0), out)
    a_plan, b_plan = plan_variant(1), plan_variant(2)
    real = os.replace
    pauses: dict[tuple[str, str], tuple[threading.Event, threading.Event]] = {}
    role = threading.local()

    def scripted(src: Any, dst: Any) -> None:
        step = "aside" if Path(dst).name.endswith(".old") else "in"
        gate = pauses.get((getattr(role, "name", ""), step))
        if gate is not None:
            reached, go_on = gate
            reached.set()
            assert go_on.wait(30)
        real(src, dst)

    monkeypatch.setattr(os, "replace", scripted)
    monkeypatch.setattr(fileio, "exchange_paths", lambda a, b: False)  # the two-rename path

    def writer(name: str, plan: Any, outcome: dict[str, Any]) -> threading.Thread:
        def run() -> None:
            role.name = name
            try:
                write_bundle(plan, out, force=True)
                outcome[name] = "ok"
            except AicrError as err:
                outcome[name] = err

        return threading.Thread(target=run)

    def gate(name: str, step: str) -> tuple[threading.Event, threading.Event]:
        pauses[(name, step)] = (threading.Event(), threading.Event())
        return pauses[(name, step)]

    def paused(name: str, plan: Any, outcome: dict[str, Any], reached: threading.Event) -> Any:
        """Start ``name``'s write and wait until it stands at its pause."""
        thread = writer(name, plan, outcome)
        thread.start()
        assert reached.wait(30)
        return thread

    def resume(go: threading.Event, thread: threading.Thread) -> None:
        """Let a paused write go on, and wait for it to end."""
        go.set()
        thread.join(30)

    # 1. A has moved the old bundle aside and pauses; B finds the path free and commits;
    #    A's own rename then finds B's bundle there: A reports CONFLICT and cleans up.
    outcome: dict[str, Any] = {}
    a_reached, a_go = gate("A", "in")
    a = paused("A", a_plan, outcome, a_reached)
    b = writer("B", b_plan, outcome)
    b.start()
    b.join(30)
    resume(a_go, a)
    assert outcome["B"] == "ok"
    assert isinstance(outcome["A"], AicrError) and outcome["A"].code is ErrorCode.CONFLICT
    assert outcome["A"].exit_code == 2
    assert image(out) == b_plan.files
    assert siblings(tmp_path) == ["bundle"], "A's moved-aside bundle was left behind"

    # 2. B is about to move the bundle aside and pauses; A moves it aside first and
    #    commits; B's rename aside then finds nothing there: B reports CONFLICT.
    pauses.clear()
    outcome = {}
    b_reached, b_go = gate("B", "aside")
    a_in_reached, a_in_go = gate("A", "in")
    b = paused("B", b_plan, outcome, b_reached)
    a = paused("A", a_plan, outcome, a_in_reached)  # A moved the bundle aside; its own is next
    resume(b_go, b)
    resume(a_in_go, a)
    assert outcome["A"] == "ok"
    assert isinstance(outcome["B"], AicrError) and outcome["B"].code is ErrorCode.CONFLICT
    assert image(out) == a_plan.files
    assert siblings(tmp_path) == ["bundle"]
