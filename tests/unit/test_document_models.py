"""The light document models (core.documents.model) behave as the pydantic models they
replace on the hot path: the fast path accepts only what pydantic returns unchanged, and
every other input, every error and every non-plain dump is pydantic's own (issue 17)."""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import core
from core.documents import model as lite
from core.documents.model import Model
from core.documents.recipe_result import ComponentRef, Constraint, RecipeResult
from core.documents.snapshot import Snapshot, Subtype
from core.foundation.yamlio import load_yaml_plain
from core.recipe.catalog import OverlaySpec, Registry, default_data_dir
from tests.conftest import SAMPLES


def light_models() -> list[type[Model]]:
    found = []
    for info in pkgutil.walk_packages(core.__path__, "core."):
        if info.name.startswith("core.live"):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Model) and obj is not Model and obj.__module__ == info.name:
                found.append(obj)
    return found


def by_pydantic(cls: type[Model], data: Any) -> Model:
    """What the generated pydantic model (the shadow) makes of ``data``."""
    return lite._from_shadow(cls, cls.__shadow__().model_validate(lite._to_shadow(data)))


def catalog_documents() -> list[tuple[type[Model], Any]]:
    root = default_data_dir()
    docs: list[tuple[type[Model], Any]] = [
        (Registry, load_yaml_plain((root / "registry.yaml").read_text(), "registry"))
    ]
    for path in sorted((root / "overlays").glob("*.yaml")):
        doc = load_yaml_plain(path.read_text(), path.name)
        docs.append((OverlaySpec, doc.get("spec") or {}))
    return docs


def snapshot_documents() -> list[Any]:
    out = []
    for path in sorted((SAMPLES / "snapshots").glob("*.yaml")):
        doc = load_yaml_plain(path.read_text(), path.name)
        doc["measurements"] = [m for m in doc.get("measurements") or [] if isinstance(m, dict)]
        out.append(doc)
    return out


def test_every_shadow_builds_and_the_fast_path_covers_every_document_model() -> None:
    models = light_models()
    assert len(models) >= 25
    for cls in models:
        assert cls.__shadow__().__name__ == cls.__name__
    # the plans exist (no field type the fast path cannot read) for the documents read
    for cls in (RecipeResult, ComponentRef, OverlaySpec, Registry, Snapshot, Subtype):
        assert lite._fast_plan(cls) is not None, cls.__name__


@pytest.mark.parametrize("case", range(len(catalog_documents())))
def test_catalog_documents_validate_as_pydantic_validates_them(case: int) -> None:
    cls, doc = catalog_documents()[case]
    fast = cls.model_validate(doc)
    assert lite._fast_model(cls, doc) is not lite._DEFER, "plain YAML takes the fast path"
    assert fast == by_pydantic(cls, doc)
    assert fast.model_dump() == cls.__shadow__().model_validate(doc).model_dump()


def test_snapshots_validate_and_dump_as_pydantic_does() -> None:
    for doc in snapshot_documents():
        fast = Snapshot.model_validate(doc)
        shadow = Snapshot.__shadow__().model_validate(lite._to_shadow(doc))
        assert fast == lite._from_shadow(Snapshot, shadow)
        for kwargs in ({}, {"mode": "json", "exclude_none": True}):
            assert fast.model_dump(**kwargs) == shadow.model_dump(**kwargs)


def test_a_recipe_validates_as_pydantic_validates_it(tmp_path: Path) -> None:
    from aicr_tui.cli import main

    target = tmp_path / "r.json"
    argv = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
    assert main(["recipe", *argv, "--format", "json", "-o", str(target)]) == 0
    doc = json.loads(target.read_text())
    assert RecipeResult.model_validate(doc) == by_pydantic(RecipeResult, doc)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=3),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)


def outcome(cls: type[Model], data: Any) -> tuple[str, Any]:
    try:
        return "ok", cls.model_validate(data)
    except ValidationError as exc:
        return "error", exc.errors(include_url=False, include_context=False)


MODELS = light_models()


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_fast_path_never_disagrees_with_pydantic(data: st.DataObject) -> None:
    """Random documents for every model: when the fast path answers, pydantic gives the
    same instance; validation errors are pydantic's, word for word."""
    cls = data.draw(st.sampled_from(MODELS))
    keys = st.sampled_from([*cls.__model_fields__, "extra"])
    doc = data.draw(st.dictionaries(keys, VALUES, max_size=5))
    shadow = cls.__shadow__()
    try:
        expected: tuple[str, Any] = ("ok", lite._from_shadow(cls, shadow.model_validate(doc)))
    except ValidationError as exc:
        expected = ("error", exc.errors(include_url=False, include_context=False))
    fast = lite._fast_model(cls, doc)
    if fast is not lite._DEFER:
        assert ("ok", fast) == expected
    assert outcome(cls, doc) == expected


def test_constructors_copies_and_frozen_instances_behave_like_pydantic() -> None:
    ref = ComponentRef(name="gpu-operator", version=25, overrides={"a": 1})
    assert ref.version == "25"  # the before-validator ran (through the shadow: an int)
    assert ref.overrides == {"a": 1}
    with pytest.raises(ValidationError) as exc:
        ComponentRef(name=["x"])
    assert exc.value.errors()[0]["loc"] == ("name",)
    with pytest.raises(ValidationError):
        ref.name = "other"  # frozen, as before: pydantic's frozen_instance error
    changed = ref.model_copy(update={"version": "v2"})
    assert (changed.version, ref.version, changed.overrides is ref.overrides) == ("v2", "25", True)
    deep = ref.model_copy(deep=True)
    assert deep == ref and deep.overrides is not ref.overrides
    assert copy.deepcopy(ref) == ref and hash(Constraint(name="a", value="1")) == hash(
        Constraint(name="a", value="1")
    )
    assert dict(Constraint(name="a", value="1")) == {
        "name": "a", "value": "1", "severity": "", "remediation": "", "unit": ""
    }  # fmt: skip
    assert repr(Constraint(name="a", value="1")).startswith("Constraint(name='a', value='1'")


def test_extra_fields_are_kept_where_the_model_allows_them() -> None:
    sub = Subtype.model_validate({"subtype": "server", "data": {"v": 1}, "note": "x"})
    assert sub.model_extra == {"note": "x"} and sub.note == "x"
    assert sub.model_dump() == {"subtype": "server", "data": {"v": 1}, "context": None,
                                "items": None, "note": "x"}  # fmt: skip
    with pytest.raises(ValidationError):
        Constraint.model_validate({"name": "a", "value": "1", "unknown": 2})  # extra="forbid"


def test_field_annotations_evaluate_as_get_type_hints_does() -> None:
    """``_hints`` evaluates each annotation text once per module (a plain name by lookup):
    every light model's field types are still what ``typing.get_type_hints`` gives."""
    import typing

    models = light_models()
    assert len(models) >= 20
    for cls in models:
        hints = typing.get_type_hints(cls, include_extras=True)
        want = {name: hints[name] for name in cls.__model_fields__}
        assert lite._hints(cls) == want, cls.__qualname__
        assert lite._hints(cls) == want  # again, from the memo
