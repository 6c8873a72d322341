"""The engine child: ``helm_python`` runs here, under resource limits, never in the CLI.

Started by :mod:`aicr_tui.core.verify.engine` (one child for a whole run, replaced when it has to be
killed). It reads length-prefixed JSON requests on its stdin and answers on its stdout;
fds 0 and 1 are pointed at ``/dev/null`` before the engine loads, so nothing the engine
prints can corrupt the protocol. After the engine is loaded the child caps its own address
space (``RLIMIT_AS``) at what it holds then plus the memory limit, and before every request
its CPU time (``RLIMIT_CPU``) at what it has used plus the request's CPU budget: a runaway
render ends with SIGXCPU or an allocation failure even if the parent is gone.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from aicr_tui.core.foundation.limits import (
    MAX_NESTING_DEPTH,
    RENDER_OUTPUT_BYTES,
    value_bound_violation,
)
from aicr_tui.core.verify.chartfiles import ChartRefused, stage_chart

_HEADER = struct.Struct(">I")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _read_exact(stream: BinaryIO, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _send(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode("utf-8")
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _vm_size() -> int:
    with open("/proc/self/status", encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _bounded(value: Any, what: str) -> Any:
    reason = value_bound_violation(value)
    if reason is not None:
        raise ValueError(f"{what} {reason}")
    return value


class _Worker:
    def __init__(self, hp: Any) -> None:
        self.hp = hp
        self.charts: dict[int, Any] = {}

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        # A memory-backed directory when there is one: copying a chart there costs a tenth
        # of a disk write, and the copy is removed as soon as the engine has read it.
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None
        private = Path(tempfile.mkdtemp(prefix="aicr-tui-chart-", dir=shm))
        try:
            staged = stage_chart(Path(req["path"]), private)
            chart = self.hp.Chart.load(str(staged))
        finally:
            shutil.rmtree(private, ignore_errors=True)
        meta = chart.metadata
        out = {
            "name": str(meta.get("name") or ""),
            "version": str(meta.get("version") or ""),
            "kubeVersion": str(meta.get("kubeVersion") or ""),
            "defaults": _bounded(chart.merge_values({}), "the chart's values"),
            "raw": _bounded(chart.values, "the chart's values.yaml"),
            "has_schema": chart.schema is not None,
            "crds": [str(c.get("data", "")) for c in chart.crds],
        }
        self.charts[int(req["id"])] = chart
        return out

    def render(self, req: dict[str, Any]) -> dict[str, str]:
        chart = self.charts[int(req["id"])]
        out = dict(chart.render(req["values"], name=req["name"], namespace=req["namespace"]))
        size = sum(len(k) + len(v) for k, v in out.items())
        if size > RENDER_OUTPUT_BYTES:
            raise ValueError(
                f"the chart renders {size // (1024 * 1024)} MiB of text; at most "
                f"{RENDER_OUTPUT_BYTES // (1024 * 1024)} MiB are accepted"
            )
        return out

    def schema(self, req: dict[str, Any]) -> str | None:
        try:
            self.charts[int(req["id"])].validate_schema(req["values"])
        except Exception as exc:
            return _one_line(exc)
        return None

    def crd(self, req: dict[str, Any]) -> list[str]:
        """A custom resource checked against its CRD's schema (chart input: checked here)."""
        from aicr_tui.core.verify.kubeschema import custom_resource_errors

        return custom_resource_errors(req["schema"], req["object"])

    def parse(self, req: dict[str, Any]) -> list[list[Any]]:
        out: list[list[Any]] = []
        for text in req["texts"]:
            try:
                doc = _bounded(self.hp.values_from_yaml(text), "the document is")
                out.append(["ok", doc])
            except RecursionError:  # the engine's JSON, too deep for Python's reader
                out.append(["error", f"the document is nested more than {MAX_NESTING_DEPTH} "
                                     "levels deep (the limit)"])  # fmt: skip
            except Exception as exc:
                out.append(["error", _one_line(exc)])
        return out

    def free(self, req: dict[str, Any]) -> None:
        chart = self.charts.pop(int(req["id"]), None)
        if chart is not None:
            chart.close()


def main() -> None:
    memory = int(sys.argv[2])
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    try:
        import helm_python as hp

        version = f"helm-python-sdk {hp.__version__}"
        try:
            version += f" (Helm {hp.helm_sdk_version()})"
        except Exception:  # the version probe is informational only
            pass
    except Exception as exc:
        _send(answers, {"error": _one_line(exc), "kind": "engine"})
        return
    base = _vm_size()
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (base + memory, base + memory))
    _send(answers, {"ok": version})
    worker = _Worker(hp)
    _soft, hard_cpu = resource.getrlimit(resource.RLIMIT_CPU)
    while True:
        head = _read_exact(requests, _HEADER.size)
        if head is None:
            return
        body = _read_exact(requests, _HEADER.unpack(head)[0])
        if body is None:
            return
        req = json.loads(body)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = math.ceil(usage.ru_utime + usage.ru_stime + float(req.get("cpu", 60))) + 1
        if hard_cpu != resource.RLIM_INFINITY:
            cpu = min(cpu, hard_cpu)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard_cpu))
        op = str(req.get("op"))
        try:
            result = getattr(worker, op)(req)
            # Past half its memory the child asks to be replaced, so that what earlier
            # charts left behind never eats into the next chart's limit.
            _send(answers, {"ok": result, "recycle": _vm_size() - base > memory // 2})
        except ChartRefused as exc:
            _send(answers, {"error": str(exc), "kind": "refused"})
        except MemoryError:
            worker.charts.clear()
            mib = memory // (1024 * 1024)
            _send(answers, {"error": f"the Helm engine ran out of memory ({mib} MiB limit)",
                            "kind": "memory"})  # fmt: skip
        except Exception as exc:  # RecursionError included
            _send(answers, {"error": _one_line(exc), "kind": "engine"})


if __name__ == "__main__":
    main()
