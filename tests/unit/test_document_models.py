"""The document models are pydantic models (issue 36; issue 17 had a look-alike base): every
declaration builds, the catalog cache's ``model_validate(model_dump())`` rebuilds each
document as it was, and any input is either a model or pydantic's ValidationError."""

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
from pydantic import BaseModel, ValidationError

import aicr_tui.core
from aicr_tui.core.documents.recipe_result import (
    ComponentRef,
    Constraint,
    RecipeResult,
    render_recipe,
)
from aicr_tui.core.documents.snapshot import Snapshot, Subtype
from aicr_tui.core.foundation.yamlio import load_yaml_plain
from aicr_tui.core.recipe.catalog import default_data_dir
from aicr_tui.core.recipe.catalog_models import OverlaySpec, Registry
from tests.conftest import SAMPLES


def document_models() -> list[type[BaseModel]]:
    found = []
    for info in pkgutil.walk_packages(aicr_tui.core.__path__, "aicr_tui.core."):
        if info.name.startswith("aicr_tui.core.live"):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == info.name:
                found.append(obj)
    return found


def round_trip(model: BaseModel) -> BaseModel:
    """What the catalog cache rebuilds from a validated model's dump."""
    return type(model).model_validate(model.model_dump())


def catalog_documents() -> list[tuple[type[BaseModel], Any]]:
    root = default_data_dir()
    docs: list[tuple[type[BaseModel], Any]] = [
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


def test_every_document_model_builds() -> None:
    """Deferred builds resolve every annotation (no name only the type checker sees)."""
    models = document_models()
    assert len(models) >= 25
    for cls in models:
        cls.model_rebuild(force=True)
        assert cls.__pydantic_complete__, cls.__name__


@pytest.mark.parametrize("case", range(len(catalog_documents())))
def test_catalog_documents_validate_as_pydantic_validates_them(case: int) -> None:
    cls, doc = catalog_documents()[case]
    model = cls.model_validate(doc)
    assert round_trip(model) == model
    assert round_trip(model).model_dump() == model.model_dump()


def test_snapshots_validate_and_dump_as_pydantic_does() -> None:
    for doc in snapshot_documents():
        model = Snapshot.model_validate(doc)
        assert round_trip(model) == model
        for kwargs in ({}, {"mode": "json", "exclude_none": True}):
            assert round_trip(model).model_dump(**kwargs) == model.model_dump(**kwargs)


def test_a_recipe_validates_as_pydantic_validates_it(tmp_path: Path) -> None:
    from aicr_tui.cli import main

    target = tmp_path / "r.json"
    argv = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
    assert main(["recipe", *argv, "--format", "json", "-o", str(target)]) == 0
    doc = json.loads(target.read_text())
    result = RecipeResult.model_validate(doc)
    assert round_trip(result) == result
    assert json.loads(render_recipe(result, "json")) == doc


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


def outcome(cls: type[BaseModel], data: Any) -> tuple[str, Any]:
    try:
        return "ok", cls.model_validate(data)
    except ValidationError as exc:
        return "error", exc.errors(include_url=False, include_context=False)


MODELS = document_models()


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_document_is_a_model_or_a_validation_error(data: st.DataObject) -> None:
    """Random documents for every model: a model that its own dump rebuilds, or pydantic's
    ValidationError (which errors.malformed words), never another exception."""
    cls = data.draw(st.sampled_from(MODELS))
    keys = st.sampled_from([*cls.model_fields, "extra"])
    doc = data.draw(st.dictionaries(keys, VALUES, max_size=5))
    kind, value = outcome(cls, doc)
    if kind == "ok":
        assert round_trip(value) == value
    else:
        assert value and all(e["loc"] for e in value if e["type"] != "model_type")


def test_constructors_copies_and_frozen_instances_behave_like_pydantic() -> None:
    ref = ComponentRef(name="gpu-operator", version=25, overrides={"a": 1})
    assert ref.version == "25"  # the before-validator ran (an int)
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
