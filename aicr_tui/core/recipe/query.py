"""``query``: hydrate a resolved recipe into one tree and select a dotted path from it.

The tree is ``{kind, apiVersion, metadata, criteria, constraints, deploymentOrder,
components: {<name>: {<ref fields>, values: <resolved values>}}}``; ``values`` are the
component's values as the bundler would start from them (base values.yaml < valuesFile <
inline overrides). Selector segments match keys greedily, so keys that contain dots
(``nvidia.com/gpu``) can be addressed without quoting.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from aicr_tui.core.documents.recipe_result import RecipeResult
from aicr_tui.core.foundation.errors import invalid, not_found
from aicr_tui.core.foundation.limits import value_bound_violation
from aicr_tui.core.foundation.textsafe import escape_controls, safe_text
from aicr_tui.core.foundation.yamlio import dump_json, dump_yaml, sort_keys_deep
from aicr_tui.core.recipe.catalog import Catalog
from aicr_tui.core.recipe.values import resolve_component_values


def hydrate(catalog: Catalog, recipe: RecipeResult) -> dict[str, Any]:
    doc = recipe.to_document()
    components: dict[str, Any] = {}
    for ref in recipe.componentRefs:
        body = ref.to_document()
        body["enabled"] = ref.enabled
        body["values"] = resolve_component_values(catalog, ref)
        components[ref.name] = body
    tree: dict[str, Any] = {
        "kind": doc["kind"],
        "apiVersion": doc["apiVersion"],
        "metadata": doc["metadata"],
        "criteria": doc["criteria"],
        "constraints": doc.get("constraints", []),
        "deploymentOrder": doc["deploymentOrder"],
        "components": components,
    }
    if "validation" in doc:
        tree["validation"] = doc["validation"]
    return tree


def select(tree: Any, selector: str) -> Any:
    """The value at ``selector`` (``""`` selects the whole tree). A path the tree does not
    hold (a missing key, an index past the list, a child of a scalar) is NOT_FOUND (exit 3,
    as upstream); a malformed selector is an invalid request (exit 2)."""
    sel = selector.strip()
    if sel in ("", "."):
        return tree
    parts = sel.split(".")
    if any(p == "" for p in parts):
        raise invalid(f'--selector "{selector}" has an empty segment')
    node = tree
    walked: list[str] = []
    i = 0
    while i < len(parts):
        if isinstance(node, list):
            text = parts[i]
            # isdigit() alone admits "²", which int() refuses; past 18 digits no list is that
            # long, and int() would hit Python's digit limit
            index = int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else -1
            if not 0 <= index < len(node):
                raise not_found(
                    f'--selector "{selector}": "{text}" is not an index of the list at '
                    f'"{".".join(walked) or "(root)"}" (0..{len(node) - 1})'
                )
            node = node[index]
            walked.append(text)
            i += 1
            continue
        if not isinstance(node, Mapping):
            raise not_found(
                f'--selector "{selector}": "{".".join(walked)}" is a scalar, it has no "{parts[i]}"'
            )
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if key in node:
                node = node[key]
                walked.append(key)
                i = j
                break
        else:
            keys = ", ".join(sorted(str(k) for k in node)[:20])
            raise not_found(
                f'--selector "{selector}": no key "{parts[i]}" under '
                f'"{".".join(walked) or "(root)"}" (keys: {keys})'
            )
    return node


def render_value(value: Any, fmt: str = "yaml") -> str:
    """Scalars as plain text (yaml mode), JSON in json mode, else deterministic YAML.

    The output is data (the catalog's and any ``--data`` layer's text) bound for a terminal
    as often as for a pipe, so it is exact *and* never carries a raw control: JSON escapes
    every terminal-active character (``dump_json``); a string prints as plain text only when
    it is one terminal-safe line (``safe_text`` leaves it unchanged), any other string as a
    double-quoted scalar with escapes (``"x\\n✓ ok"``: JSON's string syntax, which YAML
    reads too), so a line break in a value never prints a line of its own; in a YAML tree
    every such string (key or value) is double-quoted and its controls escaped.
    """
    if fmt not in ("yaml", "json"):
        raise invalid(f'--format "{fmt}" is not supported; expected yaml or json')
    if fmt == "json":
        reason = value_bound_violation(value, allow_non_finite=False)
        if reason is not None:
            raise invalid(
                f"the selected value {reason}, which JSON cannot hold; print it with --format yaml"
            )
        return dump_json(sort_keys_deep(value) if isinstance(value, dict) else value)
    if isinstance(value, bool):
        return "true\n" if value else "false\n"
    if isinstance(value, str):
        return _yaml_string(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan\n" if math.isnan(value) else (".inf\n" if value > 0 else "-.inf\n")
    if isinstance(value, int | float):
        return f"{value}\n"
    if value is None:
        return "null\n"
    return escape_controls(dump_yaml(_quote_unsafe(sort_keys_deep(value))))


def _yaml_string(value: str) -> str:
    """A top-level string as YAML that reads back as the same string: plain when it is one
    terminal-safe line the YAML writer leaves plain (``aks``), quoted by the writer when
    plain text would read as something else (``'[/][b]x'``, ``'yes'`` stays plain in YAML
    1.2 but ``'- a'``, ``'a: b'``, ``'#x'``, ``'---'`` do not), a JSON string otherwise."""
    if safe_text(value) == value:
        rendered = dump_yaml({"v": value})
        if rendered.startswith("v: ") and rendered.count("\n") == 1:
            return rendered[len("v: ") :]
    return dump_json(value)


def _quote_unsafe(value: Any) -> Any:
    """``value`` with every string that is not one terminal-safe line double-quoted, where
    the YAML writer escapes it (and :func:`escape_controls` what it leaves raw)."""
    if isinstance(value, str):
        return value if safe_text(value) == value else DoubleQuotedScalarString(value)
    if isinstance(value, dict):
        return {_quote_unsafe(k): _quote_unsafe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_quote_unsafe(v) for v in value]
    return value
