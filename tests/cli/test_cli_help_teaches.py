"""Help that teaches (issue 34, item 6): every subcommand's --help has a description and two
or three examples that parse; the top-level usage says that no command opens the wizard;
metavars say what they are (``-k KUBECONFIG``, never ``-k K``)."""

from __future__ import annotations

import re
import shlex

import pytest

from aicr_tui.cli import COMMANDS, EXAMPLES, build_parser
from tests.conftest import REPO


def _help(cli, *argv: str) -> str:
    res = cli(*argv, "--help", env={"PYTHONPATH": str(REPO), "COLUMNS": "100"})
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_subcommand_help_has_a_description_and_examples(cli, command: str) -> None:
    text = _help(cli, command)
    usage, _, rest = text.partition("\n\n")
    description = rest.split("\n\n", 1)[0]
    assert not description.startswith(("options:", "positional")), text[:400]
    assert len(description.split()) >= 8, description
    examples = text.split("examples:\n", 1)[1].splitlines()
    shown = [line.strip() for line in examples if line.startswith("  aicr-tui ")]
    assert 2 <= len(shown) <= 3, shown


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_example_parses(command: str) -> None:
    for example in EXAMPLES[command]:
        words = shlex.split(example)[1:]
        args = build_parser(words).parse_args(words)
        assert args.command == command


def test_top_level_usage_says_no_command_opens_the_wizard(cli) -> None:
    text = _help(cli)
    assert text.startswith("usage: ")
    usage = text.split("\n\n", 1)[0]
    assert "no COMMAND: the wizard" in usage
    assert "With no COMMAND, aicr-tui opens the wizard" in " ".join(text.split())


@pytest.mark.parametrize("command", list(COMMANDS))
def test_metavars_say_what_they_are(cli, command: str) -> None:
    text = _help(cli, command)
    single = re.findall(r"(-[-\w]+) ([A-Z])\b(?![:=\w])", text)
    assert not single, single
