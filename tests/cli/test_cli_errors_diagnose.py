"""Errors that diagnose the right thing (issue 34, item 5), end to end through the CLI.

Each case was a reproduction in the issue: the line a user got did not name the real cause,
hid the failed check 44 lines up, repeated itself, or left the user to spot a typo.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLES

AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
CAPTURES = SAMPLES / "captures"
VAL = SAMPLES / "validation"
PREFIX = re.compile(r"^aicr-tui: error: \[[A-Z_]+\] \S")


def _env() -> dict[str, str]:
    return {"PYTHONPATH": str(REPO)}


def _one_error(cli, *argv: str, code: int = 2) -> str:
    res = cli(*argv, env=_env())
    assert res.returncode == code, res
    lines = res.stderr.splitlines()
    assert len(lines) == 1, lines
    assert PREFIX.match(lines[0]), lines[0]
    assert res.stdout == ""
    return lines[0]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_path_under_proc_names_the_virtual_file_system(cli) -> None:
    line = _one_error(cli, "recipe", *AKS, "-o", "/proc/self/r.yaml")
    assert "a directory on the path does not exist" not in line
    assert '"/proc/self" exists but does not accept new files' in line


def test_a_failed_validate_names_the_failed_check_on_its_last_line(cli) -> None:
    res = cli(
        "validate",
        "--replay",
        str(VAL / "aks-nc80adis-training-failed.jsonl"),
        "--replay-speed",
        "0",
        "--plain",
        env=_env(),
    )
    assert res.returncode == 8
    last = res.stderr.splitlines()[-1]
    assert last.startswith("validation failed (conformance/secure-accelerator-access failed):")


def test_criteria_error_reads_as_one_sentence(cli) -> None:
    # h100 on AKS without --intent: neither the accelerator nor the OS is carried until an
    # intent is chosen (h100-any, an independent overlay, carries neither), so the line says
    # once what both need, then the nearest leaves, in the same sentence.
    line = _one_error(cli, "recipe", "--service", "aks", "--accelerator", "h100", "--os", "ubuntu")
    assert line.count("also need") == 1, line
    assert 'accelerator "h100" or os "ubuntu"' in line
    assert (
        ": the overlays for them also need --intent (inference/training); "
        "nearest published leaves: h100-aks-ubuntu-"
    ) in line, line


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        ([*AKS, "--profile", "gpuStack=operator-manged"], 'did you mean "operator-managed"?'),
        (["--servce", "aks"], 'did you mean "--service"?'),
        (["--service", "akss", "--accelerator", "h100"], 'did you mean "aks"?'),
        (["--service", "aks", "--accelerator", "h100", "--intent", "trainin"], '"training"?'),
    ],
)
def test_a_value_not_in_the_list_gets_did_you_mean(cli, argv: list[str], hint: str) -> None:
    assert _one_error(cli, "recipe", *argv).endswith(hint)


def test_a_mistyped_command_gets_did_you_mean(cli) -> None:
    assert _one_error(cli, "recipes").endswith('did you mean "recipe"?')


def test_a_profile_without_its_name_shows_the_form_with_an_example(cli) -> None:
    line = _one_error(cli, "recipe", *AKS, "--profile", "operator-managed")
    assert "name=value" in line and "for example gpuStack=operator-managed" in line


def test_verify_of_a_missing_directory_says_it_does_not_exist(cli, tmp_path: Path) -> None:
    line = _one_error(cli, "verify", str(tmp_path / "missing-dir"))
    assert "does not exist" in line and "is not a bundle directory" not in line


@pytest.mark.parametrize(
    ("flag", "dump", "belongs"),
    [
        ("--aks-gpu-pools", "oke-addons-active.json", "which --oke-addons reads"),
        ("--aks-gpu-pools", "oke-legacy-daemonset-active.json", "--oke-legacy-daemonset reads"),
        ("--oke-addons", "aks-pools-managed.json", "which --aks-gpu-pools reads"),
        ("--oke-legacy-daemonset", "oke-addons-active.json", "which --oke-addons reads"),
    ],
)
def test_a_dump_given_to_the_wrong_flag_names_the_flag_it_belongs_to(
    cli, tmp_path: Path, flag: str, dump: str, belongs: str
) -> None:
    out = tmp_path / "s.yaml"
    line = _one_error(cli, "snapshot", "--no-cluster", flag, str(CAPTURES / dump), "-o", str(out))
    assert line.endswith(belongs), line
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["bundle"],  # argparse: a required option missing
        ["snapshot", "--bogus"],  # argparse: an unknown option
        ["recipe", "--service", "aks", "--nodes", "x"],
        ["recipe", *AKS, "--profile", "a=b=c"],
        ["verify", "nowhere"],
    ],
)
def test_every_error_line_has_one_prefix_style(cli, argv: list[str]) -> None:
    _one_error(cli, *argv)
