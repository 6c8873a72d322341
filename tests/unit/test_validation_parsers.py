"""Parsers on real-format tool output kept under tests/data/validation (see its README)."""

from __future__ import annotations

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.parsers.inference import extract_report, parse_report
from aicr_tui.core.validation.parsers.nccl import (
    format_size,
    parse_all_reduce,
    parse_size,
    transport_problem,
)
from aicr_tui.core.validation.parsers.nvidia_smi import parse_query_csv, parse_table
from tests.conftest import TEST_DATA

DATA = TEST_DATA / "validation"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_nccl_largest_row_is_the_gate_value() -> None:
    result = parse_all_reduce(read("nccl_all_reduce_2x8_h100.txt"))
    assert len(result.rows) == 25
    row = result.largest
    assert row is not None
    assert row.size_bytes == 17179869184
    assert row.busbw == pytest.approx(157.29)
    assert row.inplace_busbw == pytest.approx(157.46)
    assert row.wrong == "0"
    assert result.avg_busbw == pytest.approx(60.8731)
    assert result.out_of_bounds == 0
    assert result.network == "IB"
    assert format_size(row.size_bytes) == "16 GiB"


def test_nccl_mpirun_tagged_output_parses_the_same_rows() -> None:
    tagged = parse_all_reduce(read("nccl_all_reduce_tagged_mpirun.txt"))
    plain = parse_all_reduce(read("nccl_all_reduce_2x8_h100.txt"))
    assert tagged.largest == plain.largest
    assert tagged.rows == plain.rows


def test_nccl_failure_has_no_rows_and_names_the_network() -> None:
    result = parse_all_reduce(read("nccl_all_reduce_failed.txt"))
    assert result.rows == ()
    assert result.largest is None
    assert result.network == "Socket"


def test_nccl_na_wrong_column_and_sizes() -> None:
    line = "     8388608       2097152     float     sum      -1    235.4   35.64   66.82    N/A    220.6   38.02   71.29    N/A"
    result = parse_all_reduce(line)
    assert result.rows[0].wrong == "N/A"
    assert result.rows[0].busbw == pytest.approx(66.82)
    assert parse_size("16G") == 16 * 1024**3
    assert parse_size("1K") == 1024
    assert parse_size("4096") == 4096


def test_nvidia_smi_table() -> None:
    report = parse_table(read("nvidia_smi_h100_8gpu.txt"))
    assert report.smi_version == "580.126.09"
    assert report.driver_version == "580.126.09"
    assert report.cuda_version == "13.0"
    assert report.banner_ok
    assert len(report.gpus) == 8
    assert report.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert report.gpus[3].bus_id == "00000008:00:00.0"
    assert all(g.memory_total_mib == 81559 for g in report.gpus)
    assert not report.no_devices


def test_nvidia_smi_no_devices() -> None:
    report = parse_table(read("nvidia_smi_no_devices.txt"))
    assert report.no_devices
    assert report.gpus == ()
    assert not report.banner_ok


def test_nvidia_smi_newer_banner_names() -> None:
    text = "| NVIDIA-SMI 595.10   KMD Version: 595.10   CUDA UMD Version: 13.2 |"
    report = parse_table(text)
    assert report.driver_version == "595.10"
    assert report.cuda_version == "13.2"


def test_nvidia_smi_query_csv() -> None:
    rows = parse_query_csv(read("nvidia_smi_query_gpu.csv"))
    assert len(rows) == 2
    assert rows[0]["name"] == "NVIDIA H100 NVL"
    assert rows[1]["memory.total"] == "95830 MiB"
    assert rows[0]["driver_version"] == "580.126.09"


def test_aiperf_report() -> None:
    result = parse_report(read("aiperf_profile_export_aiperf.json"))
    assert result.output_token_throughput == pytest.approx(148004.3871)
    assert result.ttft_p99_ms == pytest.approx(579.7021)
    assert result.request_count == 16384
    assert result.error_count == 0


def test_aiperf_report_inside_pod_log() -> None:
    log = read("aiperf_pod_log_with_sentinels.txt")
    assert extract_report(log) is not None
    assert parse_report(log).ttft_p99_ms == pytest.approx(579.7021)


def test_aiperf_units_and_garbage() -> None:
    doc = '{"time_to_first_token": {"unit": "s", "p99": 0.5}, "output_token_throughput": {"unit": "tokens/sec", "avg": 10}}'
    assert parse_report(doc).ttft_p99_ms == pytest.approx(500.0)
    with pytest.raises(AicrError, match="not valid JSON"):
        parse_report("===AIPERF-RESULT===\nnot json\n===AIPERF-RESULT===")


# -- issue 33: real runs and the transport markers of the -nvls / -net variants ---------


def test_gb200_nvl72_rack_run_parses_to_its_published_figures() -> None:
    result = parse_all_reduce(read("nccl_all_reduce_gb200_nvl72_rack.txt"))
    assert len(result.rows) == 5
    row = result.largest
    assert row is not None and row.size_bytes == 8 * 1024**3
    assert row.busbw == pytest.approx(834.57) and row.inplace_busbw == pytest.approx(846.82)
    assert result.avg_busbw == pytest.approx(745.53) and result.out_of_bounds == 0
    # >= 500 (upstream's NVLS gate) holds for this rack
    assert row.busbw >= 500
    # no NCCL_DEBUG=INFO in that run: bandwidth alone does not prove NVLS carried it
    assert not result.nvls_available and not result.nvls_comm
    assert "NVLS multicast support is available" in (transport_problem(result, "nvls") or "")


def test_two_node_h100_network_run_parses_to_its_published_figures() -> None:
    result = parse_all_reduce(read("nccl_all_reduce_2x8_h100_a3mega.txt"))
    assert len(result.rows) == 31
    row = result.largest
    assert row is not None and row.size_bytes == 8589934592
    assert row.busbw == pytest.approx(338.82)
    assert result.avg_busbw == pytest.approx(70.742)
    assert "no 'NCCL INFO Using network <plugin>' line" in (transport_problem(result, "net") or "")
    assert transport_problem(result, "") is None


def test_transport_markers_prove_each_variant() -> None:
    markers = read("nccl_transport_markers.txt")
    table = read("nccl_all_reduce_gb200_nvl72_rack.txt")
    result = parse_all_reduce(markers + table)
    assert result.network == "AWS"  # the first token of "AWS Libfabric", as upstream reads it
    assert result.nvls_available and result.nvls_comm
    assert transport_problem(result, "nvls") is None
    assert transport_problem(result, "net") is None
    assert result.largest is not None and result.largest.busbw == pytest.approx(834.57)
    # available but never built: NVLS did not carry the collective
    only_available = "\n".join(ln for ln in markers.splitlines() if "NVLS comm" not in ln)
    problem = transport_problem(parse_all_reduce(only_available), "nvls")
    assert problem is not None and "built no NVLS communicator" in problem
    # the Socket fallback is not a NET transport
    socket = parse_all_reduce(read("nccl_all_reduce_failed.txt"))
    assert "fell back to 'Using network Socket'" in (transport_problem(socket, "net") or "")
