"""The one line a face shows for a failure.

``aicr-tui`` prints it on stderr after ``aicr-tui: error:``; the wizard shows it inline
where the action was asked for. Both call :func:`error_line`, so a refused file, an OS
error or a bug reads the same in either face.
"""

from __future__ import annotations

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.textsafe import safe_text


def error_line(exc: BaseException) -> str:
    """``[CODE] message[: cause]`` for ``exc``, terminal-safe, on one line.

    An :class:`AicrError` renders itself; an OS error no boundary named is the
    environment's (``[INVALID_REQUEST]`` with the path and cause, never ``[INTERNAL]``);
    anything else is a bug, ``[INTERNAL] unexpected failure: <type>: <message>``.
    """
    if isinstance(exc, AicrError):
        return safe_text(exc.render())
    if isinstance(exc, OSError):
        # fileio is imported only when an OS error is shown: the wizard imports this
        # module on start-up and needs none of fileio until then.
        from aicr_tui.core.foundation.fileio import describe_os_error

        return safe_text(f"[INVALID_REQUEST] {describe_os_error(exc)}")
    return safe_text(
        " ".join(f"[INTERNAL] unexpected failure: {type(exc).__name__}: {exc}".split())
    )
