"""The ``K8s.aks-gpu-pools`` reading, projected from ``az aks nodepool list -o json``.

An AKS pool's GPU ownership mode lives in the Azure control plane (the AgentPool's
``gpuProfile``), not in any Kubernetes object, so it is read from the pool dump. Only
``name``, ``vmSize`` and ``gpuProfile {driver, nvidia {managementMode}}`` are read; the
dump is decoded with Go's encoding/json rules (see ``aicr_tui.core.foundation.gojson``) so the readings are
the ones upstream produces for the same bytes. Every problem with the dump is an error:
a bad file never degrades into "reading unavailable".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from aicr_tui.core.capture.dumps import AKS_POOLS, decode_failure, decode_json, decoding, wrong_dump
from aicr_tui.core.documents.snapshot import Subtype
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import read_dump
from aicr_tui.core.foundation.gojson import (
    GoField,
    decode_go_struct,
    go_equal_fold,
    go_lower,
    json_kind,
    new_go_struct,
)

if TYPE_CHECKING:
    import threading

DESCRIPTION = "AKS GPU pools"
SUBTYPE = "aks-gpu-pools"
SOURCE_COMMAND = "az aks nodepool list -o json"

MODE_INSTALL = "Install"
MODE_NONE = "None"
MODE_MANAGED = "Managed"
MODE_MIXED = "Mixed"

# AMD GPU sizes in the otherwise NVIDIA NC/ND/NV families; checked before the prefixes.
AMD_MARKERS = ("_mi300x", "_mi325x", "_v620", "_v710")
NVIDIA_PREFIXES = ("standard_nc", "standard_nd", "standard_nv")

_NVIDIA_FIELDS = (GoField("managementMode", "string"),)
_GPU_PROFILE_FIELDS = (
    GoField("driver", "string"),
    GoField("nvidia", "struct_ptr", _NVIDIA_FIELDS),
)
_POOL_FIELDS = (
    GoField("name", "string"),
    GoField("vmSize", "string"),
    GoField("gpuProfile", "struct_ptr", _GPU_PROFILE_FIELDS),
)


@dataclass(frozen=True)
class AksPool:
    """One agent pool as the projection saw it. ``mode`` is None for a non-GPU pool."""

    name: str
    vm_size: str
    is_gpu: bool
    mode: str | None
    driver: str
    management_mode: str | None
    reason: str = ""


@dataclass(frozen=True)
class AksPoolsProjection:
    source: str
    pools: list[AksPool]
    subtype: Subtype

    @property
    def gpu_pools(self) -> list[AksPool]:
        return [p for p in self.pools if p.is_gpu]

    @property
    def gpu_driver(self) -> str | None:
        value = self.subtype.data.get("gpu-driver")
        return None if value is None else str(value)


def is_nvidia_gpu_size(vm_size: str) -> bool:
    """True for an NVIDIA GPU VM size (NC/ND/NV families, AMD sizes excluded)."""
    lowered = go_lower(vm_size)
    if any(marker in lowered for marker in AMD_MARKERS):
        return False
    return lowered.startswith(NVIDIA_PREFIXES)


def pool_mode(gpu_profile: dict[str, object] | None) -> str:
    """The per-pool mode from a decoded ``gpuProfile`` (first matching rule wins)."""
    if gpu_profile is None:
        return MODE_INSTALL
    nvidia = gpu_profile.get("nvidia")
    if isinstance(nvidia, dict):
        management = str(nvidia.get("managementMode") or "")
        if not go_equal_fold(management, "Unmanaged"):
            return MODE_MANAGED
    driver = str(gpu_profile.get("driver") or "")
    if driver:
        return driver
    return MODE_INSTALL


def mode_reason(vm_size: str, gpu_profile: dict[str, object] | None) -> str:
    """One sentence saying why a pool reads the mode it does (for the capture screen)."""
    if not is_nvidia_gpu_size(vm_size):
        return f'"{vm_size}" is not an NVIDIA GPU size (NC/ND/NV families, AMD sizes excluded)'
    if gpu_profile is None:
        return "no gpuProfile: AKS installs the driver (the provider default)"
    nvidia = gpu_profile.get("nvidia")
    if isinstance(nvidia, dict):
        management = str(nvidia.get("managementMode") or "")
        if not go_equal_fold(management, "Unmanaged"):
            shown = f'"{management}"' if management else "unset"
            return (
                f"gpuProfile.nvidia.managementMode is {shown}: an AKS-managed GPU pool, "
                "which conflicts with the operands AICR deploys"
            )
    driver = str(gpu_profile.get("driver") or "")
    if driver:
        return f'gpuProfile.driver is "{driver}"'
    return "gpuProfile without a driver: AKS installs the driver (the provider default)"


def aggregate_modes(modes: list[str]) -> str | None:
    """One distinct mode is the reading; two or more read ``Mixed``; none: no reading."""
    distinct = set(modes)
    if not distinct:
        return None
    if len(distinct) == 1:
        return next(iter(distinct))
    return MODE_MIXED


def _decode_failure(source: str, reason: str) -> Exception:
    return decode_failure(
        DESCRIPTION, source, f"the JSON array emitted by `{SOURCE_COMMAND}`", reason
    )


def project_aks_pools(raw: bytes, source: str) -> AksPoolsProjection:
    """Project the bytes of an ``az aks nodepool list -o json`` dump into the reading."""
    document = decode_json(raw, partial(_decode_failure, source))
    if document is None:
        raise invalid(
            f'failed to decode {DESCRIPTION} file "{source}": got JSON null, expected the JSON '
            f"array emitted by `{SOURCE_COMMAND}`"
        )
    if not isinstance(document, list) or json_kind(document) != "array":
        raise _decode_failure(
            source,
            f"cannot unmarshal {json_kind(document)} into the pool list (an array)"
            + wrong_dump(document, AKS_POOLS),
        )
    pools: list[AksPool] = []
    for index, element in enumerate(document):
        decoded = new_go_struct(_POOL_FIELDS)
        with decoding(partial(_decode_failure, source)):
            decode_go_struct(element, _POOL_FIELDS, decoded, f"pool[{index}]")
        pools.append(_pool(decoded))
    return AksPoolsProjection(source=source, pools=pools, subtype=_subtype(pools))


def _pool(decoded: dict[str, object]) -> AksPool:
    name = str(decoded["name"])
    vm_size = str(decoded["vmSize"])
    profile = decoded["gpuProfile"]
    gpu_profile = profile if isinstance(profile, dict) else None
    nvidia = gpu_profile.get("nvidia") if gpu_profile is not None else None
    management = str(nvidia.get("managementMode") or "") if isinstance(nvidia, dict) else None
    driver = str(gpu_profile.get("driver") or "") if gpu_profile is not None else ""
    is_gpu = is_nvidia_gpu_size(vm_size)
    return AksPool(
        name=name,
        vm_size=vm_size,
        is_gpu=is_gpu,
        mode=pool_mode(gpu_profile) if is_gpu else None,
        driver=driver,
        management_mode=management,
        reason=mode_reason(vm_size, gpu_profile),
    )


def _subtype(pools: list[AksPool]) -> Subtype:
    gpu = [p for p in pools if p.is_gpu and p.mode is not None]
    data: dict[str, str | int | float | bool] = {"gpu-pool-count": len(gpu)}
    if gpu:
        entries = sorted(f"{p.name}={p.mode}" for p in gpu)
        data["gpu-pools"] = ",".join(entries)
        driver = aggregate_modes([p.mode for p in gpu if p.mode is not None])
        if driver is not None:
            data["gpu-driver"] = driver
        # The pools' VM sizes name their GPU: a stated accelerator is checked against them.
        sizes = ",".join(sorted(f"{p.name}={p.vm_size}" for p in gpu))
        return Subtype(subtype=SUBTYPE, data=data, context={"vm-sizes": sizes})
    return Subtype(subtype=SUBTYPE, data=data)


def load_aks_pools(
    path: str | os.PathLike[str], *, cancel: threading.Event | None = None
) -> AksPoolsProjection:
    """Read an ``az aks nodepool list -o json`` dump with the bounded-read rules and project it."""
    p = os.path.normpath(os.fspath(path))
    return project_aks_pools(read_dump(p, DESCRIPTION, SOURCE_COMMAND, cancel=cancel), p)
