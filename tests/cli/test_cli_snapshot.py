"""``aicr-tui snapshot`` end to end: the installed console script in a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aicr_tui.core.documents.snapshot import parse_snapshot
from tests.conftest import SAMPLES

CAPTURES = SAMPLES / "captures"
AKS_INSTALL = str(CAPTURES / "aks-pools-install.json")
OKE_ACTIVE = str(CAPTURES / "oke-addons-active.json")
LEGACY_ACTIVE = str(CAPTURES / "oke-legacy-daemonset-active.json")


def one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("aicr-tui: error: ")
    assert "Traceback" not in stderr
    return lines[0]


def test_no_cluster_to_stdout_with_every_dump(cli) -> None:
    r = cli(
        "snapshot",
        "--no-cluster",
        "--aks-gpu-pools",
        AKS_INSTALL,
        "--oke-addons",
        OKE_ACTIVE,
        "--oke-legacy-daemonset",
        LEGACY_ACTIVE,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    snap = parse_snapshot(r.stdout, "stdout")
    assert snap.apiVersion == "aicr.run/v1"
    assert snap.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Install"
    assert snap.reading("K8s", "aks-gpu-pools", "gpu-pools") == "gpupool1=Install,gpupool2=Install"
    assert snap.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "installed"
    assert snap.reading("K8s", "oke-legacy-plugin", "daemonset") == "active"
    assert [m.type for m in snap.measurements] == ["K8s"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_output_file_in_each_format(cli, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"snap.{fmt}"
    r = cli("snapshot", "--no-cluster", "--aks-gpu-pools", AKS_INSTALL, "-o", str(out), "-t", fmt)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    text = out.read_text()
    if fmt == "json":
        assert json.loads(text)["kind"] == "Snapshot"
    else:
        assert text.startswith("kind: Snapshot\n")
    assert parse_snapshot(text, str(out)).reading("K8s", "aks-gpu-pools", "gpu-pool-count") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_environment_fallbacks(cli) -> None:
    r = cli(
        "snapshot",
        "--no-cluster",
        "--format",
        "json",
        env={"AICR_AKS_GPU_POOLS_PATH": AKS_INSTALL, "AICR_OKE_ADDONS_PATH": OKE_ACTIVE},
    )
    assert r.returncode == 0, r.stderr
    snap = parse_snapshot(r.stdout, "stdout")
    assert snap.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Install"
    assert snap.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "installed"


def test_flag_wins_over_environment(cli) -> None:
    r = cli(
        "snapshot",
        "--no-cluster",
        "--aks-gpu-pools",
        str(CAPTURES / "aks-pools-none.json"),
        env={"AICR_AKS_GPU_POOLS_PATH": "/definitely/missing.json"},
    )
    assert r.returncode == 0, r.stderr
    assert parse_snapshot(r.stdout, "s").reading("K8s", "aks-gpu-pools", "gpu-driver") == "None"


def test_bad_environment_path_fails_like_a_flag(cli, tmp_path: Path) -> None:
    out = tmp_path / "snap.yaml"
    r = cli(
        "snapshot",
        "--no-cluster",
        "-o",
        str(out),
        env={"AICR_OKE_ADDONS_PATH": str(tmp_path / "missing.json")},
    )
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert "missing.json" in line and "oci ce cluster list-addons" in line
    assert not out.exists()


def _make_bad_dump(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / "pools.json"
    if kind == "missing":
        return path
    if kind == "malformed":
        path.write_text('{"value": []}')
    elif kind == "null":
        path.write_text("null")
    elif kind == "oversized":
        path.write_bytes(b"[]" + b" " * 1_048_575)
    elif kind == "symlink":
        path.symlink_to(AKS_INSTALL)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    return path


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [
        ("missing", "failed to open AKS GPU pools file"),
        ("malformed", "failed to decode AKS GPU pools file"),
        ("null", "got JSON null"),
        ("oversized", "exceeds 1048576 bytes"),
        ("symlink", "is a symlink, not a regular file"),
        ("fifo", "is not a regular file"),
        ("directory", "is not a regular file"),
    ],
)
def test_bad_aks_dump_exits_2_with_one_line_and_no_output(
    cli, tmp_path: Path, kind: str, fragment: str
) -> None:
    dump = _make_bad_dump(kind, tmp_path)
    out = tmp_path / "snap.yaml"
    r = cli("snapshot", "--no-cluster", "--aks-gpu-pools", str(dump), "-o", str(out), timeout=30)
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert fragment in line
    assert str(dump) in line
    assert "az aks nodepool list -o json" in line
    assert not out.exists()
    assert r.stdout == ""


@pytest.mark.parametrize(
    ("flag", "content", "command"),
    [
        ("--oke-addons", '{"items": []}', "oci ce cluster list-addons"),
        ("--oke-addons", "[]", "oci ce cluster list-addons"),
        ("--oke-legacy-daemonset", '{"kind": "Pod"}', "kubectl get daemonsets -n kube-system"),
        ("--oke-legacy-daemonset", "nope", "kubectl get daemonsets -n kube-system"),
    ],
)
def test_bad_oke_dumps_exit_2(cli, tmp_path: Path, flag: str, content: str, command: str) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(content)
    out = tmp_path / "snap.yaml"
    r = cli(
        "snapshot", "--no-cluster", "--aks-gpu-pools", AKS_INSTALL, flag, str(dump), "-o", str(out)
    )
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert str(dump) in line and command in line
    assert not out.exists()


def test_failure_keeps_an_existing_output_file(cli, tmp_path: Path) -> None:
    out = tmp_path / "snap.yaml"
    out.write_text("previous\n")
    r = cli("snapshot", "--no-cluster", "--aks-gpu-pools", str(tmp_path / "x.json"), "-o", str(out))
    assert r.returncode == 2
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.yaml"]


def test_projection_runs_before_any_cluster_work(cli, tmp_path: Path) -> None:
    bad = tmp_path / "pools.json"
    bad.write_text("{")
    r = cli(
        "snapshot",
        "--aks-gpu-pools",
        str(bad),
        "--kubeconfig",
        str(tmp_path / "no-kubeconfig"),
        "--context",
        "nowhere",
    )
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert "failed to decode AKS GPU pools file" in line


def test_no_cluster_without_any_dump_is_invalid(cli) -> None:
    r = cli("snapshot", "--no-cluster")
    assert r.returncode == 2
    assert "--no-cluster needs at least one of" in one_error_line(r.stderr)
    assert r.stdout == ""


def test_conflicting_oracle_addons_warn_on_stderr_but_succeed(cli, tmp_path: Path) -> None:
    dump = tmp_path / "addons.json"
    dump.write_text(
        '{"data":[{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"},'
        '{"name":"NvidiaGpuOperator","lifecycle-state":"ACTIVE"}]}'
    )
    r = cli("snapshot", "--no-cluster", "--oke-addons", str(dump))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aicr-tui: warning: ")
    assert "NvidiaGpuOperator" in lines[0] and "disable" in lines[0]
    assert parse_snapshot(r.stdout, "s").reading("K8s", "oke-addons", "nvidia-gpu-plugin") == (
        "installed"
    )


def test_usage_errors_are_one_line_exit_2(cli, tmp_path: Path) -> None:
    r = cli("snapshot", "--no-cluster", "--aks-gpu-pools", AKS_INSTALL, "-t", "table")
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1 and "invalid choice" in r.stderr
    r = cli(
        "snapshot",
        "--no-cluster",
        "--aks-gpu-pools",
        AKS_INSTALL,
        "-o",
        str(tmp_path / "no" / "dir" / "s.yaml"),
    )
    assert r.returncode == 2
    assert "does not exist" in one_error_line(r.stderr)


def test_help_lists_the_flags(cli) -> None:
    r = cli("snapshot", "--help")
    assert r.returncode == 0
    for flag in (
        "--aks-gpu-pools",
        "--oke-addons",
        "--oke-legacy-daemonset",
        "--kubeconfig",
        "--context",
        "--no-cluster",
        "--output",
        "--format",
        "AICR_AKS_GPU_POOLS_PATH",
        "AICR_OKE_ADDONS_PATH",
    ):
        assert flag in r.stdout
