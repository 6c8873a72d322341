"""A chart given to ``verify`` copied into a private tree the Helm engine may read.

A chart directory or ``.tgz`` comes from anyone, and Helm's directory loader follows
symbolic links (a template that is a link to ``/proc/self/environ`` is rendered with the
environment in it), while ``values.schema.json`` may ``$ref`` a local file or a URL, which
the engine then reads or fetches. So the engine never sees the chart where it lies: the
tree is copied (or the archive's bytes are checked and copied) into a private temporary
directory, refusing, with one line naming the entry:

- a symbolic link anywhere (the chart entry itself, a file, a directory), a hard-linked
  file, and anything that is not a regular file or a directory (FIFO, socket, device);
- in an archive (the chart or a ``.tgz`` subchart under ``charts/``): a member that is a
  link or not a regular file/directory, and an absolute or ``..`` member path;
- a ``values.schema.json`` (at any depth, archives included) with a ``$ref``,
  ``$dynamicRef`` or ``$recursiveRef`` that is not a fragment of the same document (``#…``),
  or a ``$schema`` that is not one of the JSON Schema drafts the engine knows;
- more than :data:`CHART_MAX_FILES` files, :data:`CHART_MAX_BYTES` bytes (uncompressed)
  or :data:`CHART_MAX_DEPTH` nested directories or archives.

The copy holds only regular files this module wrote, so whatever the engine reads from it
(``.Files.Get``, ``.Files.Glob``, templates, subcharts) is the chart's own content.
"""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from aicr_tui.core.foundation.limits import CHART_MAX_BYTES, CHART_MAX_DEPTH, CHART_MAX_FILES
from aicr_tui.core.foundation.textsafe import safe_line

_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
# The metaschemas the engine (santhosh-tekuri/jsonschema) has built in; any other $schema
# is fetched from where it points.
_KNOWN_DRAFTS = {
    f"{scheme}://json-schema.org/{draft}schema"
    for scheme in ("http", "https")
    for draft in ("", "draft-04/", "draft-06/", "draft-07/", "draft/2019-09/", "draft/2020-12/")
}
_SCHEMA_NAME = "values.schema.json"


class ChartRefused(Exception):
    """The chart holds something verify does not let the engine read (one line)."""


def _show(text: str, limit: int = 120) -> str:
    text = safe_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Budget:
    def __init__(self, label: str) -> None:
        self.label = label
        self.files = 0
        self.bytes = 0

    def take(self, size: int, where: str) -> None:
        self.files += 1
        self.bytes += size
        if self.files > CHART_MAX_FILES:
            raise ChartRefused(
                f"{self.label} holds more than {CHART_MAX_FILES} files (the limit for a chart)"
            )
        if self.bytes > CHART_MAX_BYTES:
            raise ChartRefused(
                f"{self.label} holds more than {CHART_MAX_BYTES // (1024 * 1024)} MiB "
                f"(the limit for a chart), reached at {_show(where)}"
            )


# --------------------------------------------------------------------------- schemas
def check_schema(data: bytes, where: str) -> None:
    """Refuse a values.schema.json that would make the engine read a file or a URL."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        # Every pair, duplicates included (the engine keeps the last one; look at all).
        for key, value in items:
            if key in _REF_KEYS and not (isinstance(value, str) and value.startswith("#")):
                found.append(f"{key} {_show(json.dumps(value, default=str), 80)}")
            elif key == "$schema" and (
                not isinstance(value, str) or value.rstrip("#") not in _KNOWN_DRAFTS
            ):
                found.append(f"$schema {_show(json.dumps(value, default=str), 80)}")
        return dict(items)

    try:
        json.loads(data.decode("utf-8"), object_pairs_hook=pairs)
    except RecursionError:
        raise ChartRefused(f"{where} is nested too deeply to be read") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ChartRefused(f"{where} is not JSON: {_show(str(exc))}") from None
    if found:
        raise ChartRefused(
            f"{where}: {found[0]} points outside the schema; verify lets a chart's schema "
            "refer only to its own definitions (#...), never to a file or URL"
        )


# --------------------------------------------------------------------------- archives
def check_archive(data: bytes, where: str, budget: _Budget, depth: int = 0) -> None:
    """Refuse an archive with links, special members, escaping paths or a hostile schema."""
    if depth > CHART_MAX_DEPTH:
        raise ChartRefused(f"{where}: archives nested more than {CHART_MAX_DEPTH} deep")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                _check_member(tar, member, where, budget, depth)
    except tarfile.TarError as exc:
        raise ChartRefused(f"{where} is not a chart archive: {_show(str(exc))}") from None
    except (EOFError, OSError, ValueError) as exc:  # a truncated or corrupt gzip stream
        raise ChartRefused(f"{where} is not a chart archive: {_show(str(exc))}") from None


def _check_member(
    tar: tarfile.TarFile, member: tarfile.TarInfo, where: str, budget: _Budget, depth: int
) -> None:
    name = member.name.replace("\\", "/")
    at = f"{where}: member {_show(member.name)}"
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts:
        raise ChartRefused(f"{at} has a path outside the chart")
    if member.isdir():
        return
    if member.issym() or member.islnk():
        raise ChartRefused(
            f"{at} is a {'symbolic' if member.issym() else 'hard'} link; "
            "verify reads no link in a chart"
        )
    if not member.isreg():
        raise ChartRefused(f"{at} is not a regular file")
    budget.take(member.size, at)
    base = parts[-1] if parts else ""
    nested = _is_subchart_archive(parts[1:])
    if base != _SCHEMA_NAME and not nested:
        return
    handle = tar.extractfile(member)
    content = handle.read() if handle is not None else b""
    if base == _SCHEMA_NAME:
        check_schema(content, f"{where}: {_show(name)}")
    if nested:
        check_archive(content, f"{where}: {_show(name)}", budget, depth + 1)


def _is_subchart_archive(parts: tuple[str, ...]) -> bool:
    """A path (inside the chart) Helm loads as a subchart archive: ``charts/<x>.tgz`` at
    any level of charts/ nesting."""
    return "charts" in parts[:-1] and parts[-1].endswith((".tgz", ".tar.gz"))


# ------------------------------------------------------------------------------ trees
def _read_regular(path: Path, rel: str, budget: _Budget) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ChartRefused(f"{rel} cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ChartRefused(f"{rel} is not a regular file")
        if st.st_nlink > 1:
            raise ChartRefused(
                f"{rel} is a hard link (it has {st.st_nlink} names); verify reads no link in a chart"
            )
        budget.take(st.st_size, rel)
        data = f.read(CHART_MAX_BYTES + 1)
        if len(data) > st.st_size:
            budget.take(len(data) - st.st_size, rel)
        return data


def _copy_tree(src: Path, dst: Path, label: str, rel: tuple[str, ...], budget: _Budget) -> None:
    here = "/".join((label, *rel))
    if len(rel) > CHART_MAX_DEPTH:
        raise ChartRefused(f"{here} is nested more than {CHART_MAX_DEPTH} directories deep")
    dst.mkdir(mode=0o700)
    try:
        entries = sorted(os.scandir(src), key=lambda e: e.name)
    except OSError as exc:
        raise ChartRefused(f"{here} cannot be read: {exc.strerror or exc}") from None
    for entry in entries:
        parts = (*rel, entry.name)
        where = f"{here}/{_show(entry.name)}"
        if entry.is_symlink():
            raise ChartRefused(
                f"{where} is a symbolic link; verify reads no link in a chart "
                "(copy the file into the chart instead)"
            )
        if entry.is_dir(follow_symlinks=False):
            _copy_tree(Path(entry.path), dst / entry.name, label, parts, budget)
        elif entry.is_file(follow_symlinks=False):
            data = _read_regular(Path(entry.path), where, budget)
            if entry.name == _SCHEMA_NAME:
                check_schema(data, where)
            elif _is_subchart_archive(parts):
                check_archive(data, where, budget, 1)
            with open(dst / entry.name, "xb") as out:
                out.write(data)
        else:
            raise ChartRefused(f"{where} is not a regular file or a directory")


def stage_chart(source: Path, private_dir: Path) -> Path:
    """Copy the chart at ``source`` (a tree or a ``.tgz``) into ``private_dir`` after the
    checks above; returns the copy to load. Raises :class:`ChartRefused`."""
    label = _show(str(source), 200)
    try:
        st = os.lstat(source)
    except OSError as exc:
        raise ChartRefused(f"{label} cannot be read: {exc.strerror or exc}") from None
    budget = _Budget(label)
    if stat.S_ISLNK(st.st_mode):
        raise ChartRefused(f"{label} is a symbolic link; verify reads no link in a chart")
    if stat.S_ISDIR(st.st_mode):
        target = private_dir / "chart"
        _copy_tree(source, target, label, (), budget)
        return target
    data = _read_regular(source, label, budget)
    check_archive(data, label, budget)
    target = private_dir / "chart.tgz"
    with open(target, "xb") as out:
        out.write(data)
    return target
