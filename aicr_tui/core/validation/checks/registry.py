"""Which function runs each catalog check. Names not listed run ``not_implemented``."""

from __future__ import annotations

from aicr_tui.core.validation.checks import capabilities, conformance, deployment, performance
from aicr_tui.core.validation.checks.base import CheckFn

CHECKS: dict[str, CheckFn] = {
    "operator-health": deployment.operator_health,
    "expected-resources": deployment.expected_resources,
    "gpu-operator-version": deployment.gpu_operator_version,
    "check-nvidia-smi": deployment.check_nvidia_smi,
    "dra-support": conformance.dra_support,
    "secure-accelerator-access": conformance.secure_accelerator_access,
    "gpu-operator-health": conformance.gpu_operator_health,
    "platform-health": conformance.platform_health,
    "slinky-slurm-health": conformance.slinky_slurm_health,
    "gang-scheduling": capabilities.gang_scheduling,
    "accelerator-metrics": capabilities.accelerator_metrics,
    "ai-service-metrics": capabilities.ai_service_metrics,
    "inference-gateway": capabilities.inference_gateway,
    "pod-autoscaling": capabilities.pod_autoscaling,
    "cluster-autoscaling": capabilities.cluster_autoscaling,
    "robust-controller": capabilities.robust_controller,
    "nccl-all-reduce-bw": performance.nccl_all_reduce_bw,
    # The transport variants run the same launch with the transport pinned and asserted.
    "nccl-all-reduce-bw-nvls": performance.nccl_all_reduce_bw,
    "nccl-all-reduce-bw-net": performance.nccl_all_reduce_bw,
    "inference-perf": performance.inference_perf,
}


def check_function(name: str) -> CheckFn:
    return CHECKS.get(name, conformance.not_implemented)


def is_implemented(name: str) -> bool:
    return name in CHECKS
