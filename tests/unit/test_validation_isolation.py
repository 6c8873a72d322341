"""Issue 32 item 5: validation runs own their namespace (core.validation.isolation).

Against the simulated cluster: a run without ``-n`` works in a namespace of its own; a
second run on a namespace whose lease is held is refused with one line and changes
nothing; a dead run's expired lease is taken over and its labelled objects removed; an
expired validation namespace of a dead run is removed at the next run's start, one still
held is named with its command; a run whose lease is refused (RBAC) removes the namespace
it had just created.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.foundation.errors import AicrError, ErrorCode
from core.validation.checks.base import NAMESPACE_LABELS, RUN_ID_LABEL
from core.validation.events import LogLine, RunFinished
from core.validation.isolation import (
    LEASE_NAME,
    LEASE_SECONDS,
    MICRO,
    unique_namespace,
)
from tests.simulated import (
    SimulatedCluster,
    VirtualClock,
    aks_nd96_scenario,
    run_collecting,
    validation_request,
)
from tests.unit.test_validation_runner import RECIPE, SNAPSHOT

RUN_ID = "20261130-000000-0123456789ab"
DEAD = "20261129-230000-deadbeef0000"
LEASE_KEY = ("coordination.k8s.io", "v1", "leases")


def _lease(ns: str, holder: str, renewed: datetime) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": ns, "resourceVersion": "7"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": LEASE_SECONDS,
            "renewTime": renewed.strftime(MICRO),
        },
    }


def _cluster() -> SimulatedCluster:
    return SimulatedCluster(aks_nd96_scenario(), RECIPE, VirtualClock())


def _run(cluster: SimulatedCluster, **kwargs: Any) -> tuple[Any, list[Any]]:
    req = validation_request(RECIPE, SNAPSHOT, run_id=RUN_ID, phases=("deployment",), **kwargs)
    clock = cluster.clock
    return run_collecting(req, lambda: cluster, clock=clock, sleep=clock.sleep)


def _lines(events: list[Any]) -> list[str]:
    return [e.line for e in events if isinstance(e, LogLine)]


def test_without_n_the_run_works_in_a_namespace_of_its_own() -> None:
    cluster = _cluster()
    result, events = _run(cluster, namespace="")
    ns = unique_namespace("aicr-validation", RUN_ID)
    assert ns == "aicr-validation-0123456789ab"
    assert ("v1", "Namespace", ns) in cluster.created and ns not in cluster.namespaces
    assert any(f"created in namespace {ns}" in line for line in _lines(events))
    assert ("coordination.k8s.io/v1", "Lease", f"{ns}/{LEASE_NAME}") in cluster.created
    assert result.exit_code == 0


def test_a_second_run_on_a_held_namespace_is_refused_and_changes_nothing() -> None:
    cluster = _cluster()
    cluster.namespaces["shared"] = "Active"
    held = _lease("shared", "20261130-000000-aaaaaaaaaaaa", datetime.now(UTC))
    cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)] = held
    result, events = _run(cluster, namespace="shared")
    assert result.exit_code == 2 and isinstance(result.error, AicrError)
    assert result.error.code is ErrorCode.CONFLICT
    text = result.error.render()
    assert "namespace shared is in use by validation run 20261130-000000-aaaaaaaaaaaa" in text
    assert "\n" not in text
    assert [c for c in cluster.created if c[1] != "Lease"] == [] and cluster.deleted == []
    assert cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)] is held
    assert isinstance(events[-1], RunFinished) and events[-1].exit_code == 2


def test_an_expired_lease_is_taken_over_and_the_dead_runs_objects_removed() -> None:
    cluster = _cluster()
    cluster.namespaces["shared"] = "Active"
    stale = datetime.now(UTC) - timedelta(seconds=10 * LEASE_SECONDS)
    cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)] = _lease("shared", DEAD, stale)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "aicr-nccl-ssh",
            "namespace": "shared",
            "labels": {RUN_ID_LABEL: DEAD},
        },
    }
    users = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "theirs", "namespace": "shared"},
    }
    cluster.objects[("", "v1", "secrets", "shared", "aicr-nccl-ssh")] = secret
    cluster.objects[("", "v1", "secrets", "shared", "theirs")] = users
    result, events = _run(cluster, namespace="shared")
    assert ("v1", "Secret", "shared/aicr-nccl-ssh") in cluster.deleted
    assert ("v1", "Secret", "shared/theirs") not in cluster.deleted
    assert any(
        f"validation run {DEAD} ended without cleaning up" in line
        and "Secret/aicr-nccl-ssh" in line
        for line in _lines(events)
    )
    # the namespace existed before and is not a validation namespace: it stays
    assert "shared" in cluster.namespaces and ("v1", "Namespace", "shared") not in cluster.deleted
    assert result.exit_code == 0


class _Namespaced(SimulatedCluster):
    """Lists namespaces (the simulated cluster keeps only their phase)."""

    def list_objects(
        self,
        group: str,
        version: str,
        plural: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
    ) -> list[dict[str, Any]]:
        if plural != "namespaces":
            return super().list_objects(
                group, version, plural, namespace, label_selector=label_selector
            )
        return [
            {
                "metadata": {"name": name, "labels": {**NAMESPACE_LABELS, RUN_ID_LABEL: DEAD}},
                "status": {"phase": phase},
            }
            for name, phase in self.namespaces.items()
            if name.startswith("aicr-validation-")
        ]


def test_orphaned_validation_namespaces_are_removed_and_live_ones_named() -> None:
    cluster = _Namespaced(aks_nd96_scenario(), RECIPE, VirtualClock())
    now = datetime.now(UTC)
    for ns, renewed in (
        ("aicr-validation-dead", now - timedelta(seconds=10 * LEASE_SECONDS)),
        ("aicr-validation-live", now),
    ):
        cluster.namespaces[ns] = "Active"
        cluster.objects[(*LEASE_KEY, ns, LEASE_NAME)] = _lease(ns, DEAD, renewed)
    cluster.namespaces["aicr-validation-kept"] = "Active"  # --no-cleanup: no lease
    _, events = _run(cluster, namespace="")
    lines = _lines(events)
    assert ("v1", "Namespace", "aicr-validation-dead") in cluster.deleted
    assert any("removed namespace aicr-validation-dead" in line for line in lines)
    assert "aicr-validation-live" in cluster.namespaces
    assert any("kubectl delete namespace aicr-validation-live" in line for line in lines)
    assert "aicr-validation-kept" in cluster.namespaces


def test_a_run_refused_its_lease_removes_the_namespace_it_created() -> None:
    class NoLeases(SimulatedCluster):
        def create(self, manifest: dict[str, Any], *, dry_run: bool = False) -> None:
            if manifest["kind"] == "Lease":
                raise AicrError(
                    ErrorCode.UNAUTHORIZED,
                    "Kubernetes API refused creating Lease",
                    'HTTP 403 (Forbidden): cannot create resource "leases"',
                )
            super().create(manifest, dry_run=dry_run)

    cluster = NoLeases(aks_nd96_scenario(), RECIPE, VirtualClock())
    result, _ = _run(cluster, namespace="fresh")
    assert result.exit_code == 4 and result.error is not None
    assert ("v1", "Namespace", "fresh") in cluster.created
    assert "fresh" not in cluster.namespaces  # undone: the refused run changed nothing
