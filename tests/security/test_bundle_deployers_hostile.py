"""Every deployer keeps hostile-but-valid recipe values as data: a repository URL whose
path holds ``;``, ``&``, ``$(...)`` and ``'`` (all legal URL characters) and a version with
build metadata come out of every generated YAML document as the exact scalar, and every
file a shell reads (``*.sh``, ``upstream.env``) hands them over as one word with no canary
run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from aicr_tui.core.bundler.deployers.config import DEPLOYERS, deployer_config
from aicr_tui.core.bundler.shell import quote
from aicr_tui.core.documents.recipe_result import RecipeResult
from tests.unit.test_bundle_support import demo_recipe, plan

GIT = "https://git.example.com/platform/gpu-bundle.git"
OCI = "oci://registry.example.com/platform/gpu-bundle"


def _scalars(node: Any) -> set[str]:
    if isinstance(node, dict):
        return {s for v in [*node.keys(), *node.values()] for s in _scalars(v)}
    if isinstance(node, list):
        return {s for v in node for s in _scalars(v)}
    return {node} if isinstance(node, str) else set()


def _hostile_recipe(canary: Path) -> tuple[RecipeResult, str, str]:
    doc = demo_recipe("aks-azure").to_document()
    source = f"https://evil.example/a;{canary};b&{canary}&'$({canary})'"
    version = "1.2.3-rc.1+build.7"
    target = next(r for r in doc["componentRefs"] if str(r.get("source", "")).startswith("https"))
    target["source"] = source
    target["version"] = version
    return RecipeResult.model_validate(json.loads(json.dumps(doc))), source, version


@pytest.mark.parametrize("deployer", DEPLOYERS)
def test_deployer_outputs_keep_hostile_values_as_data(deployer: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    ran = tmp_path / "CANARY-RAN"
    canary.write_text(f"#!/bin/sh\necho ran >> {quote(str(ran))}\n")
    canary.chmod(0o755)
    recipe, source, version = _hostile_recipe(canary)
    kw: dict[str, Any] = {}
    if deployer == "argocd":
        kw["repo"] = GIT
    if deployer == "flux":
        kw["repo"] = OCI
    if deployer in ("helm", "argocd", "argocd-helm"):
        kw["readiness_hooks"] = True
    p = plan(recipe, deployer=deployer_config(deployer, **kw))
    seen: set[str] = set()
    for rel, data in p.files.items():
        helm_template = rel.startswith("templates/") or "/templates/" in rel  # Go templates
        if rel.endswith((".yaml", ".yml")) and not helm_template and rel != "recipe.yaml":
            for doc in yaml.safe_load_all(data.decode()):
                seen |= _scalars(doc)
        elif rel.endswith(".json"):
            seen |= _scalars(json.loads(data))
    repos: list[str] = []
    sourced = [r for r in p.files if r.endswith("upstream.env")]
    for rel in sourced:
        env_file = tmp_path / "env"
        env_file.write_bytes(p.files[rel])
        out = subprocess.run(
            ["bash", "-c", f'. {quote(str(env_file))}; printf \'%s\\0\' "$REPO" "$VERSION"'],
            capture_output=True,
            timeout=30,
            check=True,
            env=dict(os.environ),
        )
        repo, ver = out.stdout.decode().split("\0")[:2]
        repos.append(repo)
        assert repo.startswith(("https://", "oci://")) and ver
        if repo == source:
            assert ver == version
    # the deployer's own documents (not the copied recipe) carry the exact value; helm's
    # carrier is its scripts, run with recording stubs in test_bundle_scripts.py
    if deployer != "helm":
        assert source in seen or source in repos, (deployer, sorted(p.files))
    scripts = [r for r in p.files if r.endswith(".sh")]
    for rel in scripts:
        # syntax only (no helm here): a payload that escaped its quotes would break parsing
        # or show up as a bare command; bash -n runs nothing.
        check = subprocess.run(
            ["bash", "-n"], input=p.files[rel], capture_output=True, timeout=30, check=False
        )
        assert check.returncode == 0, (rel, check.stderr)
    assert not ran.exists()
