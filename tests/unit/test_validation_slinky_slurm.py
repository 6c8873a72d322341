"""slinky-slurm-health (issue 33, the Slurm leaf): what the Kubernetes API decides fails or
is stated; a healthy cluster ends not measured (the Slurm commands need pod exec), never
passed."""

from __future__ import annotations

from typing import Any

import pytest

from aicr_tui.core.documents.criteria import parse_criteria
from aicr_tui.core.recipe.catalog import load_catalog
from aicr_tui.core.validation.catalog import load_validator_catalog
from aicr_tui.core.validation.checks.base import CheckContext
from aicr_tui.core.validation.checks.registry import check_function
from aicr_tui.core.validation.recipe_view import RecipeView
from tests.recipe_resolve import resolve

SLURM = {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training",
         "platform": "slurm"}  # fmt: skip


def _pod(name: str, owner: tuple[str, str], *, ready: bool, gpus: int = 0) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {
        "metadata": {"name": name, "ownerReferences": [{"kind": owner[0], "name": owner[1]}]},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
        "status": {
            "phase": "Running" if ready else "Pending",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


class _Cluster:
    def __init__(self, served: set[str] | None, pods: list[dict[str, Any]]) -> None:
        self.served, self.pods = served, pods
        self.sets = {"loginsets": [{"metadata": {"name": "slurm-login-slinky"}}],
                     "nodesets": [{"metadata": {"name": "slurm-worker-slinky"}}]}  # fmt: skip

    def served_resources(self, group: str, version: str) -> set[str] | None:
        assert (group, version) == ("slinky.slurm.net", "v1beta1")
        return self.served

    def list_objects(
        self, group: str, version: str, plural: str, namespace: str | None = None, **_: Any
    ) -> list[dict[str, Any]]:
        assert namespace == "slurm"
        return self.pods if plural == "pods" else self.sets[plural]


def _run(cluster: _Cluster) -> tuple[str, str]:
    recipe = resolve(load_catalog(), parse_criteria(**SLURM))
    view = RecipeView.from_document(recipe.to_document())
    entry = load_validator_catalog().entry("slinky-slurm-health")
    assert entry is not None and entry.phase == "conformance"
    ctx = CheckContext(
        phase="conformance", entry=entry, recipe=view, executor=cluster,  # type: ignore[arg-type]
        run_id="r", emit=lambda e: None, clock=lambda: 0.0, t0=0.0, environ={},
    )  # fmt: skip
    out = check_function("slinky-slurm-health")(ctx)
    return out.status, out.message


LOGIN = ("LoginSet", "slurm-login-slinky")
WORKER = ("NodeSet", "slurm-worker-slinky")


def test_a_healthy_cluster_is_not_measured_never_passed() -> None:
    pods = [_pod("login-0", LOGIN, ready=True), _pod("worker-0", WORKER, ready=True, gpus=8)]
    status, message = _run(_Cluster({"loginsets", "nodesets"}, pods))
    assert status == "not measured"
    assert "pod exec" in message and "srun" in message


@pytest.mark.parametrize(
    ("served", "pods", "words"),
    [
        (None, [], "does not serve loginsets, nodesets"),
        ({"loginsets", "nodesets"}, [_pod("login-0", LOGIN, ready=True)],
         "NodeSet slurm/slurm-worker-slinky has no ready pod (0 pods)"),
        ({"loginsets", "nodesets"},
         [_pod("login-0", LOGIN, ready=False), _pod("worker-0", WORKER, ready=True, gpus=8)],
         "LoginSet slurm/slurm-login-slinky has no ready pod (1 pods)"),
        ({"loginsets", "nodesets"},
         [_pod("login-0", LOGIN, ready=True), _pod("worker-0", WORKER, ready=True)],
         "accelerator=h100, but no NodeSet pod has a positive nvidia.com/gpu"),
    ],
)  # fmt: skip
def test_what_the_api_decides_fails(served: set[str] | None, pods: list[Any], words: str) -> None:
    status, message = _run(_Cluster(served, pods))
    assert status == "failed"
    assert words in message, message
