"""Slurm accounting mode (upstream ADR-016): the one owner of the accounting gates.

Every Slurm recipe carries the three MariaDB components (operator CRDs, operator, the
accounting database instance) whatever the mode; the mode decides whether they install and
whether Slinky runs slurmdbd. Upstream offers ``disabled`` (its default),
``customer-managed`` and ``aicr-provided``; aicr-tui resolves the default only, and records
it in the recipe's ``configuration`` as upstream does.

| mode | slinky-slurm ``accounting.enabled`` | the three MariaDB components |
|---|---|---|
| ``disabled`` | false | ``install: false`` (in the recipe, rendered nowhere) |
"""

from __future__ import annotations

from typing import Any

from aicr_tui.core.documents.recipe_result import ComponentRef
from aicr_tui.core.foundation.tree import deep_merge

SLURM_PLATFORM = "slurm"
DEFAULT_MODE = "disabled"
SLINKY_SLURM = "slinky-slurm"
MARIADB_COMPONENTS = ("mariadb-operator-crds", "mariadb-operator", "slurm-accounting-mariadb")


def accounting_configuration(platform: str | None) -> dict[str, Any] | None:
    """The recipe's ``configuration`` for a Slurm recipe (``None`` for any other)."""
    if platform != SLURM_PLATFORM:
        return None
    return {"slurm": {"accounting": {"mode": DEFAULT_MODE}}}


def apply_accounting_mode(
    refs: dict[str, ComponentRef], platform: str | None
) -> dict[str, ComponentRef]:
    """The derived gates of the default mode on a Slurm recipe's components (``refs``
    unchanged for any other platform)."""
    if platform != SLURM_PLATFORM:
        return refs
    out = dict(refs)
    gates: dict[str, dict[str, Any]] = {SLINKY_SLURM: {"accounting": {"enabled": False}}}
    gates.update({name: {"install": False} for name in MARIADB_COMPONENTS})
    for name, gate in gates.items():
        ref = out.get(name)
        if ref is not None:
            out[name] = ref.model_copy(update={"overrides": deep_merge(ref.overrides, gate)})
    return out


__all__ = [
    "DEFAULT_MODE",
    "MARIADB_COMPONENTS",
    "accounting_configuration",
    "apply_accounting_mode",
]
