"""``aicr-tui verify`` reads every deployer's layout (issue 16 item 2): the same bundle,
written by each deployer, verifies to the same report as the helm layout, findings included.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.bundler.deployers.config import DEPLOYERS, deployer_config
from aicr_tui.core.verify.api import verify_bundle_dir, verify_plan
from tests.unit.test_bundle_support import demo_recipe, plan
from tests.verify import matrix

REPOS = {"argocd": "https://git.example.com/gpu.git", "flux": "oci://registry.example.com/gpu"}
MISSPELLED = ("gpuoperator:driver.enabeld=false",)


def _report(deployer: str, tmp_path: Path, set_: tuple[str, ...] = ()) -> dict:
    recipe = demo_recipe("aks-azure")  # chart + raw manifests, and a manifest-only component
    p = plan(recipe, set_=set_, deployer=deployer_config(deployer, repo=REPOS.get(deployer, "")))
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / deployer
    write_bundle(p, out)
    report = verify_bundle_dir(out, charts=matrix.chart_dirs())
    planned = verify_plan(p, charts=matrix.chart_dirs())
    doc = report.to_json()
    assert doc == planned.to_json(), "the written layout reads back as the plan verifies"
    folders = {c["component"]: c["folder"] for c in doc["components"]}
    assert folders == {c.name: c.folder for c in p.components}
    for c in doc["components"]:
        c.pop("folder")
    return doc


@pytest.mark.parametrize("deployer", [d for d in DEPLOYERS if d != "helm"])
def test_verify_reads_every_layout_like_the_helm_one(deployer: str, tmp_path: Path) -> None:
    helm = _report("helm", tmp_path / "h", MISSPELLED)
    other = _report(deployer, tmp_path / "o", MISSPELLED)
    assert other == helm
    flat = [(f["component"], f["path"]) for c in other["components"] for f in c["findings"]]
    assert flat == [("gpu-operator", "driver.enabeld")]
    statuses = {c["component"]: c["status"] for c in other["components"]}
    assert statuses["nodewright-customizations"] == "manifest-only"
    assert json.dumps(other)  # serialisable as the CLI writes it
