"""``bundle --vendor-charts``: the pinned archives inside the bundle, installed from there."""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import TEST_DATA, run_cli

ARCHIVES = TEST_DATA / "charts" / "archives"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
TOLERATION = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("vendor") / "recipe.yaml"
    made = run_cli("recipe", *AKS, "-o", str(target))
    assert made.returncode == 0, made.stderr
    return target


def _bundle(
    recipe: Path, out: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "bundle", "-r", str(recipe), "-o", str(out), *TOLERATION, "--vendor-charts", *extra, env=env
    )


def test_helm_bundle_carries_and_installs_from_archives(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES))
    assert proc.returncode == 0, proc.stderr
    prov = yaml.safe_load((out / "provenance.yaml").read_text())
    charts = prov["charts"]
    recipe_doc = yaml.safe_load((out / "recipe.yaml").read_text())
    pinned = {
        r["name"]: r
        for r in recipe_doc["componentRefs"]
        if r.get("source") and r.get("enabled", True) is not False
    }
    assert {c["component"] for c in charts} == set(pinned)
    checksums = dict(
        reversed(line.split("  ", 1)) for line in (out / "checksums.txt").read_text().splitlines()
    )
    for c in charts:
        ref = pinned[c["component"]]
        assert (c["source"], c["version"], c["chart"]) == (
            ref["source"],
            ref["version"],
            ref["chart"],
        )
        data = (out / c["file"]).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        assert c["sha256"] == digest == checksums[c["file"]]
        assert data == (ARCHIVES / Path(c["file"]).name).read_bytes()
    assert "provenance.yaml" in checksums
    check = subprocess.run(
        ["sha256sum", "-c", "checksums.txt"], cwd=out, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # Every helm call installs (or reads CRDs) from the bundle's own files: no repository.
    for script in [out / "deploy.sh", out / "undeploy.sh", *out.glob("*/install.sh")]:
        text = script.read_text()
        calls = [line for line in text.splitlines() if re.match(r"\s*helm (upgrade|show)", line)]
        assert all(
            "--repo" not in line and "oci://" not in line and "https://" not in line
            for line in calls
        ), script
    deploy = (out / "deploy.sh").read_text()
    assert "-- gpu-operator charts/gpu-operator-v26.7.0.tgz" in deploy
    own = (next(out.glob("*-gpu-operator")) / "install.sh").read_text()
    assert "-- gpu-operator ../charts/gpu-operator-v26.7.0.tgz" in own
    undeploy = (out / "undeploy.sh").read_text()
    assert "charts/gpu-operator-v26.7.0.tgz" in undeploy
    readme = (out / "README.md").read_text()
    assert (
        "## Vendored charts" in readme
        and "| `gpu-operator` | `charts/gpu-operator-v26.7.0.tgz` |" in readme
    )


def test_helmfile_releases_point_at_archives(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "helmfile")
    assert proc.returncode == 0, proc.stderr
    releases = []
    for level in sorted(out.glob("level-*.yaml")):
        doc = yaml.safe_load(level.read_text())
        assert "repositories" not in doc
        releases += doc["releases"]
    gpu = next(r for r in releases if r["name"] == "gpu-operator")
    assert gpu["chart"] == "./charts/gpu-operator-v26.7.0.tgz"
    assert all((out / r["chart"]).exists() for r in releases)


def test_environment_directory(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "env"
    proc = _bundle(recipe, out, env={"AICR_VENDOR_CHARTS_DIR": str(ARCHIVES)})
    assert proc.returncode == 0, proc.stderr
    assert (out / "charts" / "cert-manager-v1.20.2.tgz").is_file()


def _one_line_refusal(proc: subprocess.CompletedProcess[str], out: Path) -> str:
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.exists()
    return proc.stderr


def test_missing_archive_refused(recipe: Path, tmp_path: Path) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    (charts / "cert-manager-v1.20.2.tgz").write_bytes(
        (ARCHIVES / "cert-manager-v1.20.2.tgz").read_bytes()
    )
    out = tmp_path / "b"
    err = _one_line_refusal(_bundle(recipe, out, "--charts", str(charts)), out)
    assert "no archive of" in err


def _archive(name: str, version: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        body = f"apiVersion: v2\nname: {name}\nversion: {version}\n".encode()
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def test_archive_of_another_version_refused(recipe: Path, tmp_path: Path) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    for f in ARCHIVES.glob("*.tgz"):
        (charts / f.name).write_bytes(f.read_bytes())
    (charts / "gpu-operator-v26.7.0.tgz").write_bytes(_archive("gpu-operator", "v25.3.0"))
    out = tmp_path / "b"
    err = _one_line_refusal(_bundle(recipe, out, "--charts", str(charts)), out)
    assert "is chart gpu-operator v25.3.0, but the bundle pins gpu-operator v26.7.0" in err


def test_archive_escaping_its_folder_refused() -> None:
    from core.bundler.vendor import check_archive
    from core.foundation.errors import AicrError

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("gpu-operator/../../evil")
        info.size = 0
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(AicrError, match="not a plain file inside the chart folder"):
        check_archive(buf.getvalue(), "gpu-operator", "v1", "x.tgz")
    with pytest.raises(AicrError, match="not a gzip tar"):
        check_archive(b"not an archive", "gpu-operator", "v1", "x.tgz")


def test_gitops_deployers_refused(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "a"
    err = _one_line_refusal(
        _bundle(
            recipe,
            out,
            "--charts",
            str(ARCHIVES),
            "-d",
            "argocd",
            "--repo",
            "https://git.example/x.git",
        ),
        out,
    )
    assert "--vendor-charts is not supported with --deployer argocd" in err


def test_verify_runs_from_the_vendored_archives(recipe: Path, tmp_path: Path) -> None:
    from core.verify import helm

    try:
        helm.require_engine()
    except Exception as exc:
        pytest.skip(str(exc))
    out = tmp_path / "b"
    assert _bundle(recipe, out, "--charts", str(ARCHIVES)).returncode == 0
    # No --charts and an empty cache directory: only the bundle's own files can be read.
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    proc = run_cli("verify", str(out), "--report", "-", "-v", env=env)
    assert "vendored archives" in proc.stderr
    assert "chart missing" not in proc.stdout and "pull" not in proc.stdout.lower()
    assert str(out / "charts") in proc.stdout
