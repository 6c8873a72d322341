"""Bundle layout, checksums, determinism and safe output (issue 4 items 1 and 7)."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import load_yaml_plain
from tests.unit.test_bundle_support import DEMO, demo_recipe, plan

ROOT_FILES = {
    "README.md",
    "deploy.sh",
    "undeploy.sh",
    "recipe.yaml",
    "bundle-info.yaml",
    "checksums.txt",
}


@pytest.mark.parametrize("name", sorted(DEMO))
def test_layout_checksums_and_order(name: str, tmp_path) -> None:
    recipe = demo_recipe(name)
    p = plan(recipe)
    out = tmp_path / "bundle"
    result = write_bundle(p, out)
    assert result.out_dir == out
    on_disk = sorted(q.relative_to(out).as_posix() for q in out.rglob("*") if q.is_file())
    assert on_disk == sorted(p.files)
    assert ROOT_FILES <= set(on_disk)
    # numbered folders strictly in deploymentOrder
    folders = sorted({f.split("/")[0] for f in on_disk if "/" in f})
    assert folders == [f"{i:03d}-{n}" for i, n in enumerate(recipe.deploymentOrder, 1)]
    for folder in folders:
        assert (out / folder / "values.yaml").is_file()
        assert os.access(out / folder / "install.sh", os.X_OK)
    for script in ("deploy.sh", "undeploy.sh"):
        assert stat.S_IMODE((out / script).stat().st_mode) == 0o755
    # checksums: every file but itself, "<sha256>  <path>"
    lines = (out / "checksums.txt").read_text().splitlines()
    listed = dict(reversed(line.split("  ", 1)) for line in lines)
    assert set(listed) == set(on_disk) - {"checksums.txt"}
    for rel, digest in listed.items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest
    # deploy.sh installs in order, chart source and version pinned, then manifests
    deploy = (out / "deploy.sh").read_text()
    positions = [
        deploy.index(f"==> [{i:03d}] {n}") for i, n in enumerate(recipe.deploymentOrder, 1)
    ]
    assert positions == sorted(positions)
    for comp in p.components:
        if comp.has_chart:
            # options first, then `--`, then the release and the chart (issue 11)
            line = next(
                ln
                for ln in deploy.splitlines()
                if ln.startswith("helm upgrade --install ") and f" -- {comp.name} " in ln
            )
            assert f"--version {comp.version}" in line and comp.source.split("//")[1] in line
        for m in comp.manifests:
            # applied server-side with our marks, after an ownership check (issue 32)
            apply = f"apply_ours {comp.folder}/manifests/{m} "
            assert apply in deploy
            if comp.has_chart:
                assert deploy.index(apply) > deploy.index(line)
    undeploy = (out / "undeploy.sh").read_text()
    rpos = [undeploy.index(f"[{i:03d}] {n}") for i, n in enumerate(recipe.deploymentOrder, 1)]
    assert rpos == sorted(rpos, reverse=True)
    # recipe.yaml and bundle-info.yaml
    effective = load_yaml_plain((out / "recipe.yaml").read_text(), "recipe")
    assert effective["deploymentOrder"] == recipe.deploymentOrder
    info = load_yaml_plain((out / "bundle-info.yaml").read_text(), "info")
    assert info["kind"] == "BundleInfo" and info["apiVersion"] == "aicr.run/v1"
    assert list(info) == sorted(info)
    digest = hashlib.sha256((out / "recipe.yaml").read_bytes()).hexdigest()
    assert info["build"]["recipe"]["digest"] == f"sha256:{digest}"
    assert [r["component"] for r in info["layout"]["releases"]] == recipe.deploymentOrder
    assert info["layout"]["entrypoint"] == "deploy.sh"


@pytest.mark.parametrize("name", sorted(DEMO))
def test_same_inputs_give_byte_identical_bundles(name: str, tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_bundle(plan(demo_recipe(name), set_=("nfd:master.replicaCount=2",)), a)
    write_bundle(plan(demo_recipe(name), set_=("nfd:master.replicaCount=2",)), b)
    files_a = {q.relative_to(a).as_posix(): q.read_bytes() for q in a.rglob("*") if q.is_file()}
    files_b = {q.relative_to(b).as_posix(): q.read_bytes() for q in b.rglob("*") if q.is_file()}
    assert files_a == files_b


def test_dropped_components_leave_the_bundle_and_the_recipe_order() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        set_=("networkoperator:enabled=false", "gpuoperator:driver.rdma.useHostMofed=false"),
    )
    assert "network-operator" not in [c.name for c in p.components]
    recipe = load_yaml_plain(p.files["recipe.yaml"].decode(), "recipe")
    assert "network-operator" not in recipe["deploymentOrder"]
    ref = next(r for r in recipe["componentRefs"] if r["name"] == "network-operator")
    assert ref["overrides"]["enabled"] is False
    assert "network-operator" in p.files["README.md"].decode().split("Left out of this bundle")[1]


def test_refused_plan_writes_nothing(tmp_path) -> None:
    p = plan(demo_recipe("aks-azure"), tolerations=None)
    assert p.errors
    out = tmp_path / "bundle"
    with pytest.raises(AicrError) as exc:
        write_bundle(p, out)
    assert "CheckWildcardAcceleratedToleration" in exc.value.render()
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_non_empty_directory_needs_force(tmp_path) -> None:
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    p = plan(demo_recipe("oke-oci"))
    with pytest.raises(AicrError, match="not empty; pass --force"):
        write_bundle(p, out)
    assert [q.name for q in out.iterdir()] == ["keep.txt"]
    write_bundle(p, out, force=True)
    assert not (out / "keep.txt").exists() and (out / "deploy.sh").is_file()
    assert sorted(q.name for q in tmp_path.iterdir()) == ["bundle"]  # no staging left behind


def test_empty_existing_directory_is_fine(tmp_path) -> None:
    out = tmp_path / "bundle"
    out.mkdir()
    write_bundle(plan(demo_recipe("oke-oci")), out)
    assert (out / "README.md").is_file()


def test_the_staged_inventory_lists_what_rglob_lists(tmp_path) -> None:
    """write_bundle's check re-reads the staged directory with os.walk: the same files as
    ``rglob("*")`` + ``is_file()`` (hidden files, a link to a file; not a linked folder's
    files, a dangling link or a folder), so an extra or missing file still refuses."""
    from aicr_tui.core.bundler.writer import _files_under

    top = tmp_path / "stage"
    (top / "a" / "b").mkdir(parents=True)
    (top / "empty").mkdir()
    for rel in ("x.txt", ".hidden", "a/y", "a/b/z.yaml", "a/b/.k"):
        (top / rel).write_text(rel)
    (top / "a" / "to-file").symlink_to(top / "x.txt")
    (top / "a" / "to-dir").symlink_to(top / "a" / "b")
    (top / "dangling").symlink_to(tmp_path / "missing")
    want = sorted(q.relative_to(top).as_posix() for q in top.rglob("*") if q.is_file())
    assert sorted(_files_under(top)) == want
    assert "a/to-file" in want and "a/to-dir/z.yaml" not in want


@pytest.mark.parametrize("name", sorted(DEMO))
def test_every_folder_holding_a_file_is_0755(name: str, tmp_path) -> None:
    out = tmp_path / "bundle"
    write_bundle(plan(demo_recipe(name)), out)
    folders = {q.parent for q in out.rglob("*") if q.is_file()}
    assert len(folders) > 3
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder
