"""Document models that cost nothing until something validates with them.

A one-shot ``aicr-tui recipe`` builds every object it needs from data it made or
validated itself (the catalog cache, the engine), so it never needs a validator; yet
importing pydantic's ``BaseModel`` and declaring two dozen model classes with it cost
more than the whole third-party floor of the command. :class:`Model` keeps the same
declarations (annotations, ``Field(default_factory=…)``, ``model_config``,
``@field_validator(…, mode="before")``) and the pydantic calls the code base uses, but
holds values as a plain object:

- ``model_construct``, ``model_copy``, attribute access, ``==``, ``hash`` (frozen),
  ``repr``, iteration and ``model_extra`` are implemented here, without pydantic;
- validating (``Model(**data)``, ``Model.model_validate``), ``model_dump`` and assigning
  to a frozen instance go to a *shadow*: a real pydantic model generated, on first use,
  from the same declaration (same fields, types, defaults, validators and config, nested
  models replaced by their shadows). Its errors are pydantic's own ``ValidationError``,
  word for word, and its result comes back as this class.

So every document is validated exactly as before; only code that never validates stops
paying for the validator machinery.
"""

from __future__ import annotations

import copy
import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar, dataclass_transform

from core.foundation.errors import malformed

_MISSING: Any = object()


class _FieldSpec:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None) -> None:
        self.default = default
        self.default_factory = default_factory


def Field(default: Any = _MISSING, *, default_factory: Callable[[], Any] | None = None) -> Any:  # noqa: N802
    """A field's default, or a factory called for each instance (pydantic's ``Field``)."""
    return _FieldSpec(default, default_factory)


class _Validator:
    __slots__ = ("fields", "func", "mode")

    def __init__(self, fields: tuple[str, ...], mode: str, func: Any) -> None:
        self.fields = fields
        self.mode = mode
        self.func = func


def field_validator(*fields: str, mode: str = "after") -> Callable[[Any], Any]:
    """Declare a field validator (pydantic's ``field_validator``; run by the shadow)."""

    def wrap(func: Any) -> Any:
        return _Validator(fields, mode, func)

    return wrap


def ConfigDict(**config: Any) -> dict[str, Any]:  # noqa: N802
    return dict(config)


def _instance(cls: type[M], state: dict[str, Any], given: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``state``; with ``extra="allow"``, ``given``'s other
    keys are its extra fields."""
    self = cls.__new__(cls)
    extra = None
    if cls.model_config.get("extra") == "allow":
        fields = cls.__model_fields__
        extra = {k: v for k, v in given.items() if k not in fields}
    object.__setattr__(self, "__dict__", state)
    object.__setattr__(self, "__model_extra__", extra)
    return self


def _set_default(state: dict[str, Any], name: str, spec: _FieldSpec) -> None:
    """A field left out takes its default (a factory's value, or a copy of a mutable one)."""
    if spec.default_factory is not None:
        factory = spec.default_factory
        if isinstance(factory, type) and issubclass(factory, Model):
            state[name] = factory.model_construct()  # its defaults: nothing to check
        else:
            state[name] = factory()
    elif spec.default is not _MISSING:
        state[name] = _copy_default(spec.default)


def _copy_default(value: Any) -> Any:
    # pydantic copies a mutable default for each instance (smart_deepcopy)
    if isinstance(value, list | dict | set):
        return copy.deepcopy(value)
    return value


@dataclass_transform(kw_only_default=True, field_specifiers=(Field,))
class Model:
    """The base of the document models (see the module docstring)."""

    __slots__ = ("__dict__", "__model_extra__")

    model_config: ClassVar[dict[str, Any]] = {}
    __model_fields__: ClassVar[dict[str, _FieldSpec]] = {}
    __model_validators__: ClassVar[tuple[_Validator, ...]] = ()
    __model_shadow__: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, _FieldSpec] = {}
        validators: list[_Validator] = []
        for base in reversed(cls.__mro__[1:]):
            fields.update(base.__dict__.get("__model_fields__", {}))
            validators.extend(base.__dict__.get("__model_validators__", ()))
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if name.startswith("_") or "ClassVar" in str(annotation):
                continue
            value = cls.__dict__.get(name, _MISSING)
            fields[name] = value if isinstance(value, _FieldSpec) else _FieldSpec(value, None)
            if name in cls.__dict__:
                delattr(cls, name)
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, _Validator):
                validators.append(value)
                setattr(cls, name, value.func)
        cls.__model_fields__ = fields
        cls.__model_validators__ = tuple(validators)
        cls.__model_shadow__ = None
        if cls.model_config.get("frozen"):
            cls.__hash__ = Model.__frozen_hash__  # type: ignore[method-assign,assignment]

    # ------------------------------------------------------------------ no validation
    @classmethod
    def model_construct(cls: type[M], **values: Any) -> M:
        """An instance from values already valid (pydantic's ``model_construct``)."""
        state: dict[str, Any] = {}
        for name, spec in cls.__model_fields__.items():
            if name in values:
                state[name] = values[name]
            else:
                _set_default(state, name, spec)
        return _instance(cls, state, values)

    def model_copy(self: M, *, update: dict[str, Any] | None = None, deep: bool = False) -> M:
        new = type(self).__new__(type(self))
        state = copy.deepcopy(self.__dict__) if deep else dict(self.__dict__)
        extra = self.__model_extra__
        if extra is not None:
            extra = copy.deepcopy(extra) if deep else dict(extra)
        for key, value in (update or {}).items():
            if key in type(self).__model_fields__ or extra is None:
                state[key] = value
            else:
                extra[key] = value
        object.__setattr__(new, "__dict__", state)
        object.__setattr__(new, "__model_extra__", extra)
        return new

    @property
    def model_extra(self) -> dict[str, Any] | None:
        extra: dict[str, Any] | None = self.__model_extra__
        return extra

    def __copy__(self: M) -> M:
        return self.model_copy()

    def __deepcopy__(self: M, memo: dict[int, Any]) -> M:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        object.__setattr__(new, "__dict__", copy.deepcopy(self.__dict__, memo))
        object.__setattr__(new, "__model_extra__", copy.deepcopy(self.__model_extra__, memo))
        return new

    def __getattr__(self, name: str) -> Any:
        extra = object.__getattribute__(self, "__model_extra__")
        if extra and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if cls.model_config.get("frozen"):
            setattr(self._as_shadow(), name, value)  # raises pydantic's frozen_instance error
        if name in cls.__model_fields__:
            self.__dict__[name] = value
        elif self.__model_extra__ is not None:
            self.__model_extra__[name] = value
        else:
            raise ValueError(f'"{cls.__name__}" object has no field "{name}"')

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self.__model_extra__ == other.__model_extra__
        )

    def __frozen_hash__(self) -> int:
        return hash(type(self)) + hash(tuple(self.__dict__.values()))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        yield from self.__dict__.items()
        if self.__model_extra__:
            yield from self.__model_extra__.items()

    def __repr_str(self, join: str) -> str:
        return join.join(f"{k}={v!r}" for k, v in self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__repr_str(', ')})"

    def __str__(self) -> str:
        return self.__repr_str(" ")

    # ------------------------------------------------------------ through the shadow
    def __init__(self, **data: Any) -> None:
        cls = type(self)
        done = _fast_model(cls, data)
        if done is _DEFER:
            valid = cls.__shadow__()(**{k: _to_shadow(v) for k, v in data.items()})
            done = _from_shadow(cls, valid)
        object.__setattr__(self, "__dict__", done.__dict__)
        object.__setattr__(self, "__model_extra__", done.__model_extra__)

    @classmethod
    def model_validate(cls: type[M], obj: Any) -> M:
        """Validate ``obj`` as pydantic would (its ``ValidationError`` on failure)."""
        done = _fast_model(cls, obj)
        if done is not _DEFER:
            return done  # type: ignore[no-any-return]
        return _from_shadow(cls, cls.__shadow__().model_validate(_to_shadow(obj)))

    def model_dump(
        self, *, mode: str = "python", exclude_none: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        """pydantic's ``model_dump``: plain documents are dumped here (fields in order, then
        extras; ``mode="json"`` makes tuples lists); anything else by the shadow."""
        if not kwargs and mode in ("python", "json"):
            try:
                return _dump_model(self, mode == "json", exclude_none)
            except _NotPlain:
                pass
        dumped: dict[str, Any] = self._as_shadow().model_dump(
            mode=mode, exclude_none=exclude_none, **kwargs
        )
        return dumped

    def _as_shadow(self) -> Any:
        state = {k: _to_shadow(v) for k, v in self.__dict__.items()}
        return type(self).__shadow__().model_construct(**state, **(self.__model_extra__ or {}))

    @classmethod
    def __shadow__(cls) -> Any:
        shadow = cls.__dict__.get("__model_shadow__")
        if shadow is None:
            shadow = _build_shadow(cls)
            cls.__model_shadow__ = shadow
        return shadow


# Bound to the class itself, not its name: a string bound makes a typing.ForwardRef, which
# calls compile(), and the first compile() in a process builds every AST node type (about
# 10M instructions, 3% of a one-shot command).
M = TypeVar("M", bound=Model)


class _NotPlain(Exception):
    """A value :func:`_dump_model` leaves to pydantic's serializer."""


_PLAIN_LEAVES = (str, int, bool, type(None))


def _dump_model(model: Model, json_mode: bool, exclude_none: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in model:
        if exclude_none and value is None:
            continue
        out[key] = _dump_value(value, json_mode, exclude_none)
    return out


def _dump_value(value: Any, json_mode: bool, exclude_none: bool) -> Any:
    kind = type(value)
    if kind in _PLAIN_LEAVES:
        return value
    if kind is float:
        if json_mode and (value != value or value in (float("inf"), float("-inf"))):
            raise _NotPlain  # pydantic's inf/nan setting decides
        return value
    if kind is dict:
        if json_mode and any(type(k) is not str for k in value):
            raise _NotPlain
        return {k: _dump_value(v, json_mode, exclude_none) for k, v in value.items()}
    if kind is list:
        return [_dump_value(v, json_mode, exclude_none) for v in value]
    if kind is tuple:
        items = [_dump_value(v, json_mode, exclude_none) for v in value]
        return items if json_mode else tuple(items)
    if isinstance(value, Model):
        return _dump_model(value, json_mode, exclude_none)
    raise _NotPlain


# -------------------------------------------------------------------------- fast path
# Validation of the inputs whose pydantic result is certain: every value already of the
# exact type its field declares (str, int, float, bool, None, Any, list, tuple, dict with
# str keys, nested models from dicts), after the field's "before" validator. pydantic
# returns such values unchanged (containers copied), so the result is the same object
# graph; anything else (a coercion, a missing required field, a forbidden extra key, a
# validator that raises) is _DEFER, and the shadow decides, with pydantic's own error.
_DEFER: Any = object()
_Check = Callable[[Any], Any]
_FAST: dict[type[Model], dict[str, tuple[_Check, tuple[Any, ...]]] | None] = {}
_CONFIG_KEYS = {"extra", "frozen", "defer_build", "populate_by_name"}
_SCALARS = {str: str, int: int, float: float, bool: bool, type(None): type(None)}


def _fast_model(cls: type[Model], value: Any) -> Any:
    if isinstance(value, cls):
        return value  # revalidate_instances="never": the instance itself
    if type(value) is not dict:
        return _DEFER
    plan = _fast_plan(cls)
    if plan is None:
        return _DEFER
    state: dict[str, Any] = {}
    for name, (check, befores) in plan.items():
        if name in value:
            item = value[name]
            try:
                for before in befores:
                    item = before(cls, item)
            except Exception:
                return _DEFER
            item = check(item)
            if item is _DEFER:
                return _DEFER
            state[name] = item
        else:
            spec = cls.__model_fields__[name]
            if spec.default_factory is not None:
                factory = spec.default_factory
                if isinstance(factory, type) and issubclass(factory, Model):
                    state[name] = factory.model_construct()
                else:
                    state[name] = factory()
            elif spec.default is _MISSING:
                return _DEFER  # required: pydantic words the error
            else:
                state[name] = _copy_default(spec.default)
    mode = cls.model_config.get("extra", "ignore")
    extra: dict[str, Any] | None = {} if mode == "allow" else None
    for key in value:
        if key in plan:
            continue
        if type(key) is not str or mode == "forbid":
            return _DEFER
        if extra is not None:
            extra[key] = value[key]
    self = cls.__new__(cls)
    object.__setattr__(self, "__dict__", state)
    object.__setattr__(self, "__model_extra__", extra)
    return self


def _fast_plan(cls: type[Model]) -> dict[str, tuple[_Check, tuple[Any, ...]]] | None:
    if cls in _FAST:
        return _FAST[cls]
    plan: dict[str, tuple[_Check, tuple[Any, ...]]] | None = {}
    befores: dict[str, list[Any]] = {}
    for v in cls.__model_validators__:
        func = getattr(v.func, "__func__", None)
        if v.mode != "before" or func is None or func.__code__.co_argcount != 2:
            plan = None  # after/wrap/plain validators, or ones taking info: the shadow
            break
        for name in v.fields:
            befores.setdefault(name, []).append(func)
    if set(cls.model_config) - _CONFIG_KEYS or any(len(b) > 1 for b in befores.values()):
        plan = None
    if plan is not None:
        hints = _hints(cls)
        for name in cls.__model_fields__:
            check = _fast_check(hints[name])
            if check is None:
                plan = None
                break
            plan[name] = (check, tuple(befores.get(name, ())))
    _FAST[cls] = plan
    return plan


def _fast_check(annotation: Any) -> _Check | None:
    """A check returning the validated value or _DEFER; None when not supported here."""
    if annotation is Any:
        return lambda value: value
    if annotation in _SCALARS:
        exact = _SCALARS[annotation]
        return lambda value: value if type(value) is exact else _DEFER
    if isinstance(annotation, type) and issubclass(annotation, Model):
        model: type[Model] = annotation
        return lambda value: _fast_model(model, value)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal and all(type(a) is str for a in args):
        choices = frozenset(args)
        return lambda value: value if type(value) is str and value in choices else _DEFER
    if origin in (typing.Union, types.UnionType):
        if all(a in _SCALARS for a in args):
            exacts = {_SCALARS[a] for a in args}
            return lambda value: value if type(value) in exacts else _DEFER
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(rest) == len(args):
            return None
        inner = _fast_check(rest[0])
        if inner is None:
            return None
        return lambda value: None if value is None else inner(value)
    if origin in (list, tuple) and args:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            return None
        item = _fast_check(args[0])
        if item is None:
            return None

        def sequence(value: Any) -> Any:
            if type(value) is not origin:
                return _DEFER
            out = [item(v) for v in value]
            if any(v is _DEFER for v in out):
                return _DEFER
            return out if origin is list else tuple(out)

        return sequence
    if origin is dict and len(args) == 2 and args[0] is str:
        entry = _fast_check(args[1])
        if entry is None:
            return None

        def mapping(value: Any) -> Any:
            if type(value) is not dict or any(type(k) is not str for k in value):
                return _DEFER
            out = {k: entry(v) for k, v in value.items()}
            if any(v is _DEFER for v in out.values()):
                return _DEFER
            return out

        return mapping
    return None


# ---------------------------------------------------------------------------- shadows
def _to_shadow(value: Any) -> Any:
    """Nested models in ``value`` as shadow instances (containers rebuilt, rest as is)."""
    if isinstance(value, Model):
        return value._as_shadow()
    if type(value) is list:
        return [_to_shadow(v) for v in value] if any(_holds_model(v) for v in value) else value
    if type(value) is dict:
        if any(_holds_model(v) for v in value.values()):
            return {k: _to_shadow(v) for k, v in value.items()}
        return value
    if type(value) is tuple:
        return tuple(_to_shadow(v) for v in value)
    return value


def _holds_model(value: Any) -> bool:
    if isinstance(value, Model):
        return True
    if type(value) in (list, tuple):
        return any(_holds_model(v) for v in value)
    if type(value) is dict:
        return any(_holds_model(v) for v in value.values())
    return False


def _from_shadow(cls: type[M], shadow: Any) -> M:
    """The validated shadow instance as ``cls``, nested shadows converted by the plan."""
    plan = _plan(cls)
    state = {}
    for name, value in shadow.__dict__.items():
        convert = plan.get(name)
        state[name] = value if convert is None or value is None else convert(value)
    self = cls.__new__(cls)
    object.__setattr__(self, "__dict__", state)
    extra = shadow.__pydantic_extra__
    object.__setattr__(self, "__model_extra__", None if extra is None else dict(extra))
    return self


def trusted_model(cls: type[M], data: dict[str, Any]) -> M:
    """``cls`` from a ``model_dump()`` of a valid ``cls``, nested models rebuilt, without
    validation (see ``core.documents.trusted``)."""
    plan = _plan(cls, dumped=True)  # every field, in declaration order
    state: dict[str, Any] = {}
    fields = cls.__model_fields__
    for name, convert in plan.items():
        if name in data:
            value = data[name]
            state[name] = value if convert is None or value is None else convert(value)
        else:
            _set_default(state, name, fields[name])
    return _instance(cls, state, data)


_PLANS: dict[tuple[type[Model], bool], dict[str, Callable[[Any], Any] | None]] = {}


def _hints(cls: type[Model]) -> dict[str, Any]:
    """The fields' annotations, evaluated where each was written (as get_type_hints does,
    without evaluating Model's own ClassVar declarations)."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is Model or not issubclass(klass, Model):
            continue
        module = klass.__module__
        for name, annotation in klass.__dict__.get("__annotations__", {}).items():
            if name in cls.__model_fields__:
                hints[name] = (
                    _evaluated(annotation, module) if isinstance(annotation, str) else annotation
                )
    return hints


_EVALUATED: dict[tuple[str, str], Any] = {}


def _evaluated(annotation: str, module: str) -> Any:
    """``annotation`` evaluated in ``module``'s namespace, once per module and text: the
    same few texts (``str``, ``list[str]``, ``X | None``) annotate most fields, and each
    ``eval`` compiles its text again. A plain name is looked up as ``eval`` would."""
    key = (module, annotation)
    if key in _EVALUATED:
        return _EVALUATED[key]
    namespace = vars(sys.modules[module])
    if annotation.isidentifier() and annotation in namespace:
        value = namespace[annotation]
    else:
        value = eval(annotation, namespace)  # noqa: S307 (our own source's annotations)
    _EVALUATED[key] = value
    return value


def _plan(cls: type[Model], *, dumped: bool = False) -> dict[str, Callable[[Any], Any] | None]:
    key = (cls, dumped)
    plan = _PLANS.get(key)
    if plan is None:
        hints = _hints(cls)
        plan = _PLANS[key] = {
            name: _converter(hints[name], dumped) for name in cls.__model_fields__
        }
    return plan


def _converter(annotation: Any, dumped: bool) -> Callable[[Any], Any] | None:
    if isinstance(annotation, type) and issubclass(annotation, Model):
        model: type[Model] = annotation
        if dumped:
            return lambda value: trusted_model(model, value)
        return lambda value: _from_shadow(model, value)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        found = [c for c in (_converter(a, dumped) for a in args if a is not type(None)) if c]
        if len(found) > 1:
            raise TypeError(f"cannot convert a union of models: {annotation!r}")
        return found[0] if found else None
    if origin is list and args:
        item = _converter(args[0], dumped)
        return None if item is None else (lambda value: [item(v) for v in value])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        part = _converter(args[0], dumped)
        return None if part is None else (lambda value: tuple(part(v) for v in value))
    if origin is dict and len(args) == 2:
        entry = _converter(args[1], dumped)
        return None if entry is None else (lambda value: {k: entry(v) for k, v in value.items()})
    return None


def _swap(annotation: Any) -> Any:
    """``annotation`` with every Model class replaced by its shadow."""
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return annotation.__shadow__()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        swapped = [_swap(a) for a in args]
        result = swapped[0]
        for arg in swapped[1:]:
            result = result | arg
        return result
    if origin is list and args:
        return list[_swap(args[0])]  # type: ignore[misc]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple[_swap(args[0]), ...]  # type: ignore[misc]
    if origin is dict and len(args) == 2:
        return dict[_swap(args[0]), _swap(args[1])]  # type: ignore[misc]
    return annotation


def _build_shadow(cls: type[Model]) -> Any:
    import pydantic

    hints = _hints(cls)
    fields: dict[str, Any] = {}
    for name, spec in cls.__model_fields__.items():
        annotation = _swap(hints[name])
        if spec.default_factory is not None:
            factory = spec.default_factory
            if isinstance(factory, type) and issubclass(factory, Model):
                factory = factory.__shadow__()
            fields[name] = (annotation, pydantic.Field(default_factory=factory))
        elif spec.default is _MISSING:
            fields[name] = (annotation, ...)
        else:
            fields[name] = (annotation, spec.default)
    validators = {
        f"validator_{i}": pydantic.field_validator(*v.fields, mode=v.mode)(v.func)  # type: ignore[call-overload]
        for i, v in enumerate(cls.__model_validators__)
    }
    config = pydantic.ConfigDict(**cls.model_config)  # type: ignore[typeddict-item]
    return pydantic.create_model(
        cls.__name__,
        __config__=config,
        __validators__=validators,
        __module__=cls.__module__,
        **fields,
    )


if typing.TYPE_CHECKING:
    from pydantic import ValidationError


def validate_document(cls: type[M], data: Any, what: str, *, at: str = "") -> M:
    """``cls.model_validate(data)``; pydantic's error becomes the one line
    :func:`~core.foundation.errors.malformed` words (naming ``what`` and the location)."""
    try:
        return cls.model_validate(data)
    except ValueError as exc:
        error = as_validation_error(exc)
        if error is None:
            raise
        raise malformed(error, what, at=at) from exc


def as_validation_error(exc: BaseException) -> ValidationError | None:
    """``exc`` when it is pydantic's ValidationError (only a shadow raises one, so pydantic
    is loaded by then), else None: callers catch ``ValueError`` (its base) without
    importing pydantic up front."""
    core = sys.modules.get("pydantic_core")
    if core is not None and isinstance(exc, core.ValidationError):
        return typing.cast("ValidationError", exc)
    return None
