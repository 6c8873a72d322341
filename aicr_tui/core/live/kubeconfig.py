"""A kubeconfig is read and checked here before the kubernetes client sees it.

The client parses a kubeconfig with its own YAML reader and reports a bad one as whatever
it trips on: a parser or constructor error (``[INTERNAL]``), a ``TypeError`` deep in its
merger, or, for a cluster ``server`` such as ``file:///etc/passwd`` or ``ftp://host``, a
connection error ("could not reach the Kubernetes API", exit 6) as if the cluster were
down. Each file is therefore read first (bounded, UTF-8, with the project's safe YAML
reader: no ``!!python/...`` or other application tag, the nesting and alias limits of
``aicr_tui.core.foundation.limits``) and the fields the client uses are checked for their type:
a bad one is one line naming the file and the field (``clusters[0].cluster.server``),
exit 2. The client then loads the same files (it resolves their relative certificate paths
and runs their exec plugins, bounded in ``aicr_tui.core.live.kube``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.fileio import read_document
from aicr_tui.core.foundation.textsafe import safe_line
from aicr_tui.core.foundation.tree import KindNames, kind_name
from aicr_tui.core.foundation.yamlio import load_yaml_plain

SERVER_SCHEMES = ("https", "http")
_SHOWN_CHARS = 80
# What a YAML value is called in a message, with its article.
_YAML_KINDS: KindNames = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
)

# Fields of an entry checked for their type: (key, expected kind) with kind one of
# "str", "bool", "map", "list-of-str".
_CLUSTER_FIELDS = (
    ("certificate-authority", "str"),
    ("certificate-authority-data", "str"),
    ("insecure-skip-tls-verify", "bool"),
    ("tls-server-name", "str"),
    ("proxy-url", "str"),
)
_CONTEXT_FIELDS = (("cluster", "str"), ("user", "str"), ("namespace", "str"))
_USER_FIELDS = (
    ("token", "str"),
    ("tokenFile", "str"),
    ("client-certificate", "str"),
    ("client-certificate-data", "str"),
    ("client-key", "str"),
    ("client-key-data", "str"),
    ("username", "str"),
    ("password", "str"),
    ("exec", "map"),
    ("auth-provider", "map"),
)
_EXEC_FIELDS = (("apiVersion", "str"), ("args", "list-of-str"), ("env", "list"))


class _Bad(Exception):
    """A field of the kubeconfig that is not what the client needs: (where, expected)."""

    def __init__(self, where: str, expected: str) -> None:
        super().__init__(where, expected)
        self.where = where
        self.expected = expected


def _got(value: Any) -> str:
    """``got "text"`` (terminal-safe, shortened) for a string, ``got a list`` otherwise."""
    if not isinstance(value, str):
        return "got nothing" if value is None else f"got {kind_name(value, _YAML_KINDS)}"
    if not value:
        return "got an empty string"
    text = safe_line(value)
    return f'got "{text[:_SHOWN_CHARS]}{"..." if len(text) > _SHOWN_CHARS else ""}"'


def server_problem(value: Any) -> str | None:
    """Why ``value`` is no API server address the client can use, or None: an http(s) URL
    with a host, a valid port if any, and no space or control character."""
    problem = f"expected an https:// or http:// URL, {_got(value)}"
    if not isinstance(value, str) or not value:
        return problem
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        return problem
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError:
        return problem
    if parts.scheme not in SERVER_SCHEMES or not parts.hostname:
        return problem
    return None


def _kind_ok(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "map":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


_KIND_WORDS = {
    "str": "a string",
    "bool": "true or false",
    "map": "a mapping",
    "list": "a list",
    "list-of-str": "a list of strings",
}


def _fields(entry: dict[str, Any], fields: tuple[tuple[str, str], ...], where: str) -> None:
    for key, kind in fields:
        value = entry.get(key)
        if value is not None and not _kind_ok(value, kind):
            raise _Bad(f"{where}.{key}", f"expected {_KIND_WORDS[kind]}, {_got(value)}")


def _entries(doc: dict[str, Any], section: str, body: str) -> list[tuple[str, dict[str, Any]]]:
    """The named entries of ``section`` (``clusters``...): (where, the ``body`` mapping)."""
    items = doc.get(section)
    if items is None:
        return []
    if not isinstance(items, list):
        raise _Bad(section, f"expected a list, {_got(items)}")
    out: list[tuple[str, dict[str, Any]]] = []
    for index, item in enumerate(items):
        where = f"{section}[{index}]"
        if not isinstance(item, dict):
            raise _Bad(where, f"expected a mapping with name and {body}, {_got(item)}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _Bad(f"{where}.name", f"expected a non-empty string, {_got(name)}")
        inner = item.get(body)
        if inner is None and section == "users":
            inner = {}
        if not isinstance(inner, dict):
            raise _Bad(f"{where}.{body}", f"expected a mapping, {_got(inner)}")
        out.append((f"{where}.{body}", inner))
    return out


def _check_document(doc: Any) -> tuple[bool, bool]:
    """Check one file's document; (has clusters, has contexts)."""
    if not isinstance(doc, dict):
        raise _Bad("top level", f"expected a mapping with clusters and contexts, {_got(doc)}")
    clusters = _entries(doc, "clusters", "cluster")
    for where, cluster in clusters:
        problem = server_problem(cluster.get("server"))
        if problem is not None:
            raise _Bad(f"{where}.server", problem)
        _fields(cluster, _CLUSTER_FIELDS, where)
    contexts = _entries(doc, "contexts", "context")
    for where, context in contexts:
        _fields(context, _CONTEXT_FIELDS, where)
    for where, user in _entries(doc, "users", "user"):
        _fields(user, _USER_FIELDS, where)
        plugin = user.get("exec")
        if isinstance(plugin, dict):
            command = plugin.get("command")
            if not isinstance(command, str) or not command:
                raise _Bad(f"{where}.exec.command", f"expected a program name, {_got(command)}")
            _fields(plugin, _EXEC_FIELDS, f"{where}.exec")
    current = doc.get("current-context")
    if current is not None and not isinstance(current, str):
        raise _Bad("current-context", f"expected a string, {_got(current)}")
    return bool(clusters), bool(contexts)


def check_kubeconfig(paths: list[str]) -> None:
    """Refuse, in one line naming the file and the field, kubeconfig files the client
    cannot use (see the module docstring). ``paths`` are merged like ``$KUBECONFIG``:
    each file must be a mapping, and together they must name clusters and contexts."""
    has_clusters = has_contexts = False
    for path in paths:
        where = f'kubeconfig "{path}"'
        text = read_document(path, "kubeconfig")
        doc = load_yaml_plain(text, where)
        if doc is None and len(paths) > 1:
            continue  # an empty file in a list merges as nothing (as kubectl reads it)
        try:
            clusters, contexts = _check_document(doc)
        except _Bad as bad:
            raise invalid(f"{where}: {bad.where}: {bad.expected}") from None
        has_clusters, has_contexts = has_clusters or clusters, has_contexts or contexts
    if paths and not (has_clusters and has_contexts):
        missing = " and ".join(
            name for name, ok in (("clusters", has_clusters), ("contexts", has_contexts)) if not ok
        )
        shown = '", "'.join(paths)
        raise invalid(f'kubeconfig "{shown}": {missing}: expected at least one entry, got none')
