"""YAML and JSON text in and out, with ruamel.yaml.

Loading uses the round-trip loader so comments and key order in recipes and values
survive; dumping is block style, deterministic, and never emits anchors.
"""

from __future__ import annotations

import io
import json
import re
import threading
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.limits import value_bound_violation
from aicr_tui.core.foundation.patterns import LazyPattern
from aicr_tui.core.foundation.surrogates import joined_surrogate_pairs, refuse_lone_surrogate
from aicr_tui.core.foundation.textsafe import escape_controls


def _yaml(typ: str = "rt", *, pure: bool = True) -> YAML:
    # pure=True unless asked: with ruamel.yaml.clib installed, YAML(typ="safe") would
    # otherwise switch to libyaml's YAML 1.1 scanner (see safe_documents).
    y = YAML(typ=typ, pure=pure)
    y.default_flow_style = False
    y.allow_duplicate_keys = False
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    y.representer.ignore_aliases = lambda *_: True
    return y


class _TextTimestampConstructor(SafeConstructor):
    """Keeps YAML timestamps as the text written: snapshot metadata, readings and values
    are strings to every consumer (Go decodes them into strings), and a datetime would
    come back reformatted."""


_TextTimestampConstructor.add_constructor(
    "tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str
)


class _FixedVersionResolver(VersionedResolver):
    """ruamel's resolver with its rule table looked up once per instance, for instances
    whose YAML version cannot change: the C reader's loaders and :data:`_STR_RESOLVER`.

    ``VersionedResolver.resolve`` asks for the table (``versioned_resolver``) twice per
    scalar, and each ask looks for a scanner's ``%YAML`` version through attributes that
    neither the C parser's loader nor a resolver on its own has (caught AttributeErrors)
    before settling on the default 1.2: about a quarter of reading a recipe. Those
    attributes never appear (texts with a ``%YAML`` directive never reach the C parser:
    see safe_documents), so the first answer is every answer; each load builds a new
    loader."""

    @property
    def versioned_resolver(self) -> Any:
        table = self.__dict__.get("_aicr_rules")
        if table is None:
            table = self._aicr_rules = super().versioned_resolver
        return table


# A ruamel YAML object keeps its reader, scanner and parser state on itself, so two threads
# sharing one corrupt each other's parse (spurious "not valid YAML" errors in wizard workers
# and concurrent loads): each thread gets its own readers.
_THREAD = threading.local()


def _reader(typ: str) -> YAML:
    """This thread's reader: ``rt`` (round trip), ``safe`` (pure-Python safe loader),
    ``csafe`` (the same loader over libyaml's C parser, when installed) or ``scan``."""
    y: YAML | None = getattr(_THREAD, typ, None)
    if y is None:
        y = _yaml("safe" if typ in ("scan", "csafe") else typ, pure=typ != "csafe")
        if typ in ("safe", "csafe"):
            y.Constructor = _TextTimestampConstructor
        if typ == "csafe":
            y.Resolver = _FixedVersionResolver
        setattr(_THREAD, typ, y)
    return y


def _documents(typ: str, text: str) -> list[Any]:
    """Every document of ``text`` read by this thread's ``typ`` reader. A failed read drops
    that reader: ruamel's constructor keeps a half-built document's pending steps after an
    error, and the next text read with it ran them first (a valid file read after a
    refused one was refused with the old file's error)."""
    try:
        return list(_reader(typ).load_all(text))
    except BaseException:
        vars(_THREAD).pop(typ, None)
        raise


# libyaml scans YAML 1.1, which reads NEL and the Unicode separators as line breaks, takes
# a tab where 1.2 refuses one (``a:\tb``), and a version directive changes the rules; it
# also takes a block scalar whose blank lines hold spaces where the pure reader refuses one
# (``k: |`` then ``"  "`` then ``"   a:"``), and document markers where the pure reader
# expects a value (``a:`` then ``...``): such a text goes to the pure 1.2 reader only.
_C_UNSAFE_TEXT = ("\t", "\x85", "\u2028", "\u2029", "%YAML")
_DOCUMENT_MARKERS = ("---", "...")
# The pure parser recurses per nesting level and gives up (RecursionError, "not valid
# YAML") a few hundred levels deep, where libyaml goes on: a text that may nest past
# MAX_NESTING_DEPTH (refused either way) is left to the pure parser, so it is refused in
# the same words. Block nesting needs an indentation as deep; flow nesting is counted.
_C_NESTING = 100
_DEEP_INDENT = " " * _C_NESTING


def _c_may_differ(text: str) -> bool:
    """Whether libyaml may read ``text`` otherwise than the pure reader (see above).

    String tests, not regular expressions: compiling the three patterns these stand for
    cost every process about 2M instructions (tests/unit/test_yaml_c_parser.py checks the
    two give the same answer)."""
    if any(part in text for part in _C_UNSAFE_TEXT):
        return True
    if text.startswith(_DEEP_INDENT) or "\n" + _DEEP_INDENT in text:
        return True
    lines = text.split("\n")
    for line in lines:
        # a line of spaces only, or one starting with a document marker
        if line.startswith(_DOCUMENT_MARKERS) or (line and not line.strip(" ")):
            return True
    return _root_block_scalar(lines) or _flow_depth_reaches(text, _C_NESTING)


def _root_block_scalar(lines: list[str]) -> bool:
    """A block scalar as the document itself: ``|`` or ``>`` (after spaces) opens the first
    line that is not blank or a comment. libyaml ends such a scalar at a column-0 line that
    YAML 1.2 reads as its content (``|\n#c\n`` is "" to one and "#c\n" to the other)."""
    for line in lines:
        rest = line.lstrip(" ")
        if rest[:1] in ("|", ">"):
            return True
        if rest and rest[0] != "#":
            return False
    return False


def safe_documents(text: str) -> list[Any]:
    """Every document of ``text`` as the pure-Python safe loader reads it, timestamps kept
    as their text; an invalid text raises that loader's own error.

    The C parser (ruamel.yaml.clib, 10-30x faster) reads first when it is installed: the
    resolver and constructor are the same Python ones, so an accepted text reads the same.
    libyaml is a YAML 1.1 scanner and refuses some valid 1.2 (``{t: 2026-03-01T12:00:00Z}``),
    so whatever it refuses is read again by the pure parser, which decides (and words
    every refusal, as before); texts where 1.1 and 1.2 split lines differently skip it.
    """
    if _c_parser_installed() and not _c_may_differ(text):
        try:
            return _documents("csafe", text)
        except Exception:  # the pure parser below decides, and words any refusal
            pass
    return _documents("safe", text)


_C_STATE: list[bool] = []


def _c_parser_installed() -> bool:
    if not _C_STATE:
        from ruamel.yaml import main  # its CParser is None without ruamel.yaml.clib

        _C_STATE.append(getattr(main, "CParser", None) is not None)
    return _C_STATE[0]


def load_yaml(text: str, source: str) -> Any:
    """Parse one YAML (or JSON) document; a parse error names ``source``."""
    _check_alias_budget(text, source)
    try:
        docs = _documents("rt", text)
    except YAMLError as exc:
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    except Exception as exc:  # ruamel raises assorted errors on hostile input
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    if len(docs) > 1:
        raise invalid(f"{source} holds {len(docs)} YAML documents, expected exactly one")
    doc = docs[0] if docs else None
    reason = value_bound_violation(doc)
    if reason is not None:
        raise invalid(f"{source} is not valid YAML", reason)
    return doc


def load_yaml_plain(text: str, source: str, *, refuse_lone_surrogates: bool = False) -> Any:
    """Parse YAML into plain dicts/lists (faster; for data we do not re-emit with comments).

    Escaped UTF-16 surrogate pairs (``"\\ud83d\\ude00"``, as JSON writers escape a
    character past U+FFFF) become the character they stand for; a lone surrogate becomes
    U+FFFD, or with ``refuse_lone_surrogates`` (documents whose values reach Helm) is
    refused naming ``source`` and where it is (see :func:`refuse_lone_surrogate`)."""
    if _flow_depth_reaches(text, MAX_FLOW_DEPTH):
        raise invalid(
            f"{source} is not valid YAML",
            f"flow collections ([ or {{) are nested {MAX_FLOW_DEPTH} or more levels deep",
        )
    _check_alias_budget(text, source)
    try:
        docs = safe_documents(text)
    except Exception as exc:
        raise invalid(f"{source} is not valid YAML", _first_line(str(exc))) from exc
    if len(docs) > 1:
        raise invalid(f"{source} holds {len(docs)} YAML documents, expected exactly one")
    doc = docs[0] if docs else None
    if "&" in text:
        _check_aliasing(doc, source)
    reason = value_bound_violation(doc)
    if reason is not None:
        raise invalid(f"{source} is not valid YAML", reason)
    if not _may_escape_surrogates(text):
        return doc
    doc = joined_surrogate_pairs(doc)
    if refuse_lone_surrogates:
        refuse_lone_surrogate(doc, source)
        return doc
    return without_lone_surrogates(doc)


# The YAML reader fails past a few hundred nested flow levels anyway (recursion), but its
# scanner is quadratic in the depth: 3,000 "[" took ten seconds to refuse. Refuse early.
MAX_FLOW_DEPTH = 500
_QUOTED = LazyPattern(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\n]|\'\')*\'')
_FLOW_BRACKET = LazyPattern(r"[\[\]{}]")


def _flow_depth_reaches(text: str, limit: int) -> bool:
    """True when ``[``/``{`` nest ``limit`` deep outside quoted scalars (an estimate that
    can only over-count brackets in comments and plain scalars, and needs hundreds)."""
    if text.count("[") + text.count("{") < limit:
        return False
    depth = 0
    for match in _FLOW_BRACKET.finditer(_QUOTED.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth >= limit:
                return True
        elif depth:
            depth -= 1
    return False


def _may_escape_surrogates(text: str) -> bool:
    # A file is read as strict UTF-8, so a lone surrogate can only come from a \u escape.
    return "\\u" in text or "\\U" in text


_LONE_SURROGATE = LazyPattern("[\ud800-\udfff]")


def without_lone_surrogates(value: Any) -> Any:
    """Replace escaped lone surrogates (``"\\ud800"``) with U+FFFD, as Go's decoders do;
    kept, they could never be written out as UTF-8 (a crash on the first print or save)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    return value


# Aliases share one object, so a few hundred bytes can stand for billions of nodes once
# expanded (every consumer walks or serialises the tree), and an alias inside its own anchor
# makes a cycle. Like Go's yaml.v3, refuse both; a document without aliases always passes.
_ALIAS_EXPANSION_SLACK = 10_000


def _alias_budget(nodes: int) -> int:
    return 4 * nodes + _ALIAS_EXPANSION_SLACK


def _check_alias_budget(text: str, source: str) -> None:
    """Refuse an alias bomb from the parse events, before anything is constructed.

    Constructing is where a bomb costs: a merge key ``<<: [*m, *m]`` nested 22 deep took
    11 s and 166 MB to build (30 deep never finished) before the tree check below could
    see it. Here every alias, in a merge key or not, counts as the size of what its anchor
    stands for, so the expansion is known in one linear pass over the events. Without an
    anchor (``&``) no alias can resolve, and the pass is skipped.
    """
    if "&" not in text:
        return
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
        ScalarEvent,
    )

    anchored: dict[str, int] = {}
    open_nodes: list[list[Any]] = [[None, 0]]  # [anchor, expanded size] per open collection
    nodes = 0
    ceiling = _alias_budget(len(text))  # more nodes than characters cannot exist
    try:
        for event in _reader("scan").parse(text):
            if isinstance(event, ScalarEvent | CollectionStartEvent):
                nodes += 1
                if isinstance(event, CollectionStartEvent):
                    open_nodes.append([event.anchor, 1])
                    continue
                size = 1
                if event.anchor is not None:
                    anchored[event.anchor] = 1
            elif isinstance(event, AliasEvent):
                if any(entry[0] == event.anchor for entry in open_nodes[1:]):
                    raise invalid(
                        f"{source} is not valid YAML", "an alias refers to its own anchor"
                    )
                size = anchored.get(event.anchor, 1)
            elif isinstance(event, CollectionEndEvent) and len(open_nodes) > 1:
                anchor, size = open_nodes.pop()
                if anchor is not None:
                    anchored[anchor] = size
            else:
                continue
            open_nodes[-1][1] += size
            if open_nodes[-1][1] > ceiling:
                break
    except AicrError:
        raise
    except Exception:
        return  # not valid YAML: the loader reports it with its own message
    total = open_nodes[0][1]
    if any(entry[1] > ceiling for entry in open_nodes) or total > _alias_budget(nodes):
        raise invalid(
            f"{source} is not valid YAML",
            "excessive aliasing: anchors (merge keys included) expand to more than "
            f"{_alias_budget(nodes)} nodes",
        )


def _check_aliasing(doc: Any, source: str) -> None:
    """Refuse a constructed document whose shared (aliased) parts expand past the alias
    budget, or that holds itself. Only aliases share or loop, so this runs when the text
    holds an anchor (``&``); without one every node appears once, and the expanded size
    is the node count the budget is set from."""
    sizes: dict[int, int] = {}
    open_ids: set[int] = set()
    distinct = [0]  # every node once: each container and the scalars in it

    def expanded(node: Any) -> int:
        if not isinstance(node, dict | list):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_ids:
            raise invalid(f"{source} is not valid YAML", "an alias refers to its own anchor")
        open_ids.add(key)
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else node
        size = 1 + sum(expanded(child) for child in children)
        distinct[0] += 1 + sum(1 for child in children if not isinstance(child, dict | list))
        open_ids.discard(key)
        sizes[key] = size
        return size

    try:
        total = expanded(doc)
    except RecursionError as exc:
        raise invalid(f"{source} is not valid YAML", "nesting is too deep") from exc
    if total > _alias_budget(distinct[0]):
        raise invalid(
            f"{source} is not valid YAML",
            f"excessive aliasing: anchors expand to {total} nodes",
        )


def to_plain(value: Any) -> Any:
    """Deep-convert ruamel containers and scalars into plain Python values."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return str(value)


# Characters a YAML emitter may put raw into a plain or single-quoted scalar where a reader
# folds or refuses them (controls, NEL, line/paragraph separators, BOM, surrogates).
_RISKY = LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
# The same class within ASCII: compiling the full one (a table over the BMP) cost more
# than a whole recipe dump, and most text is ASCII.
_RISKY_ASCII = LazyPattern("[\x00-\x08\x0b-\x1f\x7f]")


def _risky(text: str) -> bool:
    pattern = _RISKY_ASCII if text.isascii() else _RISKY
    return pattern.search(text) is not None


def _quote_risky(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, DoubleQuotedScalarString):
        return DoubleQuotedScalarString(value) if _risky(value) else value
    if isinstance(value, dict):
        out = type(value)() if isinstance(value, CommentedMap) else {}
        for k, v in value.items():
            out[_quote_risky(k)] = _quote_risky(v)
        if isinstance(value, CommentedMap) and isinstance(out, CommentedMap):
            value.copy_attributes(out)
        return out
    if isinstance(value, list):
        items = [_quote_risky(v) for v in value]
        if isinstance(value, CommentedSeq):
            seq = CommentedSeq(items)
            value.copy_attributes(seq)
            return seq
        return items
    return value


def dump_yaml(data: Any) -> str:
    """Serialise to block-style YAML. Key order is the caller's; output is deterministic.

    Strings holding characters a YAML reader would fold or refuse are double-quoted, where
    they are escaped, so every string reads back exactly as written.

    Plain data (dicts, lists, scalars, literal blocks as mapping values) is written by
    :func:`_emit_block`, byte for byte what ruamel writes (tests/unit/test_yaml_emit.py
    compares the two on the catalog, every recipe and bundle, and random trees) at a tenth
    of its cost; anything else goes to ruamel whole.
    """
    prepared = _quote_risky(data)
    if type(prepared) is dict and prepared:
        out: list[str] = []
        try:
            _emit_block(prepared, 0, out)
        except _NotPlain:
            pass
        else:
            return "".join(out)
    buf = io.StringIO()
    _yaml("rt").dump(prepared, buf)
    return buf.getvalue()


class _NotPlain(Exception):
    """The tree holds something :func:`_emit_block` leaves to ruamel."""


# A plain scalar of this shape is written as is when the resolver also reads it back as a
# string; any other string is rendered by ruamel itself (memoised per type and value).
_PLAIN = re.compile(
    r"[A-Za-z0-9_/][A-Za-z0-9_./=@+()<>'!%*&$^~-]*(?: [A-Za-z0-9_./=@+()<>'!%*&$^~-]+)*"
)
_STR_TAG = "tag:yaml.org,2002:str"
_SCALARS: dict[tuple[type, Any, bool], str] = {}
_SCALARS_MAX = 50_000
_DUMPER = threading.local()


def _scalar_dumper() -> YAML:
    y: YAML | None = getattr(_DUMPER, "yaml", None)
    if y is None:
        y = _DUMPER.yaml = _yaml("rt")
    return y


def _rendered(value: Any, key: bool) -> str:
    """``value`` as ruamel writes it in block context (a mapping key, or a value)."""
    # repr for floats: -0.0 == 0.0 (same hash), but ruamel writes them differently.
    memo = (type(value), repr(value) if type(value) is float else value, key)
    text = _SCALARS.get(memo)
    if text is not None:
        return text
    if type(value) is str and len(value) < 128 and _PLAIN.fullmatch(value):
        if _reads_as_str(value):
            text = value
    elif not key:
        text = _quick_value(value)
    if text is None:
        buf = io.StringIO()
        _scalar_dumper().dump({value: 0} if key else {"k": value}, buf)
        doc = buf.getvalue()
        if key:
            if not doc.endswith(": 0\n"):
                raise _NotPlain
            text = doc[: -len(": 0\n")]
        else:
            if not doc.startswith("k:"):
                raise _NotPlain
            text = doc[2:-1].removeprefix(" ")
        if "\n" in text or text.startswith("? ") or text.startswith(("|", ">")):
            raise _NotPlain
    if len(_SCALARS) >= _SCALARS_MAX:
        _SCALARS.clear()
    _SCALARS[memo] = text
    return text


# What the dumper's resolver (YAML 1.2, no %YAML directive when dumping) would answer;
# resolve() keeps no state between calls, so one instance serves every thread.
_STR_RESOLVER = _FixedVersionResolver()


def _reads_as_str(value: str) -> bool:
    tag = _STR_RESOLVER.resolve(ScalarNode, value, (True, False))
    return str(tag) == _STR_TAG


_PRINTABLE = LazyPattern(r"[\x20-\x7e]*")


def _block_plain(text: str) -> bool:
    """Whether ruamel's emitter writes ``text`` (printable ASCII, one line) plain as a
    block value when it reads back as a string: its analyze_scalar rules for such text."""
    if not text or text[0] == " " or text[-1] == " " or text.startswith(("---", "...")):
        return False
    first = text[0]
    if first in "#,[]{}&*!|>'\"%@`":
        return False
    if first in "?:-" and (len(text) == 1 or text[1] == " "):
        return False
    return ": " not in text and not text.endswith(":") and " #" not in text


def _quick_value(value: Any) -> str | None:
    """A mapping value or sequence item as ruamel writes it, for the scalars whose form is
    fixed: booleans, None, ints, and short printable ASCII strings without a quote (plain,
    or single-quoted when plain would read back as something else or is not allowed, such
    as ``'>= 1.30'``), and double-quoted strings (values files' YAML-1.1-ambiguous ``"02"``)
    without a quote or backslash. None: let ruamel render it. tests/unit/test_yaml_emit.py compares
    these with ruamel's own output."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    if kind is DoubleQuotedScalarString and len(value) < 128 and _PRINTABLE.fullmatch(value):
        # printable ASCII needs no escape in double quotes but the quote and the backslash
        return None if '"' in value or "\\" in value else f'"{value}"'
    if kind is not str or len(value) >= 128 or "'" in value or not _PRINTABLE.fullmatch(value):
        return None
    text: str = value
    if _block_plain(text) and _reads_as_str(text):
        return text
    return f"'{text}'"


_SCALAR_TYPES = (str, int, float, bool, type(None), DoubleQuotedScalarString)


def _literal(text: str, indent: int, out: list[str]) -> None:
    """A literal block scalar as a mapping value (``|`` or ``|-``; others go to ruamel)."""
    body = text[:-1] if text.endswith("\n") else text
    if not body or body.endswith("\n") or body[0] in " \t\n" or _risky(body) or "\r" in body:
        raise _NotPlain
    if any(line.endswith((" ", "\t")) for line in body.split("\n")):
        raise _NotPlain
    out.append(" |\n" if text.endswith("\n") else " |-\n")
    pad = " " * indent
    for line in body.split("\n"):
        out.append(f"{pad}{line}\n" if line else "\n")


def _emit_block(mapping: dict[Any, Any], indent: int, out: list[str], first: str = "") -> None:
    """A block mapping at ``indent``; ``first`` replaces the first key's indentation (the
    ``- `` of a sequence item)."""
    pad = " " * indent
    lead = first or pad
    for key, value in mapping.items():
        if type(key) is not str:
            raise _NotPlain
        out.append(lead + _rendered(key, True) + ":")
        lead = pad
        kind = type(value)
        if kind is dict:
            if value:
                out.append("\n")
                _emit_block(value, indent + 2, out)
            else:
                out.append(" {}\n")
        elif kind is list:
            if value:
                out.append("\n")
                _emit_sequence(value, indent + 2, out)
            else:
                out.append(" []\n")
        elif kind is LiteralScalarString:
            _literal(value, indent + 2, out)
        elif kind in _SCALAR_TYPES:
            text = _rendered(value, False)
            out.append(f" {text}\n" if text else "\n")
        else:
            raise _NotPlain


def _emit_sequence(items: list[Any], indent: int, out: list[str]) -> None:
    """A block sequence whose dashes sit at ``indent`` (items at ``indent + 2``)."""
    dash = " " * indent + "- "
    for item in items:
        kind = type(item)
        if kind is dict:
            if item:
                _emit_block(item, indent + 2, out, first=dash)
            else:
                out.append(dash + "{}\n")
        elif kind is list:
            if item:
                raise _NotPlain  # a sequence in a sequence: ruamel's own layout
            out.append(dash + "[]\n")
        elif kind in _SCALAR_TYPES:
            text = _rendered(item, False)
            out.append(dash + text + "\n" if text else dash.rstrip() + "\n")
        else:
            raise _NotPlain


def dump_json(data: Any) -> str:
    """Indented JSON; non-ASCII text as is, but every character a terminal acts on (C1,
    DEL, line separators, bidi controls, lone surrogates; json escapes C0 itself) as a
    ``\\u`` escape of four hex digits, so the same data prints safely
    (``textsafe.escape_controls``)."""
    return escape_controls(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def sort_keys_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: sort_keys_deep(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [sort_keys_deep(v) for v in value]
    return value


def _first_line(text: str) -> str:
    return " ".join(text.split())[:300]
