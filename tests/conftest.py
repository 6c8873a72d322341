"""Shared fixtures: the repository paths and a runner for the installed ``aicr-tui``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
RECIPES = REPO / "aicr_tui" / "recipes"
SAMPLES = RECIPES / "samples"
TEST_DATA = REPO / "tests" / "data"
CLUSTER_TESTS = REPO / "tests" / "cluster"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-cluster",
        action="store_true",
        default=False,
        help="collect tests/cluster, the tier that needs `make cluster-up` (make test-cluster)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``tests/cluster`` needs a running control plane: a run over ``tests`` (``make test``)
    leaves it out unless ``--run-cluster`` is given; naming ``tests/cluster`` runs it."""
    if collection_path == CLUSTER_TESTS and not config.getoption("--run-cluster"):
        return True
    return None


def _cli_path() -> list[str]:
    exe = shutil.which("aicr-tui", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "aicr_tui"]


def run_captured(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end with text output captured; the exit code is the caller's to judge."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``aicr-tui`` in a subprocess, as a user would."""
    full_env = dict(os.environ)
    full_env.pop("AICR_AKS_GPU_POOLS_PATH", None)
    full_env.pop("AICR_OKE_ADDONS_PATH", None)
    full_env["NO_COLOR"] = "1"
    full_env["TERM"] = "dumb"
    if env:
        full_env.update(env)
    return run_captured(
        [*_cli_path(), *args], cwd=cwd, env=full_env, input_text=input_text, timeout=timeout
    )


@pytest.fixture
def cli():
    return run_cli


def invalid_request(call: Callable[..., object], *args: Any) -> Any:
    """Call ``call(*args)``; assert it is refused as an invalid request (exit 2) and return the
    AicrError."""
    from aicr_tui.core.foundation.errors import AicrError, ErrorCode

    with pytest.raises(AicrError) as info:
        call(*args)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert info.value.exit_code == 2
    return info.value


def qualified_recipe(service: str, accelerator: str, os_: str, profile: str, snapshot: str) -> Any:
    """The training recipe the engine qualifies for these criteria against a sample snapshot."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.qualification import qualify

    criteria = parse_criteria(service=service, accelerator=accelerator, intent="training", os=os_)
    verdict = qualify(criteria, profile, load_snapshot(SAMPLES / "snapshots" / snapshot))
    assert verdict.ok, verdict.error
    return verdict.recipe


@pytest.fixture(scope="module")
def aks_recipe() -> Any:
    """The AKS H100 recipe under the default azure-managed profile, qualified on its sample."""
    return qualified_recipe(
        "aks", "h100", "ubuntu", "gpuStack=azure-managed", "aks-h100-install.yaml"
    )
