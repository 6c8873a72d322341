"""The validation workloads' Kubernetes manifests, kept as YAML files under ``manifests/``.

Each file is one manifest as a platform engineer would write it, with ``@NAME@`` slots where a
run puts its values (namespace, labels, nodes, image, sizes). Filling is done on the loaded
data, not the text (:func:`aicr_tui.core.foundation.slots.fill_data`): a whole-value slot takes the value
as it is (a list of node names, a mapping of limits, a number), and exactly the file's slots
must be given, so a missing or left-over slot is an error, never a blank.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from aicr_tui.core.foundation import slots
from aicr_tui.core.foundation.errors import internal

# Beside this module, as the package data pyproject ships (``aicr_tui.core.validation.checks/manifests/*``).
MANIFESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "manifests")


@cache
def load(name: str) -> Any:
    """The loaded template ``manifests/<name>.yaml`` (shared: :func:`manifest` copies it)."""
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    if name != os.path.basename(name) or name.startswith("."):
        raise internal(f"manifest template name {name!r} is not a file name")
    with open(os.path.join(MANIFESTS, f"{name}.yaml"), encoding="utf-8") as handle:
        doc = load_yaml_plain(handle.read(), f"manifests/{name}.yaml")
    if not isinstance(doc, dict):
        raise internal(f"manifests/{name}.yaml: expected one mapping")
    return doc


def names() -> list[str]:
    """Every manifest template shipped (for the test that fills each one)."""
    return sorted(f[: -len(".yaml")] for f in os.listdir(MANIFESTS) if f.endswith(".yaml"))


def manifest(name: str, /, **values: Any) -> dict[str, Any]:
    """A fresh manifest from ``manifests/<name>.yaml`` with exactly its slots filled."""
    filled: dict[str, Any] = slots.fill_data(f"manifests/{name}.yaml", load(name), **values)
    return filled


__all__ = ["MANIFESTS", "load", "manifest", "names"]
