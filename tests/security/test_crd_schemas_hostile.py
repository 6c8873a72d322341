"""``verify`` against hostile CRD schemas (issue 35, family 3).

A custom resource is checked against the ``openAPIV3Schema`` of the CRD that installs it,
and that schema comes from the chart: as hostile as the chart. Here a chart ships a CRD
(``crds/``) and renders one custom resource of its kind; the CRD's schema carries the
hostile part. Whatever it holds, ``verify`` ends with a report (never ``[INTERNAL]``),
never fetches a URL or reads a file (the secret outside the chart never shows, the
loopback server is never asked), follows ``$ref`` only inside the same schema (anything
else, and a ref that does not resolve, is one finding), bounds the schema's depth, and
bounds the time a ``pattern`` may take (catastrophic backtracking is one finding within
seconds, not a hang).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.verify.model import VerifyReport
from tests.security import test_charts_hostile as hostile_charts
from tests.security.test_charts_hostile import MARKER, chart_dir, shown, verify, write_chart

# the fixtures of the chart tests: a charts directory, a secret outside it, a loopback server
charts = hostile_charts.charts
outside = hostile_charts.outside
loopback = hostile_charts.loopback

pytest.importorskip("helm_python")

GROUP, KIND = "widgets.example.com", "Widget"
WIDGET = (
    f"apiVersion: {GROUP}/v1\nkind: {KIND}\nmetadata:\n  name: w\n  namespace: default\n"
    "spec:\n  a: {{ .Values.a | toJson }}\n"
)


def _crd(schema: dict[str, Any]) -> str:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": KIND, "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
    return json.dumps(crd)


def _spec(a: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        **extra,
        "properties": {"spec": {"type": "object", "properties": {"a": a}}},
    }


def _chart(charts: Path, schema: dict[str, Any] | str) -> None:
    """``schema`` as a value, or as JSON text (a depth json.dumps cannot write)."""
    c = write_chart(chart_dir(charts), {"widget.yaml": WIDGET})
    (c / "crds").mkdir()
    text = _crd({"$": 0}).replace('{"$": 0}', schema) if isinstance(schema, str) else _crd(schema)
    (c / "crds" / "widget.yaml").write_text(text)


def _report(charts: Path, value: Any, seconds: float = 20) -> tuple[VerifyReport, str]:
    start = time.monotonic()
    outcome = verify(charts, {"a": value})
    took = time.monotonic() - start
    text = shown(outcome)
    assert not isinstance(outcome, AicrError), text
    assert "[INTERNAL]" not in text and "Traceback" not in text, text
    assert took < seconds, f"verify took {took:.1f} s"
    assert MARKER not in text
    return outcome, text


def _schema_findings(report: VerifyReport) -> list[str]:
    return [f.message for f in report.findings if "w" in f.message and "Widget" in f.message]


def _ref_cases(out: Path, url: str) -> dict[str, dict[str, Any]]:
    secret = out / "secret.json"
    return {
        "file URL": _spec({"$ref": secret.as_uri()}),
        "absolute path": _spec({"$ref": str(secret)}),
        "relative path climbing out": _spec({"$ref": f"../../..{secret}"}),
        "/proc/self/environ": _spec({"$ref": "file:///proc/self/environ"}),
        "/etc/passwd": _spec({"$ref": "file:///etc/passwd"}),
        "http on loopback": _spec({"$ref": f"{url}/x.json"}),
        "http fragment on loopback": _spec({"$ref": f"{url}/x.json#/enum"}),
        "$id on loopback, relative ref": _spec({"$ref": "y.json"}, **{"$id": f"{url}/b/"}),
        "$schema on loopback": _spec({"type": "integer"}, **{"$schema": f"{url}/meta"}),
        "unresolvable pointer": _spec({"$ref": "#/definitions/missing"}),
        "pointer into a string": _spec({"$ref": "#/type/x"}),
        "bare name": _spec({"$ref": "other"}),
        "urn": _spec({"$ref": "urn:example:x"}),
        "not a string": _spec({"$ref": 5}),
        "$dynamicRef to a file": _spec({"$dynamicRef": secret.as_uri()}),
        "$recursiveRef": _spec({"$recursiveRef": f"{url}/r"}),
        "nested in items": _spec({"type": "array", "items": {"$ref": f"{url}/i"}}),
    }


REF_CASES = [
    "file URL",
    "absolute path",
    "relative path climbing out",
    "/proc/self/environ",
    "/etc/passwd",
    "http on loopback",
    "http fragment on loopback",
    "$id on loopback, relative ref",
    "$schema on loopback",
    "unresolvable pointer",
    "pointer into a string",
    "bare name",
    "urn",
    "not a string",
    "$dynamicRef to a file",
    "$recursiveRef",
    "nested in items",
]


@pytest.mark.parametrize("case", REF_CASES)
def test_a_crd_schema_ref_is_followed_only_inside_the_schema(
    case: str, charts: Path, outside: Path, loopback: tuple[str, list[str]]
) -> None:
    url, hits = loopback
    _chart(charts, _ref_cases(outside, url)[case])
    report, text = _report(charts, 5)
    assert hits == [], f"verify asked {hits}"
    if case != "$schema on loopback":
        found = _schema_findings(report)
        assert len(found) == 1 and "Ref" in found[0].replace("$ref", "Ref"), text
    assert "root:" not in text and "PATH=" not in text


def test_a_ref_inside_the_schema_is_followed(charts: Path) -> None:
    schema = _spec({"$ref": "#/definitions/n"}, definitions={"n": {"type": "integer"}})
    _chart(charts, schema)
    report, text = _report(charts, "five")
    found = _schema_findings(report)
    assert len(found) == 1 and "integer" in found[0], text
    _, text = _report(charts, 5)


def _deep(levels: int) -> str:
    """``spec.a`` an object ``levels`` schema levels deep, as JSON text."""
    inner = (
        '{"type": "object", "properties": {"x": ' * levels + '{"type": "integer"}' + "}}" * levels
    )
    return json.dumps(_spec({"$": 0})).replace('{"$": 0}', inner)


@pytest.mark.parametrize("levels", [200, 900, 3000])
def test_a_deep_crd_schema_is_one_finding(levels: int, charts: Path) -> None:
    _chart(charts, _deep(levels))
    report, text = _report(charts, {"x": {"x": 1}})
    found = [f for f in report.findings if "deep" in f.message or "nested" in f.message]
    assert len(found) == 1, text


def test_a_self_referencing_schema_with_a_deep_value_ends(charts: Path) -> None:
    schema = _spec({"$ref": "#/definitions/n"}, definitions={
        "n": {"type": "object", "properties": {"x": {"$ref": "#/definitions/n"}}}
    })  # fmt: skip
    _chart(charts, schema)
    value: Any = 1
    for _ in range(90):
        value = {"x": value}
    _report(charts, value)


CATASTROPHIC = [
    ("^(a+)+$", "a" * 40 + "!"),
    ("^(a|aa)+$", "a" * 60 + "!"),
    ("^(a|a?)+$", "a" * 40 + "!"),
    ("^(\\w+\\s?)*$", "word " * 12 + "!"),
    ("^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+$", "a" * 40 + "!"),
    ("(x+x+)+y", "x" * 40),
]


@pytest.mark.parametrize(("pattern", "value"), CATASTROPHIC)
def test_a_catastrophic_pattern_is_one_finding_within_seconds(
    pattern: str, value: str, charts: Path
) -> None:
    _chart(charts, _spec({"type": "string", "pattern": pattern}))
    report, text = _report(charts, value, seconds=20)
    found = _schema_findings(report)
    assert len(found) == 1 and "pattern" in found[0], text


def test_an_ordinary_pattern_still_checks(charts: Path) -> None:
    _chart(charts, _spec({"type": "string", "pattern": "^[a-z]+$"}))
    report, text = _report(charts, "ABC")
    found = _schema_findings(report)
    assert len(found) == 1 and "does not match" in found[0], text
    report, text = _report(charts, "abc")
    assert _schema_findings(report) == [], text
