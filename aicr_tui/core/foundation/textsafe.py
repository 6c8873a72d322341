"""Text from documents, made safe to show on a terminal.

Captures, recipes and recordings are files people pass around, so any string they carry may
hold terminal escape sequences (an OSC 0/2 title change, an OSC 8 hyperlink, a CSI that moves
the cursor or clears the screen, a DCS) or bare control characters (BEL, NUL, backspace, a
lone carriage return that overwrites what came before). A terminal acts on those bytes; we
show them as data, so they are removed before the text reaches Rich, Textual or stdout.

The policy, in order:

1. Escape sequences (ECMA-48) are removed whole, introducer to final byte or terminator:
   CSI (``ESC [`` or C1 ``0x9b``) with its parameters; OSC, DCS, SOS, PM and APC strings
   (``ESC ]  ESC P  ESC X  ESC ^  ESC _`` or C1 ``0x9d 0x90 0x98 0x9e 0x9f``) through BEL,
   ``ESC \\`` or C1 ST ``0x9c``; every other ``ESC`` + intermediates + final byte (``ESC c``
   resets the terminal). A string sequence that never terminates loses only its
   introducer, so the rest stays visible as plain text instead of vanishing.
2. Line breaks: in a multi-line context ``\\r\\n``, lone ``\\r``, ``\\v``, ``\\f``, NEL
   (U+0085) and U+2028/U+2029 become ``\\n`` and a tab stays a tab; in a single-line context
   (a table cell, a status line, one log line) every line break and tab becomes one space,
   so a value cannot forge a second line.
3. Every other C0 control (U+0000-U+001F), DEL (U+007F) and C1 control (U+0080-U+009F) is
   removed, and so are the bidirectional embedding, override and isolate controls
   (U+202A-U+202E, U+2066-U+2069) that reorder what the reader sees ("Trojan Source").
4. A lone surrogate (which cannot be encoded for a terminal) becomes U+FFFD.

Machine-readable output (JSON, a YAML double-quoted scalar) must keep the value exact, so
there the same characters are *escaped* instead of removed: :func:`escape_controls` writes
each one as a ``\\u`` escape of four hex digits, which a JSON or YAML reader decodes back
to the same character.

Printable text, including every non-ASCII letter and emoji, is left exactly as it was.
"""

from __future__ import annotations

from aicr_tui.core.foundation.patterns import LazyPattern

__all__ = ["escape_controls", "safe_line", "safe_text"]

# String sequences first (so the body of an OSC is removed with it), then CSI, then any
# other ESC sequence. The string body stops at BEL, ESC, ST or another C1 introducer; if
# what stops it is not a terminator the string match fails and the ESC-other branch (or
# the control pass) removes only the introducer. Stopping at introducers keeps the scan
# linear: a run of unterminated introducers never rescans the rest of the text.
_ESCAPE_SEQUENCE = LazyPattern(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x90\x98\x9b-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
_LINE_BREAK = LazyPattern(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")
_SINGLE_LINE_SPACE = LazyPattern(r"\r\n|[\t\r\n\v\f\x85\u2028\u2029]")
_CONTROL = LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_SINGLE_LINE = LazyPattern(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")


def safe_text(text: str, *, multiline: bool = False) -> str:
    """``text`` with escape sequences and control characters removed (policy above).

    ``multiline=True`` keeps line structure (``\\n``) and tabs; the default makes one line.
    """
    if text.isprintable():
        # Fast path: str.isprintable is False for every control, line break, tab, bidi
        # control and surrogate this module touches, so there is nothing to remove.
        return text
    text = _ESCAPE_SEQUENCE.sub("", text)
    if multiline:
        text = _LINE_BREAK.sub("\n", text)
        text = _CONTROL.sub("", text)
    else:
        text = _SINGLE_LINE_SPACE.sub(" ", text)
        text = _CONTROL_SINGLE_LINE.sub("", text)
    return _SURROGATE.sub("\ufffd", text)


def safe_line(value: object) -> str:
    """One terminal-safe line for any value (``str(value)`` for non-strings)."""
    return safe_text(value if isinstance(value, str) else str(value))


# What a terminal acts on (every character safe_text removes or turns into a break) except
# tab and newline, which JSON and YAML writers only emit as structure or already escaped.
_TERMINAL_ACTIVE = LazyPattern(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def escape_controls(text: str) -> str:
    """``text`` (JSON, or YAML whose strings holding such characters are double-quoted) with
    every terminal-active character written as a ``\\u`` escape of four hex digits: the data
    decodes back exactly, and no raw control reaches a terminal. Only valid where each such
    character sits inside a JSON string or a YAML double-quoted scalar."""
    if text.isascii() and text.replace("\n", "").isprintable():
        return text  # the common case (no compile of the pattern): nothing to escape
    return _TERMINAL_ACTIVE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
