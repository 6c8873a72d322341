"""JUnit XML from the same CTRF data: one <testsuite> per phase, one <testcase> per check.

Mapping: failed → <failure>, other (could not measure / did not run) → <error>, skipped →
<skipped>; the check's evidence lines go to <system-out>. Times are seconds from the
events, so a replay reproduces the file exactly.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

_PHASE_ORDER = ("readiness", "deployment", "conformance", "performance")


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def render_junit(report: dict[str, Any]) -> str:
    results = report["results"]
    tests: list[dict[str, Any]] = results["tests"]
    phases = sorted(
        {t["suite"][0] for t in tests},
        key=lambda p: (_PHASE_ORDER.index(p) if p in _PHASE_ORDER else len(_PHASE_ORDER), p),
    )
    summary = results["summary"]
    root = ET.Element(
        "testsuites",
        {
            "name": "aicr-tui validate",
            "tests": str(summary["tests"]),
            "failures": str(summary["failed"]),
            "errors": str(summary["other"]),
            "skipped": str(summary["skipped"]),
            "time": _seconds(sum(int(t["duration"]) for t in tests)),
            "timestamp": report["timestamp"],
        },
    )
    for phase in phases:
        cases = [t for t in tests if t["suite"][0] == phase]
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": phase,
                "tests": str(len(cases)),
                "failures": str(sum(t["status"] == "failed" for t in cases)),
                "errors": str(sum(t["status"] == "other" for t in cases)),
                "skipped": str(sum(t["status"] == "skipped" for t in cases)),
                "time": _seconds(sum(int(t["duration"]) for t in cases)),
                "timestamp": report["timestamp"],
            },
        )
        for t in cases:
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "name": t["name"],
                    "classname": f"aicr.{phase}",
                    "time": _seconds(int(t["duration"])),
                },
            )
            message = t.get("message", "")
            if t["status"] == "failed":
                ET.SubElement(
                    case, "failure", {"message": message, "type": "failed"}
                ).text = message
            elif t["status"] == "other":
                ET.SubElement(case, "error", {"message": message, "type": "other"}).text = message
            elif t["status"] == "skipped":
                ET.SubElement(case, "skipped", {"message": message})
            if t.get("stdout"):
                ET.SubElement(case, "system-out").text = "\n".join(t["stdout"])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
