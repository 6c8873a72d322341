"""Bundle defaults a face offers the user before planning, the same for CLI and wizard."""

from __future__ import annotations

# The AKS brief: always bundle with a keyed toleration matching the GPU node taint (a
# wildcard one deadlocks nodewright package pods). The wizard pre-fills this editable line.
AKS_KEYED_TOLERATION = "nvidia.com/gpu:NoSchedule"


def default_override_lines(service: str) -> str:
    """The override-editor lines a bundle for ``service`` starts with ("" for none)."""
    if service == "aks":
        return (
            "# AKS needs a keyed toleration matching the GPU node taint:\n"
            f"--accelerated-node-toleration {AKS_KEYED_TOLERATION}\n"
        )
    return ""
