"""Conformance phase: the capabilities the Kubernetes API can decide.

Here: platform-health, gpu-operator-health, dra-support, secure-accelerator-access. The
behavioural capabilities (gang scheduling, metrics pipelines, autoscaling, controller
webhooks, inference gateway) are in ``capabilities.py``. A catalog name with no function
(an external ``--data`` entry) is reported not measured, never passed.
"""

from __future__ import annotations

from typing import Any

from aicr_tui.core.validation.checks.base import (
    CheckContext,
    CheckOutcome,
    failed,
    not_applicable,
    not_measured,
    passed,
    pod_name,
    schedulable_gpu_nodes,
    wait_pod,
)
from aicr_tui.core.validation.checks.deployment import check_expected_resources, find_gpu_operator

DRA_GROUP, DRA_VERSION = "resource.k8s.io", "v1"
DRA_RESOURCES = ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")


def platform_health(ctx: CheckContext) -> CheckOutcome:
    issues: list[str] = []
    seen: set[str] = set()
    for c in ctx.recipe.components:
        if not c.enabled or not c.namespace or c.namespace in seen:
            continue
        seen.add(c.namespace)
        phase = ctx.executor.namespace_phase(c.namespace)
        if phase is None:
            issues.append(f"namespace {c.namespace}: not found")
            ctx.log(f"namespace {c.namespace}: not found")
        elif phase != "Active":
            issues.append(f"namespace {c.namespace}: {phase}")
            ctx.log(f"namespace {c.namespace}: {phase}")
        else:
            ctx.log(f"namespace {c.namespace}: Active")
    if not seen:
        return not_measured("no enabled component declares a namespace; nothing to verify")
    res_issues, unsupported, _total = check_expected_resources(ctx, "platform", settle_s=0.0)
    issues += res_issues
    if issues:
        return failed("[NOT_FOUND] " + "; ".join(issues))
    if unsupported:
        return not_measured("could not verify " + ", ".join(unsupported))
    return passed(f"{len(seen)} component namespaces Active; expected resources healthy")


def gpu_operator_health(ctx: CheckContext) -> CheckOutcome:
    issues: list[str] = []
    op = find_gpu_operator(ctx)
    if op is None:
        issues.append("GPU Operator Deployment not found")
        ctx.log("GPU Operator Deployment: not found")
    else:
        state = "available" if op.healthy else f"not available ({op.available}/{op.desired})"
        ctx.log(f"GPU Operator Deployment {op.namespace}/{op.name}: {state}")
        if not op.healthy:
            issues.append(f"GPU Operator Deployment {state}")
    policy = ctx.executor.get_object("nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    if policy is None:
        issues.append("ClusterPolicy cluster-policy not found")
        ctx.log("ClusterPolicy cluster-policy: not found")
    else:
        status = policy.get("status") if isinstance(policy.get("status"), dict) else {}
        state = str((status or {}).get("state", "") or "unknown")
        ctx.log(f"ClusterPolicy cluster-policy: state={state}")
        if state != "ready":
            issues.append(f"ClusterPolicy cluster-policy state is {state}, expected ready")
    ns = op.namespace if op is not None else ctx.component_namespace("gpu-operator", "gpu-operator")
    dcgm = ctx.executor.get_workload("DaemonSet", ns, "nvidia-dcgm-exporter")
    if dcgm is None:
        issues.append(f"DaemonSet {ns}/nvidia-dcgm-exporter not found")
        ctx.log(f"DaemonSet {ns}/nvidia-dcgm-exporter: not found")
    else:
        ctx.log(f"DaemonSet {ns}/nvidia-dcgm-exporter: ready {dcgm.ready}/{dcgm.desired}")
        if not dcgm.healthy:
            issues.append(
                f"DaemonSet {ns}/nvidia-dcgm-exporter not ready ({dcgm.ready}/{dcgm.desired})"
            )
    if issues:
        return failed("; ".join(issues))
    return passed("GPU Operator available, ClusterPolicy ready, DCGM exporter ready")


def dra_support(ctx: CheckContext) -> CheckOutcome:
    served = ctx.executor.served_resources(DRA_GROUP, DRA_VERSION)
    if served is None:
        ctx.log(f"{DRA_GROUP}/{DRA_VERSION}: not served")
        return failed(
            f"[NOT_FOUND] {DRA_GROUP}/{DRA_VERSION} is not served (DRA is GA from Kubernetes 1.34)"
        )
    missing = [r for r in DRA_RESOURCES if r not in served]
    for r in DRA_RESOURCES:
        ctx.log(f"{DRA_GROUP}/{DRA_VERSION} {r}: {'served' if r in served else 'missing'}")
    if missing:
        return failed(f"[NOT_FOUND] {DRA_GROUP}/{DRA_VERSION} does not serve " + ", ".join(missing))
    driver = ctx.recipe.component("nvidia-dra-driver-gpu")
    if driver is not None and driver.enabled and driver.namespace:
        plugins = [
            w
            for w in ctx.executor.list_workloads("DaemonSet", driver.namespace)
            if w.name.endswith("kubelet-plugin")
        ]
        if not plugins:
            return failed(
                f"[NOT_FOUND] no DRA kubelet-plugin DaemonSet in namespace {driver.namespace}"
            )
        for w in plugins:
            ctx.log(f"DaemonSet {w.namespace}/{w.name}: ready {w.ready}/{w.desired}")
            if not w.healthy:
                return failed(
                    f"DRA kubelet plugin {w.namespace}/{w.name} not ready ({w.ready}/{w.desired})"
                )
    drift = allocation_drift(ctx)
    if drift:
        return failed(drift)
    return passed("DRA API served (" + ", ".join(DRA_RESOURCES) + ")")


DRA_GPU_DRIVER = "gpu.nvidia.com"


def allocation_drift(ctx: CheckContext) -> str | None:
    """Compare the recipe-resolved #1327 policy with what the cluster advertises.

    device-plugin-extended-resource: GPU nodes advertise nvidia.com/gpu and no ResourceSlice
    of the DRA GPU driver offers whole GPUs; dra-resource-claim: the reverse. A bundle-time
    override of the policy keys therefore surfaces here as recipe/cluster drift.
    """
    from aicr_tui.core.bundler.policy import POLICY_DEVICE_PLUGIN, POLICY_DRA

    policy = ctx.recipe.allocation_policy
    if policy not in (POLICY_DEVICE_PLUGIN, POLICY_DRA):
        if policy:
            ctx.log(f"GPU allocation policy {policy}: not compared with the cluster")
        return None
    nodes = [n for n in ctx.executor.list_nodes() if n.is_gpu_node]
    plugin_nodes = sorted(n.name for n in nodes if n.gpu_count > 0)
    slices = ctx.executor.list_objects(DRA_GROUP, DRA_VERSION, "resourceslices")
    gpu_slices = sorted(
        {
            str((sl.get("spec") or {}).get("nodeName") or "?")
            for sl in slices
            if (sl.get("spec") or {}).get("driver") == DRA_GPU_DRIVER
            and (sl.get("spec") or {}).get("devices")
        }
    )
    ctx.log(f"GPU allocation policy (resolved from the recipe): {policy}")
    ctx.log(f"nodes advertising nvidia.com/gpu: {len(plugin_nodes)}/{len(nodes)}")
    ctx.log(f"nodes with {DRA_GPU_DRIVER} ResourceSlice devices: {len(gpu_slices)}")
    if policy == POLICY_DEVICE_PLUGIN:
        if gpu_slices:
            return (
                f"recipe/cluster drift: the recipe resolves {policy}, but the DRA driver also "
                f"advertises whole GPUs ({DRA_GPU_DRIVER} ResourceSlices on "
                f"{', '.join(gpu_slices)}): dual advertisement (#1327)"
            )
        missing = sorted(n.name for n in nodes if n.gpu_count <= 0)
        if missing:
            return (
                f"recipe/cluster drift: the recipe resolves {policy}, but "
                f"{', '.join(missing)} advertise(s) no nvidia.com/gpu (device plugin off?) (#1327)"
            )
        return None
    if plugin_nodes:
        return (
            f"recipe/cluster drift: the recipe resolves {policy}, but the device plugin still "
            f"advertises nvidia.com/gpu on {', '.join(plugin_nodes)} (#1327)"
        )
    if not gpu_slices:
        return (
            f"recipe/cluster drift: the recipe resolves {policy}, but no {DRA_GPU_DRIVER} "
            "ResourceSlice offers GPUs (#1327)"
        )
    return None


PROBE_SCRIPT = (
    "if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then "
    "echo 'GPU device nodes visible:'; ls /dev/nvidia[0-9]*; nvidia-smi -L || true; "
    "echo ISOLATION_BREACH; "
    "else echo NO_GPU_VISIBLE; fi"
)


def secure_accelerator_access(ctx: CheckContext) -> CheckOutcome:
    nodes = sorted(schedulable_gpu_nodes(ctx.executor.list_nodes()), key=lambda n: n.name)
    if not nodes:
        return not_measured(
            "no schedulable GPU node to probe", skipReason="no-schedulable-gpu-nodes"
        )
    node = nodes[0]
    name = pod_name("aicr-isolation-probe", node.name)
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ctx.namespace, "labels": ctx.labels()},
        "spec": {
            "nodeName": node.name,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65534},
            "containers": [
                {
                    "name": "probe",
                    "image": ctx.entry.image,
                    "command": ["sh", "-c", PROBE_SCRIPT],
                    "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
                    "securityContext": {"privileged": False, "allowPrivilegeEscalation": False},
                }
            ],
        },
    }
    ctx.log(
        f"probe pod {name} on {node.name}: unprivileged, NVIDIA_VISIBLE_DEVICES=all, no GPU request"
    )
    ctx.executor.create(manifest)
    try:
        status = wait_pod(ctx, name, ctx.remaining())
        logs = ctx.executor.pod_logs(ctx.namespace, name) if status.terminal else ""
    finally:
        if ctx.cleanup:
            ctx.executor.delete("v1", "Pod", ctx.namespace, name)
    if not status.terminal:
        return not_measured(f"isolation probe did not finish: {status.unfinished_reason()}")
    for line in logs.splitlines()[-20:]:
        ctx.log(line)
    if "ISOLATION_BREACH" in logs:
        return failed(
            f"an unprivileged pod without a GPU request sees GPUs on {node.name} through "
            "NVIDIA_VISIBLE_DEVICES=all; set accept-nvidia-visible-devices-envvar-when-unprivileged "
            "= false in the NVIDIA container toolkit config"
        )
    if "NO_GPU_VISIBLE" in logs:
        return passed(f"no GPU visible to an unrequested, unprivileged pod on {node.name}")
    return not_measured("isolation probe output holds neither verdict marker")


SLINKY_GROUP, SLINKY_VERSION = "slinky.slurm.net", "v1beta1"


def _pod_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    conditions = (status or {}).get("conditions") or []
    return (status or {}).get("phase") == "Running" and any(
        isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
    )


def _pod_gpus(pod: dict[str, Any]) -> int:
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {} if isinstance(c, dict) else {}
        for side in ("limits", "requests"):
            raw = (res.get(side) or {}).get("nvidia.com/gpu")
            try:
                total = max(total, int(str(raw))) if raw is not None else total
            except ValueError:
                continue
    return total


def slinky_slurm_health(ctx: CheckContext) -> CheckOutcome:
    """Upstream's slinky-slurm-health, as far as the Kubernetes API decides it: the Slinky
    LoginSet/NodeSet APIs are served, a login pod is ready, NodeSet pods are ready and (on a
    recipe with a concrete accelerator) request GPUs. Upstream then runs scontrol ping,
    sinfo and srun (and an srun GPU container) in the login pod; that needs pod exec, which
    aicr-tui does not do, so a healthy precondition ends not measured, never passed."""
    comp = ctx.recipe.component("slinky-slurm")
    if comp is None or not comp.enabled:
        return not_applicable("slinky-slurm is not an enabled component of this recipe")
    ns = comp.namespace or "slurm"
    served = ctx.executor.served_resources(SLINKY_GROUP, SLINKY_VERSION)
    missing = [r for r in ("loginsets", "nodesets") if r not in (served or set())]
    if missing:
        ctx.log(f"{SLINKY_GROUP}/{SLINKY_VERSION}: {', '.join(missing)} not served")
        return failed(
            f"[NOT_FOUND] {SLINKY_GROUP}/{SLINKY_VERSION} does not serve " + ", ".join(missing)
        )
    issues: list[str] = []
    node_pods: list[dict[str, Any]] = []
    for kind, plural in (("LoginSet", "loginsets"), ("NodeSet", "nodesets")):
        sets = ctx.executor.list_objects(SLINKY_GROUP, SLINKY_VERSION, plural, ns)
        if not sets:
            issues.append(f"no {kind} in namespace {ns}")
            ctx.log(f"{kind}: none in {ns}")
            continue
        pods = ctx.executor.list_objects("", "v1", "pods", ns)
        for s in sets:
            name = str((s.get("metadata") or {}).get("name", ""))
            owned = [
                p
                for p in pods
                if any(
                    isinstance(o, dict) and o.get("kind") == kind and o.get("name") == name
                    for o in (p.get("metadata") or {}).get("ownerReferences") or []
                )
            ]
            ready = [p for p in owned if _pod_ready(p)]
            ctx.log(f"{kind} {ns}/{name}: {len(ready)}/{len(owned)} pods ready")
            if not ready:
                issues.append(f"{kind} {ns}/{name} has no ready pod ({len(owned)} pods)")
            if kind == "NodeSet":
                node_pods += ready
    if issues:
        return failed("; ".join(issues))
    accelerator = ctx.recipe.criteria.get("accelerator", "")
    if accelerator not in ("", "any") and not any(_pod_gpus(p) > 0 for p in node_pods):
        return failed(
            f"recipe criteria require accelerator={accelerator}, but no NodeSet pod has a "
            "positive nvidia.com/gpu request or limit"
        )
    return not_measured(
        "login and NodeSet pods are ready; the Slurm commands (scontrol ping, sinfo, srun "
        "hostname, srun GPU container) need pod exec, which aicr-tui does not do: verify "
        "them with upstream aicr validate"
    )


def not_implemented(ctx: CheckContext) -> CheckOutcome:
    what = ctx.entry.description.split(" (not implemented")[0]
    return not_measured(
        f"not implemented in aicr-tui: {what}; verify it with upstream aicr validate"
    )
