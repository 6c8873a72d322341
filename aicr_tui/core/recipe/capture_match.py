"""Whether a capture contradicts the criteria a selection states.

A snapshot records facts that are also criteria: the provider (the service), the GPU (the
accelerator) and the node OS. :func:`observed_criteria` reads every place a capture can
hold them: the node's provider reading and the provider dumps it carries (AKS pools,
OKE add-ons, the OKE legacy DaemonSet probe); the GPU model, the GPU Feature Discovery
product label (``nvidia.com/gpu.product``) and the SKU or shape names of nodes, pools and
add-ons (``Standard_ND96isr_H100_v5``, ``BM.GPU.GB200.4``); the OS release and the
kubelet's OS image. :func:`criteria_conflicts` names each stated dimension the capture
contradicts, with both values and the reading that holds the observed one.

A conflict never passes: qualification reports it as a failed check and readiness refuses
the run. The CLI warns (exits 2 under ``--criteria-strict``); the wizard shows it with the
capture's value as the one-key remedy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aicr_tui.core.documents.criteria import ACCELERATOR_TOKENS, OS_IDS, PROVIDER_SERVICES
from aicr_tui.core.foundation.errors import AicrError, invalid

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot

CAPTURE_DIMENSIONS: tuple[str, ...] = ("service", "accelerator", "os")

# Provider subtypes that only a capture of that service carries.
_SERVICE_SUBTYPES: tuple[tuple[str, str], ...] = (
    ("aks-gpu-pools", "aks"),
    ("oke-addons", "oke"),
    ("oke-legacy-plugin", "oke"),
)

# Keys (data or context, any subtype) whose value names a GPU product, SKU or shape.
_PRODUCT_KEY = re.compile(
    r"(^|[./_-])(model|gpu\.product|product|instance-type|instancetype|vm-?sizes?|"
    r"vmsizes?|sku|skus|shapes?|node-shapes?)$",
    re.IGNORECASE,
)

# SKU and shape names that do not spell their GPU (Azure v4 A100, OCI GPU4 shapes).
_SKU_ALIASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"nd96asr_v4|nd96amsr_a100_v4|nc\d+ads_a100_v4", re.IGNORECASE), "a100"),
    (re.compile(r"\bbm\.gpu4\.8\b", re.IGNORECASE), "a100"),
)

_OS_IMAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^ubuntu\b", re.IGNORECASE), "ubuntu"),
    (re.compile(r"^oracle linux\b", re.IGNORECASE), "ol"),
    (re.compile(r"^red hat enterprise linux(?! coreos)", re.IGNORECASE), "rhel"),
    (re.compile(r"^amazon linux\b", re.IGNORECASE), "amazonlinux"),
    (re.compile(r"^container-optimized os\b", re.IGNORECASE), "cos"),
    (re.compile(r"^talos\b", re.IGNORECASE), "talos"),
)


@dataclass(frozen=True)
class Observation:
    """One criteria value a capture records, and where."""

    dimension: str  # service | accelerator | os
    value: str  # the criteria value: aks, h100, ubuntu
    reading: str  # "K8s.node.provider", "GPU.hardware.context.nvidia.com/gpu.product"
    raw: str  # what the reading holds: "azure", "NVIDIA-H100-80GB-HBM3"


@dataclass(frozen=True)
class CriteriaConflict:
    """A stated criterion the capture contradicts."""

    dimension: str
    stated: str
    observed: Observation

    @property
    def message(self) -> str:
        o = self.observed
        return (
            f"the stated {self.dimension} {self.stated} contradicts the snapshot, which records "
            f"{self.dimension} {o.value} ({o.reading}: {o.raw})"
        )


def accelerator_of(text: str) -> str:
    """The accelerator a GPU product, SKU or shape name spells, or ``""``."""
    lowered = text.strip().lower()
    if not lowered:
        return ""
    for pattern, accel in _SKU_ALIASES:
        if pattern.search(lowered):
            return accel
    for token, accel in ACCELERATOR_TOKENS:
        if token in lowered:
            return accel
    # Dashed product labels (NVIDIA-RTX-PRO-6000) and underscored SKUs.
    spaced = lowered.replace("-", " ").replace("_", " ")
    for token, accel in ACCELERATOR_TOKENS:
        if token in spaced:
            return accel
    return ""


def _add(out: dict[str, list[Observation]], obs: Observation) -> None:
    out.setdefault(obs.dimension, []).append(obs)


def observed_criteria(snapshot: Snapshot) -> dict[str, list[Observation]]:
    """Every service, accelerator and OS value ``snapshot`` records, first the strongest
    reading of each (provider, GPU model, OS release)."""
    out: dict[str, list[Observation]] = {}
    provider = snapshot.reading_or_none("K8s", "node", "provider")
    if provider is not None:
        service = PROVIDER_SERVICES.get(str(provider).strip().lower(), "")
        if service:
            _add(out, Observation("service", service, "K8s.node.provider", str(provider)))
    for sub, service in _SERVICE_SUBTYPES:
        if snapshot.subtype("K8s", sub) is not None:
            _add(out, Observation("service", service, f"K8s.{sub}", f"{sub} reading present"))
    _gpu_observations(snapshot, out)
    release = snapshot.reading_or_none("OS", "release", "ID")
    if release is not None:
        os_id = OS_IDS.get(str(release).strip().lower(), "")
        if os_id:
            _add(out, Observation("os", os_id, "OS.release.ID", str(release)))
    image = snapshot.reading_or_none("K8s", "node", "os-image")
    if image is not None:
        for pattern, os_id in _OS_IMAGES:
            if pattern.search(str(image).strip()):
                _add(out, Observation("os", os_id, "K8s.node.os-image", str(image)))
                break
    return out


def _gpu_observations(snapshot: Snapshot, out: dict[str, list[Observation]]) -> None:
    model = snapshot.reading_or_none("GPU", "hardware", "model")
    if model is not None and accelerator_of(str(model)):
        _add(
            out,
            Observation(
                "accelerator", accelerator_of(str(model)), "GPU.hardware.model", str(model)
            ),
        )
    for m in snapshot.measurements:
        for sub in m.subtypes:
            where = f"{m.type}.{sub.subtype}"
            pairs: list[tuple[str, str, str]] = [
                (k, str(v), f"{where}.{k}") for k, v in sub.data.items() if isinstance(v, str)
            ]
            pairs += [(k, v, f"{where} context {k}") for k, v in (sub.context or {}).items()]
            for key, value, reading in pairs:
                if reading == "GPU.hardware.model" or not _PRODUCT_KEY.search(key):
                    continue
                for part in value.split(","):
                    name = part.partition("=")[2] if "=" in part else part
                    accel = accelerator_of(name)
                    if accel:
                        _add(out, Observation("accelerator", accel, reading, name.strip()))


def criteria_conflicts(
    stated: Mapping[str, str | None], snapshot: Snapshot | None
) -> list[CriteriaConflict]:
    """Each stated service, accelerator or OS that no reading of ``snapshot`` records,
    while some reading records another value. An open or ``any`` value never conflicts,
    nor does a dimension the capture does not record."""
    if snapshot is None:
        return []
    observed = observed_criteria(snapshot)
    out: list[CriteriaConflict] = []
    for dim in CAPTURE_DIMENSIONS:
        value = (stated.get(dim) or "").strip().lower()
        seen = observed.get(dim, [])
        if not value or value == "any" or not seen:
            continue
        if any(o.value == value for o in seen):
            continue
        out.append(CriteriaConflict(dim, value, seen[0]))
    return out


def snapshot_identity(snapshot: Snapshot) -> str:
    """``aks/H100 (provider azure)``: what the capture is from, in one phrase."""
    observed = observed_criteria(snapshot)
    service = observed.get("service", [])
    accel = observed.get("accelerator", [])
    head = service[0].value if service else "an unknown service"
    if accel:
        head += f"/{accel[0].value.upper()}"
    provider = next((o.raw for o in service if o.reading == "K8s.node.provider"), "")
    return f"{head} (provider {provider})" if provider else head


def conflict_summary(
    conflicts: list[CriteriaConflict], criteria: Mapping[str, str | None], snapshot: Snapshot
) -> str:
    """One line: what the capture is from, what the recipe is for, and each conflict."""
    service = criteria.get("service") or "any"
    accel = (criteria.get("accelerator") or "any").upper()
    details = "; ".join(c.message for c in conflicts)
    return (
        f"snapshot is from {snapshot_identity(snapshot)}; the recipe is for "
        f"{service}/{accel}: {details}"
    )


def take_capture_remedy(conflicts: list[CriteriaConflict]) -> str:
    values = " ".join(f"--{c.dimension} {c.observed.value}" for c in conflicts)
    return (
        f"take the capture's values ({values}), or use a snapshot of the cluster the recipe is for"
    )


def conflict_error(
    conflicts: list[CriteriaConflict],
    criteria: Mapping[str, str | None],
    snapshot: Snapshot,
    cause: AicrError | None = None,
) -> AicrError:
    """The refusal for a selection the capture contradicts (exit 2)."""
    return invalid(
        conflict_summary(conflicts, criteria, snapshot),
        cause,  # its message only: a recapture hint for the wrong cluster would mislead
        remedy=take_capture_remedy(conflicts),
    )
