"""Performance phase: NCCL all-reduce bus bandwidth and inference throughput / TTFT p99.

Both run workloads in the cluster, gate the measured value against the recipe constraint
with upstream's built-in tolerance (floors pass at >= 0.9 x, ceilings at <= 1.1 x), print the
upstream evidence lines, and clean up unless ``--no-cleanup``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.catalog import knob, knob_duration, knob_positive_int
from aicr_tui.core.validation.checks.base import (
    CEILING_TOLERANCE,
    FLOOR_TOLERANCE,
    RUN_ID_LABEL,
    CheckContext,
    CheckOutcome,
    failed,
    not_applicable,
    not_measured,
    passed,
    schedulable_gpu_nodes,
    small_sku_reason,
    threshold_number,
    wait_pod,
)
from aicr_tui.core.validation.checks.manifest_files import manifest
from aicr_tui.core.validation.executor import NodeInfo, PodOutcome, first_pod
from aicr_tui.core.validation.parsers.inference import SENTINEL, parse_report
from aicr_tui.core.validation.parsers.nccl import format_size, parse_all_reduce, transport_problem

TRAINER_GROUP, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"
DYNAMO_GROUP, DYNAMO_VERSION = "nvidia.com", "v1alpha1"
PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
RDMA_RESOURCE = "rdma/hca_shared_devices_a"
NCCL_LOG_LINES = 20000


# How each inference gate is logged and reported: the log label, what the report lacks
# when there is no value, how a value is worded, and whether the limit is a floor.
_INFERENCE_GATES: dict[str, tuple[str, str, str, bool]] = {
    "inference-throughput": (
        "Throughput",
        "inference throughput",
        "inference throughput {:.2f} tokens/sec",
        True,
    ),
    "inference-ttft-p99": ("TTFT p99", "TTFT p99", "inference TTFT p99 {:.2f} ms", False),
}


def _inference_gate(
    ctx: CheckContext,
    problems: list[str],
    name: str,
    value: float | None,
    unit: str,
    gate: str,
    limit: float,
) -> None:
    """Measure one AIPerf value against its gate (10% tolerance); a miss adds a problem."""
    label, subject, worded, floor = _INFERENCE_GATES[name]
    if value is None:
        ctx.measure(name, None, unit, gate, "not measured")
        problems.append(f"{subject} not in the AIPerf report")
        return
    ok = value >= FLOOR_TOLERANCE * limit if floor else value <= CEILING_TOLERANCE * limit
    ctx.log(f"{label} constraint: {gate} → {'PASS' if ok else 'FAIL'}")
    ctx.log(_tolerance_line(limit, unit, floor=floor))
    ctx.measure(name, value, unit, gate, "passed" if ok else "failed")
    if not ok:
        problems.append(
            f"{worded.format(value)} does not satisfy constraint {gate} (with 10% tolerance)"
        )


def _tolerance_line(threshold: float, unit: str, floor: bool) -> str:
    if floor:
        return (
            f"Tolerance: passes at >= {FLOOR_TOLERANCE:g} x {threshold:g} = "
            f"{threshold * FLOOR_TOLERANCE:.2f} {unit} (upstream's built-in 10% tolerance)"
        )
    return (
        f"Tolerance: passes at <= {CEILING_TOLERANCE:g} x {threshold:g} = "
        f"{threshold * CEILING_TOLERANCE:.2f} {unit} (upstream's built-in 10% tolerance)"
    )


def _wait_for_named_pod(ctx: CheckContext, selector: str, budget_s: float) -> str | None:
    """Poll until a pod matching ``selector`` exists in the validation namespace."""
    until = ctx.clock() + min(budget_s, ctx.remaining())
    while True:
        pod = first_pod(ctx.executor, ctx.namespace, selector)
        if pod is not None:
            return pod.name
        if ctx.clock() >= until or ctx.cancelled.is_set():
            return None
        ctx.sleep(min(ctx.poll_s, max(0.0, until - ctx.clock())))


def _pull_failure(status: PodOutcome) -> str | None:
    c = status.container
    if c is not None and c.waiting_reason in PULL_FAILURES:
        return f"{c.waiting_reason}: {c.message}".rstrip(": ")
    return None


class LogFollower:
    """Streams a workload pod's new log lines as the check's evidence while it runs.

    Upstream reads workload logs only after the Job ends, so a 30-minute NCCL run is
    silent; here each poll re-reads the log tail and emits the lines not yet seen, minus
    the per-rank ``NCCL INFO`` chatter (kept small: the table rows and errors matter).
    """

    def __init__(
        self, ctx: CheckContext, pod: str, tail_lines: int, prefix: str, stop_at: str = ""
    ) -> None:
        self.ctx, self.pod, self.tail, self.prefix = ctx, pod, tail_lines, prefix
        self.stop_at = stop_at  # stream nothing from this marker on (e.g. a JSON report)
        self.stopped = False
        self.seen: list[str] = []

    def wanted(self, line: str) -> bool:
        if self.stop_at and line.strip() == self.stop_at:
            self.stopped = True
        return not self.stopped and bool(line.strip()) and " NCCL INFO " not in line

    def poll(self) -> str:
        text = self.ctx.executor.pod_logs(self.ctx.namespace, self.pod, tail_lines=self.tail)
        lines = text.splitlines()
        start = (
            len(self.seen) if lines[: len(self.seen)] == self.seen else _overlap(self.seen, lines)
        )
        for line in lines[start:]:
            if self.wanted(line):
                self.ctx.log(f"{self.prefix}{line}")
        self.seen = lines
        return text


def _overlap(seen: list[str], lines: list[str]) -> int:
    """Where the new tail continues the old one (log tails slide once past tail_lines)."""
    if not seen:
        return 0
    last = seen[-1]
    for i in range(len(lines) - 1, -1, -1):
        if lines[i] == last:
            return i + 1
    return 0


def _watch_pod(ctx: CheckContext, name: str, follower: LogFollower | None = None) -> PodOutcome:
    """Wait for a workload pod (streaming its log when asked); stop early on a pull failure."""
    status = ctx.executor.pod_status(ctx.namespace, name)
    unavailable = False
    while not status.terminal and ctx.remaining() > 0:
        if _pull_failure(status):
            return status
        if follower is not None and status.phase == "Running":
            # The streamed log is evidence while the workload runs, not its result: a log
            # the API server cannot fetch now (kubelet restarting or unreachable) is said
            # once and the wait goes on; the result is read when the pod has ended.
            try:
                follower.poll()
                unavailable = False
            except AicrError as exc:
                if not unavailable:
                    ctx.log(f"log of pod {name} not readable yet, still waiting: {exc.render()}")
                unavailable = True
        status = wait_pod(ctx, name, ctx.poll_s * 5)
    return status


# -- nccl-all-reduce-bw ------------------------------------------------------------------


def _nccl_sizing(
    ctx: CheckContext, nodes: list[NodeInfo]
) -> tuple[int, dict[str, str], tuple[str, str]]:
    """What both all-reduce layouts size from the nodes: GPUs per node, each worker's
    resource limits (an RDMA device when every node offers one) and the message-size sweep
    (min, max)."""
    gpus = nodes[0].gpu_count or 1
    limits: dict[str, str] = {"nvidia.com/gpu": str(gpus)}
    if all(RDMA_RESOURCE in n.allocatable for n in nodes):
        limits[RDMA_RESOURCE] = "1"
    sweep = (
        knob(ctx.entry, "AICR_NCCL_MIN_BYTES", "1K"),
        knob(ctx.entry, "AICR_NCCL_MAX_BYTES", "16G"),
    )
    return gpus, limits, sweep


# The transport each variant pins (upstream's -net / -nvls checks): NVLS turns multi-node
# NVLink SHARP on and takes no network plugin (the all-reduce stays inside the NVL72 IMEX
# domain); NET turns NVLS and MNNVL off so the collective crosses the RDMA fabric.
VARIANT_FLAGS = {
    "": "",
    "nvls": "-x NCCL_NVLS_ENABLE=1 -x NCCL_NET_PLUGIN=none ",
    "net": "-x NCCL_NVLS_ENABLE=0 -x NCCL_MNNVL_ENABLE=0 ",
}
VARIANT_OF = {
    "nccl-all-reduce-bw": "",
    "nccl-all-reduce-bw-nvls": "nvls",
    "nccl-all-reduce-bw-net": "net",
}
COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_VERSION = "resource.nvidia.com", "v1beta1"
IMEX_CLAIM_TEMPLATE = "aicr-nccl-imex"
IMEX_CLAIM = "imex-channel"


def _variant(ctx: CheckContext) -> str:
    return VARIANT_OF.get(ctx.name, "")


def compute_domain(ctx: CheckContext, nodes: list[NodeInfo]) -> dict[str, Any]:
    """The DRA ComputeDomain whose channel claim template gives every worker an IMEX channel
    (/dev/nvidia-caps-imex-channels): without it MNNVL is detected but unusable."""
    return manifest(
        "compute-domain", namespace=ctx.namespace, labels=ctx.labels(), num_nodes=len(nodes)
    )


def _claim_imex(pod_spec: dict[str, Any]) -> None:
    """Give a worker pod spec the ComputeDomain's IMEX channel (NVLS variant)."""
    pod_spec["resourceClaims"] = [
        {"name": IMEX_CLAIM, "resourceClaimTemplateName": IMEX_CLAIM_TEMPLATE}
    ]
    for c in pod_spec["containers"]:
        c.setdefault("resources", {})["claims"] = [{"name": IMEX_CLAIM}]


def nccl_manifests(ctx: CheckContext, nodes: list[NodeInfo], image: str) -> list[dict[str, Any]]:
    """The all-reduce through Kubeflow Trainer (``manifests/nccl-runtime.yaml`` and
    ``nccl-trainjob.yaml``), with the variant's ComputeDomain first for NVLS."""
    gpus, limits, (min_b, max_b) = _nccl_sizing(ctx, nodes)
    labels = ctx.labels()
    variant = _variant(ctx)
    runtime = manifest(
        "nccl-runtime",
        namespace=ctx.namespace,
        labels=labels,
        num_nodes=len(nodes),
        gpus=gpus,
        image=image,
        ranks=gpus * len(nodes),
        variant_flags=VARIANT_FLAGS[variant],
        min_bytes=min_b,
        max_bytes=max_b,
        node_names=[n.name for n in nodes],
        limits=limits,
    )
    trainjob = manifest("nccl-trainjob", namespace=ctx.namespace, labels=labels)
    if variant == "nvls":
        jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
        _claim_imex(jobs[1]["template"]["spec"]["template"]["spec"])
        return [compute_domain(ctx, nodes), runtime, trainjob]
    return [runtime, trainjob]


NCCL_ROLE_LABEL = "aicr.nvidia.com/nccl-role"
NCCL_SERVICE = "aicr-nccl"
NCCL_SECRET = "aicr-nccl-ssh"
NCCL_SSH_PORT = 2222


def ssh_keypair() -> tuple[str, str]:
    """A fresh Ed25519 key pair (OpenSSH private key, public key line) for one run."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    return private, f"{public} aicr-nccl"


def nccl_pod_manifests(
    ctx: CheckContext, nodes: list[NodeInfo], image: str
) -> list[dict[str, Any]]:
    """The all-reduce without Kubeflow Trainer: SSH key Secret, headless Service, one sshd
    worker pod pinned to each GPU node, and a launcher pod that runs mpirun across them."""
    gpus, limits, (min_b, max_b) = _nccl_sizing(ctx, nodes)
    private, public = ssh_keypair()
    ns = ctx.namespace
    workers = [f"aicr-nccl-worker-{i}" for i in range(len(nodes))]
    secret = manifest(
        "nccl-ssh-secret",
        namespace=ns,
        labels=ctx.labels(),
        private_key=private,
        authorized_keys=public + "\n",
    )
    service = manifest(
        "nccl-service",
        namespace=ns,
        labels=ctx.labels(),
        run_id=ctx.run_id,
        ssh_port=NCCL_SSH_PORT,
    )
    pods = [
        manifest(
            "nccl-worker",
            name=name,
            namespace=ns,
            labels=ctx.labels(**{NCCL_ROLE_LABEL: "worker"}),
            node=node.name,
            image=image,
            ssh_port=NCCL_SSH_PORT,
            limits=limits,
        )
        for name, node in zip(workers, nodes, strict=True)
    ]
    launcher = manifest(
        "nccl-launcher",
        namespace=ns,
        labels=ctx.labels(**{NCCL_ROLE_LABEL: "launcher"}),
        image=image,
        hosts=" ".join(f"{w}.{NCCL_SERVICE}.{ns}.svc" for w in workers),
        gpus=gpus,
        ssh_port=NCCL_SSH_PORT,
        ranks=gpus * len(nodes),
        variant_flags=VARIANT_FLAGS[_variant(ctx)],
        min_bytes=min_b,
        max_bytes=max_b,
    )
    if _variant(ctx) == "nvls":
        for pod in pods:
            _claim_imex(pod["spec"])
        return [compute_domain(ctx, nodes), secret, service, *pods, launcher]
    return [secret, service, *pods, launcher]


def nccl_all_reduce_bw(ctx: CheckContext) -> CheckOutcome:
    gate = ctx.recipe.phase("performance").constraint(ctx.name)
    if gate is None:
        return not_measured(f"no {ctx.name} constraint in recipe")
    threshold = threshold_number(gate.value)
    if threshold is None:
        return failed(f'[INVALID_REQUEST] {ctx.name} constraint "{gate.value}" holds no number')
    nodes = sorted(schedulable_gpu_nodes(ctx.executor.list_nodes()), key=lambda n: n.name)
    na = small_sku_reason(nodes)
    if na is not None:
        ctx.log(f"NCCL All Reduce bandwidth: {na}")
        ctx.measure(ctx.name, None, "GB/s", gate.value, "not applicable", note=na)
        return not_applicable(f"full-node NCCL floor {gate.value} GB/s {na}")
    variant = _variant(ctx)
    if variant == "nvls":
        # NVLS across nodes exists only inside an NVL72 IMEX domain, and its IMEX channel
        # comes from the DRA driver's ComputeDomain: without either it cannot run.
        accel = ctx.recipe.criteria.get("accelerator", "")
        if accel != "gb200":
            why = "NVLS all-reduce needs a GB200 NVL72 IMEX domain; the recipe is for " + (
                accel or "any accelerator"
            )
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured", note=why)
            return not_measured(why)
        served_cd = ctx.executor.served_resources(COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_VERSION)
        if served_cd is None or "computedomains" not in served_cd:
            why = (
                f"the cluster does not serve {COMPUTE_DOMAIN_GROUP}/{COMPUTE_DOMAIN_VERSION} "
                "ComputeDomain (nvidia-dra-driver-gpu compute domains), so no IMEX channel can "
                "be claimed for NVLS"
            )
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured", note=why)
            return not_measured(why)
    if len(nodes) < 2:
        ctx.measure(
            ctx.name,
            None,
            "GB/s",
            gate.value,
            "not measured",
            note="fewer than 2 GPU nodes",
        )
        return not_measured("not measured - requires at least 2 GPU nodes for EW fabric test")
    served = ctx.executor.served_resources(TRAINER_GROUP, TRAINER_VERSION)
    trainer = served is not None and {"trainjobs", "trainingruntimes"} <= served
    if not trainer and ctx.recipe.has_enabled("kubeflow-trainer"):
        why = f"Kubeflow Trainer ({TRAINER_GROUP}/{TRAINER_VERSION} TrainJob) is not installed"
        ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured", note=why)
        return failed(f"[NOT_FOUND] {why} although the recipe declares kubeflow-trainer")
    image = ctx.environ.get("AICR_NCCL_RUNTIME_IMAGE", "").strip() or ctx.entry.image
    gpus = nodes[0].gpu_count
    ctx.log(
        f"NCCL all-reduce across {len(nodes)} nodes x {gpus} GPUs: "
        + ", ".join(n.name for n in nodes)
    )
    ctx.log(f"image: {image}")
    if image.startswith("public.ecr.aws/"):
        ctx.log(
            "note: image is pulled from public.ecr.aws; the cluster needs egress to it or a mirror"
        )
    if trainer:
        ctx.log("launcher: Kubeflow Trainer TrainJob (the cluster serves trainer.kubeflow.org)")
        manifests = nccl_manifests(ctx, nodes, image)
        selector = (
            "jobset.sigs.k8s.io/jobset-name=nccl-all-reduce-tj,"
            "jobset.sigs.k8s.io/replicatedjob-name=launcher"
        )
    else:
        # No Trainer on the cluster and none in the recipe: run the same mpirun launch from
        # plain pods (sshd workers behind a headless Service), so the gate still measures.
        ctx.log(
            "launcher: plain pods (Kubeflow Trainer is not installed and the recipe does not "
            "declare it): an mpirun launcher over SSH to one worker pod per node"
        )
        manifests = nccl_pod_manifests(ctx, nodes, image)
        selector = f"{NCCL_ROLE_LABEL}=launcher,{RUN_ID_LABEL}={ctx.run_id}"
    created: list[dict[str, Any]] = []
    try:
        for m in manifests:
            ctx.executor.create(m)
            created.append(m)
        launcher = _wait_for_named_pod(ctx, selector, 300.0)
        if launcher is None:
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured")
            return not_measured("NCCL launcher pod did not appear within 5m")
        # NCCL_DEBUG=INFO from every rank precedes the table: read well past 1000 lines.
        follower = LogFollower(ctx, launcher, NCCL_LOG_LINES, "[launcher] ")
        status = _watch_pod(ctx, launcher, follower)
        pull = _pull_failure(status)
        if pull:
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured", note=pull)
            return not_measured(
                f"NCCL benchmark image {image} could not be pulled ({pull}); allow egress to the "
                "registry or mirror the image and point the catalog entry at it via --data"
            )
        if not status.terminal:
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured")
            return not_measured(
                f"timeout: NCCL launcher did not complete within {ctx.entry.timeout}"
            )
        logs = follower.poll()
        worker_pull = ""
        for m in created:
            if m["kind"] == "Pod" and m["metadata"]["name"] != launcher:
                worker_pull = worker_pull or (
                    _pull_failure(ctx.executor.pod_status(ctx.namespace, m["metadata"]["name"]))
                    or ""
                )
    finally:
        if ctx.cleanup:
            for m in reversed(created):
                meta = m["metadata"]
                ctx.executor.delete(m["apiVersion"], m["kind"], meta["namespace"], meta["name"])
    result = parse_all_reduce(logs)
    row = result.largest
    if row is None:
        tail = [ln for ln in logs.splitlines() if ln.strip()][-10:]
        for ln in tail:
            ctx.log(ln)
        if worker_pull or "unreachable over ssh" in logs:
            why = (
                f"NCCL worker image {image} could not be pulled ({worker_pull})"
                if worker_pull
                else "the launcher could not reach every worker over SSH"
            )
            ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured", note=why)
            return not_measured(why)
        ctx.measure(ctx.name, None, "GB/s", gate.value, "not measured")
        return failed("failed to parse bandwidth from logs")
    problem = transport_problem(result, variant)
    if problem is not None:
        # Bandwidth alone does not prove the transport: a broken IMEX domain falls back to
        # NET and still prints a table (upstream fails the variant check the same way).
        ctx.log(problem)
        ctx.measure(ctx.name, row.busbw, "GB/s", gate.value, "failed", note=problem)
        return failed(problem)
    bw = row.busbw
    ok = bw >= FLOOR_TOLERANCE * threshold
    ctx.log(f"Largest message size: {format_size(row.size_bytes)} ({row.size_bytes} B)")
    if result.network:
        ctx.log(f"NCCL network: {result.network}")
    ctx.log(f"RESULT: NCCL All Reduce bandwidth: {bw:.2f} GB/s")
    ctx.log(f"Constraint: {gate.value} → {'true' if ok else 'false'}")
    ctx.log(_tolerance_line(threshold, "GB/s", floor=True))
    ctx.measure(
        ctx.name,
        bw,
        "GB/s",
        gate.value,
        "passed" if ok else "failed",
        note=f"out-of-place busbw at {format_size(row.size_bytes)}; pass at >= {FLOOR_TOLERANCE:g} x threshold",
    )
    if not ok:
        return failed(
            f"NCCL bandwidth {bw:.2f} GB/s does not satisfy constraint {gate.value} (with 10% tolerance)"
        )
    return passed(f"NCCL bandwidth {bw:.2f} GB/s satisfies {gate.value}")


# -- inference-perf ----------------------------------------------------------------------


def _has_op(value: str, op: str) -> bool:
    v = value.strip()
    return v.startswith(op) and not v.startswith(op + "=")


def _short_hash(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:8]


def dynamo_manifest(ctx: CheckContext, ns: str, node: NodeInfo, model: str) -> dict[str, Any]:
    runtime = knob(
        ctx.entry,
        "AICR_INFERENCE_PERF_RUNTIME_IMAGE",
        "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0",
    )
    cache_class = knob(ctx.entry, "AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS", "")
    doc = manifest(
        "dynamo",
        namespace=ns,
        labels=ctx.labels(),
        node=node.name,
        runtime_image=runtime,
        workers=max(1, node.gpu_count),
        model=model,
    )
    if cache_class:
        size = knob(ctx.entry, "AICR_INFERENCE_PERF_MODEL_CACHE_SIZE", "100Gi")
        doc["spec"]["pvcs"] = [manifest("dynamo-model-cache", storage_class=cache_class, size=size)]
    return doc


def aiperf_job(
    ctx: CheckContext,
    job: str,
    url: str,
    model: str,
    concurrency: int,
    requests: int,
    health_s: float,
) -> dict[str, Any]:
    isl = knob_positive_int(ctx.entry, "AICR_INFERENCE_PERF_INPUT_TOKENS", 128)
    osl = knob_positive_int(ctx.entry, "AICR_INFERENCE_PERF_OUTPUT_TOKENS", 128)
    return manifest(
        "aiperf-job",
        name=job,
        namespace=ctx.namespace,
        labels=ctx.labels(),
        image=ctx.entry.image,
        health_seconds=int(health_s),
        url=url,
        model=model,
        concurrency=concurrency,
        requests=requests,
        input_tokens=isl,
        output_tokens=osl,
    )


def inference_perf(ctx: CheckContext) -> CheckOutcome:
    perf = ctx.recipe.phase("performance")
    tp_gate = perf.constraint("inference-throughput")
    ttft_gate = perf.constraint("inference-ttft-p99")
    if tp_gate is None and ttft_gate is None:
        return not_measured("no inference-throughput or inference-ttft-p99 constraint in recipe")
    if tp_gate is not None and not _has_op(tp_gate.value, ">="):
        return failed(
            f'[INVALID_REQUEST] inference-throughput constraint "{tp_gate.value}" must start with ">="'
        )
    if ttft_gate is not None and not _has_op(ttft_gate.value, "<="):
        return failed(
            f'[INVALID_REQUEST] inference-ttft-p99 constraint "{ttft_gate.value}" must start with "<="'
        )
    tp_limit = threshold_number(tp_gate.value) if tp_gate else None
    ttft_limit = threshold_number(ttft_gate.value) if ttft_gate else None
    if not ctx.recipe.has_enabled("dynamo-platform"):
        return not_measured("not measured - dynamo-platform not in recipe components")
    served = ctx.executor.served_resources(DYNAMO_GROUP, DYNAMO_VERSION)
    if served is None or "dynamographdeployments" not in served:
        return not_measured(
            "not measured - DynamoGraphDeployment CRD not installed on cluster (nvidia.com/v1alpha1)"
        )
    try:
        model_gate = perf.constraint("inference-model")
        model = (
            model_gate.value
            if model_gate
            else knob(ctx.entry, "AICR_INFERENCE_PERF_MODEL", "Qwen/Qwen3-8B")
        )
        cpg_gate = perf.constraint("inference-concurrency-per-gpu")
        per_gpu = (
            int(cpg_gate.value)
            if cpg_gate
            else knob_positive_int(ctx.entry, "AICR_INFERENCE_PERF_CONCURRENCY_PER_GPU", 256)
        )
        ready_s = knob_duration(ctx.entry, "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT", "10m")
        health_s = knob_duration(ctx.entry, "AICR_INFERENCE_PERF_HEALTH_TIMEOUT", "5m")
    except (AicrError, ValueError) as exc:
        msg = exc.message if isinstance(exc, AicrError) else str(exc)
        return failed(f"[INVALID_REQUEST] {msg}")
    nodes = schedulable_gpu_nodes(ctx.executor.list_nodes())
    if not nodes:
        return not_measured(
            "no schedulable GPU node for the inference benchmark",
            skipReason="no-schedulable-gpu-nodes",
        )
    node = sorted(nodes, key=lambda n: (-n.gpu_count, n.name))[0]
    na = small_sku_reason([node])
    gpus = max(1, node.gpu_count)
    concurrency = per_gpu * gpus
    requests = max(1000, concurrency * 8)
    ns = f"aicr-inference-perf-{_short_hash(ctx.run_id, node.name)}"
    job = f"aicr-aiperf-{_short_hash(ctx.run_id)}"
    ctx.log(
        f"node {node.name} ({node.instance_type or 'unknown size'}, {gpus} GPU(s)); model {model}; concurrency {concurrency}; requests {requests}"
    )
    created_ns = ctx.executor.ensure_namespace(ns, ctx.labels())
    try:
        ctx.executor.create(dynamo_manifest(ctx, ns, node, model))
        until = ctx.clock() + min(ready_s, ctx.remaining())
        state = ""
        shown = None
        while True:
            dgd = ctx.executor.get_object(
                DYNAMO_GROUP, DYNAMO_VERSION, "dynamographdeployments", "aicr-inference-perf", ns
            )
            status = (dgd or {}).get("status") or {}
            state = str(status.get("state", "")) if isinstance(status, dict) else ""
            if state != shown:
                ctx.log(f"DynamoGraphDeployment aicr-inference-perf: {state or 'no status yet'}")
                shown = state
            if state == "successful" or ctx.clock() >= until or ctx.cancelled.is_set():
                break
            ctx.sleep(min(ctx.poll_s * 5, max(0.0, until - ctx.clock())))
        if state != "successful":
            return failed(
                "DynamoGraphDeployment not ready: TIMEOUT after "
                f"{knob(ctx.entry, 'AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT', '10m')} (state {state or 'unknown'}); "
                "raise AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT and the entry timeout via --data, "
                "or set AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS to a faster class"
            )
        url = f"http://aicr-inference-perf-frontend.{ns}.svc:8000"
        ctx.executor.create(aiperf_job(ctx, job, url, model, concurrency, requests, health_s))
        pod = _wait_for_named_pod(ctx, f"job-name={job}", 300.0)
        if pod is None:
            return not_measured("AIPerf pod did not appear within 5m")
        follower = LogFollower(ctx, pod, 1000, "[aiperf] ", stop_at=SENTINEL)
        st = _watch_pod(ctx, pod, follower)
        pull = _pull_failure(st)
        if pull:
            return not_measured(f"AIPerf image {ctx.entry.image} could not be pulled ({pull})")
        if not st.terminal:
            return not_measured(f"timeout: AIPerf did not complete within {ctx.entry.timeout}")
        logs = follower.poll()
    finally:
        if ctx.cleanup:
            ctx.executor.delete("batch/v1", "Job", ctx.namespace, job)
            if created_ns:
                ctx.executor.delete_namespace(ns)
    if "timed out waiting for inference endpoint" in logs:
        return failed(
            "[TIMEOUT] timed out waiting for inference endpoint to serve requests; raise AICR_INFERENCE_PERF_HEALTH_TIMEOUT"
        )
    try:
        result = parse_report(logs, "AIPerf report in the benchmark log")
    except AicrError as exc:
        return failed(f"could not read the AIPerf report: {exc.message}")
    if result.output_token_throughput is None and result.ttft_p99_ms is None:
        return failed("AIPerf report holds neither output_token_throughput nor time_to_first_token")
    problems: list[str] = []
    if result.output_token_throughput is not None:
        ctx.log(f"RESULT: Inference throughput: {result.output_token_throughput:.2f} tokens/sec")
    if result.ttft_p99_ms is not None:
        ctx.log(f"RESULT: Inference TTFT p99: {result.ttft_p99_ms:.2f} ms")
    if tp_gate is not None and tp_limit is not None:
        value = result.output_token_throughput
        if na is not None:
            ctx.log(f"Throughput constraint: {tp_gate.value} → NOT APPLICABLE ({na})")
            ctx.measure(
                "inference-throughput", value, "tok/s", tp_gate.value, "not applicable", note=na
            )
        else:
            _inference_gate(
                ctx, problems, "inference-throughput", value, "tok/s", tp_gate.value, tp_limit
            )
    if ttft_gate is not None and ttft_limit is not None:
        _inference_gate(
            ctx,
            problems,
            "inference-ttft-p99",
            result.ttft_p99_ms,
            "ms",
            ttft_gate.value,
            ttft_limit,
        )
    if problems:
        return failed("; ".join(problems))
    gated = [
        g
        for g in (
            "throughput" if tp_gate is not None and na is None else "",
            "TTFT p99" if ttft_gate is not None else "",
        )
        if g
    ]
    if not gated:
        return not_applicable(f"no gate applies: {na}")
    suffix = f" (throughput {na})" if na is not None and tp_gate is not None else ""
    return passed("inference " + " and ".join(gated) + " within gates" + suffix)
