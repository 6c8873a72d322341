"""Remedies as a wizard user can follow them.

The core's messages are written for the CLI: they name its flags (``rerun with --profile
gpuStack=operator-managed``, ``pass --charts DIR``, ``--kubeconfig FILE``). The wizard
takes no flags, so before such a message is shown on a screen each CLI remedy is said in
the wizard's own terms: the key, the choice or the setting that does the same there.
A message with no CLI remedy passes unchanged.
"""

from __future__ import annotations

import re

# (CLI wording, wizard wording). Profile names and values are identifiers (the profile
# grammar), so the patterns need not match any other character.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (
            r"rerun with --profile ([\w-]+)=([\w.-]+)",
            r"choose \1=\2 in the \1 list (s switches to it)",
        ),
        (
            r"rerun without --profile \(the ([\w-]+)=([\w.-]+) default\)",
            r'choose "default: \2" in the \1 list',
        ),
        (
            r"recapture with --(?:aks-gpu-pools|oke-addons|oke-legacy-daemonset)",
            "recapture (r shows the command) and load the new dump (l)",
        ),
        (r"offline\? pass --charts DIR with", "offline? set AICR_TUI_CHARTS to directories of"),
        (r"pass --charts DIR", "set AICR_TUI_CHARTS to the chart directories"),
        (r"pass --kubeconfig FILE, set KUBECONFIG", "set KUBECONFIG"),
        (r"or capture without a cluster \(--no-cluster\)", "or open saved provider dumps (o)"),
        (r"--intent \(", "an intent ("),
    )
)


def for_wizard(text: str) -> str:
    """``text`` with every CLI remedy it holds said in the wizard's terms."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
