"""The user's cache directory for aicr-tui: ``platformdirs.user_cache_dir("aicr-tui",
appauthor=False)`` (``$XDG_CACHE_HOME/aicr-tui`` or ``~/.cache/aicr-tui`` on Linux, the
platform's own elsewhere), or None when there is no home directory to put it in."""

from __future__ import annotations

APP_NAME = "aicr-tui"


def user_cache_dir() -> str | None:
    """This user's cache directory for aicr-tui, or None when there is no home directory
    to put it in."""
    import platformdirs

    try:
        return platformdirs.user_cache_dir(APP_NAME, appauthor=False)
    except RuntimeError:  # platformdirs found no absolute home directory
        return None


def user_state_dir() -> str | None:
    """This user's state directory for aicr-tui (``$XDG_STATE_HOME/aicr-tui`` or
    ``~/.local/state/aicr-tui`` on Linux), or None when there is no home directory."""
    import platformdirs

    try:
        return platformdirs.user_state_dir(APP_NAME, appauthor=False)
    except RuntimeError:
        return None
