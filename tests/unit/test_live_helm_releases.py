"""Helm release records read through the Kubernetes API (a loopback server in real shapes)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from core.foundation.errors import AicrError
from core.live.helm_releases import MAX_RELEASE_BYTES, decode_release, read_releases
from tests.unit.live_fakes import LoopbackServer, Reply, Request, write_kubeconfig

MANIFEST = """---
# Source: gpu-operator/templates/operator.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-operator
  namespace: gpu-operator
spec:
  selector:
    matchLabels: {app: gpu-operator}
  template:
    metadata:
      labels: {app: gpu-operator}
    spec:
      containers:
        - name: gpu-operator
          image: nvcr.io/nvidia/gpu-operator:v25.10.1
"""
CRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: clusterpolicies.nvidia.com\n"


def release_doc(name: str, revision: int, version: str = "v25.10.1") -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "gpu-operator",
        "version": revision,
        "info": {"status": "deployed"},
        "chart": {
            "metadata": {"name": "gpu-operator", "version": version},
            "values": {"driver": {"enabled": True}},
            "files": [
                {"name": "crds/clusterpolicy.yaml", "data": base64.b64encode(CRD.encode()).decode()}
            ],
        },
        "config": {"driver": {"enabled": False}},
        "manifest": MANIFEST,
    }


def secret(doc: dict[str, Any], *, gz: bool = True) -> dict[str, Any]:
    raw = json.dumps(doc).encode()
    helm = base64.b64encode(gzip.compress(raw) if gz else raw)  # Helm's own encoding
    return {
        "metadata": {
            "name": f"sh.helm.release.v1.{doc['name']}.v{doc['version']}",
            "namespace": doc["namespace"],
            "labels": {"owner": "helm", "status": "deployed"},
        },
        "type": "helm.sh/release.v1",
        "data": {"release": base64.b64encode(helm).decode()},  # the API's base64 of the bytes
    }


class Secrets:
    def __init__(self, items: list[dict[str, Any]], status: int = 200) -> None:
        self.items = items
        self.status = status

    def __call__(self, request: Request) -> Reply:
        if request.path == "/api/v1/secrets":
            if self.status != 200:
                return Reply(
                    self.status, {"kind": "Status", "code": self.status, "message": "forbidden"}
                )
            assert request.param("labelSelector") == "owner=helm,status=deployed"
            start = int(request.param("continue") or 0)
            page = self.items[start : start + 1]
            meta = {"continue": str(start + 1)} if start + 1 < len(self.items) else {}
            return Reply(
                200, {"kind": "SecretList", "apiVersion": "v1", "metadata": meta, "items": page}
            )
        return Reply(404, {"kind": "Status", "code": 404})


def test_releases_read_across_pages_newest_revision_wins(tmp_path: Path) -> None:
    items = [
        secret(release_doc("gpu-operator", 2)),
        secret(release_doc("gpu-operator", 3, "v26.7.0"), gz=False),
    ]
    with LoopbackServer(Secrets(items)) as api:
        releases = read_releases(str(write_kubeconfig(tmp_path / "kc", api.url)), None)
    assert len(releases) == 1
    rel = releases[0]
    assert (rel.name, rel.namespace, rel.revision, rel.chart, rel.version) == (
        "gpu-operator",
        "gpu-operator",
        3,
        "gpu-operator",
        "v26.7.0",
    )
    assert rel.values == {"driver": {"enabled": False}} and rel.defaults == {
        "driver": {"enabled": True}
    }
    assert "kind: Deployment" in rel.manifest and rel.crds == [CRD]


def test_forbidden_is_one_error_naming_the_permission(tmp_path: Path) -> None:
    with LoopbackServer(Secrets([], status=403)) as api, pytest.raises(AicrError) as info:
        read_releases(str(write_kubeconfig(tmp_path / "kc", api.url)), None)
    assert "list on secrets" in info.value.render() and info.value.exit_code == 4


def test_bomb_and_garbage_refused() -> None:
    bomb = base64.b64encode(
        base64.b64encode(gzip.compress(b" " * (MAX_RELEASE_BYTES + 10)))
    ).decode()
    with pytest.raises(AicrError, match="expands past"):
        decode_release(bomb, "ns/x")
    with pytest.raises(AicrError, match="not base64"):
        decode_release("%%%", "ns/x")
