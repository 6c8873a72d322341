"""Snapshot document: spec oke.md §5 (header gate, layout, YAML/JSON round trip, attach)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aicr_tui.core.documents.snapshot import (
    Measurement,
    Snapshot,
    Subtype,
    load_snapshot,
    new_snapshot,
    parse_snapshot,
    render_snapshot,
    save_snapshot,
)
from aicr_tui.core.foundation.errors import AicrError, ErrorCode

EXAMPLE = """\
kind: Snapshot
apiVersion: aicr.run/v1
metadata:
  timestamp: "2026-03-01T12:00:00Z"
  version: v0.30.0
  source-node: gpu-node-0
measurements:
  - type: K8s
    subtypes:
      - subtype: server
        data: {version: v1.34.1, platform: linux/arm64, goVersion: go1.24.4}
      - subtype: oke-legacy-plugin
        data: {nvidia-gpu-device-plugin: none, daemonset: absent}
      - subtype: oke-addons            # appended by --oke-addons
        data: {addon-count: 3, nvidia-gpu-plugin: absent}
  - type: GPU
    subtypes:
      - subtype: hardware
        data: {gpu-present: true, gpu-count: 4, driver-loaded: false, detection-source: nfd, model: NVIDIA GB200}
  - type: OS
    subtypes:
      - subtype: release
        data: {ID: ol, VERSION_ID: "8.10"}
  - type: SystemD
    subtypes:
      - subtype: containerd.service
        data: {ActiveState: active}
"""


def reject(text: str) -> AicrError:
    with pytest.raises(AicrError) as info:
        parse_snapshot(text, "snap.yaml")
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert info.value.exit_code == 2
    assert "snap.yaml" in info.value.message
    return info.value


def test_spec_example_parses_with_typed_readings() -> None:
    s = parse_snapshot(EXAMPLE, "snap.yaml")
    assert s.kind == "Snapshot" and s.apiVersion == "aicr.run/v1"
    assert s.metadata["source-node"] == "gpu-node-0"
    assert s.reading("K8s", "oke-addons", "addon-count") == 3
    assert s.reading("GPU", "hardware", "driver-loaded") is False
    assert s.reading("OS", "release", "VERSION_ID") == "8.10"
    assert s.reading("SystemD", "containerd.service", "ActiveState") == "active"


# -- header gate ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["Recipe", "RecipeResult", "snapshot", "List"])
def test_wrong_kind_is_rejected(kind: str) -> None:
    err = reject(EXAMPLE.replace("kind: Snapshot", f"kind: {kind}"))
    assert f'has kind "{kind}", but a "Snapshot" is required' in err.message


@pytest.mark.parametrize("api", ["aicr.nvidia.com/v1alpha1", "aicr.run/v2", "v1"])
def test_unknown_api_version_is_rejected(api: str) -> None:
    err = reject(EXAMPLE.replace("apiVersion: aicr.run/v1", f"apiVersion: {api}"))
    assert f'apiVersion "{api}"' in err.message
    assert "recapture" in err.message


@pytest.mark.parametrize("api", ["aicr.run/v1", "aicr.run/v1alpha2"])
def test_accepted_api_versions(api: str) -> None:
    s = parse_snapshot(EXAMPLE.replace("apiVersion: aicr.run/v1", f"apiVersion: {api}"), "s")
    assert s.reading("K8s", "server", "version") == "v1.34.1"


def test_old_api_version_is_written_back_as_v1() -> None:
    s = parse_snapshot(
        EXAMPLE.replace("apiVersion: aicr.run/v1", "apiVersion: aicr.run/v1alpha2"), "s"
    )
    assert "apiVersion: aicr.run/v1\n" in render_snapshot(s)


def test_empty_kind_and_api_version_are_tolerated() -> None:
    text = EXAMPLE.replace("kind: Snapshot\n", "").replace("apiVersion: aicr.run/v1\n", "")
    s = parse_snapshot(text, "old.yaml")
    assert s.kind == "Snapshot" and s.apiVersion == "aicr.run/v1"


@pytest.mark.parametrize(
    "measurements",
    [
        "",
        "measurements: []",
        "measurements: null",
        "measurements: {}",
        "measurements: [null]",
        "measurements: [{type: ''}]",
        "measurements: [{subtypes: []}]",
        "measurements: [5, x]",
    ],
)
def test_no_usable_measurements_is_rejected(measurements: str) -> None:
    err = reject(f"kind: Snapshot\napiVersion: aicr.run/v1\n{measurements}\n")
    assert "contains no usable measurements and is not a valid snapshot" in err.message


def test_unusable_measurements_are_dropped_when_others_exist() -> None:
    s = parse_snapshot(
        "kind: Snapshot\nmeasurements: [null, {type: ''}, {type: K8s, subtypes: []}]\n", "s"
    )
    assert [m.type for m in s.measurements] == ["K8s"]


@pytest.mark.parametrize(
    "text",
    ["", "- a\n- b\n", "just text", "42", "kind: [\n", "a: 1\n---\nb: 2\n", "x: 1\nx: 2\n"],
)
def test_not_a_snapshot_document(text: str) -> None:
    reject(text)


@pytest.mark.parametrize(
    "bad",
    [
        "[{type: K8s, subtypes: [{subtype: s, data: [1, 2]}]}]",
        "[{type: K8s, subtypes: [{subtype: s, data: 5}]}]",
        "[{type: K8s, subtypes: [{subtype: s, data: {}, context: [x]}]}]",
        "[{type: K8s, subtypes: [{data: {a: 1}}]}]",
        "[{type: K8s, subtypes: [5]}]",
        "[{type: K8s, subtypes: [{subtype: s, items: [{data: 7}]}]}]",
        "[{type: K8s, subtypes: 5}]",
    ],
)
def test_malformed_layout_is_a_clean_error(bad: str) -> None:
    err = reject(f"kind: Snapshot\nmeasurements: {bad}\n")
    assert "malformed" in err.message


def test_malformed_metadata_is_a_clean_error() -> None:
    err = reject(f"{EXAMPLE}".replace("metadata:\n", "metadata: 5\nx:\n", 1))
    assert "malformed" in err.message


# -- round trip ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip_keeps_every_reading(fmt: str, tmp_path: Path) -> None:
    original = parse_snapshot(EXAMPLE, "s")
    out = tmp_path / f"snap.{fmt}"
    save_snapshot(original, str(out), fmt)
    again = load_snapshot(str(out))
    assert again.to_document() == original.to_document()
    assert again.reading("OS", "release", "VERSION_ID") == "8.10"
    assert again.reading("K8s", "oke-addons", "addon-count") == 3
    if fmt == "json":
        doc = json.loads(out.read_text())
        assert doc["kind"] == "Snapshot" and doc["apiVersion"] == "aicr.run/v1"
    assert not [p for p in tmp_path.iterdir() if p.name != out.name], "no temp files left"


def test_render_is_deterministic_with_sorted_keys_and_header_first() -> None:
    s = parse_snapshot(EXAMPLE, "s")
    text = render_snapshot(s)
    assert text == render_snapshot(parse_snapshot(text, "again"))
    assert text.startswith("kind: Snapshot\napiVersion: aicr.run/v1\nmetadata:\n")
    server = text.index("goVersion: go1.24.4")
    assert server < text.index("platform: linux/arm64") < text.index("version: v1.34.1")


def test_version_like_strings_stay_strings() -> None:
    s = Snapshot(
        measurements=[
            Measurement(
                type="OS",
                subtypes=[Subtype(subtype="release", data={"VERSION_ID": "24.04", "B": "true"})],
            )
        ]
    )
    again = parse_snapshot(render_snapshot(s), "s")
    assert again.reading("OS", "release", "VERSION_ID") == "24.04"
    assert again.reading("OS", "release", "B") == "true"


def test_unknown_fields_survive_a_round_trip() -> None:
    text = EXAMPLE + "fingerprint: abc123\n"
    text = text.replace("  - type: GPU\n", "  - type: GPU\n    extra: keep-me\n")
    s = parse_snapshot(text, "s")
    again = parse_snapshot(render_snapshot(s, "json"), "s2")
    doc = again.to_document()
    assert doc["fingerprint"] == "abc123"
    assert [m for m in doc["measurements"] if m["type"] == "GPU"][0]["extra"] == "keep-me"


def test_nested_values_are_stringified_scalars_and_null_is_empty() -> None:
    s = parse_snapshot(
        "kind: Snapshot\nmeasurements: [{type: K8s, subtypes: [{subtype: p, data: "
        "{a: {b: 1}, c: [1, 2], d: null}}]}]\n",
        "s",
    )
    assert s.reading("K8s", "p", "a") == '{"b": 1}'
    assert s.reading("K8s", "p", "c") == "[1, 2]"
    assert s.reading("K8s", "p", "d") == ""


def test_items_and_context_round_trip() -> None:
    text = (
        "kind: Snapshot\nmeasurements:\n  - type: NetworkTopology\n    subtypes:\n"
        "      - subtype: pfs\n        context: {node: a}\n        items:\n"
        "          - {context: {node: a}, data: {name: mlx5_0, rail: 0}}\n"
    )
    s = parse_snapshot(text, "s")
    again = parse_snapshot(render_snapshot(s), "s2")
    sub = again.subtype("NetworkTopology", "pfs")
    assert sub is not None and sub.items is not None
    assert sub.items[0].data == {"name": "mlx5_0", "rail": 0}
    assert sub.context == {"node": "a"}


def test_render_rejects_unknown_format() -> None:
    with pytest.raises(AicrError) as info:
        render_snapshot(new_snapshot(), "table")
    assert "--format" in info.value.message


def test_load_missing_file_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_snapshot(str(tmp_path / "none.yaml"))
    assert info.value.exit_code == 2 and "none.yaml" in info.value.message


# -- look-ups and attach -------------------------------------------------------------------


def test_reading_not_found_names_what_is_missing() -> None:
    s = parse_snapshot(EXAMPLE, "s")
    for args, detail in [
        (("NodeTopology", "summary", "node-count"), "measurement type not found"),
        (("K8s", "aks-gpu-pools", "gpu-driver"), "subtype not found"),
        (("K8s", "server", "nope"), "key not found"),
    ]:
        with pytest.raises(AicrError) as info:
            s.reading(*args)
        assert info.value.code is ErrorCode.NOT_FOUND
        assert detail in info.value.message


def test_attach_appends_to_first_k8s_measurement() -> None:
    s = parse_snapshot(EXAMPLE, "s")
    s.measurements.append(Measurement(type="K8s", subtypes=[]))
    s.attach("K8s", Subtype(subtype="aks-gpu-pools", data={"gpu-pool-count": 0}))
    assert s.measurements[0].subtypes[-1].subtype == "aks-gpu-pools"
    assert s.measurements[-1].subtypes == []


def test_attach_creates_k8s_measurement_when_absent() -> None:
    s = new_snapshot()
    s.attach("K8s", Subtype(subtype="oke-addons", data={"addon-count": 0}))
    assert [m.type for m in s.measurements] == ["K8s"]
    assert s.reading("K8s", "oke-addons", "addon-count") == 0


def test_attach_replaces_a_same_name_subtype() -> None:
    s = parse_snapshot(EXAMPLE, "s")
    s.attach(
        "K8s",
        Subtype(subtype="oke-addons", data={"addon-count": 1, "nvidia-gpu-plugin": "installed"}),
    )
    names = [x.subtype for x in s.measurements[0].subtypes]
    assert names.count("oke-addons") == 1
    assert s.reading("K8s", "oke-addons", "nvidia-gpu-plugin") == "installed"


def test_new_snapshot_header() -> None:
    s = new_snapshot("node-1")
    assert s.kind == "Snapshot" and s.apiVersion == "aicr.run/v1"
    assert s.metadata["source-node"] == "node-1"
    assert s.metadata["timestamp"].endswith("Z") and "T" in s.metadata["timestamp"]
    assert s.metadata["version"].startswith("aicr-tui/")


# -- property: any scalar reading survives YAML and JSON ----------------------------------

_scalars = st.one_of(
    st.text(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=120, deadline=None)
@given(
    data=st.dictionaries(st.text(min_size=1), _scalars, max_size=5),
    fmt=st.sampled_from(["yaml", "json"]),
)
def test_any_reading_round_trips(data: dict[str, object], fmt: str) -> None:
    s = Snapshot(
        metadata={"note": "x"},
        measurements=[Measurement(type="K8s", subtypes=[Subtype(subtype="p", data=data)])],
    )
    again = parse_snapshot(render_snapshot(s, fmt), "s")
    assert again.measurements[0].subtypes[0].data == s.measurements[0].subtypes[0].data


def test_control_characters_round_trip_in_both_formats() -> None:
    data = {"\x85": "\u2028", "del": "\x7f", "cr": "a\rb", "bom": "\ufeffx", "tab": "a\tb\n"}
    s = Snapshot(measurements=[Measurement(type="K8s", subtypes=[Subtype(subtype="p", data=data)])])
    for fmt in ("yaml", "json"):
        again = parse_snapshot(render_snapshot(s, fmt), "s")
        assert again.measurements[0].subtypes[0].data == data


def test_json_snapshot_with_duplicate_keys_is_rejected() -> None:
    with pytest.raises(AicrError) as info:
        parse_snapshot('{"kind": "Snapshot", "kind": "Snapshot", "measurements": []}', "s.json")
    assert "duplicate key" in info.value.render()


def test_flow_yaml_starting_with_a_brace_still_parses() -> None:
    s = parse_snapshot("{kind: Snapshot, measurements: [{type: K8s, subtypes: []}]}", "s")
    assert [m.type for m in s.measurements] == ["K8s"]


def test_attach_can_append_instead_of_replacing_and_first_still_wins() -> None:
    s = parse_snapshot(EXAMPLE, "s")
    s.attach("K8s", Subtype(subtype="oke-addons", data={"addon-count": 9}), replace=False)
    names = [x.subtype for x in s.measurements[0].subtypes]
    assert names.count("oke-addons") == 2
    assert s.reading("K8s", "oke-addons", "addon-count") == 3


def test_unquoted_timestamps_keep_their_text() -> None:
    s = parse_snapshot(
        "kind: Snapshot\nmetadata: {timestamp: 2026-03-01T12:00:00Z}\nmeasurements: [{type: K8s,"
        " subtypes: [{subtype: p, data: {d: 2026-03-01, t: 2026-03-01T12:00:00.5+02:00}}]}]\n",
        "s",
    )
    assert s.metadata["timestamp"] == "2026-03-01T12:00:00Z"
    assert s.reading("K8s", "p", "d") == "2026-03-01"
    assert s.reading("K8s", "p", "t") == "2026-03-01T12:00:00.5+02:00"
