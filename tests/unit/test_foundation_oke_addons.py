"""``K8s.oke-addons`` projection: every rule of spec oke.md §1 (incl. the §1.10 table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr_tui.core.capture.oke_addons import addon_reading, load_oke_addons, project_oke_addons
from aicr_tui.core.foundation.errors import AicrError
from tests.conftest import invalid_request

CAPTURES = Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "captures"


def project(doc: object) -> dict[str, object]:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return dict(project_oke_addons(raw, "addons.json").subtype.data)


def reject(raw: str | bytes) -> AicrError:
    data = raw.encode() if isinstance(raw, str) else raw
    return invalid_request(project_oke_addons, data, "addons.json")


# -- §1.10 table ---------------------------------------------------------------------------


def test_table_installed() -> None:
    raw = (
        '{"data":[{"name":"CoreDNS","lifecycle-state":"ACTIVE"},'
        '{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"}]}'
    )
    assert project(raw.encode()) == {"nvidia-gpu-plugin": "installed", "addon-count": 2}


def test_table_deleting() -> None:
    raw = '{"data":[{"name":"NvidiaGpuPlugin","lifecycle-state":"DELETING"}]}'
    assert project(raw.encode()) == {"nvidia-gpu-plugin": "addon-deleting", "addon-count": 1}


def test_table_items_instead_of_data() -> None:
    err = reject('{"items":[]}')
    assert "no data array" in err.message
    assert (
        "oci ce cluster list-addons --cluster-id <cluster-ocid> --all --output json" in err.message
    )


# -- §1.3 decoding -------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["null", "{}", '{"data":null}', '{"other":[1]}'])
def test_no_data_array(raw: str) -> None:
    err = reject(raw)
    assert 'failed to decode OKE add-ons file "addons.json": no data array' in err.message


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "  ",
        "not json",
        '{"data":[',
        '{"data":[]} x',
        '{"data":[]}{}',
        "[]",
        '[{"name":"NvidiaGpuPlugin"}]',
        "5",
        '"data"',
        "true",
        '{"data":{}}',
        '{"data":"x"}',
        '{"data":5}',
        '{"data":[{"name":5}]}',
        '{"data":[{"lifecycle-state":true}]}',
        '{"data":[1]}',
        '{"data":["NvidiaGpuPlugin"]}',
        '{"data":[[]]}',
        '{"data":[{"name":"a",}]}',
    ],
)
def test_decode_errors(raw: str) -> None:
    err = reject(raw)
    assert 'failed to decode OKE add-ons file "addons.json"' in err.message
    assert "expected the JSON object emitted by" in err.message
    assert "no data array" not in err.message


def test_empty_data_array_is_valid() -> None:
    assert project({"data": []}) == {"nvidia-gpu-plugin": "absent", "addon-count": 0}


def test_other_top_level_keys_and_fields_are_ignored() -> None:
    doc = {
        "opc-next-page": None,
        "data": [
            {
                "name": "NvidiaGpuPlugin",
                "lifecycle-state": "ACTIVE",
                "time-created": "2026-01-01T00:00:00+00:00",
                "current-installed-version": "v0.17.0",
                "addon-error": {"code": "x", "message": "y"},
                "defined-tags": {"a": {"b": "c"}},
            }
        ],
    }
    assert project(doc) == {"nvidia-gpu-plugin": "installed", "addon-count": 1}


@pytest.mark.parametrize(
    "raw",
    [
        '{"Data":[{"NAME":"nvidiagpuplugin","Lifecycle-State":"active"}]}',
        '{"DATA":[{"Name":"NVIDIAGPUPLUGIN","LIFECYCLE-STATE":"Active"}]}',
    ],
)
def test_keys_and_names_match_case_insensitively(raw: str) -> None:
    assert project(raw.encode())["nvidia-gpu-plugin"] == "installed"


def test_duplicate_keys_last_wins() -> None:
    raw = '{"data":[{"name":"CoreDNS","name":"NvidiaGpuPlugin","lifecycle-state":"FAILED"}]}'
    assert project(raw.encode())["nvidia-gpu-plugin"] == "addon-failed"


@pytest.mark.parametrize(
    ("raw", "plugin", "count"),
    [
        # Go reuses the slice's elements: fields missing from the second array keep old values.
        pytest.param(
            '{"data":[{"name":"NvidiaGpuPlugin","lifecycle-state":"DELETING"}],'
            '"data":[{"lifecycle-state":"ACTIVE"}]}',
            "installed",
            1,
            id="decodes-into-the-existing-elements-like-go",
        ),
        pytest.param(
            '{"data":[{"name":"CoreDNS"},{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"}],'
            '"data":[{"name":"KubeProxy"}]}',
            "absent",
            1,
            id="shorter-array-truncates",
        ),
        pytest.param(
            '{"data":[{"name":"a"},{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"}],'
            '"data":[{"name":"b"}],"data":[{"name":"c"},{}]}',
            "installed",
            2,
            id="regrowing-exposes-old-elements-like-go",
        ),
        pytest.param(
            '{"data":[{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"}],"data":[],"data":[{}]}',
            "absent",
            1,
            id="empty-array-then-growth-starts-fresh",
        ),
    ],
)
def test_duplicate_data_arrays_decode_like_go(raw: str, plugin: str, count: int) -> None:
    assert project(raw.encode()) == {"nvidia-gpu-plugin": plugin, "addon-count": count}


def test_duplicate_data_null_resets() -> None:
    raw = '{"data":[{"name":"NvidiaGpuPlugin","lifecycle-state":"ACTIVE"}],"data":null}'
    assert "no data array" in reject(raw).message


def test_null_entry_counts_and_is_empty() -> None:
    assert project(b'{"data":[null]}') == {"nvidia-gpu-plugin": "absent", "addon-count": 1}


def test_missing_or_null_state_reads_bare_prefix() -> None:
    assert project({"data": [{"name": "NvidiaGpuPlugin"}]})["nvidia-gpu-plugin"] == "addon-"
    doc = {"data": [{"name": "NvidiaGpuPlugin", "lifecycle-state": None}]}
    assert project(doc)["nvidia-gpu-plugin"] == "addon-"


# -- §1.4 projection -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "reading"),
    [
        ("ACTIVE", "installed"),
        ("active", "installed"),
        ("Active", "installed"),
        (" ACTIVE", "addon- active"),
        ("ACTIVE ", "addon-active "),
        ("DELETING", "addon-deleting"),
        ("NEEDS_ATTENTION", "addon-needs_attention"),
        ("FAILED", "addon-failed"),
        ("CREATING", "addon-creating"),
        ("UPDATING", "addon-updating"),
        ("DELETED", "addon-deleted"),
        ("Some State", "addon-some state"),
        ("", "addon-"),
        ("\u0130NACTIVE", "addon-inactive"),
    ],
)
def test_lifecycle_state_normalisation(state: str, reading: str) -> None:
    assert addon_reading(state) == reading
    doc = {"data": [{"name": "NvidiaGpuPlugin", "lifecycle-state": state}]}
    assert project(doc)["nvidia-gpu-plugin"] == reading


@pytest.mark.parametrize("name", ["NvidiaGpuPlugin ", " NvidiaGpuPlugin", "NvidiaGpuPlugins", ""])
def test_name_is_not_trimmed(name: str) -> None:
    doc = {"data": [{"name": name, "lifecycle-state": "ACTIVE"}]}
    assert project(doc)["nvidia-gpu-plugin"] == "absent"


def test_first_matching_entry_decides() -> None:
    doc = {
        "data": [
            {"name": "nvidiagpuplugin", "lifecycle-state": "UPDATING"},
            {"name": "NvidiaGpuPlugin", "lifecycle-state": "ACTIVE"},
        ]
    }
    assert project(doc) == {"nvidia-gpu-plugin": "addon-updating", "addon-count": 2}


def test_absent_when_no_plugin_and_count_is_all_entries() -> None:
    doc = {"data": [{"name": n, "lifecycle-state": "FAILED"} for n in ["a", "b", "c"]]}
    assert project(doc) == {"nvidia-gpu-plugin": "absent", "addon-count": 3}


def test_subtype_name_and_addons_list() -> None:
    result = project_oke_addons(
        b'{"data":[{"name":"CoreDNS","lifecycle-state":"ACTIVE"}]}', "addons.json"
    )
    assert result.subtype.subtype == "oke-addons"
    assert [(a.name, a.lifecycle_state) for a in result.addons] == [("CoreDNS", "ACTIVE")]
    assert result.nvidia_gpu_plugin == "absent"
    assert result.warnings == []


# -- conflicting Oracle add-ons (product brief) --------------------------------------------


def test_conflicting_oracle_operator_addons_warn_once_each() -> None:
    doc = {
        "data": [
            {"name": "NvidiaGpuOperator", "lifecycle-state": "ACTIVE"},
            {"name": "NvidiaGpuPlugin", "lifecycle-state": "ACTIVE"},
            {"name": "nvidianetworkoperator", "lifecycle-state": "CREATING"},
        ]
    }
    result = project_oke_addons(json.dumps(doc).encode(), "addons.json")
    assert len(result.warnings) == 2
    assert "NvidiaGpuOperator" in result.warnings[0]
    assert "disable" in result.warnings[0]
    assert "lifecycle managers" in result.warnings[0]
    assert "nvidianetworkoperator" in result.warnings[1]
    assert "Network Operator" in result.warnings[1]
    assert result.nvidia_gpu_plugin == "installed"


def test_no_warning_without_conflicting_addons() -> None:
    result = load_oke_addons(CAPTURES / "oke-addons-active.json")
    assert result.warnings == []


# -- §1.2 file handling --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reading", "count"),
    [
        ("oke-addons-active.json", "installed", 6),
        ("oke-addons-absent.json", "absent", 5),
        ("oke-addons-deleting.json", "addon-deleting", 6),
    ],
)
def test_shipped_samples(name: str, reading: str, count: int) -> None:
    data = load_oke_addons(CAPTURES / name).subtype.data
    assert data == {"nvidia-gpu-plugin": reading, "addon-count": count}


def test_missing_file_names_file_and_command(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_oke_addons(tmp_path / "nope.json")
    text = info.value.render()
    assert 'failed to open OKE cluster add-ons file "' in text and "nope.json" in text
    assert "oci ce cluster list-addons" in text
    assert info.value.exit_code == 2


def test_symlink_rejected(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text('{"data":[]}')
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(AicrError) as info:
        load_oke_addons(link)
    assert "OKE cluster add-ons path" in info.value.message
    assert "is a symlink, not a regular file" in info.value.message


def test_oversized_rejected_and_exact_cap_accepted(tmp_path: Path) -> None:
    body = b'{"data":[]}'
    exact = tmp_path / "exact.json"
    exact.write_bytes(body + b"\n" * (1_048_576 - len(body)))
    assert load_oke_addons(exact).subtype.data["addon-count"] == 0
    over = tmp_path / "over.json"
    over.write_bytes(body + b"\n" * (1_048_577 - len(body)))
    with pytest.raises(AicrError) as info:
        load_oke_addons(over)
    assert "OKE cluster add-ons file" in info.value.message
    assert "exceeds 1048576 bytes" in info.value.message


def test_directory_rejected(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_oke_addons(tmp_path)
    assert "is not a regular file" in info.value.message
