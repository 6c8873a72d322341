"""Live collectors: Azure agent pools, OCI cluster add-ons and the Kubernetes API.

Each collector reads through the official SDK of its service and hands the result to the
same projection the offline path uses, so a live capture and a capture from a saved dump
give identical readings. The SDKs are imported inside the functions that call them, so
importing this package costs nothing until a live capture is requested.

Every capture function takes a ``cancel`` token (a ``threading.Event``; set it to stop
between calls) and a ``progress`` callback that receives :class:`CaptureProgress` values,
so the wizard can run a capture in a worker thread, show where it is, and cancel it.
Each network call carries its own timeout; a failure is an ``AicrError`` that names the
credential or permission that was missing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from aicr_tui.core.capture.capture import Projections, attach_projections
from aicr_tui.core.documents.snapshot import new_snapshot
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.live.azure import LiveAksPools, capture_aks_pools
from aicr_tui.core.live.kube import ClusterCapture, collect_cluster
from aicr_tui.core.live.oci import LiveOkeAddons, capture_oke_addons
from aicr_tui.core.live.progress import (
    CaptureProgress,
    ProgressCallback,
    check_cancel,
    positive_timeout,
    report,
)

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot

# Endpoint overrides (private endpoints, proxies, tests) and the OCI config location the
# OCI CLI also honours; read by capture_live so the CLI and the wizard behave the same.
ENV_ARM_ENDPOINT = "AICR_AZURE_ARM_ENDPOINT"
ENV_OCI_ENDPOINT = "AICR_OCI_SERVICE_ENDPOINT"
ENV_OCI_CONFIG = "OCI_CLI_CONFIG_FILE"


@dataclass(frozen=True)
class LiveCaptureResult:
    """A live capture: the snapshot, the projections shown beside it, and the raw dumps.

    Shaped like ``aicr_tui.core.capture.capture.CaptureResult`` (``snapshot``, ``projections``,
    ``warnings``) so screens treat a live and an offline capture alike.
    """

    snapshot: Snapshot
    projections: Projections
    warnings: list[str] = field(default_factory=list)
    aks: LiveAksPools | None = None
    oke: LiveOkeAddons | None = None
    cluster: ClusterCapture | None = None


def kube_config_available(kubeconfig: str | None, context: str | None) -> bool:
    """Whether a cluster capture has any configuration to start from."""
    if kubeconfig or context or os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    env = os.environ.get("KUBECONFIG", "")
    paths = [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
    if any(os.path.isfile(p) for p in paths):
        return True
    return os.path.isfile(os.path.expanduser("~/.kube/config"))


def capture_live(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    cluster: bool | None = None,
    aks_subscription: str | None = None,
    aks_resource_group: str | None = None,
    aks_cluster: str | None = None,
    azure_credential: Any | None = None,
    arm_endpoint: str | None = None,
    oke_cluster_id: str | None = None,
    oci_auth: str = "config",
    oci_profile: str | None = None,
    oci_config_file: str | None = None,
    oci_service_endpoint: str | None = None,
    offline: Projections | None = None,
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
) -> LiveCaptureResult:
    """Capture the requested providers and the cluster live; the one call both faces use.

    Provider captures run first (a bad credential fails before any cluster work), then the
    cluster. ``cluster=True`` requires a cluster capture, ``False`` skips it, and ``None``
    captures it when a kubeconfig, context, ``$KUBECONFIG``, ``~/.kube/config`` or an
    in-cluster service account is available (skipping with a warning when only providers
    were asked for). ``offline`` projections from dump files are kept; a live reading
    replaces the file reading of the same provider. ``progress`` receives one line per step.
    Any failure raises ``AicrError``; nothing is returned half-captured.
    """
    check_cancel(cancel, "live capture")
    trio = {
        "--aks-subscription": aks_subscription,
        "--aks-resource-group": aks_resource_group,
        "--aks-cluster": aks_cluster,
    }
    want_aks = any(trio.values())
    if want_aks and not all(trio.values()):
        missing = ", ".join(flag for flag, value in trio.items() if not value)
        raise invalid(f"live AKS capture needs {', '.join(trio)} together; missing {missing}")
    want_oke = bool(oke_cluster_id)
    warnings: list[str] = []
    if cluster is None:
        cluster = kube_config_available(kubeconfig, context) or not (want_aks or want_oke)
        if not cluster:
            warnings.append(
                "no Kubernetes configuration found: the snapshot holds the provider readings only"
            )

    def step(update: CaptureProgress) -> None:
        if progress is not None:
            progress(f"{update.source}: {update.message}")

    timeouts: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if deadline is not None:
        # Each source gets the whole deadline: they run one after the other.
        timeouts["deadline"] = deadline
    aks = None
    if want_aks:
        aks = capture_aks_pools(
            str(aks_subscription),
            str(aks_resource_group),
            str(aks_cluster),
            credential=azure_credential,
            arm_endpoint=arm_endpoint or os.environ.get(ENV_ARM_ENDPOINT) or None,
            cancel=cancel,
            progress=step,
            **timeouts,
        )
    oke = None
    if want_oke:
        oke = capture_oke_addons(
            str(oke_cluster_id),
            auth=oci_auth or "config",
            profile=oci_profile,
            config_file=oci_config_file or os.environ.get(ENV_OCI_CONFIG) or None,
            service_endpoint=oci_service_endpoint or os.environ.get(ENV_OCI_ENDPOINT) or None,
            cancel=cancel,
            progress=step,
            **timeouts,
        )
    captured = None
    if cluster:
        captured = collect_cluster(kubeconfig, context, cancel=cancel, progress=step, **timeouts)
        warnings.extend(captured.warnings)
    check_cancel(cancel, "live capture")

    projections = offline if offline is not None else Projections()
    if aks is not None:
        projections = replace(projections, aks_pools=aks.projection)
    if oke is not None:
        projections = replace(projections, oke_addons=oke.projection)
    if captured is not None and projections.legacy_plugin is None:
        projections = replace(projections, legacy_plugin=captured.legacy_plugin)
    snapshot = captured.snapshot if captured is not None else new_snapshot()
    attached = attach_projections(snapshot, projections)
    return LiveCaptureResult(
        snapshot=attached.snapshot,
        projections=projections,
        warnings=[*warnings, *attached.warnings],
        aks=aks,
        oke=oke,
        cluster=captured,
    )


__all__ = [
    "CaptureProgress",
    "LiveCaptureResult",
    "ProgressCallback",
    "capture_live",
    "check_cancel",
    "kube_config_available",
    "positive_timeout",
    "report",
]
