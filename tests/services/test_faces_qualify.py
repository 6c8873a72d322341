"""Qualify, face against face: ``aicr-tui recipe --explain`` in a subprocess and the
wizard's qualify call (``WizardServices().qualify``, what the recipe screen runs) on the same
criteria, profile and capture reach the same verdict for the same reasons.

Compared: the CLI's verdict table (criteria, profile, every constraint with its status,
expected and observed value, the result line) against the same table made from the
wizard's verdict; the CLI's exit code and its one error line against the wizard's verdict
and ``error_line`` of its error; and, when qualified, the recipe document itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.commands.recipe import format_verdict
from aicr_tui.core.documents.recipe_result import render_recipe
from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.services.errors import error_line
from aicr_tui.screens.state import WizardServices, verdict_checks
from tests.conftest import SAMPLES, run_cli

SNAPSHOTS = SAMPLES / "snapshots"
AKS = {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training"}
OKE = {"service": "oke", "accelerator": "gb200", "os": "ol", "intent": "training"}

# name: (criteria the user chose, gpuStack value or None, snapshot, qualifies)
CASES: dict[str, tuple[dict[str, str], str | None, str | None, bool]] = {
    "aks-install": (AKS, None, "aks-h100-install.yaml", True),
    "aks-none-refused": (AKS, None, "aks-h100-none.yaml", False),
    "aks-none-operator-managed": (AKS, "operator-managed", "aks-h100-none.yaml", True),
    "aks-mixed-refused": (AKS, "azure-managed", "aks-h100-mixed.yaml", False),
    "oke-active": (OKE, None, "oke-gb200-active.yaml", True),
    "oke-deleting": (OKE, None, "oke-gb200-deleting.yaml", False),
    "derived-from-snapshot": ({"intent": "training"}, None, "aks-h100-install.yaml", True),
    "criteria-only": (OKE, None, None, True),
}


def _flags(criteria: dict[str, str], profile: str | None, snapshot: str | None) -> list[str]:
    flags = [part for key, value in criteria.items() for part in (f"--{key}", value)]
    if profile:
        flags += ["--profile", f"gpuStack={profile}"]
    if snapshot:
        flags += ["--snapshot", str(SNAPSHOTS / snapshot)]
    return flags


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_and_wizard_reach_the_same_verdict(name: str, tmp_path: Path) -> None:
    criteria, profile, snapshot_name, qualifies = CASES[name]
    out = tmp_path / "recipe.yaml"
    proc = run_cli("recipe", *_flags(criteria, profile, snapshot_name), "--explain", "-o", str(out))

    from aicr_tui.core.documents.snapshot import load_snapshot

    snapshot = load_snapshot(str(SNAPSHOTS / snapshot_name)) if snapshot_name else None
    selection = f"gpuStack={profile}" if profile else None
    result = WizardServices().qualify(dict(criteria), selection, snapshot, [])
    verdict = result.verdict

    assert verdict.ok is qualifies and (proc.returncode == 0) is qualifies, proc.stderr
    # the same table: every constraint, its status, expected and observed value, the result
    assert proc.stdout == safe_text(format_verdict(verdict), multiline=True)
    assert len(verdict_checks(verdict)) == len(verdict.checks)
    if qualifies:
        assert verdict.recipe is not None
        assert out.read_text() == render_recipe(verdict.recipe, "yaml")
        assert "result: QUALIFIED" in proc.stdout or snapshot_name is None
    else:
        assert verdict.error is not None and not out.exists()
        errors = [x for x in proc.stderr.splitlines() if x.startswith("aicr-tui: error:")]
        assert errors == [f"aicr-tui: error: {error_line(verdict.error)}"]
        assert any(c.status == "failed" for c in verdict_checks(verdict)), "a refusal says why"
