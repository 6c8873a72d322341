"""The Helm releases installed on a cluster, read from Helm's own release records.

Helm 3 and 4 keep each release revision in a Secret labelled ``owner=helm``; the deployed
revision also carries ``status=deployed``. Its ``release`` data is the release as JSON,
gzip-compressed and base64-encoded (then base64-encoded again by the API, as all Secret
data). The record holds the chart's name and version, the user's values (``config``), the
chart's defaults, its files (``crds/`` among them) and the rendered ``manifest``: what
``upgrade-check --from -k`` compares with the target, with nothing re-rendered.

Reading secrets needs ``list`` on ``secrets`` in every namespace. The records are decoded
within bounds: a compressed record that expands past :data:`MAX_RELEASE_BYTES` is refused.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
from typing import Any

from core.foundation.errors import AicrError, ErrorCode
from core.foundation.record import Record, field
from core.live.kube import DEFAULT_TIMEOUT_S, _api_error, _decode, _transport_errors, api_client

LABELS = "owner=helm,status=deployed"
MAX_RELEASE_BYTES = 32 * 1_048_576
PAGE = 100


class HelmRelease(Record, frozen=True):
    name: str
    namespace: str
    revision: int
    chart: str
    version: str
    values: dict[str, Any] = field(default_factory=dict)
    """The user's values (Helm's ``config``)."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """The chart's own values.yaml."""
    manifest: str = ""
    crds: list[str] = field(default_factory=list)


def _refused(where: str, problem: str) -> AicrError:
    return AicrError(
        ErrorCode.SERVICE_UNAVAILABLE, f"the Helm release record {where} is unreadable: {problem}"
    )


def decode_release(data: str, where: str) -> dict[str, Any]:
    """The release JSON of a Secret's ``release`` data (as the API returns it)."""
    try:
        inner = base64.b64decode(data, validate=True)
        raw = base64.b64decode(inner, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _refused(where, f"not base64 ({exc})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
                raw = stream.read(MAX_RELEASE_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise _refused(where, f"not gzip ({exc})") from None
        if len(raw) > MAX_RELEASE_BYTES:
            raise _refused(where, f"it expands past {MAX_RELEASE_BYTES} bytes")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _refused(where, f"not JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict):
        raise _refused(where, "not a JSON object")
    return doc


def release_of(doc: dict[str, Any], where: str) -> HelmRelease:
    chart = doc.get("chart") if isinstance(doc.get("chart"), dict) else {}
    assert isinstance(chart, dict)
    meta = chart.get("metadata") if isinstance(chart.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    crds: list[str] = []
    for f in chart.get("files") or []:
        if isinstance(f, dict) and str(f.get("name", "")).startswith("crds/"):
            try:
                crds.append(base64.b64decode(str(f.get("data", ""))).decode("utf-8"))
            except (binascii.Error, ValueError) as exc:
                raise _refused(
                    where, f"crds file {f.get('name')} is not base64 text ({exc})"
                ) from None
    values = doc.get("config")
    defaults = chart.get("values")
    manifest = doc.get("manifest")
    return HelmRelease(
        name=str(doc.get("name", "")),
        namespace=str(doc.get("namespace", "")),
        revision=int(doc.get("version") or 0),
        chart=str(meta.get("name", "")),
        version=str(meta.get("version", "")),
        values=values if isinstance(values, dict) else {},
        defaults=defaults if isinstance(defaults, dict) else {},
        manifest=manifest if isinstance(manifest, str) else "",
        crds=crds,
    )


def read_releases(
    kubeconfig: str | None, context: str | None, *, timeout: float = DEFAULT_TIMEOUT_S
) -> list[HelmRelease]:
    """Every deployed release on the cluster (the newest deployed revision of each)."""
    from kubernetes import client  # type: ignore[import-untyped,unused-ignore]
    from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped,unused-ignore]

    api, source = api_client(kubeconfig, context)
    core = client.CoreV1Api(api)
    what = "list the Helm release records (secrets labelled owner=helm)"
    found: dict[tuple[str, str], HelmRelease] = {}
    token = ""
    for _page in range(10_000):
        try:
            response = core.list_secret_for_all_namespaces(
                label_selector=LABELS,
                limit=PAGE,
                _continue=token or None,
                _preload_content=False,
                _request_timeout=(timeout, timeout),
            )
            body = _decode(response, "the list of Helm release secrets")
        except (ApiException, *_transport_errors()) as exc:
            raise _api_error(exc, what, "list on secrets", source, timeout) from None
        for item in body.get("items") or []:
            if not isinstance(item, dict):
                continue
            meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            where = f"{meta.get('namespace', '?')}/{meta.get('name', '?')}"
            data = item.get("data") if isinstance(item.get("data"), dict) else {}
            assert isinstance(data, dict)
            if not isinstance(data.get("release"), str):
                continue
            rel = release_of(decode_release(data["release"], where), where)
            key = (rel.namespace, rel.name)
            if key not in found or found[key].revision < rel.revision:
                found[key] = rel
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        token = str(meta.get("continue") or "")
        if not token:
            break
    return [found[k] for k in sorted(found)]
