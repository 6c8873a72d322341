"""Run order, phase logic and check verdicts on the event stream, against the simulated cluster."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from aicr_tui.core.documents.snapshot import Snapshot, load_snapshot
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.recipe.loading import load_recipe
from aicr_tui.core.validation import checks
from aicr_tui.core.validation.checks import registry
from aicr_tui.core.validation.events import (
    CheckFinished,
    Event,
    LogLine,
    Measurement,
    PhaseFinished,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.executor import NodeInfo
from aicr_tui.core.validation.recipe_view import PhaseSpec, RecipeConstraint, RecipeView
from aicr_tui.core.validation.runner import RunResult, run_validation, select_phases
from tests.conftest import SAMPLES, TEST_DATA
from tests.simulated import (
    Scenario,
    SimulatedCluster,
    VirtualClock,
    aks_nc80_scenario,
    aks_nd96_scenario,
    collecting_stream,
    run_collecting,
    run_simulated,
    validation_request,
)

RECIPE = RecipeView.of(
    load_recipe(str(SAMPLES / "validation" / "aks-h100-training.recipe.yaml")), "recipe.yaml"
)
SNAPSHOT = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-install.yaml"))


def run(
    scenario: Scenario,
    recipe: RecipeView = RECIPE,
    snapshot: Snapshot | None = SNAPSHOT,
    **kwargs: Any,
) -> tuple[RunResult, list[Event], SimulatedCluster]:
    return run_simulated(
        scenario,
        recipe,
        snapshot,
        run_id="20261130-000000-000000000000",
        started_ms=1796000000000,
        **kwargs,
    )


def finished(events: list[Event]) -> dict[str, CheckFinished]:
    return {e.check: e for e in events if isinstance(e, CheckFinished)}


def measurements(events: list[Event], check: str) -> list[Measurement]:
    return [e for e in events if isinstance(e, Measurement) and e.check == check]


def test_full_aks_nd96_run_passes_in_upstream_order() -> None:
    result, events, cluster = run(aks_nd96_scenario())
    assert result.exit_code == 0 and result.error is None
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    phases = [e.phase for e in events if isinstance(e, PhaseFinished)]
    assert phases == ["readiness", "deployment", "conformance", "performance"]
    done = finished(events)
    for name in [
        "operator-health",
        "expected-resources",
        "gpu-operator-version",
        "check-nvidia-smi",
        "dra-support",
        "secure-accelerator-access",
        "gpu-operator-health",
        "platform-health",
        "nccl-all-reduce-bw",
        "gang-scheduling",
        "pod-autoscaling",
        "cluster-autoscaling",
        "accelerator-metrics",
        "ai-service-metrics",
    ]:
        assert done[name].status == "passed", (name, done[name].message)
    # the plain training recipe deploys neither Dynamo nor Kubeflow Trainer (upstream rule)
    assert done["robust-controller"].status == "not applicable"
    assert "neither dynamo-platform nor kubeflow-trainer" in done["robust-controller"].message
    bw = measurements(events, "nccl-all-reduce-bw")[0]
    assert (bw.value, bw.threshold, bw.verdict) == (pytest.approx(157.29), ">= 150", "passed")
    lines = [e.line for e in events if isinstance(e, LogLine) and e.check == "nccl-all-reduce-bw"]
    assert "RESULT: NCCL All Reduce bandwidth: 157.29 GB/s" in lines
    assert "Constraint: >= 150 → true" in lines
    assert any("0.9 x 150 = 135.00 GB/s" in ln for ln in lines)
    assert done["check-nvidia-smi"].extra == {"nodesValidated": "2", "nodesTotal": "2"}
    # cleanup: every pod (NCCL launcher, workers, probes) and the SSH Secret are gone, and
    # the namespace we created is deleted; no Trainer on the cluster, so plain pods ran it
    assert cluster.pods == {}
    assert ("v1", "Namespace", "aicr-validation") in cluster.deleted
    assert ("v1", "Secret", "aicr-validation/aicr-nccl-ssh") in cluster.deleted
    assert not any(kind == "TrainJob" for _, kind, _ in cluster.created)
    # performance runs last (after conformance)
    order = [e.check for e in events if isinstance(e, CheckFinished) and e.phase != "readiness"]
    assert order.index("nccl-all-reduce-bw") > order.index("platform-health")


def test_small_ncads_sku_marks_the_floor_not_applicable_and_fails_isolation() -> None:
    result, events, _ = run(aks_nc80_scenario())
    assert result.exit_code == 8
    done = finished(events)
    assert done["secure-accelerator-access"].status == "failed"
    assert "NVIDIA_VISIBLE_DEVICES=all" in done["secure-accelerator-access"].message
    nccl = done["nccl-all-reduce-bw"]
    assert nccl.status == "not applicable" and "not applicable" in nccl.message
    assert "Standard_NC80adis_H100_v5" in nccl.message
    assert measurements(events, "nccl-all-reduce-bw")[0].verdict == "not applicable"
    # the only performance check was exempt by rule: the phase is not applicable, never passed
    assert result.phase_status == {
        "readiness": "passed",
        "deployment": "passed",
        "conformance": "failed",
        "performance": "not applicable",
    }


def test_no_cluster_skips_every_catalog_check_and_never_builds_an_executor() -> None:
    req = validation_request(RECIPE, SNAPSHOT, no_cluster=True)

    def factory() -> Any:
        raise AssertionError("no-cluster must not touch a cluster")

    result, events = run_collecting(req, factory)
    # a dry run measures nothing, on request: every check not measured, exit 0 (not 8);
    # issue 33: reported skipped (upstream's word) with the reason in the message
    assert result.exit_code == 0
    skipped = [e for e in events if isinstance(e, CheckFinished) and e.phase != "readiness"]
    assert (
        len(skipped) == 20
    )  # every catalog entry of every phase, declared or not (17 + the NVLS/NET variants and
    # slinky-slurm-health, issue 33)
    assert all(
        e.status == "not measured"
        and e.message == "skipped - no-cluster mode (offline dry run: nothing was measured)"
        and e.extra == {"skipReason": "no-cluster-mode"}
        for e in skipped
    )
    assert {
        e.status for e in events if isinstance(e, PhaseFinished) and e.phase != "readiness"
    } == {"not measured"}


def test_phase_selection() -> None:
    assert select_phases(None) == ("readiness", "deployment", "conformance", "performance")
    assert select_phases(["performance", "deployment"]) == (
        "readiness",
        "deployment",
        "performance",
    )
    assert select_phases(["readiness"]) == ("readiness",)
    with pytest.raises(AicrError, match="cannot be combined"):
        select_phases(["all", "deployment"])
    result, events, cluster = run(aks_nd96_scenario(), phases=("readiness",))
    assert result.exit_code == 0 and cluster.created == []
    assert [e.phase for e in events if isinstance(e, PhaseFinished)] == ["readiness"]


def test_readiness_refusal_stops_before_any_cluster_work() -> None:
    none_snapshot = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-none.yaml"))
    result, events, cluster = run(aks_nd96_scenario(), snapshot=none_snapshot)
    assert result.exit_code == 2 and result.error is not None
    assert (
        "readiness check failed: K8s.aks-gpu-pools.gpu-driver expected Install, got None"
        in result.error.render()
    )
    assert (
        cluster.created == [] and isinstance(events[-1], RunFinished) and events[-1].exit_code == 2
    )


def test_declared_check_preflight_refuses_unknown_checks() -> None:
    doc = RECIPE
    bad = replace(
        doc,
        phases={
            **doc.phases,
            "deployment": replace(
                doc.phases["deployment"], checks=("operator-health", "no-such-check")
            ),
        },
    )
    result, _, cluster = run(aks_nd96_scenario(), recipe=bad)
    assert result.exit_code == 2 and cluster.created == []
    assert (
        'declared check "no-such-check" in phase deployment matches no validator'
        in result.error.render()
    )  # type: ignore[union-attr]


@pytest.mark.parametrize(("busbw", "status"), [(120.0, "failed"), (140.0, "passed")])
def test_nccl_gate_uses_upstream_tolerance(busbw: float, status: str) -> None:
    scenario = aks_nd96_scenario()
    scenario.nccl_busbw = busbw
    result, events, _ = run(scenario, phases=("performance",))
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert nccl.status == status
    if status == "failed":
        assert (
            nccl.message
            == "NCCL bandwidth 120.00 GB/s does not satisfy constraint >= 150 (with 10% tolerance)"
        )
        assert result.exit_code == 8


def test_nccl_image_pull_failure_is_not_measured_and_exits_8() -> None:
    scenario = aks_nd96_scenario()
    scenario.image_pull_failure = {
        "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
    }
    result, events, _ = run(scenario, phases=("performance",))
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert nccl.status == "not measured" and "could not be pulled" in nccl.message
    assert measurements(events, "nccl-all-reduce-bw")[-1].verdict == "not measured"
    assert result.exit_code == 8 and result.phase_status["performance"] == "not measured"
    assert events[-1].message.startswith("1 declared check(s) not measured")  # type: ignore[attr-defined]
    allowed, events, _ = run(scenario, phases=("performance",), allow_unmeasured=True)
    assert (
        allowed.exit_code == 0 and finished(events)["nccl-all-reduce-bw"].status == "not measured"
    )


def test_nccl_needs_two_nodes() -> None:
    scenario = aks_nd96_scenario()
    scenario.nodes = scenario.nodes[:1]
    result, events, _ = run(scenario, phases=("performance",))
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert nccl.status == "not measured"
    assert nccl.message == "not measured - requires at least 2 GPU nodes for EW fabric test"
    assert result.exit_code == 8


def test_nccl_without_trainer_measures_with_plain_mpi_pods() -> None:
    """Reproduction (issue 14): the plain AKS training recipe installs no Trainer and the
    gate was skipped; it now runs the same mpirun from plain pods and measures."""
    result, events, cluster = run(aks_nd96_scenario(), phases=("performance",))
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert nccl.status == "passed" and result.exit_code == 0
    assert measurements(events, "nccl-all-reduce-bw")[-1].value == pytest.approx(157.29)
    kinds = [(kind, name) for _, kind, name in cluster.created]
    assert ("Secret", "aicr-validation/aicr-nccl-ssh") in kinds
    assert ("Service", "aicr-validation/aicr-nccl") in kinds
    assert ("Pod", "aicr-validation/aicr-nccl-launcher") in kinds
    assert sum(k == "Pod" and "worker" in n for k, n in kinds) == 2
    assert not any(k == "TrainJob" for k, _ in kinds)
    # every object the check created is deleted again
    assert {n for _, k, n in cluster.created if k != "Namespace"} <= {
        n for _, _, n in cluster.deleted
    }


def test_nccl_uses_trainer_when_the_cluster_serves_it() -> None:
    recipe = RECIPE
    trainer = replace(recipe.components[0], name="kubeflow-trainer", namespace="kubeflow")
    with_trainer = replace(recipe, components=(*recipe.components, trainer))
    result, events, cluster = run(aks_nd96_scenario(), recipe=with_trainer, phases=("performance",))
    assert finished(events)["nccl-all-reduce-bw"].status == "passed"
    assert any(kind == "TrainJob" for _, kind, _ in cluster.created)
    # the recipe declares Trainer but the cluster does not serve it: a failure, not a skip
    scenario = aks_nd96_scenario()
    scenario.missing_groups = {"trainer.kubeflow.org"}
    _, events, _ = run(scenario, recipe=with_trainer, phases=("performance",))
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert (
        nccl.status == "failed" and "although the recipe declares kubeflow-trainer" in nccl.message
    )


def test_unhealthy_expected_resource_fails_deployment_and_platform_health() -> None:
    scenario = aks_nd96_scenario()
    scenario.unhealthy = {("DaemonSet", "gpu-operator", "nvidia-device-plugin-daemonset"): (2, 1)}
    result, events, _ = run(scenario, phases=("deployment", "conformance"))
    done = finished(events)
    assert done["expected-resources"].status == "failed"
    assert (
        "DaemonSet gpu-operator/nvidia-device-plugin-daemonset: not ready (ready 1/2"
        in done["expected-resources"].message
    )
    assert done["platform-health"].status == "failed"
    assert result.exit_code == 8


def test_a_crashing_check_is_other_never_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: checks.base.CheckContext) -> checks.base.CheckOutcome:
        raise KeyError("status")

    monkeypatch.setitem(registry.CHECKS, "operator-health", boom)
    result, events, _ = run(aks_nd96_scenario(), phases=("deployment",))
    op = finished(events)["operator-health"]
    assert op.status == "not measured" and op.message.startswith("[INTERNAL] KeyError")
    assert result.exit_code == 8


def test_no_cleanup_keeps_workloads_and_says_how_to_inspect() -> None:
    _, events, cluster = run(aks_nd96_scenario(), phases=("deployment",), cleanup=False)
    assert not any(kind == "Pod" for _, kind, _ in cluster.deleted)
    assert ("v1", "Namespace", "aicr-validation") not in cluster.deleted
    assert any(isinstance(e, LogLine) and "--no-cleanup" in e.line for e in events)


def test_cluster_preparation_failure_aborts_with_its_code() -> None:
    req = validation_request(RECIPE, SNAPSHOT)

    def factory() -> Any:
        raise AicrError(
            ErrorCode.UNAUTHORIZED, "Kubernetes API refused creating namespace aicr-validation"
        )

    result, events = run_collecting(req, factory)
    assert result.exit_code == 4 and result.error is not None
    assert not any(isinstance(e, CheckFinished) and e.phase == "deployment" for e in events)


# -- inference-perf ----------------------------------------------------------------------


def inference_recipe(
    throughput: str | None = ">= 50000", ttft: str | None = "<= 2000", dynamo: bool = True
) -> RecipeView:
    constraints = []
    if throughput is not None:
        constraints.append({"name": "inference-throughput", "value": throughput})
    if ttft is not None:
        constraints.append({"name": "inference-ttft-p99", "value": ttft})
    constraints += [
        {"name": "inference-model", "value": "Qwen/Qwen3-8B"},
        {"name": "inference-concurrency-per-gpu", "value": "256"},
    ]
    refs = [{"name": "gpu-operator", "namespace": "gpu-operator"}]
    if dynamo:
        refs.append({"name": "dynamo-platform", "namespace": "dynamo-system"})
    return RecipeView.from_document(
        {
            "criteria": {"service": "aks"},
            "componentRefs": refs,
            "validation": {
                "performance": {"checks": ["inference-perf"], "constraints": constraints}
            },
        }
    )


def run_inference(
    scenario: Scenario, recipe: RecipeView
) -> tuple[CheckFinished, list[Event], SimulatedCluster]:
    result, events, cluster = run(scenario, recipe=recipe, snapshot=None, phases=("performance",))
    return finished(events)["inference-perf"], events, cluster


def test_inference_perf_gates_the_aks_baseline() -> None:
    scenario = aks_nd96_scenario()
    done, events, cluster = run_inference(scenario, inference_recipe())
    assert done.status == "passed", done.message
    got = {m.name: (m.value, m.verdict) for m in measurements(events, "inference-perf")}
    assert got["inference-throughput"] == (pytest.approx(148004.0), "passed")
    assert got["inference-ttft-p99"] == (pytest.approx(579.70), "passed")
    lines = [e.line for e in events if isinstance(e, LogLine) and e.check == "inference-perf"]
    assert "RESULT: Inference throughput: 148004.00 tokens/sec" in lines
    assert "RESULT: Inference TTFT p99: 579.70 ms" in lines
    assert "TTFT p99 constraint: <= 2000 → PASS" in lines
    assert not any(ns.startswith("aicr-inference-perf-") for ns in cluster.namespaces)


def test_inference_perf_on_small_sku_gates_ttft_only() -> None:
    scenario = aks_nd96_scenario()
    scenario.nodes = [
        NodeInfo(
            "nc40-0",
            {"node.kubernetes.io/instance-type": "Standard_NC40ads_H100_v5"},
            {"nvidia.com/gpu": "1"},
        )
    ]
    scenario.inference_throughput = 21000.0  # far below the full-node floor, and that is fine here
    done, events, _ = run_inference(scenario, inference_recipe())
    assert done.status == "passed" and "not applicable" in done.message
    got = {m.name: m.verdict for m in measurements(events, "inference-perf")}
    assert got == {"inference-throughput": "not applicable", "inference-ttft-p99": "passed"}
    scenario.inference_ttft_p99_ms = 2500.0
    done, _, _ = run_inference(scenario, inference_recipe())
    assert done.status == "failed" and "TTFT p99 2500.00 ms" in done.message


def test_inference_perf_guards_and_bad_operators() -> None:
    done, _, _ = run_inference(aks_nd96_scenario(), inference_recipe(None, None))
    assert (done.status, done.message) == (
        "not measured",
        "no inference-throughput or inference-ttft-p99 constraint in recipe",
    )
    done, _, _ = run_inference(aks_nd96_scenario(), inference_recipe(dynamo=False))
    assert done.message == "not measured - dynamo-platform not in recipe components"
    scenario = aks_nd96_scenario()
    scenario.missing_groups = {"nvidia.com"}
    done, _, _ = run_inference(scenario, inference_recipe())
    assert (
        done.status == "not measured" and "DynamoGraphDeployment CRD not installed" in done.message
    )
    done, _, _ = run_inference(aks_nd96_scenario(), inference_recipe(throughput="> 50000"))
    assert done.status == "failed" and done.message.startswith("[INVALID_REQUEST]")


def test_inference_perf_workload_never_ready_is_a_timeout_failure() -> None:
    scenario = aks_nd96_scenario()
    scenario.dgd_ready_after_s = 10_000.0
    done, _, _ = run_inference(scenario, inference_recipe())
    assert done.status == "failed" and "DynamoGraphDeployment not ready: TIMEOUT" in done.message
    assert "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT" in done.message


def test_a_busy_gpu_node_leaves_only_its_own_probe_unmeasured_within_the_shared_budget() -> None:
    """Issue 32 item 5 changed this from "failed": a probe that never started measured
    nothing, so the check is not measured, with the kubelet's reason."""
    scenario = aks_nd96_scenario()
    busy = scenario.nodes[0].name
    scenario.busy_nodes = {busy}
    _, events, _ = run(scenario, phases=("deployment",))
    smi = finished(events)["check-nvidia-smi"]
    assert smi.status == "not measured"
    assert smi.message.startswith("the nvidia-smi probe did not finish on 1/2 nodes; ")
    assert f"{busy}: not measured (probe pod Pending on {busy}: the kubelet has not started" in (
        smi.message
    )
    assert smi.extra == {"nodesValidated": "1", "nodesTotal": "2"}
    assert smi.duration_ms <= 10 * 60 * 1000 + 1000  # within the catalog budget
    lines = [e.line for e in events if isinstance(e, LogLine) and e.check == "check-nvidia-smi"]
    assert any(ln.startswith(f"{busy}: not measured (probe pod Pending") for ln in lines)
    assert any(ln.startswith(f"{scenario.nodes[1].name}: OK") for ln in lines)


def test_log_follower_streams_only_new_lines_across_a_sliding_tail() -> None:
    from aicr_tui.core.validation.checks.performance import LogFollower

    logs = ["# header", "a NCCL INFO chatter", "row 1"]
    emitted: list[str] = []

    class Ctx:
        namespace = "ns"

        class executor:  # noqa: N801 - a stand-in object with the one method used
            @staticmethod
            def pod_logs(ns: str, name: str, container: str = "", tail_lines: int = 1000) -> str:
                return "\n".join(logs[-tail_lines:])

        @staticmethod
        def log(line: str) -> None:
            emitted.append(line)

    follower = LogFollower(Ctx(), "pod", 3, "> ")  # type: ignore[arg-type]
    follower.poll()
    logs += ["row 2", "row 3"]  # the 3-line tail now slides past the first lines
    follower.poll()
    follower.poll()
    assert emitted == ["> # header", "> row 1", "> row 2", "> row 3"]


def test_cancelling_a_run_stops_the_check_and_removes_its_namespace() -> None:
    import time as _time

    scenario = aks_nd96_scenario()
    scenario.busy_nodes = {n.name for n in scenario.nodes}  # the nvidia-smi probes never start
    clock = VirtualClock()
    cluster = SimulatedCluster(scenario, RECIPE, clock)

    def slow_sleep(seconds: float) -> None:
        _time.sleep(0.001)  # real time passes, so the run is still inside the check when cancelled
        clock.sleep(seconds)

    req = validation_request(RECIPE, SNAPSHOT, phases=("deployment",), poll_s=0.01)
    stream, events = collecting_stream()

    async def go() -> float:
        task = asyncio.create_task(
            run_validation(req, stream, lambda: cluster, clock=clock, sleep=slow_sleep)
        )
        while not any(
            isinstance(e, CheckStarted) and e.check == "check-nvidia-smi" for e in events
        ):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        started = _time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return _time.perf_counter() - started

    from aicr_tui.core.validation.events import CheckStarted

    took = asyncio.run(go())
    assert took < 5.0
    assert ("v1", "Namespace", "aicr-validation") in cluster.deleted
    assert not any(isinstance(e, CheckFinished) and e.check == "check-nvidia-smi" for e in events)


def test_skip_check_is_reported_skipped_and_checked_up_front() -> None:
    result, events, _ = run(
        aks_nd96_scenario(), phases=("performance",), skip_checks=("nccl-all-reduce-bw",)
    )
    assert result.error is not None  # it would leave the performance phase with nothing to run
    assert "nothing to run" in result.error.render()
    result, events, _ = run(
        aks_nd96_scenario(), phases=("deployment",), skip_checks=("check-nvidia-smi",)
    )
    smi = finished(events)["check-nvidia-smi"]
    assert (smi.status, smi.message, smi.extra) == (
        "not measured",
        "withheld by --skip-check (named in skipChecks)",
        {"skipReason": "named-in-skip-checks"},
    )
    # withheld on request: the phase is not passed, but the run does not exit 8 for it
    assert result.phase_status["deployment"] == "not measured"
    assert result.exit_code == 0
    result, _, cluster = run(aks_nd96_scenario(), skip_checks=("no-such",))
    assert result.exit_code == 2 and cluster.created == []


def test_fail_fast_skips_later_phases_after_a_failing_one() -> None:
    result, events, _ = run(aks_nc80_scenario(), fail_fast=True)
    assert result.phase_status["conformance"] == "failed"
    nccl = finished(events)["nccl-all-reduce-bw"]
    assert (nccl.status, nccl.message) == (
        "not measured",
        "not run: --fail-fast stopped after a previous phase failed",
    )
    assert result.exit_code == 8


# -- issue 33: the GB200 NVL72 transport variants ---------------------------------------

NVLS_MARKERS = TEST_DATA / "validation" / "nccl_transport_markers.txt"


OKE_GB200_SNAPSHOT = load_snapshot(str(SAMPLES / "snapshots" / "oke-gb200-active.yaml"))


def _nvls_recipe() -> RecipeView:
    """The training recipe re-aimed at OKE GB200 on Oracle Linux with upstream's OKE
    performance block; readiness keeps the one constraint an OKE capture can answer, so the
    run is checked against the OKE GB200 sample capture it agrees with (a capture that
    contradicts the recipe fails readiness before any gate runs)."""
    gate = PhaseSpec(
        checks=("nccl-all-reduce-bw-nvls",),
        constraints=(RecipeConstraint("nccl-all-reduce-bw-nvls", ">= 500"),),
    )
    return replace(
        RECIPE,
        criteria={**RECIPE.criteria, "service": "oke", "accelerator": "gb200", "os": "ol"},
        constraints=tuple(c for c in RECIPE.constraints if c.name == "K8s.server.version"),
        phases={**RECIPE.phases, "performance": gate},
    )


def _gb200_scenario(markers: bool = True) -> Scenario:
    scenario = aks_nd96_scenario()
    scenario.nccl_busbw = 834.57  # the NVL72 rack figure of tests/data/validation
    if markers:
        text = NVLS_MARKERS.read_text(encoding="utf-8")
        scenario.nccl_transport_log = "".join(
            ln + "\n" for ln in text.splitlines() if "NVLS" in ln or "MNNVL" in ln
        )
    return scenario


def test_nvls_gate_passes_only_when_the_log_proves_nvls() -> None:
    result, events, cluster = run(
        _gb200_scenario(),
        recipe=_nvls_recipe(),
        snapshot=OKE_GB200_SNAPSHOT,
        phases=("performance",),
    )
    nvls = finished(events)["nccl-all-reduce-bw-nvls"]
    assert nvls.status == "passed" and result.exit_code == 0, nvls.message
    bw = measurements(events, "nccl-all-reduce-bw-nvls")[-1]
    assert (bw.value, bw.threshold, bw.verdict) == (pytest.approx(834.57), ">= 500", "passed")
    # the IMEX channel comes from a ComputeDomain every worker claims, and both are cleaned up
    kinds = [(kind, name) for _, kind, name in cluster.created]
    assert ("ComputeDomain", "aicr-validation/aicr-nccl-nvls") in kinds
    assert ("ComputeDomain", "aicr-validation/aicr-nccl-nvls") in [
        (k, n) for _, k, n in cluster.deleted
    ]
    # the same bandwidth without the NVLS markers is a failure, never a pass
    _, events, _ = run(
        _gb200_scenario(markers=False),
        recipe=_nvls_recipe(),
        snapshot=OKE_GB200_SNAPSHOT,
        phases=("performance",),
    )
    nvls = finished(events)["nccl-all-reduce-bw-nvls"]
    assert nvls.status == "failed"
    assert "NVLS multicast support is available" in nvls.message


def test_nvls_gate_that_cannot_run_is_not_measured() -> None:
    scenario = _gb200_scenario()
    scenario.missing_groups = {"resource.nvidia.com"}
    result, events, cluster = run(
        scenario, recipe=_nvls_recipe(), snapshot=OKE_GB200_SNAPSHOT, phases=("performance",)
    )
    nvls = finished(events)["nccl-all-reduce-bw-nvls"]
    assert nvls.status == "not measured" and "ComputeDomain" in nvls.message
    assert result.exit_code == 8 and not any(k == "Pod" for _, k, _ in cluster.created)
    # the AKS H100 recipe (and its own capture) carrying the NVLS gate: no IMEX domain there
    h100 = replace(
        RECIPE, phases={**RECIPE.phases, "performance": _nvls_recipe().phases["performance"]}
    )
    _, events, _ = run(_gb200_scenario(), recipe=h100, phases=("performance",))
    nvls = finished(events)["nccl-all-reduce-bw-nvls"]
    assert nvls.status == "not measured" and "GB200 NVL72 IMEX domain" in nvls.message


def test_a_probe_never_scheduled_is_not_measured_with_the_schedulers_reason() -> None:
    scenario = aks_nd96_scenario()
    scenario.unplaceable_pods = True
    _, events, _ = run(scenario, phases=("deployment",))
    smi = finished(events)["check-nvidia-smi"]
    assert smi.status == "not measured", smi
    assert "never scheduled: Unschedulable: 0/1 nodes are available" in smi.message
