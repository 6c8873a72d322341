"""What an upgrade of one component would do, from the objects both sides render.

Each side of a component is a :class:`Side`: its release, chart version, values and the
objects it installs (rendered offline by the Helm engine, or read from a live release's
manifest), or the reason those objects cannot be known. :func:`compare_component` turns
two sides into :class:`Reason` s, each with a verdict:

``safe``     nothing in the objects stops ``helm upgrade`` and nothing is lost;
``manual``   the upgrade works but needs a step by hand or loses something (named);
``blocked``  the API server or Helm refuses it as it stands (an immutable field, a stored
             CRD version removed, objects owned by another release, a driver ownership
             move without a drain plan);
``unknown``  the inputs cannot tell (a chart source missing, a render failing): never safe.

The comparators take plain object maps, so they are tested on synthetic pairs as well as
on the vendored charts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from aicr_tui.core.bundler.shell import words
from aicr_tui.core.verify.upgrade_verdicts import (
    BLOCKED,
    CHART_MAJOR,
    CRD_CONVERSION,
    CRD_FIELD_REMOVED,
    CRD_NOT_UPGRADED,
    CRD_STORED_VERSION_REMOVED,
    CRD_VERSION_REMOVED,
    DELETED,
    IMMUTABLE,
    KEPT,
    MANUAL,
    MOVED,
    NOT_KNOWN,
    RELEASE_RENAMED,
    RENAMED,
    SAFE,
    UNCHANGED,
    UNKNOWN,
    VALUE_IGNORED,
    Reason,
    Side,
)

CLUSTER_SCOPED = frozenset(
    {
        "APIService",
        "CSIDriver",
        "ClusterIssuer",
        "ClusterPolicy",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "DeviceClass",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "NodeFeatureRule",
        "PersistentVolume",
        "PriorityClass",
        "RuntimeClass",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
    }
)


# ----------------------------------------------------------------------- identity
def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _group(obj: dict[str, Any]) -> str:
    api = str(obj.get("apiVersion") or "")
    return api.split("/", 1)[0] if "/" in api else ""


def key_of(obj: dict[str, Any], namespace: str) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): what Helm and the API server identify an object by
    (the version is not part of it). A namespaced object without a namespace goes to the
    release namespace, as Helm installs it."""
    kind = str(obj.get("kind") or "")
    meta = _meta(obj)
    ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or namespace)
    return (_group(obj), kind, ns, str(meta.get("name") or ""))


def label(key: tuple[str, str, str, str]) -> str:
    _group_, kind, ns, name = key
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def is_hook(obj: dict[str, Any]) -> bool:
    notes = _meta(obj).get("annotations")
    return isinstance(notes, dict) and bool(notes.get("helm.sh/hook"))


def is_kept(obj: dict[str, Any]) -> bool:
    """``helm.sh/resource-policy: keep``: Helm never deletes the object."""
    notes = _meta(obj).get("annotations")
    return isinstance(notes, dict) and str(notes.get("helm.sh/resource-policy")) == "keep"


def index(objects: list[dict[str, Any]], namespace: str) -> dict[tuple[str, str, str, str], Any]:
    out: dict[tuple[str, str, str, str], Any] = {}
    for obj in objects:
        if isinstance(obj, dict) and obj.get("kind") and not is_hook(obj):
            out[key_of(obj, namespace)] = obj
    return out


# What deleting and creating an object of a kind drops.
_DROPS = {
    "Deployment": "its pods are deleted and recreated together (no rolling update between them)",
    "DaemonSet": "its pods on every node are deleted and recreated (no rolling update)",
    "StatefulSet": (
        "its pods are deleted; its PersistentVolumeClaims keep the old name and are not "
        "attached to the new StatefulSet (new empty volumes are provisioned)"
    ),
    "Service": "its clusterIP, nodePorts and load-balancer address change",
    "Secret": "what was written into it at run time (generated certificates, tokens)",
    "ConfigMap": "what was written into it at run time",
    "PersistentVolumeClaim": "the data on its volume (a new empty claim is bound)",
    "ServiceAccount": "the tokens issued for it",
    "CustomResourceDefinition": "every custom resource of it (deleted with the CRD)",
}


def drops(kind: str) -> str:
    return _DROPS.get(kind, "its status and anything written to it at run time")


def _labels(obj: dict[str, Any]) -> tuple[str, str, str]:
    labels = _meta(obj).get("labels")
    labels = labels if isinstance(labels, dict) else {}
    return (
        str(labels.get("app.kubernetes.io/name") or labels.get("app") or ""),
        str(labels.get("app.kubernetes.io/component") or ""),
        str(labels.get("app.kubernetes.io/instance") or ""),
    )


def _body(obj: dict[str, Any]) -> str:
    rest = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "status")}
    return json.dumps(rest, sort_keys=True, default=str)


def _common_tail(a: str, b: str) -> int:
    """The length of the common ``-``-delimited tail of two names (``-controller``)."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    tail = a[len(a) - n :]
    cut = tail.find("-")
    return 0 if cut < 0 or n - cut < 3 else n - cut


def _rename_of(
    key: tuple[str, str, str, str],
    obj: dict[str, Any],
    candidates: list[tuple[tuple[str, str, str, str], dict[str, Any]]],
) -> tuple[str, str, str, str] | None:
    """The added object of the same kind and namespace that ``obj`` became: the same
    labels or body, else the one longest common name tail; None when not one is best."""
    scored: list[tuple[int, tuple[str, str, str, str]]] = []
    for other_key, other in candidates:
        if other_key[3] == key[3]:
            continue
        same_labels = any(_labels(obj)[:2]) and _labels(obj)[:2] == _labels(other)[:2]
        if same_labels or _body(obj) == _body(other):
            scored.append((10_000, other_key))
        else:
            tail = _common_tail(key[3], other_key[3])
            if tail:
                scored.append((tail, other_key))
    if not scored:
        return None
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None
    return scored[0][1]


def compare_identity(
    old: dict[tuple[str, str, str, str], Any], new: dict[tuple[str, str, str, str], Any]
) -> list[Reason]:
    """Objects renamed or moved to another namespace (Helm deletes the old one and creates
    the new one), and objects the new side no longer installs."""
    out: list[Reason] = []
    gone = [k for k in old if k not in new]
    added = [k for k in new if k not in old]
    paired: set[tuple[str, str, str, str]] = set()
    for k in gone:
        group, kind, ns, name = k
        same_kind = [a for a in added if a[:2] == (group, kind) and a not in paired]
        moved = [a for a in same_kind if a[3] == name and a[2] != ns]
        renamed = _rename_of(k, old[k], [(a, new[a]) for a in same_kind if a[2] == ns])
        kept = is_kept(old[k])
        became: tuple[str, str, str, str] | None = None
        if len(moved) == 1:
            became, what, how = moved[0], MOVED, f"moves to namespace {moved[0][2]}"
        elif renamed is not None:
            became, what, how = renamed, RENAMED, f"is renamed {renamed[3]}"
        if became is not None:
            paired.add(became)
            if kept:
                out.append(
                    Reason(
                        what,
                        MANUAL,
                        f"{label(k)} {how}: Helm creates {label(became)} and leaves the old "
                        "one in the cluster (helm.sh/resource-policy: keep), unmanaged",
                        (f"delete {label(k)} by hand once {label(became)} serves",),
                    )
                )
                continue
            out.append(
                Reason(
                    what,
                    BLOCKED if kind == "CustomResourceDefinition" else MANUAL,
                    f"{label(k)} {how}: Helm deletes it and creates {label(became)}; "
                    f"this drops {drops(kind)}",
                    (f"back up {label(k)} if what it holds is needed, then upgrade",),
                )
            )
        elif kept:
            out.append(
                Reason(
                    KEPT,
                    SAFE,
                    f"{label(k)} is no longer in the release; helm.sh/resource-policy: keep "
                    "leaves it in the cluster, unmanaged",
                )
            )
        elif kind in ("CustomResourceDefinition", "PersistentVolumeClaim", "StatefulSet"):
            out.append(
                Reason(
                    DELETED,
                    BLOCKED if kind == "CustomResourceDefinition" else MANUAL,
                    f"{label(k)} is no longer installed: Helm deletes it, which drops "
                    f"{drops(kind)}",
                    (f"back up {label(k)} or keep it with helm.sh/resource-policy: keep",),
                )
            )
    return out


# ----------------------------------------------------------------------- immutable fields
_SELECTOR_KINDS = ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet")


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _blocked_field(key: tuple[str, str, str, str], path: str, old: Any, new: Any) -> Reason:
    shown_old = json.dumps(old, sort_keys=True, default=str)
    shown_new = json.dumps(new, sort_keys=True, default=str)
    cut = 120
    shown_old = shown_old if len(shown_old) <= cut else shown_old[: cut - 3] + "..."
    shown_new = shown_new if len(shown_new) <= cut else shown_new[: cut - 3] + "..."
    return Reason(
        IMMUTABLE,
        BLOCKED,
        f"{label(key)}: {path} changes from {shown_old} to {shown_new}; the API server "
        "refuses the update (field is immutable)",
        (
            f"delete {label(key)} (kubectl delete --cascade=orphan keeps its pods for a "
            "workload) before the upgrade, so Helm creates it anew; this drops "
            f"{drops(key[1])}",
        ),
    )


def _service(key: tuple[str, str, str, str], a: dict[str, Any], b: dict[str, Any]) -> list[Reason]:
    """A Service's address and type, as the 1.34 API server treats an update: a stated
    clusterIP may not change (an unset one keeps what was allocated, "None" included); a
    type change is accepted, the server allocating or releasing what the new type needs."""
    out: list[Reason] = []
    ip_a, ip_b = a.get("clusterIP"), b.get("clusterIP")
    type_a, type_b = a.get("type") or "ClusterIP", b.get("type") or "ClusterIP"
    if ip_b not in (None, "") and not _same(ip_a, ip_b) and type_b != "ExternalName":
        # from an unset (allocated) address too: it is refused unless the server happened
        # to allocate exactly this one
        out.append(_blocked_field(key, "spec.clusterIP", ip_a, ip_b))
    elif ip_a == "None" and ip_b in (None, "") and type_b != "ExternalName":
        out.append(
            Reason(
                IMMUTABLE,
                MANUAL,
                f"{label(key)}: clusterIP None is no longer stated, but the server keeps it: "
                "the Service stays headless",
                (f"delete {label(key)} before the upgrade if it must get a cluster IP",),
            )
        )
    if type_a != type_b:
        what = {
            "ExternalName": "its cluster IP is released",
            "NodePort": "node ports are allocated",
            "LoadBalancer": "node ports and a load balancer are allocated",
        }.get(type_b, "node ports or a load balancer are released")
        if type_a == "ExternalName":
            what = "a cluster IP is allocated"
        out.append(
            Reason(
                IMMUTABLE,
                MANUAL,
                f"{label(key)}: spec.type changes from {type_a} to {type_b}; the server "
                f"accepts it and {what} (clients of the old address must follow)",
            )
        )
    return out


def compare_immutable(
    key: tuple[str, str, str, str], old: dict[str, Any], new: dict[str, Any]
) -> list[Reason]:
    """The fields the API server refuses to change on an existing object."""
    kind = key[1]
    a, b = _spec(old), _spec(new)
    out: list[Reason] = []
    if kind in _SELECTOR_KINDS and not _same(a.get("selector"), b.get("selector")):
        out.append(_blocked_field(key, "spec.selector", a.get("selector"), b.get("selector")))
    if kind == "StatefulSet":
        for path in ("volumeClaimTemplates", "serviceName", "podManagementPolicy"):
            if not _same(a.get(path), b.get(path)):
                out.append(_blocked_field(key, f"spec.{path}", a.get(path), b.get(path)))
    if kind == "Job" and not _same(a.get("template"), b.get("template")):
        out.append(_blocked_field(key, "spec.template", a.get("template"), b.get("template")))
    if kind == "Service":
        out += _service(key, a, b)
    if kind in ("ConfigMap", "Secret") and old.get("immutable") is True:
        for path in ("data", "binaryData", "stringData"):
            if not _same(old.get(path), new.get(path)):
                out.append(_blocked_field(key, path, old.get(path), new.get(path)))
        if new.get("immutable") is not True:
            out.append(_blocked_field(key, "immutable", True, new.get("immutable")))
    return out


# ----------------------------------------------------------------------- CRDs
def _versions(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    versions = _spec(crd).get("versions")
    out: dict[str, dict[str, Any]] = {}
    if isinstance(versions, list):
        for v in versions:
            if isinstance(v, dict) and v.get("name"):
                out[str(v["name"])] = v
    return out


def _schema(version: dict[str, Any]) -> dict[str, Any]:
    schema = version.get("schema")
    schema = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
    return schema if isinstance(schema, dict) else {}


def _fields(schema: dict[str, Any], prefix: str = "") -> set[str]:
    """Every property path of an OpenAPI schema (``spec.driver.image``; ``[]`` for items)."""
    out: set[str] = set()
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            out.add(path)
            if isinstance(sub, dict):
                out |= _fields(sub, path)
    items = schema.get("items")
    if isinstance(items, dict):
        out |= _fields(items, f"{prefix}[]")
    return out


def _strategy(crd: dict[str, Any]) -> str:
    conv = _spec(crd).get("conversion")
    return str(conv.get("strategy") or "None") if isinstance(conv, dict) else "None"


def compare_crd(old: dict[str, Any], new: dict[str, Any], *, templated: bool) -> list[Reason]:
    """A CRD's served and stored versions, the stored version's fields, its conversion.

    ``templated`` CRDs (under templates/) are upgraded by Helm; CRDs in crds/ are not, so
    each change there is also a manual ``kubectl apply`` of the new CRD."""
    name = str(_meta(new).get("name") or _meta(old).get("name") or "?")
    out: list[Reason] = []
    va, vb = _versions(old), _versions(new)
    stored = [n for n, v in va.items() if v.get("storage")]
    for n, v in va.items():
        if n in vb:
            continue
        if v.get("storage"):
            out.append(
                Reason(
                    CRD_STORED_VERSION_REMOVED,
                    BLOCKED,
                    f"CRD {name}: version {n}, the stored version, is removed; the API server "
                    "refuses a CRD whose status.storedVersions names a version it no longer "
                    "lists",
                    (
                        f"migrate every {name} object to a version the new CRD keeps (read and "
                        "write each one back after a CRD that stores the new version)",
                        f"remove {n} from the CRD's status.storedVersions",
                        "then upgrade",
                    ),
                )
            )
        elif v.get("served", True):
            out.append(
                Reason(
                    CRD_VERSION_REMOVED,
                    MANUAL,
                    f"CRD {name}: served version {n} is removed; clients and manifests that "
                    f"use {name.split('.', 1)[-1]}/{n} stop working",
                    (f"move every client and manifest of {name} off {n} first",),
                )
            )
        elif v.get("served") is False:
            continue
    for n in stored:
        if n not in vb:
            continue
        lost = sorted(_fields(_schema(va[n])) - _fields(_schema(vb[n])))
        # only the shallowest paths: a removed map implies its children
        lost = [p for p in lost if not any(p.startswith(q + ".") or p.startswith(q + "[]")
                                           for q in lost if q != p)]  # fmt: skip
        if lost:
            shown = ", ".join(lost[:5]) + (f" and {len(lost) - 5} more" if len(lost) > 5 else "")
            out.append(
                Reason(
                    CRD_FIELD_REMOVED,
                    MANUAL,
                    f"CRD {name}: the stored version {n} no longer defines {shown}; the API "
                    "server prunes those fields from each object when it is next written",
                    (f"record the values of {shown} in existing {name} objects before upgrading",),
                )
            )
    if _strategy(old) != _strategy(new):
        out.append(
            Reason(
                CRD_CONVERSION,
                MANUAL,
                f"CRD {name}: conversion strategy changes from {_strategy(old)} to "
                f"{_strategy(new)}; a Webhook strategy needs its conversion service running "
                "before any object is read in another version",
                ("install and wait for the conversion webhook before applying the new CRD",),
            )
        )
    if out and not templated:
        out.append(
            Reason(
                CRD_NOT_UPGRADED,
                MANUAL,
                f"CRD {name} is in the chart's crds/ directory: helm upgrade never changes it",
                (f"apply the new CRD {name} (kubectl apply --server-side) before helm upgrade",),
            )
        )
    return out


def crd_map(objects: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        str(_meta(o).get("name")): o
        for o in objects
        if isinstance(o, dict) and o.get("kind") == "CustomResourceDefinition"
    }


# ----------------------------------------------------------------------- values and versions
def _major(version: str) -> tuple[int, int] | None:
    text = version.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0]
    parts = text.split(".")
    try:
        major = int(parts[0])
        minor = int(parts[1]) if len(parts) > 1 else 0
    except (ValueError, IndexError):
        return None
    return major, minor


def compare_versions(old: str, new: str, chart: str) -> list[Reason]:
    """A chart major version change (for 0.x charts, a minor change is one: semver
    promises nothing below 1.0); a downgrade."""
    a, b = _major(old), _major(new)
    if a is None or b is None:
        if old != new:
            return [
                Reason(
                    NOT_KNOWN,
                    UNKNOWN,
                    f"chart {chart} version {old!r} -> {new!r} is not a semantic version",
                )
            ]
        return []
    out: list[Reason] = []
    breaking = a[0] != b[0] or (a[0] == 0 and a[1] != b[1])
    if breaking:
        out.append(
            Reason(
                CHART_MAJOR,
                MANUAL,
                f"chart {chart} {old} -> {new} is a major version change"
                + (" (0.x: a minor change is one)" if a[0] == b[0] == 0 else ""),
                (f"read the {chart} {new} upgrade notes; they may ask for steps of their own",),
            )
        )
    if b < a:
        out.append(
            Reason(
                CHART_MAJOR,
                MANUAL,
                f"chart {chart} {old} -> {new} is a downgrade: Helm applies it, but data "
                "migrated by the newer version may not be readable",
            )
        )
    return out


Path_ = tuple[str, ...]


def _defined(path: Path_, defaults: Any, raw: Any) -> bool:
    """Whether a chart defines ``path`` (a free-form map or list defines all under it)."""
    d, r = defaults, raw
    for part in path:
        in_d = isinstance(d, dict) and part in d
        in_r = isinstance(r, dict) and part in r
        if not in_d and not in_r:
            free_d = isinstance(d, dict) and not d
            free_r = isinstance(r, dict) and not r
            return bool(free_d or free_r) and (d is not None or r is not None)
        d = d.get(part) if in_d else None
        r = r.get(part) if in_r else None
        if not isinstance(d, dict) and not isinstance(r, dict):
            return True
    return True


def _leaves(values: Any, prefix: Path_ = ()) -> list[Path_]:
    if not isinstance(values, dict) or not values:
        return [prefix] if prefix else []
    out: list[Path_] = []
    for k, v in values.items():
        out += _leaves(v, (*prefix, str(k)))
    return out


def ignored_values(old: Side, new: Side) -> list[Reason]:
    """Values the new side sets that the new chart does not define (Helm ignores them) and
    the old chart did read (renamed or removed upstream). A value neither chart defines
    is no change of the upgrade (``verify`` reports it); when the old chart is not known,
    every value the new chart ignores is named."""
    if new.defaults is None:
        return []
    out: list[Reason] = []
    seen: set[Path_] = set()
    for path in _leaves(new.values):
        if _defined(path, new.defaults, new.raw_values):
            continue
        top = path
        while len(top) > 1 and not _defined(top[:-1], new.defaults, new.raw_values):
            top = top[:-1]
        if top in seen:
            continue
        seen.add(top)
        dotted = ".".join(top)
        was = old.defaults is not None and _defined(top, old.defaults, old.raw_values)
        if old.defaults is not None and not was:
            continue
        if was:
            message = (
                f"value {dotted} was read by chart {old.chart} {old.version} and is not "
                f"defined by {new.version}: it is ignored after the upgrade (renamed or "
                "removed upstream)"
            )
        else:
            message = (
                f"value {dotted} is not defined by chart {new.chart} {new.version}: Helm ignores it"
            )
        out.append(
            Reason(
                VALUE_IGNORED,
                MANUAL,
                message,
                (f"find the key {new.version} reads instead of {dotted} and set that",),
            )
        )
    return out


# ----------------------------------------------------------------------- one component
def compare_component(old: Side, new: Side) -> list[Reason]:
    """Every reason the upgrade of one component from ``old`` to ``new`` gives."""
    out: list[Reason] = []
    if old.identity and old.identity == new.identity and old.release == new.release:
        return [
            Reason(
                UNCHANGED,
                SAFE,
                "unchanged: the same chart version, values and manifests on both sides",
            )
        ]
    if old.unknown:
        out.append(Reason(NOT_KNOWN, UNKNOWN, f"installed side: {old.unknown}"))
    if new.unknown:
        out.append(Reason(NOT_KNOWN, UNKNOWN, f"target side: {new.unknown}"))
    out += compare_versions(old.version, new.version, new.chart or old.chart)
    old_objs = index(old.objects or [], old.namespace)
    new_objs = index(new.objects or [], new.namespace)
    if (old.namespace, old.release) != (new.namespace, new.release):
        clash = sorted(set(old_objs) & set(new_objs)) if old.objects and new.objects else []
        if clash:
            out.append(
                Reason(
                    RELEASE_RENAMED,
                    BLOCKED,
                    f"release {old.namespace}/{old.release} becomes {new.namespace}/"
                    f"{new.release}: Helm refuses to install the new release over "
                    f"{len(clash)} objects the old one owns (first: {label(clash[0])})",
                    (
                        f"helm uninstall {words(old.release)} -n {words(old.namespace)} (this drops "
                        "everything it installed; CRDs in crds/ stay)",
                        f"install {new.release} from the bundle",
                    ),
                )
            )
        else:
            out.append(
                Reason(
                    RELEASE_RENAMED,
                    MANUAL,
                    f"release {old.namespace}/{old.release} becomes {new.namespace}/"
                    f"{new.release}: a new release is installed beside the old one",
                    (
                        f"helm uninstall {words(old.release)} -n {words(old.namespace)} "
                        "after the new release is ready",
                    ),
                )
            )
    if old.objects is not None and new.objects is not None:
        out += compare_identity(old_objs, new_objs)
        for key in sorted(set(old_objs) & set(new_objs)):
            out += compare_immutable(key, old_objs[key], new_objs[key])
        templated_old = crd_map(old.objects)
        templated_new = crd_map(new.objects)
        for name, crd in templated_new.items():
            if name in templated_old:
                out += compare_crd(templated_old[name], crd, templated=True)
        files_old, files_new = crd_map(old.crds), crd_map(new.crds)
        for name, crd in files_new.items():
            before = files_old.get(name) or templated_old.get(name)
            if before is not None and name not in templated_new:
                out += compare_crd(before, crd, templated=False)
    out += ignored_values(old, new)
    return out


# ----------------------------------------------------------------------- rendering a side
def parse_objects(texts: list[tuple[str, str]]) -> list[dict[str, Any]] | str:
    """The objects of each (YAML text, where) as Helm reads them, or why they cannot be read."""
    from aicr_tui.core.verify.analysis import _documents_of

    out: list[dict[str, Any]] = []
    for got in _documents_of(texts):
        if isinstance(got, ValueError):
            return str(got)
        out += got
    return out


def rendered_side(comp: Any, verifier: Any, *, release: str = "") -> Side:
    """``comp`` (a :class:`~aicr_tui.core.verify.model.VerifyComponent`) rendered with its values by
    the Helm engine, its manifests added; ``unknown`` says why the objects are not known."""
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.verify import engine, helm

    side = Side(
        component=comp.name,
        release=release or comp.name,
        namespace=comp.namespace,
        chart=comp.chart.rsplit("/", 1)[-1] or comp.name,
        version=comp.version,
        values=comp.values,
        objects=None,
        identity=json.dumps(
            [comp.chart, comp.source, comp.version, comp.namespace, comp.values, comp.manifests],
            sort_keys=True,
            default=str,
        ),
    )
    texts = [(text, f"{comp.folder}/{name}") for name, text in sorted(comp.manifests.items())]
    if not comp.has_chart:
        got = parse_objects(texts)
        if isinstance(got, str):
            side.unknown = got
        else:
            side.objects = got
        return side
    try:
        with engine.chart_budget():
            src = verifier.source(comp)
            if src.kind != "chart" or src.path is None:
                side.unknown = (
                    f"chart {side.chart} {comp.version} cannot be rendered ({src.kind}: "
                    f"{src.label})"
                )
                return side
            if src.stand_in:
                side.unknown = (
                    f"only a stand-in of chart {side.chart} {comp.version} is available "
                    f"({src.stand_in})"
                )
                return side
            chart = helm.load_chart(src.path)
            if chart.version.lstrip("v") != comp.version.lstrip("v"):
                side.unknown = (
                    f"the chart found for {comp.version} is version {chart.version} ({src.label})"
                )
                return side
            side.defaults, side.raw_values = chart.defaults, chart.raw_values
            side.chart_name = chart.name
            rendered = chart.render(comp.values, release=side.release, namespace=comp.namespace)
            crds = parse_objects([(t, f"{side.chart} crds/") for t in chart.crds])
    except helm.RenderError as exc:
        side.unknown = f"chart {side.chart} {comp.version} does not render: {exc}"
        return side
    except AicrError as exc:
        side.unknown = exc.render()
        return side
    templates = [
        (text, path)
        for path, text in sorted(rendered.items())
        if text.strip() and not path.endswith("NOTES.txt")
    ]
    got = parse_objects(templates + texts)
    if isinstance(got, str) or isinstance(crds, str):
        side.unknown = got if isinstance(got, str) else str(crds)
        return side
    side.objects = got
    side.crds = crds
    return side
