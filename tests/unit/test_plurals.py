"""Plurals (issue 34, item 7): "1 object", never "1 objects"."""

from __future__ import annotations

from aicr_tui.core.verify.model import ComponentReport, VerifyReport


def test_verify_report_says_one_object() -> None:
    report = VerifyReport(
        components=[
            ComponentReport("a", "001-a", "verified", objects=1),
            ComponentReport("b", "002-b", "verified", objects=3),
        ],
        kubernetes="1.34",
        engine="test",
    )
    text = report.render_text()
    assert "001-a: verified; 1 object, no findings" in text
    assert "002-b: verified; 3 objects, no findings" in text
