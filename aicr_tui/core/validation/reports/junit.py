"""JUnit XML from the same CTRF data: one <testsuite> per phase, one <testcase> per check.

Mapping of our verdicts (``extra.verdict``; the CTRF status when it is absent): failed →
<failure>, not measured → <error type="not measured"> (the gate holds no result, which a CI
must not read as a pass), not applicable → <skipped type="not applicable">, a check skipped
on the user's request (``--no-cluster``, ``--skip-check``) → <skipped type="skipped"> with
the reason in its message; every case also
carries a ``verdict`` property. The check's evidence lines go to <system-out>. Text from
the cluster is data: terminal escape sequences are removed and characters XML 1.0 cannot
hold (C0 controls other than tab/newline/CR, lone surrogates, U+FFFE/U+FFFF) are dropped,
so the file always parses; a suite or case name is one line (a line break becomes a space).
Times are seconds from the events, so a replay reproduces the file exactly.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.core.validation.events import PHASES
from aicr_tui.core.validation.verdicts import (
    FAILED,
    NOT_APPLICABLE,
    NOT_MEASURED,
    PASSED,
    SKIPPED,
    skipped_on_request,
)

_PHASE_ORDER = PHASES
_FROM_CTRF = {"passed": PASSED, "failed": FAILED, "skipped": NOT_APPLICABLE, "other": NOT_MEASURED}

# Characters XML 1.0 cannot carry, even escaped.
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object, *, multiline: bool = True) -> str:
    """``text`` as something XML 1.0 can hold: escape sequences removed, illegal chars dropped.

    ``multiline=False`` for a name (a suite, a test case): a line break becomes a space, so
    a name shown in a CI's list cannot start a line of its own."""
    return _XML_ILLEGAL.sub("", safe_text(str(text), multiline=multiline))


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def _verdict(test: dict[str, Any]) -> str:
    """The case's verdict; ``skipped`` for a check skipped on the user's request."""
    extra = test.get("extra") or {}
    verdict = extra.get("verdict") if isinstance(extra, dict) else None
    if isinstance(verdict, str) and verdict in _FROM_CTRF.values():
        return SKIPPED if skipped_on_request(verdict, extra) else verdict
    return _FROM_CTRF.get(str(test.get("status")), NOT_MEASURED)


def render_junit(report: dict[str, Any]) -> str:
    results = report["results"]
    tests: list[dict[str, Any]] = results["tests"]
    phases = sorted(
        {t["suite"][0] for t in tests},
        key=lambda p: (_PHASE_ORDER.index(p) if p in _PHASE_ORDER else len(_PHASE_ORDER), p),
    )
    verdicts = [_verdict(t) for t in tests]
    root = ET.Element(
        "testsuites",
        {
            "name": "aicr-tui validate",
            "tests": str(len(tests)),
            "failures": str(verdicts.count(FAILED)),
            "errors": str(verdicts.count(NOT_MEASURED)),
            "skipped": str(verdicts.count(NOT_APPLICABLE) + verdicts.count(SKIPPED)),
            "time": _seconds(sum(int(t["duration"]) for t in tests)),
            "timestamp": xml_text(report["timestamp"]),
        },
    )
    for phase in phases:
        cases = [(t, v) for t, v in zip(tests, verdicts, strict=True) if t["suite"][0] == phase]
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": xml_text(phase, multiline=False),
                "tests": str(len(cases)),
                "failures": str(sum(v == FAILED for _, v in cases)),
                "errors": str(sum(v == NOT_MEASURED for _, v in cases)),
                "skipped": str(sum(v in (NOT_APPLICABLE, SKIPPED) for _, v in cases)),
                "time": _seconds(sum(int(t["duration"]) for t, _ in cases)),
                "timestamp": xml_text(report["timestamp"]),
            },
        )
        for t, verdict in cases:
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "name": xml_text(t["name"], multiline=False),
                    "classname": xml_text(f"aicr.{phase}", multiline=False),
                    "time": _seconds(int(t["duration"])),
                },
            )
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", {"name": "verdict", "value": verdict})
            message = xml_text(t.get("message", ""))
            if verdict == FAILED:
                ET.SubElement(
                    case, "failure", {"message": message, "type": "failed"}
                ).text = message
            elif verdict == NOT_MEASURED:
                ET.SubElement(
                    case, "error", {"message": message, "type": NOT_MEASURED}
                ).text = message
            elif verdict in (NOT_APPLICABLE, SKIPPED):
                ET.SubElement(case, "skipped", {"message": message, "type": verdict})
            if t.get("stdout"):
                ET.SubElement(case, "system-out").text = "\n".join(
                    xml_text(line) for line in t["stdout"]
                )
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
