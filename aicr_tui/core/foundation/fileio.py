"""Bounded reads and atomic writes.

Provider dumps are read the way upstream reads them: no symlinks, regular files only, a
1 MiB cap checked on stat and again while streaming, 64 KiB chunks, a read deadline.
Every output is written to a temporary sibling and renamed into place, so a failure
leaves the previous file (or directory) intact and no partial output behind.

Outputs and symbolic links: an output path whose *last* component is a symbolic link (to a
file, a directory, a device, another link, itself, or dangling) is refused before anything
is written, with one line naming the path (exit 2); neither the link, which may be the
user's own, nor what it points to is touched. Refusing rather than replacing the link keeps
one rule for every output (files, ``--record``, ``bundle -o DIR``) and never destroys
anything the user did not name. A link planted after that check is still never followed:
a file lands by ``rename(2)``, which replaces the link itself, a FIFO or device is opened
with ``O_NOFOLLOW``, and a directory output is a fresh staged directory renamed into place
(links inside a directory replaced with ``--force`` are removed with it, not followed).
Links among the *parent* directories are the user's own layout and are followed. ``-``,
``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and ``/proc/self/fd/N`` are written into
the descriptor the process already holds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid, timeout
from aicr_tui.core.foundation.patterns import LazyPattern

if TYPE_CHECKING:
    import threading

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


# ------------------------------------------------------------------ output boundary
_CAUSES: dict[int, str] = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EBUSY: "the path is busy (a mount point or in use)",
    errno.EXDEV: "the path is on another file system (a mount point)",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.EISDIR: "the path is a directory",
    errno.ENOENT: "a directory on the path does not exist",
    errno.ENXIO: "no process is reading from it",
    errno.EIO: "input/output error",
    errno.ELOOP: "too many symbolic links",
    errno.ENOTEMPTY: "the directory is not empty",
    errno.EEXIST: "the path already exists",
    errno.EINVAL: "the file system does not allow it",
    errno.EMLINK: "too many links",
    errno.ETXTBSY: "the file is busy",
    errno.EFBIG: "the file is too large",
    errno.EPIPE: "the reader went away",
}


class OutputError(AicrError, OSError):
    """An OS error at the output boundary: one line naming the path and the cause, exit 2.

    Also an ``OSError`` (same ``errno``), so in-process callers that handle OS errors keep
    working."""

    def __init__(self, path: str | os.PathLike[str], exc: OSError, what: str = "output") -> None:
        AicrError.__init__(
            self,
            ErrorCode.INVALID_REQUEST,
            f"cannot write {what} {_shown_path(path)}",
            _cause(exc, path),
        )
        self.errno = exc.errno
        self.strerror = exc.strerror
        self.filename = os.fspath(path)

    def __str__(self) -> str:  # the one line, not OSError's "[Errno N] ..." form
        return self.render()


def _cause(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    cause = _CAUSES.get(exc.errno or 0, exc.strerror or str(exc))
    if exc.errno == errno.ENOENT and path is not None:
        parent = os.path.dirname(os.path.abspath(os.fspath(path)))
        if os.path.isdir(parent):  # so no directory on the path is missing: the file system
            cause = (
                f"the directory {_shown_path(parent)} exists but does not accept new files "
                "(a virtual file system such as /proc or /sys)"
            )
    name = errno.errorcode.get(exc.errno or 0, "")
    return f"{cause} ({name})" if name else cause


def describe_os_error(exc: OSError) -> str:
    """One line for an OS error that reached the top: the path(s) it names and the cause."""
    paths = [p for p in (exc.filename, exc.filename2) if p is not None]
    where = " -> ".join(_shown_path(os.fsdecode(p)) for p in paths) or "a file operation"
    first = os.fsdecode(paths[0]) if len(paths) == 1 else None
    return " ".join(f"{where}: {_cause(exc, first)}".split())


def _shown_path(path: str | os.PathLike[str]) -> str:
    from aicr_tui.core.foundation.names import shown

    return shown(os.fspath(path), 160)


def output_error(path: str | os.PathLike[str], exc: OSError, what: str = "output") -> AicrError:
    """The one-line error for ``exc`` at ``path`` (an ``AicrError`` passes through)."""
    if isinstance(exc, AicrError):
        return exc
    return OutputError(path, exc, what)


def _temp_prefix(name: str) -> str:
    # Short enough that the temporary sibling of a name near NAME_MAX is still a valid name.
    return f".{name[:40]}."


def _refuse_link(path: str | os.PathLike[str], what: str) -> None:
    """An output whose last component is a symbolic link is never written (module doc)."""
    if os.path.islink(path):
        raise invalid(
            f"{what} {_shown_path(path)} is a symbolic link; refusing to write through it "
            "(remove the link or name another path)"
        )


def _check_file_target(path: str, what: str) -> os.stat_result | None:
    """Refuse what can never be an output file, before anything is written."""
    if path.endswith(("/", os.sep)) or os.path.basename(path) in ("", ".", ".."):
        raise invalid(
            f"{what} {_shown_path(path)} names a directory (a trailing slash, . or ..); "
            "expected a file"
        )
    _refuse_link(path, what)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise output_error(path, exc, what) from exc
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise invalid(f"{what} {_shown_path(path)} is a directory, expected a file")
    if info is not None and not (
        stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode)
    ):
        raise invalid(f"{what} {_shown_path(path)} is not a regular file, FIFO or character device")
    if info is None or stat.S_ISREG(info.st_mode):
        parent = os.path.dirname(path) or "."
        if not os.path.isdir(parent):
            raise invalid(f"{what} directory {_shown_path(parent)} does not exist")
    return info


FIFO_READER_WAIT_S = 2.0


def _open_special(path: str, info: os.stat_result, what: str) -> int:
    """Open a FIFO or character device for writing without ever blocking: a FIFO whose
    reader has not opened it within ``FIFO_READER_WAIT_S`` is refused instead of hanging."""
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
            break
        except OSError as exc:
            if exc.errno == errno.ENXIO and stat.S_ISFIFO(info.st_mode):
                # A reader started alongside us (`-o fifo & cat fifo`) gets a moment to
                # open its end; then the run stops instead of hanging.
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                raise invalid(
                    f"{what} {_shown_path(path)} is a FIFO with no reader "
                    f"(waited {FIFO_READER_WAIT_S:g}s); start the reader first"
                ) from exc
            raise output_error(path, exc, what) from exc
    if stat.S_ISFIFO(info.st_mode):
        import fcntl

        # A reader is there: from now on write normally (block while it catches up).
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    return fd


def _write_fd(fd: int, data: bytes, path: str, what: str) -> None:
    view = memoryview(data)
    try:
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            view = view[n:]
    except OSError as exc:
        raise output_error(path, exc, what) from exc


def _stage_file(path: str, data: bytes, mode: int, what: str) -> str:
    """Write ``data`` to a new temporary sibling of ``path`` (fsynced); return its name."""
    parent = os.path.dirname(path) or "."
    name = os.path.basename(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(name), suffix=".tmp", dir=parent)
    except OSError as exc:
        raise output_error(path, exc, what) from exc
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
        except OSError as exc:
            raise output_error(path, exc, what) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, what: str = "output"
) -> None:
    """Write ``data`` to ``path`` through a temporary sibling and an atomic rename.

    A FIFO or character device (``-o /dev/stdout``) is written straight into (renaming
    over it would replace the node itself); every OS error is one line naming the path.
    """
    with OutputSet() as out:
        out.add(path, data, mode=mode, what=what)
        out.commit()


def atomic_write_text(
    path: str | os.PathLike[str], text: str, *, mode: int = 0o644, what: str = "output"
) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, what=what)


class OutputSet:
    """The output files of one command, written all or nothing.

    ``add`` checks the target and stages its bytes in a temporary sibling (or opens a FIFO
    or device without blocking) before anything is replaced; ``commit`` renames every staged
    file into place, keeping a hard link to each previous file until all are in, and on any
    failure puts the previous files back, so a later output failing never leaves an earlier
    one behind. Leaving the ``with`` block without ``commit`` removes everything staged.
    """

    def __init__(self) -> None:
        self._files: list[tuple[str, str, str]] = []  # (target, staged temp, what)
        self._special: list[tuple[str, int, bytes, str]] = []  # (target, fd, data, what)
        self._done = False

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()

    def add(
        self, path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, what: str = "output"
    ) -> None:
        p = os.fspath(path)
        fd = _descriptor(p, what)
        if fd is not None:  # /dev/stdout and friends: the process's own open file
            self._special.append((p, fd, data, what))
            return
        info = _check_file_target(p, what)
        if info is not None and not stat.S_ISREG(info.st_mode):
            self._special.append((p, _open_special(p, info, what), data, what))
            return
        self._files.append((p, _stage_file(p, data, mode, what), what))

    def add_staged(self, path: str | os.PathLike[str], tmp: str, what: str = "output") -> None:
        """A temporary sibling some writer already filled and fsynced (a recording)."""
        p = os.fspath(path)
        try:
            special = _descriptor(p, what) is not None
            if not special:
                info = _check_file_target(p, what)
                special = info is not None and not stat.S_ISREG(info.st_mode)
            if special:  # never renamed over: its bytes are written into it instead
                with open(tmp, "rb") as handle:
                    data = handle.read()
                os.unlink(tmp)
                self.add(path, data, what=what)
                return
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._files.append((p, tmp, what))

    def commit(self) -> None:
        committed: list[tuple[str, str | None]] = []  # (target, link to the previous file)
        try:
            # One output alone needs no way back: its rename is the whole commit.
            rollback = len(self._files) + len(self._special) > 1
            for target, tmp, what in self._files:
                backup = _keep_previous(target) if rollback else None
                try:
                    os.replace(tmp, target)
                except BaseException as exc:
                    if backup is not None:
                        with contextlib.suppress(OSError):
                            os.unlink(backup)
                    if isinstance(exc, OSError):
                        raise output_error(target, exc, what) from exc
                    raise
                committed.append((target, backup))
            for target, fd, data, what in self._special:
                _write_fd(fd, data, target, what)
        except BaseException:
            for target, backup in reversed(committed):
                with contextlib.suppress(OSError):
                    if backup is not None:
                        os.replace(backup, target)
                    else:
                        os.unlink(target)
            raise
        finally:
            self._done = True
            self.abort()
        for _, backup in committed:
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)

    def abort(self) -> None:
        for _, tmp, _ in self._files:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for _, fd, _, _ in self._special:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._files.clear()
        self._special.clear()


_FD_PATH = LazyPattern(r"/(?:dev/fd|proc/self/fd)/([0-9]+)")
_STD_PATHS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _descriptor_number(path: str) -> int | None:
    norm = os.path.normpath(os.path.abspath(path))
    m = _FD_PATH.fullmatch(norm)
    return int(m.group(1)) if m else _STD_PATHS.get(norm)


def _descriptor(path: str, what: str) -> int | None:
    """A duplicate of the descriptor ``path`` names (``/dev/stdout``, ``/dev/fd/3``), or
    None. Renaming over one of those would replace the shared node itself."""
    number = _descriptor_number(path)
    if number is None:
        return None
    try:
        return os.dup(number)
    except OSError as exc:
        raise output_error(path, exc, what) from exc


def check_output_file(path: str | os.PathLike[str], what: str) -> None:
    """Refuse, before any work starts, a file output that could never be written: a
    symbolic link, a directory, a missing parent directory, a socket. ``-`` and the
    descriptor paths (``/dev/stdout``, ``/dev/fd/N``) always pass."""
    p = os.fspath(path)
    if p == "-" or _descriptor_number(p) is not None:
        return
    _check_file_target(p, what)


def _keep_previous(target: str) -> str | None:
    """A hidden hard link to the file at ``target`` (None when there is none), so a later
    failure can put it back."""
    if not os.path.isfile(target) or os.path.islink(target):
        return None
    parent = os.path.dirname(target) or "."
    for _ in range(8):
        backup = os.path.join(
            parent, f"{_temp_prefix(os.path.basename(target))}{os.urandom(4).hex()}.old"
        )
        try:
            os.link(target, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:
            return None  # no hard links here: the commit still works, without rollback
    return None


def directory_is_empty(path: Path) -> bool:
    return not any(path.iterdir())


def _check_dir_target(target: str | os.PathLike[str], force: bool) -> Path:
    raw = os.fspath(target)
    base = os.path.basename(raw.rstrip("/" + os.sep))
    if base in ("", ".", "..") or raw in ("", "/"):
        raise invalid(
            f"output directory {_shown_path(raw)} must name the directory by its path, "
            'not ".", ".." or "/"'
        )
    dest = Path(raw)  # (a trailing slash is dropped: the link itself is checked)
    _refuse_link(dest, "output directory")
    try:
        if dest.exists() and not dest.is_dir():
            raise invalid(f"output path {_shown_path(dest)} exists and is not a directory")
        if dest.is_dir() and not force and not directory_is_empty(dest):
            raise invalid(
                f"output directory {_shown_path(dest)} is not empty; pass --force to replace it"
            )
    except OSError as exc:
        raise output_error(dest, exc, "output directory") from exc
    parent = dest.parent if str(dest.parent) else Path(".")
    if not parent.is_dir():
        raise invalid(f"output parent directory {_shown_path(parent)} does not exist")
    if force and dest.is_dir() and os.path.ismount(dest):
        raise invalid(
            f"output directory {_shown_path(dest)} is a mount point; it cannot be replaced, "
            "give a directory inside it"
        )
    return dest


@contextlib.contextmanager
def staged_directory(
    target: str | os.PathLike[str],
    *,
    force: bool = False,
    on_before_commit: Callable[[Path], None] | None = None,
) -> Iterator[Path]:
    """Yield a temporary sibling directory; on success it replaces ``target`` atomically.

    Without ``force`` the staged directory is renamed onto ``target`` with one
    ``rename(2)``, which the kernel refuses when ``target`` is (by then) a non-empty
    directory: the emptiness check and the swap are one atomic step, so a directory filled
    by anything else meanwhile, or a concurrent run that got there first, is never
    replaced. With ``force`` an existing directory is swapped out. On any exception the
    staged directory is removed and ``target`` is left exactly as it was.
    """
    dest = _check_dir_target(target, force)
    parent = dest.parent if str(dest.parent) else Path(".")
    try:
        staging = Path(
            tempfile.mkdtemp(prefix=_temp_prefix(dest.name), suffix=".staging", dir=parent)
        )
    except OSError as exc:
        raise output_error(dest, exc, "output directory") from exc
    try:
        try:
            yield staging
            if on_before_commit is not None:
                on_before_commit(staging)
            os.chmod(staging, 0o755)
            if not force:
                _commit_staging(staging, dest, force=False)
            elif dest.exists() and exchange_paths(staging, dest):
                # One atomic swap: the target was the previous output up to this instant and
                # is the new one after it, so even a kill leaves a complete directory in place.
                shutil.rmtree(staging, ignore_errors=True)  # now holds the previous output
            elif dest.exists():
                # No atomic swap on this system: move the old output aside, then the new in.
                old = Path(
                    tempfile.mkdtemp(prefix=_temp_prefix(dest.name), suffix=".old", dir=parent)
                )
                os.rmdir(old)
                try:
                    os.replace(dest, old)
                except FileNotFoundError as exc:  # a concurrent run moved it away first
                    raise _lost_race(dest) from exc
                try:
                    _commit_staging(staging, dest, force=True)
                except BaseException:
                    try:
                        os.replace(old, dest)
                    except OSError:  # a concurrent run's complete output holds the path now
                        shutil.rmtree(old, ignore_errors=True)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                _commit_staging(staging, dest, force=True)
        except OSError as exc:
            raise output_error(dest, exc, "output directory") from exc
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
        f"output directory {_shown_path(dest)} was written by another run at the same time; "
        "that run's output was kept and this one wrote nothing",
    )


def _commit_staging(staging: Path, dest: Path, *, force: bool) -> None:
    try:
        os.replace(staging, dest)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            if force:  # a concurrent run renamed its own complete directory into place first
                raise _lost_race(dest) from exc
            raise AicrError(
                ErrorCode.CONFLICT,
                f"output directory {_shown_path(dest)} was filled by something else while "
                "this run wrote; it was kept and this run wrote nothing (pass --force to "
                "replace it)",
            ) from exc
        raise
