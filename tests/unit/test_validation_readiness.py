"""Readiness pre-flight: every recipe constraint, profile included, with upstream's refusals."""

from __future__ import annotations

from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.recipe.loading import load_recipe
from aicr_tui.core.validation.readiness import (
    NO_SNAPSHOT_MESSAGE,
    evaluate_readiness,
    readiness_refusal,
)
from aicr_tui.core.validation.recipe_view import RecipeView
from tests.conftest import SAMPLES

RECIPE = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"


def recipe() -> RecipeView:
    return RecipeView.of(load_recipe(str(RECIPE)), "recipe.yaml")


def test_matching_snapshot_passes_every_constraint_with_expected_and_actual() -> None:
    r = recipe()
    snap = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-install.yaml"))
    outcomes = evaluate_readiness(r, snap)
    assert [o.name for o in outcomes] == [c.name for c in r.constraints]
    assert "K8s.aks-gpu-pools.gpu-driver" in [o.name for o in outcomes]
    assert all(o.status == "passed" for o in outcomes)
    server = next(o for o in outcomes if o.name == "K8s.server.version")
    assert server.message == "expected >= 1.34, got v1.34.2"
    assert (
        server.log_line
        == 'readiness constraint passed name=K8s.server.version expected=">= 1.34" actual=v1.34.2'
    )
    assert readiness_refusal(r, snap, outcomes) is None


def test_snapshot_contradicting_the_profile_is_refused() -> None:
    r = recipe()
    snap = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-none.yaml"))
    outcomes = evaluate_readiness(r, snap)
    err = readiness_refusal(r, snap, outcomes)
    assert err is not None and err.exit_code == 2
    assert (
        err.render()
        == "[INVALID_REQUEST] readiness check failed: K8s.aks-gpu-pools.gpu-driver expected Install, got None"
    )


def test_missing_reading_cannot_be_evaluated_and_names_the_capture_flag() -> None:
    r = recipe()
    snap = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-no-pools.yaml"))
    err = readiness_refusal(r, snap, evaluate_readiness(r, snap))
    assert err is not None
    text = err.render()
    assert text.startswith(
        "[INVALID_REQUEST] readiness check could not evaluate: K8s.aks-gpu-pools.gpu-driver: "
    )
    assert "--aks-gpu-pools" in text


def test_no_snapshot_is_refused_when_constraints_exist() -> None:
    r = recipe()
    err = readiness_refusal(r, None, evaluate_readiness(r, None))
    assert err is not None and NO_SNAPSHOT_MESSAGE in err.render()
    bare = RecipeView.from_document({"kind": "RecipeResult", "criteria": {}, "componentRefs": []})
    assert readiness_refusal(bare, None, evaluate_readiness(bare, None)) is None


def test_readiness_block_constraints_and_remediation() -> None:
    doc = {
        "constraints": [
            {
                "name": "K8s.server.version",
                "value": ">= 1.40",
                "remediation": "upgrade the AKS control plane",
            }
        ],
        "validation": {
            "readiness": {"constraints": [{"name": "OS.release.ID", "value": "ubuntu"}]}
        },
        "componentRefs": [],
    }
    r = RecipeView.from_document(doc)
    snap = load_snapshot(str(SAMPLES / "snapshots" / "aks-h100-install.yaml"))
    outcomes = evaluate_readiness(r, snap)
    assert [(o.name, o.source, o.status) for o in outcomes] == [
        ("K8s.server.version", "recipe", "failed"),
        ("OS.release.ID", "readiness", "passed"),
    ]
    err = readiness_refusal(r, snap, outcomes)
    assert err is not None
    assert (
        err.render()
        == "[INVALID_REQUEST] readiness check failed: K8s.server.version expected >= 1.40, got v1.34.2 — upgrade the AKS control plane"
    )
