"""``aicr-tui diff``: drift between two snapshots (or a snapshot and the live cluster)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"
INSTALL = str(SNAPS / "aks-h100-install.yaml")
NONE = str(SNAPS / "aks-h100-none.yaml")
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]


def _recipe(cli, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    target = tmp_path / "recipe.yaml"
    made = cli("recipe", *AKS, "-s", INSTALL, "-o", str(target))
    assert made.returncode == 0, made.stderr
    return str(target)


def test_table_names_the_driver_reading(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("diff", INSTALL, NONE)
    assert proc.returncode == 0, proc.stderr  # drift alone is not a failure without the flag
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert ["K8s.aks-gpu-pools.gpu-driver", "Install", "None", "changed"] in rows
    assert ["GPU.hardware.driver-loaded", "true", "false", "changed"] in rows
    assert "3 readings changed" in proc.stdout


def test_fail_on_drift_exit_codes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("diff", INSTALL, INSTALL, "--fail-on-drift").returncode == 0
    assert cli("diff", INSTALL, NONE, "--fail-on-drift").returncode == 9
    recipe = _recipe(cli, tmp_path)
    proc = cli("diff", INSTALL, NONE, "-r", recipe, "--fail-on-drift")
    assert proc.returncode == 10, proc.stderr


def test_recipe_names_the_constraint_that_now_fails(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = _recipe(cli, tmp_path)
    proc = cli("diff", INSTALL, NONE, "-r", recipe)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "verdict: gpuStack=azure-managed qualified -> REFUSED" in out
    failing = [line for line in out.splitlines() if line.startswith("FAILS")]
    assert len(failing) == 1 and "K8s.aks-gpu-pools.gpu-driver" in failing[0]
    assert failing[0].split()[2:5] == ["Install", "Install", "None"]
    assert "remedy: rerun with --profile gpuStack=operator-managed" in out


def test_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = _recipe(cli, tmp_path)
    proc = cli("diff", INSTALL, NONE, "-r", recipe, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["drifted"] is True
    assert {
        "path": "K8s.aks-gpu-pools.gpu-driver",
        "old": "Install",
        "new": "None",
        "change": "changed",
    } in doc["changes"]
    fails = [c for c in doc["recipe"]["constraints"] if c["nowFails"]]
    assert [c["name"] for c in fails] == ["K8s.aks-gpu-pools.gpu-driver"]
    assert fails[0]["remedy"]
    assert doc["recipe"]["verdict"]["old"]["qualified"] is True
    assert doc["recipe"]["verdict"]["new"]["qualified"] is False


def test_bad_input_is_one_line_exit_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = cli("diff", INSTALL, str(tmp_path / "nope.yaml"))
    assert missing.returncode in (2, 3) and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and "nope.yaml" in missing.stderr
    both = cli("diff", INSTALL, NONE, "-k", str(tmp_path / "kubeconfig"))
    assert both.returncode == 2 and "-k" in both.stderr
    assert len(both.stderr.strip().splitlines()) == 1
    neither = cli("diff", INSTALL)
    assert neither.returncode == 2 and "NEW" in neither.stderr
    not_recipe = cli("diff", INSTALL, NONE, "-r", INSTALL)
    assert not_recipe.returncode == 2 and "Traceback" not in not_recipe.stderr
    assert len(not_recipe.stderr.strip().splitlines()) == 1


def test_hostile_reading_is_escaped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = Path(INSTALL).read_text().replace("gpu-driver: Install", 'gpu-driver: "\\e[31mX"')
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(text)
    proc = cli("diff", INSTALL, str(hostile))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout
    js = cli("diff", INSTALL, str(hostile), "-o", "json")
    assert "\x1b" not in js.stdout and json.loads(js.stdout)["changes"]


def test_live_cluster_as_new_side(tmp_path: Path) -> None:
    """A snapshot against the live cluster (a loopback API server in real shapes): the
    same cluster shows no drift; a changed reading is named; the pool dump the live
    capture is given lets the recipe's gpuStack constraint be judged live."""
    from tests.conftest import run_cli
    from tests.unit.live_fakes import LoopbackServer, write_kubeconfig
    from tests.unit.test_live_kube import AKS_NODES, FakeCluster

    pools = str(SAMPLES / "captures" / "aks-pools-install.json")
    none_pools = str(SAMPLES / "captures" / "aks-pools-none.json")
    saved = tmp_path / "qualified.yaml"
    env = {"HOME": str(tmp_path)}
    with LoopbackServer(FakeCluster(AKS_NODES)) as kube_api:
        kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", kube_api.url))
        made = run_cli(
            "snapshot", "-k", kubeconfig, "--aks-gpu-pools", pools, "-o", str(saved), env=env
        )
        assert made.returncode == 0, made.stderr
        same = run_cli(
            "diff",
            str(saved),
            "-k",
            kubeconfig,
            "--aks-gpu-pools",
            pools,
            "--fail-on-drift",
            env=env,
        )
        assert same.returncode == 0, same.stderr + same.stdout
        assert "no reading changed" in same.stdout
        moved = run_cli(
            "diff",
            str(saved),
            "-k",
            kubeconfig,
            "--aks-gpu-pools",
            none_pools,
            "--fail-on-drift",
            "-o",
            "json",
            env=env,
        )
    assert moved.returncode == 9, moved.stderr
    doc = json.loads(moved.stdout)
    assert doc["new"].startswith("live cluster")
    assert {
        "path": "K8s.aks-gpu-pools.gpu-driver",
        "old": "Install",
        "new": "None",
        "change": "changed",
    } in doc["changes"]
