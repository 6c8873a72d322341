"""Replies of the Kubernetes API as a capture reads them: decoded within the limits, checked
for shape, and every failure (HTTP status, transport, refused reply) as one clear error.

``aicr_tui.core.live.kube`` reads the cluster with these; ``aicr_tui.core.live.helm_releases`` and the validation
executor read their own replies the same way.
"""

from __future__ import annotations

import json
from typing import Any

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.foundation.limits import (
    MAX_API_JSON_VALUES,
    MAX_NESTING_DEPTH,
    value_bound_violation,
)
from aicr_tui.core.foundation.tree import KindNames, kind_name


def bad_reply(what: str, problem: str) -> AicrError:
    """The one error for a reply the capture cannot use (SERVICE_UNAVAILABLE, exit 6)."""
    return AicrError(ErrorCode.SERVICE_UNAVAILABLE, f"the Kubernetes API answered {what} {problem}")


def decode(response: Any, what: str) -> dict[str, Any]:
    """The JSON object of ``response``, read and decoded within the limits of
    aicr_tui.core.foundation.limits (the body size itself is capped on the wire, aicr_tui.core.live.kube_wire)."""
    raw = response.data
    if isinstance(raw, bytes | bytearray):
        values = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
        if values > MAX_API_JSON_VALUES:
            raise bad_reply(
                what, f"with about {values} JSON values; at most {MAX_API_JSON_VALUES} are read"
            )
    try:
        body = json.loads(raw)
    except RecursionError:
        raise bad_reply(
            what, f"with JSON nested more than {MAX_NESTING_DEPTH} levels deep (the limit)"
        ) from None
    except (ValueError, TypeError) as exc:
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE, f"the Kubernetes API answered {what} with non-JSON", exc
        ) from exc
    if not isinstance(body, dict):
        raise bad_reply(what, "with a non-object")
    reason = value_bound_violation(body)
    if reason is not None:
        raise bad_reply(what, f"with JSON {reason}")
    return body


# What a decoded JSON value is called in a message, with its article.
_REPLY_KINDS: KindNames = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def kind_of(value: Any) -> str:
    return kind_name(value, _REPLY_KINDS)


def expect_map(value: Any, where: str, what: str) -> dict[str, Any]:
    """``value`` when it is an object (an absent one reads ``{}``), else one clear error."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad_reply(what, f"with {where} as {kind_of(value)}, expected an object")
    return value


def expect_text(value: Any, where: str, what: str) -> None:
    if value is not None and not isinstance(value, str):
        raise bad_reply(what, f"with {where} as {kind_of(value)}, expected a string")


def check_version(body: dict[str, Any], what: str) -> None:
    for key in ("gitVersion", "platform", "goVersion"):
        expect_text(body.get(key), key, what)


def api_error(exc: Exception, what: str, permission: str, source: str, seconds: float) -> AicrError:
    from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped,unused-ignore]
    from urllib3.exceptions import HTTPError, MaxRetryError, NewConnectionError, TimeoutError

    from aicr_tui.core.live.kube_wire import refused_reply, transport_reason

    hostile = refused_reply(exc)
    if hostile is not None:
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"the Kubernetes API of {source} sent a reply to {what} that is refused",
            str(hostile),
        )
    if isinstance(exc, ApiException):
        status = int(exc.status or 0)
        reason = _status_message(exc)
        if status == 401:
            return AicrError(
                ErrorCode.UNAUTHORIZED,
                f"the Kubernetes API rejected the credentials of {source} (HTTP 401) on {what}: "
                "refresh them (az aks get-credentials / oci ce cluster create-kubeconfig)",
                reason or None,
            )
        if status == 403:
            return AicrError(
                ErrorCode.UNAUTHORIZED,
                f"the Kubernetes identity of {source} is forbidden (HTTP 403) to {what}: grant "
                f"{permission} in a ClusterRole bound to it",
                reason or None,
            )
        if status == 0:
            return AicrError(
                ErrorCode.SERVICE_UNAVAILABLE,
                f"could not reach the Kubernetes API of {source} to {what}",
                reason or str(exc.reason or "") or None,
            )
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"the Kubernetes API of {source} answered {http_status(status, exc)} to {what}",
            reason or None,
        )
    cause = exc.reason if isinstance(exc, MaxRetryError) else exc
    # NewConnectionError subclasses ConnectTimeoutError in urllib3; a refusal is no timeout.
    refused = isinstance(cause, NewConnectionError)
    if not refused and (isinstance(cause, TimeoutError) or "timed out" in str(cause).lower()):
        return AicrError(
            ErrorCode.TIMEOUT,
            f"the Kubernetes API of {source} did not answer within {seconds:g}s to {what}",
        )
    if isinstance(exc, HTTPError | OSError):
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"could not reach the Kubernetes API of {source} to {what}",
            transport_reason(exc),
        )
    return AicrError(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"reading the Kubernetes API of {source} to {what} failed",
        " ".join(f"{type(exc).__name__}: {exc}".split())[:300],
    )


def http_status(status: int, exc: Any) -> str:
    """``HTTP 429 (Too Many Requests; Retry-After: 30)``: the status, its name, and for a
    throttled or unavailable server how long it asked the client to wait."""
    import http

    try:
        name = http.HTTPStatus(status).phrase
    except ValueError:
        name = ""
    wait = ""
    if status in (429, 503):
        from aicr_tui.core.live.kube_wire import retry_after

        after = retry_after(getattr(exc, "headers", None))
        wait = f"; Retry-After: {after}" if after else "; no Retry-After"
    inner = f"{name}{wait}".strip("; ")
    return f"HTTP {status}" + (f" ({inner})" if inner else "")


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                return " ".join(str(doc["message"]).split())[:300]
        except (ValueError, TypeError):
            pass
    return " ".join(str(getattr(exc, "reason", "") or "").split())[:300]


def transport_errors() -> tuple[type[Exception], ...]:
    from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped,unused-ignore]
    from urllib3.exceptions import HTTPError

    return (ApiException, HTTPError, OSError)
