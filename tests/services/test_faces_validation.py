"""The CLI and the wizard build one validation session: same inputs, same request, same run.

``aicr-tui validate`` (flags -> ``session_from_args``) and the dashboard's live source
(``LiveRunSource.session``) both go through ``core.services.validation``; the dashboard
used to drop --namespace, --skip-check and --fail-fast. No cluster: ``--no-cluster``.
"""

from __future__ import annotations

import asyncio
from dataclasses import fields

from aicr_tui.cli import build_parser
from aicr_tui.commands.validate import load_inputs, session_from_args
from core.documents.snapshot import load_snapshot
from core.recipe.loading import load_recipe
from core.services.validation import build_request, run_session
from core.validation.catalog import load_validator_catalog
from core.validation.events import CheckFinished, Event
from core.validation.stream import EventStream
from screens.validate_dashboard import LiveRunSource
from tests.conftest import SAMPLES

RECIPE = SAMPLES / "validation" / "aks-h100-training.recipe.yaml"
SNAPSHOT = SAMPLES / "snapshots" / "aks-h100-install.yaml"


def _both(skip: str) -> tuple[object, object]:
    argv = [
        "validate",
        "--recipe",
        str(RECIPE),
        "--snapshot",
        str(SNAPSHOT),
        "--no-cluster",
        "--namespace",
        "aicr-check",
        "--skip-check",
        skip,
        "--fail-fast",
        "--phase",
        "deployment",
        "--phase",
        "conformance",
    ]
    args = build_parser(argv).parse_args(argv)
    cli = session_from_args(args, *load_inputs(args))
    wizard = LiveRunSource(
        recipe=load_recipe(str(RECIPE)),
        snapshot=load_snapshot(str(SNAPSHOT)),
        phases=("deployment", "conformance"),
        no_cluster=True,
        recipe_source=str(RECIPE),
        namespace="aicr-check",
        skip_checks=(skip,),
        fail_fast=True,
    ).session()
    return cli, wizard


def _a_conformance_check() -> str:
    catalog = load_validator_catalog()
    return next(e.name for e in catalog.validators if e.phase == "conformance")


def test_cli_and_wizard_build_the_same_request() -> None:
    cli, wizard = _both(_a_conformance_check())
    a, b = build_request(cli), build_request(wizard)  # type: ignore[arg-type]
    for f in fields(a):
        if f.name in ("environ", "catalog", "run_id", "started_ms"):
            continue
        assert getattr(a, f.name) == getattr(b, f.name), f.name
    assert a.namespace == "aicr-check" and a.fail_fast and len(a.skip_checks) == 1
    assert "deployment" in a.phases and "conformance" in a.phases
    assert "performance" not in a.phases
    assert a.catalog.validators == b.catalog.validators


def test_cli_and_wizard_sessions_run_to_the_same_events() -> None:
    cli, wizard = _both(_a_conformance_check())

    def run(session: object) -> list[tuple[str, str, str]]:
        events: list[Event] = []
        stream = EventStream()
        stream.add_sink(events.append)
        asyncio.run(run_session(session, stream))  # type: ignore[arg-type]
        return [(e.phase, e.check, e.status) for e in events if isinstance(e, CheckFinished)]

    a, b = run(cli), run(wizard)
    assert a == b
    assert a, "a no-cluster run still finishes every declared check"
