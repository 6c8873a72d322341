"""Plain value classes declared like dataclasses, at no cost when they are defined.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and for a frozen
class ``__hash__``, ``__setattr__``, ``__delattr__``) as source text and compiles it when the
module is imported, and importing :mod:`dataclasses` pulls in :mod:`inspect` (with ``ast``,
``dis`` and ``tokenize``). A one-shot command declares about thirty such classes on its
path, and both costs together came to about a sixth of its whole run. A :class:`Record`
subclass is declared the same way (annotations, defaults, :func:`field` with
``default_factory``, ``repr=False`` or ``init=False``; ``frozen=True`` as a class keyword)
and behaves the same: positional or keyword construction with the same errors for a
missing or unknown argument, ``==`` between instances of the very same class over the
fields in order, ``hash`` of the fields for a frozen class (none for a mutable one), the
same ``repr``, ``__match_args__``, and :class:`FrozenInstanceError` (an ``AttributeError``)
on assigning to a frozen instance. Its methods are shared by every record class and read
the field list computed once per class, so nothing is compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, TypeVar, dataclass_transform

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assigning to (or deleting) a field of a frozen record."""


class _Field:
    __slots__ = ("default", "default_factory", "init", "repr")

    def __init__(
        self, default: Any, default_factory: Callable[[], Any] | None, init: bool, repr: bool
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    init: bool = True,
    repr: bool = True,  # noqa: A002 (dataclasses' own keyword)
) -> Any:
    """A field's default or per-instance factory, as ``dataclasses.field`` declares them."""
    return _Field(default, default_factory, init, repr)


def _no_key(_: object) -> tuple[()]:
    return ()


@dataclass_transform(field_specifiers=(field,))
class Record:
    """The base of the record classes (see the module docstring)."""

    __slots__ = ()

    __record_fields__: ClassVar[dict[str, _Field]] = {}
    __record_init__: ClassVar[tuple[str, ...]] = ()
    __record_repr__: ClassVar[tuple[str, ...]] = ()
    __record_key__: ClassVar[Callable[[Any], tuple[Any, ...]]] = _no_key
    __record_frozen__: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, _Field] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(base.__dict__.get("__record_fields__", {}))
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if "ClassVar" in str(annotation):
                continue
            value = cls.__dict__.get(name, _MISSING)
            if isinstance(value, _Field):
                spec = value
                if spec.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            else:
                spec = _Field(value, None, True, True)
            fields[name] = spec
        names = tuple(fields)
        cls.__record_fields__ = fields
        cls.__record_init__ = tuple(n for n in names if fields[n].init)
        cls.__record_repr__ = tuple(n for n in names if fields[n].repr)
        if len(names) > 1:
            cls.__record_key__ = attrgetter(*names)
        elif names:
            single = attrgetter(names[0])
            cls.__record_key__ = lambda obj: (single(obj),)
        else:
            cls.__record_key__ = _no_key
        cls.__record_frozen__ = frozen
        setattr(cls, "__match_args__", cls.__record_init__)  # noqa: B010 (mypy refuses the assignment)
        own = cls.__dict__
        if frozen:
            if "__hash__" not in own or own["__hash__"] is None:
                cls.__hash__ = Record.__frozen_hash__  # type: ignore[method-assign,assignment]
            if "__setattr__" not in own:
                cls.__setattr__ = Record.__frozen_setattr__  # type: ignore[method-assign,assignment]
            if "__delattr__" not in own:
                cls.__delattr__ = Record.__frozen_delattr__  # type: ignore[method-assign,assignment]
        elif "__hash__" not in own:
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared: unhashable

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = cls.__record_init__
        if len(args) > len(names):
            raise TypeError(f"{cls.__qualname__}.__init__() {_too_many(cls, len(args))}")
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {key!r}"
                )
            if key not in names:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got an unexpected keyword argument {key!r}"
                )
            given[key] = value
        state: dict[str, Any] = {}
        missing: list[str] = []
        for name, spec in cls.__record_fields__.items():
            if name in given:
                state[name] = given[name]
            elif spec.default_factory is not None:
                state[name] = spec.default_factory()
            elif spec.default is not _MISSING:
                state[name] = spec.default
            elif spec.init:
                missing.append(name)
        if missing:
            quoted = [repr(n) for n in missing]
            listed = (
                quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
            )
            plural = "argument" if len(missing) == 1 else "arguments"
            raise TypeError(
                f"{cls.__qualname__}.__init__() missing {len(missing)} required positional "
                f"{plural}: {listed}"
            )
        self.__dict__.update(state)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__record_repr__)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = type(self).__record_key__
        return bool(key(self) == key(other))

    def __frozen_hash__(self) -> int:
        return hash(type(self).__record_key__(self))

    def __frozen_setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __frozen_delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


# Bound to the class, not its name (a string bound compiles a ForwardRef: see
# core.documents.model).
R = TypeVar("R", bound=Record)


def _too_many(cls: type[Record], given: int) -> str:
    """Python's own words for too many positional arguments (``self`` counted)."""
    specs = cls.__record_fields__
    most = len(cls.__record_init__) + 1
    least = 1 + sum(
        1
        for n in cls.__record_init__
        if specs[n].default is _MISSING and specs[n].default_factory is None
    )
    takes = f"from {least} to {most}" if least < most else str(most)
    noun = "argument" if most == 1 else "arguments"
    return f"takes {takes} positional {noun} but {given + 1} were given"


def replace(obj: R, /, **changes: Any) -> R:
    """A copy of ``obj`` with ``changes`` (``dataclasses.replace``): built through
    ``__init__``, so every other init field keeps its value and an ``init=False`` field
    cannot be changed."""
    cls = type(obj)
    for name in changes:
        if name in cls.__record_fields__ and not cls.__record_fields__[name].init:
            raise ValueError(f"field {name} is declared with init=False, it cannot be specified")
    values = {n: getattr(obj, n) for n in cls.__record_init__ if n not in changes}
    return cls(**values, **changes)
