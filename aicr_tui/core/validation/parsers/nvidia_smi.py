"""Parse ``nvidia-smi`` output: the default table and ``--query-gpu ... --format=csv``.

Default table (NVIDIA driver R5xx): a banner line
``| NVIDIA-SMI 580.126.09   Driver Version: 580.126.09   CUDA Version: 13.0 |`` (newer
drivers print ``KMD Version`` / ``CUDA UMD Version``), then three lines per GPU whose first
holds index, name, persistence mode and Bus-Id, and whose second holds
``<used>MiB / <total>MiB``. ``No devices were found`` means no GPU is visible.
CSV: a header line of the queried fields (units in brackets), then one line per GPU.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

_BANNER = re.compile(r"NVIDIA-SMI\s+([0-9][0-9.]*)")
_DRIVER = re.compile(r"(?:Driver|KMD) Version:\s*([0-9][0-9.]*)")
_CUDA = re.compile(r"CUDA (?:UMD )?Version:\s*([0-9][0-9.]*|N/A)")
_GPU_ROW = re.compile(
    r"^\|\s+(\d+)\s+(.+?)\s+(On|Off)\s+\|\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s"
)
_MEM = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")


@dataclass(frozen=True)
class SmiGpu:
    index: int
    name: str
    bus_id: str
    memory_total_mib: int | None = None


@dataclass(frozen=True)
class SmiReport:
    smi_version: str | None
    driver_version: str | None
    cuda_version: str | None
    gpus: tuple[SmiGpu, ...]
    no_devices: bool

    @property
    def banner_ok(self) -> bool:
        return bool(self.smi_version and self.driver_version and self.cuda_version)


def parse_table(text: str) -> SmiReport:
    smi = driver = cuda = None
    gpus: list[SmiGpu] = []
    pending: SmiGpu | None = None
    for line in text.splitlines():
        if smi is None and (m := _BANNER.search(line)):
            smi = m.group(1)
        if driver is None and (m := _DRIVER.search(line)):
            driver = m.group(1)
        if cuda is None and (m := _CUDA.search(line)):
            cuda = m.group(1)
        if m := _GPU_ROW.match(line):
            if pending is not None:
                gpus.append(pending)
            pending = SmiGpu(int(m.group(1)), m.group(2).strip(), m.group(4))
            continue
        if pending is not None and pending.memory_total_mib is None and (mm := _MEM.search(line)):
            pending = SmiGpu(pending.index, pending.name, pending.bus_id, int(mm.group(2)))
            gpus.append(pending)
            pending = None
    if pending is not None:
        gpus.append(pending)
    no_devices = "no devices were found" in text.lower()
    return SmiReport(smi, driver, cuda, tuple(gpus), no_devices)


def parse_query_csv(text: str) -> list[dict[str, str]]:
    """Rows of ``--query-gpu=... --format=csv`` keyed by field name (units dropped)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in next(reader)]
    rows: list[dict[str, str]] = []
    for rec in reader:
        if len(rec) != len(header):
            continue
        rows.append({k: v.strip() for k, v in zip(header, rec, strict=True)})
    return rows
