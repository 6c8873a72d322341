"""The gpuStack reason on its own: who installs the GPU driver on each side (gpu-operator's
``driver.enabled`` as set, else the chart's default), in both directions, from a recipe
side and from a live release's values, with and without the drain plan.

The end-to-end case from real recipes (AKS azure-managed -> operator-managed) is in
tests/cli/test_cli_upgrade_check.py."""

from __future__ import annotations

from typing import Any

from aicr_tui.core.services import upgrade as svc
from aicr_tui.core.verify import upgrade_verdicts as uv


def stack(
    values: dict[str, Any] | None,
    *,
    defaults: dict[str, Any] | None = None,
    profile: str = "",
    service: str = "aks",
) -> svc.StackSide:
    comps: dict[str, uv.Side] = {}
    if values is not None:
        comps["gpu-operator"] = uv.Side(
            "gpu-operator", "gpu-operator", "gpu-operator", "gpu-operator", "v26.7.0",
            values, [], defaults=defaults,
        )  # fmt: skip
    return svc.StackSide("side", comps, profile, service)


OPERATOR_DEFAULT = {"driver": {"enabled": True}}


def test_cloud_to_operator_is_blocked_with_the_plan_in_order() -> None:
    old = stack({"driver": {"enabled": False}}, profile="azure-managed")
    new = stack({}, defaults=OPERATOR_DEFAULT, profile="operator-managed")
    reason = svc.gpu_stack_reason(old, new, drain_planned=False)
    assert reason is not None and reason.verdict == uv.BLOCKED
    assert "azure-managed -> operator-managed" in reason.message
    assert "from the cloud to the operator" in reason.message
    steps = reason.steps
    assert steps[0].startswith("kubectl cordon") and steps[1].startswith("kubectl drain")
    # the driverless pool exists before the operator installs its driver
    assert "--gpu-driver None" in steps[2] and "driver.enabled=true" in steps[3]
    assert steps[-2].startswith("kubectl uncordon")


def test_operator_to_cloud_on_oke_with_the_plan_acknowledged_is_manual() -> None:
    old = stack({"driver": {"enabled": True}}, service="oke")
    new = stack({"driver": {"enabled": False}}, service="oke")
    reason = svc.gpu_stack_reason(old, new, drain_planned=True)
    assert reason is not None and reason.verdict == uv.MANUAL
    # the operator removes its driver before nodes with the image's driver replace them
    assert "driver.enabled=false" in reason.steps[2]
    assert "OKE node pool on an image that ships the NVIDIA driver" in reason.steps[3]


def test_same_owner_is_no_reason_and_an_unreadable_side_with_a_profile_change_is_unknown() -> None:
    same = svc.gpu_stack_reason(
        stack({"driver": {"enabled": False}}), stack({"driver": {"enabled": False}}),
        drain_planned=False,
    )  # fmt: skip
    assert same is None
    # a live side without gpu-operator values and defaults cannot say who owns the driver
    unknown = svc.gpu_stack_reason(
        stack({}, profile="azure-managed"), stack({"driver": {"enabled": True}}, profile="operator-managed"),
        drain_planned=False,
    )  # fmt: skip
    assert unknown is not None and unknown.verdict == uv.UNKNOWN
    assert svc.gpu_stack_reason(stack(None), stack(None), drain_planned=False) is None


def test_the_reason_lands_on_gpu_operator_and_sets_the_exit_code() -> None:
    old = stack({"driver": {"enabled": False}})
    new = stack({"driver": {"enabled": True}})
    report = svc.check(old, new)
    (row,) = report.components
    assert row.name == "gpu-operator" and row.verdict == uv.BLOCKED
    assert report.exit_code == 12
    assert svc.check(old, new, drain_planned=True).exit_code == 10
