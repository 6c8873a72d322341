"""The default cache directory is the one platformdirs names (issue 36: platformdirs is
asked, the hand-written lookup of issue 17 is gone): every combination of
``XDG_CACHE_HOME`` and ``HOME``, and every other platform."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs
import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix

from aicr_tui.core.foundation import cachedir
from aicr_tui.core.recipe import catalog

UNSET = None
XDG = [UNSET, "", "   ", "relative/cache", "~/cache", "/xdg/cache", "/xdg/cache/", "/", "//x"]
HOMES = [UNSET, "", "relative", "/home/u", "/home/u/", "/", "//srv/u"]


def set_env(monkeypatch: pytest.MonkeyPatch, name: str, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)


def platformdirs_answer(kind: type[Unix] | type[MacOS]) -> str | None:
    try:
        return kind(appname="aicr-tui", appauthor=False).user_cache_dir
    except RuntimeError:
        return None


@pytest.mark.parametrize("xdg", XDG)
@pytest.mark.parametrize("home", HOMES)
def test_the_cache_directory_is_platformdirs_answer(
    monkeypatch: pytest.MonkeyPatch, xdg: str | None, home: str | None
) -> None:
    """Issue 36: platformdirs itself names the directory (the hand-written XDG lookup
    beside it is gone), for every combination of XDG_CACHE_HOME and HOME."""
    set_env(monkeypatch, "XDG_CACHE_HOME", xdg)
    set_env(monkeypatch, "HOME", home)
    kind = MacOS if sys.platform == "darwin" else Unix
    want = platformdirs_answer(kind) if sys.platform in ("linux", "darwin") else None
    if want is not None:
        assert cachedir.user_cache_dir() == want
    assert cachedir.user_cache_dir() == platformdirs.user_cache_dir("aicr-tui", appauthor=False)
    if sys.platform == "linux" and (xdg or "").startswith("/"):
        assert cachedir.user_cache_dir() == os.path.join(xdg or "", "aicr-tui")


@pytest.mark.parametrize("platform", ["win32", "ios", "freebsd14", "cygwin", "android"])
def test_other_platforms_get_platformdirs_own_answer(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    monkeypatch.setattr(sys, "platform", platform)
    calls: list[tuple[str, object]] = []

    def fake(appname: str, appauthor: object) -> str:
        calls.append((appname, appauthor))
        return r"C:\Users\u\AppData\Local\aicr-tui\Cache"

    monkeypatch.setattr(platformdirs, "user_cache_dir", fake)
    assert cachedir.user_cache_dir() == r"C:\Users\u\AppData\Local\aicr-tui\Cache"
    assert calls == [("aicr-tui", False)]


def test_the_reports_and_chart_directories_follow_platformdirs_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every user directory comes from platformdirs: the dashboard's reports directory
    (its state directory) and the verify chart cache (under the cache directory)."""
    from aicr_tui.core.verify.sources import cache_root
    from aicr_tui.screens.state import default_reports_dir

    for name in ("AICR_TUI_REPORTS_DIR", "AICR_TUI_CACHE_DIR", "AICR_TUI_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    state = platformdirs.user_state_dir("aicr-tui", appauthor=False)
    assert default_reports_dir() == Path(state) / "reports"
    assert cache_root() == Path(platformdirs.user_cache_dir("aicr-tui", appauthor=False)) / "charts"
    if sys.platform == "linux":
        assert default_reports_dir() == tmp_path / "state" / "aicr-tui" / "reports"
        assert cache_root() == tmp_path / "cache" / "aicr-tui" / "charts"

    def fails(appname: str, appauthor: object) -> str:
        raise RuntimeError("could not determine the home directory")

    monkeypatch.setattr(platformdirs, "user_state_dir", fails)
    monkeypatch.setattr(platformdirs, "user_cache_dir", fails)
    assert cache_root() is None
    assert default_reports_dir().parent.parent == Path(tempfile.gettempdir())


def test_no_home_directory_runs_without_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs raises when no absolute home can be found: the catalog is then built
    without a cache, as before when it gave a relative path."""
    monkeypatch.delenv("AICR_TUI_NO_CACHE", raising=False)
    monkeypatch.delenv("AICR_TUI_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "platform", "win32")

    def fails(appname: str, appauthor: object) -> str:
        raise RuntimeError("could not determine the home directory")

    monkeypatch.setattr(platformdirs, "user_cache_dir", fails)
    assert catalog._cache_dir() is None


def test_the_catalog_caches_where_platformdirs_says(tmp_path: Path) -> None:
    """A one-shot command with no AICR_TUI_CACHE_DIR writes its catalog cache under
    $XDG_CACHE_HOME (or ~/.cache). Issue 36 withdrew the start-up budget that kept it from
    importing platformdirs: it now asks platformdirs."""
    for xdg in (str(tmp_path / "xdg"), ""):
        home = tmp_path / "home"
        code = (
            "import sys\nfrom aicr_tui.cli import main\n"
            "rc = main(['query', '--service', 'aks', '--accelerator', 'h100', '--os', 'ubuntu',"
            " '--intent', 'training', '--selector', 'criteria'])\n"
            "print(rc)"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_TUI_", "XDG_"))}
        env.update(HOME=str(home), XDG_CACHE_HOME=xdg)
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert proc.stdout.split()[-1:] == ["0"], proc.stderr
        where = Path(xdg) if xdg else home / ".cache"
        assert list((where / "aicr-tui").glob("catalog-*.json")), sorted(tmp_path.rglob("*"))
