"""The troubleshooting guide: every brief symptom present, searchable, and diagnosed from state."""

from __future__ import annotations

import pytest

from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.recipe.troubleshooting import (
    GUIDE,
    Certainty,
    DiagnosisContext,
    diagnose,
    guide_entry,
    search_guide,
)
from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"


def ids(findings):
    return [f.entry.id for f in findings]


def snap(name):
    return load_snapshot(str(SNAPS / name))


def test_guide_ids_unique_and_every_entry_complete():
    assert len({e.id for e in GUIDE}) == len(GUIDE)
    for e in GUIDE:
        assert e.title and e.symptom and e.cause and e.remedy, e.id


@pytest.mark.parametrize(
    ("query", "entry_id"),
    [
        ("FailedCreatePodSandBox", "mixed-ownership-no-runtime"),
        ('no runtime for "nvidia"', "mixed-ownership-no-runtime"),
        ("0 desired", "nvsentinel-zero-desired"),
        ('RuntimeClass "nvidia" not found', "runtimeclass-nvidia-not-found"),
        ("revert", "manual-label-reverts"),
        ("not loadable yet", "peermem-not-loadable"),
        ("DMA-BUF", "peermem-not-loadable"),
        ("DynamoGraphDeployment TIMEOUT", "dynamo-timeout-slow-storage"),
        ("AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS", "dynamo-timeout-slow-storage"),
        ("NC40ads", "small-sku-full-node-floors"),
        ("legacy daemonset", "oke-legacy-plugin-active"),
        ("addon-deleting", "oke-addon-transitional"),
    ],
)
def test_search_finds_each_brief_symptom(query, entry_id):
    assert entry_id in [e.id for e in search_guide(query)]


def test_search_by_service_and_no_match():
    assert all("oke" in e.services for e in search_guide("", service="oke"))
    assert search_guide("no-such-words-anywhere") == []


def test_sentinel_entries_tell_the_two_faults_apart():
    zero = guide_entry("nvsentinel-zero-desired")
    rc = guide_entry("runtimeclass-nvidia-not-found")
    assert "0 DESIRED" in zero.symptom and "driver.installed" in zero.cause
    assert "0" in rc.symptom and "FailedCreate" in rc.symptom and "runtimeClass" in rc.cause


@pytest.mark.parametrize(
    ("snapshot", "value", "expected"),
    [
        ("aks-h100-none.yaml", None, "aks-pools-none-under-azure-managed"),
        ("aks-h100-install.yaml", "operator-managed", "aks-pools-install-under-operator-managed"),
        ("aks-h100-mixed.yaml", None, "aks-pools-mixed"),
        ("aks-h100-managed.yaml", "operator-managed", "aks-pools-managed"),
        ("aks-h100-no-pools.yaml", None, "aks-pools-reading-missing"),
        ("oke-gb200-active.yaml", "operator-managed", "oke-addon-installed-under-operator-managed"),
        ("oke-gb200-absent.yaml", None, "oke-addon-absent-under-oci-managed"),
        ("oke-gb200-deleting.yaml", None, "oke-addon-transitional"),
        ("oke-gb200-absent-legacy-active.yaml", "operator-managed", "oke-legacy-plugin-active"),
    ],
)
def test_qualification_failures_are_diagnosed_from_the_snapshot(snapshot, value, expected):
    service = snapshot.split("-")[0]
    found = diagnose(
        DiagnosisContext(snapshot=snap(snapshot), service=service, profile_value=value)
    )
    assert found[0].entry.id == expected
    assert found[0].certainty is Certainty.SHOWN
    assert found[0].evidence


@pytest.mark.parametrize(
    ("snapshot", "service", "value"),
    [
        ("aks-h100-install.yaml", "aks", "azure-managed"),
        ("aks-h100-none.yaml", "aks", "operator-managed"),
        ("oke-gb200-active.yaml", "oke", "oci-managed"),
        ("oke-gb200-absent.yaml", "oke", "operator-managed"),
    ],
)
def test_qualifying_selection_shows_no_cause(snapshot, service, value):
    found = diagnose(
        DiagnosisContext(snapshot=snap(snapshot), service=service, profile_value=value)
    )
    assert not [f for f in found if f.certainty is Certainty.SHOWN]


def test_none_pools_under_default_also_warn_of_the_runtime_failure():
    found = diagnose(DiagnosisContext(snapshot=snap("aks-h100-none.yaml"), service="aks"))
    assert "mixed-ownership-no-runtime" in ids(found)
    likely = next(f for f in found if f.entry.id == "mixed-ownership-no-runtime")
    assert likely.certainty is Certainty.LIKELY


def test_legacy_active_is_not_gated_under_oci_managed():
    found = diagnose(
        DiagnosisContext(snapshot=snap("oke-gb200-absent-legacy-active.yaml"), service="oke")
    )
    assert "oke-legacy-plugin-active" not in ids(found)


def test_service_is_inferred_from_the_readings():
    found = diagnose(DiagnosisContext(snapshot=snap("aks-h100-mixed.yaml")))
    assert "aks-pools-mixed" in ids(found)


def test_small_sku_from_pool_sizes():
    found = diagnose(
        DiagnosisContext(
            snapshot=snap("aks-h100-install.yaml"),
            service="aks",
            pool_vm_sizes=["Standard_NC40ads_H100_v5"],
        )
    )
    assert "small-sku-full-node-floors" in ids(found)
    plain = diagnose(
        DiagnosisContext(
            snapshot=snap("aks-h100-install.yaml"),
            service="aks",
            pool_vm_sizes=["Standard_ND96isr_H100_v5"],
        )
    )
    assert "small-sku-full-node-floors" not in ids(plain)


def _host_driver_recipe(nvsentinel: dict[str, object]) -> dict[str, object]:
    """A recipe whose GPU Operator leaves the driver to the host, with these NVSentinel values."""
    return {
        "componentRefs": [
            {
                "name": "gpu-operator",
                "overrides": {
                    "driver": {"enabled": False},
                    "operator": {"runtimeClass": "nvidia-container-runtime"},
                },
            },
            {"name": "nvsentinel", "overrides": nvsentinel},
        ]
    }


def test_recipe_values_show_the_nvsentinel_faults():
    recipe = _host_driver_recipe({"metadata-collector": {"runtimeClassName": "nvidia"}})
    found = ids(diagnose(DiagnosisContext(service="aks", recipe=recipe)))
    assert "nvsentinel-zero-desired" in found
    assert "runtimeclass-nvidia-not-found" in found
    assert "manual-label-reverts" in found
    good = _host_driver_recipe(
        {
            "labeler": {"assumeDriverInstalled": True},
            "metadata-collector": {"runtimeClassName": "nvidia-container-runtime"},
        }
    )
    assert diagnose(DiagnosisContext(service="aks", recipe=good)) == []


def test_dynamo_inference_and_oracle_operator_warnings():
    found = ids(diagnose(DiagnosisContext(service="aks", intent="inference", platform="dynamo")))
    assert found == ["dynamo-timeout-slow-storage"]
    warn = "NvidiaGpuOperator add-on is installed: disable it"
    found = ids(
        diagnose(
            DiagnosisContext(
                snapshot=snap("oke-gb200-active.yaml"), service="oke", capture_warnings=[warn]
            )
        )
    )
    assert "oke-oracle-operator-addons" in found


def test_old_kubernetes_is_named():
    s = snap("aks-h100-install.yaml")
    s.subtype("K8s", "server").data["version"] = "v1.33.5"
    found = diagnose(DiagnosisContext(snapshot=s, service="aks"))
    assert "kubernetes-below-1-34" in ids(found)


def test_core_troubleshooting_imports_no_ui():
    import subprocess
    import sys

    code = (
        "import sys, aicr_tui.core.recipe.troubleshooting; "
        "bad=[m for m in ('textual','rich','aicr_tui.screens') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("criteria", "profile", "snapshot"),
    [
        ({"service": "aks", "accelerator": "h100", "intent": "training"}, None, None),
        (
            {"service": "aks", "accelerator": "h100", "intent": "training"},
            "gpuStack=operator-managed",
            "aks-h100-none.yaml",
        ),
        (
            {
                "service": "aks",
                "accelerator": "h100",
                "os": "ubuntu",
                "intent": "inference",
                "platform": "dynamo",
            },
            "gpuStack=azure-managed",
            None,
        ),
        # Issue 33: every upstream OKE leaf names its OS (gb200-oke-training is Oracle Linux)
        ({"service": "oke", "accelerator": "gb200", "os": "ol", "intent": "training"}, None, None),
    ],
)
def test_the_recipe_view_diagnoses_as_the_whole_recipe_does(criteria, profile, snapshot):
    """What the screens hand diagnose (recipe_view: names and overrides off the model) finds
    what the whole dumped recipe finds, here and with nvsentinel's values changed so that
    its findings show."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.troubleshooting import recipe_view
    from tests.recipe_resolve import resolve

    snapshot_doc = snap(snapshot) if snapshot else None
    recipe = resolve(
        load_catalog(), parse_criteria(**criteria), profile=profile, snapshot=snapshot_doc
    )
    changed = recipe.model_copy(
        update={
            "componentRefs": [
                ref.model_copy(
                    update={"overrides": {"metadata-collector": {"runtimeClassName": "other"}}}
                )
                if ref.name == "nvsentinel"
                else ref
                for ref in recipe.componentRefs
            ]
        }
    )
    value = profile.split("=")[1] if profile else None
    for r in (recipe, changed):

        def found(doc, r=r):
            return diagnose(
                DiagnosisContext(
                    snapshot=snapshot_doc,
                    service=criteria["service"],
                    intent=criteria["intent"],
                    platform=criteria.get("platform"),
                    profile_value=value,
                    recipe=doc,
                )
            )

        whole = found(r.model_dump(mode="json", exclude_none=True))
        assert found(recipe_view(r)) == whole
    assert recipe_view(None) is None
    if criteria["service"] == "aks":  # the nvsentinel values are diagnosed on AKS
        assert "runtimeclass-nvidia-not-found" in ids(found(recipe_view(changed)))
