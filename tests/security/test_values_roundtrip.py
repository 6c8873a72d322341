"""Values reach every deployer unchanged (issue 25, family 3).

A string value holding controls (C0, DEL, C1, NEL), the Unicode line and paragraph
separators, a BOM, non-characters, or plain text a YAML reader could take for something
else (``yes``, ``0x10``, ``~``, ``- a``, a trailing space, several lines) set by ``--set``,
``--set-json``, ``--set-file``, a recipe's overrides or seeded by ``--dynamic`` must come
back as the same code points when each deployer's files are read the way Helm, Argo CD and
Flux read them: Go's YAML reader (the Helm engine in ``helm_python``, as Helm reads a values
file), and for argocd-helm after Helm has rendered the root chart and Argo CD hands the
Application's values to Helm. A lone surrogate cannot be held by a Go string (UTF-8), so
every input route refuses it with one line, exit 2, nothing written.

One bundle per deployer carries every value through every route (the Helm engine is
in-process, a bundle per value would be slow); each (deployer, route) pair is one test that
names every value that came back different.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import parse_overrides, plan_bundle, write_bundle
from aicr_tui.core.bundler.deployers.config import DEPLOYERS, deployer_config
from aicr_tui.core.bundler.overrides import type_scalar
from aicr_tui.core.bundler.tolerations import parse_tolerations
from aicr_tui.core.documents.recipe_result import read_recipe, render_recipe
from tests.conftest import run_cli
from tests.unit.test_bundle_support import KEYED, demo_recipe, with_overrides

hp = pytest.importorskip("helm_python")

COMPONENT = "cert-manager"
# Every code point class the issue names, alone and inside text, and the plain strings a
# YAML 1.1 reader (Helm's) would read as another type or that need quoting or folding care.
CONTROLS = [
    "\x00",
    "a\x00b",
    "\x01a",
    "\x07",
    "\x08",
    "\x0b",
    "\x0c",
    "a\rb",
    "a\r\nb",
    "\x1b[31mred\x1b[0m",
    "\x1f",
    "\t",
    "a\tb",
    "\ta",
    "a\t",
    "\x7f",
    "a\x7fb",
    "\x80",
    "\x84",
    "\x85",
    "a\x85b",
    "a\x85b\n",
    "\x86",
    "\x9b[31m",
    "\x9f",
    "\u2028",
    "a\u2028b",
    "\u2029",
    "\ufeff",
    "\ufeffx",
    "x\ufeff",
    "\ufffe",
    "\uffff",
    "a\uffffb",
    "\ufdd0",
    "\ufdef",
    "\U0001fffe",
    "\U0010ffff",
    "\U0010fffe",
    "\ue000",
    "\U000f0000",
    "\xa0",
    "a\xa0\nb",
    "\u3000a",
    "\U0001f600",
    "\u00e9t\u00e9",
]
TRICKY = [
    " lead",
    "trail ",
    "  ",
    "yes",
    "Yes",
    "ON",
    "n",
    "y",
    "0x10",
    "0o17",
    "0b101",
    "1_000",
    "1:30",
    "~",
    "null",
    "Null",
    "1e3",
    "+1",
    ".inf",
    ".NaN",
    "2026-03-01",
    "<<",
    "=",
    ":",
    "a: b",
    "- a",
    "-",
    "#",
    "a #b",
    "---",
    "...",
    "? a",
    "@a",
    "`a",
    "%a",
    "!a",
    "&a",
    "*a",
    "|",
    ">",
    "'",
    '"',
    "\\",
    "{a}",
    "[a]",
    "a\nb",
    "a\nb\n",
    "a\n\nb",
    "a\n  b\n",
    "a \nb",
    "a\n b",
    " a\nb",
    "a\t\nb",
    "a\t\nb\n",
    "\n",
    "\n\na\n",
    "a\n\n",
    "a\n\n\n",
    "\n ",
    " \n",
]
VALUES = CONTROLS + TRICKY
# Hostile mapping keys, through the routes whose paths are free (not a --set path).
KEYS = [v for v in VALUES if v not in ("", "<<")]
# Raw in a YAML text, Go's reader refuses these ("control characters are not allowed") or,
# for NEL and the separators, reads a line break.
_GO_YAML_RAW_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
ROUTES = ("set", "set-json", "set-file", "recipe", "dynamic")


def _named(values: list[Any]) -> dict[str, Any]:
    return {f"v{i}": v for i, v in enumerate(values)}


def expected(route: str) -> dict[str, Any]:
    """What Go must read back under ``aicrtest.<route>``."""
    if route == "set":
        # --set types its text as upstream does; "" is refused at input (not a value)
        return _named([type_scalar(v) for v in VALUES])
    out = _named(VALUES)
    out["keys"] = {k: i for i, k in enumerate(KEYS)}
    return out


def _ascii_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def _recipe_through_its_file(tmp: Path) -> Any:
    """The demo recipe with every value in cert-manager's overrides, written as
    ``aicr-tui recipe`` writes it and read back as ``bundle -r`` reads it."""
    base = demo_recipe("aks-azure")
    recipe = with_overrides(
        base,
        COMPONENT,
        {"aicrtest": {"recipe": expected("recipe"), "dynamic": expected("dynamic")}},
    )
    path = tmp / "recipe.yaml"
    path.write_text(render_recipe(recipe, "yaml"), encoding="utf-8")
    return read_recipe(path.read_text(encoding="utf-8"), str(path))


def _overrides(tmp: Path, deployer: str) -> Any:
    sets = tuple(f"{COMPONENT}:aicrtest.set.v{i}={v}" for i, v in enumerate(VALUES))
    set_json = tuple(
        f"{COMPONENT}:aicrtest.set-json.v{i}={_ascii_json(v)}" for i, v in enumerate(VALUES)
    ) + (f"{COMPONENT}:aicrtest.set-json.keys={_ascii_json(expected('set-json')['keys'])}",)
    values_file = tmp / "values.json"
    values_file.write_text(_ascii_json(expected("set-file")), encoding="ascii")
    return parse_overrides(
        set_=sets,
        set_json=set_json,
        set_file=(f"{COMPONENT}:aicrtest.set-file={values_file}",),
        dynamic=() if deployer == "argocd" else (f"{COMPONENT}:aicrtest.dynamic",),
    )


def _deployer(name: str) -> Any:
    kw: dict[str, Any] = {}
    if name == "argocd":
        kw["repo"] = "https://git.example.com/platform/gpu-bundle.git"
    if name == "flux":
        kw["repo"] = "oci://registry.example.com/platform/gpu-bundle"
    return deployer_config(name, **kw)


def _go_read(text: str) -> dict[str, Any]:
    """A values file as Helm reads it (sigs.k8s.io/yaml over Go's YAML reader)."""
    doc = hp.values_from_yaml(text)
    assert isinstance(doc, dict)
    return doc


def _file(files: dict[str, bytes], name: str) -> str:
    (rel,) = [r for r in files if r.endswith(f"-{COMPONENT}/{name}") or r == f"{COMPONENT}/{name}"]
    return files[rel].decode("utf-8")


def _argocd_helm_application(out: Path) -> dict[str, Any]:
    """cert-manager's Application: the root chart rendered with its own values.yaml (read as
    Helm reads it), the manifest read as kubectl reads it."""
    chart = hp.Chart.load(str(out))
    root = _go_read((out / "values.yaml").read_text())
    rendered = chart.render(root, name="aicr", namespace="argocd")
    apps = [
        _go_read(doc)
        for text in rendered.values()
        for doc in text.split("\n---\n")
        if "kind: Application" in doc
    ]
    (app,) = [a for a in apps if a["metadata"]["name"] == COMPONENT]
    return app


def _argocd_helm_values(app: dict[str, Any]) -> dict[str, Any]:
    """The Application's values as Argo CD hands them to Helm: the ``values`` string as
    written, read as Helm reads a values file; ``valuesObject`` (when that is what the
    chart rendered) as Helm rendered it, though Argo CD may lose it (see below)."""
    helm = app["spec"]["source"]["helm"]
    if "values" in helm:
        return _go_read(helm["values"])
    return helm.get("valuesObject") or {}


@cache
def _bundle(deployer: str, tmp: Path) -> dict[str, dict[str, Any]]:
    """Per route, what Go reads back from ``deployer``'s bundle under ``aicrtest``."""
    tmp.mkdir(parents=True, exist_ok=True)
    plan = plan_bundle(
        _recipe_through_its_file(tmp),
        _overrides(tmp, deployer),
        accelerated_tolerations=parse_tolerations(KEYED),
        deployer=_deployer(deployer),
    )
    assert plan.errors == [], [e.render() for e in plan.errors]
    if deployer == "argocd-helm":
        out = tmp / "bundle"
        write_bundle(plan, out, force=True)
        app = _argocd_helm_application(out)
        got: dict[str, Any] = _argocd_helm_values(app).get("aicrtest", {})
        return {"application": app, **{route: got.get(route, {}) for route in ROUTES}}
    values = _go_read(_file(plan.files, "values.yaml"))["aicrtest"]
    got = {r: values.get(r, {}) for r in ROUTES if r != "dynamic"}
    if deployer != "argocd":  # Argo CD has no install-time values file (--dynamic refused)
        got["dynamic"] = _go_read(_file(plan.files, "cluster-values.yaml"))["aicrtest"]["dynamic"]
    return got


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("values")
    return lambda deployer: _bundle(deployer, root / deployer)


def _same(back: Any, value: Any) -> bool:
    """Equal, and of the same kind (Helm hands every number over as JSON, so 1000.0 and
    1000 are one value; a string never equals a number or a bool)."""
    kinds = (str, bool, type(None))
    return back == value and all(isinstance(back, k) == isinstance(value, k) for k in kinds)


def _differences(want: dict[str, Any], got: Any) -> list[str]:
    if not isinstance(got, dict):
        return [f"the whole map came back as {got!r}"]
    out = []
    for name, value in want.items():
        back = got.get(name, "<missing>")
        if not _same(back, value):
            out.append(f"{value!r} came back as {back!r}")
    out += [f"unexpected {name!r}" for name in got if name not in want]
    return out


PAIRS = [(d, r) for d in DEPLOYERS for r in ROUTES if (d, r) != ("argocd", "dynamic")]


@pytest.mark.parametrize(("deployer", "route"), PAIRS)
def test_every_value_reaches_the_deployer_as_go_reads_it(
    deployer: str, route: str, bundles: Any
) -> None:
    got = bundles(deployer)[route]
    got = dict(got) if isinstance(got, dict) else got
    want = expected(route)
    keys = want.pop("keys", None)
    got_keys = got.pop("keys", None) if isinstance(got, dict) else None
    diff = _differences(want, got)
    if keys is not None:
        diff += [f"key {d}" for d in _differences(keys, got_keys)]
    assert not diff, f"{deployer} via {route}: " + "; ".join(diff)


def test_argocd_helm_applications_carry_values_as_a_string(bundles: Any) -> None:
    """Argo CD turns ``valuesObject`` back into YAML with sigs.k8s.io/yaml's JSONToYAML over
    the API server's JSON, where DEL, C1 controls and U+FFFE/U+FFFF are raw (JSON does not
    escape them) and refused by Go's YAML reader: Argo CD then hands Helm no values at all
    (ValuesYAML swallows the error). The ``values`` string reaches Helm as written."""
    helm = bundles("argocd-helm")["application"]["spec"]["source"]["helm"]
    assert "valuesObject" not in helm
    text = helm["values"]
    assert isinstance(text, str)
    # no character Go's YAML reader refuses raw or folds (NEL): escapes carry them
    raw = sorted({f"U+{ord(ch):04X}" for ch in text if _GO_YAML_RAW_UNSAFE.fullmatch(ch)})
    assert not raw, raw


def test_argocd_helm_keeps_nel_and_a_seeded_yaml11_word(tmp_path: Path) -> None:
    """With nothing in the bundle Go's YAML reader refuses, the old ``toYaml`` still folded
    NEL to a space, and a ``--dynamic`` seed of ``yes`` in the root values.yaml (written
    plain, YAML 1.2) reached the Application as the boolean true."""
    plan = plan_bundle(
        demo_recipe("aks-azure"),
        parse_overrides(
            set_json=(f'{COMPONENT}:aicrtest.nel="a\\u0085b"', f'{COMPONENT}:aicrtest.word="yes"'),
            dynamic=(f"{COMPONENT}:aicrtest.word",),
        ),
        accelerated_tolerations=parse_tolerations(KEYED),
        deployer=_deployer("argocd-helm"),
    )
    write_bundle(plan, tmp_path / "b")
    got = _argocd_helm_values(_argocd_helm_application(tmp_path / "b"))["aicrtest"]
    assert got == {"nel": "a\x85b", "word": "yes"}


# -- lone surrogates: refused at input, one line, every route ------------------------------
SURROGATE_JSON = [
    '"\\ud800"',
    '"a\\udfffb"',
    '"\\ud800a"',
    '{"\\udc00": 1}',
    '["ok", {"k": "\\udbff"}]',
]


def _refused(call: Any, *args: Any) -> str:
    from aicr_tui.core.foundation.errors import AicrError, ErrorCode

    with pytest.raises(AicrError) as info:
        call(*args)
    assert info.value.code is ErrorCode.INVALID_REQUEST and info.value.exit_code == 2
    text = info.value.render()
    assert "\n" not in text.strip()
    text.encode("utf-8")  # printable as UTF-8: the surrogate itself is never in the line
    return text


@pytest.mark.parametrize("literal", SURROGATE_JSON)
def test_set_json_refuses_a_lone_surrogate(literal: str) -> None:
    from aicr_tui.core.bundler.overrides import parse_set_json

    line = _refused(parse_set_json, f"{COMPONENT}:aicrtest.x={literal}")
    assert "--set-json" in line and "lone surrogate U+D" in line


@pytest.mark.parametrize("literal", SURROGATE_JSON)
def test_set_file_refuses_a_lone_surrogate(literal: str, tmp_path: Path) -> None:
    from aicr_tui.core.bundler.overrides import parse_set_file

    path = tmp_path / "v.json"
    path.write_text(literal, encoding="ascii")
    line = _refused(parse_set_file, f"{COMPONENT}:aicrtest.x={path}")
    assert "--set-file" in line and str(path) in line and "lone surrogate U+D" in line


@pytest.mark.parametrize("text", ['x: "\\uD800"\n', 'x: ["\\U0000DC00"]\n', '"\\udfff": 1\n'])
def test_set_file_refuses_an_escaped_surrogate_in_yaml(text: str, tmp_path: Path) -> None:
    from aicr_tui.core.bundler.overrides import parse_set_file

    path = tmp_path / "v.yaml"
    path.write_text(text, encoding="ascii")
    line = _refused(parse_set_file, f"{COMPONENT}:aicrtest.x={path}")
    assert "lone surrogate U+D" in line


@pytest.mark.parametrize("entry", [f"{COMPONENT}:aicrtest.x=a\udcffb", "c\udc80:aicrtest.x=1"])
def test_set_refuses_text_that_was_not_utf8(entry: str) -> None:
    from aicr_tui.core.bundler.overrides import parse_set

    line = _refused(parse_set, entry)
    assert "--set" in line and "U+DC" in line


def test_an_escaped_surrogate_pair_is_the_character_it_encodes(tmp_path: Path) -> None:
    """JSON writers escape a character past U+FFFF as a pair: every route reads the emoji
    (YAML reads two code points; they used to become two U+FFFD)."""
    from aicr_tui.core.bundler.overrides import parse_set_file, parse_set_json

    pair = '"\\ud83d\\ude00"'
    assert parse_set_json(f"{COMPONENT}:x={pair}").value == "\U0001f600"
    path = tmp_path / "v.json"
    path.write_text('{"a": ' + pair + "}", encoding="ascii")
    assert parse_set_file(f"{COMPONENT}:x={path}").value == {"a": "\U0001f600"}


def _recipe_text_with(value_literal: str, fmt: str) -> str:
    doc = demo_recipe("aks-azure").to_document()
    ref = next(r for r in doc["componentRefs"] if r["name"] == COMPONENT)
    ref["overrides"] = {"aicrtest": "@@"}
    text = json.dumps(doc) if fmt == "json" else render_recipe(demo_recipe("aks-azure"), "yaml")
    if fmt == "json":
        return text.replace('"@@"', value_literal)
    # YAML: the override appended to cert-manager's entry as a double-quoted scalar
    head, tail = text.split("  - name: cert-manager\n", 1)
    return (
        head
        + "  - name: cert-manager\n    overrides:\n      aicrtest: "
        + value_literal
        + "\n"
        + tail
    )


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_recipe_with_a_lone_surrogate_is_refused(fmt: str) -> None:
    line = _refused(read_recipe, _recipe_text_with('"a\\ud800"', fmt), f"recipe.{fmt}")
    assert f'recipe file "recipe.{fmt}"' in line and "lone surrogate U+D800" in line
    assert "componentRefs" in line and "aicrtest" in line


def _one_line_exit_2(proc: subprocess.CompletedProcess[Any], out: Path, *needles: str) -> None:
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not out.exists(), "nothing is written"


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("recipe") / "recipe.yaml"
    path.write_text(render_recipe(demo_recipe("aks-azure"), "yaml"), encoding="utf-8")
    return path


BUNDLE = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


def test_cli_set_json_lone_surrogate_exits_2(recipe_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli(
        "bundle", "-r", str(recipe_file), *BUNDLE, "-o", str(out),
        "--set-json", f'{COMPONENT}:aicrtest.x="\\ud800"',
    )  # fmt: skip
    _one_line_exit_2(proc, out, "--set-json", "U+D800")


def test_cli_set_file_lone_surrogate_exits_2(recipe_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    values = tmp_path / "v.json"
    values.write_text('{"k": "\\udfff"}', encoding="ascii")
    proc = run_cli(
        "bundle", "-r", str(recipe_file), *BUNDLE, "-o", str(out),
        "--set-file", f"{COMPONENT}:aicrtest.x={values}",
    )  # fmt: skip
    _one_line_exit_2(proc, out, "--set-file", "v.json", "U+DFFF")


def test_cli_set_with_non_utf8_bytes_exits_2(recipe_file: Path, tmp_path: Path) -> None:
    from tests.conftest import _cli_path

    out = tmp_path / "out"
    argv = [*_cli_path(), "bundle", "-r", str(recipe_file), *BUNDLE, "-o", str(out), "--set"]
    proc = subprocess.run(
        [*(a.encode() for a in argv), f"{COMPONENT}:aicrtest.x=a".encode() + b"\xff"],
        capture_output=True,
        timeout=120,
        check=False,
        env={**__import__("os").environ, "NO_COLOR": "1", "TERM": "dumb"},
    )
    _one_line_exit_2(proc, out, "--set", "U+DCFF")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_cli_recipe_with_lone_surrogate_exits_2(fmt: str, tmp_path: Path) -> None:
    recipe = tmp_path / f"recipe.{fmt}"
    recipe.write_text(_recipe_text_with('"\\ud800"', fmt), encoding="ascii")
    out = tmp_path / "out"
    proc = run_cli("bundle", "-r", str(recipe), *BUNDLE, "-o", str(out))
    _one_line_exit_2(proc, out, str(recipe), "U+D800")
