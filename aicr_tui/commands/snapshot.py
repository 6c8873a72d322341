"""``aicr-tui snapshot``: capture the cluster and the provider readings into a Snapshot.

Steps, each its own function so live cloud capture can slot in beside the file dumps:
1. resolve the dump paths (flags, then the AICR_* environment fallbacks);
2. project every dump on this machine, before any cluster work: a bad dump fails the
   command with exit 2 and nothing written;
3. capture the cluster (unless ``--no-cluster``) or start from an empty snapshot;
4. attach the projections to the first K8s measurement;
5. write the document to ``-o`` atomically, or to stdout.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aicr_tui.commands._common import emit, warn
from aicr_tui.core.foundation.textsafe import safe_text

if TYPE_CHECKING:
    from aicr_tui.core.capture.capture import CaptureResult, Projections
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.live import LiveCaptureResult

ENV_AKS_GPU_POOLS = "AICR_AKS_GPU_POOLS_PATH"
ENV_OKE_ADDONS = "AICR_OKE_ADDONS_PATH"
# Read by aicr_tui.core.live.capture_live; named here for the help text.
ENV_OCI_CONFIG = "OCI_CLI_CONFIG_FILE"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "snapshot",
        help="capture cluster and provider readings into a Snapshot",
        description=(
            "Capture a Snapshot. Provider dumps are projected on this machine before any "
            "cluster work; a bad dump fails with exit 2 and nothing is written."
        ),
    )
    dumps = parser.add_argument_group("provider dumps (projected locally)")
    dumps.add_argument(
        "--aks-gpu-pools",
        metavar="FILE",
        help=f"output of `az aks nodepool list -o json` (env {ENV_AKS_GPU_POOLS})",
    )
    dumps.add_argument(
        "--oke-addons",
        metavar="FILE",
        help=(
            "output of `oci ce cluster list-addons --cluster-id <ocid> --all --output json` "
            f"(env {ENV_OKE_ADDONS})"
        ),
    )
    dumps.add_argument(
        "--oke-legacy-daemonset",
        metavar="FILE",
        help=(
            "output of `kubectl get daemonsets -n kube-system -o json` (or of `kubectl get "
            "daemonset -n kube-system nvidia-gpu-device-plugin -o json`)"
        ),
    )
    aks = parser.add_argument_group(
        "live AKS agent pools (azure-mgmt-containerservice, DefaultAzureCredential)"
    )
    aks.add_argument("--aks-subscription", metavar="ID", help="Azure subscription ID (GUID)")
    aks.add_argument(
        "--aks-resource-group", metavar="RESOURCE_GROUP", help="resource group of the cluster"
    )
    aks.add_argument("--aks-cluster", metavar="NAME", help="AKS cluster name")
    aks.add_argument(
        "--aks-save-pools",
        metavar="FILE",
        help="also write the pools as `az aks nodepool list -o json` prints them",
    )
    oke = parser.add_argument_group("live OKE cluster add-ons (oci SDK)")
    oke.add_argument("--oke-cluster-id", metavar="OCID", help="OKE cluster OCID")
    oke.add_argument(
        "--oci-profile",
        metavar="PROFILE",
        help=f"profile in the OCI config file (${ENV_OCI_CONFIG} or ~/.oci/config)",
    )
    oke.add_argument(
        "--oci-auth",
        choices=("config", "instance_principal", "resource_principal"),
        help="how to authenticate (default: config)",
    )
    oke.add_argument(
        "--oke-save-addons",
        metavar="FILE",
        help="also write the add-ons as `oci ce cluster list-addons --all --output json` prints them",
    )
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "-k", "--kubeconfig", metavar="KUBECONFIG", help="kubeconfig file for live capture"
    )
    cluster.add_argument("--context", metavar="CONTEXT", help="kubeconfig context for live capture")
    cluster.add_argument(
        "--no-cluster",
        action="store_true",
        help="do not contact a cluster; the snapshot holds the provider readings only",
    )
    cluster.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="total time each live source may take, pages and credential plugins included "
        "(default 120; env AICR_DEADLINE)",
    )
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    out.add_argument(
        "-t", "--format", choices=("yaml", "json"), default="yaml", help="document format"
    )


@dataclass(frozen=True)
class DumpPaths:
    aks_pools: str | None
    oke_addons: str | None
    legacy_daemonset: str | None

    def any(self) -> bool:
        return bool(self.aks_pools or self.oke_addons or self.legacy_daemonset)


def resolve_dump_paths(args: argparse.Namespace) -> DumpPaths:
    """Flags win; the AICR_* variables fill in when a flag is unset (an empty value is unset)."""
    return DumpPaths(
        aks_pools=args.aks_gpu_pools or os.environ.get(ENV_AKS_GPU_POOLS) or None,
        oke_addons=args.oke_addons or os.environ.get(ENV_OKE_ADDONS) or None,
        legacy_daemonset=args.oke_legacy_daemonset or None,
    )


def project_local_dumps(paths: DumpPaths) -> Projections:
    from aicr_tui.core.capture.capture import project_dumps

    return project_dumps(
        aks_pools=paths.aks_pools,
        oke_addons=paths.oke_addons,
        legacy_daemonset=paths.legacy_daemonset,
    )


def capture_base(args: argparse.Namespace, paths: DumpPaths) -> Snapshot:
    """The empty snapshot a ``--no-cluster`` capture of dump files starts from."""
    from aicr_tui.core.documents.snapshot import new_snapshot
    from aicr_tui.core.foundation.errors import invalid

    if not paths.any() and not live_requested(args):
        raise invalid(
            "nothing to capture: --no-cluster needs at least one of --aks-gpu-pools, "
            "--oke-addons, --oke-legacy-daemonset, --aks-cluster or --oke-cluster-id"
        )
    return new_snapshot()


def merge(base: Snapshot, projections: Projections) -> CaptureResult:
    from aicr_tui.core.capture.capture import attach_projections

    return attach_projections(base, projections)


def write_output(result: CaptureResult | LiveCaptureResult, args: argparse.Namespace) -> None:
    from aicr_tui.core.documents.snapshot import render_snapshot

    emit(render_snapshot(result.snapshot, args.format), args.output)


def live_requested(args: argparse.Namespace) -> bool:
    return bool(
        getattr(args, "aks_subscription", None)
        or getattr(args, "aks_resource_group", None)
        or getattr(args, "aks_cluster", None)
        or getattr(args, "oke_cluster_id", None)
    )


@dataclass(frozen=True)
class LiveProviders:
    """The live provider captures the flags ask for (checked before any work)."""

    aks: tuple[str, str, str] | None
    aks_save: str | None
    oke_cluster_id: str | None
    oci_auth: str
    oci_profile: str | None
    oke_save: str | None


def resolve_live_providers(
    args: argparse.Namespace, paths: DumpPaths
) -> tuple[LiveProviders, DumpPaths]:
    """Check the live flags; a live source replaces an AICR_* file fallback, never a flag."""
    from dataclasses import replace

    from aicr_tui.core.foundation.errors import invalid

    trio = {
        "--aks-subscription": args.aks_subscription,
        "--aks-resource-group": args.aks_resource_group,
        "--aks-cluster": args.aks_cluster,
    }
    aks: tuple[str, str, str] | None = None
    if any(trio.values()):
        missing = [flag for flag, value in trio.items() if not value]
        if missing:
            raise invalid(
                f"live AKS capture needs {', '.join(trio)} together; missing {', '.join(missing)}"
            )
        if args.aks_gpu_pools:
            raise invalid(
                "--aks-gpu-pools and --aks-cluster both supply the AKS pools reading; pass one"
            )
        aks = (args.aks_subscription, args.aks_resource_group, args.aks_cluster)
        paths = replace(paths, aks_pools=None)
    elif args.aks_save_pools:
        raise invalid(
            "--aks-save-pools needs a live AKS capture (--aks-subscription, "
            "--aks-resource-group, --aks-cluster)"
        )
    if args.oke_cluster_id:
        if args.oke_addons:
            raise invalid(
                "--oke-addons and --oke-cluster-id both supply the OKE add-ons reading; pass one"
            )
        paths = replace(paths, oke_addons=None)
    else:
        for flag, value in (
            ("--oke-save-addons", args.oke_save_addons),
            ("--oci-profile", args.oci_profile),
            ("--oci-auth", args.oci_auth),
        ):
            if value:
                raise invalid(f"{flag} needs a live OKE capture (--oke-cluster-id)")
    auth = args.oci_auth or "config"
    if args.oci_profile and auth != "config":
        raise invalid(f"--oci-profile applies to --oci-auth config, not {auth}")
    live = LiveProviders(
        aks=aks,
        aks_save=args.aks_save_pools,
        oke_cluster_id=args.oke_cluster_id,
        oci_auth=auth,
        oci_profile=args.oci_profile,
        oke_save=args.oke_save_addons,
    )
    return live, paths


def capture_live_sources(
    args: argparse.Namespace, live: LiveProviders, projections: Projections
) -> tuple[CaptureResult | LiveCaptureResult, list[tuple[str, bytes]]]:
    """Capture the live providers and the cluster through aicr_tui.core.live.capture_live.

    Any failure fails the command before anything is written. Returns the capture and
    the dumps to save once the snapshot is ready.
    """
    from aicr_tui.core.live import capture_live

    aks = live.aks or (None, None, None)
    captured = capture_live(
        kubeconfig=args.kubeconfig,
        context=args.context,
        cluster=not args.no_cluster,
        aks_subscription=aks[0],
        aks_resource_group=aks[1],
        aks_cluster=aks[2],
        oke_cluster_id=live.oke_cluster_id,
        oci_auth=live.oci_auth,
        oci_profile=live.oci_profile,
        offline=projections,
        deadline=_deadline(args.deadline),
    )
    saves: list[tuple[str, bytes]] = []
    if live.aks_save and captured.aks is not None:
        saves.append((live.aks_save, captured.aks.raw))
    if live.oke_save and captured.oke is not None:
        saves.append((live.oke_save, captured.oke.raw))
    return captured, saves


def run(args: argparse.Namespace) -> int:
    paths = resolve_dump_paths(args)
    live, paths = resolve_live_providers(args, paths)
    projections = project_local_dumps(paths)
    result: CaptureResult | LiveCaptureResult
    saves: list[tuple[str, bytes]] = []
    if args.no_cluster and not live_requested(args):
        result = merge(capture_base(args, paths), projections)
    else:
        result, saves = capture_live_sources(args, live, projections)
    for message in result.warnings:
        warn(message)
    if not saves:
        write_output(result, args)
        return 0
    # The snapshot and the saved provider dumps land together or not at all.
    from aicr_tui.core.documents.snapshot import render_snapshot
    from aicr_tui.core.foundation.fileio import OutputSet

    text = render_snapshot(result.snapshot, args.format)
    to_file = bool(args.output) and args.output != "-"
    with OutputSet() as out:
        for path, raw in saves:
            out.add(path, raw, what="saved provider dump")
        if to_file:
            out.add(args.output, text.encode("utf-8"), what="snapshot")
        out.commit()
    if not to_file:
        emit(text, None)
    return 0


def _deadline(value: float | None) -> float | None:
    """--deadline, else AICR_DEADLINE (an empty value is unset), else None (the default)."""
    from aicr_tui.core.foundation.errors import invalid

    where = "--deadline"
    if value is None and os.environ.get("AICR_DEADLINE"):
        where, env = "AICR_DEADLINE", os.environ["AICR_DEADLINE"]
        try:
            value = float(env)
        except ValueError:
            raise invalid(
                f"AICR_DEADLINE {safe_text(env[:40])!r} is not a number of seconds"
            ) from None
    if value is not None and not 0 < value <= 3600:
        raise invalid(f"{where} {value:g} is out of range: expected 0 < SECONDS <= 3600")
    return value
