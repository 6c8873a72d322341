"""Parse an AIPerf aggregate report (``profile_export_aiperf.json``).

Format (AIPerf docs, "Working with Profile Export Files"): one JSON object whose metric
keys hold ``{unit, avg, p50, p90, p99, min, max, std, ...}``; ``output_token_throughput``
(``tokens/sec``) carries the throughput in ``avg``, ``time_to_first_token`` (``ms``) the
TTFT distribution. In a pod log the object sits between two ``===AIPERF-RESULT===`` lines.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.foundation.errors import invalid

SENTINEL = "===AIPERF-RESULT==="
_TO_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 0.000001}


@dataclass(frozen=True)
class InferenceResult:
    output_token_throughput: float | None
    ttft_p99_ms: float | None
    request_throughput: float | None
    request_count: int | None
    error_count: int


def extract_report(log_text: str) -> str | None:
    """The JSON text between the sentinels, or None when they are absent."""
    start = log_text.find(SENTINEL)
    if start < 0:
        return None
    start += len(SENTINEL)
    end = log_text.find(SENTINEL, start)
    return (log_text[start:end] if end >= 0 else log_text[start:]).strip()


def _metric(doc: dict[str, Any], key: str, stat: str) -> tuple[float | None, str]:
    m = doc.get(key)
    if not isinstance(m, dict):
        return None, ""
    v = m.get(stat)
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None, str(m.get("unit") or "")
    try:
        return float(v), str(m.get("unit") or "")
    except OverflowError:  # an integer literal past the float range
        return None, str(m.get("unit") or "")


def parse_report(text: str, source: str = "AIPerf report") -> InferenceResult:
    body = extract_report(text)
    try:
        doc = json.loads(body if body is not None else text)
    except json.JSONDecodeError as exc:
        raise invalid(f"{source} is not valid JSON", exc.msg) from exc
    except RecursionError as exc:
        raise invalid(f"{source} is not valid JSON", "nested too deeply") from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise invalid(f"{source} is not valid JSON", "a number is too long") from exc
    if not isinstance(doc, dict):
        raise invalid(f"{source} is not a JSON object")
    throughput, _ = _metric(doc, "output_token_throughput", "avg")
    ttft, unit = _metric(doc, "time_to_first_token", "p99")
    if ttft is not None:
        factor = _TO_MS.get(unit.lower(), None) if unit else 1.0
        if factor is None:
            raise invalid(f'{source} reports time_to_first_token in unknown unit "{unit}"')
        ttft *= factor
    req_tp, _ = _metric(doc, "request_throughput", "avg")
    count, _ = _metric(doc, "request_count", "avg")
    errors = 0
    summary = doc.get("error_summary")
    for item in summary if isinstance(summary, list) else []:
        if isinstance(item, dict) and isinstance(item.get("count"), int):
            errors += int(item["count"])
    whole = int(count) if count is not None and math.isfinite(count) else None  # inf/NaN raise
    return InferenceResult(throughput, ttft, req_tp, whole, errors)
