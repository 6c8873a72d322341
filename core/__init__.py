"""The aicr-tui domain library.

Everything here is UI-free: no textual, rich or screens imports, and cloud SDKs are only
imported inside the functions that use them. The CLI and the wizard are two faces over
these calls.

``__version__`` is the installed distribution's version (its ``Version:`` metadata header,
which the build writes from ``pyproject.toml``), read on first use. The metadata file is
found the way ``importlib.metadata`` finds it (the first ``aicr_tui-*.dist-info`` or
``.egg-info`` on ``sys.path``) without importing ``importlib.metadata`` itself, whose
imports (email, zipfile, csv) cost a one-shot command more than the rest of its start-up.
"""

from __future__ import annotations

import os
import sys

_DIST = "aicr_tui"  # the normalised distribution name (PEP 503, "-" and "." as "_")
_UNKNOWN = "0.0.0+unknown"  # a source tree that was never installed


def _header_version(path: str) -> str | None:
    """The ``Version:`` header of a core-metadata file (headers end at the first blank line)."""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    return None
                if line.startswith("Version:"):
                    return line[len("Version:") :].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _metadata_file(entry: str, name: str) -> str | None:
    """The metadata file of directory entry ``name`` when it is this distribution's."""
    low = name.lower()
    for suffix, inner in ((".dist-info", "METADATA"), (".egg-info", "PKG-INFO")):
        if low.endswith(suffix):
            if low[: -len(suffix)].split("-", 1)[0].replace(".", "_") != _DIST:
                return None
            path = os.path.join(entry, name)
            return os.path.join(path, inner) if os.path.isdir(path) else path
    return None


def _find_version() -> str | None:
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            meta = _metadata_file(entry or ".", name)
            if meta is not None:
                found = _header_version(meta)
                if found is not None:
                    return found
    return None


def _installed_version() -> str:
    found = _find_version()
    if found is not None:
        return found
    # Nothing readable on sys.path (a zipped install, an unusual layout): the slow lookup.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aicr-tui")
    except PackageNotFoundError:
        return _UNKNOWN


def __getattr__(name: str) -> str:
    if name == "__version__":
        value = _installed_version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
