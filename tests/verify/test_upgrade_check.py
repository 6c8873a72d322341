"""``aicr-tui upgrade-check`` end to end on the catalog's AKS H100 training recipes, rendered
offline from the vendored chart archives (the per-reason cases: tests/unit/test_upgrade_verdicts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import TEST_DATA, run_cli

ARCHIVES = TEST_DATA / "charts" / "archives"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]


@pytest.fixture(scope="module")
def recipes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from core.verify import helm

    try:
        helm.require_engine()
    except Exception as exc:  # the Helm engine extra is not installed here
        pytest.skip(str(exc))
    work = tmp_path_factory.mktemp("upgrade")
    out = {}
    for value in ("azure-managed", "operator-managed"):
        target = work / f"{value}.yaml"
        made = run_cli("recipe", *AKS, "--profile", f"gpuStack={value}", "-o", str(target))
        assert made.returncode == 0, made.stderr
        out[value] = target
    return out


def test_same_recipe_is_safe(recipes: dict[str, Path]) -> None:
    r = str(recipes["azure-managed"])
    proc = run_cli("upgrade-check", "--from", r, "--to", r, "--charts", str(ARCHIVES), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "safe" and doc["drainPlan"] == []
    assert {c["verdict"] for c in doc["components"]} == {"safe"}
    assert len(doc["components"]) == 11


def test_gpustack_change_is_blocked_with_a_drain_plan(recipes: dict[str, Path]) -> None:
    proc = run_cli(
        "upgrade-check",
        "--from",
        str(recipes["azure-managed"]),
        "--to",
        str(recipes["operator-managed"]),
        "--charts",
        str(ARCHIVES),
    )
    assert proc.returncode == 13, proc.stderr
    lines = proc.stdout.splitlines()
    gpu = next(line for line in lines if line.split()[1:2] == ["gpu-operator"])
    assert gpu.startswith("BLOCKED")
    assert "moves GPU driver ownership" in proc.stdout
    assert "drain plan (gpuStack=azure-managed -> gpuStack=operator-managed):" in proc.stdout
    assert "recreate the GPU node pools with --gpu-driver none" in proc.stdout
    # The rendered objects show what the switch removes: the AKS toolkit hardening DaemonSet.
    assert "nvidia-toolkit-hardening is removed by the upgrade" in proc.stdout
    assert lines[-1] == "result: blocked"


def test_unrenderable_side_is_unknown_never_safe(recipes: dict[str, Path], tmp_path: Path) -> None:
    empty = tmp_path / "charts"
    empty.mkdir()
    r = str(recipes["azure-managed"])
    proc = run_cli("upgrade-check", "--from", r, "--to", r, "--charts", str(empty), "-o", "json")
    assert proc.returncode == 12, proc.stderr
    doc = json.loads(proc.stdout)
    by = {c["component"]: c for c in doc["components"]}
    assert by["gpu-operator"]["verdict"] == "unknown"
    assert "could not be rendered" in by["gpu-operator"]["reasons"][0]["text"]
    # Only the manifest-only step, which needs no chart, can still be judged.
    assert {n for n, c in by.items() if c["verdict"] == "safe"} == {"nodewright-customizations"}


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    proc = run_cli(
        "upgrade-check", "--from", str(tmp_path / "nope"), "--to", str(tmp_path / "nope")
    )
    assert proc.returncode == 2 and "--from" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_bundle_built_for_an_upgrade_carries_upgrading_md(
    recipes: dict[str, Path], tmp_path: Path
) -> None:
    toleration = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]
    current = tmp_path / "current"
    made = run_cli("bundle", "-r", str(recipes["azure-managed"]), "-o", str(current), *toleration)
    assert made.returncode == 0, made.stderr
    assert not (current / "UPGRADING.md").exists()
    target = tmp_path / "target"
    proc = run_cli(
        "bundle",
        "-r",
        str(recipes["operator-managed"]),
        "-o",
        str(target),
        *toleration,
        "--upgrade-from",
        str(current),
        "--charts",
        str(ARCHIVES),
    )
    assert proc.returncode == 0, proc.stderr
    text = (target / "UPGRADING.md").read_text()
    assert "Overall verdict: **blocked**" in text
    assert "| `gpu-operator` | v26.7.0 | v26.7.0 | blocked |" in text
    steps = [line for line in text.splitlines() if line[:1].isdigit()]
    order = [
        next(i for i, s in enumerate(steps) if needle in s)
        for needle in (
            "cordon every GPU node",
            "drain the GPU workloads",
            "--gpu-driver none",
            "./deploy.sh",
            "uncordon",
        )
    ]
    assert order == sorted(order)
    sums = (target / "checksums.txt").read_text()
    assert "  UPGRADING.md\n" in sums
    import subprocess

    check = subprocess.run(
        ["sha256sum", "-c", "checksums.txt"],
        cwd=target,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout


def test_live_cluster_releases_as_the_current_side(
    recipes: dict[str, Path], tmp_path: Path
) -> None:
    """The azure-managed gpu-operator installed (its Helm release record, made from the same
    chart and values a deploy would use) against each target recipe."""
    import yaml

    from core.services.mirror import recipe_input
    from core.verify.objects import RenderedStep, render_chart
    from tests.unit.live_fakes import LoopbackServer, write_kubeconfig
    from tests.unit.test_live_helm_releases import Secrets, secret

    current = recipe_input(recipes["azure-managed"])
    gpu = next(c for c in current.components if c.name == "gpu-operator")
    step = RenderedStep("gpu-operator")
    render_chart(
        ARCHIVES / "gpu-operator-v26.7.0.tgz",
        gpu.values,
        release="gpu-operator",
        namespace=gpu.namespace,
        out=step,
    )
    assert not step.problem and step.objects
    manifests = [yaml.safe_load(t) for t in gpu.manifests.values()]
    doc = {
        "name": "gpu-operator",
        "namespace": gpu.namespace,
        "version": 1,
        "info": {"status": "deployed"},
        "chart": {
            "metadata": {"name": "gpu-operator", "version": "v26.7.0"},
            "values": {},
            "files": [],
        },
        "config": gpu.values,
        "manifest": yaml.safe_dump_all([*step.objects, *manifests]),
    }
    with LoopbackServer(Secrets([secret(doc)])) as api:
        kc = str(write_kubeconfig(tmp_path / "kc", api.url))
        same = run_cli(
            "upgrade-check",
            "-k",
            kc,
            "--to",
            str(recipes["azure-managed"]),
            "--charts",
            str(ARCHIVES),
            "-o",
            "json",
            env={"HOME": str(tmp_path)},
        )
        moved = run_cli(
            "upgrade-check",
            "-k",
            kc,
            "--to",
            str(recipes["operator-managed"]),
            "--charts",
            str(ARCHIVES),
            "-o",
            "json",
            env={"HOME": str(tmp_path)},
        )
    assert same.returncode == 0, same.stderr + same.stdout
    by = {c["component"]: c for c in json.loads(same.stdout)["components"]}
    assert by["gpu-operator"]["verdict"] == "safe" and by["gpu-operator"]["from"] == "v26.7.0"
    assert by["cert-manager"]["reasons"][0]["text"] == "new in the target: installed fresh"
    assert moved.returncode == 13, moved.stderr
    doc2 = json.loads(moved.stdout)
    gpu2 = next(c for c in doc2["components"] if c["component"] == "gpu-operator")
    assert gpu2["verdict"] == "blocked"
    assert any("from the cloud to the GPU Operator" in r["text"] for r in gpu2["reasons"])
    assert any("nvidia-toolkit-hardening is removed" in r["text"] for r in gpu2["reasons"])
    assert doc2["drainPlan"] and "--gpu-driver none" in doc2["drainPlan"][2]


def test_from_and_live_are_exclusive(tmp_path: Path) -> None:
    proc = run_cli("upgrade-check", "--from", "a", "-k", "k", "--to", "b")
    assert proc.returncode == 2 and "one of them" in proc.stderr
    neither = run_cli("upgrade-check", "--to", "b")
    assert neither.returncode == 2 and "one of them" in neither.stderr
