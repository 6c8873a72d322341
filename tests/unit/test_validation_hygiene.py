"""core.validation stays UI-free and imports the Kubernetes client only when a live executor is built."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "core.validation.runner",
    "core.validation.recording",
    "core.validation.reports.ctrf",
    "core.validation.reports.junit",
    "core.validation.executor",
    "core.validation.kube_executor",
]


def test_no_ui_or_sdk_imports() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in MODULES)
        + "bad = [m for m in ('textual', 'rich', 'screens', 'kubernetes') if m in sys.modules]\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
