"""``mirror list``: every image a bundle's rendered objects name, and its charts.

The AKS H100 training bundle (with readiness hooks, so hook Jobs are in it) is written,
listed through the command, and compared with an independent walk: each step's chart
rendered with Helm's engine from the vendored archives, read with PyYAML, and every Pod
template's containers collected. Every image a Pod template names must be listed; every
listed image must be named somewhere in the rendered text (nothing invented).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aicr_tui.core.bundler.mirror import (
    MirrorList,
    collect,
    image_fields,
    render_hauler,
    render_zarf,
)
from tests.conftest import TEST_DATA, run_cli
from tests.manifest_yaml import load_manifest
from tests.verify.matrix import chart_dirs

ARCHIVES = TEST_DATA / "charts" / "archives"


def _charts() -> list[Path]:
    return [*chart_dirs(), ARCHIVES]


def test_image_fields_find_operands_args_env_and_skip_disabled() -> None:
    policy = {
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "devicePlugin": {
                "repository": "nvcr.io/nvidia",
                "image": "k8s-device-plugin",
                "version": "v1",
            },
            "dcgm": {
                "repository": "nvcr.io/nvidia/cloud-native",
                "image": "dcgm",
                "version": "sha256:" + "a" * 64,
            },
            "driver": {
                "enabled": False,
                "repository": "nvcr.io/nvidia",
                "image": "driver",
                "version": "5",
            },
        },
    }
    deploy = {
        "kind": "Deployment",
        "metadata": {"name": "op", "namespace": "ns"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1"}],
                    "containers": [
                        {
                            "name": "op",
                            "image": "quay.io/op/op:v1",
                            "args": [
                                "--reloader=quay.io/op/reloader:v1",
                                "--level=info",
                                "--x=not/an:image here",
                            ],
                            "env": [
                                {
                                    "name": "SIDE_IMAGE",
                                    "value": "ghcr.io/x/side@sha256:" + "b" * 64,
                                },
                                {"name": "MODE", "value": "fast"},
                            ],
                        }
                    ],
                }
            }
        },
    }
    skyhook = {
        "kind": "Skyhook",
        "metadata": {"name": "t"},
        "spec": {"packages": {"p": {"version": "0.5.0", "image": "ghcr.io/n/p"}}},
    }
    found = {ref for obj in (policy, deploy, skyhook) for ref, _ in image_fields(obj)}
    assert found == {
        "nvcr.io/nvidia/k8s-device-plugin:v1",
        "nvcr.io/nvidia/cloud-native/dcgm@sha256:" + "a" * 64,
        "busybox:1",
        "quay.io/op/op:v1",
        "quay.io/op/reloader:v1",
        "ghcr.io/x/side@sha256:" + "b" * 64,
        "ghcr.io/n/p:0.5.0",
    }


def test_hauler_and_zarf_manifests() -> None:
    from aicr_tui.core.bundler.mirror import Chart

    mirror = MirrorList()
    collect(
        mirror,
        "gpu-operator",
        [
            {
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "nvcr.io/nvidia/gpu-operator:v1"}]},
            }
        ],
    )
    mirror.charts.append(
        Chart(
            "gpu-operator",
            "gpu-operator",
            "https://helm.ngc.nvidia.com/nvidia",
            "v1",
            "gpu-operator",
        )
    )
    docs = list(yaml.safe_load_all(render_hauler(mirror)))
    assert [d["kind"] for d in docs] == ["Images", "Charts"]
    assert all(d["apiVersion"] == "content.hauler.cattle.io/v1" for d in docs)
    assert docs[0]["spec"]["images"] == [{"name": "nvcr.io/nvidia/gpu-operator:v1"}]
    assert docs[1]["spec"]["charts"] == [
        {"name": "gpu-operator", "repoURL": "https://helm.ngc.nvidia.com/nvidia", "version": "v1"}
    ]
    zarf = yaml.safe_load(render_zarf(mirror))
    assert zarf["kind"] == "ZarfPackageConfig"
    (comp,) = zarf["components"]
    assert comp["charts"] == [
        {
            "name": "gpu-operator",
            "version": "v1",
            "namespace": "gpu-operator",
            "url": "https://helm.ngc.nvidia.com/nvidia",
        }
    ]
    assert comp["images"] == ["nvcr.io/nvidia/gpu-operator:v1"] and comp["required"] is True


def _pod_images(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for c in node.get(key) or []:
                if isinstance(c, dict) and isinstance(c.get("image"), str):
                    out.add(c["image"])
        for value in node.values():
            _pod_images(value, out)
    elif isinstance(node, list):
        for value in node:
            _pod_images(value, out)


def _independent_walk(bundle: Path) -> tuple[set[str], str]:
    """Pod-template images and the whole rendered text, without the mirror code."""
    from aicr_tui.core.verify import helm
    from aicr_tui.core.verify.api import bundle_input, chart_verifier

    data = bundle_input(bundle)
    verifier = chart_verifier(_charts())
    images: set[str] = set()
    texts: list[str] = []
    for comp in data.components:
        pieces = list(comp.manifests.values())
        if comp.has_chart:
            src = verifier.source(comp)
            assert src.kind == "chart" and src.path is not None, src.label
            rendered = helm.load_chart(src.path).render(
                comp.values, release=comp.name, namespace=comp.namespace
            )
            pieces += [
                t
                for name, t in rendered.items()
                if "/tests/" not in name and name.endswith((".yaml", ".yml"))
            ]
        for folder in bundle.glob(f"*-{comp.name}-readiness"):
            rendered = helm.load_chart(folder).render(
                yaml.safe_load((folder / "values.yaml").read_text()) or {},
                release=f"{comp.name}-readiness",
                namespace=comp.namespace,
            )
            pieces += list(rendered.values())
        for text in pieces:
            texts.append(text)
            # Helm's separator: any line starting with "---" (a "---# comment" too)
            for chunk in re.split(r"(?m)^---.*$", text):
                _pod_images(load_manifest(chunk), images)
    return images, "\n".join(texts)


@pytest.fixture(scope="module")
def h100_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from aicr_tui.core.verify import helm

    try:
        helm.require_engine()
    except Exception as exc:  # the Helm engine extra is not installed here
        pytest.skip(str(exc))
    work = tmp_path_factory.mktemp("mirror")
    recipe = work / "recipe.yaml"
    made = run_cli(
        "recipe",
        "--service",
        "aks",
        "--accelerator",
        "h100",
        "--os",
        "ubuntu",
        "--intent",
        "training",
        "-o",
        str(recipe),
    )
    assert made.returncode == 0, made.stderr
    bundle = work / "bundle"
    built = run_cli(
        "bundle",
        "-r",
        str(recipe),
        "-o",
        str(bundle),
        "--readiness-hooks",
        "--accelerated-node-toleration",
        "nvidia.com/gpu:NoSchedule",
    )
    assert built.returncode == 0, built.stderr
    return bundle


def test_h100_training_bundle_lists_every_rendered_image(h100_bundle: Path) -> None:
    charts = [a for d in _charts() for a in ("--charts", str(d))]
    proc = run_cli("mirror", "list", str(h100_bundle), "-o", "json", *charts)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["complete"] is True and doc["unrendered"] == []
    listed = {i["ref"] for i in doc["images"]}
    pod_images, text = _independent_walk(h100_bundle)
    assert pod_images, "the walk found no Pod template at all"
    assert pod_images <= listed, sorted(pod_images - listed)
    # Beyond Pod templates: operands the GPU operator's ClusterPolicy names, an image handed
    # to an operator as a flag, and the readiness hooks' kubectl.
    beyond = listed - pod_images
    assert any("/k8s-device-plugin:" in r for r in beyond)
    assert any("prometheus-config-reloader:" in r for r in beyond)
    assert "registry.k8s.io/kubectl:v1.34.2" in pod_images
    # Nothing invented: every listed image's name and tag occur in the rendered text.
    for ref in listed:
        name = ref.split("@")[0].rsplit("/", 1)[-1]
        repo, _, tag = name.partition(":")
        assert repo in text and (not tag or tag in text), ref
    # Images upstream pins by digest stay pinned by digest, exactly as rendered.
    digested = [r for r in listed if "@sha256:" in r]
    assert digested and all(r.split("@")[1] in text for r in digested)
    charts_listed = {(c["name"], c["version"]) for c in doc["charts"]}
    assert ("gpu-operator", "v26.7.0") in charts_listed
    # one line per component that installs an upstream chart (one with a source), each once
    refs = yaml.safe_load((h100_bundle / "recipe.yaml").read_text())["componentRefs"]
    upstream = {ref["name"] for ref in refs if ref.get("source")}
    assert {"gpu-operator", "prometheus-operator-crds"} <= upstream
    assert sorted(c["component"] for c in doc["charts"]) == sorted(upstream)


def test_text_and_recipe_source_agree(h100_bundle: Path) -> None:
    charts = [a for d in _charts() for a in ("--charts", str(d))]
    text = run_cli("mirror", "list", str(h100_bundle / "recipe.yaml"), *charts)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    images = lines[1 : lines.index(next(x for x in lines if x.startswith("# charts")))]
    assert images == sorted(images) and len(images) == int(lines[0].split("(")[1].rstrip(")"))
    # The recipe plans without readiness hooks: the same images except the hooks' kubectl.
    full = json.loads(run_cli("mirror", "list", str(h100_bundle), "-o", "json", *charts).stdout)
    assert set(images) <= {i["ref"] for i in full["images"]}


def test_unrenderable_chart_is_reported_incomplete(h100_bundle: Path, tmp_path: Path) -> None:
    empty = tmp_path / "charts"
    empty.mkdir()
    proc = run_cli("mirror", "list", str(h100_bundle), "--charts", str(empty))
    assert proc.returncode == 8
    assert "# not rendered, images not listed: gpu-operator" in proc.stdout
    assert "images not listed for" in proc.stderr


def test_bad_source_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("mirror", "list", str(tmp_path / "missing"))
    assert proc.returncode == 2 and "missing" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_text_output_is_terminal_safe() -> None:
    from aicr_tui.core.bundler.mirror import render_text

    mirror = MirrorList()
    hostile = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "evil.io/x:\x1b[31mred"}]},
    }
    collect(mirror, "c", [hostile])
    text = render_text(mirror)
    assert "\x1b" not in text and "evil.io/x:" in text
