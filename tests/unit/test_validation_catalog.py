"""Validator catalog: embedded entries, --data override, image rewrites, declared-check pre-flight."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.validation.catalog import (
    knob,
    knob_duration,
    load_validator_catalog,
    parse_duration,
    preflight_declared_checks,
    rewrite_image,
)
from aicr_tui.core.validation.checks.registry import is_implemented

# Check names the shipped overlays declare, per phase (B1's overlays).
DECLARED = {
    "deployment": [
        "operator-health",
        "expected-resources",
        "gpu-operator-version",
        "check-nvidia-smi",
    ],
    "performance": [
        "nccl-all-reduce-bw",
        "inference-perf",
        "nccl-all-reduce-bw-nvls",
        "nccl-all-reduce-bw-net",
    ],
    "conformance": [
        "platform-health",
        "gpu-operator-health",
        "dra-support",
        "accelerator-metrics",
        "ai-service-metrics",
        "gang-scheduling",
        "pod-autoscaling",
        "cluster-autoscaling",
        "robust-controller",
        "secure-accelerator-access",
        "inference-gateway",
        "slinky-slurm-health",
    ],
}


def test_embedded_catalog_has_exactly_one_entry_per_declared_check() -> None:
    cat = load_validator_catalog(environ={})
    for phase, names in DECLARED.items():
        for name in names:
            matches = [e for e in cat.validators if e.name == name]
            assert len(matches) == 1 and matches[0].phase == phase, name
    preflight_declared_checks(DECLARED, cat)
    assert {e.name for e in cat.validators} == {n for names in DECLARED.values() for n in names}


def test_must_have_checks_are_implemented() -> None:
    for name in [
        "operator-health",
        "expected-resources",
        "gpu-operator-version",
        "check-nvidia-smi",
        "nccl-all-reduce-bw",
        "inference-perf",
        "dra-support",
        "secure-accelerator-access",
        "gpu-operator-health",
        "platform-health",
        "gang-scheduling",
        "accelerator-metrics",
        "ai-service-metrics",
        "inference-gateway",
        "pod-autoscaling",
        "cluster-autoscaling",
        "robust-controller",
    ]:
        assert is_implemented(name), name
    # every check of the embedded catalog has a function: none is "not implemented"
    for entry in load_validator_catalog(environ={}).validators:
        assert is_implemented(entry.name), entry.name
    assert not is_implemented("no-such-check")


def test_catalog_knobs_and_nccl_image_note() -> None:
    cat = load_validator_catalog(environ={})
    perf = cat.entry("inference-perf", "performance")
    assert perf is not None
    assert knob_duration(perf, "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT", "1m") == 600
    assert knob_duration(perf, "AICR_INFERENCE_PERF_HEALTH_TIMEOUT", "1m") == 300
    assert knob(perf, "AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS", "default") == "default"
    assert perf.timeout_s == 65 * 60
    nccl = cat.entry("nccl-all-reduce-bw")
    assert nccl is not None and nccl.image.startswith("public.ecr.aws/")
    assert "public.ecr.aws" in nccl.note


def test_data_dir_replaces_an_entry_and_adds_new_ones(tmp_path: Path) -> None:
    (tmp_path / "validators").mkdir()
    (tmp_path / "validators" / "catalog.yaml").write_text(
        """apiVersion: validator.nvidia.com/v1alpha1
kind: ValidatorCatalog
metadata: {name: mine}
validators:
  - name: inference-perf
    phase: performance
    image: registry.example/aiperf:1.2
    timeout: 90m
    env:
      - {name: AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT, value: 30m}
      - {name: AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS, value: premium2-disk}
  - name: my-check
    phase: conformance
    image: registry.example/check:1
""",
        encoding="utf-8",
    )
    cat = load_validator_catalog(tmp_path, environ={})
    perf = cat.entry("inference-perf")
    assert perf is not None and perf.timeout_s == 90 * 60
    assert knob_duration(perf, "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT", "10m") == 1800
    assert knob(perf, "AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS", "") == "premium2-disk"
    # the replacement is whole: knobs it does not set fall back to the code default
    assert knob(perf, "AICR_INFERENCE_PERF_HEALTH_TIMEOUT", "5m") == "5m"
    assert cat.validators[-1].name == "my-check"
    names = [e.name for e in cat.validators]
    assert names.index("inference-perf") < names.index("my-check")


def test_malformed_catalogs_are_refused(tmp_path: Path) -> None:
    (tmp_path / "validators").mkdir()
    path = tmp_path / "validators" / "catalog.yaml"
    path.write_text(
        "apiVersion: validator.nvidia.com/v1alpha1\nkind: ValidatorCatalog\nvalidators:\n  - {name: x, phase: bogus, image: i}\n"
    )
    with pytest.raises(AicrError, match='phase "bogus"'):
        load_validator_catalog(tmp_path, environ={})
    path.write_text(
        "apiVersion: validator.nvidia.com/v1alpha1\nkind: ValidatorCatalog\nvalidators:\n  - {name: x, phase: conformance, image: i, timeout: soon}\n"
    )
    with pytest.raises(AicrError, match="not a duration"):
        load_validator_catalog(tmp_path, environ={})
    path.write_text("kind: Other\n")
    with pytest.raises(AicrError, match="kind"):
        load_validator_catalog(tmp_path, environ={})
    with pytest.raises(AicrError, match="not a directory"):
        load_validator_catalog(tmp_path / "missing", environ={})


def test_durations_and_image_rewrites() -> None:
    assert parse_duration("1h5m30s", "t") == 3930
    assert parse_duration("90s", "t") == 90
    assert parse_duration("0", "t") == 0
    env = {"AICR_VALIDATOR_IMAGE_REGISTRY": "localhost:5001", "AICR_VALIDATOR_IMAGE_TAG": "v9.9.9"}
    assert (
        rewrite_image("ghcr.io/nvidia/aicr-validators/conformance:latest", env)
        == "localhost:5001/aicr-validators/conformance:v9.9.9"
    )
    assert (
        rewrite_image("public.ecr.aws/hpc-cloud/nccl-tests:x", env)
        == "public.ecr.aws/hpc-cloud/nccl-tests:x"
    )
    cat = load_validator_catalog(environ=env)
    entry = cat.entry("dra-support")
    assert entry is not None and entry.image == "localhost:5001/aicr-validators/conformance:v9.9.9"


def test_declared_check_preflight_reports_every_offender() -> None:
    cat = load_validator_catalog(environ={})
    with pytest.raises(AicrError) as info:
        preflight_declared_checks(
            {
                "deployment": [
                    "operator-health",
                    "operator-health",
                    "nccl-all-reduce-bw",
                    "typo-check",
                ]
            },
            cat,
        )
    text = info.value.render()
    assert info.value.exit_code == 2
    assert 'declared check "operator-health" is declared more than once in phase deployment' in text
    assert (
        'declared check "nccl-all-reduce-bw" in phase deployment matches no validator in the catalog (found under phase: performance)'
        in text
    )
    assert (
        'declared check "typo-check" in phase deployment matches no validator in the catalog'
        in text
    )


def test_every_shipped_overlay_passes_the_declared_check_preflight() -> None:
    from aicr_tui.core.foundation.yamlio import load_yaml_plain
    from tests.conftest import RECIPES

    cat = load_validator_catalog(environ={})
    seen = 0
    for path in sorted((RECIPES / "overlays").glob("*.yaml")):
        doc = load_yaml_plain(path.read_text(encoding="utf-8"), str(path)) or {}
        validation = (doc.get("spec") or {}).get("validation") or {}
        declared = {
            p: (b or {}).get("checks") or [] for p, b in validation.items() if p != "readiness"
        }
        seen += sum(len(v) for v in declared.values())
        preflight_declared_checks(declared, cat)
    assert seen > 0
