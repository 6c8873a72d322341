"""The deployers' YAML skeletons and Helm templates, kept as files under ``templates/``.

A skeleton holds a document's fixed structure; the deployer fills in names, namespaces and
values as data and the YAML writer serialises them, so no recipe value is ever spliced into
YAML text. Helm templates (argocd-helm) are copied verbatim into the generated chart.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("templates")


@cache
def text(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def load_documents(name: str) -> list[dict[str, Any]]:
    """Fresh (independent) copies of every document in one skeleton file."""
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    docs = [d for d in _split(text(name)) if d.strip()]
    return [load_yaml_plain(d, f"template {name}") for d in docs]


def load_document(name: str) -> dict[str, Any]:
    (doc,) = load_documents(name)
    return doc


def _split(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    for line in body.splitlines(keepends=True):
        if line.rstrip() == "---":
            parts.append("".join(current))
            current = []
        else:
            current.append(line)
    parts.append("".join(current))
    return parts
