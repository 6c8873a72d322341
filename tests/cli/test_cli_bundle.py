"""``aicr-tui bundle`` end to end: recipes made by ``aicr-tui recipe``, bundled by the CLI."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import run_cli

DEMO = {
    "aks-azure": ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"],
    "aks-operator": [
        "--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training",
        "--profile", "gpuStack=operator-managed",
    ],
    "oke-oci": ["--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "training"],
    "oke-operator": [
        "--service", "oke", "--accelerator", "gb200", "--os", "ol", "--intent", "training",
        "--profile", "gpuStack=operator-managed",
    ],
}  # fmt: skip
KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


@pytest.fixture(scope="module")
def recipes(tmp_path_factory) -> dict[str, Path]:
    """The demo recipes, resolved by the engine in-process and written as `aicr-tui recipe`
    writes them (one of them through the real CLI, to keep that path honest)."""
    from aicr_tui.core.documents.recipe_result import render_recipe
    from tests.unit.test_bundle_support import demo_recipe

    root = tmp_path_factory.mktemp("recipes")
    out = {}
    for name, args in DEMO.items():
        path = root / f"{name}.yaml"
        if name == "aks-azure":
            proc = run_cli("recipe", *args, "-o", str(path))
            assert proc.returncode == 0, proc.stderr
            assert path.read_text() == render_recipe(demo_recipe(name))
        else:
            path.write_text(render_recipe(demo_recipe(name)))
        out[name] = path
    return out


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", sorted(DEMO))
def test_bundles_each_demo_recipe_deterministically(name: str, recipes, tmp_path) -> None:
    outs = []
    # two runs for one recipe prove the CLI is byte-identical; the unit tests cover the rest
    for run in ("a", "b") if name == "aks-azure" else ("a",):
        out = tmp_path / run
        proc = run_cli("bundle", "-r", str(recipes[name]), "-o", str(out), *KEYED)
        assert proc.returncode == 0, proc.stderr
        assert "wrote" in proc.stderr and proc.stdout == ""
        outs.append(tree(out))
    assert outs[0] == outs[-1]
    files = outs[0]
    for root_file in ("README.md", "deploy.sh", "undeploy.sh", "recipe.yaml", "bundle-info.yaml"):
        assert root_file in files
    listed = {}
    for line in files["checksums.txt"].decode().splitlines():
        digest, rel = line.split("  ", 1)
        listed[rel] = digest
    assert set(listed) == set(files) - {"checksums.txt"}
    assert all(hashlib.sha256(files[r]).hexdigest() == d for r, d in listed.items())
    assert any(f.startswith("001-") and f.endswith("/values.yaml") for f in files)


def test_default_output_directory_is_bundle(recipes, tmp_path) -> None:
    proc = run_cli("bundle", "-r", str(recipes["oke-oci"]), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "bundle" / "deploy.sh").is_file()


def test_aks_without_keyed_toleration_exits_2_and_writes_nothing(recipes, tmp_path) -> None:
    out = tmp_path / "out"
    proc = run_cli("bundle", "-r", str(recipes["aks-azure"]), "-o", str(out))
    assert proc.returncode == 2
    assert "CheckWildcardAcceleratedToleration" in proc.stderr
    assert "--accelerated-node-toleration nvidia.com/gpu:NoSchedule" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_rdma_opt_out_needs_no_toleration(recipes, tmp_path) -> None:
    proc = run_cli(
        "bundle", "-r", str(recipes["aks-azure"]), "-o", str(tmp_path / "o"),
        "--set", "networkoperator:enabled=false",
        "--set", "gpuoperator:driver.rdma.useHostMofed=false",
        "--set", "nodewrightcustomizations:enabled=false",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not any("network-operator" in p.name for p in (tmp_path / "o").iterdir())


def test_profile_lock_refusal(recipes, tmp_path) -> None:
    out = tmp_path / "o"
    proc = run_cli(
        "bundle", "-r", str(recipes["aks-azure"]), "-o", str(out), *KEYED,
        "--set", "gpuoperator:driver.enabled=true",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "ProfileLock" in proc.stderr and "gpu-operator:driver.enabled" in proc.stderr
    assert "aicr-tui recipe --profile gpuStack=operator-managed" in proc.stderr
    assert not out.exists()


def test_deprecation_warning_goes_to_stderr_and_readme(recipes, tmp_path) -> None:
    out = tmp_path / "o"
    proc = run_cli(
        "bundle", "-r", str(recipes["aks-azure"]), "-o", str(out), *KEYED,
        "--set", "dradriver:gpuResourcesEnabledOverride=true",
        "--set", "dradriver:resources.gpus.enabled=true",
        "--set", "gpuoperator:devicePlugin.enabled=false",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "aicr-tui: warning: deprecated" in proc.stderr
    assert "deprecated" in (out / "README.md").read_text()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--set", "gpuoperator:driver"],
            "--set 'gpuoperator:driver': expected component:path=value",
        ),
        (["--accelerated-node-toleration", "nvidia.com/gpu:Always"], "effect 'Always'"),
        (["--set", "bogus:x=1"], 'unknown component "bogus"'),
        (["--dynamic", "gpuoperator:devicePlugin.enabled"], "GpuAllocationPolicy"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needle, recipes, tmp_path) -> None:
    proc = run_cli(
        "bundle", "-r", str(recipes["aks-azure"]), "-o", str(tmp_path / "o"), *KEYED, *args
    )
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_missing_recipe_file(tmp_path) -> None:
    proc = run_cli("bundle", "-r", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "o"))
    assert proc.returncode == 2 and "nope.yaml" in proc.stderr


def test_force_replaces_a_non_empty_directory(recipes, tmp_path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "mine.txt").write_text("x")
    proc = run_cli("bundle", "-r", str(recipes["oke-oci"]), "-o", str(out))
    assert proc.returncode == 2 and "--force" in proc.stderr
    assert (out / "mine.txt").read_text() == "x"
    proc = run_cli("bundle", "-r", str(recipes["oke-oci"]), "-o", str(out), "--force")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "mine.txt").exists() and (out / "deploy.sh").is_file()


def test_set_file_and_dynamic(recipes, tmp_path) -> None:
    values = tmp_path / "tol.yaml"
    values.write_text("- key: dedicated\n  operator: Exists\n")
    out = tmp_path / "o"
    proc = run_cli(
        "bundle", "-r", str(recipes["oke-oci"]), "-o", str(out),
        "--set-file", f"nfd:worker.tolerations={values}",
        "--dynamic", "nfd:master.replicaCount",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    folder = next(p for p in out.iterdir() if p.name.endswith("-nfd"))
    assert "dedicated" in (folder / "values.yaml").read_text()
    assert "replicaCount" in (folder / "cluster-values.yaml").read_text()
    assert "cluster-values.yaml" in (folder / "install.sh").read_text()
