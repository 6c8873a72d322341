"""Deployment phase: is the GPU stack the recipe declares installed and healthy?"""

from __future__ import annotations

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.recipe.constraints import evaluate_expression, parse_expression
from aicr_tui.core.validation.checks.base import (
    CheckContext,
    CheckOutcome,
    failed,
    not_measured,
    passed,
    pod_name,
    schedulable_gpu_nodes,
    wait_pod,
)
from aicr_tui.core.validation.executor import WORKLOAD_KINDS, WorkloadInfo
from aicr_tui.core.validation.parsers.nvidia_smi import parse_table
from aicr_tui.core.validation.recipe_view import ExpectedResource

GPU_OPERATOR_NAMESPACES = ("gpu-operator", "nvidia-gpu-operator", "kube-system")
GPU_OPERATOR_NAMES = ("gpu-operator", "nvidia-gpu-operator")
VERSION_CONSTRAINT = "Deployment.gpu-operator.version"
DRIVER_CONSTRAINT = "Deployment.gpu-driver.version"


def operator_health(ctx: CheckContext) -> CheckOutcome:
    ns = ctx.component_namespace("gpu-operator", "gpu-operator")
    pods = sorted(ctx.executor.list_pods(ns, "app=gpu-operator"), key=lambda p: p.name)
    if not pods:
        return failed(f"[NOT_FOUND] no gpu-operator pods (app=gpu-operator) in namespace {ns}")
    ctx.log(f"Found {len(pods)} gpu-operator pod(s):")
    running = 0
    for p in pods:
        ctx.log(f"  {p.name}: {p.phase}")
        running += p.phase == "Running"
    ctx.log(f"Running: {running}/{len(pods)}")
    if running == 0:
        return failed(f"no gpu-operator pod is Running in namespace {ns} (0/{len(pods)})")
    return passed(f"gpu-operator running ({running}/{len(pods)} pods)")


def describe_workload(w: WorkloadInfo | None, r: ExpectedResource) -> tuple[bool, str]:
    where = f"{r.kind} {r.namespace}/{r.name}"
    if w is None:
        return False, f"{where}: not found"
    if w.healthy:
        return True, f"{where}: healthy"
    return False, f"{where}: not ready (ready {w.ready}/{w.desired}, available {w.available})"


def check_expected_resources(
    ctx: CheckContext, tag: str, *, settle_s: float = 30.0
) -> tuple[list[str], list[str], int]:
    """Check every enabled component's expectedResources; returns (issues, unsupported, total).

    Not-ready workloads are re-read for up to ``settle_s`` (a rollout in progress settles).
    """
    wanted = [r for c in ctx.recipe.components if c.enabled for r in c.expected_resources]
    unsupported = [
        f"{r.kind} {r.namespace}/{r.name}" for r in wanted if r.kind not in WORKLOAD_KINDS
    ]
    checkable = [r for r in wanted if r.kind in WORKLOAD_KINDS]
    pending = list(checkable)
    settle_until = ctx.clock() + min(settle_s, ctx.remaining())
    results: dict[ExpectedResource, str] = {}
    while True:
        still: list[ExpectedResource] = []
        for r in pending:
            w = ctx.executor.get_workload(r.kind, r.namespace, r.name)
            ok, line = describe_workload(w, r)
            results[r] = line
            if not ok and w is not None:
                still.append(r)
        if not still or ctx.clock() >= settle_until or ctx.cancelled.is_set():
            break
        ctx.sleep(min(ctx.poll_s, max(0.0, settle_until - ctx.clock())))
        pending = still
    issues: list[str] = []
    for r in checkable:
        line = results[r]
        ctx.log(f"[{tag}] {line}")
        if not line.endswith(": healthy"):
            issues.append(line)
    for u in unsupported:
        ctx.log(f"[{tag}] {u}: kind not checked by aicr-tui")
    return issues, unsupported, len(wanted)


def expected_resources(ctx: CheckContext) -> CheckOutcome:
    issues, unsupported, total = check_expected_resources(ctx, "expectedResources")
    if total == 0:
        return not_measured("no enabled component declares expectedResources; nothing to verify")
    if issues:
        return failed(
            f"{len(issues)} of {total} expected resources unhealthy: " + "; ".join(issues)
        )
    if unsupported:
        return not_measured(
            "could not verify "
            + ", ".join(unsupported)
            + ": only Deployment, DaemonSet and StatefulSet are checked"
        )
    ctx.log("All expected resources are healthy")
    return passed(f"all {total} expected resources healthy")


def operator_version(w: WorkloadInfo) -> tuple[str, str] | None:
    """(version, source) from the label, else the image tag, else an annotation."""
    label = w.labels.get("app.kubernetes.io/version", "")
    if label:
        return _with_v(label), "label app.kubernetes.io/version"
    for image in w.images:
        tail = image.rsplit("/", 1)[-1]
        if ":" in tail and "@" not in tail:
            tag = tail.split(":", 1)[1].split("-", 1)[0]
            if tag and tag[0].lstrip("v")[:1].isdigit():
                return _with_v(tag), f"image {image}"
    for key in ("nvidia.com/gpu-operator-version", "app.kubernetes.io/version"):
        if w.annotations.get(key):
            return _with_v(w.annotations[key]), f"annotation {key}"
    return None


def _with_v(text: str) -> str:
    return text if text.startswith("v") else f"v{text}"


def find_gpu_operator(ctx: CheckContext) -> WorkloadInfo | None:
    preferred = ctx.component_namespace("gpu-operator", "gpu-operator")
    namespaces = [preferred] + [n for n in GPU_OPERATOR_NAMESPACES if n != preferred]
    for ns in namespaces:
        for name in GPU_OPERATOR_NAMES:
            w = ctx.executor.get_workload("Deployment", ns, name)
            if w is not None:
                return w
    return None


def gpu_operator_version(ctx: CheckContext) -> CheckOutcome:
    w = find_gpu_operator(ctx)
    if w is None:
        return failed(
            "[NOT_FOUND] GPU Operator Deployment not found (gpu-operator or nvidia-gpu-operator in "
            + ", ".join(GPU_OPERATOR_NAMESPACES)
            + ")"
        )
    found = operator_version(w)
    if found is None:
        return not_measured(
            f"GPU Operator Deployment {w.namespace}/{w.name} carries no version label, tag or annotation"
        )
    version, source = found
    ctx.log(f"Detected GPU Operator version: {version} (from {source})")
    constraint = ctx.recipe.phase("deployment").constraint(VERSION_CONSTRAINT)
    if constraint is None:
        ctx.measure(
            VERSION_CONSTRAINT, None, "", "", "info", display=version, note="no gate in recipe"
        )
        return passed(f"GPU Operator {version} (no {VERSION_CONSTRAINT} constraint in recipe)")
    try:
        ok = evaluate_expression(parse_expression(constraint.value), version)
    except AicrError as exc:
        return failed(
            f"[INVALID_REQUEST] cannot evaluate {VERSION_CONSTRAINT} {constraint.value!r}: {exc.message}"
        )
    ctx.log(f"Constraint: {constraint.value} → {'true' if ok else 'false'}")
    ctx.measure(
        VERSION_CONSTRAINT,
        None,
        "",
        constraint.value,
        "passed" if ok else "failed",
        display=version,
    )
    if not ok:
        return failed(f"GPU Operator version {version} does not satisfy {constraint.value}")
    return passed(f"GPU Operator {version} satisfies {constraint.value}")


SMI_MARKERS = ("NVIDIA-SMI", "GPU_CHECK_SUCCESS")


def check_nvidia_smi(ctx: CheckContext) -> CheckOutcome:
    driver_gate = ctx.recipe.phase("deployment").constraint(DRIVER_CONSTRAINT)
    nodes = sorted((n for n in ctx.executor.list_nodes() if n.is_gpu_node), key=lambda n: n.name)
    for n in nodes:
        if n.unschedulable:
            ctx.log(f"{n.name}: skipped (cordoned)")
    targets = schedulable_gpu_nodes(nodes)
    if not targets:
        reason, why = (
            ("no-gpu-nodes", "no GPU nodes found")
            if not nodes
            else ("no-schedulable-gpu-nodes", "every GPU node is cordoned")
        )
        if driver_gate is not None:
            return failed(f"{why}; {DRIVER_CONSTRAINT} {driver_gate.value} cannot be verified")
        return not_measured(why, skipReason=reason)
    ok_nodes = 0
    unfinished: list[str] = []
    failures: list[str] = []
    for index, node in enumerate(targets):
        if ctx.cancelled.is_set():
            break
        name = pod_name("nvidia-smi-verify", node.name)
        # Share what is left of the budget across the nodes still to probe, so one node
        # whose probe never schedules (busy GPUs) cannot starve the others.
        node_budget = ctx.remaining() / (len(targets) - index)
        manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ctx.namespace, "labels": ctx.labels()},
            "spec": {
                "nodeName": node.name,
                "restartPolicy": "Never",
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {
                        "name": "nvidia-smi",
                        "image": ctx.entry.image,
                        "command": ["sh", "-c", "nvidia-smi && echo GPU_CHECK_SUCCESS"],
                        "resources": {"limits": {"nvidia.com/gpu": "1"}},
                    }
                ],
            },
        }
        ctx.executor.create(manifest)
        try:
            status = wait_pod(ctx, name, node_budget)
            if not status.terminal:
                line = f"{node.name}: not measured (probe {status.unfinished_reason()})"
                unfinished.append(line)
                ctx.log(line)
                continue
            logs = ctx.executor.pod_logs(ctx.namespace, name)
        finally:
            if ctx.cleanup:
                ctx.executor.delete("v1", "Pod", ctx.namespace, name)
        report = parse_table(logs)
        missing = [m for m in SMI_MARKERS if m.lower() not in logs.lower()]
        if not report.driver_version:
            missing.append("Driver Version")
        if not report.cuda_version:
            missing.append("CUDA Version")
        if missing:
            line = f"{node.name}: FAILED (missing {', '.join(missing)} in nvidia-smi output)"
            failures.append(line)
            ctx.log(line)
            continue
        if driver_gate is not None and report.driver_version:
            try:
                good = evaluate_expression(
                    parse_expression(driver_gate.value), report.driver_version
                )
            except AicrError as exc:
                good = False
                ctx.log(f"{node.name}: cannot evaluate {driver_gate.value}: {exc.message}")
            if not good:
                line = f"{node.name}: FAILED (driver {report.driver_version} does not satisfy {driver_gate.value})"
                failures.append(line)
                ctx.log(line)
                continue
        ok_nodes += 1
        ctx.log(
            f"{node.name}: OK (driver {report.driver_version}, CUDA {report.cuda_version}, "
            f"{len(report.gpus)} GPU(s) visible)"
        )
    total = len(targets)
    ctx.log(f"RESULT: nodesValidated: {ok_nodes}/{total}")
    extra = {"nodesValidated": str(ok_nodes), "nodesTotal": str(total)}
    if failures:
        return failed(f"GPU verification failed on {len(failures)}/{total} nodes", **extra)
    if unfinished:
        return not_measured(
            f"the nvidia-smi probe did not finish on {len(unfinished)}/{total} nodes; "
            + unfinished[0],
            **extra,
        )
    return passed(f"nvidia-smi verified on {ok_nodes}/{total} GPU nodes", **extra)
