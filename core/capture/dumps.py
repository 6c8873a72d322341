"""What the provider-dump readers share: the one-line decode failure that names the file and
the command whose output was expected, and the turning of a decode error into it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from core.foundation.errors import AicrError, invalid
from core.foundation.yamlio import GoDecodeError, load_json_pairs


def decode_failure(description: str, source: str, expected: str, reason: str) -> AicrError:
    """``failed to decode <description> file "<source>": expected <expected>`` (and why)."""
    return invalid(f'failed to decode {description} file "{source}": expected {expected}', reason)


@contextmanager
def decoding(failure: Callable[[str], Exception]) -> Iterator[None]:
    """Raise ``failure(reason)`` for a GoDecodeError inside the block (chained to it)."""
    try:
        yield
    except GoDecodeError as exc:
        raise failure(str(exc)) from exc


def decode_json(raw: bytes, failure: Callable[[str], Exception]) -> Any:
    """The dump's JSON as :func:`load_json_pairs` reads it (Go's decoder rules), or
    ``failure(reason)`` raised."""
    with decoding(failure):
        return load_json_pairs(raw)
