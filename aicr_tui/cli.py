"""``aicr-tui`` command line: the wizard with no arguments, subcommands for scripts and CI.

Each subcommand lives in ``aicr_tui/commands/<name>.py`` and exposes ``register(sub)``
(adds its argparse parser) and ``run(args) -> int``. Command modules import ``core``
lazily inside ``run`` so that ``--help`` and unrelated commands stay fast, and a command
line that names a subcommand registers (imports) only that one.

Every failure is one line on stderr and an exit code: 2 for invalid input (argparse
errors included), the upstream code table for structured errors, never a traceback.
Warnings print only when the command succeeds; notes that are not warnings need ``-v``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import re
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

# Ctrl-C before main() ends the start-up quietly: aicr_tui/__init__.py installs the handler.
from aicr_tui import is_the_program, quiet_interrupt

COMMANDS: dict[str, str] = {
    "snapshot": "aicr_tui.commands.snapshot",
    "recipe": "aicr_tui.commands.recipe",
    "query": "aicr_tui.commands.query",
    "bundle": "aicr_tui.commands.bundle",
    "verify": "aicr_tui.commands.verify",
    "validate": "aicr_tui.commands.validate",
    "serve": "aicr_tui.commands.serve",
    "diff": "aicr_tui.commands.diff",
    "mirror": "aicr_tui.commands.mirror",
    "upgrade-check": "aicr_tui.commands.upgrade_check",
}


# Two or three command lines per subcommand, shown under its --help (the shipped samples,
# so each runs as written from a checkout).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "snapshot": (
        "aicr-tui snapshot -o snapshot.yaml",
        "aicr-tui snapshot -k ~/.kube/config --aks-gpu-pools pools.json -o snapshot.yaml",
        "aicr-tui snapshot --no-cluster --oke-addons addons.json -o snapshot.yaml",
    ),
    "recipe": (
        "aicr-tui recipe --service aks --accelerator h100 --os ubuntu --intent training",
        "aicr-tui recipe --service aks --accelerator h100 --os ubuntu --intent training "
        "--profile gpuStack=operator-managed -o recipe.yaml",
        "aicr-tui recipe --snapshot snapshot.yaml --intent training -o recipe.yaml",
    ),
    "query": (
        "aicr-tui query --service aks --accelerator h100 --os ubuntu --intent training "
        "--selector components.gpu-operator.values.driver.enabled",
        "aicr-tui query --service oke --accelerator gb200 --os ol --intent training "
        "--selector deploymentOrder",
    ),
    "bundle": (
        "aicr-tui bundle -r recipe.yaml -o bundle --accelerated-node-toleration "
        "nvidia.com/gpu:NoSchedule",
        "aicr-tui bundle -r recipe.yaml -o bundle --deployer helmfile "
        "--accelerated-node-toleration nvidia.com/gpu:NoSchedule",
        "aicr-tui bundle -r recipe.yaml -o bundle --set gpuoperator:enabled=false",
    ),
    "verify": (
        "aicr-tui verify bundle",
        "aicr-tui verify bundle --charts ./charts",
    ),
    "validate": (
        "aicr-tui validate -r recipe.yaml -s snapshot.yaml -k ~/.kube/config -o report.json",
        "aicr-tui validate -r recipe.yaml --phase readiness --no-cluster -s snapshot.yaml",
        "aicr-tui validate --replay aicr_tui/recipes/samples/validation/aks-h100-training-passed.jsonl",
    ),
    "serve": (
        "aicr-tui serve",
        "aicr-tui serve --port 8080 --no-demo",
    ),
    "diff": (
        "aicr-tui diff qualified.yaml today.yaml",
        "aicr-tui diff qualified.yaml -k ~/.kube/config -r recipe.yaml --fail-on-drift",
        "aicr-tui diff qualified.yaml today.yaml -o json",
    ),
    "mirror": (
        "aicr-tui mirror list bundle",
        "aicr-tui mirror list recipe.yaml -o hauler --output-file hauler.yaml",
    ),
    "upgrade-check": (
        "aicr-tui upgrade-check --from bundle --to recipe.yaml",
        "aicr-tui upgrade-check -k ~/.kube/config --to recipe.yaml -o json",
        "aicr-tui upgrade-check --from recipe.yaml --service aks --accelerator h100 --os ubuntu "
        "--intent training --profile gpuStack=operator-managed",
    ),
}

VERBOSE_HELP = "also print notes that are not warnings (derived criteria, files written)"


class HelpWithExamples(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal as usual; an ``examples:`` epilog kept line for
    line, so each example stays one command line that can be copied."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are a single line and exit 2, in the prefix
    style of every other error (``aicr-tui: error: [INVALID_REQUEST] ...``), with a "did
    you mean" for a mistyped option or choice."""

    _words: list[str] = []  # the words this parser was last asked to parse

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        from aicr_tui.core.foundation.textsafe import safe_text

        where = self.prog.removeprefix("aicr-tui").strip()
        message = self._real_cause(" ".join(message.split()))
        text = message + self._suggestion(message)
        line = f"{where}: {text}" if where else text
        sys.stderr.write(f"aicr-tui: error: [INVALID_REQUEST] {safe_text(line)}\n")
        raise SystemExit(2)

    def _options(self) -> list[str]:
        """Every option string of this parser and of its subcommands."""
        found: list[str] = []
        for action in self._actions:
            found.extend(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found.extend(sub._options() if isinstance(sub, OneLineParser) else [])
        return found

    def _real_cause(self, message: str) -> str:
        """A mistyped option before a value (``recipe --servce aks``) leaves the value to a
        positional (``recipe``'s ACTION), whose "invalid choice" hides the typo: name the
        unknown option instead, as argparse does when no positional is in the way."""
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice is None or choice.group(1) not in self._words:
            return message
        known = set(self._options()) | {o for a in self._actions for o in a.option_strings}
        before = self._words[: self._words.index(choice.group(1))]
        unknown = [
            w
            for w in before
            if w.startswith("--") and w != "--" and w.split("=", 1)[0] not in known
        ]
        return f"unrecognized arguments: {' '.join(unknown)}" if unknown else message

    def _suggestion(self, message: str) -> str:
        from aicr_tui.core.foundation.names import did_you_mean

        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice is not None:
            offered = re.findall(r"'([^']*)'", choice.group(2))
            return did_you_mean(choice.group(1), offered)
        unknown = re.match(r"unrecognized arguments: (.*)$", message)
        if unknown is not None:
            # Compared without the dashes every option shares, which would make any two close.
            names = sorted({o.removeprefix("--") for o in self._options()})
            for word in unknown.group(1).split():
                if word.startswith("--"):
                    hint = did_you_mean(word.split("=", 1)[0].removeprefix("--"), names)
                    if hint:
                        return hint.replace('"', '"--', 1)
        return ""


def _named_command(argv: Sequence[str] | None) -> str | None:
    """The subcommand ``argv`` names, when its first positional word is one (top-level
    options are flags, so that word is the command); otherwise None."""
    if argv is None:
        return None
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full parser, or, when ``argv`` names a subcommand, one with only that command
    (same parser, same messages: its help and errors are the subcommand's own)."""
    named = _named_command(argv)
    parser = OneLineParser(
        prog="aicr-tui",
        description=(
            "Build, qualify, bundle and validate GPU cluster recipes for AKS and OKE. "
            "With no COMMAND, aicr-tui opens the wizard in this terminal (--demo: on the "
            "shipped sample captures); a COMMAND runs one step without it."
        ),
        epilog="examples:\n  aicr-tui --demo\n  aicr-tui recipe --help",
        formatter_class=HelpWithExamples,
        usage="%(prog)s [-h] [--demo] [--version] [-v] [COMMAND ...]   (no COMMAND: the wizard)",
    )
    parser.add_argument(
        "--demo", action="store_true", help="open the wizard on the shipped sample captures"
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser, metavar="COMMAND")
    for name, module_path in COMMANDS.items():
        if named is not None and name != named:
            continue
        importlib.import_module(module_path).register(sub)
    for name, command in sub.choices.items():
        examples = EXAMPLES.get(name, ())
        if examples:
            command.epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
            command.formatter_class = HelpWithExamples
        # SUPPRESS: a subcommand's default must not reset `aicr-tui -v recipe …`.
        command.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
        )
    return parser


class Terminated(BaseException):
    """SIGTERM, raised where the process is so staging directories and temporary files are
    removed on the way out, as for Ctrl-C."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
        installed = True
    except ValueError:  # not the main thread (only it may handle signals): nothing to undo
        installed = False
    if not installed:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


NO_TERMINAL = (
    "aicr-tui: error: [INVALID_REQUEST] the wizard needs a terminal but {which}; "
    "connect with `ssh -t`, or run a subcommand (aicr-tui --help lists them)"
)


def _no_terminal() -> str | None:
    """Why the wizard cannot run here (stdin or stdout is a pipe or a file), or None. A
    wizard given a driver of its own (``TEXTUAL_DRIVER``: ``serve`` runs each browser
    session's wizard on pipes through Textual's web driver) needs no terminal."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return None
    missing = [
        name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not _tty(stream)
    ]
    if not missing:
        return None
    if len(missing) > 1:
        return "stdin and stdout are not terminals"
    return f"{missing[0]} is not a terminal"


def _tty(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # closed or replaced stream
        return False


EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    # main() with no argv is the process itself (the console script, python -m aicr_tui)
    code = _main(argv)
    if argv is None and code == EXIT_INTERRUPTED and is_the_program():
        _end_interrupted()
    return code


def _end_interrupted() -> NoReturn:
    """End the process with status 130 now. A KeyboardInterrupt that passed through code
    run by exec() (dataclass and namedtuple creation do that on import) makes CPython 3.11
    end the process by SIGINT at exit whatever status it was given; the clean-ups have run
    already (the interrupt unwound), so the exit handlers run and the process leaves."""
    import atexit

    signal.signal(signal.SIGINT, quiet_interrupt)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def _main(argv: Sequence[str] | None) -> int:
    is_process = argv is None
    if is_process and signal.getsignal(signal.SIGINT) is quiet_interrupt:
        # From here Ctrl-C unwinds (KeyboardInterrupt), so staging files are removed.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(words)
        args = parser.parse_args(words)
        if args.command is None and not args.version and (reason := _no_terminal()):
            sys.stderr.write(NO_TERMINAL.format(which=reason) + "\n")
            return 2
        ends_process = is_process and args.command not in (None, "serve")
        try:
            return _run(args)
        finally:
            if ends_process:
                _skip_exit_collection()
    except KeyboardInterrupt:  # during parsing or a command's imports
        sys.stderr.write("aicr-tui: interrupted\n")
        return EXIT_INTERRUPTED
    finally:
        if is_process and is_the_program():
            # Interpreter exit has nothing left to unwind: Ctrl-C there ends quietly too.
            signal.signal(signal.SIGINT, quiet_interrupt)


def _skip_exit_collection() -> None:
    """A one-shot command's process ends right after it: CPython's last full garbage
    collection at exit would walk every object still alive (the modules, the catalog, the
    plan; 22M instructions on a bundle, a twentieth of the command) only for their memory
    to go back to the system. Frozen objects are left out of that walk. Only objects in
    reference cycles are affected (others are freed as the modules are cleared, as before),
    and nothing of ours relies on a cycle's finaliser: outputs are closed and renamed into
    place, and the standard streams are flushed at exit regardless."""
    gc.freeze()


def _run(args: argparse.Namespace) -> int:
    from aicr_tui.commands._common import drop_warnings, flush_warnings, set_verbose
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.services.errors import error_line

    set_verbose(bool(getattr(args, "verbose", False)))
    if args.version:
        from aicr_tui.core import __version__

        print(f"aicr-tui {__version__}")
        return 0
    try:
        if args.command is None:
            from aicr_tui.app import run_wizard

            return run_wizard(demo=args.demo)
        module = importlib.import_module(COMMANDS[args.command])
        if args.command == "serve":  # a server: its own process handling
            return int(module.run(args))
        with _sigterm_unwinds():
            code = int(module.run(args))
        flush_warnings()
        return code
    except AicrError as err:
        drop_warnings()
        # An error may quote a document (a name, a value): one terminal-safe line.
        sys.stderr.write(f"aicr-tui: error: {error_line(err)}\n")
        return err.exit_code
    except KeyboardInterrupt:
        drop_warnings()
        sys.stderr.write("aicr-tui: interrupted\n")
        return EXIT_INTERRUPTED
    except Terminated:
        drop_warnings()
        sys.stderr.write("aicr-tui: terminated\n")
        return 143
    except OSError as exc:  # an OS error no boundary named: the environment's, not a bug
        drop_warnings()
        sys.stderr.write(f"aicr-tui: error: {error_line(exc)}\n")
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last line of defence: one line, never a traceback
        drop_warnings()
        sys.stderr.write(f"aicr-tui: error: {error_line(exc)}\n")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
