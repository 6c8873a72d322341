"""The troubleshooting guide: symptoms from the AKS and OKE briefs, their causes and remedies.

The guide is data (:data:`GUIDE`), searchable by words (:func:`search_guide`), and
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
from typing import TYPE_CHECKING, Any

from core.foundation.versions import compare_versions, parse_version

if TYPE_CHECKING:
    from core.documents.recipe_result import RecipeResult
    from core.documents.snapshot import Snapshot

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


GUIDE: tuple[GuideEntry, ...] = (
    GuideEntry(
        id="mixed-ownership-no-runtime",
        title='FailedCreatePodSandBox: no runtime for "nvidia" is configured',
        symptom=(
            'Every GPU Operator pod fails with FailedCreatePodSandBox: no runtime for "nvidia" '
            "is configured, and the GPU nodes advertise zero nvidia.com/gpu."
        ),
        cause=(
            "The node pool and the GPU Operator values come from different ownership modes. "
            "AKS has two complete modes: pools that AKS gives a driver (the default) with the "
            "operator's driver and toolkit off, or --gpu-driver none pools with the operator "
            "installing both. Mixing them, for example a --gpu-driver none pool with "
            "toolkit.enabled=false, leaves containerd with no nvidia runtime handler."
        ),
        remedy=(
            "Take the pool flags and the operator values from the same mode: select the gpuStack "
            "value your pools call for (azure-managed for pools AKS installs the driver on, "
            "operator-managed for --gpu-driver none pools), regenerate the recipe from a snapshot "
            "that carries the pool reading, and bundle again. Never flip the owned values with --set."
        ),
        commands=(
            AKS_POOLS_DUMP,
            AKS_RECAPTURE,
            "aicr-tui recipe --service aks --accelerator h100 --os ubuntu --intent training "
            "--snapshot snapshot.yaml --profile gpuStack=operator-managed -o recipe.yaml",
        ),
        services=("aks",),
        keywords=("containerd", "runtime handler", "sandbox", "toolkit", "gpu-driver none"),
    ),
    GuideEntry(
        id="nvsentinel-zero-desired",
        title="NVSentinel DaemonSets at 0 desired pods, no error",
        symptom=(
            "metadata-collector, syslog-health-monitor-regular and syslog-health-monitor-kata "
            "show 0 DESIRED: no pod is ever scheduled, and there is no error and no event. "
            "gpu-health-monitor keeps running, so the stack looks fully rolled out."
        ),
        cause=(
            "The node label nvsentinel.dgxc.nvidia.com/driver.installed is never applied. The "
            "NVSentinel labeler sets it by watching for a GPU Operator driver pod, and under "
            "azure-managed (driver.enabled=false) there is no such pod. A DaemonSet that matches "
            "no node is not unhealthy, so nothing reports the problem."
        ),
        remedy=(
            "Use a recipe generated with the gpuStack profile: under azure-managed it sets "
            "nvsentinel labeler.assumeDriverInstalled=true, which makes the labeler apply the "
            "label for the host-installed driver. An AKS recipe that reaches bundling without "
            "it is blocked (CheckNVSentinelDriverLabelDetectable). This is a different fault from "
            'RuntimeClass "nvidia" not found, which shows N desired and 0 created.'
        ),
        commands=(
            "aicr-tui recipe --service aks --accelerator h100 --os ubuntu --intent training "
            "--snapshot snapshot.yaml -o recipe.yaml",
        ),
        services=("aks",),
        keywords=(
            "nvsentinel",
            "labeler",
            "assumeDriverInstalled",
            "driver.installed",
            "0 desired",
        ),
    ),
    GuideEntry(
        id="runtimeclass-nvidia-not-found",
        title='RuntimeClass "nvidia" not found at admission',
        symptom=(
            "The metadata-collector DaemonSet wants N pods and has created 0. Its only signal is a "
            'FailedCreate event: pods "metadata-collector-" is forbidden: pod rejected: '
            'RuntimeClass "nvidia" not found. No pod object exists, so there is nothing to describe.'
        ),
        cause=(
            "metadata-collector asks for a RuntimeClass by name, and the GPU Operator names its "
            "RuntimeClass after operator.runtimeClass. Under azure-managed that is "
            "nvidia-container-runtime, so a collector left on its chart default nvidia asks for "
            "a class that does not exist and the API server rejects every pod."
        ),
        remedy=(
            "Let the gpuStack profile set both names: it owns gpu-operator operator.runtimeClass "
            "and nvsentinel metadata-collector.runtimeClassName together, so they always agree. "
            "Regenerate the recipe with the profile; the bundle check "
            "CheckNVSentinelRuntimeClassCoherence blocks a bundle where they diverge."
        ),
        services=("aks",),
        keywords=(
            "FailedCreate",
            "admission",
            "runtimeClassName",
            "metadata-collector",
            "forbidden",
        ),
    ),
    GuideEntry(
        id="manual-label-reverts",
        title="A driver label applied by hand reverts",
        symptom=(
            "kubectl label node <node> nvsentinel.dgxc.nvidia.com/driver.installed=true works at "
            "first; later the label is gone and the NVSentinel DaemonSets are back at 0 desired."
        ),
        cause=(
            "The labeler reconciles the label from what it can observe. With no driver pod to see, "
            "it computes an empty desired value and removes the hand-applied label on its next pass."
        ),
        remedy=(
            "Do not label by hand: let the profile set labeler.assumeDriverInstalled=true "
            "(azure-managed), which is the supported, permanent mechanism for host-installed drivers."
        ),
        services=("aks",),
        keywords=("kubectl label", "revert", "reconcile", "labeler", "driver.installed"),
    ),
    GuideEntry(
        id="peermem-not-loadable",
        title='nvidia-peermem reloader stays at "not loadable yet"',
        symptom=(
            'The nvidia-peermem-reloader pods log "not loadable yet" forever while reporting Ready; '
            "modprobe nvidia-peermem fails with Invalid argument and leaves no dmesg trace."
        ),
        cause=(
            "Some AKS node images ship a stub nvidia-peermem DKMS build (seen on "
            "AKSUbuntu-2404gen2containerd-202606.19.0, kernel 6.8.0-1059-azure, driver 580.126.09): "
            "the module was compiled without peer-memory support, and the reloader cannot make an "
            "unloadable module load. On those images this loop is the expected steady state."
        ),
        remedy=(
            "Nothing to fix if the training NCCL all-reduce gate passes: GPUDirect RDMA then runs "
            "over the kernel DMA-BUF path (driver 580, kernel 6.8, mlx5, a DMA-BUF-capable NCCL). "
            "Only when neither path exists does NCCL fall back to host-memory staging and the "
            "bandwidth gate regress; then use an image with a working module or a DMA-BUF-capable NCCL."
        ),
        services=("aks",),
        keywords=("rdma", "gpudirect", "dma-buf", "dkms", "modprobe", "nccl", "stub"),
    ),
    GuideEntry(
        id="dynamo-timeout-slow-storage",
        title="DynamoGraphDeployment not ready: TIMEOUT",
        symptom=(
            "The inference-perf check fails with DynamoGraphDeployment not ready: TIMEOUT while the "
            "decode workers are still healthily loading the model."
        ),
        cause=(
            "A cold model-cache load: several workers read the checkpoint shards at once from one "
            "RWO PVC on the cluster-default Azure disk StorageClass, which can take longer than the "
            "check's default 10-minute workload-ready window. It is not a performance failure."
        ),
        remedy=(
            "Either give the check more time through a --data catalog entry that sets "
            "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT and AICR_INFERENCE_PERF_HEALTH_TIMEOUT and "
            "raises the entry timeout with them, or point AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS "
            "at a faster class such as premium SSD v2."
        ),
        services=("aks",),
        keywords=("inference-perf", "storage class", "pvc", "model cache", "timeout", "dynamo"),
    ),
    GuideEntry(
        id="small-sku-full-node-floors",
        title="Small H100 SKUs fail the full-node performance floors",
        symptom=(
            "On Standard_NC80adis_H100_v5 (2 GPUs) or Standard_NC40ads_H100_v5 (1 GPU) deployment "
            "passes but nccl-all-reduce-bw >= 150 and inference-throughput >= 50000 fail."
        ),
        cause=(
            "Both floors are fixed full-node values calibrated on 8-GPU Standard_ND96isr_H100_v5 "
            "nodes with a multi-HCA InfiniBand fabric; smaller SKUs lack the GPU count and the fabric."
        ),
        remedy=(
            "Treat those two failures as expected on small SKUs and gate on inference-ttft-p99 only "
            "there; use ND96isr H100 v5 nodes for the supported full-node path."
        ),
        services=("aks",),
        keywords=("ncads", "nc80adis", "nc40ads", "nccl", "throughput", "ttft", "floor", "sku"),
    ),
    GuideEntry(
        id="aks-pools-none-under-azure-managed",
        title="Pools read None under azure-managed",
        symptom=(
            'profile gpuStack=azure-managed constraint "K8s.aks-gpu-pools.gpu-driver" failed: '
            "expected Install, observed None."
        ),
        cause=(
            "The GPU pools were created with --gpu-driver none, so nothing on the node installs a "
            "driver, while the default profile expects AKS to have installed it."
        ),
        remedy=(
            "Select gpuStack=operator-managed and resolve again against the same snapshot; no pool "
            "change and no recapture is needed."
        ),
        commands=(
            "aicr-tui recipe --service aks --accelerator h100 --os ubuntu --intent training "
            "--snapshot snapshot.yaml --profile gpuStack=operator-managed -o recipe.yaml",
        ),
        services=("aks",),
        keywords=("qualification", "gpu-driver", "None", "operator-managed"),
    ),
    GuideEntry(
        id="aks-pools-install-under-operator-managed",
        title="Pools read Install under operator-managed",
        symptom=(
            'profile gpuStack=operator-managed constraint "K8s.aks-gpu-pools.gpu-driver" failed: '
            "expected None, observed Install."
        ),
        cause=(
            "AKS installs a driver on these pools, and operator-managed would have the GPU Operator "
            "install a second one."
        ),
        remedy=(
            "Select the default azure-managed value against the same snapshot, or recreate the GPU "
            "pools with --gpu-driver none, dump them again and recapture."
        ),
        commands=(AKS_POOLS_DUMP, AKS_RECAPTURE),
        services=("aks",),
        keywords=("qualification", "gpu-driver", "Install", "azure-managed"),
    ),
    GuideEntry(
        id="aks-pools-mixed",
        title="Pools read Mixed",
        symptom='constraint "K8s.aks-gpu-pools.gpu-driver" failed: observed Mixed, under either value.',
        cause=(
            "The GPU pools disagree: some get the AKS driver and some were created with "
            "--gpu-driver none (or are AKS-managed). One recipe cannot serve both modes; whichever "
            "it picks, some nodes end up with the FailedCreatePodSandBox runtime failure."
        ),
        remedy=(
            "Make every GPU pool use the same mode (recreate the odd ones), dump the pools again and "
            "recapture the snapshot. No profile value qualifies a mixed cluster."
        ),
        commands=(AKS_POOLS_DUMP, AKS_RECAPTURE),
        services=("aks",),
        keywords=("qualification", "gpu-driver", "mixed", "pools disagree"),
    ),
    GuideEntry(
        id="aks-pools-managed",
        title="AKS-managed GPU pools",
        symptom='constraint "K8s.aks-gpu-pools.gpu-driver" failed: observed Managed, under either value.',
        cause=(
            "The pools use the AKS-managed GPU profile (--enable-managed-gpu=true, "
            "gpuProfile.nvidia.managementMode Managed): AKS installs its own device plugin, DCGM "
            "exporter and health tooling, which duplicate and fight the operands AICR deploys."
        ),
        remedy=(
            "Use unmanaged GPU pools: create them without --enable-managed-gpu (driver only, the "
            "default) or with --gpu-driver none, then dump the pools again and recapture."
        ),
        commands=(AKS_POOLS_DUMP, AKS_RECAPTURE),
        services=("aks",),
        keywords=("qualification", "managed", "enable-managed-gpu", "managementMode"),
    ),
    GuideEntry(
        id="aks-pools-reading-missing",
        title="No AKS pool reading in the snapshot",
        symptom=(
            'profile gpuStack=<value> cannot be validated because reading "K8s.aks-gpu-pools.gpu-driver" '
            "is unavailable."
        ),
        cause=(
            "The ownership mode lives in the Azure control plane, not in any Kubernetes object, so a "
            "snapshot only carries it when it was captured with the pool dump (or the dump had no "
            "NVIDIA GPU pool). Qualification never skips the check."
        ),
        remedy=(
            "Dump the node pools and recapture the snapshot with --aks-gpu-pools; or, to get an "
            "unverified recipe on purpose, resolve without a snapshot and let validate check it later."
        ),
        commands=(AKS_POOLS_DUMP, AKS_RECAPTURE),
        services=("aks",),
        keywords=("qualification", "unavailable", "missing reading", "recapture", "aks-gpu-pools"),
    ),
    GuideEntry(
        id="oke-addon-installed-under-operator-managed",
        title="NvidiaGpuPlugin add-on installed under operator-managed",
        symptom=(
            'profile gpuStack=operator-managed constraint "K8s.oke-addons.nvidia-gpu-plugin" failed: '
            "expected absent, observed installed."
        ),
        cause=(
            "OKE's device plugin add-on still advertises nvidia.com/gpu, and the GPU Operator's own "
            "plugin would advertise the same GPUs a second time."
        ),
        remedy=(
            "Remove the NvidiaGpuPlugin cluster add-on (Terraform addons = { NvidiaGpuPlugin = "
            "{ remove = true } } or the add-on lifecycle API) and recapture; labelling the nodes "
            "with oci.oraclecloud.com/disable-gpu-device-plugin does not qualify, because the "
            "add-on stays installed. Or select the default oci-managed value."
        ),
        commands=(OKE_ADDONS_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=("qualification", "add-on", "NvidiaGpuPlugin", "installed", "remove"),
    ),
    GuideEntry(
        id="oke-addon-absent-under-oci-managed",
        title="NvidiaGpuPlugin add-on absent under oci-managed",
        symptom=(
            'profile gpuStack=oci-managed constraint "K8s.oke-addons.nvidia-gpu-plugin" failed: '
            "expected installed, observed absent."
        ),
        cause=(
            "The default value relies on OKE's add-on to advertise nvidia.com/gpu, and the cluster "
            "does not have it; the GPU Operator's plugin is off under this value."
        ),
        remedy=(
            "Install the NvidiaGpuPlugin add-on and recapture, or, for a bring-your-own driverless "
            "image, select gpuStack=operator-managed against the same snapshot."
        ),
        commands=(OKE_ADDONS_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=("qualification", "add-on", "absent", "oci-managed"),
    ),
    GuideEntry(
        id="oke-addon-transitional",
        title="NvidiaGpuPlugin add-on in a transitional or failed state",
        symptom=(
            'constraint "K8s.oke-addons.nvidia-gpu-plugin" failed: observed addon-<state> '
            "(for example addon-deleting), under either value."
        ),
        cause=(
            "Only an ACTIVE add-on (installed) or no add-on (absent) says who advertises the GPUs; "
            "while it is being created, updated or deleted, or has failed, neither value can be trusted."
        ),
        remedy=(
            "Let the add-on lifecycle finish (or repair a failed add-on), then list the add-ons "
            "again and recapture."
        ),
        commands=(OKE_ADDONS_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=(
            "qualification",
            "deleting",
            "updating",
            "failed",
            "needs_attention",
            "lifecycle",
        ),
    ),
    GuideEntry(
        id="oke-addons-reading-missing",
        title="No OKE add-on reading in the snapshot",
        symptom=(
            'profile gpuStack=<value> cannot be validated because reading "K8s.oke-addons.nvidia-gpu-plugin" '
            "is unavailable."
        ),
        cause=(
            "The snapshot was captured without the add-on dump. Basic (non-enhanced) OKE clusters "
            "have no add-on management at all, so they cannot produce one."
        ),
        remedy=(
            "List the cluster add-ons and recapture with --oke-addons; upgrade a basic cluster to "
            "enhanced in place first."
        ),
        commands=(OKE_ADDONS_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=("qualification", "unavailable", "missing reading", "recapture", "enhanced"),
    ),
    GuideEntry(
        id="oke-legacy-plugin-active",
        title="Legacy nvidia-gpu-device-plugin DaemonSet is active",
        symptom=(
            'profile gpuStack=operator-managed constraint "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin" '
            "failed: expected none, observed active."
        ),
        cause=(
            "Older OKE clusters run Oracle's device plugin as a kube-system DaemonSet reconciled by the "
            "addon-manager. It is invisible to list-addons, so the add-on reads absent while the plugin "
            "still advertises nvidia.com/gpu; the operator's plugin would double-advertise."
        ),
        remedy=(
            "Label every GPU node pool with oci.oraclecloud.com/disable-gpu-device-plugin=true (for the "
            "legacy DaemonSet this label is the supported switch) or migrate the cluster to the managed "
            "add-on, then recapture."
        ),
        commands=(OKE_LEGACY_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=("legacy", "daemonset", "addonmanager", "Reconcile", "double advertise"),
    ),
    GuideEntry(
        id="oke-legacy-plugin-unknown",
        title="Legacy device-plugin reading is unknown or missing",
        symptom=(
            'constraint "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin" failed or is unavailable '
            "under operator-managed: observed unknown, or no reading."
        ),
        cause=(
            "The snapshot could not consult the Kubernetes API for the DaemonSet (RBAC, timeout), or "
            "it came from a tool that did not look. Could-not-look never counts as none."
        ),
        remedy=(
            "Recapture with read access to daemonsets in kube-system (or pass the kubectl dump of "
            "the DaemonSet) so the reading is none or active."
        ),
        commands=(OKE_LEGACY_DUMP, OKE_RECAPTURE),
        services=("oke",),
        keywords=("legacy", "unknown", "rbac", "recapture"),
    ),
    GuideEntry(
        id="oke-oracle-operator-addons",
        title="Oracle's GPU or Network Operator add-on is enabled",
        symptom="The add-on dump lists NvidiaGpuOperator or NvidiaNetworkOperator.",
        cause=(
            "The bundle deploys both operators itself; Oracle's managed add-ons would be a second "
            "lifecycle manager fighting over the same releases."
        ),
        remedy=(
            "Disable the NvidiaGpuOperator and NvidiaNetworkOperator add-ons; only NvidiaGpuPlugin is "
            "compatible with AICR bundles, and only under oci-managed."
        ),
        commands=(OKE_ADDONS_DUMP,),
        services=("oke",),
        keywords=("NvidiaGpuOperator", "NvidiaNetworkOperator", "add-on", "conflict"),
    ),
    GuideEntry(
        id="kubernetes-below-1-34",
        title="Kubernetes older than 1.34",
        symptom='The overlay constraint "K8s.server.version >= 1.34" fails or the recipe excludes the leaf.',
        cause=(
            "Every AICR recipe includes DRA (resource.k8s.io/v1), which is GA and always on only from "
            "Kubernetes 1.34."
        ),
        remedy=(
            "Upgrade the cluster to 1.34 one minor version at a time (1.32 to 1.33 to 1.34), then "
            "recapture the snapshot."
        ),
        commands=(
            "az aks upgrade --resource-group <rg> --name <cluster> --kubernetes-version 1.34",
        ),
        keywords=("dra", "version", "upgrade", "resource.k8s.io"),
    ),
)

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
