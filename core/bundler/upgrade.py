"""Upgrade verdicts from rendered objects: what moving one component from its old render to
its new one would do, told from the objects themselves (``aicr-tui upgrade-check``).

Each component gets ``safe``, ``manual``, ``blocked`` or ``unknown`` with its reasons; the
worst reason wins, in the order blocked, unknown, manual, safe. ``unknown`` is the answer
whenever a side could not be rendered: never safe by default.

- CRDs (by name): a served or stored version removed is blocked (objects stored at it
  become unreadable; Helm does not upgrade ``crds/`` at all); a conversion strategy change
  and a field removed from a version both sides store are manual.
- Immutable fields: a Deployment, DaemonSet or StatefulSet ``spec.selector``, a
  StatefulSet's ``volumeClaimTemplates``, a (non-hook) Job's ``spec.template``, a Service's
  explicit ``clusterIP``: the API server refuses the change, so it is blocked. A Service
  ``type`` change is manual.
- Identity: an object that moves to another namespace is deleted and created (manual, with
  what that drops); a workload or volume claim that goes away is manual.
- Chart major version change: manual (read the chart's upgrade notes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from core.foundation.record import Record, field

SAFE, MANUAL, UNKNOWN, BLOCKED = "safe", "manual", "unknown", "blocked"
RANK = {SAFE: 0, MANUAL: 1, UNKNOWN: 2, BLOCKED: 3}
VERDICTS = (SAFE, MANUAL, BLOCKED, UNKNOWN)

_SELECTOR_KINDS = ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet")
_DROPS = {
    "StatefulSet": "its pods are replaced and its volume claims are left behind",
    "PersistentVolumeClaim": "the volume's data goes with the claim",
    "Deployment": "its pods are removed",
    "DaemonSet": "its pods are removed from every node",
}


class Reason(Record, frozen=True):
    verdict: str
    text: str


class ComponentVerdict(Record):
    component: str
    from_version: str = ""
    to_version: str = ""
    reasons: list[Reason] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if not self.reasons:
            return SAFE
        return max((r.verdict for r in self.reasons), key=RANK.__getitem__)

    def add(self, verdict: str, text: str) -> None:
        reason = Reason(verdict, text)
        if reason not in self.reasons:
            self.reasons.append(reason)


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return (str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def _label(key: tuple[str, str, str]) -> str:
    kind, ns, name = key
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def _is_hook(obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    return isinstance(notes, dict) and "helm.sh/hook" in notes


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _versions(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for v in _get(crd, "spec", "versions") or []:
        if isinstance(v, dict) and v.get("name"):
            out[str(v["name"])] = v
    return out


def _fields(schema: Any, prefix: str = "") -> set[str]:
    """Every property path of an OpenAPI schema (objects and array items)."""
    out: set[str] = set()
    if not isinstance(schema, dict):
        return out
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            out.add(path)
            out |= _fields(sub, path)
    items = schema.get("items")
    if isinstance(items, dict):
        out |= _fields(items, f"{prefix}[]")
    return out


def compare_crds(
    verdict: ComponentVerdict, old: Iterable[dict[str, Any]], new: Iterable[dict[str, Any]]
) -> None:
    before = {_key(c)[2]: c for c in old}
    after = {_key(c)[2]: c for c in new}
    for name in sorted(before):
        if name not in after:
            verdict.add(
                MANUAL,
                f"CRD {name} is no longer installed; Helm leaves it (and its objects) in place",
            )
            continue
        a, b = _versions(before[name]), _versions(after[name])
        for vname, va in sorted(a.items()):
            vb = b.get(vname)
            if vb is None:
                what = "stored" if va.get("storage") else "served"
                verdict.add(
                    BLOCKED,
                    f"CRD {name} drops {what} version {vname}: objects at {vname} can no longer "
                    "be read; migrate them to a version the new CRD serves first",
                )
                continue
            if va.get("served") and not vb.get("served"):
                verdict.add(BLOCKED, f"CRD {name} stops serving version {vname}")
            if va.get("storage") and vb.get("storage"):
                lost = _fields(_get(va, "schema", "openAPIV3Schema")) - _fields(
                    _get(vb, "schema", "openAPIV3Schema")
                )
                if lost:
                    shown = ", ".join(sorted(lost)[:3]) + (" …" if len(lost) > 3 else "")
                    verdict.add(
                        MANUAL,
                        f"CRD {name} version {vname} (stored) loses field(s) {shown}: stored "
                        "values there are pruned on the next write",
                    )
        sa = _get(before[name], "spec", "conversion", "strategy") or "None"
        sb = _get(after[name], "spec", "conversion", "strategy") or "None"
        if sa != sb:
            verdict.add(MANUAL, f"CRD {name} conversion strategy changes from {sa} to {sb}")


def compare_objects(
    verdict: ComponentVerdict, old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]
) -> None:
    before = {_key(o): o for o in old if o.get("kind") != "CustomResourceDefinition"}
    after = {_key(o): o for o in new if o.get("kind") != "CustomResourceDefinition"}
    for key, a in before.items():
        b = after.get(key)
        if b is None:
            kind, ns, name = key
            moved = [k for k in after if k[0] == kind and k[2] == name and k[1] != ns]
            if moved:
                verdict.add(
                    MANUAL,
                    f"{_label(key)} moves to namespace {moved[0][1]}: it is deleted and created"
                    + (f" ({_DROPS[kind]})" if kind in _DROPS else ""),
                )
            elif kind in _DROPS and not _is_hook(a):
                verdict.add(MANUAL, f"{_label(key)} is removed by the upgrade: {_DROPS[kind]}")
            continue
        _immutable(verdict, key, a, b)


def _immutable(
    verdict: ComponentVerdict, key: tuple[str, str, str], a: dict[str, Any], b: dict[str, Any]
) -> None:
    kind = key[0]
    label = _label(key)
    if kind in _SELECTOR_KINDS and _get(a, "spec", "selector") != _get(b, "spec", "selector"):
        verdict.add(
            BLOCKED,
            f"{label} changes spec.selector, which is immutable: the API server refuses the "
            "upgrade; delete the object first (its pods go with it)",
        )
    if kind == "StatefulSet" and _get(a, "spec", "volumeClaimTemplates") != _get(
        b, "spec", "volumeClaimTemplates"
    ):
        verdict.add(
            BLOCKED,
            f"{label} changes spec.volumeClaimTemplates, which is immutable: delete the "
            "StatefulSet with --cascade=orphan and let the upgrade recreate it",
        )
    if (
        kind == "Job"
        and not (_is_hook(a) and _is_hook(b))
        and _get(a, "spec", "template") != _get(b, "spec", "template")
    ):
        verdict.add(
            BLOCKED, f"{label} changes spec.template, which is immutable for a Job: delete it first"
        )
    if kind == "Service":
        ca, cb = _get(a, "spec", "clusterIP"), _get(b, "spec", "clusterIP")
        if ca and cb and ca != cb:
            verdict.add(
                BLOCKED, f"{label} changes spec.clusterIP ({ca} -> {cb}), which is immutable"
            )
        ta = _get(a, "spec", "type") or "ClusterIP"
        tb = _get(b, "spec", "type") or "ClusterIP"
        if ta != tb:
            verdict.add(MANUAL, f"{label} changes type {ta} -> {tb}: its address changes")


def _major(version: str) -> str:
    return version.lstrip("v").split(".", 1)[0]


def compare_versions(verdict: ComponentVerdict) -> None:
    a, b = verdict.from_version, verdict.to_version
    if a and b and _major(a) != _major(b):
        verdict.add(MANUAL, f"chart major version {a} -> {b}: read the chart's upgrade notes")
