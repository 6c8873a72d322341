"""Bounded reads, atomic writes, staged directories, errors and the YAML/JSON helpers."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from aicr_tui.core.foundation.errors import (
    EXIT_CODES,
    AicrError,
    ErrorCode,
    internal,
    invalid,
    not_found,
    timeout,
)
from aicr_tui.core.foundation.fileio import (
    MAX_PROVIDER_DUMP_BYTES,
    atomic_write_bytes,
    atomic_write_text,
    file_read_timeout,
    read_bounded,
    read_document,
    read_dump,
    staged_directory,
)
from aicr_tui.core.foundation.gojson import (
    GoDecodeError,
    go_equal_fold,
    go_lower,
    load_json_pairs,
    pairs_to_plain,
)
from aicr_tui.core.foundation.yamlio import (
    dump_json,
    dump_yaml,
    load_yaml,
    load_yaml_plain,
    to_plain,
)

DESC = "AKS GPU pools"


def fail(path: Path | str, **kw: object) -> AicrError:
    with pytest.raises(AicrError) as info:
        read_bounded(path, DESC, **kw)  # type: ignore[arg-type]
    return info.value


# -- read_bounded --------------------------------------------------------------------------


def test_reads_a_regular_file(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_bytes(b"[1, 2]")
    assert read_bounded(f, DESC) == b"[1, 2]"


def test_missing_file(tmp_path: Path) -> None:
    err = fail(tmp_path / "missing.json")
    assert err.code is ErrorCode.INVALID_REQUEST
    assert err.message == f'failed to open {DESC} file "{tmp_path / "missing.json"}"'
    assert "No such file" in err.render()


def test_symlink_is_refused_even_to_a_good_file(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("[]")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    err = fail(link)
    assert err.message == f'{DESC} path "{link}" is a symlink, not a regular file'


def test_dangling_symlink_is_refused_as_symlink(tmp_path: Path) -> None:
    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "nowhere")
    assert "is a symlink" in fail(link).message


def test_directory_is_not_regular(tmp_path: Path) -> None:
    assert fail(tmp_path).message == f'{DESC} path "{tmp_path}" is not a regular file'


def test_fifo_is_not_regular_and_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "is not a regular file" in fail(fifo).message


def test_device_is_not_regular() -> None:
    assert "is not a regular file" in fail("/dev/null").message


def test_exactly_one_mib_is_accepted_and_one_more_byte_is_not(tmp_path: Path) -> None:
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * MAX_PROVIDER_DUMP_BYTES)
    assert len(read_bounded(exact, DESC)) == 1_048_576
    over = tmp_path / "over"
    over.write_bytes(b"x" * (MAX_PROVIDER_DUMP_BYTES + 1))
    err = fail(over)
    assert err.message == f'{DESC} file "{over}" exceeds 1048576 bytes'
    assert err.exit_code == 2


def test_custom_cap(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"12345")
    assert read_bounded(f, DESC, cap=5) == b"12345"
    assert "exceeds 4 bytes" in fail(f, cap=4).message


def test_unreadable_file(tmp_path: Path) -> None:
    f = tmp_path / "secret"
    f.write_text("[]")
    f.chmod(0)
    try:
        if os.access(f, os.R_OK):
            pytest.skip("running as a user that bypasses permissions")
        assert "failed to open" in fail(f).message
    finally:
        f.chmod(0o600)


def test_cancelled_read_is_a_timeout(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("[]")
    cancel = threading.Event()
    cancel.set()
    err = fail(f, cancel=cancel)
    assert err.code is ErrorCode.TIMEOUT and err.exit_code == 5
    assert err.message == f"{DESC} file read canceled"


def test_read_deadline_is_a_timeout(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    err = fail(f, deadline_s=-1.0)
    assert err.code is ErrorCode.TIMEOUT and "read exceeded" in err.message


def test_file_read_timeout_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AICR_FILE_READ_TIMEOUT", "2.5")
    assert file_read_timeout() == 2.5
    for bad in ("x", "0", "-3"):
        monkeypatch.setenv("AICR_FILE_READ_TIMEOUT", bad)
        assert file_read_timeout() == 30.0


def test_path_is_cleaned_in_messages(tmp_path: Path) -> None:
    err = fail(f"{tmp_path}/./sub/../missing.json")
    assert f'"{tmp_path}/missing.json"' in err.message


def test_read_dump_adds_the_expected_command(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        read_dump(tmp_path / "x.json", DESC, "az aks nodepool list -o json")
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert info.value.render().endswith("expected the output of `az aks nodepool list -o json`")
    assert "\n" not in info.value.render()


# -- read_document -------------------------------------------------------------------------


def test_read_document_follows_symlinks_and_decodes(tmp_path: Path) -> None:
    real = tmp_path / "recipe.yaml"
    real.write_text("kind: x\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert read_document(link, "recipe") == "kind: x\n"


def test_read_document_errors(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        read_document(tmp_path / "nope.yaml", "recipe")
    assert "does not exist" in info.value.message
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(AicrError) as info:
        read_document(bad, "recipe")
    assert "not valid UTF-8" in info.value.message
    with pytest.raises(AicrError) as info:
        read_document(tmp_path, "recipe")
    assert "not a regular file" in info.value.message


# -- atomic writes -------------------------------------------------------------------------


def test_atomic_write_creates_and_replaces_without_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    atomic_write_text(target, "one\n")
    assert target.read_text() == "one\n"
    atomic_write_text(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]
    assert (target.stat().st_mode & 0o777) == 0o644


def test_atomic_write_failure_leaves_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("old\n")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_atomic_write_refuses_directory_and_missing_parent(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        atomic_write_text(tmp_path, "x")
    assert "is a directory" in info.value.message
    with pytest.raises(AicrError) as info:
        atomic_write_text(tmp_path / "no" / "such" / "out.yaml", "x")
    assert "does not exist" in info.value.message
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    atomic_write_text("plain.txt", "x")
    assert (tmp_path / "plain.txt").read_text() == "x"


# -- staged directories --------------------------------------------------------------------


def test_staged_directory_commits_atomically(tmp_path: Path) -> None:
    dest = tmp_path / "bundle"
    with staged_directory(dest) as stage:
        (stage / "a.txt").write_text("a")
        assert not dest.exists()
    assert (dest / "a.txt").read_text() == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_staged_directory_failure_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "bundle"
    with pytest.raises(RuntimeError), staged_directory(dest) as stage:
        (stage / "a.txt").write_text("a")
        raise RuntimeError("render failed")
    assert list(tmp_path.iterdir()) == []


def test_staged_directory_refuses_non_empty_without_force(tmp_path: Path) -> None:
    dest = tmp_path / "bundle"
    dest.mkdir()
    (dest / "old.txt").write_text("old")
    with pytest.raises(AicrError) as info, staged_directory(dest):
        pass
    assert "--force" in info.value.message
    with staged_directory(dest, force=True) as stage:
        (stage / "new.txt").write_text("new")
    assert sorted(p.name for p in dest.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_staged_directory_failed_replace_keeps_old_content(tmp_path: Path) -> None:
    dest = tmp_path / "bundle"
    dest.mkdir()
    (dest / "old.txt").write_text("old")

    def veto(stage: Path) -> None:
        raise AicrError(ErrorCode.INVALID_REQUEST, "blocking check failed")

    with pytest.raises(AicrError), staged_directory(dest, force=True, on_before_commit=veto) as s:
        (s / "new.txt").write_text("new")
    assert sorted(p.name for p in dest.iterdir()) == ["old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_staged_directory_refuses_file_and_symlink_targets(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(AicrError), staged_directory(f):
        pass
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(AicrError) as info, staged_directory(link):
        pass
    assert "is a symbolic link" in info.value.message


# -- errors --------------------------------------------------------------------------------


def test_error_rendering_and_exit_codes() -> None:
    assert invalid("bad", "cause").render() == "[INVALID_REQUEST] bad: cause"
    assert invalid("bad", remedy="do x").render() == "[INVALID_REQUEST] bad — do x"
    assert (
        invalid("multi\nline   text", "a\nb").render() == "[INVALID_REQUEST] multi line text: a b"
    )
    assert not_found("gone").exit_code == 3
    assert timeout("slow").exit_code == 5
    assert internal("oops").exit_code == 8
    assert invalid("x").exit_code == 2
    assert AicrError(ErrorCode.METHOD_NOT_ALLOWED, "m").exit_code == 2
    assert AicrError(ErrorCode.UNAUTHORIZED, "u").exit_code == 4
    assert AicrError(ErrorCode.SERVICE_UNAVAILABLE, "s").exit_code == 6
    assert AicrError(ErrorCode.RATE_LIMIT_EXCEEDED, "r").exit_code == 7
    assert set(EXIT_CODES) == set(ErrorCode)


def test_error_cause_chain() -> None:
    inner = not_found("key not found in subtype")
    outer = not_found("value not found in snapshot", inner)
    assert outer.render() == "[NOT_FOUND] value not found in snapshot: key not found in subtype"
    assert invalid("wrap", outer).has_code(ErrorCode.NOT_FOUND)
    assert not invalid("wrap", "text").has_code(ErrorCode.NOT_FOUND)
    assert str(outer) == outer.render()


# -- yamlio --------------------------------------------------------------------------------


def test_yaml_load_and_dump() -> None:
    data = load_yaml("a: 1\n# keep\nb: [x, y]\n", "f.yaml")
    assert to_plain(data) == {"a": 1, "b": ["x", "y"]}
    assert "# keep" in dump_yaml(data)
    assert load_yaml("", "f") is None
    assert load_yaml_plain("v: '8.10'\nw: 8.10\n", "f") == {"v": "8.10", "w": 8.1}


@pytest.mark.parametrize("text", ["a: [\n", "a: 1\n---\nb: 2\n", "x: 1\nx: 2\n", "\t- a"])
def test_yaml_errors_name_the_source(text: str) -> None:
    for loader in (load_yaml, load_yaml_plain):
        with pytest.raises(AicrError) as info:
            loader(text, "f.yaml")
        assert "f.yaml" in info.value.message


def test_dump_json_and_yaml_are_plain_and_anchor_free() -> None:
    shared = {"k": "v"}
    text = dump_yaml({"a": shared, "b": shared})
    assert "&" not in text and "*" not in text
    assert dump_json({"é": 1}) == '{\n  "é": 1\n}\n'


def test_go_json_helpers() -> None:
    assert pairs_to_plain(load_json_pairs(b'{"a":1,"a":2.5,"b":[true,null]}')) == {
        "a": 2.5,
        "b": [True, None],
    }
    assert go_equal_fold("Unmanaged", "UNMANAGED")
    assert go_equal_fold("\u017f", "s") and go_equal_fold("\u212a", "k")
    assert not go_equal_fold("\u00df", "ss")
    assert go_lower("\u0130X") == "ix"
    for raw in (b"", b"[1] 2", b"{,}", b"Infinity", b"-NaN", b"[01]", b"'x'"):
        with pytest.raises(GoDecodeError):
            load_json_pairs(raw)


def test_deep_nesting_is_a_clean_decode_error() -> None:
    with pytest.raises(GoDecodeError):
        load_json_pairs(b"[" * 200_000 + b"]" * 200_000)


def test_atomic_write_to_a_device_writes_through_and_keeps_the_node() -> None:
    atomic_write_text("/dev/null", "discarded\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null must stay a device"


def test_atomic_write_to_a_fifo_writes_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    t = threading.Thread(target=reader)
    t.start()
    # The reader's open() may not have run yet on a loaded machine, and a FIFO with no
    # reader is refused by design: retry only that refusal until the reader is there.
    deadline = time.monotonic() + 10
    while True:
        try:
            atomic_write_bytes(fifo, b"through the pipe")
            break
        except AicrError as exc:
            if "no reader" not in exc.message or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    t.join(timeout=10)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_size_cap_is_enforced_while_streaming_when_stat_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file that grows between fstat and read (or a filesystem that reports 0) is still
    # capped by counting the bytes actually read.
    f = tmp_path / "growing"
    f.write_bytes(b"x" * (MAX_PROVIDER_DUMP_BYTES + 1))
    real_fstat = os.fstat

    def small_fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        fields = list(st)
        fields[stat.ST_SIZE] = 10
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", small_fstat)
    assert "exceeds 1048576 bytes" in fail(f).message


def test_reads_in_64_kib_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"y" * 200_000)
    sizes: list[int] = []
    real_read = os.read

    def recording_read(fd: int, n: int) -> bytes:
        sizes.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", recording_read)
    assert len(read_bounded(f, DESC)) == 200_000
    assert set(sizes) == {65_536}


def test_moderately_deep_unknown_fields_are_accepted() -> None:
    depth = 500
    assert isinstance(load_json_pairs(b"[" * depth + b"]" * depth), list)


def test_deep_nesting_in_every_reader_is_a_clean_error() -> None:
    from aicr_tui.core.capture.aks_pools import project_aks_pools
    from aicr_tui.core.capture.oke_legacy import project_legacy_daemonset
    from aicr_tui.core.documents.snapshot import parse_snapshot

    deep = b"[" * 5000 + b"]" * 5000
    for call in (
        lambda: project_aks_pools(b'[{"x":' + deep + b"}]", "p"),
        lambda: project_legacy_daemonset(b'{"kind":"List","items":[],"x":' + deep + b"}", "p"),
        lambda: parse_snapshot('{"kind":"Snapshot","x":' + deep.decode() + "}", "s"),
        lambda: parse_snapshot("kind: Snapshot\nx: " + deep.decode() + "\n", "s"),
    ):
        with pytest.raises(AicrError) as info:
            call()
        assert info.value.exit_code == 2


@pytest.mark.parametrize("anchor", ["", "first: &x 1\nsecond: *x\n"])
def test_a_long_flat_list_is_not_excessive_aliasing(anchor: str) -> None:
    """The constructed-tree alias check counted only mappings and lists as nodes, so a
    list of 20,000 scalars (no alias at all, with or without an anchor elsewhere) was
    refused as "anchors expand to 20003 nodes"; every node counts now, as in the events
    check before it. An alias bomb is still refused."""
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    text = anchor + "a:\n" + "".join(f"- {i}\n" for i in range(20_000))
    assert len(load_yaml_plain(text, "x")["a"]) == 20_000
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(6)
    )
    with pytest.raises(AicrError, match="excessive aliasing"):
        load_yaml_plain(bomb, "x")
