"""Remedies as a wizard user can follow them.

The core's messages are written for the CLI: they name its flags (``rerun with --profile
gpuStack=operator-managed``, ``pass --charts DIR``, ``--kubeconfig FILE``, ``take the
capture's values (--accelerator h100)``). The wizard takes no flags, so before such a
message is shown on a screen each CLI remedy is said in the wizard's own terms: the key,
the choice or the setting that does the same there. The keys differ by screen (``s`` and
``t`` are the recipe step's; the drift screen reaches the choices through ``esc``), so the
caller says which screen the text is for. A message with no CLI remedy passes unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

Screen = Literal["recipe", "drift"]
Replacement = str | Callable[[re.Match[str]], str]

_FLAG_VALUE = re.compile(r"--([\w-]+) ([\w.-]+)")


def _taken(match: re.Match[str]) -> str:
    """``take the capture's values (--accelerator h100 --os ubuntu)`` as the key that does it."""
    values = ", ".join(f"{k}={v}" for k, v in _FLAG_VALUE.findall(match.group(1)))
    return f"press t to take the capture's {values}"


# (CLI wording, wizard wording on the recipe step, on the drift screen when it differs).
# Profile names and values are identifiers (the profile grammar), so the patterns need not
# match any other character.
_RULES: tuple[tuple[re.Pattern[str], Replacement, Replacement | None], ...] = tuple(
    (re.compile(pattern), recipe, drift)
    for pattern, recipe, drift in (
        (
            r"rerun with --profile ([\w-]+)=([\w.-]+)( against the same snapshot "
            r"\(no recapture needed\))?",
            r"choose \1=\2 in the \1 list (s switches to it)\3",
            r"this capture qualifies with \1=\2: choose it in the \1 list of the recipe "
            r"step (esc goes back to it)",
        ),
        (
            r"rerun without --profile \(the ([\w-]+)=([\w.-]+) default\)( against the same "
            r"snapshot \(no recapture needed\))?",
            r'choose "default: \2" in the \1 list\3',
            r'this capture qualifies with \1=\2: choose "default: \2" in the \1 list of the '
            r"recipe step (esc goes back to it)",
        ),
        (
            r"recapture with --(?:aks-gpu-pools|oke-addons|oke-legacy-daemonset)",
            "recapture (r shows the command) and load the new dump (l)",
            "recapture, then open the new dump here with o",
        ),
        (
            r"take the capture's values \(((?:--[\w-]+ [\w.-]+ ?)+)\)",
            _taken,
            None,
        ),
        (
            r"or use a snapshot of the cluster the recipe is for",
            "or load a capture of the cluster the recipe is for (l)",
            "or open a capture of the cluster the recipe is for (o)",
        ),
        (
            r"offline\? pass --charts DIR with",
            "offline? set AICR_TUI_CHARTS to directories of",
            None,
        ),
        (r"pass --charts DIR", "set AICR_TUI_CHARTS to the chart directories", None),
        (r"pass --kubeconfig FILE, set KUBECONFIG", "set KUBECONFIG", None),
        (
            r"or capture without a cluster \(--no-cluster\)",
            "or open saved provider dumps (o)",
            None,
        ),
        (r"--intent \(", "an intent (", None),
    )
)


def for_wizard(text: str, screen: Screen = "recipe") -> str:
    """``text`` with every CLI remedy it holds said in the terms of the wizard's ``screen``
    (its keys and choices)."""
    for pattern, recipe, drift in _RULES:
        replacement = drift if screen == "drift" and drift is not None else recipe
        text = pattern.sub(replacement, text)
    return text
