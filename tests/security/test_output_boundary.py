"""Every OS error at the output boundary is one stderr line naming the path and the cause,
exit 2, never ``[INTERNAL]``; a FIFO whose reader does not come within 2 s is refused (never a hang); a
trailing slash means a directory.

Full and read-only disks are real where the kernel lets an unprivileged user namespace mount
a tiny tmpfs (``unshare -rm``): that mount stands in for a full or read-only data disk. Where
it cannot, those cases are reported as skipped (not measured) and the same errnos are
injected in-process instead (those tests always run).
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation import fileio
from aicr_tui.core.foundation.errors import AicrError
from tests.conftest import run_captured, run_cli
from tests.unit.test_nothing_lost_support import recipe_text

KEYED = "--accelerated-node-toleration=nvidia.com/gpu:NoSchedule"
RECIPE_ARGS = ("recipe", "--service", "aks", "--accelerator", "h100", "--intent", "training")
PASSED = "aicr_tui/recipes/samples/validation/aks-h100-training-passed.jsonl"


def _one_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert "INTERNAL" not in line and "Traceback" not in proc.stderr, line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("in") / "recipe.yaml"
    path.write_text(recipe_text())
    return path


# ------------------------------------------------------------------ devices and specials
def test_full_device_is_one_line_for_every_file_output(tmp_path: Path) -> None:
    _one_line(run_cli(*RECIPE_ARGS, "-o", "/dev/full"), '"/dev/full"', "ENOSPC")
    for flag in ("-o", "--junit"):
        # a replay narrates the run on stderr; its last line is the error
        proc = run_cli("validate", "--replay", PASSED, "--replay-speed", "0", flag, "/dev/full")
        assert proc.returncode == 2, proc.stderr[-500:]
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("aicr-tui: error: [INVALID_REQUEST] cannot write"), last
        assert '"/dev/full"' in last and "ENOSPC" in last and "Traceback" not in proc.stderr


def test_dev_null_still_works_and_is_no_bundle_directory(recipe_file: Path) -> None:
    proc = run_cli(*RECIPE_ARGS, "-o", "/dev/null")
    assert proc.returncode == 0, proc.stderr
    _one_line(
        run_cli("bundle", "-r", str(recipe_file), "-o", "/dev/null", KEYED),
        '"/dev/null"',
        "not a directory",
    )


def test_fifo_without_reader_is_refused_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    proc = run_cli(*RECIPE_ARGS, "-o", str(fifo), timeout=60)
    _one_line(proc, str(fifo), "FIFO with no reader")
    assert time.monotonic() - started < 30  # a bounded wait for a reader, never a hang


def test_fifo_with_a_reader_receives_the_output(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    opened = threading.Event()

    def read() -> None:
        # Open the read end first (non-blocking, so it opens with no writer yet), then
        # collect until the writer closes.
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        opened.set()
        chunks: list[bytes] = []
        try:
            for _ in range(6000):
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    threading.Event().wait(0.01)
                    continue
                if chunk:
                    chunks.append(chunk)
                elif chunks:
                    break
                else:
                    threading.Event().wait(0.01)
        finally:
            os.close(fd)
            got.append(b"".join(chunks))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(10)
    proc = run_cli(*RECIPE_ARGS, "-o", str(fifo), timeout=60)
    reader.join(60)
    assert proc.returncode == 0, proc.stderr
    assert got and got[0].startswith(b"kind: RecipeResult"), got[:1]


def test_socket_and_directory_are_not_output_files(tmp_path: Path) -> None:
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        _one_line(run_cli(*RECIPE_ARGS, "-o", str(sock_path)), "not a regular file")
    finally:
        sock.close()
    _one_line(run_cli(*RECIPE_ARGS, "-o", str(tmp_path)), "is a directory")


# --------------------------------------------------------------------- names and places
def test_trailing_slash_means_a_directory(tmp_path: Path, recipe_file: Path) -> None:
    proc = run_cli(*RECIPE_ARGS, "-o", "out/", cwd=tmp_path)
    _one_line(proc, "out/", "directory")
    assert not (tmp_path / "out").exists(), "a file named out was created"
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", "out/", KEYED, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "deploy.sh").is_file()


def test_name_too_long(tmp_path: Path, recipe_file: Path) -> None:
    long = "x" * 300
    _one_line(run_cli(*RECIPE_ARGS, "-o", long, cwd=tmp_path), "ENAMETOOLONG")
    _one_line(
        run_cli("bundle", "-r", str(recipe_file), "-o", long, KEYED, cwd=tmp_path),
        "ENAMETOOLONG",
    )
    assert os.listdir(tmp_path) == []


def test_under_proc(recipe_file: Path) -> None:
    _one_line(run_cli(*RECIPE_ARGS, "-o", "/proc/aicr-tui-test"), "/proc/aicr-tui-test")
    _one_line(
        run_cli("bundle", "-r", str(recipe_file), "-o", "/proc/aicr-tui-test", KEYED),
        "/proc/aicr-tui-test",
    )


@pytest.mark.parametrize("target", [".", "..", "sub/..", "./"])
def test_dot_and_dotdot_with_force(tmp_path: Path, recipe_file: Path, target: str) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "keep.txt").write_text("mine")
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", target, "--force", KEYED, cwd=work)
    _one_line(proc, f'"{target.rstrip("/")}"', 'not "."')
    assert (work / "keep.txt").read_text() == "mine"
    assert sorted(os.listdir(work)) == ["keep.txt", "sub"]
    assert sorted(os.listdir(tmp_path)) == ["work"]


# --------------------------------------------------------- full / read-only / mount point
def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = run_captured(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt && echo ok"],
        timeout=30,
    )
    return probe.stdout.strip() == "ok"


MOUNT = _can_mount()
needs_mount = pytest.mark.skipif(
    not MOUNT, reason="not measured: this kernel/user cannot mount a tmpfs in a namespace"
)


def _in_namespace(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (sh) in a private user+mount namespace; ``$CLI`` is the real CLI."""
    cli = shutil.which("aicr-tui", path=str(Path(sys.executable).parent))
    env = dict(os.environ, CLI=cli or "", NO_COLOR="1", TERM="dumb")
    return run_captured(["unshare", "-rm", "sh", "-c", script], cwd=tmp_path, env=env)


def _cli(args: str) -> str:
    """A script line running the CLI with ``args`` and reporting its exit code on stderr."""
    return f'"$CLI" {args}; echo "rc=$?" >&2\n'


def _on_tmpfs(tmp_path: Path, mount: str, options: str, script: str) -> tuple[list[str], str]:
    """Run ``script`` with a fresh tmpfs (``options``) on ``mount``; its stderr lines and text."""
    (tmp_path / mount).mkdir()
    proc = _in_namespace(
        f"mount -t tmpfs -o {options} tmpfs {mount} || exit 99\n" + script, tmp_path
    )
    return proc.stderr.strip().splitlines(), proc.stderr


RECIPE_TO = "recipe --service aks --accelerator h100 --intent training -o "


@needs_mount
def test_full_disk_bundle_and_recipe(tmp_path: Path, recipe_file: Path) -> None:
    lines, stderr = _on_tmpfs(
        tmp_path,
        "disk",
        "size=32k",
        _cli(f"bundle -r {recipe_file} -o disk/out {KEYED}")
        + "dd if=/dev/zero of=disk/fill bs=1k 2>/dev/null\n"  # now nothing fits
        + _cli(RECIPE_TO + "disk/r.yaml")
        + 'echo "left=$(ls -A disk | tr "\\n" " ")" >&2\n',
    )
    assert lines[1] == "rc=2" and lines[3] == "rc=2", stderr
    for line in (lines[0], lines[2]):
        assert "disk/" in line and "ENOSPC" in line and "INTERNAL" not in line, line
    assert lines[4].split() == ["left=fill"], "staging or temporary files were left behind"


@needs_mount
def test_read_only_disk(tmp_path: Path, recipe_file: Path) -> None:
    lines, stderr = _on_tmpfs(
        tmp_path,
        "ro",
        "ro,size=64k",
        _cli(f"bundle -r {recipe_file} -o ro/out {KEYED}") + _cli(RECIPE_TO + "ro/r.yaml"),
    )
    assert lines[1] == "rc=2" and lines[3] == "rc=2", stderr
    assert all("EROFS" in ln and "read-only" in ln for ln in (lines[0], lines[2])), stderr


@needs_mount
def test_mount_point_is_busy_not_internal(tmp_path: Path, recipe_file: Path) -> None:
    lines, stderr = _on_tmpfs(
        tmp_path,
        "mnt",
        "size=1m",
        "echo keep > mnt/keep.txt\n"
        + _cli(f"bundle -r {recipe_file} -o mnt --force {KEYED}")
        + "rm mnt/keep.txt\n"
        + _cli(f"bundle -r {recipe_file} -o mnt {KEYED}")
        + 'echo "left=$(ls -A . | tr "\\n" " ")" >&2\n',
    )
    assert lines[1] == "rc=2" and "mount point" in lines[0], stderr
    assert lines[3] == "rc=2" and '"mnt"' in lines[2] and "INTERNAL" not in lines[2], stderr
    assert lines[4].split() == ["left=mnt"], stderr


# ------------------------------------------------------------------- injected errnos
INJECTED = [
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EROFS,
    errno.EACCES,
    errno.EIO,
    errno.EBUSY,
    errno.ENAMETOOLONG,
]


@pytest.mark.parametrize("code", INJECTED)
def test_injected_errno_in_file_write_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise OSError(code, os.strerror(code))

    target = tmp_path / "r.yaml"
    for where in ("fsync", "replace", "mkstemp"):
        with monkeypatch.context() as m:
            m.setattr(os if where != "mkstemp" else fileio.tempfile, where, broken)
            with pytest.raises(AicrError) as info:
                fileio.atomic_write_text(target, "x: 1\n", what="--output file")
        line = info.value.render()
        assert info.value.exit_code == 2 and str(target) in line, line
        assert errno.errorcode[code] in line and "\n" not in line
        assert isinstance(info.value, OSError) and info.value.errno == code
        assert str(info.value) == line  # shown the same wherever it is printed
        assert os.listdir(tmp_path) == [], f"{where}: a temporary file was left behind"


@pytest.mark.parametrize("code", INJECTED)
def test_injected_errno_in_bundle_write_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    from aicr_tui.core.bundler import write_bundle
    from tests.unit.test_nothing_lost_support import plan_variant

    plan = plan_variant(1)
    real = Path.write_bytes

    def broken(self: Path, data: Any) -> int:
        if self.name == "values.yaml":
            raise OSError(code, os.strerror(code))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", broken)
    with pytest.raises(AicrError) as info:
        write_bundle(plan, tmp_path / "out")
    line = info.value.render()
    assert info.value.exit_code == 2 and '"' + str(tmp_path / "out") + '"' in line, line
    assert errno.errorcode[code] in line
    assert os.listdir(tmp_path) == []


def test_stdout_on_a_full_device_is_one_line() -> None:
    from tests.conftest import _cli_path

    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*_cli_path(), *RECIPE_ARGS],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
            env=dict(os.environ, NO_COLOR="1"),
        )
    _one_line(proc, "standard output", "ENOSPC")


def test_recording_write_errors_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aicr_tui.core.validation.recording import Recorder, load_recording

    event = load_recording(PASSED)[0]
    rec = Recorder(tmp_path / "run.jsonl")

    def full(*_: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rec._fh, "write", full)
    with pytest.raises(AicrError) as info:
        rec(event)
    assert "run.jsonl" in info.value.render() and "ENOSPC" in info.value.render()
    rec.abort()
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()

    def no_temp(*_: Any, **__: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(fileio.tempfile, "mkstemp", no_temp)
    with pytest.raises(AicrError, match=r"--record file .*EROFS"):
        Recorder(tmp_path / "run.jsonl")


def test_descriptor_paths_are_written_into_never_renamed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o /dev/stdout`` with stdout redirected to a file used to stat as a regular file,
    so the write staged a temporary file in /dev and renamed it over the /dev/stdout link.
    Guarded here: any rename or temporary file under /dev fails the test before it happens."""
    real_replace, real_mkstemp = os.replace, fileio.tempfile.mkstemp

    def guarded_replace(src: Any, dst: Any) -> None:
        assert not os.fspath(dst).startswith("/dev/"), dst
        real_replace(src, dst)

    def guarded_mkstemp(*a: Any, **k: Any) -> Any:
        assert not str(k.get("dir", "")).startswith("/dev"), k
        return real_mkstemp(*a, **k)

    monkeypatch.setattr(os, "replace", guarded_replace)
    monkeypatch.setattr(fileio.tempfile, "mkstemp", guarded_mkstemp)
    sink = tmp_path / "sink.txt"
    with open(sink, "wb") as handle:
        fd = handle.fileno()
        fileio.atomic_write_text(f"/dev/fd/{fd}", "one\n")
        fileio.atomic_write_text(f"/proc/self/fd/{fd}", "two\n")
    assert sink.read_text() == "one\ntwo\n"
    assert os.path.islink("/dev/stdout")


def test_a_symlinked_output_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    """Issue 25: writing through the link overwrote its target (a planted link to a system
    file). Every kind of link and output: tests/security/test_outputs_links.py."""
    target = tmp_path / "real.yaml"
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    with pytest.raises(AicrError, match="is a symbolic link"):
        fileio.atomic_write_text(link, "new\n")
    assert link.is_symlink() and target.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["link.yaml", "real.yaml"]
