"""The user's cache directory for aicr-tui: ``platformdirs.user_cache_dir("aicr-tui",
appauthor=False)``, without importing platformdirs where its answer is plain.

Every one-shot command looks this directory up for the catalog cache, and importing
platformdirs cost about 3% of such a command (11M instructions on ``recipe``). On Linux and
macOS its answer (platformdirs 4.14, pinned in constraints.txt) is:

- ``$XDG_CACHE_HOME/aicr-tui`` when that variable holds an absolute path (a relative or
  empty one is ignored, as the XDG spec says; macOS honours it too);
- else ``$HOME/.cache/aicr-tui`` (Linux) or ``$HOME/Library/Caches/aicr-tui`` (macOS), the
  home expanded as ``os.path.expanduser`` does, when ``$HOME`` is absolute.

Everything else is platformdirs' own answer: Windows (the known-folder lookup), Android,
iOS and other Unixes, and a ``$HOME`` that is unset or relative (platformdirs then asks
the password database). tests/unit/test_cache_dir.py compares the two.
"""

from __future__ import annotations

import os
import sys

APP_NAME = "aicr-tui"
_HOME_CACHE = {"linux": "~/.cache", "darwin": "~/Library/Caches"}


def user_cache_dir() -> str | None:
    """This user's cache directory for aicr-tui, or None when there is no home directory
    to put it in."""
    plain = plain_cache_dir(sys.platform)
    if plain is not None:
        return plain
    import platformdirs

    try:
        return platformdirs.user_cache_dir(APP_NAME, appauthor=False)
    except RuntimeError:  # platformdirs found no absolute home directory
        return None


def plain_cache_dir(platform: str) -> str | None:
    """platformdirs' answer on ``platform`` where it follows from the environment alone;
    None where only platformdirs can say."""
    base = _HOME_CACHE.get(platform)
    if base is None or _android():
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP_NAME)
    home = os.environ.get("HOME")
    if home is None or not home.startswith("/"):
        return None
    return os.path.join(os.path.expanduser(base), APP_NAME)


def _android() -> bool:
    """What platformdirs takes for a possible Android app (it checks that first)."""
    return hasattr(sys, "getandroidapilevel") or (
        os.environ.get("ANDROID_DATA") == "/data" and os.environ.get("ANDROID_ROOT") == "/system"
    )
