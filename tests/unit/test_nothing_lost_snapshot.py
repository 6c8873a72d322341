"""Nothing lost when a snapshot write fails: an I/O error, an interrupt or a kill at the
rename leaves the previous snapshot byte-for-byte intact and no partial file at the target;
a refused run does not touch it; concurrent writers to one path never interleave."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.cli import main
from aicr_tui.core.documents.snapshot import parse_snapshot
from aicr_tui.core.foundation.fileio import atomic_write_text
from tests.conftest import SAMPLES, _cli_path
from tests.unit.test_nothing_lost_support import run_cli_dying_at_rename, siblings

DUMPS = SAMPLES / "captures"
PREVIOUS = "kind: Snapshot\napiVersion: aicr.run/v1\n# the previous snapshot, kept by hand\n"


def _snapshot_args(dump: str, out: str = "snap.yaml") -> list[str]:
    flag = "--aks-gpu-pools" if dump.startswith("aks") else "--oke-addons"
    return ["snapshot", "--no-cluster", flag, str(DUMPS / dump), "-o", out]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "snap.yaml").write_text(PREVIOUS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _assert_intact(workdir: Path) -> None:
    assert (workdir / "snap.yaml").read_text() == PREVIOUS
    assert siblings(workdir) == ["snap.yaml"], "a temporary file was left behind"


@pytest.mark.parametrize("failing", ["fsync", "replace", "chmod"])
def test_an_io_error_while_writing_keeps_the_previous_snapshot(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failing: str
) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, failing, broken)
    code = main(_snapshot_args("aks-pools-mixed.json"))
    err = capsys.readouterr().err
    assert code != 0 and len(err.splitlines()) == 1, err
    _assert_intact(workdir)


def test_a_refused_run_does_not_touch_the_previous_snapshot(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "bad.json").write_text('[{"name": "gpu", "vmSize": 7}]')
    code = main(["snapshot", "--no-cluster", "--aks-gpu-pools", "bad.json", "-o", "snap.yaml"])
    assert code == 2 and len(capsys.readouterr().err.splitlines()) == 1
    (workdir / "bad.json").unlink()
    _assert_intact(workdir)


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
def test_a_cli_run_stopped_at_the_rename(workdir: Path, signal_name: str) -> None:
    """The real process, stopped once the new snapshot is fully written to its temporary
    sibling. SIGINT cleans up (exit 130); after SIGKILL only a hidden temporary file stays."""
    proc = run_cli_dying_at_rename(
        signal_name, *_snapshot_args("aks-pools-mixed.json"), cwd=workdir
    )
    assert (workdir / "snap.yaml").read_text() == PREVIOUS
    left = [n for n in siblings(workdir) if n != "snap.yaml"]
    if signal_name == "SIGINT":
        assert proc.returncode == 130, proc.stderr
        assert left == []
    else:
        assert proc.returncode == -9
        assert len(left) == 1 and re.fullmatch(r"\.snap\.yaml\..+\.tmp", left[0]), left


_TIMESTAMP = re.compile(r"^(\s*timestamp:).*$", re.MULTILINE)


def _normalised(text: str) -> str:
    return _TIMESTAMP.sub(r"\1 T", text)


def test_concurrent_cli_runs_leave_exactly_one_complete_snapshot(tmp_path: Path) -> None:
    """Three ``aicr-tui snapshot`` processes with different dumps write one path at once."""
    dumps = ["aks-pools-mixed.json", "aks-pools-managed.json", "oke-addons-active.json"]
    expected = []
    for i, dump in enumerate(dumps):
        solo = subprocess.run(
            [*_cli_path(), *_snapshot_args(dump, f"solo-{i}.yaml")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert solo.returncode == 0
        expected.append(_normalised((tmp_path / f"solo-{i}.yaml").read_text()))
        (tmp_path / f"solo-{i}.yaml").unlink()
    assert len(set(expected)) == len(dumps)
    procs = [
        subprocess.Popen(
            [*_cli_path(), *_snapshot_args(dump, "shared.yaml")],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for dump in dumps
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    final = (tmp_path / "shared.yaml").read_text()
    assert _normalised(final) in expected
    parse_snapshot(final, "shared.yaml")
    assert siblings(tmp_path) == ["shared.yaml"]


def test_concurrent_threads_never_interleave_a_file(tmp_path: Path) -> None:
    """Eight writers, each a distinct 512 KiB document, replace one file many times over;
    every read in between and the final file are exactly one writer's whole document."""
    target = tmp_path / "out.yaml"
    payloads = [f"# writer {i}\n" + (chr(ord("a") + i) * 80 + "\n") * 6500 for i in range(8)]
    atomic_write_text(target, payloads[0])
    stop = threading.Event()
    seen: list[str] = []
    failures: list[BaseException] = []

    def writer(i: int) -> None:
        try:
            for _ in range(6):
                atomic_write_text(target, payloads[i])
        except BaseException as exc:  # reported below; a thread cannot fail the test itself
            failures.append(exc)

    def reader() -> None:
        while not stop.is_set():
            seen.append(target.read_text())

    watcher = threading.Thread(target=reader)
    watcher.start()
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(payloads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stop.set()
    watcher.join(10)
    assert failures == []
    assert seen and all(text in payloads for text in seen)
    assert target.read_text() in payloads
    assert siblings(tmp_path) == ["out.yaml"]


def test_concurrent_readers_never_corrupt_each_other() -> None:
    """Wizard workers and the dashboard read documents on threads at the same time: four
    threads parsing the sample snapshots and catalog files all get exactly what one thread
    gets (shared YAML readers once produced spurious "not valid YAML" errors)."""
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    texts = [p.read_text() for p in sorted((SAMPLES / "snapshots").glob("*.yaml"))]
    texts += [p.read_text() for p in sorted((SAMPLES.parent / "overlays").glob("*.yaml"))[:12]]
    expected = [load_yaml_plain(t, "solo") for t in texts]
    snapshots = [parse_snapshot(t, "solo").to_document() for t in texts[:3]]
    failures: list[str] = []

    def reader() -> None:
        for _ in range(2):
            for text, want in zip(texts, expected, strict=True):
                try:
                    if load_yaml_plain(text, "threaded") != want:
                        failures.append("a different document")
                except Exception as exc:  # collected: a thread cannot fail the test
                    failures.append(f"{type(exc).__name__}: {exc}")
            for text, want in zip(texts[:3], snapshots, strict=True):
                if parse_snapshot(text, "threaded").to_document() != want:
                    failures.append("a different snapshot")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
