"""``K8s.aks-gpu-pools`` projection: every rule of spec aks.md §1 (incl. the §1.8/§1.9 tables)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aicr_tui.core.capture.aks_pools import (
    aggregate_modes,
    is_nvidia_gpu_size,
    load_aks_pools,
    pool_mode,
    project_aks_pools,
)
from aicr_tui.core.foundation.errors import AicrError
from tests.conftest import invalid_request

H100 = "Standard_ND96isr_H100_v5"


def project(doc: object) -> dict[str, object]:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return dict(project_aks_pools(raw, "pools.json").subtype.data)


def reject(raw: bytes | str) -> AicrError:
    data = raw.encode() if isinstance(raw, str) else raw
    return invalid_request(project_aks_pools, data, "pools.json")


# -- §1.8 valid examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "driver", "count", "pools"),
    [
        (
            '[{"name":"gpu1","vmSize":"Standard_ND96isr_H100_v5","gpuProfile":{"driver":"Install"}},'
            '{"name":"gpu2","vmSize":"Standard_NC24ads_A100_v4","gpuProfile":{"driver":"Install"}},'
            '{"name":"system","vmSize":"Standard_D8s_v6"}]',
            "Install",
            2,
            "gpu1=Install,gpu2=Install",
        ),
        (
            '[{"name":"gpu1","vmSize":"Standard_ND96isr_H100_v5","gpuProfile":{"driver":"Install"}},'
            '{"name":"gpu2","vmSize":"Standard_ND96isr_H100_v5","gpuProfile":{"driver":"None"}}]',
            "Mixed",
            2,
            "gpu1=Install,gpu2=None",
        ),
        (
            '[{"name":"gpu1","vmSize":"Standard_ND96isr_H100_v5","gpuProfile":{"driver":"Install"}},'
            '{"name":"amd","vmSize":"Standard_ND96isr_MI300X_v5","gpuProfile":{"driver":"None"}}]',
            "Install",
            1,
            "gpu1=Install",
        ),
    ],
)
def test_spec_table_valid_inputs(raw: str, driver: str, count: int, pools: str) -> None:
    assert project(raw.encode()) == {
        "gpu-driver": driver,
        "gpu-pool-count": count,
        "gpu-pools": pools,
    }


# -- §1.9 rejected examples ----------------------------------------------------------------


def test_spec_table_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_aks_pools(tmp_path / "missing.json")
    text = info.value.render()
    assert "failed to open" in text and "missing.json" in text
    assert "az aks nodepool list -o json" in text
    assert info.value.exit_code == 2


def test_spec_table_object_instead_of_array() -> None:
    text = reject('{"value":[]}').render()
    assert "failed to decode AKS GPU pools file" in text
    assert "expected the JSON array emitted by `az aks nodepool list -o json`" in text


def test_spec_table_top_level_null() -> None:
    text = reject("null").render()
    assert "got JSON null" in text and "az aks nodepool list" in text


# -- §1.1 decoding semantics ---------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n",
        "[",
        '[{"name":"a"}',
        "42",
        '"pools"',
        "true",
        "[] []",
        "[]x",
        '[{"name":"a","vmSize":5}]',
        '[{"name":5}]',
        '[{"gpuProfile":"x"}]',
        '[{"gpuProfile":[]}]',
        '[{"gpuProfile":{"driver":1}}]',
        '[{"gpuProfile":{"nvidia":"Managed"}}]',
        '[{"gpuProfile":{"nvidia":{"managementMode":true}}}]',
        "[1]",
        '["pool"]',
        "[[]]",
        "[NaN]",
        '[{"name":"a",}]',
        "\ufeff[]",
        "[{'name':'a'}]",
    ],
)
def test_decode_errors_are_invalid_requests(raw: str) -> None:
    err = reject(raw)
    assert "failed to decode AKS GPU pools file" in err.message
    assert "pools.json" in err.message


def test_unknown_fields_of_any_type_are_ignored() -> None:
    doc = [
        {
            "name": "g",
            "vmSize": H100,
            "count": 3,
            "tags": None,
            "nodeTaints": ["a"],
            "powerState": {"code": "Running"},
            "spotMaxPrice": -1.0,
        }
    ]
    assert project(doc)["gpu-driver"] == "Install"
    raw = json.dumps(doc).encode().replace(b'"spotMaxPrice"', b'"huge": 1e400, "spotMaxPrice"')
    assert project(raw)["gpu-driver"] == "Install"


def test_huge_integer_in_an_unknown_field_is_accepted() -> None:
    raw = b'[{"name":"g","vmSize":"Standard_NC6","big":' + b"9" * 5000 + b"}]"
    assert project(raw)["gpu-pools"] == "g=Install"


@pytest.mark.parametrize("key", ["vmSize", "VMSize", "vmsize", "VMSIZE", "vMsIzE"])
def test_field_names_match_case_insensitively(key: str) -> None:
    raw = f'[{{"NAME":"g","{key}":"{H100}","GPUProfile":{{"DRIVER":"None"}}}}]'
    assert project(raw.encode()) == {
        "gpu-driver": "None",
        "gpu-pool-count": 1,
        "gpu-pools": "g=None",
    }


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        # Go folds U+017F (long s) to "s" and U+212A (Kelvin) to "k".
        pytest.param(
            '[{"name":"g","vm\u017fize":"Standard_NC6"}]',
            "gpu-pool-count",
            1,
            id="unicode-fold-like-go",
        ),
        pytest.param(
            '[{"name":"a","name":"b","vmSize":"Standard_D8s_v6","vmSize":"Standard_NC6"}]',
            "gpu-pools",
            "b=Install",
            id="duplicate-keys-last-wins",
        ),
        pytest.param(
            '[{"name":"a","name":null,"vmSize":"Standard_NC6"}]',
            "gpu-pools",
            "a=Install",
            id="duplicate-key-with-null-keeps-previous",
        ),
        pytest.param(
            '[{"name":"a","vmSize":"Standard_NC6","gpuProfile":{"driver":"None"},'
            '"gpuProfile":{"nvidia":{"managementMode":"Unmanaged"}}}]',
            "gpu-driver",
            "None",
            id="duplicate-gpu-profiles-merge-like-go-pointers",
        ),
        pytest.param(
            '[{"name":"a","vmSize":"Standard_NC6","gpuProfile":{"driver":"None"},"gpuProfile":null}]',
            "gpu-driver",
            "Install",
            id="duplicate-gpu-profile-null-resets-pointer",
        ),
    ],
)
def test_go_decoding_rules(raw: str, key: str, expected: object) -> None:
    assert project(raw.encode())[key] == expected


def test_null_element_is_an_empty_non_gpu_pool() -> None:
    result = project_aks_pools(b'[null, {"name":"g","vmSize":"Standard_NC6"}]', "p")
    assert result.pools[0].name == "" and result.pools[0].vm_size == ""
    assert not result.pools[0].is_gpu and result.pools[0].mode is None
    assert result.subtype.data == {
        "gpu-pool-count": 1,
        "gpu-pools": "g=Install",
        "gpu-driver": "Install",
    }


def test_null_fields_are_empty() -> None:
    assert project([{"name": None, "vmSize": None, "gpuProfile": None}]) == {"gpu-pool-count": 0}


def test_trailing_whitespace_is_fine() -> None:
    assert project(b"[] \n\t\r\n") == {"gpu-pool-count": 0}


def test_invalid_utf8_in_a_string_is_replaced_not_rejected() -> None:
    raw = b'[{"name":"g\xff","vmSize":"Standard_NC6"}]'
    assert project(raw)["gpu-pools"] == "g\ufffd=Install"


def test_escaped_lone_surrogate_becomes_replacement_character() -> None:
    raw = b'[{"name":"g\\ud800","vmSize":"Standard_NC6"}]'
    assert project(raw)["gpu-pools"] == "g\ufffd=Install"


def test_decode_error_names_the_source() -> None:
    err = reject("[")
    assert '"pools.json"' in err.message
    assert err.cause


# -- §1.2 GPU pool detection ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("vm_size", "is_gpu"),
    [
        ("Standard_ND96isr_H100_v5", True),
        ("Standard_NC24ads_A100_v4", True),
        ("Standard_NV36ads_A10_v5", True),
        ("standard_nc6s_v3", True),
        ("STANDARD_ND40RS_V2", True),
        ("Standard_NC", True),
        ("Standard_ND96isr_MI300X_v5", False),
        ("Standard_ND96isr_mi325x_v5", False),
        ("Standard_NV32as_v620_v5", False),
        ("Standard_NV28adms_V710_v5", False),
        ("Standard_NG32ads_V620_v1", False),
        ("Standard_NG8ads_v1", False),
        ("Standard_D8s_v6", False),
        ("", False),
        (" Standard_NC6", False),
        ("Basic_NC6", False),
        ("Standard_NCxyz_mi300x", False),
        ("Standard_ND96isr_M\u0130300X_v5", False),
    ],
)
def test_gpu_pool_detection(vm_size: str, is_gpu: bool) -> None:
    assert is_nvidia_gpu_size(vm_size) is is_gpu
    data = project([{"name": "p", "vmSize": vm_size}])
    assert data["gpu-pool-count"] == (1 if is_gpu else 0)


# -- §1.3 per-pool mode --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "mode"),
    [
        (None, "Install"),
        ({}, "Install"),
        ({"driver": ""}, "Install"),
        ({"driver": "Install"}, "Install"),
        ({"driver": "None"}, "None"),
        ({"driver": "install"}, "install"),
        ({"driver": " None"}, " None"),
        ({"driver": "Future"}, "Future"),
        ({"nvidia": None, "driver": "None"}, "None"),
        ({"nvidia": {"managementMode": "Managed"}}, "Managed"),
        ({"nvidia": {"managementMode": "Managed"}, "driver": "None"}, "Managed"),
        ({"nvidia": {"managementMode": "whatever"}, "driver": "None"}, "Managed"),
        ({"nvidia": {"managementMode": ""}, "driver": "None"}, "Managed"),
        ({"nvidia": {}, "driver": "None"}, "Managed"),
        ({"nvidia": {"managementMode": None}, "driver": "None"}, "Managed"),
        ({"nvidia": {"managementMode": "Unmanaged"}, "driver": "None"}, "None"),
        ({"nvidia": {"managementMode": "UNMANAGED"}, "driver": "None"}, "None"),
        ({"nvidia": {"managementMode": "unmanaged"}}, "Install"),
        ({"nvidia": {"managementMode": " Unmanaged"}, "driver": "None"}, "Managed"),
    ],
)
def test_per_pool_mode(profile: dict[str, object] | None, mode: str) -> None:
    pool: dict[str, object] = {"name": "g", "vmSize": H100}
    if profile is not None:
        pool["gpuProfile"] = profile
    data = project([pool])
    assert data["gpu-pools"] == f"g={mode}"
    assert data["gpu-driver"] == mode


def test_absent_gpu_profile_key_is_install() -> None:
    assert project([{"name": "g", "vmSize": H100}])["gpu-driver"] == "Install"


def test_pool_mode_function_matches_rules() -> None:
    assert pool_mode(None) == "Install"
    assert pool_mode({"driver": "", "nvidia": None}) == "Install"
    assert pool_mode({"driver": "None", "nvidia": {"managementMode": "Unmanaged"}}) == "None"


# -- §1.4 aggregation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("modes", "expected"),
    [
        ([], None),
        (["Install"], "Install"),
        (["Install", "Install"], "Install"),
        (["None", "None"], "None"),
        (["Managed"], "Managed"),
        (["Future"], "Future"),
        (["Install", "None"], "Mixed"),
        (["Install", "Managed"], "Mixed"),
        (["Install", " Install"], "Mixed"),
        (["Install", "install"], "Mixed"),
    ],
)
def test_aggregation(modes: list[str], expected: str | None) -> None:
    assert aggregate_modes(modes) == expected


def test_no_gpu_pool_omits_driver_and_pools_keys() -> None:
    data = project([{"name": "system", "vmSize": "Standard_D8s_v6"}])
    assert data == {"gpu-pool-count": 0}


def test_empty_array_is_valid_with_count_zero() -> None:
    assert project(b"[]") == {"gpu-pool-count": 0}


# -- §1.5 readings -------------------------------------------------------------------------


def test_pools_sorted_as_whole_strings_in_byte_order_and_duplicates_kept() -> None:
    pools = [
        {"name": n, "vmSize": H100, "gpuProfile": {"driver": "Install"}}
        for n in ["b", "a-2", "a", "B", "a", "\u00e9"]
    ]
    data = project(pools)
    assert data["gpu-pools"] == "B=Install,a-2=Install,a=Install,a=Install,b=Install,\u00e9=Install"
    assert data["gpu-pool-count"] == 6


def test_subtype_name_and_types() -> None:
    result = project_aks_pools(b'[{"name":"g","vmSize":"Standard_NC6"}]', "p")
    assert result.subtype.subtype == "aks-gpu-pools"
    assert isinstance(result.subtype.data["gpu-pool-count"], int)
    assert result.gpu_driver == "Install"
    assert [p.name for p in result.gpu_pools] == ["g"]


def test_pool_records_expose_name_vm_size_gpu_and_mode() -> None:
    raw = json.dumps(
        [
            {"name": "sys", "vmSize": "Standard_D8s_v6"},
            {
                "name": "g",
                "vmSize": H100,
                "gpuProfile": {"driver": "None", "nvidia": {"managementMode": "Unmanaged"}},
            },
        ]
    ).encode()
    pools = project_aks_pools(raw, "p").pools
    assert (pools[0].name, pools[0].vm_size, pools[0].is_gpu, pools[0].mode) == (
        "sys",
        "Standard_D8s_v6",
        False,
        None,
    )
    assert (pools[1].is_gpu, pools[1].mode, pools[1].driver, pools[1].management_mode) == (
        True,
        "None",
        "None",
        "Unmanaged",
    )


# -- §1.6 file handling --------------------------------------------------------------------


def test_load_reads_a_real_dump(tmp_path: Path) -> None:
    f = tmp_path / "pools.json"
    f.write_text(json.dumps([{"name": "g", "vmSize": H100, "gpuProfile": {"driver": "None"}}]))
    assert load_aks_pools(f).subtype.data["gpu-driver"] == "None"


def test_load_rejects_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("[]")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(AicrError) as info:
        load_aks_pools(link)
    assert "is a symlink, not a regular file" in info.value.message
    assert "AKS GPU pools" in info.value.message
    assert "az aks nodepool list -o json" in info.value.render()


def test_load_rejects_directory(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_aks_pools(tmp_path)
    assert "is not a regular file" in info.value.message


def test_load_rejects_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(AicrError) as info:
        load_aks_pools(fifo)
    assert "is not a regular file" in info.value.message


def test_load_size_cap_is_strictly_greater_than_one_mib(tmp_path: Path) -> None:
    exact = tmp_path / "exact.json"
    body = b"[]"
    exact.write_bytes(body + b" " * (1_048_576 - len(body)))
    assert load_aks_pools(exact).subtype.data == {"gpu-pool-count": 0}
    over = tmp_path / "over.json"
    over.write_bytes(body + b" " * (1_048_577 - len(body)))
    with pytest.raises(AicrError) as info:
        load_aks_pools(over)
    assert 'AKS GPU pools file "' in info.value.message
    assert "exceeds 1048576 bytes" in info.value.message


def test_load_shipped_samples() -> None:
    captures = Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "captures"
    expected = {
        "aks-pools-install.json": "Install",
        "aks-pools-none.json": "None",
        "aks-pools-mixed.json": "Mixed",
        "aks-pools-managed.json": "Managed",
    }
    for name, driver in expected.items():
        result = load_aks_pools(captures / name)
        assert result.subtype.data["gpu-driver"] == driver
        assert any(not p.is_gpu for p in result.pools), "each sample has a system pool"


def test_each_pool_says_why_it_reads_its_mode() -> None:
    raw = json.dumps(
        [
            {"name": "sys", "vmSize": "Standard_D8s_v6"},
            {"name": "a", "vmSize": H100},
            {"name": "b", "vmSize": H100, "gpuProfile": {"driver": "None"}},
            {"name": "c", "vmSize": H100, "gpuProfile": {"nvidia": {"managementMode": "Managed"}}},
            {"name": "d", "vmSize": H100, "gpuProfile": {}},
        ]
    ).encode()
    reasons = [p.reason for p in project_aks_pools(raw, "p").pools]
    assert "not an NVIDIA GPU size" in reasons[0]
    assert "provider default" in reasons[1] and "provider default" in reasons[4]
    assert reasons[2] == 'gpuProfile.driver is "None"'
    assert "AKS-managed GPU pool" in reasons[3]
