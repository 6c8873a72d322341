"""Lone UTF-16 surrogates in decoded text: joined when they pair, found, refused.

Python's JSON and YAML readers decode a ``\\ud800`` escape to a code point that no UTF-8
text (and so no Go string) can hold, and hand non-UTF-8 command-line bytes over as
U+DC80..U+DCFF. Values headed for Helm, Argo CD or Flux are refused with one line when they
hold one (Go's YAML readers refuse the escape); an escaped pair, as JSON writers escape a
character past U+FFFF, is the one character it encodes.
"""

from __future__ import annotations

import re
from typing import Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.patterns import LazyPattern

_LONE = LazyPattern("[\ud800-\udfff]")
_SURROGATE_PAIR = LazyPattern("[\ud800-\udbff][\udc00-\udfff]")


def _pair(match: re.Match[str]) -> str:
    return match.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def joined_surrogate_pairs(value: Any) -> Any:
    """Join each high surrogate followed by a low one into the character the pair encodes:
    YAML reads ``"\\ud83d\\ude00"`` as two code points where JSON (which the text may be)
    means one emoji, and two lone surrogates could never be written out as UTF-8."""
    if isinstance(value, str):
        return _SURROGATE_PAIR.sub(_pair, value) if _LONE.search(value) else value
    if isinstance(value, dict):
        return {joined_surrogate_pairs(k): joined_surrogate_pairs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [joined_surrogate_pairs(v) for v in value]
    return value


def lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first lone surrogate in ``value``'s keys and strings, as ``(path, "U+D800")``
    (path ``a.b[2]``, empty for the value itself), or None."""
    if isinstance(value, str):
        found = _LONE.search(value)
        return None if found is None else (path, f"U+{ord(found.group()):04X}")
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            hit = lone_surrogate(key, where) or lone_surrogate(item, where)
            if hit is not None:
                return hit
    elif isinstance(value, list):
        for i, item in enumerate(value):
            hit = lone_surrogate(item, f"{path}[{i}]")
            if hit is not None:
                return hit
    return None


def escaped_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its printable escape, ``\\ud800`` to
    ``\\udfff``."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def refuse_lone_surrogate(value: Any, source: str) -> None:
    """Refuse ``value`` (one line naming ``source``, exit 2) when it holds a lone surrogate.

    A Go string is UTF-8 bytes, where a surrogate code point has no encoding: Go's YAML
    readers refuse its escape (``found invalid Unicode character escape code``), so a values
    file holding one cannot be read by Helm, Argo CD or Flux, and replacing it would change
    the value without a word."""
    hit = lone_surrogate(value)
    if hit is None:
        return
    path, code = hit
    where = f" at {escaped_surrogates(path)[:120]}" if path else ""
    raise invalid(
        f"{source} holds a lone surrogate {code}{where}",
        "not a Unicode character: Go (Helm, Argo CD, Flux) cannot hold it in a string",
    )
