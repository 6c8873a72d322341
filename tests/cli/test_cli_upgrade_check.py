"""``aicr-tui upgrade-check`` as a user runs it: the exit code per verdict (0 safe, 10
manual, 11 unknown, 12 blocked, 2 bad input), the table, ``-o json`` and ``-o markdown``
(UPGRADING.md), from a recipe file, a bundle directory and a live cluster (``-k``).

Charts: the vendored upstream trees (``--charts``), as ``verify`` is tested. The recipes are
resolved by ``aicr-tui recipe`` (AKS H100 Ubuntu training); the older one differs from the
current one only where each test says (a real published chart version, v0.4.1 of
nvidia-dra-driver-gpu, or the other gpuStack selection)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.live_fakes import LoopbackServer, Request, write_kubeconfig
from tests.unit.test_upgrade_live import helm_secret, rendered_manifest, serve_releases
from tests.verify.matrix import UPSTREAM_CHARTS, VENDORED_CHARTS

pytest.importorskip("helm_python")

REPO = Path(__file__).resolve().parents[2]
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
CHARTS = ["--charts", str(UPSTREAM_CHARTS), "--charts", str(VENDORED_CHARTS)]


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "aicr_tui", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def recipes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("recipes")
    out: dict[str, Path] = {}
    for name, extra in (("azure", []), ("operator", ["--profile", "gpuStack=operator-managed"])):
        out[name] = base / f"{name}.yaml"
        proc = run("recipe", *AKS, *extra, "-o", str(out[name]))
        assert proc.returncode == 0, proc.stderr
    # The current recipe pins nvidia-dra-driver-gpu 0.4.1; a recipe that had the newer
    # published tree (0.5.0-dev) installed is the same recipe with that pin.
    text = out["azure"].read_text()
    assert text.count("version: 0.4.1") == 1
    out["dra-050"] = base / "dra-050.yaml"
    out["dra-050"].write_text(text.replace("version: 0.4.1", "version: 0.5.0-dev"))
    return out


def one_line_exit_2(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_bad_input_is_one_line_and_exit_2(recipes: dict[str, Path], tmp_path: Path) -> None:
    azure = str(recipes["azure"])
    one_line_exit_2(run("upgrade-check", "--to", azure), "--from", "neither")
    one_line_exit_2(run("upgrade-check", "--from", azure, "-k", azure, "--to", azure), "both")
    one_line_exit_2(
        run("upgrade-check", "--from", str(tmp_path / "nope.yaml"), "--to", azure),
        "--from",
        "nope.yaml",
    )
    one_line_exit_2(
        run("upgrade-check", "--from", azure, "--to", str(tmp_path)), "--to", "not a file"
    )
    one_line_exit_2(run("upgrade-check", "--from", azure, "--to", azure, *AKS), "--to and criteria")
    one_line_exit_2(run("upgrade-check", "--from", azure), "no target")
    one_line_exit_2(
        run("upgrade-check", "--from", azure, "--to", azure, "--charts", str(tmp_path / "x")),
        "--charts",
    )
    one_line_exit_2(
        run("upgrade-check", "--from", azure, "--to", azure, "-o", "yaml"), "invalid choice"
    )


def test_the_same_recipe_is_safe_exit_0(recipes: dict[str, Path]) -> None:
    proc = run(
        "upgrade-check", "--from", str(recipes["azure"]), "--to", str(recipes["azure"]), *CHARTS
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "result: SAFE" in proc.stdout
    assert "BLOCKED" not in proc.stdout and "UNKNOWN" not in proc.stdout


def test_a_gpu_stack_change_is_blocked_with_the_drain_plan_exit_12(
    recipes: dict[str, Path],
) -> None:
    proc = run("upgrade-check", "--from", str(recipes["azure"]), *AKS,
               "--profile", "gpuStack=operator-managed", *CHARTS, "-o", "json")  # fmt: skip
    assert proc.returncode == 12, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "blocked" and doc["exitCode"] == 12
    (gpu,) = [c for c in doc["components"] if c["component"] == "gpu-operator"]
    assert gpu["verdict"] == "blocked"
    (stack,) = [r for r in gpu["reasons"] if r["kind"] == "gpu-stack-changed"]
    assert "azure-managed -> operator-managed" in stack["message"]
    assert "from the cloud to the operator" in stack["message"]
    assert (
        stack["steps"][0].startswith("kubectl cordon") and "--gpu-driver None" in stack["steps"][2]
    )
    # with the plan acknowledged the component is manual (another component's stand-in
    # chart, rendered with changed values, keeps the whole answer at unknown)
    proc = run("upgrade-check", "--from", str(recipes["azure"]), "--to", str(recipes["operator"]),
               *CHARTS, "-o", "json", "--drain-planned")  # fmt: skip
    doc = json.loads(proc.stdout)
    (gpu,) = [c for c in doc["components"] if c["component"] == "gpu-operator"]
    assert gpu["verdict"] == "manual"
    assert proc.returncode == {"manual": 10, "unknown": 11}[doc["verdict"]]


def test_a_chart_downgrade_is_manual_exit_10(recipes: dict[str, Path]) -> None:
    proc = run(
        "upgrade-check", "--from", str(recipes["dra-050"]), "--to", str(recipes["azure"]), *CHARTS
    )
    assert proc.returncode == 10, proc.stdout + proc.stderr
    row = next(
        line for line in proc.stdout.splitlines() if line.startswith("nvidia-dra-driver-gpu")
    )
    assert row.split()[1:] == ["MANUAL", "0.5.0-dev", "0.4.1"]
    assert "is a downgrade" in proc.stdout


def test_a_missing_chart_source_is_unknown_exit_11(
    recipes: dict[str, Path], tmp_path: Path
) -> None:
    proc = run("upgrade-check", "--from", str(recipes["dra-050"]), "--to", str(recipes["azure"]),
               "--charts", str(tmp_path))  # fmt: skip
    assert proc.returncode == 11, proc.stdout + proc.stderr
    row = next(
        line for line in proc.stdout.splitlines() if line.startswith("nvidia-dra-driver-gpu")
    )
    assert "UNKNOWN" in row
    # every other component is unchanged, hence safe without its chart
    assert "result: UNKNOWN (" in proc.stdout


def test_markdown_is_the_upgrading_file(recipes: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "UPGRADING.md"
    proc = run("upgrade-check", "--from", str(recipes["azure"]), *AKS, "--profile",
               "gpuStack=operator-managed", *CHARTS, "-o", "markdown", "--write", str(target))  # fmt: skip
    assert proc.returncode == 12 and proc.stdout == ""
    text = target.read_text()
    assert text.startswith("# Upgrading\n")
    assert "| gpu-operator | blocked | v26.7.0 | v26.7.0 |" in text
    steps = text[text.index("## Steps, in order") :]
    assert steps.index("### gpu-operator (blocked)") < steps.index("deploy.sh")
    assert "  1. kubectl cordon" in steps


def test_from_a_bundle_directory(recipes: dict[str, Path], tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    proc = run("bundle", "-r", str(recipes["dra-050"]), "-o", str(bundle),
               "--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run(
        "upgrade-check", "--from", str(bundle), "--to", str(recipes["azure"]), *CHARTS, "-o", "json"
    )
    assert proc.returncode == 10, proc.stderr
    doc = json.loads(proc.stdout)
    (dra,) = [c for c in doc["components"] if c["component"] == "nvidia-dra-driver-gpu"]
    assert (dra["from"], dra["to"], dra["verdict"]) == ("0.5.0-dev", "0.4.1", "manual")
    assert doc["from"] == str(bundle)


def test_from_a_live_cluster(recipes: dict[str, Path], tmp_path: Path) -> None:
    """One release installed (the v0.4.1 chart rendered with the recipe's values, as Helm
    stored it); the target recipe installs the rest fresh. A fresh component whose pinned
    chart is only available as a stand-in (nvsentinel, nodewright) is unknown, not safe."""
    seen: list[Request] = []
    from tests.unit.test_upgrade_charts import comp

    secret = helm_secret(
        "nvidia-dra-driver-gpu", config=comp("v0.4.1").values, manifest=rendered_manifest("v0.4.1")
    )
    with LoopbackServer(serve_releases([secret], seen)) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        proc = run(
            "upgrade-check",
            "-k",
            str(kubeconfig),
            "--to",
            str(recipes["azure"]),
            *CHARTS,
            "-o",
            "json",
        )
    assert proc.returncode == 11, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["from"].startswith("live cluster (")
    unknown = {c["component"] for c in doc["components"] if c["verdict"] == "unknown"}
    assert unknown == {"nvsentinel", "nodewright-operator"}
    (dra,) = [c for c in doc["components"] if c["component"] == "nvidia-dra-driver-gpu"]
    assert (dra["from"], dra["to"], dra["verdict"], dra["reasons"]) == (
        "0.4.1",
        "0.4.1",
        "safe",
        [],
    )
    fresh = [c for c in doc["components"] if c["component"] != "nvidia-dra-driver-gpu"]
    assert fresh and all(c["reasons"][0]["kind"] == "component-added" for c in fresh)
    assert seen and all(r.method == "GET" and r.path == "/api/v1/secrets" for r in seen)


def test_a_bundle_built_for_an_upgrade_carries_upgrading_md(
    recipes: dict[str, Path], tmp_path: Path
) -> None:
    """``bundle --upgrade-from``: the same verdicts as upgrade-check, in UPGRADING.md,
    covered by checksums.txt."""
    import hashlib

    bundle = tmp_path / "bundle"
    proc = run("bundle", "-r", str(recipes["azure"]), "-o", str(bundle), "--upgrade-from",
               str(recipes["dra-050"]), *CHARTS,
               "--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "UPGRADING.md: manual" in proc.stderr
    text = (bundle / "UPGRADING.md").read_text()
    assert "| nvidia-dra-driver-gpu | manual | 0.5.0-dev | 0.4.1 |" in text
    assert "### nvidia-dra-driver-gpu (manual)" in text
    digest = hashlib.sha256((bundle / "UPGRADING.md").read_bytes()).hexdigest()
    assert f"{digest}  UPGRADING.md" in (bundle / "checksums.txt").read_text().splitlines()
    check = run("upgrade-check", "--from", str(recipes["dra-050"]), "--to", str(recipes["azure"]),
                *CHARTS, "-o", "markdown")  # fmt: skip
    assert check.returncode == 10
    # the same report; only the target's label (the recipe path) is named the same way
    assert check.stdout == text
    proc = run("bundle", "-r", str(recipes["azure"]), "-o", str(tmp_path / "b2"),
               "--upgrade-from", str(tmp_path / "none.yaml"),
               "--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule")  # fmt: skip
    one_line_exit_2(proc, "--upgrade-from", "none.yaml")
    assert not (tmp_path / "b2").exists()


def test_the_documented_exit_codes_are_the_ones_returned() -> None:
    from aicr_tui.core.services.upgrade import EXIT_CODES

    doc = (REPO / "docs" / "upgrade-check.md").read_text()
    assert EXIT_CODES == {"safe": 0, "manual": 10, "unknown": 11, "blocked": 12}
    for code in EXIT_CODES.values():
        assert f"\n| {code} |" in doc
    helptext = run("upgrade-check", "--help").stdout
    assert "Exit 0 all safe, 10 manual, 11 unknown, 12 blocked, 2 bad input" in " ".join(
        helptext.split()
    )
