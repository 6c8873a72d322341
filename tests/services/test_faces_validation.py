"""The CLI and the wizard build one validation session: same inputs, same request, same run.

``aicr-tui validate`` (flags -> ``session_from_args``) and the dashboard's live source
(``LiveRunSource.session``) both go through ``aicr_tui.core.services.validation``; the dashboard
used to drop --namespace, --skip-check and --fail-fast. No cluster: ``--no-cluster``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import fields, replace
from pathlib import Path

from aicr_tui.cli import build_parser
from aicr_tui.commands.validate import load_inputs, session_from_args
from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.recipe.loading import load_recipe
from aicr_tui.core.services.validation import build_request, run_session
from aicr_tui.core.validation.catalog import load_validator_catalog
from aicr_tui.core.validation.events import CheckFinished, Event, RunFinished, RunStarted
from aicr_tui.core.validation.isolation import unique_namespace
from aicr_tui.core.validation.stream import EventStream
from aicr_tui.screens.validate_dashboard import LiveRunSource
from tests.conftest import SAMPLES
from tests.unit.live_fakes import write_kubeconfig
from tests.unit.test_validation_kube_executor import RECIPE as KUBE_RECIPE
from tests.unit.test_validation_kube_executor import FakeApiServer

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


def test_without_a_namespace_the_cli_and_the_wizard_ask_for_one_of_the_runs_own() -> None:
    argv = ["validate", "--recipe", str(RECIPE), "--snapshot", str(SNAPSHOT), "--no-cluster"]
    args = build_parser(argv).parse_args(argv)
    cli = session_from_args(args, *load_inputs(args))
    wizard = LiveRunSource(recipe=load_recipe(str(RECIPE)), no_cluster=True).session()
    assert cli.namespace == wizard.namespace == ""
    quiet = {"AICR_NAMESPACE": ""}
    assert build_request(replace(cli, environ=quiet)).namespace == ""
    assert build_request(replace(wizard, environ=quiet)).namespace == ""
    # $AICR_NAMESPACE names it for both faces, as -n does
    named = {"AICR_NAMESPACE": "team-a"}
    assert build_request(replace(wizard, environ=named)).namespace == "team-a"


def test_the_wizards_live_run_works_in_a_namespace_of_its_own_under_a_lease(
    tmp_path: Path,
) -> None:
    """The dashboard's live source against the stand-in API server on 127.0.0.1
    (tests.unit.test_validation_kube_executor.FakeApiServer): the run creates
    aicr-validation-<its token>, takes its lease there, and removes the namespace at the end;
    nothing goes to the fixed aicr-validation namespace the dashboard used to run in."""
    with FakeApiServer() as api:
        source = LiveRunSource(
            KUBE_RECIPE,
            phases=("deployment",),
            kubeconfig=str(write_kubeconfig(tmp_path / "kubeconfig", api.host)),
        )

        async def collect() -> list[Event]:
            return [e async for e in source.events(threading.Event())]

        events = asyncio.run(collect())
    started = next(e for e in events if isinstance(e, RunStarted))
    ns = unique_namespace("aicr-validation", started.run_id)
    assert ns != "aicr-validation"
    assert ("POST", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases") in api.requests
    assert ("POST", f"/api/v1/namespaces/{ns}/pods") in api.requests
    assert ("DELETE", f"/api/v1/namespaces/{ns}") in api.requests
    assert not [p for _, p in api.requests if "/namespaces/aicr-validation/" in p]
    assert isinstance(events[-1], RunFinished) and events[-1].exit_code == 0
