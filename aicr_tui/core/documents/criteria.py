"""Recipe criteria: what a user asks for, and how overlays match it.

Five enum dimensions (service, accelerator, intent, os, platform) plus ``nodes``. Input is
trimmed and lower-cased and mapped through the upstream aliases; an unspecified field is
the literal ``any``. Matching is asymmetric: an overlay's ``any`` matches every query
value, but a query's ``any`` never matches a specific overlay value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.names import did_you_mean

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot

ANY = "any"
DIMENSIONS: tuple[str, ...] = ("service", "accelerator", "intent", "os", "platform")

# Static vocabularies (upstream criteria.go). Overlays may register further values.
STATIC_VALUES: dict[str, tuple[str, ...]] = {
    "service": ("eks", "gke", "aks", "oke", "kind", "lke", "bcm", "metal3", "ocp"),
    "accelerator": (
        "h100",
        "h200",
        "gb200",
        "gb300",
        "b200",
        "a100",
        "l40",
        "l40s",
        "rtx-pro-6000",
    ),
    "intent": ("training", "inference"),
    "os": ("ubuntu", "rhel", "cos", "amazonlinux", "ol", "talos"),
    "platform": ("dynamo", "kubeflow", "nim", "runai", "slurm"),
}

ALIASES: dict[str, dict[str, str]] = {
    "service": {
        "": ANY,
        "self-managed": ANY,
        "self": ANY,
        "vanilla": ANY,
        "openshift": "ocp",
    },
    "os": {"al2": "amazonlinux", "al2023": "amazonlinux"},
}

FLAGS: dict[str, str] = {
    "service": "--service",
    "accelerator": "--accelerator",
    "intent": "--intent",
    "os": "--os",
    "platform": "--platform",
    "nodes": "--nodes",
}


class Criteria(BaseModel):
    """A normalised criteria query (or an overlay's criteria block)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    service: str = ANY
    accelerator: str = ANY
    intent: str = ANY
    os: str = ANY
    platform: str = ANY
    nodes: int = 0

    def value(self, field: str) -> str:
        return str(getattr(self, field))

    @property
    def specificity(self) -> int:
        """Count of specific dimensions, plus one when ``nodes`` is set."""
        n = sum(1 for f in DIMENSIONS if getattr(self, f) not in (ANY, ""))
        return n + (1 if self.nodes else 0)

    def stated(self) -> dict[str, str]:
        """The dimensions the query names with a specific value."""
        return {f: getattr(self, f) for f in DIMENSIONS if getattr(self, f) not in (ANY, "")}

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {f: getattr(self, f) for f in DIMENSIONS}
        if self.nodes:
            doc["nodes"] = self.nodes
        return doc

    def label(self) -> str:
        parts = [f"{f}={v}" for f, v in self.stated().items()]
        if self.nodes:
            parts.append(f"nodes={self.nodes}")
        return ", ".join(parts) or "any"


def overlay_matches(overlay: Criteria, query: Criteria) -> bool:
    """Asymmetric wildcard match of one overlay's criteria against a query."""
    for f in DIMENSIONS:
        want = getattr(overlay, f)
        if want in (ANY, ""):
            continue
        if getattr(query, f) != want:
            return False
    return True


def normalise_value(field: str, raw: object) -> str:
    text = "" if raw is None else str(raw).strip().lower()
    mapped = ALIASES.get(field, {}).get(text, text)
    return ANY if mapped == "" else mapped


def valid_values(field: str, registered: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    values = set(STATIC_VALUES[field])
    if registered:
        values.update(registered.get(field, ()))
    values.discard(ANY)
    return sorted(values)


def parse_criteria(
    *,
    service: object = None,
    accelerator: object = None,
    intent: object = None,
    os: object = None,
    platform: object = None,
    nodes: object = None,
    registered: Mapping[str, Iterable[str]] | None = None,
) -> Criteria:
    """Normalise and check user criteria; an unknown value lists the valid ones.

    ``registered`` holds extra values that loaded overlays declare (the criteria registry).
    """
    raw = {
        "service": service,
        "accelerator": accelerator,
        "intent": intent,
        "os": os,
        "platform": platform,
    }
    out: dict[str, Any] = {}
    for field, value in raw.items():
        norm = normalise_value(field, value)
        if norm != ANY:
            allowed = valid_values(field, registered)
            if norm not in allowed:
                raise invalid(
                    f'invalid {field} type: "{norm}" ({FLAGS[field]}); '
                    f"valid values: {', '.join(allowed)}" + did_you_mean(norm, list(allowed))
                )
        out[field] = norm
    out["nodes"] = parse_nodes(nodes)
    return Criteria.model_construct(**out)  # normalised str and int values above


def parse_nodes(value: object) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise invalid(f'invalid nodes value "{value}" (--nodes); expected an integer >= 0')
    try:
        n = int(str(value).strip())
    except ValueError as exc:
        raise invalid(f'invalid nodes value "{value}" (--nodes); expected an integer >= 0') from exc
    if n < 0:
        raise invalid(f"invalid nodes value {n} (--nodes); expected an integer >= 0")
    return n


def overlay_criteria(raw: Mapping[str, Any], source: str) -> Criteria:
    """Normalise an overlay's criteria block (no vocabulary check: overlays register values)."""
    out: dict[str, Any] = {}
    for field in DIMENSIONS:
        out[field] = normalise_value(field, raw.get(field))
    unknown = sorted(set(raw) - set(DIMENSIONS) - {"nodes"})
    if unknown:
        raise invalid(
            f"{source}: unknown criteria field {', '.join(unknown)}; "
            f"expected {', '.join(DIMENSIONS)} or nodes"
        )
    try:
        out["nodes"] = parse_nodes(raw.get("nodes"))
    except Exception as exc:
        raise invalid(f"{source}: criteria.nodes must be an integer >= 0") from exc
    return Criteria.model_construct(**out)  # normalised str and int values above


# Snapshot fingerprint -> criteria (service, accelerator, os; never intent or platform).
PROVIDER_SERVICES = {"azure": "aks", "oci": "oke", "aws": "eks", "gce": "gke", "gcp": "gke"}
ACCELERATOR_TOKENS = (
    ("gb300", "gb300"),
    ("gb200", "gb200"),
    ("h200", "h200"),
    ("h100", "h100"),
    ("b200", "b200"),
    ("a100", "a100"),
    ("l40s", "l40s"),
    ("l40", "l40"),
    ("rtx pro 6000", "rtx-pro-6000"),
    ("rtx-pro-6000", "rtx-pro-6000"),
)
OS_IDS = {
    "ubuntu": "ubuntu",
    "ol": "ol",
    "rhel": "rhel",
    "amzn": "amazonlinux",
    "cos": "cos",
    "talos": "talos",
}


def _reading(snapshot: Snapshot, mtype: str, subtype: str, key: str) -> str:
    value = snapshot.reading_or_none(mtype, subtype, key)
    return "" if value is None else str(value).strip().lower()


def criteria_from_snapshot(snapshot: Snapshot) -> dict[str, str]:
    """Service, accelerator and OS the snapshot's fingerprint names (empty when unknown)."""
    out: dict[str, str] = {}
    service = PROVIDER_SERVICES.get(_reading(snapshot, "K8s", "node", "provider"), "")
    if not service and snapshot.subtype("K8s", "aks-gpu-pools") is not None:
        service = "aks"
    if not service and snapshot.subtype("K8s", "oke-addons") is not None:
        service = "oke"
    if service:
        out["service"] = service
    model = _reading(snapshot, "GPU", "hardware", "model")
    for token, accel in ACCELERATOR_TOKENS:
        if token in model:
            out["accelerator"] = accel
            break
    os_id = OS_IDS.get(_reading(snapshot, "OS", "release", "ID"), "")
    if os_id:
        out["os"] = os_id
    return out
