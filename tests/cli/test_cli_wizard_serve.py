"""`aicr-tui serve`: the textual-serve server is built with the wizard command and localhost."""

from __future__ import annotations

import sys

from aicr_tui.cli import build_parser
from aicr_tui.commands import serve


def parse(*argv):
    return build_parser().parse_args(["serve", *argv])


def test_defaults_bind_localhost_8000():
    server = serve.build_server(parse())
    assert server.host == "127.0.0.1"
    assert server.port == 8000
    # a browser session starts on the shipped samples, not on an empty list (issue 15)
    assert server.command == f"{sys.executable} -m aicr_tui --demo"
    assert serve.build_server(parse("--no-demo")).command == f"{sys.executable} -m aicr_tui"


def test_demo_host_and_port_flags():
    server = serve.build_server(parse("--demo", "--host", "0.0.0.0", "--port", "9001"))
    assert server.host == "0.0.0.0"
    assert server.port == 9001
    assert server.command.endswith("-m aicr_tui --demo")


def test_bad_port_is_one_line_exit_2(cli):
    result = cli("serve", "--port", "70000")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "--port 70000" in result.stderr


def test_serve_help_lists_flags(cli):
    result = cli("serve", "--help")
    assert result.returncode == 0
    for flag in ("--host", "--port", "--demo"):
        assert flag in result.stdout
