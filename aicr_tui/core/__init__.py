"""The aicr-tui domain library.

Everything here is UI-free: no textual, rich or screens imports, and cloud SDKs are only
imported inside the functions that use them. The CLI and the wizard are two faces over
these calls.

``__version__`` is the installed distribution's version
(:func:`importlib.metadata.version`, which the build writes from ``pyproject.toml``),
read on first use.
"""

from __future__ import annotations

_UNKNOWN = "0.0.0+unknown"  # a source tree that was never installed


def _installed_version() -> str:
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
