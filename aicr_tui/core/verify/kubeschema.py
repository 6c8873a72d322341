"""Rendered objects against the Kubernetes API schemas, offline.

Built-in kinds are checked against the strict 1.34 JSON schemas that ``kubernetes-validate``
ships (unknown fields are errors there, as the API server's strict field validation
would have it). Custom resources are checked against the ``openAPIV3Schema`` of the CRD
that installs them, the way the API server treats them: a wrong type is an error and a
field the schema does not declare is pruned (dropped without a word), which is reported
too, since the value the user wrote never takes effect.

Validators are built once per kind and version and reused: a schema document parses in
tens of milliseconds and a bundle renders hundreds of objects.

A CRD's schema comes from the chart and is as hostile as the chart, so custom resources
are checked in the bounded engine child (:meth:`CrdSchemas.validate` asks it,
:func:`custom_resource_errors` runs there): ``$ref`` is followed only inside the same
schema (``#/...``; a URL, a file, an anchor or a pointer that does not resolve is one
finding and nothing is fetched or read), the schema's nesting is bounded
(:data:`MAX_SCHEMA_DEPTH`), and the whole check of one object has a time bound
(:data:`CRD_CHECK_SECONDS`), so a ``pattern`` that backtracks catastrophically ends as one
finding; the child's own CPU, memory and wall limits are the backstop.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

KUBERNETES_VERSION = "1.34"
_LOCK = threading.Lock()
MAX_SCHEMA_DEPTH = 128
"""Containers (maps and lists) a CRD schema may nest; deeper is one finding, unchecked."""
CRD_CHECK_SECONDS = 5.0
"""Time one custom resource's check against its CRD schema may take."""
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords that would move the base URI or name a meta-schema to fetch: dropped.
_URI_KEYWORDS = ("$id", "$schema", "$anchor", "$dynamicAnchor", "$recursiveAnchor")


class NoSchema(Exception):
    """No built-in schema for this apiVersion/kind (a custom resource, or an unknown API)."""


@lru_cache(maxsize=1)
def _schema_root() -> Any:
    from importlib.resources import files

    base = files("kubernetes_validate") / "kubernetes-json-schema"
    wanted = f"v{KUBERNETES_VERSION}."
    names = sorted(
        p.name
        for p in base.iterdir()
        if p.name.startswith(wanted) and p.name.endswith("-local-strict")
    )
    if not names:
        raise NoSchema(f"kubernetes-validate ships no {KUBERNETES_VERSION} schemas")
    return base / names[-1]


def _schema_file(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    short = group.split(".", 1)[0] if group else ""
    stem = f"{kind.lower()}-{short}-{version}" if short else f"{kind.lower()}-{version}"
    return f"{stem}.json"


@lru_cache(maxsize=512)
def _builtin_validator(api_version: str, kind: str) -> Any:
    import jsonschema  # type: ignore[import-untyped]
    from referencing import Registry, Resource

    root = _schema_root()
    target = root / _schema_file(api_version, kind)
    if not target.is_file():
        raise NoSchema(f"{api_version} {kind}")
    schema = json.loads(target.read_text())
    defs = json.loads((root / "_definitions.json").read_text())
    registry: Any = Resource.from_contents(schema) @ Registry()
    registry = Resource.from_contents(defs) @ registry
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def is_builtin(api_version: str, kind: str) -> bool:
    try:
        with _LOCK:
            _builtin_validator(api_version, kind)
    except NoSchema:
        return False
    return True


def _where(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".") or "(root)"


def _message(err: Any) -> str:
    text = " ".join(str(err.message).split())
    if len(text) > 240:
        text = text[:237] + "..."
    return f"{_where(err.absolute_path)}: {text}"


def validate_builtin(obj: dict[str, Any]) -> list[str]:
    """Schema errors of a built-in object (empty when valid). Raises :class:`NoSchema`."""
    with _LOCK:
        validator = _builtin_validator(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    return [_message(e) for e in errors[:5]]


# ------------------------------------------------------------------ custom resources
def _openapi_to_jsonschema(node: Any) -> Any:
    """OpenAPI v3 (CRD flavour) to JSON schema: ``nullable`` widens the type, the
    ``x-kubernetes-*`` extensions are dropped (int-or-string has no type to check)."""
    if isinstance(node, list):
        return [_openapi_to_jsonschema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("nullable", "format", *_URI_KEYWORDS):
            continue
        if key in ("properties", "patternProperties", "definitions", "$defs") and isinstance(
            value, dict
        ):
            out[key] = {k: _openapi_to_jsonschema(v) for k, v in value.items()}
        else:
            out[key] = _openapi_to_jsonschema(value)
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _pruned(obj: Any, schema: Any, path: str, out: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
            "x-kubernetes-embedded-resource"
        ):
            return
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, value in obj.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(props, dict) and key in props:
                _pruned(value, props[key], here, out)
            elif isinstance(extra, dict):
                _pruned(value, extra, here, out)
            elif extra is True:
                continue
            elif isinstance(props, dict) or schema.get("type") == "object":
                if path in ("", "metadata") and key in ("apiVersion", "kind", "metadata", "status"):
                    continue
                if path.startswith("metadata"):
                    continue
                out.append(f"{here}: not in the CRD schema (the API server prunes it)")
    elif isinstance(obj, list):
        items = schema.get("items")
        for i, value in enumerate(obj):
            _pruned(value, items, f"{path}[{i}]", out)


def _without_nulls(value: Any) -> Any:
    """The API server prunes ``null`` from custom resources before validating them (a
    field that is not nullable simply stays unset), so nulls are never errors here."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


class CrdSchemas:
    """Schemas of the CRDs a bundle installs, by (group, version, kind)."""

    def __init__(self) -> None:
        self._raw: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._validators: dict[tuple[str, str, str], Any] = {}

    def add_crd(self, crd: dict[str, Any]) -> None:
        spec = crd.get("spec")
        if not isinstance(spec, dict):
            return
        group = str(spec.get("group", ""))
        kind = str((spec.get("names") or {}).get("kind", ""))
        for version in spec.get("versions") or []:
            if not isinstance(version, dict):
                continue
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(schema, dict):
                self._raw.setdefault((group, str(version.get("name", "")), kind), schema)

    def validate(self, obj: dict[str, Any]) -> list[str] | None:
        """Errors for a custom resource, or None when no installed CRD declares a schema.

        The check runs in the engine child (the schema is chart input); an engine limit
        or error is one line instead of the errors."""
        from aicr_tui.core.verify import engine

        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        raw = self._raw.get((group, version, str(obj.get("kind", ""))))
        if raw is None:
            return None
        try:
            got = engine.ENGINE.call(
                "crd", "checking a custom resource against its CRD schema", schema=raw, object=obj
            )
        except engine.RenderError as exc:
            return [f"not checked against its CRD schema: {' '.join(str(exc).split())}"]
        return [str(e) for e in got]


def _pointer(root: Any, ref: str) -> bool:
    """Whether ``ref`` (``#`` or ``#/a/b``) names a schema (a map) inside ``root``."""
    if ref == "#":
        return isinstance(root, dict)
    if not ref.startswith("#/"):
        return False
    node = root
    for raw in ref[2:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return isinstance(node, dict | bool)


def _ref_shown(value: Any) -> str:
    from aicr_tui.core.foundation.names import shown

    return shown(value, 60)


def schema_problem(schema: Any) -> str | None:
    """Why a CRD schema is not checked, or None: nested past :data:`MAX_SCHEMA_DEPTH`, or a
    reference that is not a JSON pointer resolving inside the same schema. Iterative, so a
    schema of any depth is looked at without recursion."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth >= MAX_SCHEMA_DEPTH:
            return f"the schema is nested more than {MAX_SCHEMA_DEPTH} levels deep (the limit)"
        if isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
            continue
        for key in _REF_KEYWORDS:
            if key not in node:
                continue
            ref = node[key]
            if key != "$ref":
                return (
                    f"{key} {_ref_shown(ref)} is not followed (only $ref inside the same schema is)"
                )
            if not isinstance(ref, str) or not ref.startswith("#"):
                return (
                    f"$ref {_ref_shown(ref)} points outside the schema (only references inside "
                    "the same schema, #/..., are followed; nothing is fetched or read)"
                )
            if not _pointer(schema, ref):
                return f"$ref {_ref_shown(ref)} does not resolve inside the schema"
        stack.extend((v, depth + 1) for v in node.values())
    return None


class _TooSlow(Exception):
    pass


@contextlib.contextmanager
def _time_bound(seconds: float) -> Iterator[None]:
    """Raise :class:`_TooSlow` in the main thread after ``seconds`` (the regular-expression
    engine checks for signals while it backtracks); elsewhere no bound but the caller's."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(_sig: int, _frame: Any) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(uri)


@lru_cache(maxsize=64)
def _crd_validator(text: str) -> Any:
    import jsonschema
    from referencing import Registry
    from referencing.jsonschema import DRAFT7

    schema = _openapi_to_jsonschema(json.loads(text))
    registry: Any = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
    registry = registry.with_resource("urn:aicr-tui:crd", DRAFT7.create_resource(schema))
    return jsonschema.Draft7Validator(schema, registry=registry)


def custom_resource_errors(
    raw: Any, obj: dict[str, Any], *, seconds: float = CRD_CHECK_SECONDS
) -> list[str]:
    """A custom resource's errors against its CRD's ``openAPIV3Schema`` (run in the engine
    child): the first five schema errors and the first five pruned fields, or one line
    saying why it was not checked."""
    problem = schema_problem(raw)
    if problem is not None:
        return [f"not checked against its CRD schema: {problem}"]
    obj = _without_nulls(obj)
    try:
        with _time_bound(seconds):
            validator = _crd_validator(json.dumps(raw, sort_keys=True))
            errors = sorted(
                validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))
            )
            out = [_message(e) for e in errors[:5]]
            pruned: list[str] = []
            _pruned(obj, raw, "", pruned)
    except _TooSlow:
        return [
            f"not checked against its CRD schema: the check took more than {seconds:g} s "
            "(a pattern that backtracks catastrophically?)"
        ]
    except RecursionError:
        return [
            "not checked against its CRD schema: its references nest more deeply than can "
            "be followed"
        ]
    except Exception as exc:  # an invalid pattern or keyword value in the chart's schema
        text = " ".join(str(exc).split())
        return [f"not checked against its CRD schema: {text[:200]}"]
    return out + pruned[:5]
