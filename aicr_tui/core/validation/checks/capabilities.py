"""Conformance phase, behavioural capabilities (CNCF AI conformance requirements).

gang-scheduling, accelerator-metrics, ai-service-metrics, inference-gateway, pod-autoscaling,
cluster-autoscaling and robust-controller, each decided through the executor interface only
(API reads, the API server's service proxy for in-cluster HTTP endpoints, and short-lived
test workloads in the validation namespace that are removed afterwards).

Capability contract (upstream ``validators/applicability.go``): a prerequisite that is absent
fails the check when the recipe declares the component that supplies it, and leaves the
check ``not measured`` (naming the missing piece) when it does not. An API error never
passes and never reads as "absent": it ends the check ``not measured`` with the error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.catalog import knob
from aicr_tui.core.validation.checks.base import (
    CheckContext,
    CheckOutcome,
    failed,
    not_applicable,
    not_measured,
    passed,
    pod_name,
    schedulable_gpu_nodes,
)
from aicr_tui.core.validation.executor import (
    WorkloadInfo,
    is_admission_rejection,
    rejection_text,
    service_proxy_path,
)

CRD_GROUP, CRD_VERSION, CRD_PLURAL = "apiextensions.k8s.io", "v1", "customresourcedefinitions"
DEFAULT_PROBE_IMAGE = "docker.io/library/alpine:3.23.3"


def _absent(ctx: CheckContext, component: str, what: str) -> CheckOutcome:
    """A missing prerequisite: a failure if the recipe supplies it, else not measured."""
    if ctx.recipe.has_enabled(component):
        return failed(f"[NOT_FOUND] {what}, although the recipe declares {component}")
    return not_measured(f"{what}; the recipe does not declare {component}, so nothing supplies it")


def _crd_present(ctx: CheckContext, name: str) -> bool:
    found = ctx.executor.get_object(CRD_GROUP, CRD_VERSION, CRD_PLURAL, name) is not None
    ctx.log(f"CRD {name}: {'present' if found else 'missing'}")
    return found


def _condition(obj: dict[str, Any] | None, kind: str) -> tuple[bool, str]:
    """Whether ``status.conditions`` holds ``kind`` = True, and its reason/message."""
    status = (obj or {}).get("status")
    conds = status.get("conditions") if isinstance(status, dict) else None
    for c in conds if isinstance(conds, list) else []:
        if isinstance(c, dict) and c.get("type") == kind:
            why = str(c.get("reason") or c.get("message") or "")
            return str(c.get("status")) == "True", why
    return False, "no such condition"


def _expect_condition(
    ctx: CheckContext, issues: list[str], obj: dict[str, Any] | None, what: str, kind: str
) -> None:
    """Log whether ``what`` (a fetched object, None when absent) has condition ``kind`` True;
    add an issue when it is missing or the condition is not True."""
    if obj is None:
        issues.append(f"{what} not found")
        ctx.log(f"{what}: not found")
        return
    ok, why = _condition(obj, kind)
    ctx.log(f"{what}: {kind}={ok} ({why})")
    if not ok:
        issues.append(f"{what} not {kind} ({why})")


def _deployments_health(ctx: CheckContext, deployments: list[WorkloadInfo]) -> list[str]:
    issues: list[str] = []
    for d in sorted(deployments, key=lambda w: w.name):
        state = "available" if d.healthy else f"not available ({d.available}/{d.desired})"
        ctx.log(f"Deployment {d.namespace}/{d.name}: {state}")
        if not d.healthy:
            issues.append(f"Deployment {d.namespace}/{d.name} {state}")
    return issues


def _cleanup(ctx: CheckContext, items: list[tuple[str, str, str]]) -> None:
    if not ctx.cleanup:
        return
    for api_version, kind, name in reversed(items):
        try:
            ctx.executor.delete(api_version, kind, ctx.namespace, name)
        except AicrError as exc:
            ctx.log(f"cleanup of {kind} {name} failed: {exc.render()}")


# -- gang-scheduling ---------------------------------------------------------------------

KAI_GROUP = "scheduling.run.ai"
KAI_CRDS = ("queues.scheduling.run.ai", "podgroups.scheduling.run.ai")
GANG_SIZE = 2
CO_SCHEDULE_S = 30.0
GANG_SCHEDULE_BUDGET_S = 300.0


def _leaf_queue(queues: list[dict[str, Any]]) -> str | None:
    names = {str((q.get("metadata") or {}).get("name", "")) for q in queues}
    parents = {str((q.get("spec") or {}).get("parentQueue", "")) for q in queues}
    leaves = sorted(n for n in names if n and n not in parents)
    # The recipe's KAI values pin default-queue (under default-parent-queue) for this check.
    if "default-queue" in leaves:
        return "default-queue"
    return leaves[0] if leaves else None


def gang_scheduling(ctx: CheckContext) -> CheckOutcome:
    """A 2-member PodGroup is placed by kai-scheduler all at once (within 30 s) and runs."""
    ns = ctx.component_namespace("kai-scheduler", "kai-scheduler")
    deployments = ctx.executor.list_workloads("Deployment", ns)
    if not deployments:
        return _absent(ctx, "kai-scheduler", f"no KAI scheduler Deployment in namespace {ns}")
    issues = _deployments_health(ctx, deployments)
    missing = [c for c in KAI_CRDS if not _crd_present(ctx, c)]
    if missing:
        issues.append("missing CRD " + ", ".join(missing))
    if issues:
        return failed("; ".join(issues))
    queue = _leaf_queue(ctx.executor.list_objects(KAI_GROUP, "v2", "queues"))
    if queue is None:
        return not_measured("no KAI leaf queue exists to submit the test gang to")
    group = pod_name("aicr-gang", ctx.run_id[-12:])
    image = knob(ctx.entry, "AICR_GANG_IMAGE", DEFAULT_PROBE_IMAGE)
    members = [pod_name(group, str(i)) for i in range(GANG_SIZE)]
    ctx.log(f"PodGroup {group}: minMember {GANG_SIZE}, queue {queue}, pods {', '.join(members)}")
    created: list[tuple[str, str, str]] = []
    try:
        ctx.executor.create(
            {
                "apiVersion": f"{KAI_GROUP}/v2alpha2",
                "kind": "PodGroup",
                "__plural__": "podgroups",
                "metadata": {"name": group, "namespace": ctx.namespace, "labels": ctx.labels()},
                "spec": {"minMember": GANG_SIZE, "queue": queue},
            }
        )
        created.append((f"{KAI_GROUP}/v2alpha2", "PodGroup", group))
        for name in members:
            ctx.executor.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": name,
                        "namespace": ctx.namespace,
                        "labels": ctx.labels(**{"kai.scheduler/queue": queue}),
                        "annotations": {"pod-group-name": group},
                    },
                    "spec": {
                        "schedulerName": "kai-scheduler",
                        "restartPolicy": "Never",
                        "securityContext": {"runAsNonRoot": True, "runAsUser": 65534},
                        "containers": [
                            {
                                "name": "member",
                                "image": image,
                                "command": ["sh", "-c", "echo gang member scheduled; sleep 5"],
                                "resources": {
                                    "requests": {"cpu": "10m", "memory": "16Mi"},
                                    "limits": {"cpu": "100m", "memory": "64Mi"},
                                },
                            }
                        ],
                    },
                }
            )
            created.append(("v1", "Pod", name))
        placed: dict[str, float] = {}
        phases: dict[str, str] = {}
        until = ctx.clock() + min(GANG_SCHEDULE_BUDGET_S, ctx.remaining())
        while True:
            for name in members:
                st = ctx.executor.pod_status(ctx.namespace, name)
                phases[name] = st.phase
                if st.node and name not in placed:
                    placed[name] = ctx.clock()
                    ctx.log(f"pod {name}: placed on {st.node}")
            if all(phases[n] in ("Succeeded", "Failed") for n in members):
                break
            if ctx.clock() >= until or ctx.cancelled.is_set():
                break
            ctx.sleep(min(ctx.poll_s, max(0.0, until - ctx.clock())))
    finally:
        _cleanup(ctx, created)
    if not placed:
        return failed(
            f"kai-scheduler placed no member of PodGroup {group} within "
            f"{GANG_SCHEDULE_BUDGET_S:.0f}s (queue {queue} quota, or no schedulable node)"
        )
    if len(placed) < GANG_SIZE:
        return failed(
            f"only {len(placed)}/{GANG_SIZE} members of PodGroup {group} were placed: "
            "the gang was split, not scheduled all at once"
        )
    spread = max(placed.values()) - min(placed.values())
    ok = spread <= CO_SCHEDULE_S
    ctx.measure("co-schedule spread", round(spread, 1), "s", f"<= {CO_SCHEDULE_S:g}", _v(ok))
    if not ok:
        return failed(f"gang members were placed {spread:.1f}s apart (> {CO_SCHEDULE_S:g}s)")
    bad = {n: p for n, p in phases.items() if p != "Succeeded"}
    if bad:
        return failed(
            "gang members did not complete: "
            + ", ".join(f"{n} {p}" for n, p in sorted(bad.items()))
        )
    return passed(
        f"PodGroup of {GANG_SIZE} co-scheduled by kai-scheduler within {spread:.1f}s and completed"
    )


def _v(ok: bool) -> str:
    return "passed" if ok else "failed"


# -- accelerator-metrics -----------------------------------------------------------------

DCGM_METRICS = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
)
_METRIC_NAME = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{|\s)")


def prometheus_metric_names(text: str) -> set[str]:
    """Metric names that carry at least one sample in a Prometheus text exposition."""
    names: set[str] = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _METRIC_NAME.match(line)
        if m:
            names.add(m.group(1))
    return names


def accelerator_metrics(ctx: CheckContext) -> CheckOutcome:
    """The DCGM exporter serves per-GPU utilisation, memory, temperature and power."""
    ns = ctx.component_namespace("gpu-operator", "gpu-operator")
    url = f"http://nvidia-dcgm-exporter.{ns}.svc:9400/metrics"
    try:
        text = ctx.executor.raw_get(service_proxy_path(ns, "nvidia-dcgm-exporter", 9400, "metrics"))
    except AicrError as exc:
        if ctx.recipe.has_enabled("gpu-operator"):
            return failed(
                f"[SERVICE_UNAVAILABLE] DCGM exporter unreachable at {url}: {exc.render()}"
            )
        return not_measured(f"DCGM exporter unreachable at {url}: {exc.render()}")
    if text is None:
        return _absent(ctx, "gpu-operator", f"Service {ns}/nvidia-dcgm-exporter not found")
    found = prometheus_metric_names(text)
    ctx.log(f"GET {url}")
    for name in DCGM_METRICS:
        ctx.log(f"  {name:<26} {'FOUND' if name in found else 'MISSING'}")
    have = sum(n in found for n in DCGM_METRICS)
    ok = have == len(DCGM_METRICS)
    ctx.measure(
        "DCGM GPU metrics",
        float(have),
        "",
        f"{len(DCGM_METRICS)}/{len(DCGM_METRICS)}",
        _v(ok),
        display=f"{have}/{len(DCGM_METRICS)}",
    )
    if not ok:
        missing = [n for n in DCGM_METRICS if n not in found]
        return failed("DCGM exporter does not serve " + ", ".join(missing))
    return passed(f"DCGM exporter serves {', '.join(DCGM_METRICS)}")


# -- ai-service-metrics ------------------------------------------------------------------

PROMETHEUS_PORT = 9090
METRICS_WAIT_S = 120.0
METRICS_POLL_S = 10.0
CUSTOM_METRICS = ("custom.metrics.k8s.io", "v1beta1")
EXTERNAL_METRICS = ("external.metrics.k8s.io", "v1beta1")


def _ports(svc: dict[str, Any]) -> list[int]:
    ports = (svc.get("spec") or {}).get("ports")
    out: list[int] = []
    for p in ports if isinstance(ports, list) else []:
        if isinstance(p, dict) and isinstance(p.get("port"), int):
            out.append(int(p["port"]))
    return out


def find_prometheus(services: list[dict[str, Any]]) -> str | None:
    """The Prometheus server Service: port 9090, named for prometheus, not an operator."""
    candidates = []
    for svc in services:
        name = str((svc.get("metadata") or {}).get("name", ""))
        if PROMETHEUS_PORT in _ports(svc) and "prometheus" in name and "operator" not in name:
            candidates.append(name)
    # kube-prometheus-stack: "<release>-prometheus"; the operator also adds "prometheus-operated"
    candidates.sort(key=lambda n: (n == "prometheus-operated", n))
    return candidates[0] if candidates else None


def _series(text: str | None) -> int:
    if not text:
        return 0
    try:
        data = json.loads(text)
    except ValueError:
        return 0
    result = ((data or {}).get("data") or {}).get("result") if isinstance(data, dict) else None
    return len(result) if isinstance(result, list) else 0


def ai_service_metrics(ctx: CheckContext) -> CheckOutcome:
    """Prometheus scrapes DCGM series and the custom metrics API answers (the HPA pipeline)."""
    component = "kube-prometheus-stack"
    ns = ctx.component_namespace(component, "monitoring")
    svc = find_prometheus(ctx.executor.list_objects("", "v1", "services", ns))
    if svc is None:
        return _absent(ctx, component, f"no Prometheus Service on port 9090 in namespace {ns}")
    url = f"http://{svc}.{ns}.svc:{PROMETHEUS_PORT}"
    path = service_proxy_path(ns, svc, PROMETHEUS_PORT, "api/v1/query")
    query = (("query", "DCGM_FI_DEV_GPU_UTIL"),)
    ctx.log(f"Prometheus {url}: query DCGM_FI_DEV_GPU_UTIL")
    until = ctx.clock() + min(METRICS_WAIT_S, ctx.remaining())
    count = 0
    while True:
        try:
            count = _series(ctx.executor.raw_get(path, query))
        except AicrError as exc:
            why = f"[SERVICE_UNAVAILABLE] Prometheus unreachable at {url} — verify network connectivity ({exc.render()})"
            return failed(why) if ctx.recipe.has_enabled(component) else not_measured(why)
        if count or ctx.clock() >= until or ctx.cancelled.is_set():
            break
        ctx.sleep(min(METRICS_POLL_S, max(0.0, until - ctx.clock())))
    ctx.log(f"DCGM_FI_DEV_GPU_UTIL series: {count}")
    if not count:
        return failed(
            f"Prometheus at {url} holds no DCGM_FI_DEV_GPU_UTIL series after "
            f"{METRICS_WAIT_S:.0f}s: the DCGM exporter is not scraped"
        )
    served = ctx.executor.served_resources(*CUSTOM_METRICS)
    if not served:
        return _absent(ctx, "prometheus-adapter", "custom.metrics.k8s.io/v1beta1 is not served")
    ctx.log(f"custom.metrics.k8s.io/v1beta1: {len(served)} metric resource(s)")
    return passed(
        f"Prometheus holds {count} DCGM_FI_DEV_GPU_UTIL series; custom metrics API answers "
        f"({len(served)} resources)"
    )


# -- inference-gateway -------------------------------------------------------------------

GATEWAY_GROUP, GATEWAY_VERSION = "gateway.networking.k8s.io", "v1"
# agentgateway, as upstream's inference-gateway check (issue 33: upstream moved off kgateway)
GATEWAY_COMPONENT = "agentgateway"
GATEWAY_CLASS = "agentgateway"
GATEWAY_NAME = "inference-gateway"
GATEWAY_CRDS = (
    "gatewayclasses.gateway.networking.k8s.io",
    "gateways.gateway.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
    "inferencepools.inference.networking.k8s.io",
    "agentgatewayparameters.agentgateway.dev",
)
OPEN_RANGES = ("0.0.0.0/0", "::/0")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def inference_gateway(ctx: CheckContext) -> CheckOutcome:
    """GatewayClass agentgateway Accepted, Gateway inference-gateway Programmed, CRDs present."""
    if not ctx.recipe.has_enabled(GATEWAY_COMPONENT):
        return not_measured(
            "the recipe declares inference-gateway but no gateway component (agentgateway); "
            "regenerate the recipe so its inference layer adds agentgateway and agentgateway-crds"
        )
    ns = ctx.component_namespace(GATEWAY_COMPONENT, "agentgateway-system")
    issues = [f"missing CRD {c}" for c in GATEWAY_CRDS if not _crd_present(ctx, c)]
    deployments = ctx.executor.list_workloads("Deployment", ns)
    if not deployments:
        issues.append(f"no agentgateway controller Deployment in namespace {ns}")
    issues += _deployments_health(ctx, deployments)
    cls = ctx.executor.get_object(GATEWAY_GROUP, GATEWAY_VERSION, "gatewayclasses", GATEWAY_CLASS)
    _expect_condition(ctx, issues, cls, f"GatewayClass {GATEWAY_CLASS}", "Accepted")
    gw = ctx.executor.get_object(GATEWAY_GROUP, GATEWAY_VERSION, "gateways", GATEWAY_NAME, ns)
    _expect_condition(ctx, issues, gw, f"Gateway {ns}/{GATEWAY_NAME}", "Programmed")
    if gw is not None:
        listeners = (gw.get("spec") or {}).get("listeners") or []
        status = gw.get("status") if isinstance(gw.get("status"), dict) else {}
        addresses = [
            str(a.get("value"))
            for a in (status or {}).get("addresses") or []
            if isinstance(a, dict)
        ]
        ctx.log(f"listeners: {len(listeners) if isinstance(listeners, list) else 0}")
        ctx.log(f"addresses: {', '.join(addresses) or 'none yet'}")
    routes = ctx.executor.list_objects(GATEWAY_GROUP, GATEWAY_VERSION, "httproutes", ns)
    ctx.log(f"HTTPRoutes in {ns}: {len(routes)}")
    if issues:
        return failed("; ".join(issues))
    svc = ctx.executor.get_object("", "v1", "services", GATEWAY_NAME, ns)
    spec = (svc or {}).get("spec") or {}
    if spec.get("type") == "LoadBalancer":
        ranges = [str(r) for r in spec.get("loadBalancerSourceRanges") or []]
        open_ = not ranges or any(r in OPEN_RANGES for r in ranges)
        ctx.log(
            f"Service {ns}/{GATEWAY_NAME}: LoadBalancer, source ranges {', '.join(ranges) or 'any (open)'}"
        )
        if open_ and _truthy(ctx.environ.get("AICR_REQUIRE_SCOPED_INFERENCE_GATEWAY")):
            return failed(
                f"Gateway {ns}/{GATEWAY_NAME} is exposed to any address (0.0.0.0/0) and "
                "AICR_REQUIRE_SCOPED_INFERENCE_GATEWAY requires scoped source ranges"
            )
    return passed(f"GatewayClass {GATEWAY_CLASS} Accepted; Gateway {ns}/{GATEWAY_NAME} Programmed")


# -- pod-autoscaling ---------------------------------------------------------------------

HPA_METRICS = ("gpu_utilization", "gpu_memory_used", "gpu_power_usage")
EXTERNAL_METRIC = "dcgm_gpu_power_usage"
PIPELINE_TRIES = 12
HPA_UP_S = 180.0
HPA_DOWN_S = 180.0
HPA_TARGET = "aicr-hpa-target"


def _pod_metric_items(ctx: CheckContext, ns: str, metric: str) -> int:
    text = ctx.executor.raw_get(
        f"/apis/{CUSTOM_METRICS[0]}/{CUSTOM_METRICS[1]}/namespaces/{ns}/pods/*/{metric}"
    )
    if not text:
        return 0
    try:
        items = json.loads(text).get("items")
    except (ValueError, AttributeError):
        return 0
    return len(items) if isinstance(items, list) else 0


def _hpa(ctx: CheckContext, target_value: str) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "__plural__": "horizontalpodautoscalers",
        "metadata": {"name": HPA_TARGET, "namespace": ctx.namespace, "labels": ctx.labels()},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": HPA_TARGET},
            "minReplicas": 1,
            "maxReplicas": 2,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": EXTERNAL_METRIC},
                        "target": {"type": "AverageValue", "averageValue": target_value},
                    },
                }
            ],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0},
                "scaleDown": {"stabilizationWindowSeconds": 0},
            },
        },
    }


def _target_deployment(ctx: CheckContext, image: str) -> dict[str, Any]:
    labels = {"app": HPA_TARGET, **ctx.labels()}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "__plural__": "deployments",
        "metadata": {"name": HPA_TARGET, "namespace": ctx.namespace, "labels": ctx.labels()},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": HPA_TARGET}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65534},
                    "containers": [
                        {
                            "name": "target",
                            "image": image,
                            "command": ["sh", "-c", "sleep 3600"],
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        }
                    ],
                },
            },
        },
    }


def _wait_replicas(ctx: CheckContext, want: int, budget_s: float) -> bool:
    """Poll the target Deployment until it wants and has ``want`` ready replicas."""
    until = ctx.clock() + min(budget_s, ctx.remaining())
    last: tuple[int, int] | None = None
    while True:
        w = ctx.executor.get_workload("Deployment", ctx.namespace, HPA_TARGET)
        state = (w.desired, w.ready) if w is not None else (0, 0)
        if state != last:
            ctx.log(f"Deployment {HPA_TARGET}: {state[1]}/{state[0]} ready")
            last = state
        if state == (want, want):
            return True
        if ctx.clock() >= until or ctx.cancelled.is_set():
            return False
        ctx.sleep(min(ctx.poll_s * 5, max(0.0, until - ctx.clock())))


def pod_autoscaling(ctx: CheckContext) -> CheckOutcome:
    """GPU metrics reach the HPA (DCGM → Prometheus → adapter) and an HPA scales up, then down."""
    gpu_ns = ctx.component_namespace("gpu-operator", "gpu-operator")
    if not ctx.executor.list_pods(gpu_ns, "app=nvidia-dcgm-exporter"):
        return _absent(
            ctx, "gpu-operator", f"no DCGM exporter pods (app=nvidia-dcgm-exporter) in {gpu_ns}"
        )
    served = ctx.executor.served_resources(*CUSTOM_METRICS)
    if not served:
        return _absent(ctx, "prometheus-adapter", "custom.metrics.k8s.io/v1beta1 is not served")
    namespaces = [gpu_ns, ctx.component_namespace("dynamo-platform", "dynamo-system")]
    with_data = ""
    for attempt in range(PIPELINE_TRIES):
        for metric in HPA_METRICS:
            for ns in namespaces:
                if _pod_metric_items(ctx, ns, metric):
                    with_data = f"{metric} in {ns}"
                    break
            if with_data:
                break
        if with_data or attempt == PIPELINE_TRIES - 1 or ctx.remaining() <= METRICS_POLL_S:
            break
        ctx.sleep(METRICS_POLL_S)
    if not with_data:
        return failed(
            "DCGM → Prometheus → adapter pipeline broken: no pod data for "
            f"{'|'.join(HPA_METRICS)} in {' or '.join(namespaces)}"
        )
    ctx.log(f"custom metric with pod data: {with_data}")
    external = ctx.executor.served_resources(*EXTERNAL_METRICS) or set()
    if EXTERNAL_METRIC not in external:
        return failed(f"external metric {EXTERNAL_METRIC} is not served by external.metrics.k8s.io")
    image = knob(ctx.entry, "AICR_HPA_IMAGE", DEFAULT_PROBE_IMAGE)
    created: list[tuple[str, str, str]] = []
    try:
        ctx.executor.create(_target_deployment(ctx, image))
        created.append(("apps/v1", "Deployment", HPA_TARGET))
        # A 1m target is far below any GPU's power draw: the HPA must scale out to max.
        ctx.executor.create(_hpa(ctx, "1m"))
        created.append(("autoscaling/v2", "HorizontalPodAutoscaler", HPA_TARGET))
        ctx.log(f"HPA {HPA_TARGET}: {EXTERNAL_METRIC} target 1m → expect scale up to 2")
        if not _wait_replicas(ctx, 2, HPA_UP_S):
            return failed(
                f"HPA on {EXTERNAL_METRIC} did not scale {HPA_TARGET} up to 2 within {HPA_UP_S:.0f}s"
            )
        ctx.executor.patch_object(
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            HPA_TARGET,
            {"spec": {"metrics": _hpa(ctx, "1G")["spec"]["metrics"]}},
            ctx.namespace,
        )
        ctx.log(f"HPA {HPA_TARGET}: target raised to 1G → expect scale down to 1")
        if not _wait_replicas(ctx, 1, HPA_DOWN_S):
            return failed(f"HPA did not scale {HPA_TARGET} back down to 1 within {HPA_DOWN_S:.0f}s")
    finally:
        _cleanup(ctx, created)
    return passed(
        f"GPU metrics reach the HPA ({with_data}); HPA scaled 1 → 2 → 1 on {EXTERNAL_METRIC}"
    )


# -- cluster-autoscaling -----------------------------------------------------------------

POOL_LABELS = (
    "kubernetes.azure.com/agentpool",
    "oke.oraclecloud.com/pool.name",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
)
_CA_GROUP = re.compile(r"^\s*Name:\s*(\S+)", re.M)
_CA_HEALTH = re.compile(r"Cluster-wide:.*?Health:\s*(\w+)", re.S)


def _gpu_nodepools(ctx: CheckContext) -> list[tuple[str, str]]:
    """(pool label value, node name) for each schedulable GPU node."""
    out = []
    for n in sorted(schedulable_gpu_nodes(ctx.executor.list_nodes()), key=lambda n: n.name):
        pool = next((n.labels[k] for k in POOL_LABELS if n.labels.get(k)), "")
        out.append((pool, n.name))
    return out


def cluster_autoscaling(ctx: CheckContext) -> CheckOutcome:
    """A node autoscaler (Karpenter, or a cluster autoscaler) manages the GPU node pools."""
    pools = _gpu_nodepools(ctx)
    if not pools:
        return not_measured("no schedulable GPU node: nothing to tell which pool scales")
    karpenter = [
        w
        for w in ctx.executor.list_workloads("Deployment")
        if w.name == "karpenter" or w.labels.get("app.kubernetes.io/name") == "karpenter"
    ]
    if karpenter:
        issues = _deployments_health(ctx, karpenter)
        if issues:
            return failed("Karpenter present but unhealthy: " + "; ".join(issues))
        gpu_pools = [
            str((p.get("metadata") or {}).get("name", ""))
            for p in ctx.executor.list_objects("karpenter.sh", "v1", "nodepools")
            if "nvidia" in json.dumps(p.get("spec") or {}).lower()
        ]
        ctx.log(f"Karpenter NodePools providing GPUs: {', '.join(gpu_pools) or 'none'}")
        if not gpu_pools:
            return failed("Karpenter runs but no NodePool provides NVIDIA GPU nodes")
        return passed(f"Karpenter healthy; GPU NodePools {', '.join(gpu_pools)}")
    status = ctx.executor.get_object(
        "", "v1", "configmaps", "cluster-autoscaler-status", "kube-system"
    )
    if status is None:
        return not_measured(
            "no node autoscaler found: no Karpenter Deployment and no "
            "kube-system/cluster-autoscaler-status ConfigMap (on AKS: az aks nodepool update "
            "--enable-cluster-autoscaler on the GPU pool; on OKE: the Cluster Autoscaler add-on)"
        )
    text = str(((status.get("data") or {}).get("status")) or "")
    health = _CA_HEALTH.search(text)
    groups = _CA_GROUP.findall(text)
    ctx.log(f"cluster autoscaler: health {health.group(1) if health else 'unknown'}")
    ctx.log(f"autoscaled node groups: {', '.join(groups) or 'none'}")
    if health is None:
        return not_measured("kube-system/cluster-autoscaler-status holds no cluster-wide health")
    if health.group(1) != "Healthy":
        return failed(f"cluster autoscaler reports cluster-wide health {health.group(1)}")
    uncovered = sorted(
        {
            pool or node
            for pool, node in pools
            if not any((pool and pool in g) or node.startswith(g) for g in groups)
        }
    )
    for pool, node in pools:
        ctx.log(f"GPU node {node} (pool {pool or 'unknown'})")
    if uncovered:
        return failed(
            "GPU node pool(s) not managed by the cluster autoscaler: " + ", ".join(uncovered)
        )
    return passed(
        "cluster autoscaler Healthy and manages every GPU node pool "
        f"({', '.join(sorted({p or n for p, n in pools}))}); no scale-up was triggered"
    )


# -- robust-controller -------------------------------------------------------------------

_TARGETS: tuple[tuple[str, str, str, str, str, str], ...] = (
    # component, default ns, deployment name fragment, CRD, group/version, plural
    (
        "kubeflow-trainer",
        "kubeflow-system",
        "trainer-controller-manager",
        "trainjobs.trainer.kubeflow.org",
        "trainer.kubeflow.org/v1alpha1",
        "trainjobs",
    ),
    (
        "dynamo-platform",
        "dynamo-system",
        "dynamo-operator",
        "dynamographdeployments.nvidia.com",
        "nvidia.com/v1alpha1",
        "dynamographdeployments",
    ),
)


def _invalid_object(component: str, api_version: str, namespace: str, name: str) -> dict[str, Any]:
    if component == "kubeflow-trainer":
        spec: dict[str, Any] = {
            "runtimeRef": {
                "name": "aicr-no-such-runtime",
                "kind": "ClusterTrainingRuntime",
                "apiGroup": "trainer.kubeflow.org",
            }
        }
        kind = "TrainJob"
    else:
        spec = {"services": {"Frontend": {"componentType": "aicr-no-such-component-type"}}}
        kind = "DynamoGraphDeployment"
    return {
        "apiVersion": api_version,
        "kind": kind,
        "__plural__": kind.lower() + "s",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _webhook_endpoints(ctx: CheckContext, service: dict[str, Any]) -> int:
    ns, name = str(service.get("namespace", "")), str(service.get("name", ""))
    slices = ctx.executor.list_objects("discovery.k8s.io", "v1", "endpointslices", ns)
    ready = 0
    for s in slices:
        labels = (s.get("metadata") or {}).get("labels") or {}
        if labels.get("kubernetes.io/service-name") != name:
            continue
        for ep in s.get("endpoints") or []:
            cond = (ep or {}).get("conditions") or {}
            if cond.get("ready") is not False:
                ready += 1
    return ready


def robust_controller(ctx: CheckContext) -> CheckOutcome:
    """The AI operator's controller is up, its webhook is served and rejects an invalid CR."""
    target = next((t for t in _TARGETS if ctx.recipe.has_enabled(t[0])), None)
    if target is None:
        return not_applicable(
            "the recipe deploys neither dynamo-platform nor kubeflow-trainer, the operators "
            "robust-controller verifies (upstream rule: no supported operator, no check)"
        )
    component, default_ns, fragment, crd, api_version, plural = target
    ns = ctx.component_namespace(component, default_ns)
    controllers = [w for w in ctx.executor.list_workloads("Deployment", ns) if fragment in w.name]
    if not controllers:
        return failed(f"[NOT_FOUND] no {component} controller Deployment (*{fragment}*) in {ns}")
    issues = _deployments_health(ctx, controllers)
    if not _crd_present(ctx, crd):
        issues.append(f"CRD {crd} missing")
    group = api_version.split("/", 1)[0]
    hooks = []
    for cfg in ctx.executor.list_objects(
        "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"
    ):
        for hook in cfg.get("webhooks") or []:
            rules = json.dumps((hook or {}).get("rules") or [])
            svc = ((hook or {}).get("clientConfig") or {}).get("service")
            if group in rules and plural in rules and isinstance(svc, dict):
                hooks.append((str(hook.get("name", "")), svc))
    if not hooks:
        issues.append(f"no validating webhook covers {plural}.{group}")
    for hook_name, svc in hooks:
        n = _webhook_endpoints(ctx, svc)
        ctx.log(
            f"webhook {hook_name}: service {svc.get('namespace')}/{svc.get('name')}, {n} ready endpoint(s)"
        )
        if n == 0:
            issues.append(f"webhook {hook_name} has no ready endpoint")
    if issues:
        return failed("; ".join(issues))
    name = pod_name("aicr-robust-probe", ctx.run_id[-12:])
    probe = _invalid_object(component, api_version, ctx.namespace, name)
    ctx.log(
        f"server-side dry run of an invalid {probe['kind']} {name}: expect the webhook to reject it"
    )
    try:
        ctx.executor.create(probe, dry_run=True)
    except AicrError as exc:
        said = rejection_text(exc)
        if is_admission_rejection(exc):
            ctx.log(f"rejected: {said}")
            return passed(f"{component} webhook rejects an invalid {probe['kind']}")
        return not_measured(
            f"the invalid {probe['kind']} was refused before reaching the webhook "
            f"(RBAC, schema or transport), so webhook rejection was not observed: {said}"
        )
    return failed(f"{component} webhook accepted an invalid {probe['kind']} (dry run)")
