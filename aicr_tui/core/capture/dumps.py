"""What the provider-dump readers share: the one-line decode failure that names the file and
the command whose output was expected, and the turning of a decode error into it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.gojson import GoDecodeError, JsonPairs, load_json_pairs

# What a dump of each kind holds, and the option that reads it (the CLI's; the wizard
# tells dumps apart by their content, so it never needs the name).
AKS_POOLS = "an AKS node-pool list (`az aks nodepool list -o json`), which --aks-gpu-pools reads"
OKE_ADDONS = "an OKE add-ons list (`oci ce cluster list-addons`), which --oke-addons reads"
OKE_LEGACY = "a Kubernetes DaemonSet (`kubectl get ds -o json`), which --oke-legacy-daemonset reads"


def decode_failure(description: str, source: str, expected: str, reason: str) -> AicrError:
    """``failed to decode <description> file "<source>": expected <expected>`` (and why)."""
    return invalid(f'failed to decode {description} file "{source}": expected {expected}', reason)


@contextmanager
def decoding(failure: Callable[[str], Exception]) -> Iterator[None]:
    """Raise ``failure(reason)`` for a GoDecodeError inside the block (chained to it)."""
    try:
        yield
    except GoDecodeError as exc:
        raise failure(str(exc)) from exc


def decode_json(raw: bytes, failure: Callable[[str], Exception]) -> Any:
    """The dump's JSON as :func:`load_json_pairs` reads it (Go's decoder rules), or
    ``failure(reason)`` raised."""
    with decoding(failure):
        return load_json_pairs(raw)


def _items(value: Any) -> list[tuple[str, Any]]:
    """An object's members, decoded with duplicate keys kept (JsonPairs) or as a dict."""
    if isinstance(value, JsonPairs):
        return list(value)
    return list(value.items()) if isinstance(value, dict) else []


def _keys(value: Any) -> set[str]:
    return {key for key, _ in _items(value)}


def dump_kind(document: Any) -> str | None:
    """Which provider dump ``document`` is, when it is plainly one of the three (for a file
    given to the wrong option); None when it is none of them."""
    if isinstance(document, list) and not isinstance(document, JsonPairs) and document:
        if _keys(document[0]) & {"vmSize", "agentPoolType", "gpuProfile", "osSku"}:
            return AKS_POOLS
        return None
    members = _items(document)
    if ("kind", "DaemonSet") in members:
        return OKE_LEGACY
    for key, value in members:
        if key == "data" and isinstance(value, list) and value:
            if _keys(value[0]) & {"lifecycle-state", "current-installed-version"}:
                return OKE_ADDONS
    return None


def wrong_dump(document: Any, expected: str) -> str:
    """`` — this file is <another kind>`` when ``document`` is a dump of another kind than
    ``expected``; empty otherwise."""
    kind = dump_kind(document)
    return f"; this file is {kind}" if kind is not None and kind != expected else ""
