"""``aicr-tui bundle --deployer``: the flags end to end, refusals as one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


@pytest.fixture(scope="module")
def recipe(tmp_path_factory) -> Path:
    from aicr_tui.core.documents.recipe_result import render_recipe
    from tests.unit.test_bundle_support import demo_recipe

    path = tmp_path_factory.mktemp("recipes") / "aks-azure.yaml"
    path.write_text(render_recipe(demo_recipe("aks-azure")))
    return path


def test_flux_bundle_through_the_cli(recipe, tmp_path) -> None:
    out = tmp_path / "flux"
    proc = run_cli(
        "bundle", "-r", str(recipe), "-o", str(out), *KEYED,
        "--deployer", "flux", "--repo", "oci://registry.example.com/gpu",
        "--flux-namespace", "gitops", "--flux-oci-source-name", "gpu-bundle", "--serial",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "flux deployer" in proc.stderr and "kustomization.yaml" in proc.stderr
    info = yaml.safe_load((out / "bundle-info.yaml").read_text())
    assert info["build"]["deployer"] == "flux"
    assert info["build"]["settings"]["fluxNamespace"] == "gitops"
    assert info["build"]["settings"]["serial"] is True
    src = yaml.safe_load((out / "sources" / "gpu-bundle.yaml").read_text())
    assert src["spec"]["url"] == "oci://registry.example.com/gpu"


def test_argocd_bundle_with_app_name_and_options(recipe, tmp_path) -> None:
    out = tmp_path / "argo"
    proc = run_cli(
        "bundle", "-r", str(recipe), "-o", str(out), *KEYED, "-d", "argocd",
        "--repo", "https://git.example.com/gpu.git", "--app-name", "gpu-stack",
        "--set", "deployer:targetRevision=release-1", "--readiness-hooks",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    root = yaml.safe_load((out / "app-of-apps.yaml").read_text())
    assert root["metadata"]["name"] == "gpu-stack"
    assert root["spec"]["source"]["targetRevision"] == "release-1"
    assert any(p.name.endswith("-readiness") for p in out.iterdir())


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--deployer", "kustomize"], "must be one of [helm, helmfile, argocd, argocd-helm, flux]"),
        (["--flux-namespace", "gitops"], "--flux-namespace applies only to --deployer flux"),
        (["-d", "argocd", "--flux-oci-source-name", "x"], "--flux-oci-source-name applies only"),
        (["--app-name", "x"], "--app-name applies only to --deployer argocd or argocd-helm"),
        (["-d", "argocd-helm", "--app-name", "Not Valid"], "DNS-1123"),
        (["-d", "flux", "--readiness-hooks"], "--readiness-hooks applies only"),
        (["-d", "argocd", "--dynamic", "gpuoperator:driver.version"], "use --deployer argocd-helm"),
        (["-d", "argocd", "--set-json", 'deployer:project="x"'], "never typed"),
        (["--set", "deployer:project=x"], "apply only to --deployer argocd"),
        (["-d", "argocd", "--set", "deployer:colour=x"], "unknown deployer option"),
        (["-d", "flux", "--repo", "https://example.com/x"], "expected oci://"),
        (["-d", "helmfile", "--set", "gpuoperator:driver.enabled=true"], "ProfileLock"),
    ],
)
def test_refusals_exit_2_with_one_line(args, needle, recipe, tmp_path) -> None:
    proc = run_cli("bundle", "-r", str(recipe), "-o", str(tmp_path / "o"), *KEYED, *args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    # one line, blocking checks summarised in it (warnings are not printed on a failure)
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o").exists()
