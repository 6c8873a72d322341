"""YAML and JSON text in and out, with ruamel.yaml.

Loading uses the round-trip loader so comments and key order in recipes and values
survive; dumping is block style, deterministic, and never emits anchors.
"""

from __future__ import annotations

import io
import json
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from core.errors import invalid


def _yaml(typ: str = "rt") -> YAML:
    y = YAML(typ=typ)
    y.default_flow_style = False
    y.allow_duplicate_keys = False
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    y.representer.ignore_aliases = lambda *_: True
    return y


_LOADER = _yaml("rt")
_SAFE = _yaml("safe")


def load_yaml(text: str, source: str) -> Any:
    """Parse one YAML (or JSON) document; a parse error names ``source``."""
    try:
        docs = list(_LOADER.load_all(text))
    except YAMLError as exc:
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    except Exception as exc:  # ruamel raises assorted errors on hostile input
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    if len(docs) > 1:
        raise invalid(f"{source} holds {len(docs)} YAML documents, expected exactly one")
    return docs[0] if docs else None


def load_yaml_plain(text: str, source: str) -> Any:
    """Parse YAML into plain dicts/lists (faster; for data we do not re-emit with comments)."""
    try:
        docs = list(_SAFE.load_all(text))
    except Exception as exc:
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    if len(docs) > 1:
        raise invalid(f"{source} holds {len(docs)} YAML documents, expected exactly one")
    return docs[0] if docs else None


def to_plain(value: Any) -> Any:
    """Deep-convert ruamel containers and scalars into plain Python values."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return str(value)


def dump_yaml(data: Any) -> str:
    """Serialise to block-style YAML. Key order is the caller's; output is deterministic."""
    buf = io.StringIO()
    _yaml("rt").dump(data, buf)
    return buf.getvalue()


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def sort_keys_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: sort_keys_deep(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [sort_keys_deep(v) for v in value]
    return value


def _first_line(text: str) -> str:
    return " ".join(text.split())[:300]
