"""The CLI on damaged inputs, in real subprocesses: exit 2, exactly one line on stderr, no
traceback, nothing written (no output file, no temporary sibling, no bundle directory).

Few examples per property: each runs the installed ``aicr-tui`` (about half a second)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aicr_tui.core.capture.aks_pools import project_aks_pools
from aicr_tui.core.capture.oke_addons import project_oke_addons
from aicr_tui.core.capture.oke_legacy import project_legacy_daemonset
from aicr_tui.core.documents.snapshot import parse_snapshot
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.loading import parse_recipe
from aicr_tui.core.validation.recording import parse_recording
from tests.conftest import run_cli
from tests.fuzz.fuzz_support import FUZZ, SNAPSHOTS, mutated, sample_bytes, scratch_dir
from tests.fuzz.test_fuzz_documents import _recipe_sample, _recording_sample

CLI_FUZZ = settings(FUZZ, max_examples=3)


def _fails(fn: Any) -> bool:
    try:
        fn()
    except AicrError:
        return True
    return False


# The one bundle and one replay command line the refusals below are run through.
BUNDLE_ARGS = (
    "bundle",
    "-r",
    "recipe.yaml",
    "-o",
    "out",
    "--accelerated-node-toleration=nvidia.com/gpu:NoSchedule",
)
REPLAY_ARGS = (
    "validate",
    "-r",
    "recipe.yaml",
    "--replay",
    "events.jsonl",
    "--replay-speed",
    "0",
    "-o",
    "report.json",
    "--junit",
    "report.xml",
    "--plain",
)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _fresh_dir(name: str) -> Path:
    return scratch_dir(f"cli-{name}")


def _assert_refused(proc: Any, workdir: Path, inputs: set[str]) -> None:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("aicr-tui: error: [INVALID_REQUEST]"), lines[0]
    assert "Traceback" not in proc.stderr
    left = sorted(os.listdir(workdir))
    assert left == sorted(inputs), f"something was written: {left}"


def _damaged_input_is_refused(
    data: st.DataObject,
    sample: bytes,
    parse: Any,
    name: str,
    args: tuple[str, ...],
    beside: dict[str, str] | None = None,
) -> Any:
    """Draw a damaged copy of ``sample`` that ``parse`` refuses, write it as ``name`` (next to
    the intact files in ``beside``), run the CLI on it and assert it is refused."""
    raw = data.draw(mutated(sample))
    assume(_fails(lambda: parse(raw)))
    work = _fresh_dir(args[0])
    for other, text in (beside or {}).items():
        (work / other).write_text(text)
    (work / name).write_bytes(raw)
    proc = run_cli(*args, cwd=work, timeout=60)
    _assert_refused(proc, work, {name, *(beside or {})})
    return proc


@CLI_FUZZ
@given(st.data())
def test_snapshot_refuses_damaged_dumps(data: st.DataObject) -> None:
    flag, sample, project = data.draw(
        st.sampled_from(
            [
                ("--aks-gpu-pools", "aks-pools-mixed.json", project_aks_pools),
                ("--oke-addons", "oke-addons-active.json", project_oke_addons),
                (
                    "--oke-legacy-daemonset",
                    "oke-legacy-daemonset-active.json",
                    project_legacy_daemonset,
                ),
            ]
        )
    )
    args = ("snapshot", "--no-cluster", flag, "dump.json", "-o", "snap.yaml")
    proc = _damaged_input_is_refused(
        data, sample_bytes(sample), lambda raw: project(raw, "x"), "dump.json", args
    )
    assert "dump.json" in proc.stderr


@CLI_FUZZ
@given(st.data())
def test_recipe_refuses_damaged_snapshots(data: st.DataObject) -> None:
    args = (
        "recipe",
        "--service=aks",
        "--accelerator=h100",
        "--os=ubuntu",
        "--intent=training",
        "--snapshot=snap.yaml",
        "-o",
        "recipe.yaml",
    )
    sample = (SNAPSHOTS / "aks-h100-install.yaml").read_bytes()
    _damaged_input_is_refused(
        data, sample, lambda raw: parse_snapshot(_text(raw), "x"), "snap.yaml", args
    )


@CLI_FUZZ
@given(st.data())
def test_bundle_refuses_damaged_recipes(data: st.DataObject) -> None:
    sample = _recipe_sample().encode()
    _damaged_input_is_refused(
        data, sample, lambda raw: parse_recipe(_text(raw), "x"), "recipe.yaml", BUNDLE_ARGS
    )


@CLI_FUZZ
@given(st.data())
def test_validate_refuses_damaged_recordings(data: st.DataObject) -> None:
    _damaged_input_is_refused(
        data,
        _recording_sample().encode(),
        lambda raw: parse_recording(_text(raw), "x"),
        "events.jsonl",
        REPLAY_ARGS,
        beside={"recipe.yaml": _recipe_sample()},
    )


def test_bundle_refuses_bad_override_values() -> None:
    """Flag values that crashed the parser before: still one line and exit 2 in the CLI."""
    work = _fresh_dir("bundle-flags")
    (work / "recipe.yaml").write_text(_recipe_sample())
    (work / "bomb.yaml").write_text("a: &a [*a]\n")
    for flag in (
        "--set-json=gpu-operator:driver=" + "[" * 5000,
        "--set-json=gpu-operator:driver=" + "1" * 5000,
        "--set-file=gpu-operator:driver=bomb.yaml",
    ):
        proc = run_cli(*BUNDLE_ARGS, flag, cwd=work, timeout=60)
        _assert_refused(proc, work, {"recipe.yaml", "bomb.yaml"})


@settings(CLI_FUZZ, max_examples=5)
@given(st.data())
def test_validate_replay_survives_retyped_fields(data: st.DataObject) -> None:
    """A recording whose events carry values of the wrong type (a hand edit, another tool)
    is refused with one line, or replayed; the renderer and report writers never crash."""
    import json

    from tests.fuzz.fuzz_support import json_values

    events = [json.loads(line) for line in _recording_sample().splitlines()]
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        event = data.draw(st.sampled_from(events))
        field = data.draw(st.sampled_from(sorted(k for k in event if k != "type")))
        event[field] = data.draw(json_values)
    work = _fresh_dir("validate-retyped")
    (work / "recipe.yaml").write_text(_recipe_sample())
    (work / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    proc = run_cli(*REPLAY_ARGS, cwd=work, timeout=60)
    assert "[INTERNAL]" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode == 2:
        _assert_refused(proc, work, {"recipe.yaml", "events.jsonl"})
    else:
        assert proc.returncode in (0, 8), proc.stderr
        assert {"report.json", "report.xml"} <= set(os.listdir(work))
