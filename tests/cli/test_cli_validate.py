"""`aicr-tui validate` end to end, run as a user would (installed CLI in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from aicr_tui.core.validation.recording import load_recording
from aicr_tui.core.validation.reports.ctrf import ctrf_from_events, render_ctrf
from tests.conftest import SAMPLES

VAL = SAMPLES / "validation"
RECIPE = str(VAL / "aks-h100-training.recipe.yaml")
SNAP_OK = str(SAMPLES / "snapshots" / "aks-h100-install.yaml")
SNAP_NONE = str(SAMPLES / "snapshots" / "aks-h100-none.yaml")
PASSED = str(VAL / "aks-h100-training-passed.jsonl")
FAILED = str(VAL / "aks-nc80adis-training-failed.jsonl")
UNMEASURED = str(VAL / "aks-h100-training-unmeasured.jsonl")


def dry_run(snapshot: str, *args: str) -> tuple[str, ...]:
    """``validate --no-cluster`` of the sample recipe against ``snapshot``, then ``args``."""
    return ("validate", "-r", RECIPE, "-s", snapshot, "--no-cluster", *args)


def test_readiness_no_cluster_reports_every_constraint(cli) -> None:
    res = cli(*dry_run(SNAP_OK, "--phase", "readiness"))
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    # readiness is the pre-flight, not a CTRF test: it is in the report's extra section
    assert report["results"]["tests"] == [] and report["results"]["summary"]["tests"] == 0
    ready = report["results"]["extra"]["readiness"]
    assert len(ready) == 5 and all(r["verdict"] == "passed" for r in ready)
    server = next(r for r in ready if r["name"] == "K8s.server.version")
    assert server["message"] == "expected >= 1.34, got v1.34.2"
    assert "K8s.aks-gpu-pools.gpu-driver" in {r["name"] for r in ready}
    # and on the console: progress streamed on stderr, one line per event
    assert "PASSED         readiness/K8s.server.version" in res.stderr
    assert "validation passed: tests=5" in res.stderr


def test_snapshot_contradicting_the_profile_is_refused_and_nothing_written(
    cli, tmp_path: Path
) -> None:
    out, junit, rec = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "e.jsonl"
    res = cli(*dry_run(SNAP_NONE, "-o", str(out), "--junit", str(junit), "--record", str(rec)))
    assert res.returncode == 2
    assert res.stdout == ""
    assert list(tmp_path.iterdir()) == []
    last = res.stderr.strip().splitlines()[-1]
    assert (
        last
        == "aicr-tui: error: [INVALID_REQUEST] readiness check failed: K8s.aks-gpu-pools.gpu-driver expected Install, got None"
    )
    assert "Traceback" not in res.stderr


def test_no_cluster_reports_every_check_skipped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: a dry run's checks are CTRF ``skipped`` (upstream's status, so a CI gate
    written for upstream's reports passes it) with the reason in the message, in JUnit
    <skipped> and SKIPPED on the console; the verdict stays not measured."""
    junit = tmp_path / "r.xml"
    res = cli(*dry_run(SNAP_OK, "--plain", "--junit", str(junit)))
    assert res.returncode == 0  # a dry run measures nothing on request: no exit 8
    report = json.loads(res.stdout)
    summary = report["results"]["summary"]
    # 20 catalog checks: issue 33 added the NVLS/NET NCCL variants and slinky-slurm-health
    assert (summary["tests"], summary["passed"], summary["skipped"], summary["other"]) == (
        20,
        0,
        20,
        0,
    )
    tests = report["results"]["tests"]
    assert {t["status"] for t in tests} == {"skipped"}
    assert {t["extra"]["verdict"] for t in tests} == {"not measured"}
    assert {t["extra"]["skipReason"] for t in tests} == {"no-cluster-mode"}
    assert all(t["message"].startswith("skipped - no-cluster mode") for t in tests)
    xml = junit.read_text()
    assert (
        'errors="0" skipped="20"' in xml
        and xml.count('<skipped message="skipped - no-cluster') == 20
    )
    finished = [ln for ln in res.stderr.splitlines() if "- no-cluster mode" in ln]
    assert len(finished) == 20 and all(ln.split()[0] == "SKIPPED" for ln in finished)


def test_recorded_run_replays_to_an_identical_ctrf_report(cli, tmp_path: Path) -> None:
    rec, first, second = tmp_path / "e.jsonl", tmp_path / "a.json", tmp_path / "b.json"
    res = cli(*dry_run(SNAP_OK, "--record", str(rec), "-o", str(first)))
    assert res.returncode == 0, res.stderr
    res = cli("validate", "--replay", str(rec), "--replay-speed", "0", "-o", str(second))
    assert res.returncode == 0, res.stderr
    assert first.read_bytes() == second.read_bytes()


def test_replay_of_the_shipped_demo_runs(cli, tmp_path: Path) -> None:
    out, junit = tmp_path / "r.json", tmp_path / "r.xml"
    res = cli(
        "validate", "--replay", PASSED, "--replay-speed", "0", "-o", str(out), "--junit", str(junit)
    )
    assert res.returncode == 0, res.stderr
    assert out.read_text() == render_ctrf(ctrf_from_events(load_recording(PASSED)))
    assert "<testsuites" in junit.read_text()
    assert "RESULT: NCCL All Reduce bandwidth: 157.29 GB/s" in res.stderr
    assert "gate nccl-all-reduce-bw: 157.29 GB/s vs >= 150 → PASSED" in res.stderr
    res = cli("validate", "--replay", FAILED, "--replay-speed", "0")
    assert res.returncode == 8
    report = json.loads(res.stdout)
    assert report["results"]["summary"]["failed"] == 1
    assert "NOT APPLICABLE" in res.stderr
    assert "phase performance not applicable:" in res.stderr  # not "passed" (issue 14)


def test_replay_of_the_unmeasured_recording_exits_8_naming_the_check(cli) -> None:
    res = cli("validate", "--replay", UNMEASURED, "--replay-speed", "0", "--plain")
    assert res.returncode == 8
    lines = res.stderr.splitlines()
    named = [ln for ln in lines if ln.startswith("not measured: ")]
    assert len(named) == 1
    assert named[0].startswith("not measured: performance/nccl-all-reduce-bw: NCCL benchmark image")
    assert "could not be pulled" in named[0]
    res = cli("validate", "--replay", UNMEASURED, "--replay-speed", "0", "--allow-unmeasured")
    assert res.returncode == 0
    assert any(
        ln.startswith("warning: not measured: performance/nccl-all-reduce-bw")
        and ln.endswith("(allowed by --allow-unmeasured)")
        for ln in res.stderr.splitlines()
    )


def test_declared_check_in_the_wrong_phase_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "validators").mkdir()
    (tmp_path / "validators" / "catalog.yaml").write_text(
        "apiVersion: validator.nvidia.com/v1alpha1\nkind: ValidatorCatalog\nvalidators:\n"
        "  - {name: operator-health, phase: conformance, image: example/x:1}\n"
    )
    res = cli(*dry_run(SNAP_OK, "--data", str(tmp_path)))
    assert res.returncode == 2
    assert (
        'declared check "operator-health" in phase deployment matches no validator in the catalog (found under phase: conformance)'
        in res.stderr
    )
    assert res.stdout == ""


def test_bad_flags_are_one_line_exit_2(cli, tmp_path: Path) -> None:
    cases = [
        ("validate", "-r", RECIPE, "--no-cluster"),
        ("validate", "-r", RECIPE, "-s", SNAP_OK, "--phase", "all", "--phase", "deployment"),
        ("validate", "-r", RECIPE, "-s", SNAP_OK, "--replay-speed", "2"),
        ("validate", "-s", SNAP_OK),
        ("validate", "--replay", str(tmp_path / "missing.jsonl")),
        ("validate", "-r", RECIPE, "-s", SNAP_OK, "-o", str(tmp_path / "no" / "dir.json")),
        ("validate", "--record", "a.jsonl", "--replay", PASSED),
    ]
    for args in cases:
        res = cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1, (args, res.stderr)
        assert "Traceback" not in res.stderr


def test_unreachable_cluster_fails_cleanly(cli, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    out = tmp_path / "r.json"
    res = cli(
        "validate",
        "-r",
        RECIPE,
        "-s",
        SNAP_OK,
        "--phase",
        "deployment",
        "-k",
        str(kubeconfig),
        "-o",
        str(out),
    )
    assert res.returncode == 6, res.stderr
    assert "SERVICE_UNAVAILABLE" in res.stderr.strip().splitlines()[-1]
    assert not out.exists()
