"""Version parsing and comparison with the upstream rules.

One leading lowercase ``v`` is dropped; the first ``-`` or ``+`` right after a digit starts
the extras (``1.28.0-gke.1337000``, ``6.8.0-1028-aws``); the core is 1–3 dot-separated
non-negative integers. Comparison stops at the lower precision of the two sides, so
``1.33`` equals ``1.33.9``; GKE build numbers break ties at full precision.
"""

from __future__ import annotations

from dataclasses import dataclass

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.memo import text_memo
from aicr_tui.core.foundation.patterns import LazyPattern

_GKE_EXTRA = LazyPattern(r"^-gke\.(.*)$")


@dataclass(frozen=True)
class Version:
    parts: tuple[int, ...]
    extras: str = ""

    @property
    def precision(self) -> int:
        return len(self.parts)

    def part(self, i: int) -> int:
        return self.parts[i] if i < len(self.parts) else 0

    @property
    def gke_build(self) -> int | None:
        m = _GKE_EXTRA.match(self.extras)
        if not m:
            return None
        text = m.group(1)
        # isdigit() alone admits non-ASCII digits ("²") that int() refuses.
        if not (text.isascii() and text.isdigit()):
            raise invalid(f'invalid gke build number in version extras "{self.extras}"')
        return _to_int(text, f'gke build number in version extras "{self.extras}"')


def _to_int(digits: str, what: str) -> int:
    """int() of ASCII digits; past Python's digit limit it raises ValueError, an input error here."""
    try:
        return int(digits)
    except ValueError as exc:
        raise invalid(f"{what[:80]} has a number too large to compare") from exc


@text_memo
def parse_version(text: str) -> Version:
    """Parse ``text`` or raise INVALID_REQUEST naming what was wrong."""
    if text == "":
        raise invalid("version string is empty")
    s = text[1:] if text.startswith("v") else text
    core, extras = s, ""
    for i, ch in enumerate(s):
        if ch in "-+" and i > 0 and s[i - 1].isdigit():
            core, extras = s[:i], s[i:]
            break
    pieces = core.split(".")
    if len(pieces) > 3:
        raise invalid(f'version "{text}" has more than three numeric parts')
    parts: list[int] = []
    for piece in pieces:
        if piece == "" or not piece.isascii() or not piece.isdigit():
            raise invalid(f'version "{text}" is not numeric major[.minor[.patch]]')
        parts.append(_to_int(piece, f'version "{text}"'))
    return Version(tuple(parts), extras)


def looks_like_version(text: str) -> bool:
    s = text[1:] if text.startswith("v") else text
    return bool(s) and any(c.isdigit() for c in s) and "." in s


def compare_versions(actual: Version, expected: Version) -> int:
    """-1, 0 or 1 for actual <, ==, > expected at the lower of the two precisions."""
    precision = min(actual.precision, expected.precision)
    for i in range(precision):
        a, e = actual.part(i), expected.part(i)
        if a != e:
            return -1 if a < e else 1
    if precision == 3:
        ga, ge = actual.gke_build, expected.gke_build
        if ga is not None and ge is not None:
            return (ga > ge) - (ga < ge)
        if ge is not None:
            return -1
        if ga is not None:
            return 1
    return 0


def versions_equal(actual: Version, expected: Version) -> bool:
    """Major/minor/patch equality; missing parts count as 0; extras ignored."""
    return all(actual.part(i) == expected.part(i) for i in range(3))
