"""The Helm releases installed on a cluster, read from Helm's own release records.

Helm 3 stores each revision of a release as a Secret of type ``helm.sh/release.v1``
(labels ``owner=helm``, ``name``, ``status``, ``version``) whose ``data.release`` is the
release as JSON, gzipped and base64-encoded (and base64-encoded once more by the API, as
every Secret value). One paged ``list`` of those Secrets across namespaces (read-only:
RBAC ``list`` on ``secrets``), the newest revision of each release kept.

Each release gives its name, namespace, status, chart name and version, the values the
user supplied (``config``), the rendered manifest (what is installed, hooks excluded) and
the chart's ``crds/`` files (Helm keeps them in ``chart.files``).
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.foundation.limits import MAX_API_RESPONSE_BYTES, value_bound_violation

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
PAGE_SIZE = 20  # release records carry the whole chart: a page stays far below the wire cap
MAX_RELEASE_BYTES = 4 * MAX_API_RESPONSE_BYTES
MAX_PAGES = 200


@dataclass
class HelmRelease:
    name: str
    namespace: str
    revision: int
    status: str
    chart: str
    version: str
    values: dict[str, Any]
    manifest: str
    crds: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    """The chart's own values.yaml (``chart.values``)."""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _bad(where: str, problem: str) -> AicrError:
    return AicrError(ErrorCode.SERVICE_UNAVAILABLE, f"the Helm release record {where} {problem}")


def decode_release(data: str, where: str) -> dict[str, Any]:
    """``data.release`` of a release Secret as the API returns it -> the release JSON."""
    try:
        inner = base64.b64decode(data, validate=True)
        packed = base64.b64decode(inner, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(where, "is not base64 text") from None
    if packed[:2] == b"\x1f\x8b":
        unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            text = unzip.decompress(packed, MAX_RELEASE_BYTES)
        except zlib.error:
            raise _bad(where, "is not valid gzip") from None
        if unzip.unconsumed_tail:
            raise _bad(where, f"is larger than {MAX_RELEASE_BYTES} bytes uncompressed")
    else:
        text = packed  # Helm reads an uncompressed record too
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        raise _bad(where, "is not JSON") from None
    if not isinstance(body, dict):
        raise _bad(where, "is not a JSON object")
    reason = value_bound_violation(body)
    if reason is not None:
        raise _bad(where, f"has JSON {reason}")
    return body


def _crd_files(chart: dict[str, Any]) -> list[str]:
    out: list[str] = []
    files = chart.get("files")
    if not isinstance(files, list):
        return out
    for item in files:
        if not isinstance(item, dict):
            continue
        name = str(item.get("name") or "")
        if not name.startswith("crds/") or not name.endswith((".yaml", ".yml", ".json")):
            continue
        try:
            out.append(base64.b64decode(str(item.get("data") or "")).decode("utf-8"))
        except (binascii.Error, ValueError):
            continue
    return out


def release_of(body: dict[str, Any], where: str) -> HelmRelease:
    """The fields of one decoded release record (every one type-checked)."""
    chart = _map(body.get("chart"))
    meta = _map(chart.get("metadata"))
    info = _map(body.get("info"))
    config = body.get("config")
    from aicr_tui.core.foundation.names import NAMESPACE, RELEASE_NAME, shown

    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise _bad(where, "has no release name")
    if not RELEASE_NAME.test(name):
        raise _bad(where, f"names release {shown(name)}, not a valid Helm release name")
    namespace = str(body.get("namespace") or "")
    if namespace and not NAMESPACE.test(namespace):
        raise _bad(where, f"names namespace {shown(namespace)}, not a valid namespace")
    try:
        revision = int(body.get("version") or 0)
    except (TypeError, ValueError):
        revision = 0
    return HelmRelease(
        name=name,
        namespace=namespace,
        revision=revision,
        status=str(info.get("status") or "unknown"),
        chart=str(meta.get("name") or ""),
        version=str(meta.get("version") or ""),
        values=config if isinstance(config, dict) else {},
        manifest=str(body.get("manifest") or ""),
        crds=_crd_files(chart),
        defaults=_map(chart.get("values")),
    )


def newest(releases: list[HelmRelease]) -> list[HelmRelease]:
    """The newest revision of each (namespace, name), in name order."""
    best: dict[tuple[str, str], HelmRelease] = {}
    for rel in releases:
        key = (rel.namespace, rel.name)
        if key not in best or rel.revision > best[key].revision:
            best[key] = rel
    return [best[k] for k in sorted(best)]


def records_of(items: list[Any], what: str) -> list[HelmRelease]:
    """Release records from a list of Secrets (as the API returns them)."""
    out: list[HelmRelease] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") != RELEASE_SECRET_TYPE:
            continue
        meta = _map(item.get("metadata"))
        where = f"{meta.get('namespace', '?')}/{meta.get('name', f'items[{index}]')}"
        data = _map(item.get("data"))
        raw = data.get("release")
        if not isinstance(raw, str):
            raise _bad(f"{where} ({what})", "has no data.release")
        out.append(release_of(decode_release(raw, where), where))
    return out


def read_releases(
    kubeconfig: str | None, context: str | None, *, timeout: float = 15.0
) -> tuple[list[HelmRelease], str]:
    """Every release's newest revision on the cluster, and where the configuration came from."""
    from kubernetes import client  # type: ignore[import-untyped,unused-ignore]

    from aicr_tui.core.live.kube import api_client
    from aicr_tui.core.live.kube_replies import api_error, decode, transport_errors
    from aicr_tui.core.live.progress import page_cap, positive_timeout

    seconds = positive_timeout(timeout, "Kubernetes")
    api, source = api_client(kubeconfig, context, exec_timeout=seconds)
    what = "GET /api/v1/secrets (type helm.sh/release.v1)"
    found: list[HelmRelease] = []
    try:
        core_api = client.CoreV1Api(api)
        token: str | None = None
        page = 0
        while True:
            page += 1
            page_cap(page, MAX_PAGES, f"the Kubernetes API kept answering {what} with a next page")
            kwargs: dict[str, Any] = {
                "limit": PAGE_SIZE,
                "field_selector": f"type={RELEASE_SECRET_TYPE}",
                "label_selector": "owner=helm",
            }
            if token:
                kwargs["_continue"] = token
            try:
                response = core_api.list_secret_for_all_namespaces(
                    _preload_content=False, _request_timeout=(seconds, seconds), **kwargs
                )
                body = decode(response, what)
            except transport_errors() as exc:
                raise api_error(
                    exc, "list Helm release Secrets", 'list on "secrets"', source, seconds
                ) from exc
            items = body.get("items")
            if not isinstance(items, list):
                raise _bad(what, "answered without an items list")
            found += records_of(items, what)
            meta = _map(body.get("metadata"))
            token = str(meta.get("continue") or "") or None
            if not token:
                break
    finally:
        api.close()
    return newest(found), source
