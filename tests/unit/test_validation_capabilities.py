"""The seven behavioural conformance checks against the executor interface: for each, a
cluster where it passes, one where it fails and one where it cannot measure.

The cluster is ``tests.simulated.SimulatedCluster`` (an in-memory executor); the
knobs below change exactly what each check reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.recipe.loading import load_recipe
from aicr_tui.core.validation.catalog import load_validator_catalog
from aicr_tui.core.validation.checks import capabilities as cap
from aicr_tui.core.validation.checks.base import CheckContext, CheckOutcome
from aicr_tui.core.validation.events import Event, LogLine, Measurement
from aicr_tui.core.validation.recipe_view import RecipeView
from tests.conftest import SAMPLES
from tests.simulated import SimulatedCluster, VirtualClock, aks_nd96_scenario

TRAINING = RecipeView.of(
    load_recipe(str(SAMPLES / "validation" / "aks-h100-training.recipe.yaml")), "training.yaml"
)
INFERENCE = RecipeView.of(
    load_recipe(str(SAMPLES / "validation" / "aks-h100-inference-dynamo.recipe.yaml")),
    "inference.yaml",
)
CATALOG = load_validator_catalog(environ={})


def without(recipe: RecipeView, *names: str) -> RecipeView:
    return replace(recipe, components=tuple(c for c in recipe.components if c.name not in names))


def check(
    fn: Callable[[CheckContext], CheckOutcome],
    name: str,
    *,
    recipe: RecipeView = TRAINING,
    environ: dict[str, str] | None = None,
    tweak: Callable[[SimulatedCluster], None] | None = None,
    **scenario: Any,
) -> tuple[CheckOutcome, list[Event], SimulatedCluster]:
    sc = aks_nd96_scenario()
    for k, v in scenario.items():
        setattr(sc, k, v)
    clock = VirtualClock()
    cluster = SimulatedCluster(sc, recipe, clock)
    cluster.ensure_namespace("aicr-validation", {})
    if tweak is not None:
        tweak(cluster)
    events: list[Event] = []
    entry = CATALOG.entry(name)
    assert entry is not None
    ctx = CheckContext(
        phase="conformance",
        entry=entry,
        recipe=recipe,
        executor=cluster,
        run_id="20261130-000000-abcdef012345",
        emit=events.append,
        clock=clock,
        t0=0.0,
        sleep=clock.sleep,
        environ=environ or {},
    )
    return fn(ctx), events, cluster


def lines(events: list[Event]) -> list[str]:
    return [e.line for e in events if isinstance(e, LogLine)]


def drop(*keys: tuple[str, str, str, str, str]) -> Callable[[SimulatedCluster], None]:
    def go(cluster: SimulatedCluster) -> None:
        for key in keys:
            cluster.objects.pop(key, None)

    return go


# -- gang-scheduling -------------------------------------------------------------------


def test_gang_scheduling_passes_when_the_gang_is_placed_together() -> None:
    out, events, cluster = check(cap.gang_scheduling, "gang-scheduling")
    assert out.status == "passed", out.message
    assert "co-scheduled by kai-scheduler" in out.message
    (m,) = [e for e in events if isinstance(e, Measurement)]
    assert (m.name, m.verdict, m.threshold) == ("co-schedule spread", "passed", "<= 30")
    created = [n for _, k, n in cluster.created if k in ("Pod", "PodGroup")]
    assert len(created) == 3 and all(n in {x for _, _, x in cluster.deleted} for n in created)
    assert any("queue default-queue" in ln for ln in lines(events))


def test_gang_scheduling_fails_when_the_gang_is_split() -> None:
    out, _, _ = check(cap.gang_scheduling, "gang-scheduling", gang_split=True)
    assert out.status == "failed" and "1/2 members" in out.message


def test_gang_scheduling_fails_without_kai_crds_and_is_not_measured_without_kai() -> None:
    out, _, _ = check(
        cap.gang_scheduling,
        "gang-scheduling",
        tweak=drop(
            (
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "",
                "podgroups.scheduling.run.ai",
            )
        ),
    )
    assert out.status == "failed" and "podgroups.scheduling.run.ai" in out.message
    out, _, _ = check(
        cap.gang_scheduling, "gang-scheduling", recipe=without(TRAINING, "kai-scheduler")
    )
    assert out.status == "not measured"
    assert "does not declare kai-scheduler" in out.message


# -- accelerator-metrics ---------------------------------------------------------------


def test_accelerator_metrics_pass_fail_and_unreachable() -> None:
    out, events, _ = check(cap.accelerator_metrics, "accelerator-metrics")
    assert out.status == "passed"
    assert "  DCGM_FI_DEV_POWER_USAGE    FOUND" in lines(events)
    out, events, _ = check(
        cap.accelerator_metrics,
        "accelerator-metrics",
        dcgm_metrics=("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP"),
    )
    assert out.status == "failed"
    assert (
        out.message == "DCGM exporter does not serve DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_POWER_USAGE"
    )
    # unreachable while the recipe declares gpu-operator: a failure ...
    out, _, _ = check(
        cap.accelerator_metrics,
        "accelerator-metrics",
        unreachable_services={"nvidia-dcgm-exporter"},
    )
    assert out.status == "failed" and out.message.startswith("[SERVICE_UNAVAILABLE]")
    # ... and not measured when nothing in the recipe supplies it
    out, _, _ = check(
        cap.accelerator_metrics,
        "accelerator-metrics",
        recipe=without(TRAINING, "gpu-operator"),
        unreachable_services={"nvidia-dcgm-exporter"},
    )
    assert out.status == "not measured"


def test_prometheus_metric_names_ignore_comments_and_keep_labelled_samples() -> None:
    text = '# HELP X y\n# TYPE X gauge\nX{gpu="0"} 1\nY 2\n\nZ_total{a="b"} 3\n'
    assert cap.prometheus_metric_names(text) == {"X", "Y", "Z_total"}


# -- ai-service-metrics ----------------------------------------------------------------


def test_ai_service_metrics_pass_fail_and_not_measured() -> None:
    out, events, _ = check(cap.ai_service_metrics, "ai-service-metrics")
    assert out.status == "passed" and "16 DCGM_FI_DEV_GPU_UTIL series" in out.message
    out, _, _ = check(cap.ai_service_metrics, "ai-service-metrics", prometheus_scrapes_dcgm=False)
    assert (
        out.status == "failed" and "holds no DCGM_FI_DEV_GPU_UTIL series after 120s" in out.message
    )
    out, _, _ = check(
        cap.ai_service_metrics,
        "ai-service-metrics",
        unreachable_services={"kube-prometheus-stack-prometheus"},
    )
    assert (
        out.status == "failed"
        and "Prometheus unreachable at http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
        in out.message
    )
    out, _, _ = check(cap.ai_service_metrics, "ai-service-metrics", custom_metrics_api=False)
    assert out.status == "failed" and "custom.metrics.k8s.io/v1beta1 is not served" in out.message
    out, _, _ = check(
        cap.ai_service_metrics,
        "ai-service-metrics",
        recipe=without(TRAINING, "kube-prometheus-stack"),
    )
    assert out.status == "not measured" and "no Prometheus Service" in out.message


# -- inference-gateway -----------------------------------------------------------------


def test_inference_gateway_passes_on_the_inference_recipe() -> None:
    out, events, _ = check(cap.inference_gateway, "inference-gateway", recipe=INFERENCE)
    assert out.status == "passed", out.message
    # Issue 33: agentgateway (upstream's inference gateway) in its namespace
    assert "Gateway agentgateway-system/inference-gateway: Programmed=True (Programmed)" in lines(
        events
    )


def test_inference_gateway_fails_when_not_programmed_or_open_but_required_scoped() -> None:
    out, _, _ = check(
        cap.inference_gateway, "inference-gateway", recipe=INFERENCE, gateway_programmed=False
    )
    assert out.status == "failed" and "not Programmed (AddressNotAssigned)" in out.message
    out, _, _ = check(
        cap.inference_gateway,
        "inference-gateway",
        recipe=INFERENCE,
        environ={"AICR_REQUIRE_SCOPED_INFERENCE_GATEWAY": "true"},
    )
    assert out.status == "failed" and "0.0.0.0/0" in out.message
    out, _, _ = check(
        cap.inference_gateway,
        "inference-gateway",
        recipe=INFERENCE,
        tweak=drop(
            (
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "",
                "httproutes.gateway.networking.k8s.io",
            )
        ),
    )
    assert (
        out.status == "failed" and "missing CRD httproutes.gateway.networking.k8s.io" in out.message
    )


def test_inference_gateway_is_not_measured_without_a_gateway_in_the_recipe() -> None:
    out, _, _ = check(cap.inference_gateway, "inference-gateway", recipe=TRAINING)
    assert out.status == "not measured" and "no gateway component (agentgateway)" in out.message


# -- pod-autoscaling -------------------------------------------------------------------


def test_pod_autoscaling_scales_up_then_down() -> None:
    out, events, cluster = check(cap.pod_autoscaling, "pod-autoscaling")
    assert out.status == "passed", out.message
    assert "HPA scaled 1 → 2 → 1" in out.message
    seen = lines(events)
    assert seen.index("Deployment aicr-hpa-target: 2/2 ready") < seen.index(
        "Deployment aicr-hpa-target: 1/1 ready", seen.index("Deployment aicr-hpa-target: 2/2 ready")
    )
    assert (
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "aicr-validation/aicr-hpa-target",
    ) in cluster.deleted


def test_pod_autoscaling_fails_when_the_hpa_does_not_scale_or_the_pipeline_is_broken() -> None:
    out, _, _ = check(cap.pod_autoscaling, "pod-autoscaling", hpa_scales=False)
    assert out.status == "failed" and "did not scale aicr-hpa-target up to 2" in out.message
    out, _, _ = check(cap.pod_autoscaling, "pod-autoscaling", prometheus_scrapes_dcgm=False)
    assert out.status == "failed" and out.message.startswith(
        "DCGM → Prometheus → adapter pipeline broken"
    )


def test_pod_autoscaling_not_measured_without_the_adapter() -> None:
    out, _, _ = check(
        cap.pod_autoscaling,
        "pod-autoscaling",
        recipe=without(TRAINING, "prometheus-adapter"),
        custom_metrics_api=False,
    )
    assert out.status == "not measured" and "custom.metrics.k8s.io/v1beta1" in out.message


# -- cluster-autoscaling ---------------------------------------------------------------


def test_cluster_autoscaling_pass_fail_and_not_measured() -> None:
    out, _, _ = check(cap.cluster_autoscaling, "cluster-autoscaling")
    assert out.status == "passed" and "(gpupool)" in out.message
    out, _, _ = check(cap.cluster_autoscaling, "cluster-autoscaling", autoscaled_pools=())
    assert out.status == "failed" and out.message.endswith("autoscaler: gpupool")
    out, _, _ = check(cap.cluster_autoscaling, "cluster-autoscaling", autoscaler_health="Unhealthy")
    assert out.status == "failed" and "Unhealthy" in out.message
    out, _, _ = check(
        cap.cluster_autoscaling,
        "cluster-autoscaling",
        tweak=drop(("", "v1", "configmaps", "kube-system", "cluster-autoscaler-status")),
    )
    assert out.status == "not measured" and "no node autoscaler found" in out.message


def test_cluster_autoscaling_with_karpenter() -> None:
    from aicr_tui.core.validation.executor import WorkloadInfo

    def karpenter(healthy: bool, gpu_pool: bool) -> Callable[[SimulatedCluster], None]:
        def go(cluster: SimulatedCluster) -> None:
            ready = 1 if healthy else 0
            cluster.workloads[("Deployment", "kube-system", "karpenter")] = WorkloadInfo(
                "Deployment", "karpenter", "kube-system", 1, ready, ready
            )
            spec = {
                "template": {
                    "spec": {
                        "requirements": [
                            {
                                "key": "karpenter.k8s.aws/instance-gpu-manufacturer",
                                "values": ["nvidia"],
                            }
                        ]
                    }
                }
            }
            cluster.objects[("karpenter.sh", "v1", "nodepools", "", "gpu")] = {
                "metadata": {"name": "gpu"},
                "spec": spec if gpu_pool else {},
            }

        return go

    assert (
        check(cap.cluster_autoscaling, "cluster-autoscaling", tweak=karpenter(True, True))[0].status
        == "passed"
    )
    out, _, _ = check(cap.cluster_autoscaling, "cluster-autoscaling", tweak=karpenter(True, False))
    assert out.status == "failed" and "no NodePool provides NVIDIA GPU nodes" in out.message
    out, _, _ = check(cap.cluster_autoscaling, "cluster-autoscaling", tweak=karpenter(False, True))
    assert out.status == "failed" and "Karpenter present but unhealthy" in out.message


# -- robust-controller -----------------------------------------------------------------


def test_robust_controller_passes_when_the_webhook_rejects_the_invalid_cr() -> None:
    out, events, cluster = check(cap.robust_controller, "robust-controller", recipe=INFERENCE)
    assert out.status == "passed" and "rejects an invalid DynamoGraphDeployment" in out.message
    assert any(ln.startswith("rejected: Kubernetes API rejected") for ln in lines(events))
    # a dry run: nothing was created
    assert not any(k == "DynamoGraphDeployment" for _, k, _ in cluster.created)


def test_robust_controller_fails_when_the_webhook_accepts_it_or_has_no_endpoints() -> None:
    out, _, _ = check(
        cap.robust_controller, "robust-controller", recipe=INFERENCE, webhook_rejects=False
    )
    assert out.status == "failed" and "accepted an invalid DynamoGraphDeployment" in out.message

    def no_endpoints(cluster: SimulatedCluster) -> None:
        for key in [k for k in cluster.objects if k[2] == "endpointslices"]:
            del cluster.objects[key]

    out, _, _ = check(
        cap.robust_controller, "robust-controller", recipe=INFERENCE, tweak=no_endpoints
    )
    assert out.status == "failed" and "has no ready endpoint" in out.message


def test_robust_controller_rbac_refusal_is_not_measured_and_no_operator_is_not_applicable() -> None:
    def rbac(cluster: SimulatedCluster) -> None:
        def refuse(manifest: dict[str, Any], *, dry_run: bool = False) -> None:
            raise AicrError(
                ErrorCode.UNAUTHORIZED,
                "Kubernetes API refused creating DynamoGraphDeployment",
                '403 Forbidden: dynamographdeployments.nvidia.com is forbidden: User "x" cannot create',
            )

        cluster.create = refuse  # type: ignore[method-assign]

    out, _, _ = check(cap.robust_controller, "robust-controller", recipe=INFERENCE, tweak=rbac)
    assert out.status == "not measured" and "before reaching the webhook" in out.message
    out, _, _ = check(cap.robust_controller, "robust-controller", recipe=TRAINING)
    assert out.status == "not applicable"


@pytest.mark.parametrize(
    "name",
    [
        "gang_scheduling",
        "accelerator_metrics",
        "ai_service_metrics",
        "inference_gateway",
        "pod_autoscaling",
        "cluster_autoscaling",
        "robust_controller",
    ],
)
def test_no_check_reads_an_api_error_as_a_pass(name: str) -> None:
    """With the API unreachable every capability check ends not measured (the runner's
    guard turns the raise into that verdict) or, where upstream fails an unreachable
    endpoint the recipe supplies, failed; never passed, never not applicable."""
    from aicr_tui.core.validation.runner import _Run

    def down(cluster: SimulatedCluster) -> None:
        def fail(*_a: Any, **_k: Any) -> Any:
            raise AicrError(ErrorCode.SERVICE_UNAVAILABLE, "Kubernetes API unreachable")

        for method in (
            "list_nodes",
            "list_workloads",
            "list_objects",
            "get_object",
            "raw_get",
            "list_pods",
            "served_resources",
        ):
            setattr(cluster, method, fail)

    fn = getattr(cap, name)
    outcome = _Run._guarded(None, fn, _ctx_for(name.replace("_", "-"), down))  # type: ignore[arg-type]
    assert outcome.status in ("not measured", "failed")
    assert "unreachable" in outcome.message


def _ctx_for(name: str, tweak: Callable[[SimulatedCluster], None]) -> CheckContext:
    clock = VirtualClock()
    cluster = SimulatedCluster(aks_nd96_scenario(), INFERENCE, clock)
    tweak(cluster)
    entry = CATALOG.entry(name)
    assert entry is not None
    return CheckContext(
        phase="conformance",
        entry=entry,
        recipe=INFERENCE,
        executor=cluster,
        run_id="r",
        emit=lambda e: None,
        clock=clock,
        t0=0.0,
        sleep=clock.sleep,
        environ={},
    )


def test_workloads_the_checks_create_are_valid_kubernetes_objects() -> None:
    """Every Pod, Service, Secret, Deployment and HPA a check submits validates against the
    Kubernetes 1.34 schema (what the API server would otherwise reject at run time)."""
    import kubernetes_validate

    from aicr_tui.core.validation.checks.performance import nccl_pod_manifests

    submitted: list[dict[str, Any]] = []

    def record(cluster: SimulatedCluster) -> None:
        original = cluster.create

        def create(manifest: dict[str, Any], *, dry_run: bool = False) -> None:
            submitted.append({k: v for k, v in manifest.items() if k != "__plural__"})
            original(manifest, dry_run=dry_run)

        cluster.create = create  # type: ignore[method-assign]

    check(cap.gang_scheduling, "gang-scheduling", tweak=record)
    check(cap.pod_autoscaling, "pod-autoscaling", tweak=record)
    sc = aks_nd96_scenario()
    entry = load_validator_catalog(environ={}).entry("nccl-all-reduce-bw")
    assert entry is not None
    clock = VirtualClock()
    ctx = CheckContext(
        phase="performance",
        entry=entry,
        recipe=TRAINING,
        executor=SimulatedCluster(sc, TRAINING, clock),
        run_id="20261130-000000-abcdef012345",
        emit=lambda e: None,
        clock=clock,
        t0=0.0,
        environ={},
    )
    submitted += nccl_pod_manifests(ctx, sc.nodes, entry.image)
    kinds = {m["kind"] for m in submitted}
    assert {"Pod", "Deployment", "HorizontalPodAutoscaler", "Secret", "Service"} <= kinds
    for manifest in submitted:
        if manifest["kind"] == "PodGroup":
            continue  # a KAI CRD, not in the built-in schema
        kubernetes_validate.validate(manifest, "1.34.0", strict=True)
