"""aicr_tui.core.validation stays UI-free and imports the Kubernetes client only when a live executor is built."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "aicr_tui.core.validation.runner",
    "aicr_tui.core.validation.recording",
    "aicr_tui.core.validation.reports.ctrf",
    "aicr_tui.core.validation.reports.junit",
    "aicr_tui.core.validation.executor",
    "aicr_tui.core.validation.kube_executor",
]


def test_no_ui_or_sdk_imports() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in MODULES)
        + "bad = [m for m in ('textual', 'rich', 'aicr_tui.screens', 'kubernetes') if m in sys.modules]\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
