"""The live collectors import their SDKs only when a capture runs."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_collectors_loads_no_sdk() -> None:
    code = (
        "import sys\n"
        "import aicr_tui.core.live, aicr_tui.core.live.azure, aicr_tui.core.live.oci, aicr_tui.core.live.kube\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('oci', 'kubernetes', 'textual', 'rich') or m.startswith('azure.')]\n"
        "print(','.join(sorted(heavy)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.strip() == ""
