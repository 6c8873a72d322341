"""Output of the tools the checks run in the cluster (nvidia-smi, nccl-tests, AIPerf) and the
query selector: arbitrary and damaged text either parses or fails with one AicrError line,
so a garbled pod log never turns a check into a crash."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.validation.parsers.inference import SENTINEL, parse_report
from aicr_tui.core.validation.parsers.nccl import parse_all_reduce, parse_row
from aicr_tui.core.validation.parsers.nvidia_smi import parse_query_csv, parse_table
from tests.fuzz.fuzz_support import FUZZ, check_contract, json_values, mutated

NCCL_LOG = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    34.51    0.00    0.00      0    33.92    0.00    0.00      0
  17179869184    4294967296     float     sum      -1   196401   87.47  163.99      0   196272   87.53  164.11      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 157.29
"""
SMI_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.15              Driver Version: 570.86.15      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
+-----------------------------------------+------------------------+----------------------+
"""
AIPERF = {
    "output_token_throughput": {"avg": 1520.5, "unit": "tokens/sec"},
    "time_to_first_token": {"p99": 212.0, "unit": "ms"},
    "request_throughput": {"avg": 12.0},
    "request_count": {"avg": 200},
    "error_summary": [{"count": 1}],
}

_lines = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.sampled_from(NCCL_LOG.splitlines() + SMI_TABLE.splitlines()),
        st.builds(
            lambda n, c, r: f"{n} {c} float sum {r} 1.0 2.0 3.0 0 1.0 2.0 3.0 0",
            st.sampled_from(["8", "²", "1" * 5000, "-1", "x"]),
            st.sampled_from(["2", "³", "1" * 5000]),
            st.sampled_from(["-1", "0", "²", "1" * 5000]),
        ),
        st.sampled_from(
            ["# Out of bounds values : " + "9" * 5000 + " OK", "# Avg bus bandwidth : 1e999"]
        ),
    ),
    max_size=8,
)


@FUZZ
@given(_lines)
def test_nccl_and_smi_logs(lines: list[str]) -> None:
    text = "\n".join(lines)
    check_contract(lambda: parse_all_reduce(text))
    for line in lines:
        check_contract(lambda line=line: parse_row(line))
    check_contract(lambda: parse_table(text))
    check_contract(lambda: parse_query_csv(text))


@FUZZ
@given(st.data())
def test_damaged_tool_logs(data: st.DataObject) -> None:
    for sample in (NCCL_LOG, SMI_TABLE):
        text = data.draw(mutated(sample.encode())).decode("utf-8", "replace")
        check_contract(lambda text=text: parse_all_reduce(text))
        check_contract(lambda text=text: parse_table(text))


_metric = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "avg": st.one_of(json_values, st.floats(), st.sampled_from([1e308, -1.0])),
            "p99": st.one_of(json_values, st.floats()),
            "unit": st.one_of(st.sampled_from(["ms", "s", "us", "ns", "min", ""]), json_values),
        },
    ),
)
_report = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "output_token_throughput": _metric,
            "time_to_first_token": _metric,
            "request_throughput": _metric,
            "request_count": _metric,
            "error_summary": st.one_of(
                json_values, st.lists(st.fixed_dictionaries({"count": json_values}), max_size=3)
            ),
        },
    ),
)


def _report_text(doc: Any, framed: bool) -> str:
    body = json.dumps(doc)  # allow_nan: NaN/Infinity are what a careless writer emits
    return f"log line\n{SENTINEL}\n{body}\n{SENTINEL}\ntrailer" if framed else body


@FUZZ
@given(_report, st.booleans())
def test_aiperf_reports(doc: Any, framed: bool) -> None:
    check_contract(lambda: parse_report(_report_text(doc, framed), "AIPerf report"), names="AIPerf")


@FUZZ
@given(st.data())
def test_damaged_aiperf_reports(data: st.DataObject) -> None:
    raw = data.draw(mutated(_report_text(AIPERF, True).encode())).decode("utf-8", "replace")
    check_contract(lambda: parse_report(raw, "AIPerf report"), names="AIPerf")


def test_tool_output_edge_values() -> None:
    for doc in (
        {"request_count": {"avg": 1e999}},
        {"request_count": {"avg": float("nan")}},
        {"error_summary": 5},
        {"error_summary": {"count": 1}},
    ):
        check_contract(lambda doc=doc: parse_report(json.dumps(doc), "AIPerf report"))
    for text in (
        '{"error_summary": [{"count": ' + "9" * 5000 + "}]}",
        '{"request_count": {"avg": ' + "9" * 400 + "}}",
        "[" * 100_000,
        "1" * 5000,
    ):
        check_contract(lambda text=text: parse_report(text, "AIPerf report"))
    check_contract(lambda: parse_row("² ³ float sum -1 1 2 3 0"))
    check_contract(lambda: parse_all_reduce("# Out of bounds values : " + "9" * 5000 + " OK"))
    check_contract(lambda: parse_all_reduce("# Avg bus bandwidth : 1.2.3"))
    check_contract(lambda: parse_row("8 2 float sum --1 1 2 3 0"))


def test_the_tool_samples_parse() -> None:
    nccl = parse_all_reduce(NCCL_LOG)
    assert nccl.avg_busbw == 157.29 and nccl.out_of_bounds == 0 and len(nccl.rows) == 2
    assert parse_table(SMI_TABLE).driver_version == "570.86.15"
    report = parse_report(_report_text(AIPERF, True))
    assert report.request_count == 200 and report.error_count == 1


# -- query selectors --------------------------------------------------------------------
_TREE = {
    "components": {"gpu-operator": {"values": {"driver": {"enabled": True}, "a.b": [1, {"c": 2}]}}}
}


@FUZZ
@given(
    st.one_of(
        st.text(max_size=30),
        st.builds(
            lambda a, b: f"components.gpu-operator.values.{a}.{b}",
            st.sampled_from(["a.b", "driver", "x", ""]),
            st.sampled_from(["0", "1", "1.c", "²", "1" * 5000, "-1", "enabled", ""]),
        ),
    )
)
def test_query_selectors(selector: str) -> None:
    from aicr_tui.core.recipe.query import select

    check_contract(lambda: select(_TREE, selector), names="--selector")
