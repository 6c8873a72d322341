"""Render the catalog's raw-manifest templates into plain Kubernetes YAML.

Upstream ships these manifests as Helm templates; we keep a deliberately small convention
that the bundler evaluates in Python, so the output is plain YAML any ``kubectl apply`` takes:

* ``# aicr-render-if: <component>.<path> == <value>`` (or ``!=``) before the first YAML line
  gates the whole file; several lines are ANDed. A file whose gate is false renders nothing
  and is left out of the bundle.
* ``# aicr-if: <cond>`` / ``# aicr-else`` / ``# aicr-end`` lines (nestable) gate the lines
  between them, with the same condition syntax.
* Conditions compare the value's Helm-style string (``toString``): booleans are ``true`` /
  ``false``, a missing value is the empty string, so ``tuningEnabled != false`` holds for an
  absent key. ``<component>.enabled`` is ``true`` for a component that renders in this bundle
  and ``false`` otherwise.
* ``${aicr:namespace}`` is the component's namespace; ``${aicr:value:<component>.<path>}``
  inserts the final value as compact JSON (valid flow YAML), and
  ``${aicr:value:<component>.<path>|<json default>}`` falls back to the default when absent.
  Anything else with a ``$`` (shell variables in container scripts) is left untouched.
* ``# aicr-each: <component>.<path>`` ... ``# aicr-end`` repeats the lines between for each
  entry of the map at that path, keys sorted (as Go's ``range`` over a map); an absent or
  null map repeats nothing. Inside, ``${aicr:key}`` is the entry's key and ``${aicr:text}``
  its value's Helm string (what ``{{ $value }}`` prints). Loops do not nest, and the
  loop's lines hold no ``aicr-if``.

The directive lines are removed from the output; ordinary comments are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.tree import PRESENT, observe

# Compiled on first use: a bundle whose components have no manifest never renders one.
_RENDER_IF = LazyPattern(r"^#\s*aicr-render-if:\s*(.+?)\s*$")
_IF = LazyPattern(r"^\s*#\s*aicr-if:\s*(.+?)\s*$")
_ELSE = LazyPattern(r"^\s*#\s*aicr-else\s*$")
_END = LazyPattern(r"^\s*#\s*aicr-end\s*$")
_EACH = LazyPattern(r"^\s*#\s*aicr-each:\s*([a-z0-9][a-z0-9-]*)\.([A-Za-z0-9._-]+)\s*$")
_COND = LazyPattern(r"^([a-z0-9][a-z0-9-]*)\.([A-Za-z0-9._-]+)\s*(==|!=)\s*(.*)$")
_REF = LazyPattern(r"^value:([a-z0-9][a-z0-9-]*)\.([A-Za-z0-9._-]+)(?:\|(.*))?$", re.DOTALL)
_OPEN = "${aicr:"


class TemplateContext:
    """What a template can see: final values of the rendered components and the namespace."""

    def __init__(self, values: Mapping[str, dict[str, Any]], namespace: str) -> None:
        self.values = values
        self.namespace = namespace

    def lookup(self, component: str, path: str) -> tuple[bool, Any]:
        if path == "enabled" and component not in self.values:
            return True, False
        comp = self.values.get(component)
        if comp is None:
            return False, None
        if path == "enabled":
            state, value = observe(comp, path)
            return True, True if state != PRESENT else value
        state, value = observe(comp, path)
        return state == PRESENT, value


def helm_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def evaluate_condition(text: str, ctx: TemplateContext, source: str) -> bool:
    m = _COND.match(text)
    if not m:
        raise invalid(
            f"template {source}: condition {text!r} is not <component>.<path> ==|!= <value>"
        )
    component, path, op, literal = m.groups()
    literal = literal.strip()
    if len(literal) >= 2 and literal[0] == literal[-1] and literal[0] in "\"'":
        literal = literal[1:-1]
    found, value = ctx.lookup(component, path)
    actual = helm_string(value) if found else ""
    return (actual == literal) if op == "==" else (actual != literal)


def render_template(text: str, ctx: TemplateContext, source: str) -> str | None:
    """Render one template; ``None`` when its file gate is false or nothing but comments remain."""
    lines = text.splitlines()
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # (parent_active, branch_active)
    in_header = True
    loop: tuple[int, str, str, list[str]] | None = None  # (line, component, path, body)
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if loop is not None:
            if _END.match(line):
                if all(branch for _, branch in stack):
                    out += _expand_loop(loop, ctx, source)
                loop = None
            elif _IF.match(line) or _ELSE.match(line) or _EACH.match(line):
                raise invalid(f"template {source}:{lineno}: aicr-each holds a directive")
            else:
                loop[3].append(line)
            continue
        if in_header:
            gate = _RENDER_IF.match(stripped)
            if gate:
                if not evaluate_condition(gate.group(1), ctx, source):
                    return None
                continue
            if stripped and not stripped.startswith("#"):
                in_header = False
        active = all(branch for _, branch in stack)
        m_each = _EACH.match(line)
        if m_each:
            loop = (lineno, m_each.group(1), m_each.group(2), [])
            continue
        m_if = _IF.match(line)
        if m_if:
            cond = evaluate_condition(m_if.group(1), ctx, source) if active else False
            stack.append((active, cond))
            continue
        if _ELSE.match(line):
            if not stack:
                raise invalid(f"template {source}:{lineno}: aicr-else without aicr-if")
            parent, branch = stack.pop()
            stack.append((parent, parent and not branch))
            continue
        if _END.match(line):
            if not stack:
                raise invalid(f"template {source}:{lineno}: aicr-end without aicr-if")
            stack.pop()
            continue
        if not active:
            continue
        out.append(_substitute_line(line, ctx, source))
    if loop is not None:
        raise invalid(f"template {source}:{loop[0]}: aicr-each without a matching aicr-end")
    if stack:
        raise invalid(f"template {source}: aicr-if without a matching aicr-end")
    body = "\n".join(out).strip("\n") + "\n"
    if not any(ln.strip() and not ln.strip().startswith("#") for ln in out):
        return None
    return body


def _expand_loop(
    loop: tuple[int, str, str, list[str]], ctx: TemplateContext, source: str
) -> list[str]:
    lineno, component, path, body = loop
    found, value = ctx.lookup(component, path)
    if not found or value is None:
        return []
    if not isinstance(value, dict):
        raise invalid(
            f"template {source}:{lineno}: aicr-each needs a map at {component}.{path}, "
            f"the final values hold {type(value).__name__}"
        )
    out: list[str] = []
    for key in sorted(value, key=str):
        entry = {"key": str(key), "text": helm_string(value[key])}
        out += [_substitute_line(line, ctx, source, entry) for line in body]
    return out


def _substitute_line(
    line: str, ctx: TemplateContext, source: str, entry: Mapping[str, str] | None = None
) -> str:
    """Replace every ``${aicr:...}`` (braces in a JSON default are balanced) in one line."""
    parts: list[str] = []
    pos = 0
    while True:
        start = line.find(_OPEN, pos)
        if start < 0:
            parts.append(line[pos:])
            return "".join(parts)
        parts.append(line[pos:start])
        depth, i = 1, start + 2
        while i < len(line) and depth:
            if line[i] == "{":
                depth += 1
            elif line[i] == "}":
                depth -= 1
            i += 1
        if depth:
            raise invalid(f"template {source}: unterminated ${{aicr:...}} in {line.strip()!r}")
        ref = line[start + len(_OPEN) : i - 1]
        # An aicr-each entry's key and text; inserted as they are, never read again.
        parts.append(entry[ref] if entry and ref in entry else _substitute(ref, ctx, source))
        pos = i


def _substitute(ref: str, ctx: TemplateContext, source: str) -> str:
    if ref == "namespace":
        return ctx.namespace
    m = _REF.match(ref)
    if not m:
        raise invalid(f"template {source}: unknown substitution ${{aicr:{ref}}}")
    component, path, default = m.group(1), m.group(2), m.group(3)
    found, value = ctx.lookup(component, path)
    if not found or value is None:
        if default is None:
            raise invalid(
                f"manifest {source} needs {component}:{path}, which the final values do not set"
            )
        try:
            value = json.loads(default)
        except json.JSONDecodeError as exc:
            raise invalid(f"template {source}: default for {component}.{path} is not JSON") from exc
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)


_PARSED: dict[str, list[dict[str, Any]]] = {}
_PARSED_MAX = 256


def parse_manifest_documents(text: str, source: str) -> list[dict[str, Any]]:
    """Parse a rendered manifest into Kubernetes objects; each must name apiVersion, kind, name.

    Results are memoised by text: the wizard re-plans on every keystroke and most manifests
    render identically each time, while the pure-Python YAML parser is slow.
    """
    cached = _PARSED.get(text)
    if cached is not None:
        return cached
    docs = _parse_documents(text, source)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[text] = docs
    return docs


def _parse_documents(text: str, source: str) -> list[dict[str, Any]]:
    from aicr_tui.core.foundation.yamlio import safe_documents, to_plain

    try:
        docs = [to_plain(d) for d in safe_documents(text) if d is not None]
    except Exception as exc:
        raise invalid(f"rendered manifest {source} is not valid YAML", str(exc)[:200]) from exc
    for doc in docs:
        if not isinstance(doc, dict):
            raise invalid(f"rendered manifest {source} holds a non-object document")
        for key in ("apiVersion", "kind"):
            if not isinstance(doc.get(key), str) or not doc[key]:
                raise invalid(f"rendered manifest {source} has an object without {key}")
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise invalid(f"rendered manifest {source} has an object without metadata.name")
    return docs


__all__ = [
    "TemplateContext",
    "evaluate_condition",
    "helm_string",
    "parse_manifest_documents",
    "render_template",
]
