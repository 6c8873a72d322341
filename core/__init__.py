"""The aicr-tui domain library.

Everything here is UI-free: no textual, rich or screens imports, and cloud SDKs are only
imported inside the functions that use them. The CLI and the wizard are two faces over
these calls.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("aicr-tui")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"
