"""Remembering what a pure function of one string returned for that string.

The wizard qualifies the selection on every keystroke, and each qualification parses the
same constraint names, expressions and versions again (about a third of the call). A
parser wrapped in :func:`text_memo` parses each distinct text once. Only ``str`` inputs
are remembered, an error is never remembered (the next call raises it again), the results
must be immutable (frozen records), and the memory is bounded: past ``_KEPT`` texts it
starts afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

T = TypeVar("T")

_KEPT = 4096
_MISSING: Any = object()


def text_memo(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse``, remembering its result per input string (see the module docstring)."""
    seen: dict[str, T] = {}

    @wraps(parse)
    def remembered(text: str) -> T:
        if type(text) is not str:
            return parse(text)
        found = seen.get(text, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        value = parse(text)
        if len(seen) >= _KEPT:
            seen.clear()
        seen[text] = value
        return value

    return remembered
