"""Structured errors with upstream codes and exit codes.

Every failure the product reports is an ``AicrError``: a code from the upstream vocabulary,
a one-line message, and an optional cause. The CLI maps the code to the exit status.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    _M = TypeVar("_M", bound=BaseModel)


class ErrorCode(StrEnum):
    INVALID_REQUEST = "INVALID_REQUEST"
    NOT_FOUND = "NOT_FOUND"
    UNAUTHORIZED = "UNAUTHORIZED"
    TIMEOUT = "TIMEOUT"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    RATE_LIMIT_EXCEEDED = "RATE_LIMIT_EXCEEDED"
    INTERNAL = "INTERNAL"
    CONFLICT = "CONFLICT"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"


EXIT_CODES: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 2,
    ErrorCode.METHOD_NOT_ALLOWED: 2,
    ErrorCode.CONFLICT: 2,
    ErrorCode.NOT_FOUND: 3,
    ErrorCode.UNAUTHORIZED: 4,
    ErrorCode.TIMEOUT: 5,
    ErrorCode.SERVICE_UNAVAILABLE: 6,
    ErrorCode.RATE_LIMIT_EXCEEDED: 7,
    ErrorCode.INTERNAL: 8,
}

EXIT_OK = 0
EXIT_INVALID = 2
EXIT_CHECKS_FAILED = 8


class AicrError(Exception):
    """An error the product reports to the user as one line: ``[CODE] message[: cause]``."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        cause: BaseException | str | None = None,
        *,
        remedy: str | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.cause = cause
        self.remedy = remedy
        super().__init__(self.render())

    def render(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.cause is not None:
            cause = self.cause.message if isinstance(self.cause, AicrError) else str(self.cause)
            if cause:
                text = f"{text}: {cause}"
        if self.remedy:
            text = f"{text} — {self.remedy}"
        return " ".join(text.split())

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.code, 1)

    def has_code(self, code: ErrorCode) -> bool:
        """True when this error or any AicrError in its cause chain carries ``code``."""
        err: BaseException | str | None = self
        while isinstance(err, AicrError):
            if err.code == code:
                return True
            err = err.cause
        return False


def invalid(
    message: str, cause: BaseException | str | None = None, *, remedy: str | None = None
) -> AicrError:
    return AicrError(ErrorCode.INVALID_REQUEST, message, cause, remedy=remedy)


def malformed(exc: ValidationError, what: str, *, at: str = "") -> AicrError:
    """The one mapping of a pydantic ValidationError to a user error: ``<what> is malformed
    at <at><location of the first error>: <its message>`` (INVALID_REQUEST, exit 2)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return invalid(f"{what} is malformed at {at}{where or 'top level'}", first.get("msg", ""))


def validate_document(cls: type[_M], data: Any, what: str, *, at: str = "") -> _M:
    """``cls.model_validate(data)``, its ValidationError worded by :func:`malformed`."""
    from pydantic import ValidationError

    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise malformed(exc, what, at=at) from exc


def not_found(message: str, cause: BaseException | str | None = None) -> AicrError:
    return AicrError(ErrorCode.NOT_FOUND, message, cause)


def timeout(message: str, cause: BaseException | str | None = None) -> AicrError:
    return AicrError(ErrorCode.TIMEOUT, message, cause)


def internal(message: str, cause: BaseException | str | None = None) -> AicrError:
    return AicrError(ErrorCode.INTERNAL, message, cause)
