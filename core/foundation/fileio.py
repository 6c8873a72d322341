"""Bounded reads and atomic writes.

Provider dumps are read the way upstream reads them: no symlinks, regular files only, a
1 MiB cap checked on stat and again while streaming, 64 KiB chunks, a read deadline.
Every output is written to a temporary sibling and renamed into place, so a failure
leaves the previous file (or directory) intact and no partial output behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from core.foundation.errors import AicrError, ErrorCode, invalid, timeout

MAX_PROVIDER_DUMP_BYTES = 1_048_576
MAX_DOCUMENT_BYTES = 10 * 1_048_576
CHUNK_BYTES = 64 * 1024


def file_read_timeout() -> float:
    """Seconds allowed for one bounded read (upstream value unconfirmed; configurable)."""
    raw = os.environ.get("AICR_FILE_READ_TIMEOUT", "30")
    try:
        value = float(raw)
    except ValueError:
        return 30.0
    return value if value > 0 else 30.0


def read_bounded(
    path: str | os.PathLike[str],
    description: str,
    *,
    cap: int = MAX_PROVIDER_DUMP_BYTES,
    follow_symlinks: bool = False,
    cancel: threading.Event | None = None,
    deadline_s: float | None = None,
) -> bytes:
    """Read a whole file with the upstream provider-dump rules.

    ``description`` names the input in messages ("AKS GPU pools", "OKE cluster add-ons").
    """
    if cancel is not None and cancel.is_set():
        raise timeout(f"{description} file read canceled")
    p = os.path.normpath(os.fspath(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if os.path.islink(p):
            raise invalid(f'{description} path "{p}" is a symlink, not a regular file')
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(p):
            raise invalid(f'{description} path "{p}" is a symlink, not a regular file') from exc
        raise invalid(f'failed to open {description} file "{p}"', exc.strerror or str(exc)) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise invalid(f'{description} path "{p}" is not a regular file')
        if info.st_size > cap:
            raise invalid(f'{description} file "{p}" exceeds {cap} bytes')
        started = time.monotonic()
        limit = deadline_s if deadline_s is not None else file_read_timeout()
        chunks: list[bytes] = []
        total = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise timeout(f"{description} file read canceled")
            if time.monotonic() - started > limit:
                raise timeout(f'{description} file "{p}" read exceeded {limit:g}s')
            try:
                chunk = os.read(fd, CHUNK_BYTES)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError as exc:
                raise invalid(
                    f'failed to read {description} file "{p}"', exc.strerror or str(exc)
                ) from exc
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                raise invalid(f'{description} file "{p}" exceeds {cap} bytes')
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_dump(
    path: str | os.PathLike[str],
    description: str,
    command: str,
    *,
    cancel: threading.Event | None = None,
) -> bytes:
    """:func:`read_bounded` for a provider dump; every error also names ``command``, the
    command whose output the file should hold, so the user knows what to re-run."""
    try:
        return read_bounded(path, description, cancel=cancel)
    except AicrError as exc:
        raise AicrError(
            exc.code, exc.message, exc.cause, remedy=f"expected the output of `{command}`"
        ) from exc


def read_document(
    path: str | os.PathLike[str], description: str, *, cap: int = MAX_DOCUMENT_BYTES
) -> str:
    """Read a YAML/JSON document we accept from users (recipes, snapshots, catalogs).

    Symlinks are followed (users keep recipes in symlinked repos), but the target must be a
    regular file under the cap and valid UTF-8.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        raise invalid(f'{description} file "{p}" does not exist')
    data = read_bounded(p, description, cap=cap, follow_symlinks=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid(f'{description} file "{p}" is not valid UTF-8 text', str(exc)) from exc


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary sibling and an atomic rename."""
    target = Path(path)
    if target.is_dir():
        raise invalid(f'output path "{target}" is a directory, expected a file')
    try:
        existing = os.stat(target)
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        # A device or FIFO (``-o /dev/null``, ``-o /dev/stdout``): renaming over it would
        # replace the device node itself, so write straight into it.
        with open(target, "wb") as handle:
            handle.write(data)
        return
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise invalid(f'output directory "{parent}" does not exist')
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int = 0o644) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def directory_is_empty(path: Path) -> bool:
    return not any(path.iterdir())


@contextlib.contextmanager
def staged_directory(
    target: str | os.PathLike[str],
    *,
    force: bool = False,
    on_before_commit: Callable[[Path], None] | None = None,
) -> Iterator[Path]:
    """Yield a temporary sibling directory; on success it replaces ``target`` atomically.

    An existing non-empty ``target`` is refused unless ``force``. On any exception the
    staged directory is removed and ``target`` is left exactly as it was.
    """
    dest = Path(target)
    if dest.exists() and not dest.is_dir():
        raise invalid(f'output path "{dest}" exists and is not a directory')
    if dest.is_symlink():
        raise invalid(f'output path "{dest}" is a symlink; refusing to write through it')
    if dest.is_dir() and not directory_is_empty(dest) and not force:
        raise invalid(f'output directory "{dest}" is not empty; pass --force to replace it')
    parent = dest.parent if str(dest.parent) else Path(".")
    if not parent.is_dir():
        raise invalid(f'output parent directory "{parent}" does not exist')
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".staging", dir=parent))
    try:
        yield staging
        if on_before_commit is not None:
            on_before_commit(staging)
        os.chmod(staging, 0o755)
        if dest.exists() and exchange_paths(staging, dest):
            # One atomic swap: the target was the previous output up to this instant and is
            # the new one after it, so even a kill leaves a complete directory in place.
            shutil.rmtree(staging, ignore_errors=True)  # now holds the previous output
        elif dest.exists():
            # No atomic swap on this system: move the old output aside, then the new one in.
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=parent))
            os.rmdir(old)
            try:
                os.replace(dest, old)
            except FileNotFoundError as exc:  # a concurrent run moved it away first
                raise _lost_race(dest) from exc
            try:
                _commit_staging(staging, dest)
            except BaseException:
                try:
                    os.replace(old, dest)
                except OSError:  # a concurrent run's complete output holds the path now
                    shutil.rmtree(old, ignore_errors=True)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            _commit_staging(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EXDEV}


def exchange_paths(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    False when this system or file system cannot; a vanished ``b`` is a lost race with a
    concurrent run (CONFLICT); other failures raise ``OSError``.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    if code == errno.ENOENT and a.exists():
        raise _lost_race(b)
    raise OSError(code, os.strerror(code), str(b))


def _lost_race(dest: Path) -> AicrError:
    return AicrError(
        ErrorCode.CONFLICT,
        f'output directory "{dest}" was written by another run at the same time; '
        "that run's output was kept and this one wrote nothing",
    )


def _commit_staging(staging: Path, dest: Path) -> None:
    try:
        os.replace(staging, dest)
    except OSError as exc:
        # A concurrent run renamed its own complete directory into place first.
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise _lost_race(dest) from exc
        raise
