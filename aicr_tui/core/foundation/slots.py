"""``@NAME@`` slots: the one placeholder mechanism of the text and data shipped as files.

The deploy scripts (``aicr_tui/core/bundler/scripts/``), the bundle README's sections
(``aicr_tui/core/bundler/readme/``) and the validation workloads' manifests
(``aicr_tui/core/validation/checks/manifests/``) are files a reviewer reads as they are; the code
only fills their ``@NAME@`` slots. Filling is one pass over the file's own text, so a value
can never create or fill a slot of its own, and it is checked at that boundary: a slot the
file has but the caller did not give, or a value given for a slot the file does not have,
is a programming error (a test fills every shipped file), never a blank.
"""

from __future__ import annotations

import re
from typing import Any

from aicr_tui.core.foundation.errors import internal

SLOT = re.compile(r"@([A-Z][A-Z0-9_]*)@")


def split(text: str) -> list[str]:
    """``text`` cut at its slots: text, slot name, text, ... (names as written, upper case)."""
    return SLOT.split(text)


def names(pieces: list[str]) -> frozenset[str]:
    """The slot names (lower case, as keyword arguments) of :func:`split` pieces."""
    return frozenset(slot.lower() for slot in pieces[1::2])


def check(what: str, wanted: frozenset[str], given: set[str] | frozenset[str]) -> None:
    """Refuse a fill whose given slots are not exactly the template's slots."""
    if wanted != given:
        missing = sorted(wanted - given)
        extra = sorted(given - wanted)
        raise internal(f"{what}: missing slots {missing}, unknown slots {extra}")


def fill_pieces(what: str, pieces: list[str], slots: dict[str, str]) -> str:
    """The text of :func:`split` ``pieces`` with every slot replaced by ``slots[name]``."""
    check(what, names(pieces), set(slots))
    return join(pieces, slots)


def join(pieces: list[str], slots: dict[str, str]) -> str:
    """Checked :func:`split` pieces put back together, each slot replaced by its value."""
    return "".join(piece if i % 2 == 0 else slots[piece.lower()] for i, piece in enumerate(pieces))


def fill_text(what: str, text: str, /, **slots: str) -> str:
    """``text`` with every ``@NAME@`` replaced by ``slots[name]`` (exactly its slots)."""
    return fill_pieces(what, split(text), slots)


def data_names(tree: Any) -> frozenset[str]:
    """Every slot name (lower case) in the strings of a loaded YAML/JSON tree."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.update(names(split(node)))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(tree)
    return frozenset(found)


def fill_data(what: str, tree: Any, /, **slots: Any) -> Any:
    """A fresh copy of a loaded YAML tree with its slots filled, as data, not as text.

    A string that is one whole slot (``"@NODES@"``) becomes the value itself, of any type
    (a list, a mapping, a number); a slot inside a longer string is replaced by the value's
    text (``str``, so a number reads as written). Keys are never slots. Exactly the tree's
    slots must be given.
    """
    check(what, data_names(tree), set(slots))

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            pieces = split(node)
            if len(pieces) == 1:
                return node
            if len(pieces) == 3 and pieces[0] == "" and pieces[2] == "":
                return _fresh(slots[pieces[1].lower()])
            return "".join(
                piece if i % 2 == 0 else _text(what, piece, slots[piece.lower()])
                for i, piece in enumerate(pieces)
            )
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        if isinstance(node, list):
            return [fill(item) for item in node]
        return node

    return fill(tree)


def _text(what: str, name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise internal(f"{what}: slot @{name}@ inside text needs text or a number")
    return str(value)


def _fresh(value: Any) -> Any:
    """An independent copy of a slot value (two slots never share one mutable object)."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    return value


__all__ = [
    "SLOT",
    "check",
    "data_names",
    "fill_data",
    "fill_pieces",
    "fill_text",
    "join",
    "names",
    "split",
]
