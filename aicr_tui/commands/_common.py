"""Helpers shared by the subcommands: output to ``-o`` or stdout, diagnostics to stderr."""

from __future__ import annotations

import sys


def emit(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` atomically, or to stdout when no file is named."""
    if output and output != "-":
        from core.foundation.fileio import atomic_write_text

        atomic_write_text(output, text)
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:  # stdout on a full disk or a dead device: still one line
            from core.foundation.fileio import output_error

            raise output_error("<stdout>", exc, "standard output") from exc


def warn(message: str) -> None:
    sys.stderr.write(f"aicr-tui: warning: {' '.join(message.split())}\n")


def info(message: str) -> None:
    sys.stderr.write(f"aicr-tui: {message}\n")
