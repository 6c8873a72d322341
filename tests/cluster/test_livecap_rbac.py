"""The live capture as a ServiceAccount holding only the documented read-only ClusterRole
(docs/rbac/aicr-tui-snapshot.yaml, applied as shipped) reads exactly what the admin reads;
without the apps/daemonsets rule it still succeeds, and the legacy-DaemonSet reading is
``unknown`` (never ``none``) with one warning line saying why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import Cluster
from tests.cluster.livecap_support import (
    capture,
    create_legacy,
    expected_live,
    model,
    modelled_cluster,
    readings,
    server_version,
)
from tests.conftest import REPO, run_cli

ROLE_FILE = REPO / "docs" / "rbac" / "aicr-tui-snapshot.yaml"
ROLE_NAME = "aicr-tui-snapshot"
NO_DS_ROLE = "cap-snapshot-no-daemonsets"
LEGACY = ("K8s", "oke-legacy-plugin")


def _binding(name: str, role: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": {"aicr-tui.test/owner": "cap"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": "capture", "namespace": namespace}],
    }


def exec_kubeconfig(token_kubeconfig: Path, tmp_path: Path) -> Path:
    """``token_kubeconfig`` with its token served by an ``exec`` credential plugin."""
    config = json.loads(token_kubeconfig.read_text())
    user = config["users"][0]["user"]
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": user.pop("token")},
    }
    plugin = tmp_path / "credential-plugin.sh"
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(0o700)
    user["exec"] = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": str(plugin),
        "interactiveMode": "Never",
    }
    path = tmp_path / "exec.kubeconfig"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    return path


def _can(cluster: Cluster, as_sa: dict[str, str], *args: str) -> bool:
    proc = cluster.kubectl("auth", "can-i", *args, env=as_sa, check=False)
    return proc.stdout.strip() == "yes"


@pytest.mark.parametrize("with_daemonsets", [True, False], ids=["documented", "no-daemonsets"])
def test_capture_as_a_service_account_with_the_documented_role(
    cluster: Cluster, namespace: str, tmp_path: Path, with_daemonsets: bool
) -> None:
    m = model("oke-gb200-absent-legacy-active.yaml")
    binding = f"cap-snapshot-{namespace}"
    cluster.kubectl("create", "serviceaccount", "capture", "-n", namespace)
    try:
        if with_daemonsets:
            cluster.kubectl("apply", "-f", str(ROLE_FILE))
            role = ROLE_NAME
        else:
            shipped = yaml.safe_load(ROLE_FILE.read_text(encoding="utf-8"))
            rules = [r for r in shipped["rules"] if r.get("apiGroups") != ["apps"]]
            assert len(rules) == len(shipped["rules"]) - 1
            cluster.apply(
                {**shipped, "metadata": {"name": NO_DS_ROLE}, "rules": rules}, server_side=True
            )
            role = NO_DS_ROLE
        cluster.apply(_binding(binding, role, namespace))
        kubeconfig = cluster.service_account_kubeconfig(
            namespace, "capture", tmp_path / "capture.kubeconfig"
        )
        as_sa = {"KUBECONFIG": str(kubeconfig)}
        # The binding takes effect through the authorizer's cache: wait for it, then check
        # the account holds what the role grants and nothing beside it.
        cluster.wait_until("the binding in effect", lambda: _can(cluster, as_sa, "list", "nodes"))
        assert _can(cluster, as_sa, "get", "/version")
        ds = ["get", "daemonset/nvidia-gpu-device-plugin", "-n", "kube-system"]
        assert _can(cluster, as_sa, *ds) is with_daemonsets
        assert not _can(cluster, as_sa, "list", "daemonsets", "-n", "kube-system")
        assert not _can(cluster, as_sa, "get", "daemonset/other", "-n", "kube-system")
        assert not _can(cluster, as_sa, "list", "pods", "-A")
        assert not _can(cluster, as_sa, "patch", "nodes")

        with modelled_cluster(cluster, m.nodes):
            create_legacy(cluster)
            admin = capture(cluster, tmp_path, *m.dump_args)
            as_account = capture(cluster, tmp_path, *m.dump_args, kubeconfig=kubeconfig)
            # The same token handed over by an exec credential plugin (as az/kubelogin/oci
            # do), through the client's bounded plugin runner.
            through_exec = capture(
                cluster, tmp_path, *m.dump_args, kubeconfig=exec_kubeconfig(kubeconfig, tmp_path)
            )
    finally:
        cluster.kubectl(
            "delete", "clusterrolebinding", binding, "--ignore-not-found", "--wait=true"
        )
        cluster.kubectl(
            "delete", "clusterrole", ROLE_NAME, NO_DS_ROLE, "--ignore-not-found", "--wait=true"
        )

    got, by_admin = readings(as_account.doc), readings(admin.doc)
    # The admin capture reads the shipped snapshot (see test_livecap_snapshot); the
    # account's reads the same, the legacy reading aside when it may not look.
    _meta, shipped = expected_live(m, server_version(cluster), admin.nodes)
    assert by_admin == shipped
    assert as_account.doc["metadata"]["source-node"] == admin.doc["metadata"]["source-node"]
    if with_daemonsets:
        assert got == by_admin == readings(through_exec.doc)
        assert got[LEGACY] == {"nvidia-gpu-device-plugin": "active", "daemonset": "active"}
        assert "could not read" not in as_account.stderr
        return
    assert {k: v for k, v in got.items() if k != LEGACY} == {
        k: v for k, v in by_admin.items() if k != LEGACY
    }
    # Forbidden to look is "could not consult", never "not installed".
    assert got[LEGACY] == {"nvidia-gpu-device-plugin": "unknown", "daemonset": "unknown"}
    notes = [line for line in as_account.stderr.splitlines() if "nvidia-gpu-device-plugin" in line]
    assert len(notes) == 1, as_account.stderr
    note = notes[0]
    for part in (
        "could not read DaemonSet kube-system/nvidia-gpu-device-plugin",
        "forbidden (HTTP 403)",
        "grant get on apps/daemonsets",
        "system:serviceaccount:",
    ):
        assert part in note, note
    assert "Traceback" not in as_account.stderr
    assert json.dumps(got[LEGACY]).count("none") == 0


def test_without_nodes_the_capture_fails_with_one_line_and_writes_nothing(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    # The node list is what qualification needs: forbidden, the command fails (exit 4,
    # UNAUTHORIZED) naming the permission, and writes nothing.
    binding = f"cap-snapshot-{namespace}"
    shipped = yaml.safe_load(ROLE_FILE.read_text(encoding="utf-8"))
    rules = [r for r in shipped["rules"] if "nodes" not in (r.get("resources") or [])]
    assert len(rules) == len(shipped["rules"]) - 1
    role = "cap-snapshot-no-nodes"
    cluster.kubectl("create", "serviceaccount", "capture", "-n", namespace)
    try:
        cluster.apply({**shipped, "metadata": {"name": role}, "rules": rules}, server_side=True)
        cluster.apply(_binding(binding, role, namespace))
        kubeconfig = cluster.service_account_kubeconfig(
            namespace, "capture", tmp_path / "capture.kubeconfig"
        )
        as_sa = {"KUBECONFIG": str(kubeconfig)}
        ds = ["get", "daemonset/nvidia-gpu-device-plugin", "-n", "kube-system"]
        cluster.wait_until("the binding in effect", lambda: _can(cluster, as_sa, *ds))
        out = tmp_path / "snapshot.yaml"
        proc = run_cli("snapshot", "-k", str(kubeconfig), "-o", str(out), env=as_sa, timeout=120)
    finally:
        cluster.kubectl("delete", "clusterrolebinding", binding, "--ignore-not-found")
        cluster.kubectl("delete", "clusterrole", role, "--ignore-not-found")
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "forbidden (HTTP 403) to list nodes" in lines[0]
    assert 'grant get and list on "nodes"' in lines[0]
    assert not out.exists()


def test_a_token_the_server_rejects_fails_with_one_line(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    cluster.kubectl("create", "serviceaccount", "capture", "-n", namespace)
    kubeconfig = cluster.service_account_kubeconfig(
        namespace, "capture", tmp_path / "capture.kubeconfig"
    )
    config = json.loads(kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-a-token"
    kubeconfig.write_text(json.dumps(config))
    out = tmp_path / "snapshot.yaml"
    proc = run_cli("snapshot", "-k", str(kubeconfig), "-o", str(out), timeout=120)
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "rejected the credentials" in lines[0] and "HTTP 401" in lines[0]
    assert not out.exists()
