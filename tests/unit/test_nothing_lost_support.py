"""Shared by the nothing-lost tests: real recipes and plans, directory images, and a way to
run the CLI so that it dies (or is interrupted) at the moment it would rename its output."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from aicr_tui.core.bundler import BundlePlan, parse_overrides, plan_bundle
from aicr_tui.core.bundler.tolerations import parse_tolerations
from aicr_tui.core.documents.recipe_result import RecipeResult, render_recipe
from tests.conftest import run_captured

KEYED = "nvidia.com/gpu:NoSchedule"


@cache
def aks_recipe() -> RecipeResult:
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.qualification import qualify

    verdict = qualify(
        parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="training"), None
    )
    assert verdict.recipe is not None, verdict.error
    return verdict.recipe


def recipe_text() -> str:
    return render_recipe(aks_recipe())


def plan_variant(n: int) -> BundlePlan:
    """Bundle plans that differ in a few files (values and checksums) for each ``n``."""
    plan = plan_bundle(
        aks_recipe(),
        parse_overrides(set_=[f"gpu-operator:nodeStatusExporter.enabled={n}"]),
        accelerated_tolerations=parse_tolerations([KEYED]),
    )
    assert not plan.errors, plan.errors
    return plan


def image(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` by relative path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def siblings(parent: Path) -> list[str]:
    return sorted(os.listdir(parent))


# Run the real CLI with os.replace and aicr_tui.core.foundation.fileio.exchange_paths wrapped: the first rename of
# the output (the atomic swap, the staging directory or temporary file into place, or the old
# directory aside) first delivers SIGNAL to the process. Nothing in the product is changed.
_DIE_AT_RENAME = """
import os, signal, sys
# Ctrl-C as a terminal delivers it: a process started in the background of a shell without
# job control (nohup, `cmd &` in a script, some CI runners) inherits SIGINT ignored, and
# the SIGINT below would then do nothing.
signal.signal(signal.SIGINT, signal.default_int_handler)
import aicr_tui.core.foundation.fileio
def die():
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
real = os.replace
def replace(src, dst, *a, **k):
    name = os.path.basename(os.fspath(src))
    if name.endswith((".staging", ".tmp")) or os.path.basename(os.fspath(dst)).endswith(".old"):
        die()
    return real(src, dst, *a, **k)
os.replace = replace
real_exchange = aicr_tui.core.foundation.fileio.exchange_paths
def exchange(a, b):
    die()
    return real_exchange(a, b)
aicr_tui.core.foundation.fileio.exchange_paths = exchange
from aicr_tui.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_cli_dying_at_rename(
    signal_name: str, *args: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", TERM="dumb")
    return run_captured(
        [sys.executable, "-c", _DIE_AT_RENAME, signal_name, *args], cwd=cwd, env=env
    )
