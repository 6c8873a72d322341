"""The wizard's validation dashboard streams a live run against the real API server (Pilot),
and leaving it mid-run removes what the run created (issue 24, item 4)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import livevalid_support as S
from tests.cluster.conftest import Cluster
from tests.pilot.validate_fixtures import ScreenHost, wait_until

DASH_NS = f"{S.PREFIX}dash"


@pytest.fixture(scope="module")
def dash_deployed(
    cluster: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, Any], Path]]:
    work = tmp_path_factory.mktemp("livevalid-dash")
    recipe, doc = S.prefixed_recipe(work)
    data = S.short_catalog(work / "data", {"check-nvidia-smi": "8s"})
    made: list[str] = []
    try:
        S.ensure_nodes(cluster, made)
        cluster.apply(S.deployed_state(doc), server_side=True)
        S.wait_deployed(cluster, doc)
        yield recipe, doc, data
    finally:
        S.delete_namespaces(cluster, [*S.namespaces_of(doc), DASH_NS])
        cluster.delete_nodes(made)


def _status(screen: Any, key: str) -> str:
    row = screen.model.rows.get(key)
    return "" if row is None else str(row.status)


def _source(cluster: Cluster, recipe: Path, data: Path | None, phases: tuple[str, ...]) -> Any:
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.screens.validate_dashboard import LiveRunSource

    return LiveRunSource(
        load_recipe(str(recipe)),
        snapshot=load_snapshot(str(S.SNAPSHOT)),
        phases=phases,
        kubeconfig=str(cluster.kubeconfig),
        data_dir=data,
        recipe_source=str(recipe),
        namespace=DASH_NS,
    )


async def test_the_dashboard_streams_a_live_run_from_the_real_api(
    cluster: Cluster, dash_deployed: tuple[Path, dict[str, Any], Path]
) -> None:
    from aicr_tui.screens.validate_dashboard import ValidationDashboardScreen

    recipe, _doc, data = dash_deployed
    source = _source(cluster, recipe, data, ("deployment",))
    app = ScreenHost(lambda: ValidationDashboardScreen(source))
    async with app.run_test(size=(120, 40)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        # while the nvidia-smi probe waits on a kwok pod, the earlier rows are already in
        await wait_until(
            pilot,
            lambda: _status(screen, "deployment/check-nvidia-smi") == "running",
            timeout=60,
        )
        assert _status(screen, "deployment/expected-resources") == "passed"
        await wait_until(
            pilot, lambda: screen.model.state == "finished" and screen.painted_to_end, timeout=120
        )
        assert _status(screen, "deployment/operator-health") == "passed"
        assert _status(screen, "deployment/gpu-operator-version") == "passed"
        # kwok runs no nvidia-smi: the probe pod never finishes, which is not measured (issue
        # 32: a probe that never ends is reported with its reason, never as a failed GPU)
        assert _status(screen, "deployment/check-nvidia-smi") == "not measured"
        summary = screen.model.summary
        assert summary.exit_code == 8 and summary.failed == 0 and summary.not_measured == 1
        # the screen's own report (what "s" saves) is the CLI's CTRF shape
        report = screen._report.report()
        names = {t["name"]: t["status"] for t in report["results"]["tests"]}
        assert names["expected-resources"] == "passed" and names["check-nvidia-smi"] == "other"
    assert DASH_NS not in cluster.names("namespaces")
    assert S.labelled_leftovers(cluster) == []


async def test_leaving_the_dashboard_mid_run_removes_the_probe_and_the_namespace(
    cluster: Cluster, dash_deployed: tuple[Path, dict[str, Any], Path]
) -> None:
    """Escape, then yes, while secure-accelerator-access waits on its probe pod (the
    shipped 10-minute budget): the run is cancelled and cleans up like Ctrl-C."""
    from aicr_tui.screens.validate_dashboard import ValidationDashboardScreen
    from aicr_tui.screens.widgets.bundle_dialogs import ConfirmModal

    recipe, _doc, _data = dash_deployed
    source = _source(cluster, recipe, None, ("conformance",))
    app = ScreenHost(lambda: ValidationDashboardScreen(source))

    def probe_exists() -> bool:
        return DASH_NS in cluster.names("namespaces") and bool(
            cluster.names(
                "pods", DASH_NS, selector="aicr.nvidia.com/validator=secure-accelerator-access"
            )
        )

    async with app.run_test(size=(120, 40)) as pilot:
        screen: ValidationDashboardScreen = app.shown
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while not await asyncio.to_thread(probe_exists):
            assert loop.time() < deadline, "the probe pod never appeared"
            await pilot.pause(0.5)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is not screen, timeout=30)
        assert screen._cancel.is_set()
        # the run's own thread finishes its cleanup after the screen has gone
        deadline = loop.time() + 150
        while DASH_NS in await asyncio.to_thread(cluster.names, "namespaces"):
            assert loop.time() < deadline, f"{DASH_NS} is still there after leaving the run"
            await pilot.pause(0.5)
    assert S.labelled_leftovers(cluster) == []
