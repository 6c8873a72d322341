"""``aicr-tui verify`` and ``aicr-tui bundle --verify`` as a user runs them (subprocesses).

Exit 0 clean, 8 findings, 2 bad input; a chart repository that cannot be reached is one
line. The unreachable repository is a loopback address with nothing listening (it stands in
for a chart repository seen from an offline machine).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from aicr_tui.core.documents.recipe_result import render_recipe
from tests.conftest import run_cli
from tests.verify import matrix

KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]
CHARTS = ["--charts", str(matrix.UPSTREAM_CHARTS)]


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory) -> Path:
    case, recipe = next(
        (c, r)
        for c, r in matrix.cases()
        if c.service == "oke" and c.platform is None and c.intent == "training"
    )
    path = tmp_path_factory.mktemp("recipe") / "recipe.yaml"
    path.write_text(render_recipe(recipe))
    return path


@pytest.fixture(scope="module")
def clean_bundle(recipe_file: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bundle"
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(out), *KEYED, "--verify", *CHARTS)
    assert proc.returncode == 0, proc.stderr
    assert "0 finding(s)" in proc.stdout
    report = json.loads((out / "verify-report.json").read_text())
    assert report["findings"] == 0 and report["kubernetes"] == "1.34"
    return out


def test_verify_a_clean_bundle(clean_bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    proc = run_cli("verify", str(clean_bundle), *CHARTS, "--report", str(target))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("0 finding(s) in ")
    assert any(line.startswith("001-") for line in lines)
    doc = json.loads(target.read_text())
    assert doc["kind"] == "VerifyReport" and doc["findings"] == 0
    assert {c["status"] for c in doc["components"]} <= {
        "verified",
        "verified against stand-in",
        "manifest-only",
    }


def test_misspelled_key_exits_8_naming_it(recipe_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    bad = ["--set", "gpuoperator:driver.enabeld=false"]
    proc = run_cli("bundle", "-r", str(recipe_file), "-o", str(out), *KEYED, *bad)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("verify", str(out), *CHARTS)
    assert proc.returncode == 8, proc.stderr
    found = [line.strip() for line in proc.stdout.splitlines() if ": undefined-value: " in line]
    assert len(found) == 1 and found[0].startswith("gpu-operator: undefined-value: driver.enabeld ")
    doc = json.loads((out / "verify-report.json").read_text())
    flat = [f for c in doc["components"] for f in c["findings"]]
    assert [(f["component"], f["path"]) for f in flat] == [("gpu-operator", "driver.enabeld")]
    # bundle --verify refuses to write the same bundle
    again = tmp_path / "again"
    proc = run_cli(
        "bundle", "-r", str(recipe_file), "-o", str(again), *KEYED, *bad, "--verify", *CHARTS
    )
    assert proc.returncode == 8
    assert "bundle not written" in proc.stderr and not again.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "/nonexistent/bundle"],
        ["verify", "{tmp}"],
        ["verify", "{bundle}", "--charts", "/nonexistent/charts"],
        ["verify", "{bundle}", "--pull-timeout", "0"],
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], clean_bundle: Path, tmp_path: Path) -> None:
    argv = [a.format(tmp=tmp_path, bundle=clean_bundle) for a in args]
    proc = run_cli(*argv)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_chart_repository_is_one_line(clean_bundle: Path, tmp_path: Path) -> None:
    import shutil

    bundle = tmp_path / "bundle"
    shutil.copytree(clean_bundle, bundle)
    recipe = bundle / "recipe.yaml"
    repo = f"https://127.0.0.1:{_closed_port()}/charts"
    text = recipe.read_text()
    for source in ("https://kubernetes-sigs.github.io/node-feature-discovery/charts",):
        assert source in text
        text = text.replace(source, repo)
    recipe.write_text(text)
    proc = run_cli(
        "verify",
        str(bundle),
        "--pull-timeout",
        "20",
        env={"AICR_TUI_CACHE_DIR": str(tmp_path / "c")},
    )
    assert proc.returncode in (5, 6), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot pull chart" in lines[0] and "--charts" in lines[0]
    assert "Traceback" not in proc.stderr


def test_without_the_engine_verify_says_how_to_install_it(
    clean_bundle: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "block" / "helm_python"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("helm-python-sdk is not installed")\n')
    proc = run_cli("verify", str(clean_bundle), *CHARTS, env={"PYTHONPATH": str(blocker.parent)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'aicr-tui[verify]'" in lines[0]
