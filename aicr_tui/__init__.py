"""aicr-tui: the CLI entry point, Textual app factory and serve (``aicr_tui.cli``,
``aicr_tui.app``) around the domain library ``aicr_tui.core``, with the wizard's
screens in ``aicr_tui.screens`` and the catalog data in ``aicr_tui/recipes/``.

When this package is imported as the start of the ``aicr-tui`` program (the console script
or ``python -m aicr_tui``), Ctrl-C from here until ``main()`` runs ends the process quietly
with status 130: nothing needs unwinding yet, and a traceback from the middle of an import
is noise. ``main()`` then lets SIGINT unwind as usual (KeyboardInterrupt), so staging files
are removed. A process that merely imports the package (a test run) is left alone.
"""

import os
import signal
import sys


def is_the_program() -> bool:
    """True when the running program is ``aicr-tui``: the console script, or ``python -m
    aicr_tui`` (seen from the original command line, as runpy imports this package before
    it makes ``aicr_tui.__main__`` the main module)."""
    program = sys.modules.get("__main__")
    if os.path.basename(getattr(program, "__file__", None) or "") == "aicr-tui":
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == "aicr_tui" for a, b in zip(argv, argv[1:], strict=False))


def quiet_interrupt(signum: int, frame: object) -> None:
    """Ctrl-C while nothing needs unwinding (imports, interpreter exit): one line, 130."""
    os.write(2, b"aicr-tui: interrupted\n")
    os._exit(130)


if is_the_program():
    signal.signal(signal.SIGINT, quiet_interrupt)
