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

if TYPE_CHECKING:
    from core.capture import CaptureResult, Projections
    from core.snapshot import Snapshot

ENV_AKS_GPU_POOLS = "AICR_AKS_GPU_POOLS_PATH"
ENV_OKE_ADDONS = "AICR_OKE_ADDONS_PATH"


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
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument("-k", "--kubeconfig", metavar="K", help="kubeconfig file for live capture")
    cluster.add_argument("--context", metavar="C", help="kubeconfig context for live capture")
    cluster.add_argument(
        "--no-cluster",
        action="store_true",
        help="do not contact a cluster; the snapshot holds the provider readings only",
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
    from core.capture import project_dumps

    return project_dumps(
        aks_pools=paths.aks_pools,
        oke_addons=paths.oke_addons,
        legacy_daemonset=paths.legacy_daemonset,
    )


def capture_base(args: argparse.Namespace, paths: DumpPaths) -> Snapshot:
    """The live cluster snapshot, or an empty one under ``--no-cluster``."""
    from core.errors import invalid
    from core.snapshot import new_snapshot

    if args.no_cluster:
        if not paths.any():
            raise invalid(
                "nothing to capture: --no-cluster needs at least one of --aks-gpu-pools, "
                "--oke-addons or --oke-legacy-daemonset"
            )
        return new_snapshot()
    try:
        from core.live.kube import capture_cluster
    except ImportError as exc:
        raise invalid(
            "live cluster capture is not available in this build; pass --no-cluster to "
            "capture the provider dumps only",
            str(exc),
        ) from exc
    snapshot: Snapshot = capture_cluster(args.kubeconfig, args.context)
    return snapshot


def merge(base: Snapshot, projections: Projections) -> CaptureResult:
    from core.capture import attach_projections

    return attach_projections(base, projections)


def write_output(result: CaptureResult, args: argparse.Namespace) -> None:
    from core.snapshot import render_snapshot

    emit(render_snapshot(result.snapshot, args.format), args.output)


def run(args: argparse.Namespace) -> int:
    paths = resolve_dump_paths(args)
    projections = project_local_dumps(paths)
    base = capture_base(args, paths)
    result = merge(base, projections)
    for message in result.warnings:
        warn(message)
    write_output(result, args)
    return 0
