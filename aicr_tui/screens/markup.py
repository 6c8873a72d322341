"""Document-derived text as data in Rich and Textual markup.

A pool name, add-on name, component name, message or recorded log line is never markup:
``[/]`` would raise ``MarkupError`` and ``[reverse]SPOOF[/reverse]`` or ``[@click=...]``
would style the screen or bind an action. ``escape_markup`` first makes the text
terminal-safe (``aicr_tui.core.foundation.textsafe``: escape sequences and control characters
removed) and then escapes it for both markup parsers the wizard meets: Rich's
(``Text.from_markup``, used by ``rich.table`` and ``console.print``) and Textual's
(``Content.from_markup``, used by widgets with ``markup=True``, ``notify`` and tooltips).

Textual's own ``escape`` only escapes ``[`` before ``a-z # / @``, but Textual's parser also
reads ``[$variable]``, ``[Bold]`` and ``[ bold]`` as tags, so every ``[`` becomes ``\\[``,
which both parsers read as a literal bracket. The two parsers disagree about backslashes
(Rich halves a run of them before a bracket, Textual keeps them and treats only the last
one as the escape), so no escaping of a backslash means the same to both; instead a
backslash run that stands right before a ``[`` or at the very end (where the caller's own
markup would follow) gets an invisible WORD JOINER (U+2060) after it. Both parsers then
show the backslashes exactly as they were, and the caller's markup after the text works.
Rich also turns ``:name:`` into an emoji; a WORD JOINER after the first colon of every such
candidate keeps it literal (Textual markup has no emoji codes, the joiner is invisible).
"""

from __future__ import annotations

import re

from aicr_tui.core.foundation.textsafe import safe_text

__all__ = ["WORD_JOINER", "escape_markup"]

WORD_JOINER = "\u2060"
_BACKSLASHES_BEFORE_BRACKET_OR_END = re.compile(r"(\\+)(?=\[|\Z)")
_EMOJI_CODE_START = re.compile(r":(?=[^\s:]+:)")


def escape_markup(value: object, *, multiline: bool = False) -> str:
    """``value`` (``str()`` of a non-string) as literal text inside Rich/Textual markup.

    ``multiline=True`` keeps line breaks and tabs (a log pane, a dialog body); the default
    makes one line (a table cell, a title, a status line).
    """
    text = safe_text(value if isinstance(value, str) else str(value), multiline=multiline)
    if ":" in text:
        text = _EMOJI_CODE_START.sub(":" + WORD_JOINER, text)
    if "[" not in text and not text.endswith("\\"):
        return text
    text = _BACKSLASHES_BEFORE_BRACKET_OR_END.sub(lambda m: m.group(1) + WORD_JOINER, text)
    return text.replace("[", "\\[")
