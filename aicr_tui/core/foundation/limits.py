"""Documented limits on what a document or a flag may hold, and the one check that applies them.

Every input is bounded so that a hostile file or flag is refused in one line instead of
ending as a ``RecursionError``, a ``ValueError`` from Python's integer printing, or minutes
of CPU. The limits are far above what the recipes, snapshots, values and recordings this
tool reads ever need (a Helm values tree is rarely 15 levels deep):

=====================  ======  ========================================================
limit                  value   applies to
=====================  ======  ========================================================
``MAX_NESTING_DEPTH``  100     nesting of mappings/lists in any YAML/JSON document,
                               ``--set-json`` value or ``--set-file`` file
``MAX_INT_BITS``       256     size of an integer (about 77 decimal digits); Go reads
                               numbers as 64-bit anyway
``MAX_PATH_SEGMENTS``  100     dotted segments of a ``--set``/``--set-json``/
                               ``--set-file``/``--dynamic`` value path
``MAX_PATH_CHARS``     4096    characters of such a path
=====================  ======  ========================================================

Kubernetes API replies (``aicr_tui.core.live.kube_wire``, ``aicr_tui.core.live.kube``), what a live capture
reads from an API server; far above a real page of ``NODE_PAGE_SIZE`` (100) nodes:

=========================  ==========  ====================================================
limit                      value       applies to
=========================  ==========  ====================================================
``MAX_API_RESPONSE_BYTES`` 8 MiB       one reply body, on the wire and once decompressed
                                       (gzip/deflate); also caps ``Content-Length`` and
                                       each chunk size
``MAX_API_JSON_VALUES``    1,000,000   JSON values in one reply (counted as its commas,
                                       ``[`` and ``{`` before decoding), which bounds the
                                       memory of the decoded document
``MAX_INTERIM_RESPONSES``  16          ``100 Continue`` heads skipped before one reply
``MAX_NODE_KEYS``          10,000      distinct node label keys (and taint keys) a
                                       capture counts over all pages of the node list
=========================  ==========  ====================================================

``http.client`` bounds each status/header line (65,536 bytes) and the header count
(100); the nesting and integer limits above apply to every reply too.

YAML aliases (merge keys ``<<: [*a, *a]`` included) are bounded by expansion, see
``aicr_tui.core.foundation.yamlio``.

Charts that ``verify`` renders (``aicr-tui verify``, ``bundle --verify --charts``); the
Helm engine runs in one child process (``aicr_tui.core.verify.engine``), killed with its process
group when it overruns, and each chart is first copied into a private tree
(``aicr_tui.core.verify.chartfiles``):

==============================  ========  ================================================
limit                           value     applies to
==============================  ========  ================================================
``RENDER_SECONDS``              30        wall time of one chart's engine work (load,
                                          schema check, every render); environment
                                          ``AICR_TUI_VERIFY_SECONDS`` may lower or raise it
``RENDER_CPU_FACTOR``           2         CPU time of the engine child per request
                                          (``RLIMIT_CPU``): the remaining wall budget x 2
``RENDER_MEMORY_BYTES``         1 GiB     address space the engine child may add once the
                                          engine is loaded (``RLIMIT_AS``; the Go runtime
                                          itself reserves ~1.7 GiB it never touches);
                                          ``AICR_TUI_VERIFY_MEMORY_MIB``
``RENDER_OUTPUT_BYTES``         64 MiB    text one render may return
``CHART_MAX_BYTES``             100 MiB   uncompressed bytes of a chart with its subcharts
``CHART_MAX_FILES``             10000     files of a chart with its subcharts
``CHART_MAX_DEPTH``             32        nested directories, or archives in archives
``FINDING_MAX_CHARS``           2000      characters of one finding's message (chart text,
                                          e.g. a ``fail`` message, is cut there)
==============================  ========  ================================================

``aicr-tui serve`` (``aicr_tui.commands.serve_session``): what one browser session may send
over its websocket. A session that breaks one of these is closed (its wizard process is told
to quit) with one line in the server log; the server and the wizard stay within their memory:

============================  ==========  ==============================================
limit                         value       applies to
============================  ==========  ==============================================
``SERVE_MAX_FRAME_BYTES``     256 KiB     one websocket message (aiohttp's
                                          ``max_msg_size``; closed with code 1009)
``SERVE_MAX_STDIN_BYTES``     32 KiB      the UTF-8 text of one ``stdin`` message (a
                                          paste of 32 KiB passes)
``SERVE_INPUT_BYTES_PER_S``   256 KiB     what a session may send per second on average,
``SERVE_INPUT_BURST_BYTES``   1 MiB       with this burst (a token bucket)
``SERVE_MESSAGES_PER_S``      500         messages per second on average (resize, ping,
``SERVE_MESSAGES_BURST``      2000        focus included), with this burst
``SERVE_COLUMNS``             20-640      terminal width a session may ask for (query
                                          ``width`` or a ``resize`` message), clamped
``SERVE_ROWS``                5-240       terminal height, clamped the same way
============================  ==========  ==============================================

A message that is not JSON, not a ``[type, data]`` list, or whose data has the wrong type for
its type (a ``resize`` size that is not an integer, ``stdin`` that is not text or holds a lone
surrogate) closes the session with code 1007. The access log names the method, the path
without its query string, the status and the size; never a token.
"""

from __future__ import annotations

import math
from typing import Any

from aicr_tui.core.foundation.errors import invalid

MAX_NESTING_DEPTH = 100
MAX_INT_BITS = 256
MAX_PATH_SEGMENTS = 100
MAX_PATH_CHARS = 4096
# Go's YAML reader (Helm, Argo CD, kubectl) reads a JSON object key only when its JSON text,
# quotes included, spans at most 1024 bytes; values travel as JSON text in the argocd-helm
# root chart, so a longer key is refused where it is typed.
MAX_GO_JSON_KEY_BYTES = 1024
# Escaped by Go's encoding/json (HTML-safe) or by the argocd-helm root chart as a \u escape
# with four hex digits.
_GO_JSON_ESCAPED = frozenset("<>&\u2028\u2029\ufeff\ufffe\uffff") | {
    chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))
}


def go_json_key_bytes(key: str) -> int:
    """The UTF-8 length of ``key`` as Go writes it as JSON text, quotes included."""
    size = 2
    for ch in key:
        if ch in '"\\\n\r\t':
            size += 2
        elif ch in _GO_JSON_ESCAPED:
            size += 6
        else:
            size += len(ch.encode("utf-8", "surrogatepass"))
    return size


def value_bound_violation(
    value: Any, *, allow_non_finite: bool = True, go_keys: bool = False
) -> str | None:
    """Why ``value`` (plain dicts/lists/scalars) breaks a limit, or None when it keeps them.

    ``allow_non_finite=False`` also refuses NaN and infinite floats (strict JSON);
    ``go_keys=True`` refuses a mapping key Go cannot read back from JSON text
    (:data:`MAX_GO_JSON_KEY_BYTES`).
    Iterative, so a tree of any depth is walked without recursion; a shared (aliased)
    subtree is walked at every place it appears (the alias budget bounds the expansion),
    and a cycle is refused as too deep.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= MAX_NESTING_DEPTH:
                return f"nested more than {MAX_NESTING_DEPTH} levels deep (the limit)"
            children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            if go_keys and isinstance(node, dict):
                for key in node:
                    size = go_json_key_bytes(str(key))
                    if size > MAX_GO_JSON_KEY_BYTES:
                        return (
                            f"holds a key of {len(str(key))} characters ({size} bytes as JSON); "
                            f"Go's YAML reader (Helm, Argo CD) reads keys of at most "
                            f"{MAX_GO_JSON_KEY_BYTES} bytes as JSON"
                        )
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if node.bit_length() > MAX_INT_BITS:
                return f"holds an integer of {node.bit_length()} bits; at most {MAX_INT_BITS} are accepted"
        elif isinstance(node, float) and not allow_non_finite and not math.isfinite(node):
            return f"holds {node!r}, which is not a JSON number"
    return None


def check_value_bounds(
    value: Any, where: str, *, allow_non_finite: bool = True, go_keys: bool = False
) -> None:
    """Raise a one-line INVALID error naming ``where`` when ``value`` breaks a limit."""
    reason = value_bound_violation(value, allow_non_finite=allow_non_finite, go_keys=go_keys)
    if reason is not None:
        raise invalid(f"{where} {reason}")


def path_bound_violation(path: str) -> str | None:
    """Why a dotted value path is too long, or None."""
    segments = path.count(".") + 1
    if segments > MAX_PATH_SEGMENTS:
        return f"the value path has {segments} segments; at most {MAX_PATH_SEGMENTS} are accepted"
    if len(path) > MAX_PATH_CHARS:
        return (
            f"the value path is {len(path)} characters long; at most {MAX_PATH_CHARS} are accepted"
        )
    longest = max(path.split("."), key=len)
    if go_json_key_bytes(longest) > MAX_GO_JSON_KEY_BYTES:
        return (
            f"a value path segment is {len(longest)} characters long; Go's YAML reader (Helm, "
            f"Argo CD) reads keys of at most {MAX_GO_JSON_KEY_BYTES - 2} characters"
        )
    return None


# -- Kubernetes API replies (see the second table above) ---------------------------------
MAX_API_RESPONSE_BYTES = 8 * 1024 * 1024
MAX_API_JSON_VALUES = 1_000_000
MAX_INTERIM_RESPONSES = 16
MAX_NODE_KEYS = 10_000
# ------------------------------------------------------------------ charts verify renders
RENDER_SECONDS = 30.0
RENDER_CPU_FACTOR = 2.0
RENDER_MEMORY_BYTES = 1024 * 1024 * 1024
RENDER_OUTPUT_BYTES = 64 * 1024 * 1024
CHART_MAX_BYTES = 100 * 1024 * 1024
CHART_MAX_FILES = 10_000
CHART_MAX_DEPTH = 32
FINDING_MAX_CHARS = 2000
# --------------------------------------------------------------- serve websocket sessions
SERVE_MAX_FRAME_BYTES = 256 * 1024
SERVE_MAX_STDIN_BYTES = 32 * 1024
SERVE_INPUT_BYTES_PER_S = 256 * 1024
SERVE_INPUT_BURST_BYTES = 1024 * 1024
SERVE_MESSAGES_PER_S = 500
SERVE_MESSAGES_BURST = 2000
SERVE_COLUMNS = (20, 640)
SERVE_ROWS = (5, 240)
