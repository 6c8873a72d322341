"""Validation runs never trip over each other: each owns its namespace, and a killed run's
leftovers are found by their labels.

- **Ownership.** Every live run holds a ``coordination.k8s.io/v1`` Lease named
  ``LEASE_NAME`` in the namespace its workloads go to, its ``holderIdentity`` the run id,
  renewed every ``LEASE_RENEW_S`` for ``LEASE_SECONDS``. By default the namespace is new
  and unique to the run (``aicr-validation-<run token>``); with ``-n NS`` a second run on
  the same namespace finds the lease held and is refused with one line (CONFLICT, exit 2)
  before it changes anything. A namespace the refused run had just created is removed.
- **Orphans.** A run that was killed (SIGKILL, a lost machine) stops renewing its lease.
  At the next run's start, once its own lease is held: every namespace labelled as a
  validation namespace (``NAMESPACE_LABELS``) whose lease has expired is deleted; one
  still held is named with the command that would remove it; one without a lease is left
  alone (``--no-cleanup`` releases the lease so that its namespace is kept for
  inspection; a run killed between creating its namespace and taking the lease, a window
  of one request, leaves one such namespace). In a named namespace taken over from an expired lease, the
  objects labelled with another run's id (``ORPHAN_KINDS``) are deleted.
- **Cleanup** deletes the run's namespace when the run created it, else only the objects
  labelled with its own run id and its lease.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core.foundation.errors import AicrError, ErrorCode
from core.validation.checks.base import NAMESPACE_LABELS, RUN_ID_LABEL
from core.validation.executor import ClusterExecutor

LEASE_GROUP = "coordination.k8s.io"
LEASE_VERSION = "v1"
LEASE_NAME = "aicr-validation-run"
LEASE_SECONDS = 15
LEASE_RENEW_S = 5.0
# (apiVersion, kind, group, version, plural) of what checks create in their namespace and a
# sweep removes by its run-id label.
ORPHAN_KINDS: tuple[tuple[str, str, str, str, str], ...] = (
    ("v1", "Pod", "", "v1", "pods"),
    ("batch/v1", "Job", "batch", "v1", "jobs"),
    ("v1", "Service", "", "v1", "services"),
    ("v1", "Secret", "", "v1", "secrets"),
)
MICRO = "%Y-%m-%dT%H:%M:%S.%fZ"

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


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


def renew(executor: ClusterExecutor, namespace: str, run_id: str, now: Clock = utc_now) -> None:
    patch = {"spec": {"holderIdentity": run_id, "renewTime": _micro(now())}}
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
    Returns what was deleted, as ``Kind/name (run id)``."""
    removed: list[str] = []
    for api_version, kind, group, version, plural in ORPHAN_KINDS:
        selector = f"{RUN_ID_LABEL}={only_run}" if only_run else RUN_ID_LABEL
        for obj in executor.list_objects(
            group, version, plural, namespace, label_selector=selector
        ):
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
    return removed


def sweep_orphan_namespaces(
    executor: ClusterExecutor, own_namespace: str, now: Clock = utc_now
) -> list[str]:
    """Delete validation namespaces of dead runs; name the ones still held. Returns one log
    line per namespace found."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(NAMESPACE_LABELS.items()))
    lines: list[str] = []
    when = now()
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
        with contextlib.suppress(AicrError):
            executor.delete_namespace(name, wait=False)
            lines.append(
                f"removed namespace {name} left by validation run {owner} (its lease expired)"
            )
    return lines
