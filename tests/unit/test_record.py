"""core.foundation.record behaves as the dataclasses it replaces: each case declares the
same class both ways and compares what they do."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import pytest

from core.foundation.record import FrozenInstanceError, Record, field, replace


@dataclasses.dataclass(frozen=True)
class FrozenDC:
    name: str
    parts: tuple[int, ...]
    extra: str = ""
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    kind: ClassVar[str] = "k"


class FrozenRec(Record, frozen=True):
    name: str
    parts: tuple[int, ...]
    extra: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    kind: ClassVar[str] = "k"


@dataclasses.dataclass
class MutableDC:
    a: int
    b: dict[str, Any] = dataclasses.field(default_factory=dict)
    hidden: int = dataclasses.field(default=0, repr=False)
    late: int = dataclasses.field(init=False)


class MutableRec(Record):
    a: int
    b: dict[str, Any] = field(default_factory=dict)
    hidden: int = field(default=0, repr=False)
    late: int = field(init=False)


def _same_error(fn_dc: Any, fn_rec: Any) -> str:
    with pytest.raises(Exception) as dc_err:
        fn_dc()
    with pytest.raises(Exception) as rec_err:
        fn_rec()
    assert type(dc_err.value).__name__ == type(rec_err.value).__name__
    assert str(dc_err.value).replace("FrozenDC", "X").replace("MutableDC", "X") == str(
        rec_err.value
    ).replace("FrozenRec", "X").replace("MutableRec", "X")
    return str(rec_err.value)


def test_construction_repr_equality_and_hash_match_a_frozen_dataclass() -> None:
    for args, kwargs in [
        (("a", (1, 2)), {}),
        (("a",), {"parts": (3,), "extra": "x"}),
        ((), {"name": "n", "parts": (), "tags": ("t",)}),
        (("a", (1,), "e", ("x", "y")), {}),
    ]:
        dc, rec = FrozenDC(*args, **kwargs), FrozenRec(*args, **kwargs)
        assert repr(dc).replace("FrozenDC", "X") == repr(rec).replace("FrozenRec", "X")
        assert vars(dc) == vars(rec) and list(vars(dc)) == list(vars(rec))
        same = FrozenRec(*args, **kwargs)
        assert rec == same and not rec != same
        assert hash(rec) == hash(same) == hash(dc) and len({rec, same}) == 1
    assert FrozenRec("a", (1,)) != FrozenRec("a", (2,))
    assert FrozenRec("a", (1,)) != FrozenDC("a", (1,))  # another class is never equal
    assert MutableRec(1).b is not MutableRec(1).b  # a factory per instance
    with pytest.raises(TypeError):
        hash(FrozenRec("a", ([1],)))  # type: ignore[arg-type]  # as unhashable as the fields
    assert FrozenRec.kind == "k" and "kind" not in FrozenRec.__record_fields__
    assert FrozenRec.__match_args__ == FrozenDC.__match_args__  # type: ignore[attr-defined]


def test_a_frozen_record_refuses_assignment_like_a_frozen_dataclass() -> None:
    rec = FrozenRec("a", (1,))
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'name'"):
        rec.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del rec.extra  # type: ignore[misc]
    assert rec.name == "a"


def test_bad_arguments_raise_what_a_dataclass_raises() -> None:
    _same_error(lambda: FrozenDC(), lambda: FrozenRec())  # type: ignore[call-arg]
    _same_error(lambda: FrozenDC("a"), lambda: FrozenRec("a"))  # type: ignore[call-arg]
    _same_error(
        lambda: FrozenDC("a", (), "", [], 5),  # type: ignore[call-arg]
        lambda: FrozenRec("a", (), "", [], 5),  # type: ignore[call-arg]
    )
    _same_error(
        lambda: FrozenDC("a", (), name="b"),  # type: ignore[misc]
        lambda: FrozenRec("a", (), name="b"),  # type: ignore[misc]
    )
    _same_error(
        lambda: FrozenDC("a", (), nope=1),  # type: ignore[call-arg]
        lambda: FrozenRec("a", (), nope=1),  # type: ignore[call-arg]
    )
    _same_error(lambda: MutableDC(1, late=2), lambda: MutableRec(1, late=2))  # type: ignore[call-arg]


def test_a_mutable_record_is_unhashable_and_keeps_init_false_fields_unset() -> None:
    dc, rec = MutableDC(1), MutableRec(1)
    with pytest.raises(TypeError):
        hash(rec)
    assert not hasattr(dc, "late") and not hasattr(rec, "late")
    dc.late = rec.late = 3
    rec.a = dc.a = 2
    assert repr(dc).replace("MutableDC", "X") == repr(rec).replace("MutableRec", "X")
    assert "hidden" not in repr(rec)
    other = MutableRec(2, hidden=9)
    other.late = 3
    assert rec != other  # a repr=False field still compares
    other.hidden = 0
    assert rec == other


def test_replace_keeps_the_other_fields_and_refuses_init_false() -> None:
    rec = FrozenRec("a", (1,), "e", ("t",))
    new = replace(rec, extra="f")
    assert new == FrozenRec("a", (1,), "f", ("t",)) and rec.extra == "e"
    with pytest.raises(TypeError):
        replace(rec, nope=1)
    with pytest.raises(ValueError, match="init=False"):
        replace(MutableRec(1), late=2)


def test_fields_are_inherited_in_declaration_order() -> None:
    class Base(Record, frozen=True):
        a: int
        b: int = 2

    class Child(Base, frozen=True):
        c: int = 3

    assert (
        repr(Child(1))
        == "test_fields_are_inherited_in_declaration_order.<locals>.Child(a=1, b=2, c=3)"
    )
    assert Child(1, 5, 6) == Child(a=1, b=5, c=6) and Child(1) != Base(1)
