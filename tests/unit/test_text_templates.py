"""Prose and manifests shipped as files (issue 36 item 4): the bundle README's sections
(``aicr_tui/core/bundler/readme/``) and the validation workloads' manifests
(``aicr_tui/core/validation/checks/manifests/``) are filled through ``@NAME@`` slots, checked at that
boundary: every shipped file fills, a missing or an unknown slot is an error, never a blank."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import prose
from aicr_tui.core.foundation import slots
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.validation.checks import manifest_files
from aicr_tui.core.validation.checks import performance as perf

ROOT = Path(__file__).resolve().parents[2]


def _readme_templates() -> list[str]:
    return sorted(f[: -len(".md")] for f in os.listdir(prose.README) if f.endswith(".md"))


def _slots_of(name: str) -> frozenset[str]:
    with open(os.path.join(prose.README, f"{name}.md"), encoding="utf-8") as handle:
        return slots.names(slots.split(handle.read()))


@pytest.mark.parametrize("name", _readme_templates())
def test_every_readme_section_fills_with_exactly_its_slots(name: str) -> None:
    wanted = _slots_of(name)
    text = prose.section(name, **{s: f"<{s}>" for s in wanted})
    assert not slots.SLOT.search(text), f"{name}.md left a slot unfilled"
    for s in wanted:
        assert f"<{s}>" in text
    if wanted:
        missing = sorted(wanted)[0]
        with pytest.raises(AicrError) as err:
            prose.section(name, **{s: "" for s in wanted - {missing}})
        assert err.value.code is ErrorCode.INTERNAL
        assert f"missing slots ['{missing}']" in err.value.message
    with pytest.raises(AicrError) as err:
        prose.section(name, **{s: "" for s in wanted}, not_a_slot="x")
    assert "unknown slots ['not_a_slot']" in err.value.message


def test_every_phrase_fills_and_a_value_never_fills_a_slot() -> None:
    for group, texts in prose.phrases().items():
        for key, text in texts.items():
            wanted = slots.names(slots.split(text))
            # a value that looks like a slot stays as written: one pass over the file's text
            filled = prose.phrase(group, key, **{s: "@REPO@" for s in wanted})
            assert filled.count("@REPO@") == len(slots.split(text)[1::2])
    with pytest.raises(AicrError, match="has no serial.nowhere"):
        prose.phrase("serial", "nowhere")


def _value(slot: str) -> Any:
    """A value of the shape each manifest slot takes."""
    return {
        "labels": {"app": "x"},
        "limits": {"nvidia.com/gpu": "8"},
        "node_names": ["n1", "n2"],
    }.get(slot, 7 if slot in ("num_nodes", "gpus", "ranks", "workers", "ssh_port") else "v")


@pytest.mark.parametrize("name", manifest_files.names())
def test_every_manifest_template_fills_with_exactly_its_slots(name: str) -> None:
    wanted = slots.data_names(manifest_files.load(name))
    doc = manifest_files.manifest(name, **{s: _value(s) for s in wanted})
    assert not slots.data_names(doc), f"{name}.yaml left a slot unfilled"
    if name != "dynamo-model-cache":  # an entry of a manifest, not a manifest
        assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["namespace"] == "v"
    if wanted:
        missing = sorted(wanted)[0]
        with pytest.raises(AicrError, match=rf"missing slots \['{missing}'\]"):
            manifest_files.manifest(name, **{s: _value(s) for s in wanted - {missing}})
    with pytest.raises(AicrError, match=r"unknown slots \['extra'\]"):
        manifest_files.manifest(name, **{s: _value(s) for s in wanted}, extra="x")


def test_a_filled_manifest_is_fresh_data_not_text() -> None:
    labels = {"app": "x"}
    first = manifest_files.manifest("nccl-trainjob", namespace="ns", labels=labels)
    first["metadata"]["labels"]["changed"] = "yes"
    first["spec"]["runtimeRef"]["name"] = "changed"
    again = manifest_files.manifest("nccl-trainjob", namespace="ns", labels=labels)
    assert labels == {"app": "x"}
    assert again["metadata"]["labels"] == {"app": "x"}
    assert again["spec"]["runtimeRef"]["name"] == "nccl-all-reduce-runtime"
    with pytest.raises(AicrError, match="inside text needs text or a number"):
        slots.fill_data("t", {"a": "x @B@"}, b=["list"])


def test_the_manifests_name_what_the_check_looks_for() -> None:
    """The names the check code polls and deletes by are the ones the files create."""
    secret = manifest_files.manifest(
        "nccl-ssh-secret", namespace="ns", labels={}, private_key="k", authorized_keys="a"
    )
    service = manifest_files.manifest(
        "nccl-service", namespace="ns", labels={}, run_id="r", ssh_port=perf.NCCL_SSH_PORT
    )
    assert secret["metadata"]["name"] == perf.NCCL_SECRET
    assert service["metadata"]["name"] == perf.NCCL_SERVICE
    assert service["spec"]["selector"] == {
        perf.RUN_ID_LABEL: "r",
        perf.NCCL_ROLE_LABEL: "worker",
    }
    for name in ("nccl-worker", "nccl-launcher"):
        volume = manifest_files.load(name)["spec"]["volumes"][0]
        assert volume == {
            "name": "ssh",
            "secret": {"secretName": perf.NCCL_SECRET, "defaultMode": 0o400},
        }
    runtime = manifest_files.load("nccl-runtime")
    trainjob = manifest_files.load("nccl-trainjob")
    assert (
        runtime["apiVersion"]
        == trainjob["apiVersion"]
        == (f"{perf.TRAINER_GROUP}/{perf.TRAINER_VERSION}")
    )
    assert trainjob["spec"]["runtimeRef"]["apiGroup"] == perf.TRAINER_GROUP
    domain = manifest_files.load("compute-domain")
    assert domain["apiVersion"] == f"{perf.COMPUTE_DOMAIN_GROUP}/{perf.COMPUTE_DOMAIN_VERSION}"
    assert domain["spec"]["channel"]["resourceClaimTemplate"]["name"] == perf.IMEX_CLAIM_TEMPLATE
    assert manifest_files.load("dynamo")["apiVersion"] == (
        f"{perf.DYNAMO_GROUP}/{perf.DYNAMO_VERSION}"
    )


def test_the_wheel_ships_the_files() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = data["package-data"]
    assert "readme/*" in shipped["aicr_tui.core.bundler"]
    assert "manifests/*" in shipped["aicr_tui.core.validation.checks"]
