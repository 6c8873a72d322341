"""The bundle README's shell blocks are safe to paste (issue 35, family 2).

The README invites copying its ``sh`` blocks into a shell. Every value the block shows (the
Flux OCI repository, the Argo CD namespace and app name) is quoted as the scripts are, so a
``--repo`` holding ``;``, ``$( )``, backticks, ``&``, ``|``, ``>`` or quotes arrives as one
literal word. Each block is checked with ``bash -n`` and then run with stub commands that
record their argv; a canary file written by any of the hostile values fails the test.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import plan_bundle
from aicr_tui.core.bundler.deployers.config import deployer_config
from aicr_tui.core.bundler.tolerations import parse_tolerations
from tests.unit.test_bundle_support import KEYED, demo_recipe

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

# Each writes ./canary when a shell expands or runs it (no spaces: --repo refuses them).
HOSTILE_TAILS = [
    "a;>canary",
    "a$(>canary)",
    "a`>canary`",
    "a&>canary&",
    "a>canary",
    "a|>canary",
    "a'$(>canary)'",
    'a"$(>canary)"',
    "a\\$(>canary)",
    "a$((1))${HOME}$HOME",
    "a#b",
    "a*",
    "a~b{c,d}",
    "a!b",
    "a(b)",
    "a<canary",
    "a&&>canary",
    "a;echo${IFS}x>canary",
    "a;:>canary",
]
STUBS = ("sha256sum", "flux", "kubectl", "git", "helm", "helmfile")
STUB = '#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done >> "$ARGV_LOG"\nprintf "\\n\\0" >> "$ARGV_LOG"\n'


def _readme(deployer: str, repo: str) -> str:
    kw: dict[str, Any] = {"repo": repo} if repo else {}
    plan = plan_bundle(
        demo_recipe("aks-azure"),
        accelerated_tolerations=parse_tolerations(KEYED),
        deployer=deployer_config(deployer, **kw),
    )
    assert plan.errors == [], [e.render() for e in plan.errors]
    return plan.files["README.md"].decode("utf-8")


def _sh_blocks(readme: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```$", readme, flags=re.M | re.S)


def _run_block(block: str, tmp: Path) -> list[list[str]]:
    """Run ``block`` in ``tmp`` with every command stubbed; the argv of each call."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in STUBS:
        (bin_dir / name).write_text(STUB)
        (bin_dir / name).chmod(0o755)
    (tmp / "deploy.sh").write_text(STUB)
    (tmp / "deploy.sh").chmod(0o755)
    log = tmp / "argv.log"
    log.write_bytes(b"")
    check = subprocess.run([BASH or "bash", "-n"], input=block, text=True, capture_output=True)
    assert check.returncode == 0, f"bash -n: {check.stderr}"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "ARGV_LOG": str(log), "HOME": str(tmp)}
    subprocess.run(
        [BASH or "bash", "--norc", "--noprofile"],
        input=block,
        text=True,
        capture_output=True,
        cwd=tmp,
        env=env,
        timeout=30,
    )
    calls = log.read_bytes().split(b"\n\x00")
    return [[a.decode() for a in c.split(b"\x00") if a] for c in calls if c]


@pytest.mark.parametrize("tail", HOSTILE_TAILS)
def test_flux_repository_reaches_flux_push_as_one_word(tail: str, tmp_path: Path) -> None:
    repo = f"oci://registry.example.com/{tail}"
    blocks = _sh_blocks(_readme("flux", repo))
    assert blocks, "the README has no sh block"
    calls = [c for b in blocks for c in _run_block(b, tmp_path)]
    assert not (tmp_path / "canary").exists(), f"{tail!r}: the README block ran code"
    pushes = [c for c in calls if c[:2] == ["push", "artifact"]]
    assert pushes and pushes[0][2] == f"{repo}:latest", calls


@pytest.mark.parametrize("tail", HOSTILE_TAILS)
def test_argocd_repository_never_runs_from_the_readme(tail: str, tmp_path: Path) -> None:
    readme = _readme("argocd", f"https://git.example.com/{tail}")
    for block in _sh_blocks(readme):
        _run_block(block, tmp_path)
    assert not (tmp_path / "canary").exists(), f"{tail!r}: the README block ran code"


@pytest.mark.parametrize("deployer", ["helm", "helmfile", "argocd", "argocd-helm", "flux"])
def test_every_readme_block_parses_and_runs_only_stubs(deployer: str, tmp_path: Path) -> None:
    repo = {"flux": "oci://r.example.com/x;y", "argocd": "https://g.example.com/$(x)"}
    blocks = _sh_blocks(_readme(deployer, repo.get(deployer, "")))
    assert blocks
    for block in blocks:
        calls = _run_block(block, tmp_path)
        assert calls, f"{deployer}: the block ran no command"
