"""Regular expressions compiled on first use.

A one-shot command imports modules whose patterns it mostly never runs (name rules that
only judge documents being validated, terminal escapes that only non-printable text has);
compiling them all at import cost it a few milliseconds every time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


class LazyPattern:
    """``re.compile(source, flags)``, done by the first call that needs it."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled.sub(repl, text)
