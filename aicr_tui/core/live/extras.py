"""The optional extra that installs each cloud SDK.

``pip install aicr-tui`` alone runs the demo, every offline command and the wizard on
files; a live capture or a validation against a cluster needs its SDK, installed by one
extra (``aicr-tui[kubernetes]``, ``[azure]``, ``[oci]``, or ``[live]`` for all three). A
missing SDK is one line naming the extra (INVALID_REQUEST, exit 2), never a traceback.
"""

from __future__ import annotations

from importlib.util import find_spec

from aicr_tui.core.foundation.errors import invalid

# extra -> (what it is called in the message, the top-level modules it installs)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "kubernetes": ("the Kubernetes client", ("kubernetes", "urllib3", "yaml")),
    "azure": ("the Azure SDK", ("azure.identity", "azure.mgmt.containerservice")),
    "oci": ("the OCI SDK", ("oci",)),
}


def require_extra(extra: str) -> None:
    """Raise the one-line install hint when a module of ``extra`` is not installed."""
    what, modules = EXTRAS[extra]
    for module in modules:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package is missing
            found = False
        if not found:
            raise invalid(
                f"this command needs {what} ({module}), which is not installed",
                remedy=f"install it with: pip install 'aicr-tui[{extra}]'",
            )
