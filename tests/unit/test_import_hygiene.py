"""Import hygiene, checked in fresh interpreters so nothing the test runner loaded can hide a leak.

- Importing every module under ``aicr_tui/core/`` loads none of textual, rich or screens (core is
  UI-free) and none of the cloud SDKs (they are imported inside the functions that use them).
- ``aicr-tui snapshot --no-cluster`` runs without importing kubernetes, azure or oci.
"""

from __future__ import annotations

import json
import pkgutil
import sys
from pathlib import Path

import aicr_tui.core
from tests.conftest import REPO, SAMPLES, run_captured

UI_PACKAGES = ("textual", "rich", "aicr_tui.screens")
SDK_PACKAGES = ("kubernetes", "azure", "oci")


def core_modules() -> list[str]:
    return sorted(
        info.name for info in pkgutil.walk_packages(aicr_tui.core.__path__, prefix="aicr_tui.core.")
    )


def run_python(code: str) -> dict[str, list[str]]:
    result = run_captured([sys.executable, "-c", code], cwd=REPO)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    loaded: dict[str, list[str]] = json.loads(last)
    return loaded


def loaded_roots(roots: tuple[str, ...]) -> str:
    return (
        "sorted({r for m in list(sys.modules) for r in "
        + repr(list(roots))
        + " if m == r or m.startswith(r + '.')})"
    )


def test_core_modules_are_discovered() -> None:
    names = core_modules()
    for expected in (
        "aicr_tui.core.foundation.errors",
        "aicr_tui.core.foundation.fileio",
        "aicr_tui.core.foundation.yamlio",
        "aicr_tui.core.documents.snapshot",
        "aicr_tui.core.foundation.versions",
        "aicr_tui.core.recipe.constraints",
        "aicr_tui.core.capture.aks_pools",
        "aicr_tui.core.capture.oke_addons",
        "aicr_tui.core.capture.oke_legacy",
        "aicr_tui.core.capture.capture",
    ):
        assert expected in names


def test_importing_every_core_module_loads_no_ui_and_no_cloud_sdk() -> None:
    modules = core_modules()
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps({{'ui': {loaded_roots(UI_PACKAGES)}, "
        f"'sdk': {loaded_roots(SDK_PACKAGES)}}}))\n"
    )
    loaded = run_python(code)
    assert loaded["ui"] == [], f"core imports UI packages: {loaded['ui']}"
    assert loaded["sdk"] == [], f"core imports cloud SDKs at module level: {loaded['sdk']}"


def test_snapshot_no_cluster_imports_no_cloud_sdk(tmp_path: Path) -> None:
    out = tmp_path / "snap.yaml"
    captures = SAMPLES / "captures"
    argv = [
        "snapshot",
        "--no-cluster",
        "--aks-gpu-pools",
        str(captures / "aks-pools-install.json"),
        "--oke-addons",
        str(captures / "oke-addons-active.json"),
        "--oke-legacy-daemonset",
        str(captures / "oke-legacy-daemonset-active.json"),
        "-o",
        str(out),
    ]
    code = (
        "import json, sys\n"
        "from aicr_tui.cli import main\n"
        f"rc = main({argv!r})\n"
        f"print(json.dumps({{'rc': [str(rc)], 'sdk': {loaded_roots(SDK_PACKAGES)}, "
        f"'ui': {loaded_roots(UI_PACKAGES)}}}))\n"
    )
    loaded = run_python(code)
    assert loaded["rc"] == ["0"]
    assert out.read_text().startswith("kind: Snapshot\n")
    assert loaded["sdk"] == [], f"snapshot --no-cluster imported {loaded['sdk']}"
    assert loaded["ui"] == [], f"snapshot --no-cluster imported {loaded['ui']}"
