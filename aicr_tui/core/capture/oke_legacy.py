"""The ``K8s.oke-legacy-plugin`` reading: Oracle's pre-add-on device-plugin DaemonSet.

Older OKE clusters run NVIDIA's device plugin as the DaemonSet
``kube-system/nvidia-gpu-device-plugin``, reconciled by the legacy addon-manager (label
``addonmanager.kubernetes.io/mode: Reconcile``). ``list-addons`` cannot see it, so it is
read from the cluster (live) or from a ``kubectl get ... -o json`` dump (offline).

Collapse, in order: could not look → ``unknown``/``unknown``; not there →
``none``/``absent``; same name without the Reconcile label → ``none``/``unrelated``
(product decision: an unrelated workload that happens to share the name); labelled but
without ``status.desiredNumberScheduled`` (a manifest, not an API read: it cannot say how
many nodes the plugin targets) → ``unknown``/``unknown``, fail closed; labelled with a status
the DaemonSet controller has not yet written for the object's generation
(``status.observedGeneration`` missing or below ``metadata.generation``) → ``unknown``/``unknown``:
the API server stores a new DaemonSet with ``desiredNumberScheduled: 0`` and no
``observedGeneration`` until the controller's first sync, so that 0 is a default, not an
observation; labelled with 0 desired nodes → ``none``/``disabled``; labelled with 1 or more →
``active``/``active``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from aicr_tui.core.capture.dumps import OKE_LEGACY, decode_failure, decoding, wrong_dump
from aicr_tui.core.documents.snapshot import Subtype
from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.fileio import read_dump
from aicr_tui.core.foundation.gojson import json_kind, load_json_pairs, pairs_to_plain

if TYPE_CHECKING:
    import threading

DESCRIPTION = "OKE legacy device-plugin DaemonSet"
SUBTYPE = "oke-legacy-plugin"
NAMESPACE = "kube-system"
NAME = "nvidia-gpu-device-plugin"
MANAGER_LABEL = "addonmanager.kubernetes.io/mode"
MANAGER_RECONCILE = "Reconcile"
SOURCE_COMMANDS = (
    f"kubectl get daemonsets -n {NAMESPACE} -o json",
    f"kubectl get daemonset -n {NAMESPACE} {NAME} -o json",
)

PLUGIN_NONE = "none"
PLUGIN_ACTIVE = "active"
PLUGIN_UNKNOWN = "unknown"

DETAIL_ABSENT = "absent"
DETAIL_UNRELATED = "unrelated"
DETAIL_DISABLED = "disabled"
DETAIL_ACTIVE = "active"
DETAIL_UNKNOWN = "unknown"


@dataclass(frozen=True)
class LegacyPluginProjection:
    """The collapsed reading, its detail, and a sentence saying why."""

    plugin: str
    daemonset: str
    reason: str
    subtype: Subtype
    desired: int | None = None
    source: str | None = None


def _projection(
    plugin: str, detail: str, reason: str, desired: int | None, source: str | None
) -> LegacyPluginProjection:
    subtype = Subtype(
        subtype=SUBTYPE, data={"nvidia-gpu-device-plugin": plugin, "daemonset": detail}
    )
    return LegacyPluginProjection(plugin, detail, reason, subtype, desired, source)


def _labels(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}


def _desired(obj: dict[str, Any]) -> int | None:
    """``status.desiredNumberScheduled``; None when the object carries no such status (a
    manifest, not what the API server returned), which says nothing about the nodes."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return None
    value = status.get("desiredNumberScheduled", status.get("desired_number_scheduled"))
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(
            f"DaemonSet {NAMESPACE}/{NAME} status.desiredNumberScheduled is {value!r}, "
            "expected an integer"
        )
    return value


def _generations(obj: dict[str, Any]) -> tuple[int, int | None] | None:
    """(``metadata.generation``, ``status.observedGeneration``) when the object carries a
    generation (an API read does; a hand-written manifest may not); None otherwise."""
    metadata = obj.get("metadata")
    generation = metadata.get("generation") if isinstance(metadata, dict) else None
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        return None
    status = obj.get("status")
    observed = (
        status.get("observedGeneration", status.get("observed_generation"))
        if isinstance(status, dict)
        else None
    )
    if isinstance(observed, bool) or not isinstance(observed, int):
        return generation, None
    return generation, observed


def classify_legacy_daemonset(
    obj: dict[str, Any] | None, *, error: str | None = None, source: str | None = None
) -> LegacyPluginProjection:
    """Collapse the DaemonSet (``None`` when it does not exist) into the reading.

    ``error`` is the reason the API could not be consulted (RBAC, timeout, transport): it
    always reads ``unknown``, never ``none``. ``obj`` is the DaemonSet in its API JSON
    shape (camelCase keys).
    """
    if error is not None:
        return _projection(
            PLUGIN_UNKNOWN,
            DETAIL_UNKNOWN,
            f"could not read DaemonSet {NAMESPACE}/{NAME}: {' '.join(error.split())}",
            None,
            source,
        )
    if obj is None:
        return _projection(
            PLUGIN_NONE,
            DETAIL_ABSENT,
            f"no DaemonSet {NAMESPACE}/{NAME}: the legacy device plugin is not installed",
            None,
            source,
        )
    labels = _labels(obj)
    desired = _desired(obj)
    if labels.get(MANAGER_LABEL) != MANAGER_RECONCILE:
        return _projection(
            PLUGIN_NONE,
            DETAIL_UNRELATED,
            f"DaemonSet {NAMESPACE}/{NAME} lacks the label {MANAGER_LABEL}={MANAGER_RECONCILE}: "
            "an unrelated workload sharing the name, not Oracle's legacy plugin",
            desired,
            source,
        )
    if desired is None:
        return _projection(
            PLUGIN_UNKNOWN,
            DETAIL_UNKNOWN,
            f"DaemonSet {NAMESPACE}/{NAME} carries the {MANAGER_LABEL}={MANAGER_RECONCILE} label "
            "but no status.desiredNumberScheduled: a manifest, not an API read, cannot say how "
            f"many nodes the plugin targets; dump it from the cluster with `{SOURCE_COMMANDS[1]}`",
            None,
            source,
        )
    generations = _generations(obj)
    if generations is not None and (generations[1] is None or generations[1] < generations[0]):
        generation, observed = generations
        seen = "none" if observed is None else str(observed)
        return _projection(
            PLUGIN_UNKNOWN,
            DETAIL_UNKNOWN,
            f"DaemonSet {NAMESPACE}/{NAME} is at generation {generation} but its status was "
            f"written for {seen} (status.observedGeneration): the DaemonSet controller has not "
            "synced it yet, so status.desiredNumberScheduled cannot say how many nodes the "
            "plugin targets; capture again once the controller has caught up",
            None,
            source,
        )
    if desired == 0:
        return _projection(
            PLUGIN_NONE,
            DETAIL_DISABLED,
            f"the legacy device plugin DaemonSet {NAMESPACE}/{NAME} targets no node "
            "(disabled on every GPU pool)",
            desired,
            source,
        )
    if desired < 0:
        raise invalid(
            f"DaemonSet {NAMESPACE}/{NAME} status.desiredNumberScheduled is {desired}, "
            "expected zero or more"
        )
    return _projection(
        PLUGIN_ACTIVE,
        DETAIL_ACTIVE,
        f"the legacy device plugin DaemonSet {NAMESPACE}/{NAME} targets {desired} node(s)",
        desired,
        source,
    )


def _decode_failure(source: str, reason: str) -> Exception:
    return decode_failure(
        DESCRIPTION,
        source,
        f"the JSON emitted by `{SOURCE_COMMANDS[0]}` or `{SOURCE_COMMANDS[1]}`",
        reason,
    )


def _identity(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return None, None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return (
        name if isinstance(name, str) else None,
        namespace if isinstance(namespace, str) else None,
    )


def _is_target(obj: dict[str, Any]) -> bool:
    name, namespace = _identity(obj)
    return name == NAME and namespace in (None, NAMESPACE)


def _check_shape(obj: dict[str, Any], source: str, where: str) -> None:
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _decode_failure(source, f"{where}.metadata is a {json_kind(metadata)}, not an object")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    if labels is not None and not (
        isinstance(labels, dict) and all(isinstance(v, str) for v in labels.values())
    ):
        raise _decode_failure(source, f"{where}.metadata.labels is not a map of strings")
    status = obj.get("status")
    if status is not None and not isinstance(status, dict):
        raise _decode_failure(source, f"{where}.status is not an object")


def project_legacy_daemonset(raw: bytes, source: str) -> LegacyPluginProjection:
    """Classify a ``kubectl get daemonset(s) -o json`` dump (a List or one DaemonSet)."""
    with decoding(partial(_decode_failure, source)):
        document = pairs_to_plain(load_json_pairs(raw))
    if not isinstance(document, dict):
        raise _decode_failure(source, f"got a JSON {json_kind(document)}, expected an object")
    kind = document.get("kind")
    items = document.get("items")
    if kind in ("List", "DaemonSetList") or (kind is None and "items" in document):
        if not isinstance(items, list):
            raise _decode_failure(source, "the List has no items array")
        found: dict[str, Any] | None = None
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise _decode_failure(source, f"items[{index}] is a {json_kind(item)}")
            if item.get("kind", "DaemonSet") != "DaemonSet" or not _is_target(item):
                continue
            _check_shape(item, source, f"items[{index}]")
            found = item
            break
        return _classify_file(found, source)
    if kind == "DaemonSet":
        _check_shape(document, source, "the DaemonSet")
        if not _is_target(document):
            name, namespace = _identity(document)
            raise invalid(
                f'{DESCRIPTION} file "{source}" holds DaemonSet '
                f'"{namespace or "?"}/{name or "?"}", expected "{NAMESPACE}/{NAME}"'
            )
        return _classify_file(document, source)
    raise _decode_failure(
        source,
        f'kind is "{kind}", expected List, DaemonSetList or DaemonSet'
        + wrong_dump(document, OKE_LEGACY),
    )


def _classify_file(obj: dict[str, Any] | None, source: str) -> LegacyPluginProjection:
    try:
        return classify_legacy_daemonset(obj, source=source)
    except AicrError as exc:
        raise invalid(f'{DESCRIPTION} file "{source}": {exc.message}') from exc


def load_legacy_daemonset(
    path: str | os.PathLike[str], *, cancel: threading.Event | None = None
) -> LegacyPluginProjection:
    """Read a ``kubectl get ... -o json`` dump with the bounded-read rules and classify it."""
    p = os.path.normpath(os.fspath(path))
    return project_legacy_daemonset(read_dump(p, DESCRIPTION, SOURCE_COMMANDS[0], cancel=cancel), p)
