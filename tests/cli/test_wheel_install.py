"""The wheel installs cleanly without extras and runs offline (issue 36, item 3).

One test, one venv: build the wheel from a copy of the sources (so no ``build/`` or
``*.egg-info`` lands in the checkout), install it with no extras into an empty venv under
the test's temporary directory (pip's own cache is reused, so only the first run on a
machine downloads), then check what it installed, run the README's offline tour with its
``aicr-tui`` and ask a live command for a cluster. Slow (a pip install): marked ``wheel``,
and run by ``make test`` like every other test (``-m "not wheel"`` skips it).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli_readme_tour import tour_blocks
from tests.conftest import run_captured

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("aicr_tui", "pyproject.toml", "README.md", "LICENSE")

# What the wheel installs at the top of site-packages: `aicr_tui` alone (issue 36), so no
# `core`, `screens` or `recipes` of ours collides with another distribution's.
TOP_LEVEL = {"aicr_tui"}
# Not installed without extras: the cloud SDKs (kubernetes, azure, oci) and the Helm engine.
EXTRAS_ONLY = ("kubernetes", "azure", "oci", "helm_python", "kubernetes_validate")


def installed_top_level(site: Path) -> set[str]:
    """The top-level names of the files the aicr-tui wheel installed into ``site``
    (its RECORD), leaving out its own dist-info and the scripts outside site-packages."""
    (record,) = site.glob("aicr_tui-*.dist-info/RECORD")
    tops = set()
    for line in record.read_text(encoding="utf-8").splitlines():
        path = line.split(",", 1)[0]
        top = path.split("/", 1)[0]
        if top.endswith(".dist-info") or top == ".." or not path:
            continue
        tops.add(top.removesuffix(".py"))
    return tops


@pytest.mark.wheel
def test_the_wheel_installs_without_extras_and_runs_the_offline_tour(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    venv = tmp_path / "venv"
    made = run_captured([sys.executable, "-m", "venv", str(venv)], timeout=300)
    assert made.returncode == 0, made.stderr
    py = venv / "bin" / "python"
    dist = tmp_path / "dist"
    built = run_captured(
        [str(py), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(src)],
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("aicr_tui-*.whl")
    installed = run_captured(
        [str(py), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt"), str(wheel)],
        timeout=900,
    )
    assert installed.returncode == 0, installed.stderr

    (site,) = (venv / "lib").glob("python3*/site-packages")
    assert installed_top_level(site) == TOP_LEVEL
    assert list(site.glob("aicr_tui-*.dist-info/licenses/LICENSE"))
    assert sorted(p.name for p in site.iterdir() if p.name in ("core", "screens", "recipes")) == []
    for package in ("aicr_tui", "aicr_tui/core", "aicr_tui/screens"):
        assert (site / package / "py.typed").is_file(), package
    assert (site / "aicr_tui" / "recipes" / "registry.yaml").is_file()
    assert (site / "aicr_tui" / "core" / "bundler" / "scripts" / "deploy.sh").is_file()
    present = [m for m in EXTRAS_ONLY if (site / m).exists()]
    assert present == [], f"installed without extras: {present}"

    # The README's offline tour, run with the installed aicr-tui from a scratch directory
    # (only the samples come from the checkout, as the tour names them).
    work = tmp_path / "work"
    work.mkdir()
    (work / "aicr_tui").mkdir()
    (work / "aicr_tui" / "recipes").symlink_to(REPO / "aicr_tui" / "recipes")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_TUI_", "PYTHON"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        TERM="dumb",
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    blocks = [b for b in tour_blocks() if not b.startswith("# needs a cluster")]
    assert blocks
    for block in blocks:
        proc = run_captured(["bash", "-e", "-c", block], cwd=work, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert (work / "recipe.yaml").is_file() and (work / "bundle" / "deploy.sh").is_file()
    assert (work / "readiness.json").is_file() and (work / "replay.json").is_file()
    where = run_captured(
        [str(py), "-c", "import aicr_tui.core as c; print(c.__file__, c.__version__)"],
        cwd=work,
        env=env,
    )
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr

    # A live command without its extra: one line naming the extra, exit 2, nothing written.
    kubeconfig = work / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n", encoding="utf-8")
    live = run_captured(
        ["aicr-tui", "snapshot", "-k", str(kubeconfig), "-o", "live.yaml"],
        cwd=work,
        env=env,
        timeout=120,
    )
    assert live.returncode == 2, live.stdout + live.stderr
    assert len(live.stderr.splitlines()) == 1, live.stderr
    assert "pip install 'aicr-tui[kubernetes]'" in live.stderr, live.stderr
    assert not (work / "live.yaml").exists()
