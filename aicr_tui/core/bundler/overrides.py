"""Bundle-time overrides: ``--set``, ``--set-json``, ``--set-file`` and ``--dynamic``.

Parsing follows upstream: ``component:path=value`` split at the first ``:`` and then the
first ``=``; every path segment must match ``[a-zA-Z0-9][a-zA-Z0-9._-]*``. A scalar
``--set`` value is typed the way upstream types it: exactly ``true``/``false`` become a
bool, a base-10 int64 an int, anything ``strconv.ParseFloat`` accepts a float, the rest a
string. ``--set-json`` carries JSON, ``--set-file`` a YAML (or JSON) file. The component
``enabled`` toggle is only accepted through scalar ``--set``.

Parsing is pure (it reads ``--set-file`` files but resolves nothing against a recipe), so the
wizard can call :func:`parse_overrides` on every keystroke.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.limits import (
    check_value_bounds,
    path_bound_violation,
    value_bound_violation,
)
from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.surrogates import (
    escaped_surrogates,
    lone_surrogate,
    refuse_lone_surrogate,
)
from aicr_tui.core.foundation.tree import validate_path

OverrideKind = Literal["set", "set-json", "set-file", "dynamic"]

FLAG_OF: dict[str, str] = {
    "set": "--set",
    "set-json": "--set-json",
    "set-file": "--set-file",
    "dynamic": "--dynamic",
}

MAX_SET_FILE_BYTES = 1_048_576

# Compiled on first use: a bundle without --set never parses a value.
_INT_RE = LazyPattern(r"^[+-]?[0-9]+$")
_FLOAT_RE = LazyPattern(
    r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$",
    re.IGNORECASE,
)
_TRUE_WORDS = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE_WORDS = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class OverrideEntry(BaseModel):
    """One bundle-time override as the user typed it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: OverrideKind
    key: str
    """The component prefix exactly as typed (a name or a registry alias)."""
    path: str
    value: Any = None
    """The typed value (``None`` for ``--dynamic``)."""
    text: str = ""
    """The raw value text (scalar ``--set``) or the file name (``--set-file``)."""

    @property
    def flag(self) -> str:
        return FLAG_OF[self.kind]

    @property
    def typed(self) -> bool:
        return self.kind in ("set-json", "set-file")

    def display(self) -> str:
        if self.kind == "dynamic":
            return f"{self.flag} {self.key}:{self.path}"
        return f"{self.flag} {self.key}:{self.path}={self.text}"


class BundleOverrides(BaseModel):
    """All bundle-time overrides, in the order given per flag."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    sets: tuple[OverrideEntry, ...] = ()
    set_json: tuple[OverrideEntry, ...] = ()
    set_file: tuple[OverrideEntry, ...] = ()
    dynamic: tuple[OverrideEntry, ...] = ()

    def all_entries(self) -> tuple[OverrideEntry, ...]:
        return self.sets + self.set_file + self.set_json + self.dynamic

    def typed_entries(self) -> tuple[OverrideEntry, ...]:
        """Typed entries in application order: files first, then JSON (JSON wins)."""
        return self.set_file + self.set_json

    @property
    def empty(self) -> bool:
        return not self.all_entries()


def type_scalar(text: str) -> Any:
    """Type a scalar ``--set`` value like upstream ``ConvertMapValue``."""
    if text == "true":
        return True
    if text == "false":
        return False
    if _INT_RE.fullmatch(text):
        try:
            number: int | None = int(text)
        except ValueError:  # past Python's digit limit, so far outside int64 as well
            number = None
        if number is not None and -(2**63) <= number < 2**63:
            return number
    if _FLOAT_RE.fullmatch(text):
        try:
            value = float(text)
        except ValueError:
            return text
        if math.isinf(value) and not text.lstrip("+-").lower().startswith("inf"):
            return text  # Go ParseFloat reports a range error for overflow
        return value
    return text


def parse_bool_go(text: str) -> bool | None:
    """``strconv.ParseBool``: the accepted spellings, or None when unparseable."""
    if text in _TRUE_WORDS:
        return True
    if text in _FALSE_WORDS:
        return False
    return None


def _split(kind: OverrideKind, entry: str) -> tuple[str, str, str | None]:
    flag = FLAG_OF[kind]
    if ":" not in entry:
        raise invalid(
            f"{flag} {_shown(entry)!r}: expected component:path"
            + ("" if kind == "dynamic" else "=value")
        )
    key, rest = entry.split(":", 1)
    value: str | None = None
    if kind == "dynamic":
        if "=" in rest:
            raise invalid(f"{flag} {_shown(entry)!r}: expected component:path without a value")
        path = rest
    else:
        if "=" not in rest:
            raise invalid(f"{flag} {_shown(entry)!r}: expected component:path=value")
        path, value = rest.split("=", 1)
    for part in (key, value or ""):
        _refuse_undecodable(flag, entry, part)
    if not key:
        raise invalid(f"{flag} {_shown(entry)!r}: the component before ':' is empty")
    if not path:
        raise invalid(f"{flag} {_shown(entry)!r}: the value path after ':' is empty")
    if kind != "dynamic" and value == "":
        raise invalid(f"{flag} {_shown(entry)!r}: the value after '=' is empty")
    if key == "deployer" and kind != "set":
        raise invalid(
            f"{flag} {_shown(entry)!r}: deployer options (argocd, argocd-helm) take plain "
            "--set deployer:<key>=<value>, never typed (--set-json/--set-file) or --dynamic values"
        )
    too_long = path_bound_violation(path)
    if too_long is not None:
        raise invalid(f"{flag} {_shown(entry)!r}: {too_long}")
    validate_path(path, flag, entry)
    return key, path, value


def parse_set(entry: str) -> OverrideEntry:
    key, path, value = _split("set", entry)
    assert value is not None
    typed = type_scalar(value)
    if isinstance(typed, float) and not math.isfinite(typed):
        # Go's ParseFloat takes NaN and Inf, but no values file can hold one: Helm and
        # kubectl refuse it (json: unsupported value), so the bundle would not install.
        raise invalid(
            f"--set {_shown(entry)!r}: {value[:40]!r} is not a finite number, and Helm cannot "
            "read a values file that holds one; give a finite number, or the text with "
            "--set-json (a JSON string)"
        )
    return OverrideEntry.model_construct(kind="set", key=key, path=path, value=typed, text=value)


def parse_set_json(entry: str) -> OverrideEntry:
    key, path, value = _split("set-json", entry)
    assert value is not None
    if path == "enabled":
        raise invalid(
            f"--set-json {_shown(entry)!r}: enabled must be set with --set, not a typed override"
        )
    try:
        # Strict JSON: NaN, Infinity and -Infinity are not JSON, and a number that
        # overflows to infinity (1e999) is refused as Go's decoder refuses it.
        parsed = json.loads(value, parse_constant=_not_json, parse_float=_finite_float)
    except _NotJson as exc:
        raise invalid(
            f"--set-json {_shown(entry)!r}: the value is not valid JSON", str(exc)
        ) from exc
    except json.JSONDecodeError as exc:
        raise invalid(
            f"--set-json {_shown(entry)!r}: the value is not valid JSON", exc.msg
        ) from exc
    except RecursionError as exc:
        raise invalid(f"--set-json {_shown(entry)!r}: the JSON value is nested too deeply") from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise invalid(
            f"--set-json {_shown(entry)!r}: the JSON value holds a number too long"
        ) from exc
    reason = value_bound_violation(parsed, allow_non_finite=False, go_keys=True)
    if reason is not None:
        raise invalid(f"--set-json {_shown(entry)!r}: the JSON value {reason}")
    # json.loads joins an escaped surrogate pair into its character; one alone stays
    refuse_lone_surrogate(parsed, f"--set-json {_shown(entry)!r}: the JSON value")
    return OverrideEntry.model_construct(
        kind="set-json", key=key, path=path, value=parsed, text=value
    )


def _refuse_undecodable(flag: str, entry: str, text: str) -> None:
    """Refuse command-line text that was not UTF-8: Python hands such bytes over as lone
    surrogates (U+DC80..U+DCFF), which no Go program (Helm, Argo CD, Flux) can hold."""
    hit = lone_surrogate(text)
    if hit is not None:
        raise invalid(
            f"{flag} '{escaped_surrogates(_shown(entry))}': holds {hit[1]}, a lone surrogate "
            "(bytes that are not UTF-8 text); values must be UTF-8"
        )


def _shown(entry: str) -> str:
    """An entry short enough for a one-line error (a hostile one may be megabytes)."""
    return entry if len(entry) <= 80 else entry[:77] + "..."


class _NotJson(ValueError):
    pass


def _not_json(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotJson(f"{text[:40]} is out of range for a 64-bit float")
    return number


def parse_set_file(entry: str, *, base_dir: Path | None = None) -> OverrideEntry:
    from aicr_tui.core.foundation.fileio import read_bounded
    from aicr_tui.core.foundation.yamlio import load_yaml_plain, to_plain

    key, path, value = _split("set-file", entry)
    assert value is not None
    if path == "enabled":
        raise invalid(
            f"--set-file {_shown(entry)!r}: enabled must be set with --set, not a typed override"
        )
    file_path = Path(value)
    if base_dir is not None and not file_path.is_absolute():
        file_path = base_dir / file_path
    if not os.path.exists(file_path):
        raise invalid(f'--set-file {_shown(entry)!r}: file "{value}" does not exist')
    data = read_bounded(
        file_path, f"--set-file {key}:{path}", cap=MAX_SET_FILE_BYTES, follow_symlinks=True
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid(f'--set-file {_shown(entry)!r}: file "{value}" is not UTF-8 text') from exc
    parsed = to_plain(
        load_yaml_plain(
            text, f'--set-file {key}:{path} file "{value}"', refuse_lone_surrogates=True
        )
    )
    # .nan/.inf in the file: Helm cannot read a values file that holds one
    check_value_bounds(
        parsed,
        f'--set-file {_shown(entry)!r}: file "{value}"',
        allow_non_finite=False,
        go_keys=True,
    )
    return OverrideEntry.model_construct(
        kind="set-file", key=key, path=path, value=parsed, text=value
    )


def parse_dynamic(entry: str) -> OverrideEntry:
    key, path, _ = _split("dynamic", entry)
    return OverrideEntry.model_construct(kind="dynamic", key=key, path=path, text="")


def parse_overrides(
    set_: list[str] | tuple[str, ...] = (),
    set_json: list[str] | tuple[str, ...] = (),
    set_file: list[str] | tuple[str, ...] = (),
    dynamic: list[str] | tuple[str, ...] = (),
    *,
    base_dir: Path | None = None,
) -> BundleOverrides:
    """Parse every flag; the first bad entry raises an AicrError naming the flag and entry."""
    return BundleOverrides.model_construct(
        sets=tuple(parse_set(e) for e in set_),
        set_json=tuple(parse_set_json(e) for e in set_json),
        set_file=tuple(parse_set_file(e, base_dir=base_dir) for e in set_file),
        dynamic=tuple(parse_dynamic(e) for e in dynamic),
    )


def parse_entry(kind: str, text: str, *, base_dir: Path | None = None) -> OverrideEntry:
    """Parse one entry of the given kind (``set``, ``set-json``, ``set-file``, ``dynamic``)."""
    if kind == "set":
        return parse_set(text)
    if kind == "set-json":
        return parse_set_json(text)
    if kind == "set-file":
        return parse_set_file(text, base_dir=base_dir)
    if kind == "dynamic":
        return parse_dynamic(text)
    raise invalid(f"unknown override kind {kind!r}; expected set, set-json, set-file or dynamic")


__all__ = [
    "AicrError",
    "BundleOverrides",
    "OverrideEntry",
    "parse_bool_go",
    "parse_entry",
    "parse_overrides",
    "type_scalar",
]
