"""What a one-shot command imports (issue 17): not timed, only which modules load.

Most of a one-shot command's cost was importing and building modules it never used, so
these pin the causes rather than a duration: an offline command registers and imports only
its own command module and never a cloud SDK, the UI or a schema validator, and every
pydantic model defers building its validator until something validates with it.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

import aicr_tui.core
from aicr_tui.cli import COMMANDS, build_parser
from tests.conftest import SAMPLES

AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
HEAVY = ("kubernetes", "azure", "oci", "textual", "rich", "jsonschema", "kubernetes_validate")


# builtins.compile wrapped before anything is imported: the names of the texts compiled
# that are no module's source (importing a module without bytecode compiles its .py),
# when this project's code caused it (the nearest frame outside typing and the import
# system is ours). The standard library's own (importlib.resources.abc, loaded with
# importlib.metadata for the version: issue 36) is not this project's to avoid.
COMPILE_SPY = """\
import builtins, sys
_compiled = []
_compile = builtins.compile
_OURS = ("/core/", "/aicr_tui/", "/screens/")
def _caller():
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.endswith("typing.py") or name.startswith("<frozen")):
            return name
        frame = frame.f_back
    return ""
def _spy(source, filename, *args, **kwargs):
    caller = _caller()
    if not str(filename).endswith(".py") and any(p in caller for p in _OURS):
        _compiled.append(str(filename))
    return _compile(source, filename, *args, **kwargs)
builtins.compile = _spy
"""


def users_env(home: Path) -> dict[str, str]:
    """The environment as users have it: no AICR_TUI_CACHE_DIR or XDG_CACHE_HOME, so the
    catalog cache is found the default way (under ``home``, this module's own $HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_TUI_", "XDG_"))}
    env["HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def users_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def run_command(
    argv: list[str], tmp_path: Path, home: Path | None = None
) -> tuple[set[str], list[str]]:
    """The modules loaded after ``main(argv)`` and the non-module texts it compiled (with
    ``home``: run with :func:`users_env`)."""
    code = (
        f"{COMPILE_SPY}import json, sys\nfrom aicr_tui.cli import main\n"
        f"rc = main({argv!r})\n"
        "print(json.dumps([rc, sorted(sys.modules), _compiled]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env=None if home is None else users_env(home),
    )
    rc, modules, compiled = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rc == 0, proc.stderr
    return set(modules), compiled


def loaded_after(argv: list[str], tmp_path: Path, home: Path | None = None) -> set[str]:
    return run_command(argv, tmp_path, home)[0]


def recipe_file(tmp_path: Path, home: Path | None = None) -> Path:
    target = tmp_path / "r.yaml"
    loaded_after(["recipe", *AKS, "-o", str(target)], tmp_path, home)
    return target


@pytest.mark.parametrize(
    ("name", "argv", "commands"),
    [
        ("recipe", ["recipe", *AKS, "-o", "r.yaml"], {"recipe"}),
        (
            "recipe --snapshot",
            ["recipe", *AKS, "--snapshot", str(SAMPLES / "snapshots" / "aks-h100-install.yaml")],
            {"recipe"},
        ),
        ("query", ["query", *AKS, "--selector", "criteria"], {"query", "recipe"}),
        (
            "snapshot --no-cluster",
            [
                "snapshot",
                "--no-cluster",
                "--aks-gpu-pools",
                str(SAMPLES / "captures" / "aks-pools-mixed.json"),
                "-o",
                "s.yaml",
            ],
            {"snapshot"},
        ),
        (
            "bundle",
            [
                "bundle",
                "-r",
                "@recipe",
                "-o",
                "b",
                "--accelerated-node-toleration",
                "nvidia.com/gpu:NoSchedule",
            ],
            {"bundle"},
        ),
    ],
)
def test_offline_command_imports_only_what_it_uses(
    name: str, argv: list[str], commands: set[str], tmp_path: Path, users_home: Path
) -> None:
    argv = [str(recipe_file(tmp_path, users_home)) if a == "@recipe" else a for a in argv]
    modules, _ = run_command(argv, tmp_path, users_home)
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"{name} imported {heavy[:5]}"
    used = {m.rsplit(".", 1)[1] for m in modules if m.startswith("aicr_tui.commands.")}
    assert used - {"_common"} == commands, f"{name} registered {sorted(used)}"
    # (Issue 36 withdrew the budget that kept pydantic, dataclasses, hashlib, threading,
    # platformdirs and importlib.metadata out of a one-shot command: documents are pydantic
    # models and the stdlib and platformdirs are used as they are; pydantic itself compiles
    # and loads what it needs.)


def test_a_named_command_parses_as_with_every_command_registered() -> None:
    argv = ["recipe", *AKS, "--profile", "gpuStack=operator-managed", "-o", "x.yaml"]
    lazy = vars(build_parser(argv).parse_args(argv))
    full = vars(build_parser().parse_args(argv))
    assert lazy == full and lazy["command"] == "recipe"


def test_subcommand_help_is_the_same_text(capsys: pytest.CaptureFixture[str]) -> None:
    texts = []
    for parser in (build_parser(["bundle", "--help"]), build_parser()):
        with pytest.raises(SystemExit):
            parser.parse_args(["bundle", "--help"])
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1] and "--accelerated-node-toleration" in texts[0]


def test_an_unknown_command_still_lists_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from aicr_tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["recipes", *AKS])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "invalid choice: 'recipes'" in err
    for name in COMMANDS:
        assert f"'{name}'" in err


def core_models() -> list[type[BaseModel]]:
    """Every pydantic model class in core."""
    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.walk_packages(aicr_tui.core.__path__, "aicr_tui.core."):
        if info.name.startswith("aicr_tui.core.live"):
            continue  # the cloud collectors: no models, and their SDKs are slow to import
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == info.name:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


def test_every_core_model_defers_building_its_validator() -> None:
    models = core_models()
    assert len(models) >= 20  # the walk found the documents, catalog and bundler models
    eager = sorted(m.__qualname__ for m in models if not m.model_config.get("defer_build"))
    assert eager == [], "add defer_build=True to the model_config of " + ", ".join(eager)


def test_the_version_is_the_installed_metadata(tmp_path: Path) -> None:
    """``aicr_tui.core.__version__`` is the package metadata's ``Version:`` (issue 12: pyproject.toml
    is the one place it is written), read with importlib.metadata (issue 36)."""
    import tomllib
    from importlib.metadata import version

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    code = "import aicr_tui.core\nprint(aicr_tui.core.__version__)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert proc.stdout.split() == [version("aicr-tui")]
    assert version("aicr-tui") == pyproject["project"]["version"]


def test_a_one_shot_process_skips_the_exit_collection_and_main_in_a_process_does_not(
    tmp_path: Path,
) -> None:
    """Run as the process (no argv: the console script, python -m aicr_tui), a one-shot
    command (refused or not) freezes what is alive before exit, so CPython's last full
    collection walks nothing; main(argv) called inside a longer-lived process (tests, the
    wizard's host) leaves the collector as it was."""
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "from aicr_tui.cli import main\n"
        "sys.argv = ['aicr-tui', *sys.argv[1:]]\n"
        "before = gc.get_freeze_count()\n"
        "if sys.argv[1] == 'in-process':\n"
        "    main(['query', *sys.argv[2:]])\n"
        "    print('unchanged', gc.get_freeze_count() == before)\n"
        "else:\n"
        "    print('rc', main())\n"
    )
    query = [
        "--service",
        "aks",
        "--accelerator",
        "h100",
        "--intent",
        "training",
        "--selector",
        "criteria",
    ]
    for argv, want in (
        (["query", *query], ["rc 0", "frozen True"]),
        (["query", "--service", "nope", "--selector", "criteria"], ["rc 2", "frozen True"]),
        (["in-process", *query], ["unchanged True", "frozen False"]),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(("rc", "frozen", "un"))]
        assert lines == want, proc.stdout + proc.stderr
