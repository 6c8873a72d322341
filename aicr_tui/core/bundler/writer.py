"""Writing a bundle plan to disk: staged beside ``-o``, checked, then renamed into place.

Every file lands inside the staged directory (a plan's path never escapes ``-o``), with its
mode (scripts executable, ``checksums.txt`` owner-only); the staged inventory is re-read
against ``checksums.txt`` before the rename, so a bundle on disk is whole or absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from aicr_tui.core.bundler.model import BlockingError, BundlePlan, BundleWriteResult
from aicr_tui.core.foundation import names
from aicr_tui.core.foundation.digest import sha256_hex
from aicr_tui.core.foundation.errors import AicrError, internal, invalid

EXECUTABLE_MODE = 0o755
FILE_MODE = 0o644
CHECKSUMS_MODE = 0o600


def write_bundle(
    plan: BundlePlan, out_dir: str | Path, *, force: bool = False
) -> BundleWriteResult:
    """Write a plan through a staged sibling directory renamed into place.

    A plan with blocking errors is refused and nothing is written; an existing non-empty
    ``out_dir`` is only replaced with ``force``.
    """
    # Import cost: the staging machinery (tempfile, shutil) loads only to write.
    from aicr_tui.core.foundation.fileio import staged_directory

    if plan.errors:
        raise refusal(plan.errors)
    target = Path(out_dir)
    with staged_directory(
        target, force=force, on_before_commit=lambda d: _verify(plan, d)
    ) as stage:
        root = os.path.realpath(stage)
        folders: set[Path] = set()
        for rel, data in plan.files.items():
            path = _inside(stage, root, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if rel in plan.executables:
                mode = EXECUTABLE_MODE
            elif rel == "checksums.txt":
                mode = CHECKSUMS_MODE
            else:
                mode = FILE_MODE
            os.chmod(path, mode)
            folders.add(path.parent)
        # the folders holding the files just written (the staged directory is new and
        # only this run's): the inventory itself is re-read from disk by _verify
        for d in sorted(folders):
            os.chmod(d, 0o755)
    return BundleWriteResult(out_dir=target, files=list(plan.files), warnings=list(plan.warnings))


def refusal(errors: Sequence[BlockingError], *, explained: bool = False) -> AicrError:
    """The one error line for a refused plan: every blocking check named, the first one's
    message in full, the rest behind ``--explain`` (``explained``: they were listed)."""
    first = errors[0]
    if len(errors) == 1:
        return invalid(f"bundle refused by {first.check}", first.message)
    names = ", ".join(dict.fromkeys(e.check for e in errors))
    where = "listed above" if explained else "--explain lists each"
    return invalid(
        f"bundle refused by {len(errors)} blocking checks ({names}); first, {first.check}",
        first.message,
        remedy=f"fix every blocking check ({where})",
    )


def _inside(stage: Path, root: str, rel: str) -> Path:
    """``stage / rel``, refused unless it resolves inside the staged directory: whatever a
    plan holds, nothing is written outside ``-o``."""
    parts = rel.split("/")
    bad = not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts)
    path = stage / rel
    if bad or os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise invalid(
            f"bundle file {names.shown(rel)} would be written outside the output directory"
        )
    return path


def _files_under(top: Path) -> Iterator[str]:
    """Every file below ``top`` (a symlink counts as what it points to; linked folders are
    not entered), as a ``/``-separated relative path: ``Path.rglob("*")`` filtered by
    ``is_file()``, without pathlib's per-entry objects and pattern matching."""
    for folder, _, entries in os.walk(top):
        for name in entries:
            full = os.path.join(folder, name)
            if os.path.isfile(full):
                yield os.path.relpath(full, top).replace(os.sep, "/")


def _verify(plan: BundlePlan, stage: Path) -> None:
    """Re-read the staged inventory against the checksums before it is renamed into place."""
    listed = {}
    for line in plan.files["checksums.txt"].decode().splitlines():
        digest, rel = line.split("  ", 1)
        listed[rel] = digest
    on_disk = sorted(_files_under(stage))
    expected = sorted([*listed, "checksums.txt"])
    if on_disk != expected:
        raise internal("bundle inventory does not match checksums.txt")
    for rel, digest in listed.items():
        if sha256_hex((stage / rel).read_bytes()) != digest:
            raise internal(f"bundle file {rel} does not match its checksum")
