"""Issue 33 item 5: where upstream's codes and statuses differ from ours.

``query`` of a path the recipe does not hold exits 3 (NOT_FOUND), a malformed selector 2;
a check skipped on request (``--skip-check``) is CTRF/JUnit ``skipped`` with its reason,
while a check that tried and could not measure stays ``other`` / not measured."""

from __future__ import annotations

import pytest

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.recipe.query import select
from aicr_tui.core.validation.events import CheckFinished, CheckStarted, RunStarted
from aicr_tui.core.validation.reports.ctrf import ctrf_from_events
from aicr_tui.core.validation.reports.junit import render_junit

AKS = ["--service", "aks", "--accelerator", "h100", "--intent", "training"]
TREE = {"components": {"gpu-operator": {"values": {"driver": {"enabled": True}}}}, "order": [1]}


@pytest.mark.parametrize(
    "selector",
    ["components.nope", "components.gpu-operator.values.driver.enabled.x", "order.5", "order.x"],
)
def test_a_path_the_tree_does_not_hold_is_not_found(selector: str) -> None:
    with pytest.raises(AicrError) as info:
        select(TREE, selector)
    assert info.value.code is ErrorCode.NOT_FOUND and info.value.exit_code == 3


def test_a_malformed_selector_stays_an_invalid_request() -> None:
    with pytest.raises(AicrError) as info:
        select(TREE, "components..x")
    assert info.value.exit_code == 2


def test_query_of_a_missing_key_exits_3(cli) -> None:  # type: ignore[no-untyped-def]
    missing = cli("query", *AKS, "--selector", "components.no-such-component")
    assert missing.returncode == 3, missing.stderr
    (line,) = missing.stderr.splitlines()
    assert line.startswith("aicr-tui: error: [NOT_FOUND]") and "no-such-component" in line
    found = cli("query", *AKS, "--selector", "criteria.service")
    assert (found.returncode, found.stdout) == (0, "aks\n")
    bad = cli("query", *AKS, "--selector", "criteria..service")
    assert bad.returncode == 2


def _finished(check: str, message: str, **extra: str) -> list[object]:
    return [
        CheckStarted(0.1, "deployment", check, 60.0, ""),
        CheckFinished(0.2, "deployment", check, "not measured", message, 5, extra),
    ]


def test_skipped_on_request_is_skipped_and_a_failed_measurement_stays_other() -> None:
    events = [
        RunStarted(0.0, "run", 1_000, ("deployment",), "cluster", "recipe", "0", False),
        *_finished("a", "withheld by --skip-check", skipReason="named-in-skip-checks"),
        *_finished("b", "NCCL launcher did not complete within 15s"),
    ]
    report = ctrf_from_events(events)  # type: ignore[arg-type]
    tests = {t["name"]: t for t in report["results"]["tests"]}
    assert tests["a"]["status"] == "skipped" and tests["a"]["message"].startswith("withheld")
    assert tests["b"]["status"] == "other"
    assert {t["extra"]["verdict"] for t in tests.values()} == {"not measured"}
    summary = report["results"]["summary"]
    assert (summary["skipped"], summary["other"]) == (1, 1)
    xml = render_junit(report)
    assert 'errors="1"' in xml and 'skipped="1"' in xml
    assert '<skipped message="withheld by --skip-check" type="skipped"' in xml
    assert '<error message="NCCL launcher did not complete within 15s"' in xml
