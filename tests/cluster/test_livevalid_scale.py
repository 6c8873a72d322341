"""``aicr-tui validate`` on a cluster with many nodes reads them all, in pages, with memory
that does not grow with the node count (issue 32 item 5).

Validation listed nodes in one request: at 5,000 nodes (AKS's limit) the reply was
28.6 MiB, over the client's 8 MiB cap, and no check that reads nodes could measure. Here
``SCALE_NODES`` Node objects (1,000 in CI; ``AICR_SCALE_NODES=5000`` by hand, see
docs/validation-scale.md) of a realistic size (about 6 KiB each, as real AKS nodes) are
created in bulk, labelled as GPU nodes but cordoned, so ``check-nvidia-smi`` lists every
node and names each one "skipped (cordoned)" without starting a probe: the count of those
lines proves every page was read. The same run without them is the baseline; the peak
RSS of the child (its sampled ``VmHWM``) may grow by at most ``MAX_GROWTH_BYTES``.
The nodes carry no kwok annotation (nothing heartbeats them) and are removed with one
``deletecollection`` request.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import livevalid_support as S
from tests.cluster.conftest import Cluster

SCALE_NODES = int(os.environ.get("AICR_SCALE_NODES") or 1000)
SCALE_LABEL = "aicr-val/scale"
BATCH = 250
MIB = 1024 * 1024
# What a run may add to its peak RSS for SCALE_NODES more nodes: a page (250 nodes) of JSON
# and its decoded form, and the small per-node record the checks keep.
MAX_GROWTH_BYTES = 40 * MIB
SKIPS = [
    a
    for n in ("operator-health", "expected-resources", "gpu-operator-version")
    for a in ("--skip-check", n)
]


def _node(i: int) -> dict[str, object]:
    """A Node about as large as a real AKS GPU node (labels, annotations, ~6 KiB)."""
    name = f"{S.PREFIX}scale-{i:05}"
    labels = {
        SCALE_LABEL: "bulk",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        **{f"feature.node.kubernetes.io/cpu-cpuid.F{k:03}": "true" for k in range(60)},
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"aicr-val/padding": "x" * 2500},
        },
        "spec": {"unschedulable": True, "providerID": f"azure:///subscriptions/s/vm/{i}"},
    }


def _create_batch(cluster: Cluster, start: int, end: int) -> None:
    body = {"apiVersion": "v1", "kind": "List", "items": [_node(i) for i in range(start, end)]}
    cluster.kubectl("create", "-f", "-", input_text=json.dumps(body), timeout=600)


def _delete_bulk(cluster: Cluster) -> None:
    """One deletecollection request; at thousands of nodes the server may end it at its
    60 s request timeout part-way, so it is repeated until no bulk node is left."""
    for _ in range(20):
        proc = cluster.kubectl(
            "delete", "--raw", f"/api/v1/nodes?labelSelector={SCALE_LABEL}%3Dbulk",
            timeout=600, check=False,
        )  # fmt: skip
        if proc.returncode == 0 and not cluster.names("nodes", selector=f"{SCALE_LABEL}=bulk"):
            return
    raise AssertionError(f"bulk nodes still there: {proc.stderr[-500:]}")


@contextlib.contextmanager
def bulk_nodes(cluster: Cluster) -> Iterator[float]:
    """SCALE_NODES nodes, created by 4 parallel kubectl processes; yields the seconds taken."""
    _delete_bulk(cluster)
    started = time.monotonic()
    try:
        bounds = [(s, min(SCALE_NODES, s + BATCH)) for s in range(0, SCALE_NODES, BATCH)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            for done in [pool.submit(_create_batch, cluster, s, e) for s, e in bounds]:
                done.result()
        yield time.monotonic() - started
    finally:
        _delete_bulk(cluster)


def _sample_peak(pid: int, peak: list[int]) -> None:
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        hwm = next((ln for ln in text.splitlines() if ln.startswith("VmHWM:")), None)
        if hwm is None:
            return
        peak[0] = max(peak[0], int(hwm.split()[1]) * 1024)
        time.sleep(0.01)


def _measured_run(
    cluster: Cluster, work: Path, tag: str
) -> tuple[int, str, dict[str, Any], int, float]:
    out = work / f"scale-{tag}.json"
    args = [
        "-r", str(S.TRAINING_RECIPE), "-s", str(S.SNAPSHOT), "--phase", "deployment", *SKIPS,
        "-o", str(out), "--record", str(work / f"scale-{tag}.jsonl"),
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(
        S.cli_argv("validate", "--plain", *args),
        env=S.cli_env(cluster),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = [0]
    sampler = threading.Thread(target=_sample_peak, args=(proc.pid, peak), daemon=True)
    sampler.start()
    _, err = proc.communicate(timeout=900)
    took = time.monotonic() - started
    sampler.join(timeout=5)
    report = json.loads(out.read_text()) if out.is_file() else {}
    return proc.returncode, err, report, peak[0], took


def _skipped_scale_nodes(work: Path, tag: str) -> int:
    """The bulk nodes check-nvidia-smi named "skipped (cordoned)", from the run's recording
    (the CTRF report keeps only a check's last 1,000 lines)."""
    count = 0
    for raw in (work / f"scale-{tag}.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(raw) if raw.strip() else {}
        line = str(event.get("line") or "")
        if (
            event.get("type") == "LogLine"
            and f"{S.PREFIX}scale-" in line
            and "skipped (cordoned)" in line
        ):
            count += 1
    return count


def _smi(report: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in report["results"]["tests"] if t["name"] == "check-nvidia-smi")


def test_validate_reads_every_node_in_pages_with_flat_memory(
    cluster: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("scale")
    _, err0, report0, peak0, took0 = _measured_run(cluster, work, "baseline")
    assert report0, err0
    with bulk_nodes(cluster) as created_s:
        _, err, report, peak, took = _measured_run(cluster, work, str(SCALE_NODES))
    assert report, err[-3000:]
    smi = _smi(report)
    skipped = _skipped_scale_nodes(work, str(SCALE_NODES))
    print(
        f"\nscale: {SCALE_NODES} nodes created in {created_s:.1f}s; validate baseline "
        f"{took0:.1f}s {peak0 / MIB:.0f} MiB; with the nodes {took:.1f}s {peak / MIB:.0f} MiB"
    )
    assert skipped == SCALE_NODES, smi.get("stdout", [])[-5:]
    assert "larger than" not in err and "at most" not in smi["message"], smi["message"]
    assert peak - peak0 <= MAX_GROWTH_BYTES, (peak0 / MIB, peak / MIB)
