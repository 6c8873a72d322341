"""``K8s.oke-legacy-plugin``: spec oke.md §2 (incl. the §2.5 table) and the product decision."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.capture.oke_legacy import (
    classify_legacy_daemonset,
    load_legacy_daemonset,
    project_legacy_daemonset,
)
from aicr_tui.core.foundation.errors import AicrError
from tests.conftest import invalid_request

CAPTURES = Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes" / "samples" / "captures"
RECONCILE = {"addonmanager.kubernetes.io/mode": "Reconcile"}


def daemonset(labels: dict[str, str] | None, desired: int | None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-gpu-device-plugin", "namespace": "kube-system"},
    }
    if labels is not None:
        obj["metadata"]["labels"] = labels
    if desired is not None:
        obj["status"] = {"desiredNumberScheduled": desired, "numberReady": desired}
    return obj


def reading(p: Any) -> tuple[str, str]:
    data = p.subtype.data
    assert p.subtype.subtype == "oke-legacy-plugin"
    assert set(data) == {"nvidia-gpu-device-plugin", "daemonset"}, "both keys, always"
    return data["nvidia-gpu-device-plugin"], data["daemonset"]


# -- §2.5 table ----------------------------------------------------------------------------


def test_table_not_present() -> None:
    assert reading(classify_legacy_daemonset(None)) == ("none", "absent")


def test_table_reconcile_labelled_with_three_desired() -> None:
    result = classify_legacy_daemonset(daemonset(RECONCILE, 3))
    assert reading(result) == ("active", "active")
    assert result.desired == 3


def test_table_unrelated_same_name_workload_product_decision() -> None:
    assert reading(classify_legacy_daemonset(daemonset({"app": "custom"}, 3))) == (
        "none",
        "unrelated",
    )


# -- §2.2 collapse rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    ["forbidden: User cannot get daemonsets", "timeout", "connection refused", ""],
)
def test_any_api_error_is_unknown_never_none(error: str) -> None:
    result = classify_legacy_daemonset(None, error=error)
    assert reading(result) == ("unknown", "unknown")
    assert "could not read" in result.reason


def test_error_wins_even_when_an_object_is_passed() -> None:
    assert reading(classify_legacy_daemonset(daemonset(RECONCILE, 3), error="x")) == (
        "unknown",
        "unknown",
    )


@pytest.mark.parametrize(
    "labels",
    [
        None,
        {},
        {"app": "custom"},
        {"addonmanager.kubernetes.io/mode": "EnsureExists"},
        {"addonmanager.kubernetes.io/mode": "reconcile"},
        {"addonmanager.kubernetes.io/mode": "RECONCILE"},
        {"addonmanager.kubernetes.io/mode": " Reconcile"},
        {"addonmanager.kubernetes.io/mode": ""},
        {"Addonmanager.kubernetes.io/mode": "Reconcile"},
    ],
)
@pytest.mark.parametrize("desired", [0, 1, 3])
def test_without_exact_reconcile_label_is_unrelated(
    labels: dict[str, str] | None, desired: int
) -> None:
    assert reading(classify_legacy_daemonset(daemonset(labels, desired))) == (
        "none",
        "unrelated",
    )


def test_reconcile_with_zero_desired_is_disabled() -> None:
    assert reading(classify_legacy_daemonset(daemonset(RECONCILE, 0))) == ("none", "disabled")


def test_reconcile_without_status_is_unknown_never_none() -> None:
    """Reproduction (issue 14): a labelled DaemonSet manifest with no ``status`` (not an API
    read) read ``none``/``disabled`` and so could qualify operator-managed; it cannot say how
    many nodes the plugin targets, so it fails closed."""
    result = classify_legacy_daemonset(daemonset(RECONCILE, None))
    assert reading(result) == ("unknown", "unknown")
    assert result.desired is None and "no status.desiredNumberScheduled" in result.reason
    empty_status = daemonset(RECONCILE, None)
    empty_status["status"] = {}
    assert reading(classify_legacy_daemonset(empty_status)) == ("unknown", "unknown")


def test_offline_manifest_file_without_status_reads_unknown(tmp_path: Path) -> None:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(daemonset(RECONCILE, None)))
    assert reading(load_legacy_daemonset(path)) == ("unknown", "unknown")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"kind": "List", "items": [daemonset(RECONCILE, None)]}))
    assert reading(load_legacy_daemonset(listed)) == ("unknown", "unknown")


@pytest.mark.parametrize("desired", [1, 2, 500])
def test_reconcile_with_desired_nodes_is_active(desired: int) -> None:
    assert reading(classify_legacy_daemonset(daemonset(RECONCILE, desired))) == (
        "active",
        "active",
    )


def test_snake_case_status_from_sdk_dicts_is_understood() -> None:
    obj = daemonset(RECONCILE, None)
    obj["status"] = {"desired_number_scheduled": 2}
    assert reading(classify_legacy_daemonset(obj)) == ("active", "active")


@pytest.mark.parametrize("bad", ["3", 2.5, True, [1]])
def test_non_integer_desired_is_an_error(bad: object) -> None:
    obj = daemonset(RECONCILE, None)
    obj["status"] = {"desiredNumberScheduled": bad}
    with pytest.raises(AicrError) as info:
        classify_legacy_daemonset(obj)
    assert "desiredNumberScheduled" in info.value.message


def test_negative_desired_is_an_error() -> None:
    with pytest.raises(AicrError):
        classify_legacy_daemonset(daemonset(RECONCILE, -1))


# -- offline file forms --------------------------------------------------------------------


def project(doc: Any) -> tuple[str, str]:
    return reading(project_legacy_daemonset(json.dumps(doc).encode(), "ds.json"))


def test_single_object_form() -> None:
    assert project(daemonset(RECONCILE, 3)) == ("active", "active")


def test_list_form_without_the_daemonset_is_absent() -> None:
    other = daemonset(RECONCILE, 3)
    other["metadata"]["name"] = "kube-proxy"
    doc = {"apiVersion": "v1", "kind": "List", "items": [other], "metadata": {}}
    assert project(doc) == ("none", "absent")


def test_empty_list_is_absent() -> None:
    assert project({"apiVersion": "v1", "kind": "List", "items": []}) == ("none", "absent")


@pytest.mark.parametrize("kind", ["List", "DaemonSetList", None])
def test_list_form_with_the_daemonset(kind: str | None) -> None:
    doc: dict[str, Any] = {"items": [daemonset({"x": "y"}, 1), daemonset(RECONCILE, 2)]}
    doc["items"][0]["metadata"]["name"] = "csi-oci-node"
    if kind:
        doc["kind"] = kind
    assert project(doc) == ("active", "active")


def test_list_item_in_another_namespace_is_not_the_plugin() -> None:
    item = daemonset(RECONCILE, 3)
    item["metadata"]["namespace"] = "gpu-operator"
    assert project({"kind": "List", "items": [item]}) == ("none", "absent")


def test_list_item_without_namespace_is_accepted() -> None:
    item = daemonset(RECONCILE, 0)
    del item["metadata"]["namespace"]
    assert project({"kind": "List", "items": [item]}) == ("none", "disabled")


def test_list_with_an_unrelated_same_name_daemonset() -> None:
    assert project({"kind": "List", "items": [daemonset({"app": "custom"}, 3)]}) == (
        "none",
        "unrelated",
    )


def test_single_object_with_another_name_is_rejected() -> None:
    obj = daemonset(RECONCILE, 3)
    obj["metadata"]["name"] = "kube-proxy"
    with pytest.raises(AicrError) as info:
        project_legacy_daemonset(json.dumps(obj).encode(), "ds.json")
    assert "kube-system/kube-proxy" in info.value.message
    assert "kube-system/nvidia-gpu-device-plugin" in info.value.message


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "{",
        "[]",
        "null",
        "5",
        '{"kind":"Pod"}',
        '{"kind":"List"}',
        '{"kind":"List","items":{}}',
        '{"kind":"List","items":[5]}',
        '{"kind":"DaemonSet","metadata":"x"}',
        '{"kind":"DaemonSet","metadata":{"name":"nvidia-gpu-device-plugin","labels":[]}}',
        '{"kind":"DaemonSet","metadata":{"name":"nvidia-gpu-device-plugin"},"status":[]}',
        '{"kind":"List","items":[]} trailing',
    ],
)
def test_malformed_dumps_are_errors(raw: str) -> None:
    assert "ds.json" in invalid_request(project_legacy_daemonset, raw.encode(), "ds.json").message


def test_decode_error_names_both_kubectl_commands() -> None:
    with pytest.raises(AicrError) as info:
        project_legacy_daemonset(b"{", "ds.json")
    assert "kubectl get daemonsets -n kube-system -o json" in info.value.message
    assert "kubectl get daemonset -n kube-system nvidia-gpu-device-plugin -o json" in (
        info.value.message
    )


def test_bad_desired_in_a_file_names_the_file() -> None:
    obj = daemonset(RECONCILE, None)
    obj["status"] = {"desiredNumberScheduled": "three"}
    with pytest.raises(AicrError) as info:
        project_legacy_daemonset(json.dumps(obj).encode(), "ds.json")
    assert '"ds.json"' in info.value.message and "desiredNumberScheduled" in info.value.message


def test_shipped_samples() -> None:
    active = load_legacy_daemonset(CAPTURES / "oke-legacy-daemonset-active.json")
    assert reading(active) == ("active", "active") and active.desired == 3
    none = load_legacy_daemonset(CAPTURES / "oke-legacy-daemonsets-none.json")
    assert reading(none) == ("none", "absent")


def test_file_rules_match_the_other_dumps(tmp_path: Path) -> None:
    with pytest.raises(AicrError) as info:
        load_legacy_daemonset(tmp_path / "missing.json")
    assert 'failed to open OKE legacy device-plugin DaemonSet file "' in info.value.message
    assert "kubectl get daemonsets" in info.value.render()
    link = tmp_path / "link.json"
    link.symlink_to(CAPTURES / "oke-legacy-daemonset-active.json")
    with pytest.raises(AicrError) as info:
        load_legacy_daemonset(link)
    assert "is a symlink" in info.value.message
    big = tmp_path / "big.json"
    body = json.dumps(copy.deepcopy(daemonset(RECONCILE, 1))).encode()
    big.write_bytes(body + b" " * (1_048_577 - len(body)))
    with pytest.raises(AicrError) as info:
        load_legacy_daemonset(big)
    assert "exceeds 1048576 bytes" in info.value.message


# -- a status the DaemonSet controller has not written yet ---------------------------------
# What the v1.34 API server answered for the shipped DaemonSet the moment it was created
# (`kubectl create --dry-run=server -o json`): the server defaults desiredNumberScheduled to 0
# and sets no observedGeneration until the DaemonSet controller's first sync.
UNSYNCED = (
    Path(__file__).resolve().parents[1] / "data" / "live" / "k8s-legacy-daemonset-unsynced.json"
)


def test_a_status_the_controller_has_not_written_reads_unknown_not_disabled() -> None:
    obj = json.loads(UNSYNCED.read_text())
    assert obj["status"]["desiredNumberScheduled"] == 0
    assert "observedGeneration" not in obj["status"] and obj["metadata"]["generation"] == 1
    result = classify_legacy_daemonset(obj)
    assert reading(result) == ("unknown", "unknown")
    assert "has not synced it yet" in result.reason and "generation 1" in result.reason
    # The same answer saved with kubectl and passed as a file reads the same.
    from_file = project_legacy_daemonset(UNSYNCED.read_bytes(), "unsynced.json")
    assert reading(from_file) == ("unknown", "unknown")


@pytest.mark.parametrize(
    ("generation", "observed", "desired", "expected"),
    [
        (2, 1, 3, ("unknown", "unknown")),  # spec changed, controller still on the old one
        (2, 1, 0, ("unknown", "unknown")),
        (1, 1, 0, ("none", "disabled")),  # observed: a real 0
        (3, 3, 2, ("active", "active")),
        (1, 2, 2, ("active", "active")),  # observed ahead (a read racing an update)
    ],
)
def test_observed_generation_gates_the_desired_count(
    generation: int, observed: int, desired: int, expected: tuple[str, str]
) -> None:
    obj = daemonset(RECONCILE, desired)
    obj["metadata"]["generation"] = generation
    obj["status"]["observedGeneration"] = observed
    assert reading(classify_legacy_daemonset(obj)) == expected


def test_an_unrelated_workload_stays_unrelated_before_its_first_sync() -> None:
    obj = json.loads(UNSYNCED.read_text())
    obj["metadata"]["labels"] = {"app": "custom"}
    assert reading(classify_legacy_daemonset(obj)) == ("none", "unrelated")
