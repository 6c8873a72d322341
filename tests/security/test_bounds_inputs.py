"""Bounded inputs: YAML merge-key and alias bombs, huge numbers, deep nesting, long paths,
non-JSON numbers. Each is refused quickly, in one line naming the file or flag, exit 2.

In-process cases run every YAML entry point (snapshot, recipe, --set-file, validate --data,
recipe --data, the wizard's snapshot loader); a few run the real CLI to check the exit code,
the single stderr line and that nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.limits import MAX_INT_BITS, MAX_NESTING_DEPTH, MAX_PATH_SEGMENTS
from aicr_tui.core.foundation.yamlio import load_yaml, load_yaml_plain
from tests.conftest import SAMPLES

# Bounded time: each refusal must take well under this on a loaded 2-core CI machine
# (before the fix the 22-deep merge bomb took 10.7 s, the 30-deep one never finished).
FAST_S = 3.0


def merge_bomb(levels: int, *, fan: int = 2) -> str:
    lines = ["m0: &m0 {k: v}"]
    for i in range(1, levels + 1):
        refs = ", ".join([f"*m{i - 1}"] * fan)
        lines.append(f"m{i}: &m{i}\n  <<: [{refs}]\n  x{i}: 1")
    return "\n".join(lines) + "\n"


def nested_merge_bomb(levels: int) -> str:
    """Merge keys inside merged mappings: each level merges a mapping that itself merges."""
    lines = ["b0: &b0 {k: v}"]
    for i in range(1, levels + 1):
        lines.append(f"b{i}: &b{i}\n  inner:\n    <<: [*b{i - 1}, *b{i - 1}]\n  <<: *b{i - 1}")
    return "\n".join(lines) + "\n"


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def block_nesting(depth: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "1\n"


BOMBS: dict[str, str] = {
    "merge 22": merge_bomb(22),
    "merge 30": merge_bomb(30),
    "merge 60 fan 3": merge_bomb(60, fan=3),
    "nested merge 30": nested_merge_bomb(30),
    "classic alias 9x9": alias_bomb(9),
    "merge in flow": "m: &m {a: 1}\n"
    + "".join(
        f"l{i}: &l{i} {{<<: [*{'m' if i == 0 else f'l{i - 1}'}, *{'m' if i == 0 else f'l{i - 1}'}]}}\n"
        for i in range(40)
    ),
    "alias cycle": "a: &a\n  b: *a\n",
    "merge cycle": "a: &a\n  <<: *a\n",
}
NUMBERS: dict[str, str] = {
    "100k-digit hex int": "v: 0x" + "f" * 100_000 + "\n",
    "100k-digit decimal int": "v: " + "9" * 100_000 + "\n",
    "100k-digit octal int": "v: 0o" + "7" * 100_000 + "\n",
    "257-bit int": f"v: {2**MAX_INT_BITS}\n",
}
DEPTHS: dict[str, str] = {
    "400-deep block": block_nesting(400),
    f"{MAX_NESTING_DEPTH + 1}-deep block": block_nesting(MAX_NESTING_DEPTH + 1),
    "400-deep flow": "a: " + "[" * 400 + "]" * 400 + "\n",
    "400-deep mixed": "a: " + "{b: [" * 200 + "]}" * 200 + "\n",
}
HOSTILE = {**BOMBS, **NUMBERS, **DEPTHS}


def _refused_fast(call: Callable[[], Any]) -> str:
    start = time.monotonic()
    with pytest.raises(AicrError) as refused:
        call()
    elapsed = time.monotonic() - start
    assert elapsed < FAST_S, f"took {elapsed:.1f}s"
    message = refused.value.render()
    assert "\n" not in message.strip() and refused.value.exit_code == 2
    return message


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("loader", [load_yaml_plain, load_yaml], ids=["plain", "round-trip"])
def test_yaml_loaders_refuse_fast(name: str, loader: Callable[[str, str], Any]) -> None:
    message = _refused_fast(lambda: loader(HOSTILE[name], 'snapshot file "x.yaml"'))
    assert 'snapshot file "x.yaml"' in message


def test_limits_are_not_hit_by_honest_documents() -> None:
    ok = "base: &base {a: 1, b: [1, 2]}\nx:\n  <<: *base\n  c: 3\ny: [*base, *base]\n"
    assert load_yaml_plain(ok, "f")["x"] == {"a": 1, "b": [1, 2], "c": 3}
    assert load_yaml_plain(f"v: {2**MAX_INT_BITS - 1}\n", "f")["v"] == 2**MAX_INT_BITS - 1
    assert load_yaml_plain(block_nesting(MAX_NESTING_DEPTH - 2), "f")
    assert load_yaml_plain(merge_bomb(6), "f")["m6"]["k"] == "v"


@pytest.fixture
def bomb_files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name in ("merge 30", "nested merge 30", "100k-digit hex int", "400-deep block"):
        path = tmp_path / (name.replace(" ", "_") + ".yaml")
        path.write_text(HOSTILE[name])
        out[name] = path
    return out


def test_every_yaml_entry_point_refuses(bomb_files: dict[str, Path], tmp_path: Path) -> None:
    from aicr_tui.core.bundler.overrides import parse_set_file
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.validation.catalog import load_validator_catalog
    from aicr_tui.screens.state import WizardServices

    services = WizardServices()

    def wizard_load(path: str) -> Any:
        """The wizard's open-a-file path (it recognises the file from its content)."""
        return services.open_file(path, {}, None)

    for name, path in bomb_files.items():
        assert str(path) in _refused_fast(lambda p=path: load_snapshot(str(p))), name
        assert str(path) in _refused_fast(lambda p=path: load_recipe(str(p))), name
        assert path.name in _refused_fast(lambda p=path: parse_set_file(f"gpu-operator:a={p}"))
        assert str(path) in _refused_fast(lambda p=path: wizard_load(str(p))), name
        data = tmp_path / f"data-{path.stem}"
        (data / "validators").mkdir(parents=True)
        (data / "validators" / "catalog.yaml").write_text(path.read_text())
        assert "catalog" in _refused_fast(lambda d=data: load_validator_catalog(d))
        (data / "registry.yaml").write_text(path.read_text())
        assert "registry.yaml" in _refused_fast(lambda d=data: load_catalog(external=d))


# -- flags -------------------------------------------------------------------------------


def _deep_json(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ("gpu-operator:a=NaN", "NaN is not a JSON number"),
        ("gpu-operator:a=Infinity", "Infinity is not a JSON number"),
        ("gpu-operator:a=-Infinity", "-Infinity is not a JSON number"),
        ("gpu-operator:a=1e999", "out of range"),
        ("gpu-operator:a=[1, -1e400]", "out of range"),
        ('gpu-operator:a={"x": NaN}', "NaN is not a JSON number"),
        ("gpu-operator:a=" + _deep_json(400), "nested more than"),
        ("gpu-operator:a=" + "[" * 400 + "]" * 400, "nested more than"),
        ("gpu-operator:a=" + "[" * 5000 + "]" * 5000, "nested too deeply"),
        ("gpu-operator:a=" + "1" * 100, "bits"),
        ("gpu-operator:a=0x10", "not valid JSON"),
    ],
    ids=lambda v: v if len(v) < 40 else f"{v[:20]}...({len(v)} chars)",
)
def test_set_json_is_strict_and_bounded(entry: str, needle: str) -> None:
    from aicr_tui.core.bundler.overrides import parse_set_json

    message = _refused_fast(lambda: parse_set_json(entry))
    assert needle in message
    assert len(message) < 400


@pytest.mark.parametrize(
    "flag",
    ["set", "set-json", "set-file", "dynamic"],
)
def test_value_paths_are_bounded(flag: str) -> None:
    from aicr_tui.core.bundler.overrides import parse_entry

    long_path = ".".join(["a"] * 5000)
    tail = "" if flag == "dynamic" else "=1"
    message = _refused_fast(lambda: parse_entry(flag, f"gpu-operator:{long_path}{tail}"))
    assert "5000 segments" in message and len(message) < 400
    message = _refused_fast(lambda: parse_entry(flag, f"gpu-operator:{'a' * 5000}{tail}"))
    assert "5000 characters" in message
    ok = ".".join(["a"] * MAX_PATH_SEGMENTS)
    if flag in ("set", "dynamic"):
        assert parse_entry(flag, f"gpu-operator:{ok}{tail}").path == ok


# -- the real CLI ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from aicr_tui.core.documents.recipe_result import render_recipe
    from tests.unit.test_bundle_support import demo_recipe

    path = tmp_path_factory.mktemp("recipe") / "oke.yaml"
    path.write_text(render_recipe(demo_recipe("oke-oci")))
    return path


def _one_line_exit_2(result: Any, needle: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert needle in result.stderr
    assert "INTERNAL" not in result.stderr and "Traceback" not in result.stderr


def test_cli_refuses_bombs_numbers_depth_and_paths(
    cli: Any, bomb_files: dict[str, Path], recipe_file: Path, tmp_path: Path
) -> None:
    bomb = bomb_files["merge 30"]
    start = time.monotonic()
    _one_line_exit_2(cli("recipe", "-s", str(bomb)), "excessive aliasing")
    _one_line_exit_2(
        cli("bundle", "-r", str(bomb), "-o", str(tmp_path / "b1")), "excessive aliasing"
    )
    out = tmp_path / "b2"
    # One bundle of the good recipe per oversized override value, each refused in one line.
    for flag, value, fragment in (
        ("--set-file", f"gpu-operator:driver={bomb}", "excessive aliasing"),
        ("--set-json", "gpu-operator:a=" + _deep_json(400), "nested more than"),
        ("--set", "gpu-operator:" + ".".join(["a"] * 5000) + "=1", "5000 segments"),
        ("--set-json", "gpu-operator:a=NaN", "NaN is not a JSON number"),
    ):
        _one_line_exit_2(
            cli("bundle", "-r", str(recipe_file), "-o", str(out), flag, value), fragment
        )
    _one_line_exit_2(
        cli("recipe", "-s", str(bomb_files["100k-digit hex int"])),
        f"at most {MAX_INT_BITS} are accepted",
    )
    assert not (tmp_path / "b1").exists() and not out.exists()
    assert time.monotonic() - start < 60


def test_cli_validate_data_bomb(cli: Any, bomb_files: dict[str, Path], tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "validators").mkdir(parents=True)
    (data / "validators" / "catalog.yaml").write_text(bomb_files["nested merge 30"].read_text())
    recipe = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"
    snapshot = SAMPLES / "snapshots" / "aks-h100-managed.yaml"
    result = cli(
        "validate", "-r", str(recipe), "-s", str(snapshot), "--no-cluster", "--data", str(data)
    )
    _one_line_exit_2(result, "excessive aliasing")
