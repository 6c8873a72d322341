"""Helpers shared by the subcommands: output to ``-o`` or stdout, diagnostics to stderr.

Stderr policy: a failing command prints exactly one line (``aicr-tui: error: …``, written
by ``aicr_tui.cli``), so warnings are held until the command succeeds and then printed;
a failure drops them (``--explain`` and the reports carry the detail). Notes that are not
warnings (what was derived, what was written) print only with ``-v``.
"""

from __future__ import annotations

import sys
from typing import Any

from aicr_tui.core.foundation.textsafe import safe_text

_state: dict[str, bool] = {"verbose": False}
_pending: list[str] = []


def set_verbose(verbose: bool) -> None:
    _state["verbose"] = verbose


def verbose() -> bool:
    return _state["verbose"]


def emit(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` atomically, or to stdout when no file is named."""
    if output and output != "-":
        from aicr_tui.core.foundation.fileio import atomic_write_text

        atomic_write_text(output, text)
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:  # stdout on a full disk or a dead device: still one line
            from aicr_tui.core.foundation.fileio import output_error

            raise output_error("<stdout>", exc, "standard output") from exc


def warn(message: str) -> None:
    """A warning, printed when the command succeeds (a failure prints only its error)."""
    _pending.append(f"aicr-tui: warning: {safe_text(' '.join(message.split()))}\n")


def info(message: str) -> None:
    """A note that is not a warning: printed with ``-v`` only."""
    if _state["verbose"]:
        sys.stderr.write(f"aicr-tui: {safe_text(' '.join(message.split()))}\n")


def done(message: str) -> None:
    """The one-line result of a command that writes files elsewhere (always printed)."""
    sys.stderr.write(f"aicr-tui: {safe_text(' '.join(message.split()))}\n")


def flush_warnings() -> None:
    """Print the held warnings (the command succeeded, or ran and reported its result)."""
    while _pending:
        sys.stderr.write(_pending.pop(0))
    sys.stderr.flush()


def drop_warnings() -> None:
    _pending.clear()


def add_chart_flags(parser: Any) -> None:
    parser.add_argument(
        "--charts",
        action="append",
        default=[],
        metavar="DIR",
        help="chart sources: <component>-<version>/ chart trees or .tgz (repeatable); "
        "default: pull each pin with Helm into the cache",
    )
    parser.add_argument(
        "--pull-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up pulling one chart after this long (default 60)",
    )
