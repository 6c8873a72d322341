"""Remedies: what to do about a constraint a snapshot fails, as the setup briefs word it.

A profile's failing constraint first names another value of the profile that passes against
the same snapshot; then the constraint's own ``remediation``, else the brief's remedy for that
reading (the AKS GPU pools' driver mode, the OKE add-on, the OKE legacy device plugin, a
reading the snapshot lacks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aicr_tui.core.recipe.constraints import (
    ConstraintResult,
    ConstraintStatus,
    evaluate_constraint,
    format_scalar,
)

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import Constraint
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.recipe.profiles import ProfileDeclaration

AKS_POOLS = "K8s.aks-gpu-pools.gpu-driver"
OKE_ADDON = "K8s.oke-addons.nvidia-gpu-plugin"
OKE_LEGACY = "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"


def _reading(snapshot: Snapshot | None, path: str) -> str | None:
    if snapshot is None:
        return None
    mtype, _, rest = path.partition(".")
    sub, _, key = rest.partition(".")
    value = snapshot.reading_or_none(mtype, sub, key)
    return None if value is None else format_scalar(value)


def _flag(decl: ProfileDeclaration, value: str) -> str:
    if value == decl.default:
        return f"without --profile (the {decl.name}={value} default)"
    return f"with --profile {decl.name}={value}"


def _passing_alternatives(
    decl: ProfileDeclaration, selected: str, snapshot: Snapshot | None
) -> list[str]:
    if snapshot is None:
        return []
    out = []
    for vname in decl.value_names():
        if vname == selected:
            continue
        value = decl.values[vname]
        if value.constraints and all(
            evaluate_constraint(c.name, c.value, snapshot).passed for c in value.constraints
        ):
            out.append(vname)
    return out


def _specific_remedy(result: ConstraintResult, snapshot: Snapshot | None) -> str:
    """Remedies from the AKS and OKE setup briefs, keyed by reading and observation."""
    name, actual, status = result.name, result.actual, result.status
    missing = status is ConstraintStatus.UNAVAILABLE
    if name == AKS_POOLS:
        if missing:
            return (
                "recapture the snapshot with the pool dump: az aks nodepool list -g <rg> "
                "--cluster-name <cluster> -o json > pools.json, then aicr-tui snapshot "
                "--aks-gpu-pools pools.json (a snapshot without the reading, or with zero NVIDIA "
                "GPU pools, never qualifies)"
            )
        pools = _reading(snapshot, "K8s.aks-gpu-pools.gpu-pools")
        seen = f" (pools: {pools})" if pools else ""
        if actual in ("Install", "None"):
            want = (
                "the AKS driver-only install"
                if result.expected == "Install"
                else "--gpu-driver none"
            )
            return f"recreate the GPU pools with {want} and recapture with --aks-gpu-pools{seen}"
        return (
            f"fix the GPU pools{seen}: every NVIDIA pool must use the same unmanaged driver mode "
            "(AKS driver-only install for azure-managed, --gpu-driver none for operator-managed; "
            "never --enable-managed-gpu), then recapture with --aks-gpu-pools"
        )
    if name == OKE_ADDON:
        if missing:
            return (
                "recapture the snapshot with the add-on dump: oci ce cluster list-addons "
                "--cluster-id <cluster-ocid> --all --output json > addons.json, then aicr-tui "
                "snapshot --oke-addons addons.json (basic clusters have no add-ons: upgrade to "
                "enhanced first)"
            )
        if actual == "installed":
            return (
                "remove the NvidiaGpuPlugin cluster add-on (Terraform NvidiaGpuPlugin = "
                "{ remove = true }, or the add-on API) and recapture with --oke-addons; labelling "
                "nodes with oci.oraclecloud.com/disable-gpu-device-plugin=true does not qualify "
                "because the add-on stays installed"
            )
        if actual == "absent":
            return (
                "install the NvidiaGpuPlugin cluster add-on, wait until it is ACTIVE, and "
                "recapture with --oke-addons"
            )
        state = (actual or "").removeprefix("addon-") or "in an unknown state"
        return (
            f"the NvidiaGpuPlugin add-on is {state}: wait until it is ACTIVE (oci-managed) or "
            "fully removed (operator-managed), then recapture with --oke-addons"
        )
    if name == OKE_LEGACY:
        if missing:
            return (
                "recapture the snapshot with current aicr-tui: this snapshot predates legacy "
                "device-plugin detection"
            )
        if actual == "active":
            return (
                "disable the legacy plugin on every GPU node pool with the node label "
                "oci.oraclecloud.com/disable-gpu-device-plugin=true, or migrate the cluster to "
                "the managed NvidiaGpuPlugin add-on, then recapture"
            )
        return (
            "recapture with access to the Kubernetes API so the kube-system/"
            "nvidia-gpu-device-plugin DaemonSet can be read"
        )
    if missing:
        return (
            f'recapture the snapshot against the cluster so it carries "{name}" (a snapshot '
            "taken with --no-cluster holds only the provider readings)"
        )
    if name == "K8s.server.version":
        return (
            f"upgrade the cluster's Kubernetes version to satisfy {result.expected} and recapture"
        )
    return f"bring {name} to {result.expected} and recapture"


def profile_remedy(
    decl: ProfileDeclaration,
    selected: str,
    result: ConstraintResult,
    snapshot: Snapshot | None,
    constraint: Constraint,
) -> str:
    alternatives = _passing_alternatives(decl, selected, snapshot)
    parts: list[str] = []
    if alternatives:
        parts.append(
            f"rerun {_flag(decl, alternatives[0])} against the same snapshot (no recapture needed)"
        )
    parts.append(constraint.remediation or _specific_remedy(result, snapshot))
    return "; or ".join(parts)


def constraint_remedy(
    result: ConstraintResult, snapshot: Snapshot | None, constraint: Constraint
) -> str:
    """The remedy for a failing recipe constraint outside a profile: its own remediation,
    else the one the setup briefs give for that reading (what ``diff -r`` reports)."""
    return constraint.remediation or _specific_remedy(result, snapshot)


def overlay_remedy(result: ConstraintResult, constraint: Constraint, overlay: str) -> str:
    base = constraint.remediation or _specific_remedy(result, None)
    return f"{base} (overlay {overlay} was excluded)"
