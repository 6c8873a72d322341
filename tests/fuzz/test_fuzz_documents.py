"""User documents (snapshots, recipes, validator catalogs, event recordings): arbitrary text,
arbitrary YAML/JSON, shaped documents with wrong types, and damaged copies of real ones.
Each either parses or fails with one AicrError line naming the file; what parses survives a
render and re-parse unchanged."""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aicr_tui.core.documents.recipe_result import RecipeResult, render_recipe
from aicr_tui.core.documents.snapshot import Snapshot, parse_snapshot, render_snapshot
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import dump_yaml
from aicr_tui.core.recipe.loading import parse_recipe
from aicr_tui.core.validation.catalog import ValidatorCatalog, _parse_catalog
from aicr_tui.core.validation.events import (
    CheckFinished,
    CheckStarted,
    LogLine,
    Measurement,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.recording import parse_recording
from tests.fuzz.fuzz_support import (
    FUZZ,
    REPO,
    SNAPSHOTS,
    check_contract,
    json_values,
    mutated,
    qualify_aks_training,
)

SOURCE = "docs/fuzz-input.yaml"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _yaml_or_json(value: Any, as_yaml: bool) -> str:
    if as_yaml:
        try:
            return dump_yaml(value)
        except Exception:  # ruamel refuses some hypothesis strings; JSON is YAML too
            return json.dumps(value)
    return json.dumps(value)


# -- snapshots ----------------------------------------------------------------------------
def _snapshot(text: str) -> Snapshot | AicrError:
    out = check_contract(lambda: parse_snapshot(text, SOURCE), names=SOURCE)
    if isinstance(out, Snapshot):
        for fmt in ("yaml", "json"):
            rendered = render_snapshot(out, fmt)
            rendered.encode("utf-8")  # it is written to a file: no unencodable characters
            again = parse_snapshot(rendered, "round-trip")
            assert again.to_document() == out.to_document(), f"{fmt} round trip changed it"
    return out


_scalar_map = st.one_of(json_values, st.dictionaries(st.text(max_size=6), json_values, max_size=4))
_subtype = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"subtype": st.one_of(st.text(max_size=10), json_values)},
        optional={
            "data": _scalar_map,
            "context": _scalar_map,
            "items": st.one_of(
                json_values,
                st.lists(
                    st.fixed_dictionaries(
                        {}, optional={"data": _scalar_map, "context": _scalar_map}
                    ),
                    max_size=3,
                ),
            ),
        },
    ),
)
_measurement = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["K8s", "GPU", "OS"]), json_values)},
        optional={"subtypes": st.one_of(json_values, st.lists(_subtype, max_size=3))},
    ),
)
_snapshot_doc = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.one_of(st.just("Snapshot"), json_values),
        "apiVersion": st.one_of(
            st.sampled_from(["aicr.run/v1", "aicr.run/v1alpha2", "aicr.run/v2"]), json_values
        ),
        "metadata": _scalar_map,
        "measurements": st.one_of(json_values, st.lists(_measurement, max_size=3)),
        "extra": json_values,
    },
)


@functools.cache
def _snapshot_samples() -> tuple[bytes, ...]:
    return tuple(p.read_bytes() for p in sorted(SNAPSHOTS.glob("*.yaml"))[:3])


@FUZZ
@given(st.data())
def test_snapshot_damaged_samples(data: st.DataObject) -> None:
    for raw in _snapshot_samples():
        _snapshot(_text(data.draw(mutated(raw))))


# -- recipes ------------------------------------------------------------------------------
@functools.cache
def _recipe_sample() -> str:
    from aicr_tui.core.recipe.catalog import load_catalog

    verdict = qualify_aks_training(load_catalog(), "gpuStack=operator-managed")
    assert verdict.recipe is not None, verdict.error
    return render_recipe(verdict.recipe)


def _recipe(text: str) -> RecipeResult | AicrError:
    out = check_contract(lambda: parse_recipe(text, SOURCE), names=SOURCE)
    if isinstance(out, RecipeResult):
        for fmt in ("yaml", "json"):
            rendered = render_recipe(out, fmt)
            rendered.encode("utf-8")
            again = parse_recipe(rendered, "round-trip")
            assert again.to_document() == out.to_document(), f"{fmt} round trip changed it"
    return out


_component = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(["gpu-operator", "cert-manager"]), json_values)},
        optional={
            "version": json_values,
            "overrides": json_values,
            "dependencyRefs": json_values,
            "cleanup": json_values,
        },
    ),
)
_recipe_doc = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.one_of(st.sampled_from(["RecipeResult", "Recipe"]), json_values),
        "apiVersion": st.one_of(st.sampled_from(["aicr.run/v1", "aicr.run/v1beta2"]), json_values),
        "metadata": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {}, optional={"selectedProfile": json_values, "excludedOverlays": json_values}
            ),
        ),
        "criteria": json_values,
        "constraints": st.one_of(
            json_values,
            st.lists(
                st.fixed_dictionaries({"name": json_values, "value": json_values}), max_size=2
            ),
        ),
        "componentRefs": st.one_of(json_values, st.lists(_component, max_size=3)),
        "deploymentOrder": json_values,
        "validation": json_values,
    },
)


# Snapshots and recipes: any text, and documents of roughly the right shape (YAML or JSON).
READERS = [
    pytest.param(_snapshot, _snapshot_doc, id="snapshot"),
    pytest.param(_recipe, _recipe_doc, id="recipe"),
]


@pytest.mark.parametrize(("check", "shape"), READERS)
@FUZZ
@given(text=st.text(max_size=200))
def test_arbitrary_text(check: Any, shape: Any, text: str) -> None:
    check(text)


@pytest.mark.parametrize(("check", "shape"), READERS)
@FUZZ
@given(data=st.data(), as_yaml=st.booleans())
def test_shaped_documents(check: Any, shape: Any, data: st.DataObject, as_yaml: bool) -> None:
    check(_yaml_or_json(data.draw(st.one_of(json_values, shape)), as_yaml))


@FUZZ
@given(st.data())
def test_recipe_damaged_copies(data: st.DataObject) -> None:
    _recipe(_text(data.draw(mutated(_recipe_sample().encode()))))


# -- validator catalogs ---------------------------------------------------------------------
CATALOG = REPO / "aicr_tui" / "recipes" / "validators" / "catalog.yaml"


def _catalog(text: str) -> ValidatorCatalog | AicrError:
    out = check_contract(lambda: _parse_catalog(text, SOURCE), names=SOURCE)
    if isinstance(out, ValidatorCatalog):
        for entry in out.validators:
            assert entry.timeout_s > 0
    return out


_entry = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "name": st.one_of(
                st.sampled_from(["gpu-operator-health", "nccl-all-reduce"]), json_values
            ),
            "phase": st.one_of(st.sampled_from(["deployment", "performance", "x"]), json_values),
            "image": st.one_of(st.just("ghcr.io/nvidia/x:1"), json_values),
        },
        optional={
            "timeout": st.one_of(
                st.sampled_from(["10m", "1h5m", "90s", "1.5h", "0", "5", "m", "-1s", "10x"]),
                json_values,
            ),
            "env": st.one_of(
                json_values,
                st.lists(
                    st.fixed_dictionaries({"name": json_values, "value": json_values}), max_size=2
                ),
            ),
            "args": json_values,
        },
    ),
)
_catalog_doc = st.fixed_dictionaries(
    {
        "kind": st.one_of(st.just("ValidatorCatalog"), json_values),
        "apiVersion": st.one_of(st.just("validator.nvidia.com/v1alpha1"), json_values),
    },
    optional={"validators": st.one_of(json_values, st.lists(_entry, max_size=3))},
)


@FUZZ
@given(st.one_of(st.text(max_size=200), json_values.map(json.dumps)))
def test_catalog_arbitrary_text(text: str) -> None:
    _catalog(text)


@FUZZ
@given(_catalog_doc, st.booleans())
def test_catalog_shaped_documents(doc: Any, as_yaml: bool) -> None:
    _catalog(_yaml_or_json(doc, as_yaml))


@FUZZ
@given(st.data())
def test_catalog_damaged_copies(data: st.DataObject) -> None:
    _catalog(_text(data.draw(mutated(CATALOG.read_bytes()))))


# -- event recordings ---------------------------------------------------------------------
def _recording_sample() -> str:
    events = [
        RunStarted(0.0, "run-1", 1_700_000_000_000, ("deployment",), "replay", "r.yaml", "0.1"),
        PhaseStarted(0.1, "deployment", ("operator-health",)),
        CheckStarted(0.2, "deployment", "operator-health", 120.0, "GPU Operator pods"),
        LogLine(0.3, "deployment", "operator-health", "pods: 3 running"),
        Measurement(0.4, "deployment", "operator-health", "pods", 3.0, "", ">= 1", "passed", "3"),
        CheckFinished(0.5, "deployment", "operator-health", "passed", "ok", 300, {"k": "v"}),
        PhaseFinished(0.6, "deployment", "passed", 1, 0, 0, 0, 500),
        RunFinished(0.7, 1, 1, 0, 0, 0, 0, ""),
    ]
    return "".join(e.to_json() + "\n" for e in events)


def _recording(text: str) -> list[Any] | AicrError:
    out = check_contract(lambda: parse_recording(text, SOURCE), names=SOURCE)
    if isinstance(out, list):
        assert isinstance(out[0], RunStarted)
        for event in out:
            event.to_json().encode("utf-8")  # recorded and reported again
        times = [e.t for e in out]
        assert all(a <= b for a, b in zip(times, times[1:], strict=False))
    return out


@FUZZ
@given(st.lists(st.one_of(st.text(max_size=60), json_values.map(json.dumps)), max_size=5))
def test_recording_arbitrary_lines(lines: list[str]) -> None:
    _recording("\n".join(lines))


_field = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.just([]))
_event = st.fixed_dictionaries(
    {
        "type": st.one_of(
            st.sampled_from(["RunStarted", "LogLine", "CheckFinished", "RunFinished", "Event"]),
            _field,
        ),
        "t": st.one_of(st.floats(min_value=0, max_value=10), _field),
    },
    optional={
        "run_id": _field,
        "started_ms": _field,
        "phases": _field,
        "mode": _field,
        "phase": _field,
        "check": _field,
        "line": _field,
        "tests": _field,
        "passed": _field,
        "failed": _field,
        "skipped": _field,
        "other": _field,
        "exit_code": _field,
    },
)


@FUZZ
@given(st.lists(_event, min_size=1, max_size=4))
def test_recording_shaped_events(events: list[dict[str, Any]]) -> None:
    _recording("\n".join(json.dumps(e) for e in events))


@FUZZ
@given(st.data())
def test_recording_damaged_copies(data: st.DataObject) -> None:
    _recording(_text(data.draw(mutated(_recording_sample().encode()))))


def test_the_document_samples_parse() -> None:
    """The damaged copies start from valid documents."""
    assert isinstance(_recipe(_recipe_sample()), RecipeResult)
    assert isinstance(_catalog(CATALOG.read_text()), ValidatorCatalog)
    assert len(_recording(_recording_sample())) == 8  # type: ignore[arg-type]
    for raw in _snapshot_samples():
        assert isinstance(_snapshot(raw.decode()), Snapshot)


def _bomb(levels: int, tail: str) -> str:
    """A "billion laughs" document: each anchor holds nine aliases of the previous one."""
    names = "abcdefghij"
    lines = [f"x0: &a [{', '.join(['x'] * 9)}]"]
    for i in range(levels):
        lines.append(f"x{i + 1}: &{names[i + 1]} [{', '.join(['*' + names[i]] * 9)}]")
    return "\n".join(lines) + "\n" + tail.replace("BOMB", "*" + names[levels]) + "\n"


def test_hostile_edge_documents() -> None:
    """Huge numbers, several documents, binary tags, NUL bytes, a BOM, NaN times."""
    huge = "1" * 5000
    texts = (
        huge,
        f"kind: Snapshot\nmeasurements: [{{type: K8s, subtypes: [{{subtype: x, data: {{a: {huge}}}}}]}}]",
        "kind: Snapshot\n---\nkind: Snapshot\n",
        "kind: Snapshot\nmeasurements:\n- type: K8s\n  subtypes:\n  - subtype: !!binary aGVsbG8=\n",
        "kind: Snapshot\nmeasurements: [{type: K8s, subtypes: [{subtype: x, 4: y}]}]",
        "\x00\x01",
        "\ufeffkind: Snapshot",
        '{"type":"RunStarted","t":' + huge + "}",
        '{"type":"RunStarted","t":NaN,"run_id":"r","started_ms":0,"phases":[],"mode":"x"}',
        '{"type":"RunStarted","t":0,"run_id":"\\ud800","started_ms":0,"phases":[],"mode":"x"}',
        '{"kind":"Snapshot","measurements":[{"type":"K8s","subtypes":[{"subtype":"server",'
        '"data":{"version":"\\ud800"}}]}]}',
        'kind: RecipeResult\napiVersion: aicr.run/v1\ncomponentRefs: [{name: "\\udc80"}]\n',
    )
    for text in texts:
        _snapshot(text)
        _recipe(text)
        _catalog(text)
        _recording(text)
    _recording("[" * 100_000)


def test_deep_yaml_nesting_is_refused_quickly() -> None:
    """The YAML scanner is quadratic in flow depth: 3,000 "[" once took ten seconds."""
    started = time.perf_counter()
    for depth in (499, 1100, 100_000):
        assert isinstance(_recipe("a: " + "[" * depth), AicrError)
        assert isinstance(_snapshot("[" * depth + "]" * depth), AicrError)
    assert time.perf_counter() - started < 5.0


def test_alias_bombs_and_cycles_are_refused_quickly() -> None:
    """A few hundred bytes must not expand into millions of nodes (time and memory), and an
    alias inside its own anchor must not recurse forever."""
    snapshot_tail = "kind: Snapshot\nmeasurements:\n- type: K8s\n  subtypes:\n  - subtype: x\n    data: {k: BOMB}"
    recipe_tail = "kind: RecipeResult\napiVersion: aicr.run/v1\ncomponentRefs:\n- name: x\n  overrides: {k: BOMB}"
    cycles = (
        "kind: Snapshot\nmeasurements:\n- &m {type: K8s, subtypes: [{subtype: x, data: {k: *m}}]}\n",
        "kind: Snapshot\nmetadata: &m {a: *m}\nmeasurements: [{type: K8s}]\n",
        "kind: RecipeResult\napiVersion: aicr.run/v1\ncomponentRefs:\n- &c {name: x, overrides: {k: *c}}\n",
    )
    started = time.perf_counter()
    assert isinstance(_snapshot(_bomb(8, snapshot_tail)), AicrError)
    assert isinstance(_recipe(_bomb(8, recipe_tail)), AicrError)
    for text in cycles:
        assert isinstance(_snapshot(text), AicrError)
        assert isinstance(_recipe(text), AicrError)
    assert time.perf_counter() - started < 5.0
