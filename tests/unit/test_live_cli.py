"""``aicr-tui snapshot`` with live capture, run as a user would (a subprocess).

The tests start small HTTP(S) servers on 127.0.0.1 that answer the REST paths the SDKs
call (Azure AgentPools list, OCI ListAddons, the Kubernetes version/nodes/daemonset
endpoints) and point the command at them: a kubeconfig for Kubernetes, the documented
endpoint-override variables for Azure and OCI. Azure signs in through DefaultAzureCredential's
Azure CLI path, answered by a stand-in ``az`` on PATH that prints a token.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.snapshot import load_snapshot
from tests.conftest import run_cli
from tests.unit.live_fakes import (
    LoopbackServer,
    make_tls_files,
    write_kubeconfig,
    write_oci_config,
)
from tests.unit.test_live_azure import CLUSTER as AKS_CLUSTER
from tests.unit.test_live_azure import REST_POOLS, RG, SUB, paged_pools
from tests.unit.test_live_kube import OKE_NODES, FakeCluster
from tests.unit.test_live_oci import CLUSTER as OKE_CLUSTER
from tests.unit.test_live_oci import REST_ADDONS, paged_addons


def measurements(path: Path) -> list[Any]:
    return [m.model_dump() for m in load_snapshot(str(path)).measurements]


@pytest.fixture
def fake_az(tmp_path: Path) -> Path:
    """A directory holding an ``az`` that answers ``az account get-access-token``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    token = {
        "accessToken": "cli-token",
        "expires_on": int(time.time()) + 3600,
        "subscription": SUB,
        "tenant": "00000000-0000-0000-0000-000000000001",
        "tokenType": "Bearer",
    }
    script = bin_dir / "az"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(token)}\nEOF\n")
    script.chmod(0o755)
    return bin_dir


def azure_env(ca: Path, arm_url: str, path_dirs: list[Path]) -> dict[str, str]:
    return {
        "REQUESTS_CA_BUNDLE": str(ca),
        "AICR_AZURE_ARM_ENDPOINT": arm_url,
        "PATH": os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"]),
        "HOME": str(ca.parent),
        "NO_PROXY": "127.0.0.1,localhost",
    }


def aks_live_snapshot(*extra: str) -> tuple[str, ...]:
    """The ``snapshot --no-cluster`` command line that reads the AKS pools live."""
    return (
        "snapshot",
        "--no-cluster",
        "--aks-subscription",
        SUB,
        "--aks-resource-group",
        RG,
        "--aks-cluster",
        AKS_CLUSTER,
        *extra,
    )


def oke_live_snapshot(kubeconfig: Path, saved: Path, out: Path) -> tuple[str, ...]:
    """The ``snapshot`` command line that reads the cluster and the OKE add-ons live."""
    return (
        "snapshot",
        "--kubeconfig",
        str(kubeconfig),
        "--oke-cluster-id",
        OKE_CLUSTER,
        "--oke-save-addons",
        str(saved),
        "-o",
        str(out),
    )


def test_live_aks_snapshot_matches_the_saved_dump(tmp_path: Path, fake_az: Path) -> None:
    ca, cert, key = make_tls_files(tmp_path)
    out = tmp_path / "live.yaml"
    saved = tmp_path / "pools.json"
    with LoopbackServer(paged_pools(REST_POOLS), tls=(cert, key)) as arm:
        proc = run_cli(
            *aks_live_snapshot("--aks-save-pools", str(saved), "-o", str(out)),
            env=azure_env(ca, arm.url, [fake_az]),
        )
    assert proc.returncode == 0, proc.stderr
    assert arm.requests and arm.requests[0].headers["authorization"] == "Bearer cli-token"
    offline = tmp_path / "offline.yaml"
    proc = run_cli("snapshot", "--no-cluster", "--aks-gpu-pools", str(saved), "-o", str(offline))
    assert proc.returncode == 0, proc.stderr
    assert measurements(out) == measurements(offline)
    reading = load_snapshot(str(out)).reading("K8s", "aks-gpu-pools", "gpu-driver")
    assert reading == "Install"


def test_live_aks_forbidden_writes_nothing(tmp_path: Path, fake_az: Path) -> None:
    ca, cert, key = make_tls_files(tmp_path)
    out = tmp_path / "live.yaml"
    saved = tmp_path / "pools.json"

    def deny(_: Any) -> Any:
        from tests.unit.live_fakes import Reply

        return Reply(403, {"error": {"code": "AuthorizationFailed", "message": "denied"}})

    with LoopbackServer(deny, tls=(cert, key)) as arm:
        proc = run_cli(
            *aks_live_snapshot("--aks-save-pools", str(saved), "-o", str(out)),
            env=azure_env(ca, arm.url, [fake_az]),
        )
    assert proc.returncode == 4
    assert "Microsoft.ContainerService/managedClusters/agentPools/read" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists() and not saved.exists()


def test_live_aks_without_any_credential(tmp_path: Path) -> None:
    out = tmp_path / "live.yaml"
    proc = run_cli(
        *aks_live_snapshot("-o", str(out)),
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "AICR_AZURE_ARM_ENDPOINT": "https://127.0.0.1:9",
        },
    )
    assert proc.returncode == 4, proc.stderr
    assert "DefaultAzureCredential" in proc.stderr and "az login" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_live_oke_and_cluster_snapshot_matches_file_capture(tmp_path: Path) -> None:
    config = write_oci_config(tmp_path)
    saved = tmp_path / "addons.json"
    live_out = tmp_path / "live.yaml"
    offline_out = tmp_path / "offline.yaml"
    with (
        LoopbackServer(paged_addons(REST_ADDONS)) as oci_api,
        LoopbackServer(FakeCluster(OKE_NODES)) as kube_api,
    ):
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", kube_api.url)
        env = {
            "OCI_CLI_CONFIG_FILE": str(config),
            "AICR_OCI_SERVICE_ENDPOINT": oci_api.url,
            "HOME": str(tmp_path),
        }
        proc = run_cli(*oke_live_snapshot(kubeconfig, saved, live_out), env=env)
        assert proc.returncode == 0, proc.stderr
        proc = run_cli(
            "snapshot",
            "--kubeconfig",
            str(kubeconfig),
            "--oke-addons",
            str(saved),
            "-o",
            str(offline_out),
            env={"HOME": str(tmp_path)},
        )
        assert proc.returncode == 0, proc.stderr
    assert measurements(live_out) == measurements(offline_out)
    snap = load_snapshot(str(live_out))
    assert snap.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "installed"
    assert snap.reading("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin") == "none"
    assert snap.reading("OS", "release", "ID") == "ol"
    assert snap.reading("GPU", "hardware", "gpu-count") == 4


def test_failed_cluster_read_writes_no_dump(tmp_path: Path) -> None:
    config = write_oci_config(tmp_path)
    saved = tmp_path / "addons.json"
    out = tmp_path / "live.yaml"
    cluster = FakeCluster(OKE_NODES)
    from tests.unit.live_fakes import Reply

    cluster.nodes_reply = Reply(403, {"kind": "Status", "code": 403, "message": "forbidden"})
    with (
        LoopbackServer(paged_addons(REST_ADDONS)) as oci_api,
        LoopbackServer(cluster) as kube_api,
    ):
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", kube_api.url)
        proc = run_cli(
            *oke_live_snapshot(kubeconfig, saved, out),
            env={
                "OCI_CLI_CONFIG_FILE": str(config),
                "AICR_OCI_SERVICE_ENDPOINT": oci_api.url,
                "HOME": str(tmp_path),
            },
        )
    assert proc.returncode == 4
    assert '"nodes"' in proc.stderr
    assert not out.exists() and not saved.exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--aks-subscription", SUB, "--aks-cluster", "c"], "missing --aks-resource-group"),
        (
            [
                "--aks-gpu-pools",
                "x.json",
                "--aks-subscription",
                SUB,
                "--aks-resource-group",
                RG,
                "--aks-cluster",
                "c",
            ],
            "pass one",
        ),
        (["--aks-save-pools", "p.json"], "--aks-save-pools needs"),
        (["--oke-save-addons", "a.json"], "--oke-save-addons needs"),
        (["--oci-profile", "X"], "--oci-profile needs"),
        (["--oke-addons", "a.json", "--oke-cluster-id", OKE_CLUSTER], "pass one"),
        (["--oke-cluster-id", "not-an-ocid"], "--oke-cluster-id"),
        (
            [
                "--oke-cluster-id",
                OKE_CLUSTER,
                "--oci-auth",
                "instance_principal",
                "--oci-profile",
                "P",
            ],
            "--oci-profile applies",
        ),
    ],
)
def test_bad_live_flags_are_refused(args: list[str], fragment: str) -> None:
    """The flag checks run before any work (in-process: the parser and the check alone)."""
    from aicr_tui.cli import build_parser
    from aicr_tui.commands.snapshot import resolve_dump_paths, resolve_live_providers
    from aicr_tui.core.foundation.errors import AicrError, ErrorCode

    parsed = build_parser().parse_args(["snapshot", "--no-cluster", *args])
    with pytest.raises(AicrError) as info:
        live, paths = resolve_live_providers(parsed, resolve_dump_paths(parsed))
        if live.oke_cluster_id:
            from aicr_tui.core.live.oci import check_cluster_id

            check_cluster_id(live.oke_cluster_id)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert fragment in info.value.message


def test_bad_live_flags_exit_2_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "s.yaml"
    proc = run_cli(
        "snapshot", "--aks-subscription", SUB, "--aks-cluster", "c", "-o", str(out), cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert "missing --aks-resource-group" in proc.stderr
    assert not out.exists()


def test_denied_legacy_read_is_recorded_unknown_with_a_warning(tmp_path: Path) -> None:
    from tests.unit.live_fakes import Reply
    from tests.unit.test_live_kube import forbidden

    out = tmp_path / "s.yaml"
    cluster = FakeCluster(OKE_NODES, daemonset=Reply(403, forbidden("get", "daemonsets")))
    with LoopbackServer(cluster) as kube_api:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", kube_api.url)
        proc = run_cli(
            "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out), env={"HOME": str(tmp_path)}
        )
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "get on apps/daemonsets" in proc.stderr
    snap = load_snapshot(str(out))
    assert snap.reading("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin") == "unknown"
    assert snap.reading("K8s", "oke-legacy-plugin", "daemonset") == "unknown"
