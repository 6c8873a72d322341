"""No output is ever written through a symbolic link planted at its path (issue 25, family 1).

Policy (``aicr_tui/core/foundation/fileio.py``, module docstring): when the *last* component of an
output path is a symbolic link — to a file, to a directory, to a device, to another link,
or dangling — the command is refused with one line naming the path, exit 2, and nothing
is written: neither the link (which may be the user's own) nor whatever it points to is
touched. Links among the *parent* directories are the user's own layout and are followed.
``-``, ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N`` are written into the descriptor
the process already holds.

Before the fix, ``-o out`` with ``out -> /elsewhere/file`` overwrote that file, and a
dangling ``out -> /elsewhere/new`` created it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from aicr_tui.core.foundation import fileio
from aicr_tui.core.foundation.errors import AicrError
from tests.conftest import SAMPLES, _cli_path, run_cli
from tests.unit.test_nothing_lost_support import recipe_text

KEYED = "--accelerated-node-toleration=nvidia.com/gpu:NoSchedule"
RECIPE_ARGS = ("recipe", "--service", "aks", "--accelerator", "h100", "--intent", "training")
PASSED = str(SAMPLES / "validation" / "aks-h100-training-passed.jsonl")
VAL_RECIPE = str(SAMPLES / "validation" / "aks-h100-training.recipe.yaml")
SNAP_OK = str(SAMPLES / "snapshots" / "aks-h100-install.yaml")
AKS_INSTALL = str(SAMPLES / "captures" / "aks-pools-install.json")
SECRET = b"root:x:0:0:do not touch\n"

# every single-file output of the CLI: (id, argv before the path, argv after the path)
OUTPUTS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("recipe -o", (*RECIPE_ARGS, "-o"), ()),
    ("snapshot -o", ("snapshot", "--no-cluster", "--aks-gpu-pools", AKS_INSTALL, "-o"), ()),
    ("replay -o", ("validate", "--replay", PASSED, "--replay-speed", "0", "-o"), ()),
    ("replay --junit", ("validate", "--replay", PASSED, "--replay-speed", "0", "--junit"), ()),
    (
        "validate --record",
        ("validate", "-r", VAL_RECIPE, "-s", SNAP_OK, "--no-cluster", "--record"),
        ("-o", os.devnull),
    ),
]


class Planted:
    """A hostile link at ``link`` and what it points at, with a check that nothing moved."""

    def __init__(self, link: Path, elsewhere: Path) -> None:
        self.link = link
        self.elsewhere = elsewhere
        self.before = self._state()

    def _state(self) -> tuple[object, ...]:
        files = {
            str(p): p.read_bytes() if p.is_file() and not p.is_symlink() else None
            for p in sorted(self.elsewhere.rglob("*"))
        }
        return (os.readlink(self.link), files, sorted(os.listdir(self.link.parent)))

    def assert_untouched(self) -> None:
        assert self.link.is_symlink(), "the link was replaced"
        assert self._state() == self.before, "something was written through or beside the link"


def _to_file(work: Path, elsewhere: Path) -> Planted:
    (elsewhere / "passwd").write_bytes(SECRET)
    (work / "out").symlink_to(elsewhere / "passwd")
    return Planted(work / "out", elsewhere)


def _dangling(work: Path, elsewhere: Path) -> Planted:
    (work / "out").symlink_to(elsewhere / "cron.d-evil")
    return Planted(work / "out", elsewhere)


def _to_dir(work: Path, elsewhere: Path) -> Planted:
    (elsewhere / "etc").mkdir()
    (work / "out").symlink_to(elsewhere / "etc")
    return Planted(work / "out", elsewhere)


def _chain(work: Path, elsewhere: Path) -> Planted:
    (elsewhere / "passwd").write_bytes(SECRET)
    (elsewhere / "hop").symlink_to(elsewhere / "passwd")
    (work / "out").symlink_to(elsewhere / "hop")
    return Planted(work / "out", elsewhere)


def _relative(work: Path, elsewhere: Path) -> Planted:
    (elsewhere / "passwd").write_bytes(SECRET)
    (work / "out").symlink_to(os.path.relpath(elsewhere / "passwd", work))
    return Planted(work / "out", elsewhere)


def _to_device(work: Path, elsewhere: Path) -> Planted:
    (work / "out").symlink_to(os.devnull)
    return Planted(work / "out", elsewhere)


def _loop(work: Path, elsewhere: Path) -> Planted:
    (work / "out").symlink_to(work / "out")
    return Planted(work / "out", elsewhere)


LINKS: dict[str, Callable[[Path, Path], Planted]] = {
    "to a file elsewhere": _to_file,
    "dangling": _dangling,
    "to a directory": _to_dir,
    "chain of links": _chain,
    "relative": _relative,
    "to a device": _to_device,
    "to itself": _loop,
}


def _refused_one_line(proc: subprocess.CompletedProcess[str], link: Path) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-600:])
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("aicr-tui: error: "), proc.stderr[-600:]
    assert "symbolic link" in last and str(link) in last, last
    assert "Traceback" not in proc.stderr and "INTERNAL" not in proc.stderr, proc.stderr


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    return work, elsewhere


@pytest.mark.parametrize("kind", list(LINKS))
@pytest.mark.parametrize(("flag", "before", "after"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_an_output_that_is_a_link_is_refused_and_nothing_moves(
    places: tuple[Path, Path], flag: str, before: tuple[str, ...], after: tuple[str, ...], kind: str
) -> None:
    work, elsewhere = places
    planted = LINKS[kind](work, elsewhere)
    proc = run_cli(*before, str(planted.link), *after, cwd=work)
    _refused_one_line(proc, planted.link)
    planted.assert_untouched()


def test_a_link_is_refused_before_a_live_validation_runs(places: tuple[Path, Path]) -> None:
    """``--record`` through a link fails at the start, not after the run."""
    work, elsewhere = places
    planted = _to_file(work, elsewhere)
    args = ("validate", "-r", VAL_RECIPE, "-s", SNAP_OK, "--no-cluster")
    proc = run_cli(*args, "--record", str(planted.link), cwd=work)
    _refused_one_line(proc, planted.link)
    assert proc.stderr.count("\n") == 1, "the run started before the refusal"
    planted.assert_untouched()


def test_each_output_of_a_set_is_checked_before_any_lands(places: tuple[Path, Path]) -> None:
    """A good ``-o`` beside a planted ``--junit`` link: nothing at all is written."""
    work, elsewhere = places
    planted = _to_file(work, elsewhere)
    good = work / "ctrf.json"
    proc = run_cli(
        "validate", "--replay", PASSED, "--replay-speed", "0", "-o", str(good),
        "--junit", str(planted.link), cwd=work,
    )  # fmt: skip
    _refused_one_line(proc, planted.link)
    assert not good.exists()
    planted.assert_untouched()


# --------------------------------------------------------------- in-process file writers
WRITERS: dict[str, Callable[[Path], None]] = {
    "atomic_write_text": lambda p: fileio.atomic_write_text(p, "new\n"),
    "atomic_write_bytes": lambda p: fileio.atomic_write_bytes(p, b"new\n"),
}


def _output_set_add(p: Path) -> None:
    with fileio.OutputSet() as out:
        out.add(p, b"new\n", what="saved provider dump")
        out.commit()


def _output_set_staged(p: Path) -> None:
    tmp = p.parent / ".staged.tmp"
    tmp.write_bytes(b"new\n")
    with fileio.OutputSet() as out:
        try:
            out.add_staged(p, str(tmp), what="--record file")
        finally:
            assert not tmp.exists(), "the staged file was left behind"
        out.commit()


def _verify_report(p: Path) -> None:
    from aicr_tui.core.services.bundle import write_verify_report

    class _Report:
        def to_json(self) -> dict[str, str]:
            return {"new": "report"}

    write_verify_report(_Report(), p)  # type: ignore[arg-type]


def _recorder(p: Path) -> None:
    from aicr_tui.core.validation.recording import Recorder

    Recorder(p).commit()


WRITERS.update(
    {
        "OutputSet.add": _output_set_add,
        "OutputSet.add_staged": _output_set_staged,
        "verify --report": _verify_report,
        "Recorder": _recorder,
    }
)


@pytest.mark.parametrize("kind", list(LINKS))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_refuses_a_link(places: tuple[Path, Path], writer: str, kind: str) -> None:
    work, elsewhere = places
    planted = LINKS[kind](work, elsewhere)
    with pytest.raises(AicrError) as info:
        WRITERS[writer](planted.link)
    assert info.value.exit_code == 2
    assert "symbolic link" in info.value.render() and str(planted.link) in info.value.render()
    planted.assert_untouched()


def test_a_link_planted_after_the_check_is_replaced_never_followed(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the link appears between the check and the commit. The rename replaces the
    link itself (rename(2) never follows the last component); the target keeps its bytes."""
    work, elsewhere = places
    target = elsewhere / "passwd"
    target.write_bytes(SECRET)
    out = work / "out"
    with fileio.OutputSet() as outputs:
        outputs.add(out, b"new\n")
        out.symlink_to(target)
        outputs.commit()
    assert not out.is_symlink() and out.read_bytes() == b"new\n"
    assert target.read_bytes() == SECRET


def test_links_among_parent_directories_are_the_users_own_layout(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    fileio.atomic_write_text(tmp_path / "via" / "out.yaml", "ok\n")
    assert (real / "out.yaml").read_text() == "ok\n"
    proc = run_cli(*RECIPE_ARGS, "-o", str(tmp_path / "via" / "r.yaml"))
    assert proc.returncode == 0, proc.stderr
    assert (real / "r.yaml").is_file() and not (real / "r.yaml").is_symlink()


# ------------------------------------------------------- descriptors keep working
def test_stdout_stderr_and_descriptor_paths_write_through_the_open_descriptor(
    tmp_path: Path,
) -> None:
    sink = tmp_path / "fd3.yaml"
    for target in ("-", "/dev/stdout"):
        proc = run_cli(*RECIPE_ARGS, "-o", target)
        assert proc.returncode == 0, proc.stderr
        assert "kind: RecipeResult" in proc.stdout
    proc = run_cli(*RECIPE_ARGS, "-o", "/dev/stderr")
    assert proc.returncode == 0 and "kind: RecipeResult" in proc.stderr, proc.stderr[-300:]
    with open(sink, "wb") as handle:
        fd = handle.fileno()
        env = dict(os.environ, NO_COLOR="1", TERM="dumb")
        done = subprocess.run(
            [*_cli_path(), *RECIPE_ARGS, "-o", f"/dev/fd/{fd}"],
            pass_fds=(fd,), capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kind: RecipeResult" in sink.read_text()
    assert os.path.islink("/dev/stdout")  # still the system's link, never renamed over
    proc = run_cli(
        "validate", "--replay", PASSED, "--replay-speed", "0", "--junit", "/dev/stdout",
        "-o", os.devnull,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-300:]
    assert proc.stdout.startswith("<?xml")


# ------------------------------------------------------------------ directory outputs
@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("in") / "recipe.yaml"
    path.write_text(recipe_text())
    return path


@pytest.mark.parametrize("kind", ["to a directory", "dangling", "to a file elsewhere"])
@pytest.mark.parametrize("force", [False, True])
def test_bundle_output_directory_that_is_a_link_is_refused(
    places: tuple[Path, Path], recipe_file: Path, kind: str, force: bool
) -> None:
    work, elsewhere = places
    planted = LINKS[kind](work, elsewhere)
    extra = ("--force",) if force else ()
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(planted.link), KEYED, *extra)
    _refused_one_line(proc, planted.link)
    planted.assert_untouched()


def test_force_replacing_a_bundle_with_planted_links_writes_nothing_outside(
    places: tuple[Path, Path], recipe_file: Path
) -> None:
    """Links planted inside an existing output directory (over a file the bundle writes, over
    a folder, dangling) are removed with the old directory, never followed."""
    work, elsewhere = places
    out = work / "bundle"
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(out), KEYED)
    assert proc.returncode == 0, proc.stderr
    (elsewhere / "passwd").write_bytes(SECRET)
    (elsewhere / "etc").mkdir()
    (elsewhere / "etc" / "keep").write_bytes(SECRET)
    (out / "deploy.sh").unlink()
    (out / "deploy.sh").symlink_to(elsewhere / "passwd")
    folder = next(p for p in sorted(out.iterdir()) if p.is_dir())
    moved = work / "moved-aside"
    folder.rename(moved)
    folder.symlink_to(elsewhere / "etc")
    (out / "README.md").unlink()
    (out / "README.md").symlink_to(elsewhere / "created-by-bundle")
    before = {str(p): p.read_bytes() for p in elsewhere.rglob("*") if p.is_file()}
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(out), KEYED, "--force")
    assert proc.returncode == 0, proc.stderr
    assert {str(p): p.read_bytes() for p in elsewhere.rglob("*") if p.is_file()} == before
    assert not (elsewhere / "created-by-bundle").exists()
    assert sorted(p.name for p in (elsewhere / "etc").iterdir()) == ["keep"]
    links = [p for p in out.rglob("*") if p.is_symlink()]
    assert links == [], links
    assert (out / "deploy.sh").read_bytes() != SECRET
