"""Models rebuilt from data this program validated itself, without validating it again.

Validating with a pydantic model first builds its validator, and that build (plus the
plugin scan pydantic does before its first build) is most of what a one-shot command
would spend on the recipe catalog. The catalog cache stores ``model_dump()`` of models
that passed validation; :func:`trusted` turns such a dump back into the same models with
``model_construct``, nested models included, so a cache hit never builds a validator.

Only for data that came out of a validated model (never for a document a user gave us).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_Convert = Callable[[Any], Any]
_PLANS: dict[type[BaseModel], dict[str, _Convert | None]] = {}


def trusted(cls: type[M], data: Mapping[str, Any]) -> M:
    """``cls`` built from ``data`` (a ``model_dump()`` of a valid ``cls``) without validation."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = {
            name: _converter(info.annotation) for name, info in cls.__pydantic_fields__.items()
        }
    values: dict[str, Any] = {}
    for key, value in data.items():
        convert = plan.get(key)
        values[key] = value if convert is None or value is None else convert(value)
    return cls.model_construct(**values)


def _converter(annotation: Any) -> _Convert | None:
    """How to rebuild a dumped value of ``annotation`` (None: it is plain data already)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        model: type[BaseModel] = annotation
        return lambda value: trusted(model, value)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [_converter(a) for a in args if a is not type(None)]
        found = [c for c in inner if c is not None]
        if not found:
            return None
        if len(inner) != 1:
            raise TypeError(f"cannot rebuild a union of models: {annotation!r}")
        return found[0]
    if origin is list and args:
        item = _converter(args[0])
        return None if item is None else (lambda value: [item(v) for v in value])
    if origin is dict and len(args) == 2:
        entry = _converter(args[1])
        return None if entry is None else (lambda value: {k: entry(v) for k, v in value.items()})
    if isinstance(annotation, str | typing.ForwardRef):
        raise TypeError(f"unresolved annotation {annotation!r}")
    return None
