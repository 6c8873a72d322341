"""A capture that contradicts the stated criteria (issue 33 item 3): every place a
snapshot holds the service, the accelerator or the OS is read, and a contradiction is a
failed check with both values, never a pass. Only the AKS H100 and OKE GB200 OL training
leaves are assumed to exist."""

from __future__ import annotations

from aicr_tui.core.documents.snapshot import Snapshot, Subtype, load_snapshot
from aicr_tui.core.recipe.capture_match import accelerator_of, criteria_conflicts, observed_criteria
from aicr_tui.core.services.capture import qualify_selection
from aicr_tui.core.validation.readiness import evaluate_readiness, readiness_refusal
from aicr_tui.core.validation.recipe_view import RecipeView
from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"
AKS_H100 = {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training"}
OKE_GB200 = {"service": "oke", "accelerator": "gb200", "os": "ol", "intent": "training"}


def snap(name: str) -> Snapshot:
    return load_snapshot(str(SNAPS / f"{name}.yaml"))


def gpu(s: Snapshot) -> Subtype:
    sub = s.subtype("GPU", "hardware")
    assert sub is not None
    return sub


def a100_capture() -> Snapshot:
    """The AKS H100 sample with the GPU of an A100 node (the H100 recipe must not pass)."""
    s = snap("aks-h100-install")
    gpu(s).data["model"] = "NVIDIA A100-SXM4-80GB"
    # The sample records its pools' VM sizes: an A100 node pool names the A100 SKU.
    pools = s.subtype("K8s", "aks-gpu-pools")
    assert pools is not None and pools.context is not None
    pools.context["vm-sizes"] = pools.context["vm-sizes"].replace(
        "Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4"
    )
    return s


def test_product_sku_and_shape_names_spell_their_accelerator() -> None:
    assert accelerator_of("NVIDIA H100 80GB HBM3") == "h100"
    assert accelerator_of("NVIDIA-H100-80GB-HBM3") == "h100"
    assert accelerator_of("NVIDIA GB200") == "gb200"
    assert accelerator_of("NVIDIA B200") == "b200"
    assert accelerator_of("Standard_ND96isr_H100_v5") == "h100"
    assert accelerator_of("Standard_ND96asr_v4") == "a100"
    assert accelerator_of("Standard_ND96amsr_A100_v4") == "a100"
    assert accelerator_of("BM.GPU.GB200.4") == "gb200"
    assert accelerator_of("BM.GPU4.8") == "a100"
    assert accelerator_of("BM.GPU.L40S.4") == "l40s"
    assert accelerator_of("NVIDIA-RTX-PRO-6000-Blackwell") == "rtx-pro-6000"
    assert accelerator_of("Standard_D8s_v5") == ""


def test_the_sample_captures_agree_with_their_own_leaves() -> None:
    assert criteria_conflicts(AKS_H100, snap("aks-h100-install")) == []
    assert criteria_conflicts(OKE_GB200, snap("oke-gb200-active")) == []
    assert criteria_conflicts({"service": "aks", "accelerator": None}, None) == []


def test_every_reading_of_the_accelerator_is_checked() -> None:
    # The GPU Feature Discovery label alone (no model reading, no pool VM sizes).
    s = snap("aks-h100-install")
    sub = gpu(s)
    del sub.data["model"]
    pools = s.subtype("K8s", "aks-gpu-pools")
    assert pools is not None
    pools.context = None
    sub.context = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    (c,) = criteria_conflicts({"accelerator": "b200"}, s)
    assert (c.stated, c.observed.value, c.observed.raw) == ("b200", "h100", "NVIDIA-H100-80GB-HBM3")
    assert "nvidia.com/gpu.product" in c.observed.reading
    # A pool's VM size, or a node shape, when the capture records one.
    del sub.context["nvidia.com/gpu.product"]
    pools.context = {"vm-sizes": "gpupool1=Standard_ND96isr_H100_v5"}
    (c,) = criteria_conflicts({"accelerator": "gb200"}, s)
    assert c.observed.value == "h100" and c.observed.raw == "Standard_ND96isr_H100_v5"
    node = s.subtype("K8s", "node")
    assert node is not None
    pools.context = None
    node.context = {"node.kubernetes.io/instance-type": "BM.GPU.GB200.4"}
    (c,) = criteria_conflicts({"accelerator": "h100"}, s)
    assert c.observed.value == "gb200"
    # Any reading that records the stated value is agreement.
    assert criteria_conflicts({"accelerator": "gb200"}, s) == []


def test_service_and_os_conflicts_name_the_reading() -> None:
    found = criteria_conflicts({"service": "oke", "os": "ol"}, snap("aks-h100-install"))
    assert [(c.dimension, c.stated, c.observed.value) for c in found] == [
        ("service", "oke", "aks"),
        ("os", "ol", "ubuntu"),
    ]
    assert found[0].observed.reading == "K8s.node.provider" and found[0].observed.raw == "azure"
    assert "aks" in observed_criteria(snap("aks-h100-install"))["service"][0].value


def test_qualification_never_passes_a_contradicted_accelerator() -> None:
    sel = qualify_selection(AKS_H100, None, a100_capture())
    v = sel.verdict
    assert not v.ok
    assert v.recipe is not None  # resolved for the stated value; the CLI warns or refuses
    first = v.checks[0]
    assert (first.name, first.expected, first.status) == ("criteria.accelerator", "h100", "failed")
    assert first.actual is not None and "a100" in first.actual
    assert "A100-SXM4-80GB" in first.actual
    assert v.conflict_refusal is not None and v.conflict_refusal.exit_code == 2
    text = v.conflict_refusal.render()
    assert "snapshot is from aks/A100 (provider azure); the recipe is for aks/H100" in text
    assert "--accelerator a100" in text  # the capture's value, as the remedy


def test_a_wrong_provider_snapshot_is_named_instead_of_a_recapture_hint() -> None:
    sel = qualify_selection(OKE_GB200, None, snap("aks-h100-install"))
    v = sel.verdict
    assert not v.ok and v.error is not None and v.error.exit_code == 2
    text = v.error.render()
    assert "snapshot is from aks/H100 (provider azure); the recipe is for oke/GB200" in text
    assert "oci ce cluster list-addons" not in text  # not the OKE recapture hint
    assert {c.name for c in v.checks if c.kind == "capture"} >= {
        "criteria.service",
        "criteria.accelerator",
    }


def test_an_oke_capture_for_an_aks_recipe_is_named_the_other_way_round() -> None:
    v = qualify_selection({"service": "aks", "intent": "training"}, None, snap("oke-gb200-active"))
    assert not v.verdict.ok and v.verdict.error is not None
    text = v.verdict.error.render()
    assert "snapshot is from oke/GB200 (provider oci); the recipe is for aks/GB200" in text
    assert "az aks nodepool list" not in text and "--service oke" in text


def test_derived_criteria_never_conflict() -> None:
    sel = qualify_selection({"intent": "training"}, None, snap("aks-h100-install"))
    assert sel.verdict.ok and sel.verdict.conflicts == []


def test_readiness_refuses_a_contradicting_snapshot() -> None:
    sel = qualify_selection(AKS_H100, None, snap("aks-h100-install"))
    assert sel.verdict.recipe is not None
    view = RecipeView.of(sel.verdict.recipe)
    good = evaluate_readiness(view, snap("aks-h100-install"))
    assert readiness_refusal(view, snap("aks-h100-install"), good) is None
    bad_snap = a100_capture()
    outcomes = evaluate_readiness(view, bad_snap)
    assert outcomes[0].name == "criteria.accelerator" and outcomes[0].status == "failed"
    refusal = readiness_refusal(view, bad_snap, outcomes)
    assert refusal is not None and refusal.exit_code == 2
    assert (
        "snapshot is from aks/A100 (provider azure); the recipe is for aks/H100" in refusal.render()
    )


def test_the_pool_dump_records_its_vm_sizes_and_they_are_read() -> None:
    from aicr_tui.core.capture.aks_pools import load_aks_pools

    projection = load_aks_pools(SAMPLES / "captures" / "aks-pools-install.json")
    context = projection.subtype.context or {}
    assert "Standard_ND96isr_H100_v5" in context["vm-sizes"]
    assert "Standard_D8s_v6" not in context["vm-sizes"]  # a CPU pool is no GPU pool
    s = snap("aks-h100-no-pools")
    del gpu(s).data["model"]
    k8s = s.measurement("K8s")
    assert k8s is not None
    k8s.subtypes.append(projection.subtype)
    (c,) = criteria_conflicts({"accelerator": "gb200"}, s)
    assert c.observed.value == "h100" and c.observed.raw == "Standard_ND96isr_H100_v5"
    assert c.observed.reading == "K8s.aks-gpu-pools context vm-sizes"


def test_the_live_capture_keeps_the_gpu_nodes_instance_type() -> None:
    from aicr_tui.core.live.kube import INSTANCE_TYPE_LABELS

    assert INSTANCE_TYPE_LABELS[0] == "node.kubernetes.io/instance-type"
    s = snap("oke-gb200-active")
    gpu(s).data["model"] = "NVIDIA"  # a model reading that names no GPU
    gpu(s).context = {INSTANCE_TYPE_LABELS[0]: "BM.GPU.GB200.4"}
    assert criteria_conflicts(OKE_GB200, s) == []
    (c,) = criteria_conflicts({"accelerator": "h100"}, s)
    assert (c.observed.value, c.observed.raw) == ("gb200", "BM.GPU.GB200.4")
