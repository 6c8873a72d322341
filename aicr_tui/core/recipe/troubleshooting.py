"""The troubleshooting guide: symptoms from the AKS and OKE briefs, their causes and remedies.

The guide is data, ``troubleshooting.yaml`` beside this module (read and validated into
:data:`GUIDE` by :func:`load_guide`), searchable by words (:func:`search_guide`), and
:func:`diagnose` says which entries the state in front of the user already shows: a
snapshot reading, the selected ``gpuStack`` value, the resolved recipe's values, the VM
sizes of the captured pools. A symptom that only appears on a running cluster (an event,
a log line) is never claimed as observed; when the captured state makes it likely the
finding says ``likely`` and names the reading it is based on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aicr_tui.core.foundation.errors import malformed
from aicr_tui.core.foundation.fileio import read_document
from aicr_tui.core.foundation.versions import compare_versions, parse_version
from aicr_tui.core.foundation.yamlio import load_yaml_plain

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.documents.snapshot import Snapshot

DEFAULT_PROFILE_VALUE: dict[str, str] = {"aks": "azure-managed", "oke": "oci-managed"}

AKS_POOLS_DUMP = (
    "az aks nodepool list --cluster-name <cluster> --resource-group <rg> -o json > pools.json"
)
AKS_RECAPTURE = "aicr-tui snapshot --aks-gpu-pools pools.json -o snapshot.yaml"
OKE_ADDONS_DUMP = (
    "oci ce cluster list-addons --cluster-id <cluster-ocid> --all --output json > addons.json"
)
OKE_RECAPTURE = "aicr-tui snapshot --oke-addons addons.json -o snapshot.yaml"
OKE_LEGACY_DUMP = (
    "kubectl get daemonset -n kube-system nvidia-gpu-device-plugin -o json > legacy.json"
)

# The 8-GPU ND H100 v5 is what the full-node performance floors were calibrated on; these
# smaller H100 sizes deploy but cannot reach those floors.
SMALL_H100_SKUS = ("standard_nc80adis_h100_v5", "standard_nc40ads_h100_v5")


class Certainty(StrEnum):
    SHOWN = "shown"  # the captured state is the cause (a reading or a resolved value says so)
    LIKELY = "likely"  # the captured state is the setting in which this symptom appears


@dataclass(frozen=True)
class GuideEntry:
    """One symptom: what the user sees, why it happens, and what to do about it."""

    id: str
    title: str
    symptom: str
    cause: str
    remedy: str
    commands: tuple[str, ...] = ()
    services: tuple[str, ...] = ("aks", "oke")
    keywords: tuple[str, ...] = ()

    def text(self) -> str:
        """Everything searchable about the entry, lower-cased."""
        return " ".join(
            (self.id, self.title, self.symptom, self.cause, self.remedy, *self.keywords)
        ).lower()


@dataclass(frozen=True)
class Finding:
    """A guide entry the current state shows, with the evidence in one line."""

    entry: GuideEntry
    evidence: str
    certainty: Certainty = Certainty.SHOWN


@dataclass(frozen=True)
class DiagnosisContext:
    """What the wizard (or a caller) knows right now; every field is optional."""

    snapshot: Snapshot | None = None
    service: str | None = None
    accelerator: str | None = None
    intent: str | None = None
    platform: str | None = None
    profile_value: str | None = None
    recipe: Mapping[str, Any] | None = None
    pool_vm_sizes: Sequence[str] = ()
    capture_warnings: Sequence[str] = ()
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def selected_value(self) -> str | None:
        if self.profile_value:
            return self.profile_value
        return DEFAULT_PROFILE_VALUE.get(self.service or "")


GUIDE_FILE = Path(__file__).with_name("troubleshooting.yaml")


class _EntryDoc(BaseModel):
    """One entry of troubleshooting.yaml, as :class:`GuideEntry` declares it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    symptom: str = Field(min_length=1)
    cause: str = Field(min_length=1)
    remedy: str = Field(min_length=1)
    commands: list[str] = []
    services: list[Literal["aks", "oke"]] = Field(default=["aks", "oke"], min_length=1)
    keywords: list[str] = []


class GuideFile(BaseModel):
    """troubleshooting.yaml: the guide's entries in the order they are shown."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

    kind: Literal["TroubleshootingGuide"]
    entries: list[_EntryDoc] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> GuideFile:
        seen: set[str] = set()
        for entry in self.entries:
            if entry.id in seen:
                raise ValueError(f"entry id {entry.id!r} appears twice")
            seen.add(entry.id)
        return self


def load_guide(path: Path = GUIDE_FILE) -> tuple[GuideEntry, ...]:
    """The guide read from ``path`` and validated (:class:`GuideFile`); a file that does
    not match names itself and the first problem in one line (INVALID_REQUEST)."""
    what = f"the troubleshooting guide {path}"
    data = load_yaml_plain(read_document(path, what), str(path))
    try:
        doc = GuideFile.model_validate(data)
    except ValidationError as exc:
        raise malformed(exc, what) from None
    return tuple(
        GuideEntry(
            id=e.id,
            title=e.title,
            symptom=e.symptom,
            cause=e.cause,
            remedy=e.remedy,
            commands=tuple(e.commands),
            services=tuple(e.services),
            keywords=tuple(e.keywords),
        )
        for e in doc.entries
    )


GUIDE: tuple[GuideEntry, ...] = load_guide()

_BY_ID: dict[str, GuideEntry] = {e.id: e for e in GUIDE}


def guide_entry(entry_id: str) -> GuideEntry:
    """The entry with ``entry_id``; KeyError names the id when there is none."""
    return _BY_ID[entry_id]


def search_guide(query: str, *, service: str | None = None) -> list[GuideEntry]:
    """Entries whose text holds every word of ``query`` (case-insensitive), guide order."""
    words = query.lower().split()
    return [
        e
        for e in GUIDE
        if (service is None or service in e.services) and all(w in e.text() for w in words)
    ]


def _reading(snapshot: Snapshot | None, mtype: str, subtype: str, key: str) -> str | None:
    value = None if snapshot is None else snapshot.reading_or_none(mtype, subtype, key)
    return None if value is None else str(value).strip()


def _dig(tree: Any, dotted: str) -> Any:
    node = tree
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def recipe_view(recipe: RecipeResult | None) -> dict[str, Any] | None:
    """What :func:`diagnose` reads of a resolved recipe (``DiagnosisContext.recipe``):
    each component's name and overrides, read off the model. The wizard diagnoses on
    every keystroke, and dumping the whole recipe for these two fields took longer than
    the diagnosis."""
    if recipe is None:
        return None
    return {
        "componentRefs": [
            {"name": ref.name, "overrides": ref.overrides} for ref in recipe.componentRefs
        ]
    }


def _component_overrides(recipe: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
    if not recipe:
        return None
    refs = recipe.get("componentRefs")
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("name") == name:
            ov = ref.get("overrides")
            return ov if isinstance(ov, Mapping) else {}
    return None


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _infer_service(ctx: DiagnosisContext) -> str | None:
    if ctx.service in ("aks", "oke"):
        return ctx.service
    if ctx.service:
        return ctx.service
    if _reading(ctx.snapshot, "K8s", "aks-gpu-pools", "gpu-pool-count") is not None:
        return "aks"
    if ctx.snapshot is not None and (
        ctx.snapshot.subtype("K8s", "oke-addons") is not None
        or ctx.snapshot.subtype("K8s", "oke-legacy-plugin") is not None
    ):
        return "oke"
    return None


def _diagnose_aks(ctx: DiagnosisContext) -> Iterable[Finding]:
    value = ctx.selected_value
    driver = _reading(ctx.snapshot, "K8s", "aks-gpu-pools", "gpu-driver")
    pools = _reading(ctx.snapshot, "K8s", "aks-gpu-pools", "gpu-pools") or ""
    if ctx.snapshot is not None and driver is None:
        yield Finding(
            guide_entry("aks-pools-reading-missing"),
            "the snapshot has no K8s.aks-gpu-pools.gpu-driver reading",
        )
    elif driver == "None" and value == "azure-managed":
        yield Finding(
            guide_entry("aks-pools-none-under-azure-managed"),
            f"pools read None ({pools}) and the selected value is azure-managed",
        )
        yield Finding(
            guide_entry("mixed-ownership-no-runtime"),
            "deploying azure-managed values on --gpu-driver none pools would leave containerd "
            "without the nvidia runtime handler",
            Certainty.LIKELY,
        )
    elif driver == "Install" and value == "operator-managed":
        yield Finding(
            guide_entry("aks-pools-install-under-operator-managed"),
            f"pools read Install ({pools}) and the selected value is operator-managed",
        )
    elif driver == "Managed":
        yield Finding(guide_entry("aks-pools-managed"), f"pools read Managed ({pools})")
    elif driver == "Mixed":
        yield Finding(guide_entry("aks-pools-mixed"), f"pools read Mixed ({pools})")
        yield Finding(
            guide_entry("mixed-ownership-no-runtime"),
            f"the pools disagree ({pools}), so one recipe gives some of them the wrong mode",
            Certainty.LIKELY,
        )
    elif driver is not None and driver not in ("Install", "None"):
        yield Finding(
            guide_entry("aks-pools-mixed"),
            f'pools read "{driver}", a mode no profile value accepts ({pools})',
        )

    yield from _diagnose_nvsentinel(ctx, value)

    sizes = [s for s in ctx.pool_vm_sizes if s.lower() in SMALL_H100_SKUS]
    if sizes:
        yield Finding(
            guide_entry("small-sku-full-node-floors"),
            f"the captured GPU pools use {', '.join(sorted(set(sizes)))}",
        )
    else:
        count = _reading(ctx.snapshot, "GPU", "hardware", "gpu-count")
        model = (_reading(ctx.snapshot, "GPU", "hardware", "model") or "").upper()
        if count is not None and "H100" in model and count.isdigit() and 0 < int(count) < 8:
            yield Finding(
                guide_entry("small-sku-full-node-floors"),
                f"the sampled H100 node has {count} GPUs, fewer than the 8 the floors assume",
                Certainty.LIKELY,
            )

    kernel = _reading(ctx.snapshot, "K8s", "node", "kernel-version") or _reading(
        ctx.snapshot, "OS", "sysctl", "/proc/sys/kernel/osrelease"
    )
    if (
        kernel
        and kernel.startswith("6.8.")
        and kernel.endswith("-azure")
        and value == "azure-managed"
    ):
        yield Finding(
            guide_entry("peermem-not-loadable"),
            f"kernel {kernel} under azure-managed is where the stub nvidia-peermem build was seen",
            Certainty.LIKELY,
        )

    if ctx.intent == "inference" and ctx.platform == "dynamo":
        yield Finding(
            guide_entry("dynamo-timeout-slow-storage"),
            "this recipe runs the inference-perf check, which loads the model on a PVC",
            Certainty.LIKELY,
        )


def _diagnose_nvsentinel(ctx: DiagnosisContext, value: str | None) -> Iterable[Finding]:
    gpu_op = _component_overrides(ctx.recipe, "gpu-operator")
    sentinel = _component_overrides(ctx.recipe, "nvsentinel")
    if sentinel is None:
        return
    assume = _dig(sentinel, "labeler.assumeDriverInstalled")
    driver_enabled = _dig(gpu_op, "driver.enabled") if gpu_op is not None else None
    if (driver_enabled is False or value == "azure-managed") and not _is_true(assume):
        shown = f"the recipe leaves nvsentinel labeler.assumeDriverInstalled at {assume!r}"
        yield Finding(guide_entry("nvsentinel-zero-desired"), shown)
        yield Finding(guide_entry("manual-label-reverts"), shown, Certainty.LIKELY)
    runtime = _dig(gpu_op, "operator.runtimeClass") if gpu_op is not None else None
    collector = _dig(sentinel, "metadata-collector.runtimeClassName")
    if runtime is not None and collector is not None and str(runtime) != str(collector):
        yield Finding(
            guide_entry("runtimeclass-nvidia-not-found"),
            f"gpu-operator operator.runtimeClass is {runtime} but metadata-collector asks for {collector}",
        )


def _diagnose_oke(ctx: DiagnosisContext) -> Iterable[Finding]:
    value = ctx.selected_value
    addon = _reading(ctx.snapshot, "K8s", "oke-addons", "nvidia-gpu-plugin")
    legacy = _reading(ctx.snapshot, "K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin")
    detail = _reading(ctx.snapshot, "K8s", "oke-legacy-plugin", "daemonset")
    if ctx.snapshot is not None and addon is None:
        yield Finding(
            guide_entry("oke-addons-reading-missing"),
            "the snapshot has no K8s.oke-addons.nvidia-gpu-plugin reading",
        )
    elif addon == "installed" and value == "operator-managed":
        yield Finding(
            guide_entry("oke-addon-installed-under-operator-managed"),
            "the NvidiaGpuPlugin add-on is ACTIVE and the selected value is operator-managed",
        )
    elif addon == "absent" and value == "oci-managed":
        yield Finding(
            guide_entry("oke-addon-absent-under-oci-managed"),
            "the add-on list has no NvidiaGpuPlugin and the selected value is oci-managed",
        )
    elif addon is not None and addon not in ("installed", "absent"):
        yield Finding(guide_entry("oke-addon-transitional"), f"the add-on reads {addon}")
    if value == "operator-managed" and ctx.snapshot is not None:
        if legacy == "active":
            yield Finding(
                guide_entry("oke-legacy-plugin-active"),
                "the kube-system nvidia-gpu-device-plugin DaemonSet is addon-manager reconciled "
                "and targets at least one node",
            )
        elif legacy is None or legacy == "unknown":
            seen = "no reading" if legacy is None else f"unknown (detail {detail or 'unknown'})"
            yield Finding(guide_entry("oke-legacy-plugin-unknown"), f"the legacy reading is {seen}")
    for warning in ctx.capture_warnings:
        if "NvidiaGpuOperator" in warning or "NvidiaNetworkOperator" in warning:
            yield Finding(guide_entry("oke-oracle-operator-addons"), warning)
            break


def _diagnose_version(ctx: DiagnosisContext) -> Iterable[Finding]:
    version = _reading(ctx.snapshot, "K8s", "server", "version")
    if not version:
        return
    try:
        below = compare_versions(parse_version(version), parse_version("1.34")) < 0
    except Exception:  # an unparsable version is the constraint engine's to report
        return
    if below:
        yield Finding(guide_entry("kubernetes-below-1-34"), f"the server reports {version}")


def diagnose(ctx: DiagnosisContext) -> list[Finding]:
    """Guide entries the current state shows, causes first, each entry at most once."""
    service = _infer_service(ctx)
    found: list[Finding] = []
    if service == "aks":
        found.extend(_diagnose_aks(ctx))
    elif service == "oke":
        found.extend(_diagnose_oke(ctx))
    found.extend(_diagnose_version(ctx))
    seen: set[str] = set()
    unique: list[Finding] = []
    for f in sorted(found, key=lambda f: f.certainty is not Certainty.SHOWN):
        if f.entry.id not in seen:
            seen.add(f.entry.id)
            unique.append(f)
    return unique
