"""What a check receives (CheckContext) and returns (CheckOutcome).

A check is a plain function run in a worker thread. It talks to the cluster only through
``ctx.executor``, reports evidence with ``ctx.log`` (these lines become the report's
``stdout``) and gates with ``ctx.measure``, and returns a status. It must stay within
``ctx.remaining()``; a check that cannot measure returns ``not_measured`` with the reason,
one that a documented rule exempts returns ``not_applicable`` — never ``passed``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from aicr_tui.core.validation.catalog import CatalogEntry
from aicr_tui.core.validation.events import Event, LogLine, Measurement, cap_line
from aicr_tui.core.validation.executor import ClusterExecutor, NodeInfo, PodOutcome, wait_for_pod
from aicr_tui.core.validation.recipe_view import RecipeView
from aicr_tui.core.validation.verdicts import FAILED, NOT_APPLICABLE, NOT_MEASURED, PASSED

VALIDATION_NAMESPACE = "aicr-validation"
RUN_ID_LABEL = "aicr.nvidia.com/run-id"
NAMESPACE_LABELS = {
    "app.kubernetes.io/name": "aicr",
    "app.kubernetes.io/component": "validation",
    "app.kubernetes.io/managed-by": "aicr-tui",
}
# Upstream gates full-node floors with a built-in 10 % tolerance.
FLOOR_TOLERANCE = 0.9
CEILING_TOLERANCE = 1.1

# AKS NCads H100 sizes: 1-2 GPUs, no InfiniBand. The full-node floors (NCCL bus bandwidth,
# inference throughput) were calibrated on 8-GPU Standard_ND96isr_H100_v5 nodes, so on these
# sizes they are not applicable; only TTFT p99 gates (product decision, AKS brief).
SMALL_SKUS: dict[str, str] = {
    "Standard_NC80adis_H100_v5": "2 GPUs, no InfiniBand",
    "Standard_NC40ads_H100_v5": "1 GPU, no InfiniBand",
}
FULL_NODE_REFERENCE = "Standard_ND96isr_H100_v5 (8 GPUs, InfiniBand)"


@dataclass
class CheckOutcome:
    status: str  # one of aicr_tui.core.validation.verdicts.VERDICTS
    message: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def passed(message: str = "", **extra: str) -> CheckOutcome:
    return CheckOutcome(PASSED, message, dict(extra))


def failed(message: str, **extra: str) -> CheckOutcome:
    return CheckOutcome(FAILED, message, dict(extra))


def not_applicable(message: str, **extra: str) -> CheckOutcome:
    """A documented rule says this gate does not apply here (say which rule)."""
    return CheckOutcome(NOT_APPLICABLE, message, dict(extra))


def not_measured(message: str, **extra: str) -> CheckOutcome:
    """The check could not measure: name the missing prerequisite or what timed out."""
    return CheckOutcome(NOT_MEASURED, message, dict(extra))


class CheckContext:
    def __init__(
        self,
        *,
        phase: str,
        entry: CatalogEntry,
        recipe: RecipeView,
        executor: ClusterExecutor,
        run_id: str,
        emit: Callable[[Event], None],
        clock: Callable[[], float],
        t0: float,
        sleep: Callable[[float], None] = time.sleep,
        namespace: str = VALIDATION_NAMESPACE,
        cleanup: bool = True,
        environ: Mapping[str, str] | None = None,
        poll_s: float = 2.0,
        cancelled: threading.Event | None = None,
    ) -> None:
        self.phase = phase
        self.entry = entry
        self.name = entry.name
        self.recipe = recipe
        self.executor = executor
        self.run_id = run_id
        self.namespace = namespace
        self.cleanup = cleanup
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.poll_s = poll_s
        self.clock = clock
        self._sleep = sleep
        self._emit = emit
        self._t0 = t0
        self.started = clock()
        self.deadline = self.started + entry.timeout_s
        self.cancelled = cancelled if cancelled is not None else threading.Event()
        self.lines = 0

    def now(self) -> float:
        return round(self.clock() - self._t0, 3)

    def remaining(self) -> float:
        """Budget left; zero once the run gave up on this check, so every wait loop ends."""
        if self.cancelled.is_set():
            return 0.0
        return max(0.0, self.deadline - self.clock())

    def sleep(self, seconds: float) -> None:
        if not self.cancelled.is_set():
            self._sleep(seconds)

    def log(self, line: str) -> None:
        if self.cancelled.is_set():
            return
        for part in str(line).splitlines() or [""]:
            self.lines += 1
            self._emit(LogLine(self.now(), self.phase, self.name, cap_line(part)))

    def measure(
        self,
        name: str,
        value: float | None,
        unit: str,
        threshold: str,
        verdict: str,
        *,
        display: str = "",
        note: str = "",
    ) -> None:
        if self.cancelled.is_set():
            return
        shown = display or ("" if value is None else f"{value:.2f}")
        self._emit(
            Measurement(
                self.now(),
                self.phase,
                self.name,
                name,
                value,
                unit,
                threshold,
                verdict,
                shown,
                note,
            )
        )

    def labels(self, **more: str) -> dict[str, str]:
        out = {
            "app.kubernetes.io/name": "aicr-validator",
            "app.kubernetes.io/managed-by": "aicr-tui",
            RUN_ID_LABEL: self.run_id,
            "aicr.nvidia.com/validator": self.name,
            "aicr.nvidia.com/phase": self.phase,
        }
        out.update(more)
        return out

    def component_namespace(self, component: str, default: str) -> str:
        c = self.recipe.component(component)
        return c.namespace if c is not None and c.namespace else default


CheckFn = Callable[[CheckContext], CheckOutcome]

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def threshold_number(expr: str) -> float | None:
    """The number in a gate such as ``>= 150`` or ``>= 150 GB/s`` (upstream strips the rest)."""
    m = _NUMBER.search(expr or "")
    return float(m.group(0)) if m else None


def schedulable_gpu_nodes(nodes: list[NodeInfo]) -> list[NodeInfo]:
    return [n for n in nodes if n.is_gpu_node and not n.unschedulable]


def small_sku_reason(nodes: list[NodeInfo]) -> str | None:
    """Why full-node floors do not apply, when every GPU node is a small NCads size."""
    if not nodes:
        return None
    skus = {n.instance_type for n in nodes}
    if all(s in SMALL_SKUS for s in skus):
        sizes = ", ".join(f"{s} ({SMALL_SKUS[s]})" for s in sorted(skus))
        return (
            f"not applicable on {sizes}: the floor is a full-node value calibrated on "
            f"{FULL_NODE_REFERENCE}; only inference-ttft-p99 gates on these sizes"
        )
    return None


def pod_name(prefix: str, suffix: str) -> str:
    """A DNS-1123 pod name ``<prefix>-<suffix>`` cut to 63 characters."""
    clean = re.sub(r"[^a-z0-9-]+", "-", f"{prefix}-{suffix}".lower()).strip("-")
    return clean[:63].rstrip("-")


def wait_pod(ctx: CheckContext, name: str, budget_s: float) -> PodOutcome:
    """Poll pod ``name`` in the validation namespace until terminal or out of budget."""
    return wait_for_pod(
        ctx.executor,
        ctx.namespace,
        name,
        min(budget_s, ctx.remaining()),
        poll_s=ctx.poll_s,
        sleep=ctx.sleep,
        clock=ctx.clock,
        cancel=ctx.cancelled,
    )
