"""The ``K8s.oke-addons`` reading, projected from ``oci ce cluster list-addons``.

The dump is the JSON object the OCI CLI prints: ``{"data": [...]}`` with kebab-case keys.
Only each add-on's ``name`` and ``lifecycle-state`` are read, with Go's encoding/json
rules (see ``aicr_tui.core.foundation.gojson``). The first ``NvidiaGpuPlugin`` entry decides the reading:
``installed`` when ACTIVE, ``addon-<state>`` otherwise, ``absent`` when there is none.

Oracle's ``NvidiaGpuOperator`` and ``NvidiaNetworkOperator`` add-ons are reported as
warnings: an AICR bundle deploys both operators itself, and two lifecycle managers would
fight over the same releases.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from aicr_tui.core.capture.dumps import (
    OKE_ADDONS,
    decode_failure,
    decode_json,
    decoding,
    wrong_dump,
)
from aicr_tui.core.documents.snapshot import Subtype
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import read_dump
from aicr_tui.core.foundation.gojson import (
    GoField,
    GoSlice,
    decode_go_struct,
    go_equal_fold,
    go_lower,
    json_kind,
    new_go_struct,
)

if TYPE_CHECKING:
    import threading

DESCRIPTION = "OKE cluster add-ons"
SUBTYPE = "oke-addons"
SOURCE_COMMAND = "oci ce cluster list-addons --cluster-id <cluster-ocid> --all --output json"

GPU_PLUGIN_ADDON = "NvidiaGpuPlugin"
INSTALLED = "installed"
ABSENT = "absent"
STATE_PREFIX = "addon-"

# Oracle-managed add-ons that conflict with the operators an AICR bundle deploys.
CONFLICTING_ADDONS = ("NvidiaGpuOperator", "NvidiaNetworkOperator")

_ADDON_FIELDS = (GoField("name", "string"), GoField("lifecycle-state", "string"))
_DUMP_FIELDS = (GoField("data", "struct_slice", _ADDON_FIELDS),)


@dataclass(frozen=True)
class OkeAddon:
    name: str
    lifecycle_state: str


@dataclass(frozen=True)
class OkeAddonsProjection:
    source: str
    addons: list[OkeAddon]
    subtype: Subtype
    warnings: list[str] = field(default_factory=list)

    @property
    def nvidia_gpu_plugin(self) -> str:
        return str(self.subtype.data["nvidia-gpu-plugin"])


def addon_reading(state: str) -> str:
    """``installed`` for ACTIVE (any case, untrimmed), else ``addon-`` + the lowered state."""
    if go_equal_fold(state, "ACTIVE"):
        return INSTALLED
    return STATE_PREFIX + go_lower(state)


def conflict_warning(addon: OkeAddon) -> str:
    operator = "GPU Operator" if addon.name.lower() == "nvidiagpuoperator" else "Network Operator"
    return (
        f"Oracle's {addon.name} add-on is {addon.lifecycle_state or 'listed'} on this cluster: the "
        f"AICR bundle deploys the NVIDIA {operator} itself and two lifecycle managers would fight "
        f"over the same releases; disable the {addon.name} add-on before deploying the bundle"
    )


def _decode_failure(source: str, reason: str) -> Exception:
    return decode_failure(
        "OKE add-ons", source, f"the JSON object emitted by `{SOURCE_COMMAND}`", reason
    )


def project_oke_addons(raw: bytes, source: str) -> OkeAddonsProjection:
    """Project the bytes of a ``list-addons`` dump into the ``oke-addons`` reading."""
    document = decode_json(raw, partial(_decode_failure, source))
    decoded = new_go_struct(_DUMP_FIELDS)
    if document is not None and json_kind(document) != "object":
        raise _decode_failure(
            source,
            f"cannot unmarshal {json_kind(document)} into the add-on list (an object)"
            + wrong_dump(document, OKE_ADDONS),
        )
    with decoding(partial(_decode_failure, source)):
        decode_go_struct(document, _DUMP_FIELDS, decoded, "dump")
    data = decoded["data"]
    if not isinstance(data, GoSlice):
        raise invalid(
            f'failed to decode OKE add-ons file "{source}": no data array, expected the JSON '
            f"object emitted by `{SOURCE_COMMAND}`"
        )
    addons = [OkeAddon(str(a["name"]), str(a["lifecycle-state"])) for a in data.items]
    reading = ABSENT
    for addon in addons:
        if go_equal_fold(addon.name, GPU_PLUGIN_ADDON):
            reading = addon_reading(addon.lifecycle_state)
            break
    warnings = [
        conflict_warning(a)
        for a in addons
        if any(go_equal_fold(a.name, c) for c in CONFLICTING_ADDONS)
    ]
    subtype = Subtype(
        subtype=SUBTYPE, data={"addon-count": len(addons), "nvidia-gpu-plugin": reading}
    )
    return OkeAddonsProjection(source=source, addons=addons, subtype=subtype, warnings=warnings)


def load_oke_addons(
    path: str | os.PathLike[str], *, cancel: threading.Event | None = None
) -> OkeAddonsProjection:
    """Read a ``list-addons`` dump with the bounded-read rules and project it."""
    p = os.path.normpath(os.fspath(path))
    return project_oke_addons(read_dump(p, DESCRIPTION, SOURCE_COMMAND, cancel=cancel), p)
