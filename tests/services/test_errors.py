"""One failure line for both faces (aicr_tui.core.services.errors.error_line)."""

from __future__ import annotations

import errno
from pathlib import Path

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.services.errors import error_line
from tests.conftest import run_cli


def test_an_os_error_is_the_environments_never_internal(tmp_path: Path) -> None:
    """The wizard used to show an OS error as ``[INTERNAL] unexpected failure``."""
    exc = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "pools.json"))
    line = error_line(exc)
    assert line.startswith("[INVALID_REQUEST] ") and "INTERNAL" not in line
    assert "pools.json" in line and "ermission denied" in line


def test_document_text_in_an_error_is_made_terminal_safe() -> None:
    line = error_line(invalid('unknown component "gpu\x1b[2Jop"'))
    assert line.startswith("[INVALID_REQUEST] unknown component") and "\x1b" not in line


def test_a_bug_is_one_internal_line() -> None:
    assert error_line(KeyError("a\nb")) == "[INTERNAL] unexpected failure: KeyError: 'a\\nb'"


def test_the_cli_prints_the_same_line_the_wizard_shows(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    proc = run_cli("bundle", "-r", str(missing), "-o", str(tmp_path / "b"))
    assert proc.returncode != 0
    from aicr_tui.core.recipe.loading import load_recipe

    try:
        load_recipe(str(missing))
    except Exception as exc:  # the wizard's path: the same loader, shown by error_line
        expected = f"aicr-tui: error: {error_line(exc)}"
    else:
        raise AssertionError("loading a missing recipe succeeded")
    assert expected in proc.stderr.splitlines()


async def test_the_dashboard_shows_a_failing_stream_as_the_cli_line(tmp_path: Path) -> None:
    """The dashboard had its own one-liner: an OS error read ``PermissionError: ...``."""
    from textual.widgets import Static

    from aicr_tui.screens.validate_dashboard import ValidationDashboardScreen
    from tests.pilot.validate_fixtures import FailingSource, ScreenHost, wait_until

    exc = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "run.jsonl"))
    app = ScreenHost(lambda: ValidationDashboardScreen(FailingSource(exc)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.shown
        await wait_until(pilot, lambda: screen.model.state == "error" and screen.painted_to_end)
        await pilot.pause()
        banner = str(screen.query_one("#run-banner", Static).render())
        assert error_line(exc) in banner and "[INVALID_REQUEST]" in banner
