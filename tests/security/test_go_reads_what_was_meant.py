"""What Go reads from a bundle equals what the command was given (issue 35, family 1).

- ``--set`` / ``--set-json`` refuse non-finite numbers (NaN, Inf, -Infinity, any case):
  Helm and kubectl cannot read a values file that holds one (``json: unsupported value``).
- Selector and toleration values that Go's YAML 1.1 reader would retype (``yes``, ``y``,
  ``off``, ``On``, ``YES``, ``~``, ``0x10``) come back as strings from every file.
- Label keys and values, taint keys, values and effects follow the Kubernetes grammars at
  input (one line, exit 2), so ``a\\u0085b`` never reaches a manifest.
- A ``--set-json`` object key of tens of thousands of characters survives every deployer,
  the argocd-helm root chart included.

Every file a bundle writes that Go reads (values, charts, Applications, HelmReleases,
Kustomizations, helmfile, bundle-info, the JSON files) is read back with Helm's reader
(``helm_python.values_from_yaml``) and compared with what the writer meant (the YAML 1.2
reading of the same text) and, for the scheduling flags, with what the command was given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import parse_overrides, plan_bundle, write_bundle
from aicr_tui.core.bundler.deployers.config import DEPLOYERS, deployer_config
from aicr_tui.core.bundler.overrides import parse_set, parse_set_json
from aicr_tui.core.bundler.tolerations import parse_selector, parse_toleration
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import safe_documents
from tests.conftest import run_captured
from tests.unit.test_bundle_support import demo_recipe

hp = pytest.importorskip("helm_python")

NON_FINITE = [
    "NaN", "nan", "NAN", "nAn", "+NaN", "-nan", "Inf", "inf", "INF", "+Inf", "-Inf", "-inf",
    "Infinity", "infinity", "INFINITY", "+Infinity", "-Infinity", "-INFINITY", "iNfInItY",
]  # fmt: skip
NON_FINITE_JSON = [
    "NaN", "Infinity", "-Infinity", "1e999", "-1e400", '{"a":NaN}', "[1,Infinity]",
    '{"a":{"b":[-Infinity]}}', "1E309",
]  # fmt: skip


@pytest.mark.parametrize("text", NON_FINITE)
def test_set_refuses_a_non_finite_number(text: str) -> None:
    with pytest.raises(AicrError) as caught:
        parse_set(f"gpuoperator:some.path={text}")
    message = caught.value.render()
    assert "\n" not in message.strip() and "--set" in message and "finite" in message


@pytest.mark.parametrize("text", NON_FINITE_JSON)
def test_set_json_refuses_a_non_finite_number(text: str) -> None:
    with pytest.raises(AicrError) as caught:
        parse_set_json(f"gpuoperator:some.path={text}")
    assert "--set-json" in caught.value.render()


@pytest.mark.parametrize("text", ["1e999", "-1e400", "NaNa", "Info", "infinit"])
def test_set_keeps_text_that_is_not_a_number_a_string(text: str) -> None:
    assert parse_set(f"gpuoperator:p={text}").value == text


# Kubernetes label grammar: a key is [prefix/]name, the prefix a DNS-1123 subdomain of at
# most 253 characters, the name at most 63 of [A-Za-z0-9._-] starting and ending with an
# alphanumeric; a value is empty or a name. A taint's key is a label key, its value a
# label value.
BAD_KEYS = [
    "", "a\u0085b", "a b", "a\nb", "a\tb", "-a", "a-", ".a", "a.", "_a", "é", "a\u2028b",
    "a" * 64, "/a", "a/", "a/b/c", "Example.com/a", "exa_mple.com/a", "-x.com/a",
    "x" * 254 + "/a", "a/" + "b" * 64, "$(id)", "a;b", "a=b", "a:b", "a\x00b", "\ufeffa",
    "a\x7f", "a\x9bb",
]  # fmt: skip
BAD_VALUES = [
    "a\u0085b", "a b", "a\nb", "-a", "a-", ".a", "a.", "_a", "é", "a" * 64, "a/b", "a\u2028b",
    "$(id)", "a;b", "`id`", "a:b", "a\x00b", "\ufeffa", "a\x7f", "a,b", "a\"b", "'",
]  # fmt: skip
GOOD_KEYS = ["a", "nvidia.com/gpu", "kubernetes.azure.com/agentpool", "A_b.c-D", "a" * 63,
             "x" * 253 + "/" + "a" * 63, "node-role.kubernetes.io/worker", "0"]  # fmt: skip
GOOD_VALUES = ["", "yes", "y", "no", "off", "On", "YES", "true", "0x10", "1.5", "a" * 63,
               "A_b.c-D", "null", "1e3"]  # fmt: skip
SELECTOR_FLAGS = (
    "--accelerated-node-selector",
    "--system-node-selector",
    "--workload-selector",
)


def _one_line(call: Any, *args: Any) -> str:
    with pytest.raises(AicrError) as caught:
        call(*args)
    message = caught.value.render().strip()
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize("key", [k for k in BAD_KEYS if "=" not in k])
@pytest.mark.parametrize("flag", SELECTOR_FLAGS)
def test_selector_key_outside_the_label_grammar_is_refused(key: str, flag: str) -> None:
    message = _one_line(parse_selector, f"{key}=v", flag)
    assert flag in message and "label key" in message


@pytest.mark.parametrize("value", BAD_VALUES)
def test_selector_value_outside_the_label_grammar_is_refused(value: str) -> None:
    message = _one_line(parse_selector, f"k={value}", "--workload-selector")
    assert "--workload-selector" in message and "label value" in message


@pytest.mark.parametrize("key", GOOD_KEYS)
@pytest.mark.parametrize("value", GOOD_VALUES)
def test_selector_in_the_label_grammar_is_kept(key: str, value: str) -> None:
    assert parse_selector(f"{key}={value}", "--workload-selector") == (key, value)


@pytest.mark.parametrize("key", [k for k in BAD_KEYS if k and ":" not in k and "=" not in k])
def test_toleration_key_outside_the_grammar_is_refused(key: str) -> None:
    for text in (f"{key}=v:NoSchedule", f"{key}:NoExecute"):
        assert "taint key" in _one_line(parse_toleration, text, "--system-node-toleration")


@pytest.mark.parametrize("value", [v for v in BAD_VALUES if ":" not in v])
def test_toleration_value_outside_the_grammar_is_refused(value: str) -> None:
    assert "taint value" in _one_line(parse_toleration, f"k={value}:NoSchedule")


@pytest.mark.parametrize(
    "effect", ["noschedule", "NoSchedule\u0085", "", "NoSchedule ", "\u0085", "Evict"]
)
def test_toleration_effect_outside_the_enum_is_refused(effect: str) -> None:
    assert "effect" in _one_line(parse_toleration, f"k=v:{effect}")


def test_an_empty_toleration_key_needs_operator_exists() -> None:
    assert parse_toleration(":NoSchedule").to_values() == {
        "operator": "Exists",
        "effect": "NoSchedule",
    }
    assert "taint key" in _one_line(parse_toleration, "=v:NoSchedule")


# --- every file Go reads, for every deployer -------------------------------------------

YAML11 = ["yes", "y", "no", "off", "On", "YES", "n", "ON", "Off", "True", "null", "~"]
SELECTOR = {f"sel{i}": v for i, v in enumerate(YAML11) if v != "~"}
SYSTEM_SELECTOR = {"sys.example.com/pool": "On", "k": "NO"}
WORKLOAD = {"w": "off", "x": "Y"}
TOLERATIONS = [f"tol{i}=y:NoSchedule" for i in range(2)] + ["k=YES:NoExecute", "e=off:NoSchedule"]
# The longest keys Go's YAML reader takes back from JSON text (1024 bytes, quotes included):
# plain ASCII, characters Go's JSON escapes (6 bytes each) and two-byte UTF-8.
LONG_KEYS = ["k" * 1022, "<" * 170, "\u00e9" * 511, "\x85" * 170, 'a"' * 340 + "b"]
SET_JSON = {
    **{k: f"long{i}" for i, k in enumerate(LONG_KEYS)},
    "yes": "y",
    "On": ["off", "NO"],
    "x": {"n": "null"},
}
TOO_LONG_KEYS = ["k" * 40_000, "k" * 1023, "<" * 171, "\u00e9" * 512, "\x85" * 171, "\u2028" * 171]
COMPONENT = "cert-manager"

# Not read by Go: shell scripts, Markdown, the checksum list, Helm's template sources
# (Go templates, checked through the rendered chart), its NOTES and the shell env files.
_NOT_GO = (".sh", ".md", ".txt", ".tpl", ".env")


def _reads_go(rel: str) -> bool:
    return not rel.endswith(_NOT_GO) and not rel.startswith("templates/")


def _deployer(name: str) -> Any:
    kw: dict[str, Any] = {}
    if name == "argocd":
        kw["repo"] = "https://git.example.com/platform/gpu-bundle.git"
    if name == "flux":
        kw["repo"] = "oci://registry.example.com/platform/gpu-bundle"
    return deployer_config(name, **kw)


def _plan(deployer: str) -> Any:
    overrides = parse_overrides(set_json=(f"{COMPONENT}:aicrtest={json.dumps(SET_JSON)}",))
    plan = plan_bundle(
        demo_recipe("aks-azure"),
        overrides,
        accelerated_tolerations=[parse_toleration(t) for t in TOLERATIONS],
        accelerated_node_selector=dict(SELECTOR),
        workload_selector=dict(WORKLOAD),
        system_node_selector=dict(SYSTEM_SELECTOR),
        system_tolerations=[parse_toleration("s=on:PreferNoSchedule")],
        deployer=_deployer(deployer),
    )
    assert plan.errors == [], [e.render() for e in plan.errors]
    return plan


def _documents(text: str) -> list[str]:
    docs = [d for d in text.split("\n---\n")]
    return [d.removeprefix("---\n") for d in docs if d.strip() not in ("", "---")]


def _go_documents(rel: str, text: str) -> list[Any]:
    out = []
    for doc in _documents(text):
        try:
            out.append(hp.values_from_yaml(doc))
        except Exception as exc:  # noqa: BLE001 - Helm's error is the finding
            raise AssertionError(f"{rel}: Go cannot read it: {exc}") from exc
    return out


def _kinds_differ(go: Any, meant: Any, where: str, out: list[str]) -> None:
    if isinstance(meant, dict):
        if not isinstance(go, dict):
            out.append(f"{where}: a map came back as {go!r:.60}")
            return
        if set(map(str, meant)) != set(go):
            missing = sorted(set(map(str, meant)) ^ set(go))[:3]
            out.append(f"{where}: keys differ {[k[:40] for k in missing]}")
        for k, v in meant.items():
            _kinds_differ(go.get(str(k)), v, f"{where}.{str(k)[:20]}", out)
    elif isinstance(meant, list):
        if not isinstance(go, list) or len(go) != len(meant):
            out.append(f"{where}: a list came back as {go!r:.60}")
            return
        for i, (g, m) in enumerate(zip(go, meant, strict=True)):
            _kinds_differ(g, m, f"{where}[{i}]", out)
    elif isinstance(meant, str) or isinstance(go, str) or isinstance(meant, bool):
        if go != meant or type(go) is not type(meant):
            out.append(f"{where}: {meant!r:.40} came back as {go!r:.40}")
    elif go != meant:
        out.append(f"{where}: {meant!r:.40} came back as {go!r:.40}")


@pytest.fixture(scope="module", params=DEPLOYERS)
def planned(request: pytest.FixtureRequest) -> tuple[str, Any]:
    return request.param, _plan(request.param)


def test_every_file_go_reads_says_what_was_meant(planned: tuple[str, Any]) -> None:
    deployer, plan = planned
    checked = 0
    problems: list[str] = []
    for rel, data in sorted(plan.files.items()):
        if not _reads_go(rel):
            continue
        text = data.decode("utf-8")
        go = _go_documents(rel, text)
        meant = safe_documents(text) if not rel.endswith(".json") else [json.loads(text)]
        meant = [m for m in meant if m is not None]
        assert len(go) == len(meant), f"{rel}: {len(go)} documents for Go, {len(meant)} written"
        for i, (g, m) in enumerate(zip(go, meant, strict=True)):
            _kinds_differ(g, m, f"{rel}#{i}", problems)
        checked += 1
    assert checked >= 5, f"{deployer}: only {checked} files read"
    assert not problems, f"{deployer}: " + "; ".join(problems[:12])


def test_bundle_info_holds_the_scheduling_flags_as_given(planned: tuple[str, Any]) -> None:
    _, plan = planned
    (info,) = _go_documents("bundle-info.yaml", plan.files["bundle-info.yaml"].decode())
    settings = info["build"]["settings"]
    assert settings["acceleratedNodeSelector"] == SELECTOR
    assert settings["systemNodeSelector"] == SYSTEM_SELECTOR
    assert settings["workloadSelector"] == WORKLOAD
    tolerations = settings["acceleratedNodeTolerations"]
    assert [t.get("value") for t in tolerations] == ["y", "y", "YES", "off"], tolerations


def _values_files(plan: Any) -> dict[str, Any]:
    return {
        rel: _go_documents(rel, data.decode())[0]
        for rel, data in plan.files.items()
        if rel.endswith("/values.yaml")
    }


def test_values_files_hold_the_selectors_and_long_keys_as_given(
    planned: tuple[str, Any],
) -> None:
    deployer, plan = planned
    found_selector = found_long = False
    for values in _values_files(plan).values():
        text = json.dumps(values)
        if "sel0" in text:
            found_selector = True
            assert all(
                f'"sel{i}": {json.dumps(v)}' in text for i, v in enumerate(SELECTOR.values())
            )
        if "aicrtest" in values:
            assert values["aicrtest"] == SET_JSON
            found_long = True
    assert found_selector, f"{deployer}: no values file holds the accelerated selector"
    if deployer != "argocd-helm":
        assert found_long, f"{deployer}: the --set-json value is not in a values file"


@pytest.mark.parametrize("key", TOO_LONG_KEYS, ids=lambda k: f"{len(k)}x{k[0]!r}")
def test_a_key_go_cannot_read_back_is_refused_at_input(key: str, tmp_path: Path) -> None:
    """Past 1024 bytes as JSON text, Go's YAML reader refuses the key (the argocd-helm
    root chart hands values to Helm as JSON text): one line naming the flag."""
    message = _one_line(parse_set_json, f"{COMPONENT}:p={json.dumps({'a': {key: 1}})}")
    assert "--set-json" in message and "key" in message
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps({key: 1}), encoding="utf-8")
    message = _one_line(parse_overrides, (), (), (f"{COMPONENT}:p={values_file}",))
    assert "--set-file" in message and "key" in message


def test_a_set_path_segment_go_cannot_read_back_is_refused() -> None:
    message = _one_line(parse_set, f"{COMPONENT}:a.{'k' * 2000}.b=1")
    assert "--set" in message and "segment" in message


def test_argocd_helm_root_chart_keeps_a_long_set_json_key(tmp_path: Path) -> None:
    """Rendered by Helm, the root chart's Application for cert-manager carries the value
    with keys as long as Go reads back, read back as Argo CD hands it to Helm."""
    plan = _plan("argocd-helm")
    out = tmp_path / "bundle"
    write_bundle(plan, out, force=True)
    chart = hp.Chart.load(str(out))
    root = hp.values_from_yaml((out / "values.yaml").read_text())
    rendered = chart.render(root, name="aicr", namespace="argocd")
    apps = [
        hp.values_from_yaml(doc)
        for text in rendered.values()
        for doc in text.split("\n---\n")
        if "kind: Application" in doc
    ]
    (app,) = [a for a in apps if a["metadata"]["name"] == COMPONENT]
    helm = app["spec"]["source"]["helm"]
    values = hp.values_from_yaml(helm["values"]) if "values" in helm else helm["valuesObject"]
    assert values["aicrtest"] == SET_JSON


# --- the command line: one line, exit 2, nothing written ----------------------------------


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from aicr_tui.core.documents.recipe_result import render_recipe

    path = tmp_path_factory.mktemp("recipe") / "recipe.yaml"
    path.write_text(render_recipe(demo_recipe("aks-azure"), "yaml"), encoding="utf-8")
    return path


REPO = Path(__file__).resolve().parents[2]
_ENV = {**__import__("os").environ, "NO_COLOR": "1", "TERM": "dumb"}
CLI_CASES = [
    ("--set", "gpuoperator:some.path=NaN"),
    ("--set", "gpuoperator:some.path=-Infinity"),
    ("--set-json", "gpuoperator:some.path=[Infinity]"),
    ("--accelerated-node-selector", "rtkey=a\u0085b"),
    ("--accelerated-node-selector", "a\u0085b=v"),
    ("--system-node-selector", "k=a b"),
    ("--workload-selector", "k=$(id)"),
    ("--accelerated-node-toleration", "k=a\u0085b:NoSchedule"),
    ("--system-node-toleration", "a\u0085b:NoSchedule"),
]


@pytest.mark.parametrize(("flag", "value"), CLI_CASES)
def test_cli_refuses_with_one_line_exit_2(
    flag: str, value: str, recipe_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    # this checkout's code (python -m from the repository root), keyed so no check refuses
    argv = ["bundle", "-r", str(recipe_file), "-o", str(out), flag, value]
    if "toleration" not in flag:
        argv += ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]
    proc: subprocess.CompletedProcess[str] = run_captured(
        [sys.executable, "-m", "aicr_tui", *argv], cwd=REPO, env=_ENV
    )
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and flag in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "[INTERNAL]" not in proc.stderr
    assert not out.exists()
