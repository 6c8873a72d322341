"""Rendered objects against the Kubernetes API schemas, offline.

Built-in kinds are checked against the strict 1.34 JSON schemas that ``kubernetes-validate``
ships (unknown fields are errors there, as the API server's strict field validation
would have it). Custom resources are checked against the ``openAPIV3Schema`` of the CRD
that installs them, the way the API server treats them: a wrong type is an error and a
field the schema does not declare is pruned (dropped without a word), which is reported
too, since the value the user wrote never takes effect.

Validators are built once per kind and version and reused: a schema document parses in
tens of milliseconds and a bundle renders hundreds of objects.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from typing import Any

KUBERNETES_VERSION = "1.34"
_LOCK = threading.Lock()


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
        if key.startswith("x-kubernetes-") or key in ("nullable", "format"):
            continue
        if key in ("properties", "patternProperties", "definitions"):
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
        """Errors for a custom resource, or None when no installed CRD declares a schema."""
        import jsonschema

        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        key = (group, version, str(obj.get("kind", "")))
        raw = self._raw.get(key)
        if raw is None:
            return None
        validator = self._validators.get(key)
        if validator is None:
            validator = jsonschema.Draft7Validator(_openapi_to_jsonschema(raw))
            self._validators[key] = validator
        obj = _without_nulls(obj)
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
        out = [_message(e) for e in errors[:5]]
        pruned: list[str] = []
        _pruned(obj, raw, "", pruned)
        return out + pruned[:5]
