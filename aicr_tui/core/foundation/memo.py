"""Remembering what a pure function of one string returned for that string.

The wizard qualifies the selection on every keystroke, and each qualification parses the
same constraint names, expressions and versions again (about a third of the call). A
parser wrapped in :func:`text_memo` parses each distinct text once, through
:func:`functools.lru_cache`. Only ``str`` inputs are remembered (a number or a list from a
document is parsed every time, as it was, and never mistaken for an equal value of another
type), an error is never remembered (the next call raises it again), the results must be
immutable, and the memory holds the ``_KEPT`` most recently used texts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

T = TypeVar("T")

_KEPT = 4096


def text_memo(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse``, remembering its result per input string (see the module docstring)."""
    cached = lru_cache(maxsize=_KEPT)(parse)

    @wraps(parse)
    def remembered(text: str) -> T:
        if type(text) is not str:
            return parse(text)
        return cached(text)

    return remembered
