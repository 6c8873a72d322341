"""A ``null`` in a component's bundle values deletes that chart default (Helm's coalescing);
where the chart has no such default the null is passed through to the templates as it is.

Found on the real API server (tests/cluster/test_deploy_helm.py): the AKS and OKE overlays set
``prometheus.prometheusSpec.storageSpec.emptyDir: null`` to "drop the chart's emptyDir", but
kube-prometheus-stack 84.4.0 defaults ``storageSpec`` to ``{}``, so the Prometheus object got
``spec.storage.emptyDir: null`` and the server refused the whole release ("spec.storage.emptyDir
in body must be of type object"). Every null of every catalog bundle must name a key the pinned
chart's own values.yaml defines (the vendored archives of tests/data/charts/archives).
"""

from __future__ import annotations

import io
import json
import tarfile
from functools import cache
from typing import Any

import pytest
import yaml

from tests.conftest import TEST_DATA
from tests.unit.test_bundle_support import demo_recipe, plan

CHARTS = TEST_DATA / "charts" / "archives"


@cache
def _chart_defaults() -> dict[tuple[str, str], dict[str, Any]]:
    """(chart name, version) -> the chart's values.yaml, for every vendored archive."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for names in json.loads((CHARTS / "repositories.json").read_text("utf-8")).values():
        for name in names:
            with tarfile.open(fileobj=io.BytesIO((CHARTS / name).read_bytes())) as tar:
                top = {m.name.split("/", 1)[0] for m in tar.getmembers()}
                (root,) = top
                meta = yaml.safe_load(_read(tar, f"{root}/Chart.yaml"))
                values = yaml.safe_load(_read(tar, f"{root}/values.yaml")) or {}
            out[(str(meta["name"]), str(meta["version"]))] = values
    return out


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    handle = tar.extractfile(name)
    assert handle is not None, name
    return handle.read()


def _nulls(tree: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(tree, dict):
        out = []
        for key, value in tree.items():
            if value is None:
                out.append((*path, str(key)))
            else:
                out += _nulls(value, (*path, str(key)))
        return out
    return []


def _defined(defaults: Any, path: tuple[str, ...]) -> bool:
    node = defaults
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


@pytest.mark.parametrize("name", ["aks-azure", "aks-operator", "oke-oci", "oke-operator"])
def test_every_null_in_catalog_values_deletes_a_chart_default(name: str) -> None:
    charts = _chart_defaults()
    checked = 0
    for comp in plan(demo_recipe(name)).components:
        if not comp.has_chart:
            continue
        defaults = charts.get((comp.chart, comp.version))
        if defaults is None:
            continue  # no vendored archive for this pin
        for path in _nulls(comp.values):
            checked += 1
            # a subchart's keys live in its own values.yaml, which the archive also holds;
            # the catalog's nulls all target the top chart, so only that is read here
            assert _defined(defaults, path), (
                f"{comp.name}: {'.'.join(path)}: null names no default of {comp.chart} "
                f"{comp.version}; Helm would pass the null to the templates"
            )
    assert checked, (
        "the catalog's nulls (e.g. nvidia-dra-driver-gpu controller.affinity) are checked"
    )
