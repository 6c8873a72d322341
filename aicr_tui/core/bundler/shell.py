"""Shell text for the generated scripts: the one quoting function and the template filler.

Every value that came from a document reaches a script through :func:`quote`, so it is one
word that the shell never expands: no command substitution, no globbing, no word
splitting, whatever it holds. The scripts themselves are template files in
``aicr_tui/core/bundler/scripts/``; :func:`fill` puts already-quoted words into their ``@NAME@``
slots in one pass, so a value can never create or fill a slot of its own.
"""

from __future__ import annotations

import os
import re
from functools import cache

from aicr_tui.core.foundation import slots as _slots
from aicr_tui.core.foundation.errors import internal, invalid

# Beside this module, as the package data pyproject ships (``aicr_tui.core.bundler/scripts/*``).
# Read with open(): importlib.resources costs a one-shot bundle ~2 ms of imports alone.
_SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")

_SAFE = re.compile(r"[A-Za-z0-9@%+=:,./_-]+")


def quote(value: str) -> str:
    """``value`` as exactly one POSIX shell word with no expansion.

    Left bare when it is only letters, digits and ``@%+=:,./_-`` and does not start with
    ``-`` (so a bare word is never mistaken for an option by a reader either); otherwise
    single-quoted, each ``'`` written as ``'"'"'``. NUL cannot be passed in an argument at
    all, so it is refused rather than silently cut.
    """
    if not isinstance(value, str):
        raise internal(f"shell quote: expected text, got {type(value).__name__}")
    if "\x00" in value:
        raise invalid("a value for a generated script contains a NUL character")
    if value and _SAFE.fullmatch(value) and not value.startswith("-"):
        return value
    return "'" + value.replace("'", "'\"'\"'") + "'"


def words(*values: str) -> str:
    """Several values, each quoted, joined by spaces."""
    return " ".join(quote(v) for v in values)


@cache
def template(name: str) -> str:
    """A script template shipped beside this module (``scripts/<name>``)."""
    if name != os.path.basename(name) or name.startswith("."):
        raise internal(f"script template name {name!r} is not a file name")
    with open(os.path.join(_SCRIPTS, name), encoding="utf-8") as handle:
        return handle.read()


@cache
def _pieces(name: str) -> tuple[list[str], frozenset[str]]:
    """Template ``name`` split at its slots (text, slot, text, ...) and its slot names."""
    pieces = _slots.split(template(name))
    return pieces, _slots.names(pieces)


def fill(name: str, **slots: str) -> str:
    """Fill every ``@NAME@`` slot of template ``name`` with ``slots[NAME.lower()]``.

    Slot values are shell text the caller built from :func:`quote` (or fixed words). A
    slot the template has but the caller did not give, or one given but not in the
    template, is a programming error, not a blank.
    """
    pieces, wanted = _pieces(name)
    _slots.check(f"script template {name}", wanted, set(slots))
    # One pass over the template's own text: a value never creates or fills a slot.
    return _slots.join(pieces, slots)


__all__ = ["fill", "quote", "template", "words"]
