"""Validation runs never trip over each other: each owns its namespace, and a killed run's
leftovers are found by their labels.

- **Ownership.** Every live run holds a ``coordination.k8s.io/v1`` Lease named
  ``LEASE_NAME`` in the namespace its workloads go to, its ``holderIdentity`` the run id,
  renewed every ``LEASE_RENEW_S`` for ``LEASE_SECONDS``. By default the namespace is new
  and unique to the run (``run_namespace``: ``aicr-validation-<run token>``, for the CLI
  and the wizard alike); with ``-n NS`` a second run on the same namespace finds the lease
  held and is refused with one line (CONFLICT, exit 2) before it changes anything. A
  namespace the refused run had just created is removed. Each renewal first checks that
  the run still holds the lease: when another run took it (``LeaseLost``) the run stops.
- **Orphans.** A run that was killed (SIGKILL, a lost machine) stops renewing its lease.
  At the next run's start, once its own lease is held: every namespace labelled as a
  validation namespace (``NAMESPACE_LABELS``) whose lease has expired is deleted when it
  holds nothing but validation runs' objects (``foreign_objects``), else kept and named
  with the command that would remove it; one still held is named the same way; one
  without a lease is left alone (``--no-cleanup`` releases the lease so that its
  namespace is kept for inspection; a run killed between creating its namespace and
  taking the lease, a window of one request, leaves one such namespace). In a named
  namespace taken over from an expired lease, the objects labelled with another run's id
  (``RUN_KINDS``) are deleted.
- **Cleanup** deletes the run's namespace when the run created it, else only the objects
  labelled with its own run id (``RUN_KINDS``) and its lease.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.validation.checks.base import (
    NAMESPACE_LABELS,
    RUN_ID_LABEL,
    VALIDATION_NAMESPACE,
)
from aicr_tui.core.validation.checks.capabilities import KAI_GROUP
from aicr_tui.core.validation.checks.performance import (
    COMPUTE_DOMAIN_GROUP,
    COMPUTE_DOMAIN_VERSION,
    DYNAMO_GROUP,
    DYNAMO_VERSION,
    TRAINER_GROUP,
    TRAINER_VERSION,
)
from aicr_tui.core.validation.executor import ClusterExecutor

LEASE_GROUP = "coordination.k8s.io"
LEASE_VERSION = "v1"
LEASE_NAME = "aicr-validation-run"
LEASE_SECONDS = 15
LEASE_RENEW_S = 5.0


def _kind(api_version: str, kind: str, plural: str) -> tuple[str, str, str, str, str]:
    group, _, version = api_version.rpartition("/")
    return (api_version, kind, group, version, plural)


# (apiVersion, kind, group, version, plural) of every kind a check creates in the run's
# namespace, each labelled with the run id (CheckContext.labels): the one list a run's
# cleanup and an orphan sweep remove by that label. A check that creates a new kind must
# add it here (tests/unit/test_validation_isolation.py reads every manifest the checks
# build). Owners come before what they own.
RUN_KINDS: tuple[tuple[str, str, str, str, str], ...] = (
    _kind(f"{DYNAMO_GROUP}/{DYNAMO_VERSION}", "DynamoGraphDeployment", "dynamographdeployments"),
    _kind(f"{TRAINER_GROUP}/{TRAINER_VERSION}", "TrainJob", "trainjobs"),
    _kind(f"{TRAINER_GROUP}/{TRAINER_VERSION}", "TrainingRuntime", "trainingruntimes"),
    _kind(f"{KAI_GROUP}/v2alpha2", "PodGroup", "podgroups"),
    _kind("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    _kind("apps/v1", "Deployment", "deployments"),
    _kind("batch/v1", "Job", "jobs"),
    _kind("v1", "Pod", "pods"),
    _kind(f"{COMPUTE_DOMAIN_GROUP}/{COMPUTE_DOMAIN_VERSION}", "ComputeDomain", "computedomains"),
    _kind("v1", "Service", "services"),
    _kind("v1", "Secret", "secrets"),
    _kind("v1", "ConfigMap", "configmaps"),
)
MICRO = "%Y-%m-%dT%H:%M:%S.%fZ"

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def run_namespace(requested: str, run_id: str) -> str:
    """The namespace a run works in, for the CLI and the wizard alike: ``requested`` (``-n``;
    then held by the run's lease), else one of the run's own (``unique_namespace``)."""
    return requested or unique_namespace(VALIDATION_NAMESPACE, run_id)


def unique_namespace(base: str, run_id: str) -> str:
    """``aicr-validation-<the run id's random token>`` (a DNS label of at most 63 chars)."""
    token = run_id.rsplit("-", 1)[-1].lower()
    return f"{base}-{token}"[:63].rstrip("-")


def _micro(when: datetime) -> str:
    return when.astimezone(UTC).strftime(MICRO)


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    for fmt in (MICRO, "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class LeaseState:
    holder: str
    renewed: datetime | None
    seconds: int
    resource_version: str

    def alive(self, now: datetime) -> bool:
        if not self.holder or self.renewed is None:
            return False
        return now < self.renewed + timedelta(seconds=max(1, self.seconds))


def read_lease(executor: ClusterExecutor, namespace: str) -> LeaseState | None:
    obj = executor.get_object(LEASE_GROUP, LEASE_VERSION, "leases", LEASE_NAME, namespace)
    if obj is None:
        return None
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(spec, dict) and isinstance(meta, dict)
    seconds = spec.get("leaseDurationSeconds")
    return LeaseState(
        holder=str(spec.get("holderIdentity") or ""),
        renewed=_parse_time(spec.get("renewTime")) or _parse_time(spec.get("acquireTime")),
        seconds=seconds if isinstance(seconds, int) and not isinstance(seconds, bool) else 0,
        resource_version=str(meta.get("resourceVersion") or ""),
    )


def _held_error(namespace: str, state: LeaseState, now: datetime) -> AicrError:
    ago = "" if state.renewed is None else f", renewed {(now - state.renewed).seconds}s ago"
    return AicrError(
        ErrorCode.CONFLICT,
        f"namespace {namespace} is in use by validation run {state.holder} (Lease "
        f"{namespace}/{LEASE_NAME}{ago}); this run changed nothing",
        remedy="wait for that run to end, or leave out -n to run in a namespace of this run's own",
    )


def acquire(
    executor: ClusterExecutor, namespace: str, run_id: str, now: Clock = utc_now
) -> str | None:
    """Take the namespace's lease for ``run_id``. Returns the id of a dead run whose expired
    lease was taken over (its objects are orphans), else None; raises CONFLICT when a live
    run holds it, or the API's error (403 for RBAC) when the lease cannot be made."""
    when = now()
    manifest = {
        "apiVersion": f"{LEASE_GROUP}/{LEASE_VERSION}",
        "kind": "Lease",
        "__plural__": "leases",
        "metadata": {
            "name": LEASE_NAME,
            "namespace": namespace,
            "labels": {**NAMESPACE_LABELS, RUN_ID_LABEL: run_id},
        },
        "spec": {
            "holderIdentity": run_id,
            "leaseDurationSeconds": LEASE_SECONDS,
            "acquireTime": _micro(when),
            "renewTime": _micro(when),
        },
    }
    try:
        executor.create(manifest)
        return None
    except AicrError as exc:
        if exc.code != ErrorCode.CONFLICT:
            raise
    state = read_lease(executor, namespace)
    if state is None:  # released between our create and our read: try once more
        executor.create(manifest)
        return None
    if state.holder == run_id:
        return None
    if state.alive(when):
        raise _held_error(namespace, state, when)
    patch = {
        "metadata": {
            "resourceVersion": state.resource_version,
            "labels": {RUN_ID_LABEL: run_id},
        },
        "spec": manifest["spec"],
    }
    try:
        executor.patch_object(LEASE_GROUP, LEASE_VERSION, "leases", LEASE_NAME, patch, namespace)
    except AicrError as exc:
        if exc.code == ErrorCode.CONFLICT:  # another run took it first
            latest = read_lease(executor, namespace) or state
            raise _held_error(namespace, latest, now()) from None
        raise
    return state.holder or "unknown"


class LeaseLost(AicrError):
    """Another run holds this run's lease (or it was deleted): the run must stop."""

    def __init__(self, namespace: str, run_id: str, holder: str) -> None:
        taker = f"validation run {holder}" if holder else "no run (its lease was deleted)"
        super().__init__(
            ErrorCode.CONFLICT,
            f"validation run {run_id} lost namespace {namespace} to {taker} (Lease "
            f"{namespace}/{LEASE_NAME}); this run stopped and left that namespace alone",
            remedy="run again without -n, in a namespace of the run's own",
        )


def renew(executor: ClusterExecutor, namespace: str, run_id: str, now: Clock = utc_now) -> None:
    """Renew the lease while ``run_id`` still holds it; raises ``LeaseLost`` (CONFLICT)
    when another run holds it or it is gone. The renewal names the resourceVersion read,
    so a takeover between the read and the write is refused by the server (409) and found
    by the next renewal."""
    state = read_lease(executor, namespace)
    if state is None or state.holder != run_id:
        raise LeaseLost(namespace, run_id, "" if state is None else state.holder)
    patch: dict[str, Any] = {"spec": {"holderIdentity": run_id, "renewTime": _micro(now())}}
    if state.resource_version:
        patch["metadata"] = {"resourceVersion": state.resource_version}
    executor.patch_object(LEASE_GROUP, LEASE_VERSION, "leases", LEASE_NAME, patch, namespace)


def release(executor: ClusterExecutor, namespace: str, run_id: str) -> None:
    """Delete the lease when this run still holds it (never another run's)."""
    state = read_lease(executor, namespace)
    if state is not None and state.holder == run_id:
        executor.delete(f"{LEASE_GROUP}/{LEASE_VERSION}", "Lease", namespace, LEASE_NAME)


def sweep_run_objects(
    executor: ClusterExecutor, namespace: str, keep_run: str, *, only_run: str = ""
) -> list[str]:
    """Delete the objects in ``namespace`` labelled with a run id: those of ``only_run``
    when given (a run's own cleanup), else every run's but ``keep_run`` (orphans).
    Returns what was deleted, as ``Kind/name (run id)``. A kind the identity may not list
    (403) is passed over, as it could not have been read back either; any other failure
    is raised once every other kind has been swept."""
    removed: list[str] = []
    failed: AicrError | None = None
    for api_version, kind, group, version, plural in RUN_KINDS:
        selector = f"{RUN_ID_LABEL}={only_run}" if only_run else RUN_ID_LABEL
        try:
            found = executor.list_objects(
                group, version, plural, namespace, label_selector=selector
            )
        except AicrError as exc:
            if exc.code != ErrorCode.UNAUTHORIZED:
                failed = failed or exc
            continue
        for obj in found:
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            assert isinstance(labels, dict)
            owner = str(labels.get(RUN_ID_LABEL) or "")
            name = str(meta.get("name") or "")
            if not owner or not name or owner == keep_run:
                continue
            if only_run and owner != only_run:
                continue
            executor.delete(api_version, kind, namespace, name)
            removed.append(f"{kind}/{name} (run {owner})")
    if failed is not None:
        raise failed
    return removed


# What the API server (or its controllers) makes in every namespace by itself; a namespace
# holding these besides a run's objects holds nothing but the run's.
SERVER_MADE_RESOURCES = frozenset(
    {
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "endpoints"),
        ("discovery.k8s.io", "endpointslices"),
        ("coordination.k8s.io", "leases"),
    }
)
SERVER_MADE_OBJECTS = frozenset(
    {("", "serviceaccounts", "default"), ("", "configmaps", "kube-root-ca.crt")}
)
# Aggregated APIs that describe other objects (pod metrics) rather than hold any.
MIRROR_GROUPS = frozenset({"metrics.k8s.io", "custom.metrics.k8s.io", "external.metrics.k8s.io"})


@dataclass(frozen=True)
class Listable:
    """One namespaced resource the server can list (from API discovery)."""

    group: str
    version: str
    plural: str
    kind: str


def _json(executor: ClusterExecutor, path: str) -> dict[str, Any]:
    text = executor.raw_get(path)
    if text is None:
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE, f"the Kubernetes API answered {path} with no JSON"
        ) from None
    return found if isinstance(found, dict) else {}


def _resources(body: dict[str, Any], group: str, version: str) -> Iterator[Listable]:
    for r in body.get("resources") or []:
        if not isinstance(r, dict):
            continue
        plural, verbs = str(r.get("name") or ""), r.get("verbs") or []
        if not plural or "/" in plural or not r.get("namespaced") or "list" not in verbs:
            continue
        if (group, plural) in SERVER_MADE_RESOURCES:
            continue
        yield Listable(group, version, plural, str(r.get("kind") or plural))


def _versions(group: dict[str, Any]) -> list[str]:
    """A group's versions, its preferred one first."""
    preferred = group.get("preferredVersion")
    first = str(preferred.get("version") or "") if isinstance(preferred, dict) else ""
    rest = [str(v.get("version") or "") for v in group.get("versions") or [] if isinstance(v, dict)]
    return [v for v in dict.fromkeys([first, *rest]) if v]


def namespaced_listables(executor: ClusterExecutor) -> list[Listable]:
    """Every namespaced resource the server lists (API discovery: each resource once, in
    its group's preferred version when served there, else in the first version serving it:
    nvidia.com serves ClusterPolicy in v1 and DynamoGraphDeployment only in v1alpha1), less
    what the server makes itself and the aggregated metrics mirrors."""
    out = list(_resources(_json(executor, "/api/v1"), "", "v1"))
    for g in _json(executor, "/apis").get("groups") or []:
        name = str(g.get("name") or "") if isinstance(g, dict) else ""
        if not name or name in MIRROR_GROUPS:
            continue
        assert isinstance(g, dict)
        seen: set[str] = set()
        for version in _versions(g):
            for res in _resources(_json(executor, f"/apis/{name}/{version}"), name, version):
                if res.plural not in seen:
                    seen.add(res.plural)
                    out.append(res)
    return out


def foreign_objects(
    executor: ClusterExecutor, namespace: str, listables: list[Listable]
) -> list[str]:
    """The objects in ``namespace`` that are not a validation run's, as ``Kind/name``: an
    object is a run's when it carries the run-id label, or when its owner (by
    ownerReferences, at any depth) is one (the ReplicaSet of a run's Deployment, the pods of
    its Job, the ResourceClaim of its pod). What the server makes itself is not counted.
    Raises the API's error when a resource cannot be listed (then nothing is known)."""
    found: list[tuple[str, str, str, list[str]]] = []  # (uid, Kind/name, run label, owners)
    for res in listables:
        for obj in executor.list_objects(res.group, res.version, res.plural, namespace):
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            name = str(meta.get("name") or "")
            if (res.group, res.plural, name) in SERVER_MADE_OBJECTS:
                continue
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            assert isinstance(labels, dict)
            owners = [
                str(ref.get("uid") or "")
                for ref in meta.get("ownerReferences") or []
                if isinstance(ref, dict)
            ]
            uid = str(meta.get("uid") or f"{res.plural}.{res.group}/{name}")
            found.append((uid, f"{res.kind}/{name}", str(labels.get(RUN_ID_LABEL) or ""), owners))
    ours = {uid for uid, _, run, _ in found if run}
    grew = True
    while grew:
        grew = False
        for uid, _, _, owners in found:
            if uid not in ours and any(o in ours for o in owners):
                ours.add(uid)
                grew = True
    return sorted(what for uid, what, _, _ in found if uid not in ours)


def shown(names: list[str], most: int = 5) -> str:
    """``names`` for one line: the first ``most``, then how many more."""
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def sweep_orphan_namespaces(
    executor: ClusterExecutor, own_namespace: str, now: Clock = utc_now
) -> list[str]:
    """Delete validation namespaces of dead runs that hold nothing but validation runs'
    objects (``foreign_objects``); keep and name the others, with the command that would
    remove them, and the ones still held. Returns one log line per namespace found."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(NAMESPACE_LABELS.items()))
    lines: list[str] = []
    when = now()
    listables: list[Listable] | None = None
    for ns in executor.list_objects("", "v1", "namespaces", label_selector=selector):
        meta = ns.get("metadata") if isinstance(ns.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        name = str(meta.get("name") or "")
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        assert isinstance(labels, dict)
        owner = str(labels.get(RUN_ID_LABEL) or "unknown")
        status = ns.get("status") if isinstance(ns.get("status"), dict) else {}
        assert isinstance(status, dict)
        if not name or name == own_namespace or status.get("phase") == "Terminating":
            continue
        state = read_lease(executor, name)
        if state is not None and state.alive(when):
            lines.append(
                f"namespace {name} belongs to validation run {state.holder}, still running "
                f"(its lease is renewed); if that run is gone: kubectl delete namespace {name}"
            )
            continue
        if state is None:  # released (--no-cleanup keeps it on purpose) or not yet taken
            continue
        try:
            if listables is None:
                listables = namespaced_listables(executor)
            foreign = foreign_objects(executor, name, listables)
        except AicrError as exc:
            lines.append(
                f"kept namespace {name} left by validation run {owner}: could not read what "
                f"it holds ({exc.render()}); to remove it: kubectl delete namespace {name}"
            )
            continue
        if foreign:
            lines.append(
                f"kept namespace {name} left by validation run {owner}: it holds objects "
                f"that are not a validation run's ({shown(foreign)}); to remove it with them: "
                f"kubectl delete namespace {name}"
            )
            continue
        with contextlib.suppress(AicrError):
            executor.delete_namespace(name, wait=False)
            lines.append(
                f"removed namespace {name} left by validation run {owner} (its lease expired)"
            )
    return lines
