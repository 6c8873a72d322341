"""Issue 32 item 5: validation runs own their namespace (aicr_tui.core.validation.isolation).

Against the simulated cluster: a run without ``-n`` works in a namespace of its own; a
second run on a namespace whose lease is held is refused with one line and changes
nothing; a dead run's expired lease is taken over and its labelled objects removed; an
expired validation namespace of a dead run is removed at the next run's start, one still
held is named with its command; a run whose lease is refused (RBAC) removes the namespace
it had just created.
"""

from __future__ import annotations

import ast
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.validation import checks as checks_pkg
from aicr_tui.core.validation import isolation
from aicr_tui.core.validation.checks.base import NAMESPACE_LABELS, RUN_ID_LABEL
from aicr_tui.core.validation.events import CheckFinished, LogLine, RunFinished
from aicr_tui.core.validation.isolation import (
    LEASE_NAME,
    LEASE_SECONDS,
    MICRO,
    RUN_KINDS,
    LeaseLost,
    renew,
    sweep_run_objects,
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
OTHER = "20261130-000001-aaaaaaaaaaaa"
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
    kwargs.setdefault("phases", ("deployment",))
    req = validation_request(RECIPE, SNAPSHOT, run_id=RUN_ID, **kwargs)
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


# -- every kind a check creates is swept (RUN_KINDS) ------------------------------------


def _check_manifests() -> tuple[set[str], list[str]]:
    """The kinds of every manifest (a dict literal with ``kind`` and ``metadata``) the checks
    build, and where a manifest's kind is computed (``file:function``)."""
    kinds: set[str] = set()
    computed: list[str] = []
    for path in sorted(Path(checks_pkg.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Dict):
                    continue
                keys = {
                    k.value: v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant)
                }
                if "kind" not in keys or "metadata" not in keys:
                    continue
                kind = keys["kind"]
                if isinstance(kind, ast.Constant) and isinstance(kind.value, str):
                    kinds.add(kind.value)
                else:
                    computed.append(f"{path.name}:{fn.name}")
    # the manifests kept as data files (checks/manifests/*.yaml, slots filled at run time)
    for path in sorted((Path(checks_pkg.__file__).parent / "manifests").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and "metadata" in doc:
                kinds.add(doc["kind"])
    return kinds, computed


def test_every_kind_a_check_creates_is_in_the_sweep_list() -> None:
    kinds, computed = _check_manifests()
    swept = {kind for _, kind, *_ in RUN_KINDS}
    assert {"Pod", "Job", "ComputeDomain", "TrainJob", "PodGroup", "Deployment"} <= kinds
    assert kinds - swept == set(), f"kinds a check creates but no sweep removes: {kinds - swept}"
    # the one manifest whose kind is computed is the webhook probe, only ever a dry run
    assert computed == ["capabilities.py:_invalid_object"]
    for api_version, _kind, group, version, plural in RUN_KINDS:
        assert api_version == (f"{group}/{version}" if group else version) and plural


def test_a_run_swept_in_a_named_namespace_removes_every_kind_it_made() -> None:
    cluster = _cluster()
    cluster.namespaces["shared"] = "Active"
    mine = {RUN_ID_LABEL: RUN_ID}
    for group, version, plural, kind in (
        ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
        ("resource.nvidia.com", "v1beta1", "computedomains", "ComputeDomain"),
        ("", "v1", "configmaps", "ConfigMap"),
    ):
        cluster.objects[(group, version, plural, "shared", plural)] = {
            "apiVersion": f"{group}/{version}" if group else version,
            "kind": kind,
            "metadata": {"name": plural, "namespace": "shared", "labels": mine},
        }
    cluster.objects[("", "v1", "configmaps", "shared", "theirs")] = {
        "metadata": {"name": "theirs", "namespace": "shared"}
    }
    result, _ = _run(cluster, namespace="shared")
    assert {
        ("autoscaling/v2", "HorizontalPodAutoscaler", "shared/horizontalpodautoscalers"),
        ("resource.nvidia.com/v1beta1", "ComputeDomain", "shared/computedomains"),
        ("v1", "ConfigMap", "shared/configmaps"),
    } <= set(cluster.deleted)
    assert ("v1", "ConfigMap", "shared/theirs") not in cluster.deleted
    assert result.exit_code == 0


# -- an orphaned namespace is removed only when it holds nothing but runs' objects -------


def _obj(plural: str, ns: str, name: str, **meta: Any) -> dict[str, Any]:
    return {"kind": plural, "metadata": {"name": name, "namespace": ns, **meta}}


def _orphan(cluster: SimulatedCluster, ns: str) -> None:
    stale = datetime.now(UTC) - timedelta(seconds=10 * LEASE_SECONDS)
    cluster.namespaces[ns] = "Active"
    cluster.objects[(*LEASE_KEY, ns, LEASE_NAME)] = _lease(ns, DEAD, stale)
    # what the API server makes in every namespace, unlabelled
    cluster.objects[("", "v1", "configmaps", ns, "kube-root-ca.crt")] = _obj(
        "configmaps", ns, "kube-root-ca.crt"
    )
    cluster.objects[("", "v1", "serviceaccounts", ns, "default")] = _obj(
        "serviceaccounts", ns, "default"
    )
    cluster.objects[("", "v1", "events", ns, "probe.1")] = _obj("events", ns, "probe.1")
    # the dead run's ComputeDomain, and the claim template its driver made for it
    cluster.objects[("resource.nvidia.com", "v1beta1", "computedomains", ns, "cd")] = _obj(
        "computedomains", ns, "cd", uid="uid-cd", labels={RUN_ID_LABEL: DEAD}
    )
    cluster.objects[("resource.k8s.io", "v1", "resourceclaimtemplates", ns, "imex")] = _obj(
        "resourceclaimtemplates", ns, "imex", uid="uid-t", ownerReferences=[{"uid": "uid-cd"}]
    )


def test_an_orphaned_namespace_holding_someone_elses_object_is_kept_and_named() -> None:
    cluster = _Namespaced(aks_nd96_scenario(), RECIPE, VirtualClock())
    _orphan(cluster, "aicr-validation-clean")
    _orphan(cluster, "aicr-validation-shared")
    cluster.objects[("", "v1", "configmaps", "aicr-validation-shared", "notes")] = _obj(
        "configmaps", "aicr-validation-shared", "notes"
    )
    _, events = _run(cluster, namespace="")
    lines = _lines(events)
    assert ("v1", "Namespace", "aicr-validation-clean") in cluster.deleted
    assert any("removed namespace aicr-validation-clean" in line for line in lines)
    assert "aicr-validation-shared" in cluster.namespaces
    assert ("v1", "Namespace", "aicr-validation-shared") not in cluster.deleted
    kept = [line for line in lines if "kept namespace aicr-validation-shared" in line]
    assert len(kept) == 1, lines
    assert "(Configmap/notes)" in kept[0]
    assert kept[0].endswith("kubectl delete namespace aicr-validation-shared")


def test_an_orphaned_namespace_whose_objects_cannot_be_read_is_kept() -> None:
    class NoConfigMaps(_Namespaced):
        def list_objects(
            self,
            group: str,
            version: str,
            plural: str,
            namespace: str | None = None,
            *,
            label_selector: str = "",
        ) -> list[dict[str, Any]]:
            if plural == "configmaps" and not label_selector:
                raise AicrError(
                    ErrorCode.UNAUTHORIZED,
                    "Kubernetes API refused listing configmaps",
                    'HTTP 403 (Forbidden): cannot list resource "configmaps"',
                )
            return super().list_objects(
                group, version, plural, namespace, label_selector=label_selector
            )

    cluster = NoConfigMaps(aks_nd96_scenario(), RECIPE, VirtualClock())
    _orphan(cluster, "aicr-validation-dark")
    _, events = _run(cluster, namespace="")
    assert "aicr-validation-dark" in cluster.namespaces
    assert any(
        "kept namespace aicr-validation-dark" in line
        and "cannot list resource" in line
        and line.endswith("kubectl delete namespace aicr-validation-dark")
        for line in _lines(events)
    )


# -- the lease renewal checks it still holds the lease ------------------------------------


def test_renewal_names_the_resource_version_it_read() -> None:
    cluster = _cluster()
    cluster.namespaces["shared"] = "Active"
    cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)] = _lease(
        "shared", RUN_ID, datetime.now(UTC)
    )
    renew(cluster, "shared", RUN_ID)
    lease = cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)]
    assert lease["metadata"]["resourceVersion"] == "7"
    assert lease["spec"]["holderIdentity"] == RUN_ID


def test_renewal_of_a_lease_another_run_took_raises_lease_lost() -> None:
    cluster = _cluster()
    cluster.namespaces["shared"] = "Active"
    cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)] = _lease("shared", OTHER, datetime.now(UTC))
    with pytest.raises(LeaseLost) as lost:
        renew(cluster, "shared", RUN_ID)
    assert lost.value.code is ErrorCode.CONFLICT
    assert f"lost namespace shared to validation run {OTHER}" in lost.value.render()
    assert cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)]["spec"]["holderIdentity"] == OTHER
    del cluster.objects[(*LEASE_KEY, "shared", LEASE_NAME)]
    with pytest.raises(LeaseLost, match="its lease was deleted"):
        renew(cluster, "shared", RUN_ID)


def test_a_run_whose_lease_another_run_took_stops_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While nvidia-smi's pod runs, another run takes the lease: the next renewal finds it,
    the running check and every later one are not measured with the reason, the run's own
    pod is removed, and the namespace (created by this run) and the lease are left to the
    run that holds them."""
    monkeypatch.setattr(isolation, "LEASE_RENEW_S", 0.01)

    class TakenOver(SimulatedCluster):
        taken = False

        def create(self, manifest: dict[str, Any], *, dry_run: bool = False) -> None:
            super().create(manifest, dry_run=dry_run)
            if manifest["kind"] == "Pod" and not self.taken:
                self.taken = True
                lease = self.objects[(*LEASE_KEY, "fresh", LEASE_NAME)]
                lease["spec"] = {**lease["spec"], "holderIdentity": OTHER}

        def pod_status(self, namespace: str, name: str) -> Any:
            if self.taken:
                time.sleep(0.05)  # the pod runs on while the heartbeat renews
            return super().pod_status(namespace, name)

    cluster = TakenOver(aks_nd96_scenario(), RECIPE, VirtualClock())
    result, events = _run(cluster, namespace="fresh", phases=("deployment", "conformance"))
    assert isinstance(result.error, LeaseLost)
    assert result.exit_code == 2
    line = result.error.render()
    assert "\n" not in line
    assert f"validation run {RUN_ID} lost namespace fresh to validation run {OTHER}" in line
    finished = [e for e in events if isinstance(e, CheckFinished)]
    smi = next(e for e in finished if e.check == "check-nvidia-smi")
    assert smi.status == "not measured" and "lost namespace fresh" in smi.message
    after = finished[finished.index(smi) + 1 :]
    assert after and all("lost namespace fresh" in e.message for e in after)
    assert isinstance(events[-1], RunFinished) and events[-1].message == line
    assert "fresh" in cluster.namespaces  # the other run's now
    assert (*LEASE_KEY, "fresh", LEASE_NAME) in cluster.objects
    assert any(kind == "Pod" and where.startswith("fresh/") for _, kind, where in cluster.deleted)


def test_a_kind_the_identity_may_not_list_does_not_stop_the_sweep() -> None:
    class NoPodGroups(SimulatedCluster):
        def list_objects(
            self,
            group: str,
            version: str,
            plural: str,
            namespace: str | None = None,
            *,
            label_selector: str = "",
        ) -> list[dict[str, Any]]:
            if plural == "podgroups":
                raise AicrError(
                    ErrorCode.UNAUTHORIZED,
                    "Kubernetes API refused listing podgroups.scheduling.run.ai",
                    'HTTP 403 (Forbidden): cannot list resource "podgroups"',
                )
            return super().list_objects(
                group, version, plural, namespace, label_selector=label_selector
            )

    cluster = NoPodGroups(aks_nd96_scenario(), RECIPE, VirtualClock())
    cluster.objects[("", "v1", "secrets", "shared", "s")] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "shared", "labels": {RUN_ID_LABEL: DEAD}},
    }
    assert sweep_run_objects(cluster, "shared", RUN_ID) == [f"Secret/s (run {DEAD})"]
    assert ("v1", "Secret", "shared/s") in cluster.deleted
