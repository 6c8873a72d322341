"""Parse nccl-tests ``all_reduce_perf`` output.

Format (nccl-tests ``src/common.cu``): ``#``-prefixed header and device lines, then one
data row per message size::

    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     17179869184    4294967296     float     sum      -1   ...

The first time/algbw/busbw/#wrong group is out-of-place, the second in-place; ``#wrong``
is a count or ``N/A``. Under ``mpirun --tag-output`` every line carries a ``[1,0]<stdout>:``
prefix. The run ends with ``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth``.

With ``NCCL_DEBUG=INFO`` NCCL also says which transport it built (the markers upstream's
``-net`` / ``-nvls`` checks assert, NCCL 2.27 and later): ``NCCL INFO Using network <plugin>``
(the NET plugin chosen; ``Socket`` is the TCP fallback), ``NVLS multicast support is
available`` (the hardware can) and ``NVLS comm 0x<addr>`` (an NVLS communicator was built,
so NVLS carried the collective).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)\s+(\w+)")
_NETWORK = re.compile(r"NCCL INFO Using network (\S+)")
_NVLS_AVAILABLE = re.compile(r"NVLS multicast support is available")
_NVLS_COMM = re.compile(r"NVLS comm 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class NcclRow:
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    time_us: float
    algbw: float
    busbw: float
    wrong: str
    inplace_busbw: float | None = None


@dataclass(frozen=True)
class NcclResult:
    rows: tuple[NcclRow, ...]
    avg_busbw: float | None
    out_of_bounds: int | None
    network: str | None
    nvls_available: bool = False
    nvls_comm: bool = False

    @property
    def largest(self) -> NcclRow | None:
        """The row of the largest message size (the one the gate reads)."""
        if not self.rows:
            return None
        return max(self.rows, key=lambda r: r.size_bytes)


def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _int(token: str) -> int | None:
    """A plain decimal integer, optionally negative, or None: ``int()`` raises on "²" (a
    digit to ``isdigit()``), on "--1" and on thousands of digits."""
    digits = token[1:] if token.startswith("-") else token
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 30:
        return None
    return int(token)


def parse_row(line: str) -> NcclRow | None:
    parts = line.split()
    if len(parts) < 9 or parts[0].startswith("-") or parts[1].startswith("-"):
        return None
    size, count, root = _int(parts[0]), _int(parts[1]), _int(parts[4])
    if size is None or count is None or root is None:
        return None
    time_us, algbw, busbw = _float(parts[5]), _float(parts[6]), _float(parts[7])
    if time_us is None or algbw is None or busbw is None:
        return None
    inplace = _float(parts[11]) if len(parts) >= 13 else None
    return NcclRow(size, count, parts[2], parts[3], root, time_us, algbw, busbw, parts[8], inplace)


def parse_all_reduce(text: str) -> NcclResult:
    rows: list[NcclRow] = []
    avg: float | None = None
    oob: int | None = None
    network: str | None = None
    nvls_available = nvls_comm = False
    for raw in text.splitlines():
        line = _TAG.sub("", raw).strip()
        if not line:
            continue
        if " NCCL INFO " in f" {line}":
            nvls_available = nvls_available or bool(_NVLS_AVAILABLE.search(line))
            nvls_comm = nvls_comm or bool(_NVLS_COMM.search(line))
        if line.startswith("#"):
            m = _AVG.search(line)
            if m and _float(m.group(1)) is not None:  # "1.2.3" matches [0-9.]+ too
                avg = _float(m.group(1))
            m = _OOB.search(line)
            if m and _int(m.group(1)) is not None:
                oob = _int(m.group(1))
            continue
        m = _NETWORK.search(line)
        if m and network is None:
            network = m.group(1)
            continue
        row = parse_row(line)
        if row is not None:
            rows.append(row)
    return NcclResult(tuple(rows), avg, oob, network, nvls_available, nvls_comm)


def transport_problem(result: NcclResult, variant: str) -> str | None:
    """Why the log does not prove the variant's transport carried the all-reduce (None when
    it does). ``net``: a NET plugin other than the Socket fallback was chosen; ``nvls``: the
    NVLS availability banner and an NVLS communicator. The plain check asserts nothing."""
    if variant == "net":
        if result.network is None:
            return (
                "NET variant selected but the log has no 'NCCL INFO Using network <plugin>' "
                "line: the network transport did not initialise (or NCCL_DEBUG=INFO is unset)"
            )
        if result.network == "Socket":
            return (
                "NET variant selected but NCCL fell back to 'Using network Socket': the "
                "RDMA/EFA transport did not load"
            )
    elif variant == "nvls":
        if not result.nvls_available:
            return (
                "NVLS variant selected but the log has no 'NVLS multicast support is available' "
                "line: multi-node NVLink did not initialise (IMEX channel claim, NCCL_NVLS_ENABLE=1)"
            )
        if not result.nvls_comm:
            return (
                "NVLS variant selected but the log has no 'NVLS comm 0x<addr>' line: NVLS was "
                "available but NCCL built no NVLS communicator"
            )
    return None


def parse_size(text: str) -> int:
    """``1K``/``16G`` (nccl-tests -b/-e syntax, powers of 1024) into bytes."""
    s = text.strip().upper()
    mult = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def format_size(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"
