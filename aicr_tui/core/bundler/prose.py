"""The bundle README's prose, kept as files under ``readme/``.

Each deployer's "Deploy" section is a Markdown file (``readme/<deployer>.md``), the vendored
charts' section is ``readme/vendored.md``, and the short phrases an option adds (``--serial``,
``--vendor-charts``, a missing ``--repo``) are ``readme/phrases.yaml``. All of them have
``@NAME@`` slots filled as the deploy scripts' are (:mod:`aicr_tui.core.foundation.slots`): exactly the
file's slots, in one pass, so a reviewer reads the README's text without reading Python.
"""

from __future__ import annotations

import os
from functools import cache

from aicr_tui.core.foundation import slots
from aicr_tui.core.foundation.errors import internal

# Beside this module, as the package data pyproject ships (``aicr_tui.core.bundler/readme/*``).
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "readme")


@cache
def _pieces(name: str) -> tuple[list[str], frozenset[str]]:
    if name != os.path.basename(name) or name.startswith("."):
        raise internal(f"README template name {name!r} is not a file name")
    with open(os.path.join(README, name), encoding="utf-8") as handle:
        pieces = slots.split(handle.read())
    return pieces, slots.names(pieces)


def section(name: str, /, **values: str) -> str:
    """Markdown file ``readme/<name>.md`` with its slots filled (exactly its slots)."""
    pieces, wanted = _pieces(f"{name}.md")
    slots.check(f"README template {name}.md", wanted, set(values))
    return slots.join(pieces, values)


@cache
def phrases() -> dict[str, dict[str, str]]:
    """``readme/phrases.yaml``: group -> key -> text, checked to be only that shape."""
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    with open(os.path.join(README, "phrases.yaml"), encoding="utf-8") as handle:
        doc = load_yaml_plain(handle.read(), "readme/phrases.yaml")
    if not isinstance(doc, dict) or not all(
        isinstance(group, dict) and all(isinstance(v, str) for v in group.values())
        for group in doc.values()
    ):
        raise internal("readme/phrases.yaml: expected a mapping of groups of texts")
    return doc


def phrase(group: str, key: str, /, **values: str) -> str:
    """One phrase of ``readme/phrases.yaml`` with its slots filled (exactly its slots)."""
    try:
        text = phrases()[group][key]
    except KeyError:
        raise internal(f"readme/phrases.yaml has no {group}.{key}") from None
    return slots.fill_text(f"readme/phrases.yaml {group}.{key}", text, **values)


def when(flag: object, group: str, key: str, /, **values: str) -> str:
    """:func:`phrase` when ``flag`` holds, else nothing."""
    return phrase(group, key, **values) if flag else ""


__all__ = ["README", "phrase", "phrases", "section", "when"]
