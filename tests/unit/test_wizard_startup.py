"""Issue 17: the wizard's cold start does not pay for a full collection of its own imports.

Measured with gc.callbacks (bench/wizard_bench.py): the first screen's allocations
triggered a full collection that rescanned every module, class and the app built before
``run`` (30-80 ms of the cold start; a bare Textual app allocates too little to trigger
one). ``run_wizard`` now freezes that heap first. Not timed here: the test pins that the
entry point freezes before the app runs.
"""

from __future__ import annotations

import gc

import pytest

from aicr_tui import app as app_module


def test_run_wizard_freezes_the_startup_heap_before_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[int] = []

    def run(self: app_module.AicrApp) -> int:
        seen.append(gc.get_freeze_count())
        return 0

    monkeypatch.setattr(app_module.AicrApp, "run", run)
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        assert app_module.run_wizard(demo=True) == 0
        assert len(seen) == 1 and seen[0] > 1000  # the modules and the app, not a handful
    finally:
        gc.unfreeze()
