"""The aicr-tui domain library.

Everything here is UI-free: no textual, rich or screens imports, and cloud SDKs are only
imported inside the functions that use them. The CLI and the wizard are two faces over
these calls.
"""

__version__ = "0.1.0"
