"""The default cache directory is the one platformdirs names (issue 17: without importing
it where its answer is plain): every combination of ``XDG_CACHE_HOME`` and ``HOME`` on
Linux and macOS, and platformdirs itself everywhere else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix

from core.foundation import cachedir
from core.recipe import catalog

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
@pytest.mark.parametrize(("platform", "kind"), [("linux", Unix), ("darwin", MacOS)])
def test_the_plain_answer_is_platformdirs_answer(
    monkeypatch: pytest.MonkeyPatch,
    xdg: str | None,
    home: str | None,
    platform: str,
    kind: type[Unix] | type[MacOS],
) -> None:
    for name in ("ANDROID_DATA", "ANDROID_ROOT"):
        monkeypatch.delenv(name, raising=False)
    set_env(monkeypatch, "XDG_CACHE_HOME", xdg)
    set_env(monkeypatch, "HOME", home)
    plain = cachedir.plain_cache_dir(platform)
    want = platformdirs_answer(kind)
    if plain is None:  # left to platformdirs: only when HOME is unset or relative
        assert (xdg or "").startswith("/") is False
        assert home is None or not home.startswith("/")
    else:
        assert plain == want
    if sys.platform == platform:  # the whole lookup, as the catalog makes it
        assert cachedir.user_cache_dir() == want
        assert cachedir.user_cache_dir() == platformdirs.user_cache_dir("aicr-tui", appauthor=False)


@pytest.mark.parametrize("platform", ["win32", "ios", "freebsd14", "cygwin", "android"])
def test_other_platforms_get_platformdirs_own_answer(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cachedir.plain_cache_dir(platform) is None
    monkeypatch.setattr(sys, "platform", platform)
    calls: list[tuple[str, object]] = []

    def fake(appname: str, appauthor: object) -> str:
        calls.append((appname, appauthor))
        return r"C:\Users\u\AppData\Local\aicr-tui\Cache"

    monkeypatch.setattr(platformdirs, "user_cache_dir", fake)
    assert cachedir.user_cache_dir() == r"C:\Users\u\AppData\Local\aicr-tui\Cache"
    assert calls == [("aicr-tui", False)]


def test_a_possible_android_app_is_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs checks for Android before anything else, on a "linux" build too."""
    monkeypatch.setenv("HOME", "/data/data/app")
    monkeypatch.setenv("ANDROID_DATA", "/data")
    monkeypatch.setenv("ANDROID_ROOT", "/system")
    assert cachedir.plain_cache_dir("linux") is None
    monkeypatch.setenv("ANDROID_ROOT", "/other")
    assert cachedir.plain_cache_dir("linux") == "/data/data/app/.cache/aicr-tui"


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


def test_the_catalog_caches_where_platformdirs_says_without_importing_it(
    tmp_path: Path,
) -> None:
    """A one-shot command with no AICR_TUI_CACHE_DIR writes its catalog cache under
    $XDG_CACHE_HOME (or ~/.cache) and never imports platformdirs."""
    for xdg in (str(tmp_path / "xdg"), ""):
        home = tmp_path / "home"
        code = (
            "import sys\nfrom aicr_tui.cli import main\n"
            "rc = main(['query', '--service', 'aks', '--accelerator', 'h100', '--os', 'ubuntu',"
            " '--intent', 'training', '--selector', 'criteria'])\n"
            "print(rc, 'platformdirs' in sys.modules)"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_TUI_", "XDG_"))}
        env.update(HOME=str(home), XDG_CACHE_HOME=xdg)
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert proc.stdout.split()[-2:] == ["0", "False"], proc.stderr
        where = Path(xdg) if xdg else home / ".cache"
        assert list((where / "aicr-tui").glob("catalog-*.json")), sorted(tmp_path.rglob("*"))
