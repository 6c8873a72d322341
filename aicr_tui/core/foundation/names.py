"""Name grammars for values that come from documents and become names, paths or arguments.

Component and release names, namespaces, chart names and versions, chart repository URLs
and manifest file names follow the Kubernetes and Helm grammars. Each rule is a predicate
(``is_*``) and a ``check_*`` that raises one ``INVALID_REQUEST`` line naming the field, the
offending value (escaped and shortened, so a newline, NUL or a 300-character name stays one
short line) and what was expected.

Grammars (upstream: Kubernetes apimachinery validation, Helm ``chartutil``/``action``):
- DNS-1123 label: ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``, at most 63 characters
  (component names, namespaces, registry aliases);
- DNS-1123 subdomain: labels joined by ``.``, at most 253 characters;
- Helm release name: a DNS-1123 subdomain of at most 53 characters;
- chart name: ``[A-Za-z0-9][A-Za-z0-9._-]*``, at most 250 characters (Helm's
  ``helm create`` rule, minus a leading ``.``/``_``/``-``, which would read as a hidden
  file or an option);
- chart version: what Helm's Masterminds ``semver.NewVersion`` accepts: SemVer 2.0.0
  and its loose forms (leading ``v``, minor or patch left out: ``v1``, ``1.2``);
- chart repository: ``https://host[:port][/path]``, ``oci://host[:port][/path]`` or
  ``file:///absolute/path``, RFC 3986 path characters only, no credentials, query or
  fragment;
- manifest file name: ``[A-Za-z0-9][A-Za-z0-9._-]*``, at most 253 characters (one path
  segment, never ``.``/``..``, never an option);
- label key (also a taint key): ``[prefix/]name``, the prefix a DNS-1123 subdomain, the
  name at most 63 characters of ``[A-Za-z0-9._-]`` starting and ending with a letter or
  digit (apimachinery ``IsQualifiedName``);
- label value (also a taint value): empty, or at most 63 characters of ``[A-Za-z0-9._-]``
  starting and ending with a letter or digit (``IsValidLabelValue``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.patterns import LazyPattern

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
HELM_RELEASE_MAX = 53
CHART_NAME_MAX = 250
VERSION_MAX = 128
REPOSITORY_MAX = 2048
FILE_NAME_MAX = 253
CATALOG_PATH_MAX = 1024
SHOWN_MAX = 64

_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_LABEL_RE = LazyPattern(_LABEL)
_SUBDOMAIN_RE = LazyPattern(rf"{_LABEL}(?:\.{_LABEL})*")
_CHART_RE = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_FILE_RE = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# Helm parses chart versions with Masterminds semver (``semver.NewVersion``), which takes
# SemVer 2.0.0 and its loose forms: a leading ``v``, and minor/patch left out (``v1``, ``1.2``).
_IDENT = r"[0-9A-Za-z-]+"
_SEMVER_RE = LazyPattern(
    rf"v?[0-9]+(?:\.[0-9]+)?(?:\.[0-9]+)?(?:-{_IDENT}(?:\.{_IDENT})*)?(?:\+{_IDENT}(?:\.{_IDENT})*)?"
)
_HOST = (
    r"(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?"
)
_URL_PATH = r"(?:/[A-Za-z0-9._~%!$&'()*+,;=:@-]*)*"
_REPO_RE = LazyPattern(rf"(?:https|oci)://{_HOST}{_URL_PATH}")
_FILE_URL_RE = LazyPattern(r"file://(?:/[A-Za-z0-9._~%+@-]+)+/?")
_GIT_SOURCE_RE = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]*")
_GIT_REF_RE = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_QUALIFIED_NAME_RE = LazyPattern(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")
QUALIFIED_NAME_MAX = 63
REPOSITORY_SCHEMES = ("https", "oci", "file")


def shown(value: object, limit: int = SHOWN_MAX) -> str:
    """A document value as it may appear in a one-line message: quoted, every control or
    non-ASCII character escaped, cut to ``limit`` characters with the full length said."""
    text = value if isinstance(value, str) else str(value)
    cut = text[:limit]
    out = json.dumps(cut, ensure_ascii=True)
    if len(text) > limit:
        out = f'{out[:-1]}…" ({len(text)} characters)'
    return out


def is_dns1123_label(value: str) -> bool:
    return len(value) <= DNS1123_LABEL_MAX and _LABEL_RE.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= DNS1123_SUBDOMAIN_MAX and _SUBDOMAIN_RE.fullmatch(value) is not None


def is_release_name(value: str) -> bool:
    return len(value) <= HELM_RELEASE_MAX and is_dns1123_subdomain(value)


def is_chart_name(value: str) -> bool:
    return len(value) <= CHART_NAME_MAX and _CHART_RE.fullmatch(value) is not None


def is_chart_reference(value: str) -> bool:
    """A registry ``defaultChart``: ``chart`` or ``repo-alias/chart`` (the last segment is
    the chart name)."""
    parts = value.split("/")
    return len(parts) <= 2 and all(is_chart_name(p) for p in parts)


def is_semver(value: str) -> bool:
    return len(value) <= VERSION_MAX and _SEMVER_RE.fullmatch(value) is not None


def is_chart_repository(value: str) -> bool:
    if len(value) > REPOSITORY_MAX:
        return False
    if value.startswith("file://"):
        return _FILE_URL_RE.fullmatch(value) is not None and "/../" not in f"{value}/"
    return _REPO_RE.fullmatch(value) is not None


def is_git_source(value: str) -> bool:
    return len(value) <= REPOSITORY_MAX and _GIT_SOURCE_RE.fullmatch(value) is not None


def is_git_ref(value: str) -> bool:
    return len(value) <= FILE_NAME_MAX and _GIT_REF_RE.fullmatch(value) is not None


def is_label_key(value: str) -> bool:
    """A Kubernetes qualified name: ``[prefix/]name`` (labels, taints, annotations)."""
    prefix, slash, name = value.rpartition("/")
    if slash and not is_dns1123_subdomain(prefix):
        return False
    return len(name) <= QUALIFIED_NAME_MAX and _QUALIFIED_NAME_RE.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    return value == "" or (
        len(value) <= QUALIFIED_NAME_MAX and _QUALIFIED_NAME_RE.fullmatch(value) is not None
    )


def is_file_name(value: str) -> bool:
    return len(value) <= FILE_NAME_MAX and _FILE_RE.fullmatch(value) is not None


def is_catalog_path(value: str) -> bool:
    """A catalog-relative file path (``components/x/manifests/y.yaml``): relative, every
    segment a safe file name, so it can never leave the data directory."""
    if not value or len(value) > CATALOG_PATH_MAX:
        return False
    return all(is_file_name(seg) for seg in value.split("/"))


@dataclass(frozen=True)
class NameRule:
    """A predicate and the words that say what it expects."""

    what: str
    expected: str
    test: Callable[[str], bool]

    def check(self, value: object, field: str) -> str:
        """Return ``value`` when it matches; otherwise raise one line naming ``field``."""
        if not isinstance(value, str) or not self.test(value):
            raise invalid(
                f"{field} {shown(value)} is not a valid {self.what}; expected {self.expected}"
            )
        return value


COMPONENT_NAME = NameRule(
    "component name",
    f"a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a "
    f"letter or digit, at most {DNS1123_LABEL_MAX} characters)",
    is_dns1123_label,
)
NAMESPACE = NameRule(
    "namespace",
    f"a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a "
    f"letter or digit, at most {DNS1123_LABEL_MAX} characters)",
    is_dns1123_label,
)
ALIAS = NameRule(
    "component alias",
    f"a DNS-1123 label (lowercase letters, digits and '-', at most {DNS1123_LABEL_MAX} characters)",
    is_dns1123_label,
)
RELEASE_NAME = NameRule(
    "Helm release name",
    f"a DNS-1123 subdomain of at most {HELM_RELEASE_MAX} characters",
    is_release_name,
)
CHART_NAME = NameRule(
    "chart name",
    f"letters, digits, '.', '_' and '-', starting with a letter or digit, at most "
    f"{CHART_NAME_MAX} characters",
    is_chart_name,
)
CHART_REFERENCE = NameRule(
    "chart reference",
    "a chart name, optionally after one 'repo/' prefix (letters, digits, '.', '_', '-')",
    is_chart_reference,
)
CHART_VERSION = NameRule(
    "chart version",
    "a semantic version such as 1.2.3, v1.2.3, 1.2 or 1.2.3-rc.1",
    is_semver,
)
CHART_REPOSITORY = NameRule(
    "chart repository",
    "an https://host/path or oci://host/path URL, or file:///absolute/path "
    "(no credentials, query, fragment, spaces or control characters)",
    is_chart_repository,
)
MANIFEST_FILE = NameRule(
    "manifest file name",
    f"one file name of letters, digits, '.', '_' and '-', starting with a letter or digit, "
    f"at most {FILE_NAME_MAX} characters",
    is_file_name,
)
GIT_SOURCE = NameRule(
    "Kustomize source",
    "a URL or git reference of RFC 3986 characters starting with a letter or digit "
    f"(no spaces or control characters, at most {REPOSITORY_MAX} characters)",
    is_git_source,
)
GIT_REF = NameRule(
    "Kustomize tag",
    "a git reference of letters, digits, '.', '_', '/' and '-', starting with a letter or digit",
    is_git_ref,
)
_QUALIFIED = (
    f"at most {QUALIFIED_NAME_MAX} letters, digits, '-', '_' and '.', starting and ending "
    "with a letter or digit"
)
LABEL_KEY = NameRule(
    "label key",
    f"[prefix/]name: the name {_QUALIFIED}, the optional prefix a DNS-1123 subdomain",
    is_label_key,
)
LABEL_VALUE = NameRule("label value", f"empty or {_QUALIFIED}", is_label_value)
TAINT_KEY = NameRule(
    "taint key",
    f"[prefix/]name: the name {_QUALIFIED}, the optional prefix a DNS-1123 subdomain",
    is_label_key,
)
TAINT_VALUE = NameRule("taint value", f"empty or {_QUALIFIED}", is_label_value)
CATALOG_PATH = NameRule(
    "catalog file path",
    "a relative path of file names (letters, digits, '.', '_', '-', each starting with a "
    "letter or digit) separated by '/'",
    is_catalog_path,
)


def check_optional(rule: NameRule, value: object, field: str) -> str:
    """``rule.check`` for a field where empty means "not set" (inherited or defaulted)."""
    if value == "" or value is None:
        return ""
    return rule.check(value, field)


__all__ = [
    "ALIAS",
    "CATALOG_PATH",
    "GIT_REF",
    "LABEL_KEY",
    "LABEL_VALUE",
    "TAINT_KEY",
    "TAINT_VALUE",
    "GIT_SOURCE",
    "CHART_NAME",
    "CHART_REFERENCE",
    "CHART_REPOSITORY",
    "CHART_VERSION",
    "COMPONENT_NAME",
    "MANIFEST_FILE",
    "NAMESPACE",
    "RELEASE_NAME",
    "REPOSITORY_SCHEMES",
    "NameRule",
    "check_optional",
    "is_catalog_path",
    "is_chart_name",
    "is_chart_reference",
    "is_chart_repository",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_file_name",
    "is_label_key",
    "is_label_value",
    "is_git_ref",
    "is_git_source",
    "is_release_name",
    "is_semver",
    "shown",
]


def did_you_mean(value: str, choices: list[str] | tuple[str, ...]) -> str:
    """``; did you mean "X"?`` for the choice closest to a mistyped ``value`` (difflib's
    ratio of at least 0.6), or empty when none is close."""
    import difflib

    close = difflib.get_close_matches(value, list(choices), n=1)
    return f'; did you mean "{close[0]}"?' if close else ""
