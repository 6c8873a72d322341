"""Bundle, face against face: ``aicr-tui bundle`` in a subprocess and the wizard's bundle
step (its qualified recipe in memory, the overrides editor's lines planned by
``aicr_tui.core.services.bundle.preview`` and written by ``write``, as the preview screen's workers
do) write the same files with the same bytes, or refuse with the same line.

The CLI's recipe comes from ``aicr-tui recipe -o`` (a file, as a user passes it); the
wizard's is the verdict's recipe object: the comparison also covers that round trip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.bundler import refusal
from aicr_tui.core.bundler.deployers.config import deployer_config
from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.services.bundle import default_override_lines, preview, write
from aicr_tui.core.services.errors import error_line
from aicr_tui.screens.state import WizardServices
from tests.conftest import SAMPLES, run_cli

SNAPSHOT = SAMPLES / "snapshots" / "aks-h100-install.yaml"
AKS = {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training"}
KEYED = "nvidia.com/gpu:NoSchedule"

# name: (deployer, CLI flags, the same overrides as editor lines)
CASES: dict[str, tuple[str, list[str], str]] = {
    "helm-aks-default-lines": (
        "helm",
        ["--accelerated-node-toleration", KEYED],
        default_override_lines("aks"),
    ),
    "helm-set-and-dynamic": (
        "helm",
        [
            "--accelerated-node-toleration",
            KEYED,
            "--set",
            "gpu-operator:driver.version=580.95.05",
            "--dynamic",
            "gpu-operator:driver.repository",
        ],
        f"--accelerated-node-toleration {KEYED}\n"
        "--set gpu-operator:driver.version=580.95.05\n"
        "# a comment line is ignored\n"
        "--dynamic=gpu-operator:driver.repository\n",
    ),
    "argocd-helm": (
        "argocd-helm",
        ["--accelerated-node-toleration", KEYED, "--set", "gpu-operator:driver.enabled=false"],
        f"--accelerated-node-toleration {KEYED}\ngpu-operator:driver.enabled=false\n",
    ),
}


@pytest.fixture(scope="module")
def recipes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """The same qualification in both faces: a recipe file (CLI) and the verdict's recipe."""
    folder = tmp_path_factory.mktemp("recipe")
    recipe_file = folder / "recipe.yaml"
    flags = [part for key, value in AKS.items() for part in (f"--{key}", value)]
    proc = run_cli("recipe", *flags, "--snapshot", str(SNAPSHOT), "-o", str(recipe_file))
    assert proc.returncode == 0, proc.stderr
    verdict = WizardServices().qualify(dict(AKS), None, load_snapshot(str(SNAPSHOT)), []).verdict
    assert verdict.recipe is not None
    return recipe_file, verdict.recipe


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_and_wizard_write_the_same_bundle(name: str, recipes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe_file, recipe = recipes
    deployer, flags, lines = CASES[name]
    cli_out, wizard_out = tmp_path / "cli", tmp_path / "wizard"
    proc = run_cli("bundle", "-r", str(recipe_file), "-d", deployer, *flags, "-o", str(cli_out))
    assert proc.returncode == 0, proc.stderr

    shown = preview(recipe, lines, deployer=deployer_config(deployer), feedback_cache={})
    assert shown.plan is not None and not shown.plan.errors and not shown.rejected, shown.error
    write(shown.plan, wizard_out)

    cli_files, wizard_files = _tree(cli_out), _tree(wizard_out)
    assert sorted(cli_files) == sorted(wizard_files)
    for path, data in cli_files.items():
        assert wizard_files[path] == data, path
    assert "recipe.yaml" in cli_files and len(cli_files) > 10


def test_both_refuse_a_wildcard_aks_bundle_with_the_same_line(recipes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No toleration on AKS: the wildcard default is refused, nothing written, by both."""
    recipe_file, recipe = recipes
    cli_out, wizard_out = tmp_path / "cli", tmp_path / "wizard"
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(cli_out))
    assert proc.returncode == 2 and not cli_out.exists()

    shown = preview(recipe, "", deployer=deployer_config("helm"))
    assert shown.plan is not None and shown.plan.errors
    with pytest.raises(Exception) as refused:
        write(shown.plan, wizard_out)
    assert not wizard_out.exists()
    errors = [x for x in proc.stderr.splitlines() if x.startswith("aicr-tui: error:")]
    assert errors == [f"aicr-tui: error: {error_line(refused.value)}"]
    assert error_line(refused.value) == error_line(refusal(shown.plan.errors))
    assert "CheckWildcardAcceleratedToleration" in errors[0]
