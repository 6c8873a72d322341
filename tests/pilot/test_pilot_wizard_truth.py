"""The wizard never contradicts what it shows (issue 15): one capture, the CLI's verdict,
honest replays.

The order test opens the shipped files in every order and, after each one, compares what
the wizard shows (header, readings, verdict) with its state and with ``aicr-tui recipe``
run in a subprocess on the same snapshot and the same stated criteria.
"""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

from aicr_tui.core.documents.recipe_result import render_recipe
from aicr_tui.core.documents.snapshot import render_snapshot
from aicr_tui.screens.capture import CaptureScreen
from aicr_tui.screens.recipe import RecipeScreen
from tests.conftest import SAMPLES, run_cli
from tests.pilot.wizard_helpers import pick_sample, settle, wizard_running

CAPTURES = SAMPLES / "captures"
SNAPS = SAMPLES / "snapshots"
AKS_MIXED = str(CAPTURES / "aks-pools-mixed.json")
AKS_NONE_SNAPSHOT = str(SNAPS / "aks-h100-none.yaml")
OKE_ADDONS = str(CAPTURES / "oke-addons-active.json")
DRIVER = ("K8s", "aks-gpu-pools", "gpu-driver")


def reading(snapshot, mtype: str, sub: str, key: str):  # type: ignore[no-untyped-def]
    found = snapshot.subtype(mtype, sub)
    return None if found is None else found.data.get(key)


def cli_flags(state) -> list[str]:  # type: ignore[no-untyped-def]
    """The recipe flags that state what the wizard did not take from the capture."""
    flags: list[str] = []
    for field, value in sorted(state.criteria.items()):
        if field in state.derived or not value or value == "any":
            continue
        flags += [f"--{field}", value]
    if state.profile_value:
        flags += ["--profile", f"gpuStack={state.profile_value}"]
    if "oke_addons" in state.capture_files:
        flags += ["--oke-addons", state.capture_files["oke_addons"]]
    return flags


def shown_text(screen, selector: str) -> str:  # type: ignore[no-untyped-def]
    return str(screen.query_one(selector).render())


async def open_and_qualify(pilot, path: str) -> dict:  # type: ignore[no-untyped-def]
    app = pilot.app
    if not isinstance(app.screen, CaptureScreen):
        app.show_capture()
        await settle(pilot)
    screen = app.screen
    screen.open_file(path)
    await settle(pilot)
    state = app.state
    assert not state.last_error, state.last_error
    # header and readings show this capture and nothing of an earlier one
    label = shown_text(screen, "#capture-label")
    for file in state.capture_files.values():
        assert Path(file).name in label
    readings = screen.query_one("#capture-readings")
    shown = {
        readings.get_row_at(i)[0]: readings.get_row_at(i)[1] for i in range(readings.row_count)
    }
    driver = reading(state.snapshot, *DRIVER)
    assert shown.get("K8s.aks-gpu-pools.gpu-driver") == driver
    await pilot.press("n")
    await settle(pilot, 3)
    recipe = app.screen
    assert isinstance(recipe, RecipeScreen)
    verdict = state.verdict
    line = shown_text(recipe, "#verdict-line")
    assert line.startswith("PASS" if verdict.ok else "FAIL"), line
    if not verdict.ok and driver is not None and "gpu-driver" in state.last_error:
        assert f"observed {driver}" in state.last_error
    return {
        "files": dict(state.capture_files),
        "snapshot": render_snapshot(state.snapshot),
        "flags": cli_flags(state),
        "ok": bool(verdict.ok),
        "error": state.last_error,
        "recipe": render_recipe(verdict.recipe, "yaml") if verdict.ok else "",
        "criteria": dict(state.criteria),
    }


def expected_files(order: tuple[str, ...], upto: int) -> dict[str, str]:
    """What the capture holds after opening ``order[: upto + 1]``: a snapshot replaces it,
    a dump of the capture's service joins it, a dump of another service starts anew."""
    kinds = {AKS_MIXED: ("aks_pools", "aks"), OKE_ADDONS: ("oke_addons", "oke")}
    files: dict[str, str] = {}
    service = ""
    for path in order[: upto + 1]:
        if path == AKS_NONE_SNAPSHOT:
            files, service = {"snapshot": path}, "aks"
            continue
        kind, svc = kinds[path]
        files = {**files, kind: path} if files and svc == service else {kind: path}
        service = svc
    return files


async def test_files_opened_in_every_order_agree_with_the_cli(tmp_path) -> None:
    observed: list[dict] = []
    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        for order in permutations((AKS_MIXED, AKS_NONE_SNAPSHOT, OKE_ADDONS)):
            app.state.user_criteria = set()
            for i, path in enumerate(order):
                seen = await open_and_qualify(pilot, path)
                assert seen["files"] == expected_files(order, i), (order, i)
                observed.append(seen)
                if path == OKE_ADDONS:
                    assert seen["criteria"]["service"] == "oke"
                if seen["files"] == {"snapshot": AKS_NONE_SNAPSHOT}:
                    # the reported case: the snapshot replaces a Mixed capture outright
                    assert "Mixed" not in seen["snapshot"]
                    assert "observed None" in seen["error"]
    # the CLI on the same snapshot and stated criteria, once per distinct input
    results: dict[tuple[str, tuple[str, ...]], tuple[int, str, str]] = {}
    for n, seen in enumerate(observed):
        key = (seen["snapshot"], tuple(seen["flags"]))
        if key not in results:
            snap = tmp_path / f"snap-{n}.yaml"
            snap.write_text(seen["snapshot"])
            proc = run_cli("recipe", "--snapshot", str(snap), *seen["flags"])
            results[key] = (proc.returncode, proc.stdout, proc.stderr)
        code, out, err = results[key]
        assert (code == 0) == seen["ok"], (seen["files"], seen["flags"], err)
        if seen["ok"]:
            assert out == seen["recipe"]
        else:
            assert err.splitlines() == [f"aicr-tui: error: {seen['error']}"]
    assert len(results) >= 3


async def test_an_added_dump_says_so_and_c_keeps_only_it(tmp_path) -> None:
    async with wizard_running(tmp_path) as (app, pilot):
        screen = app.screen
        screen.open_file(AKS_NONE_SNAPSHOT)
        await settle(pilot)
        assert "it replaces the previous capture" not in shown_text(screen, "#capture-status")
        screen.open_file(AKS_MIXED)
        await settle(pilot)
        status = shown_text(screen, "#capture-status")
        assert "added to the current capture" in status and "c: only this file" in status
        assert app.state.capture_files == {"snapshot": AKS_NONE_SNAPSHOT, "aks_pools": AKS_MIXED}
        assert app.state.snapshot.reading(*DRIVER) == "Mixed"
        assert app.state.snapshot.reading("K8s", "server", "version")  # from the snapshot
        await pilot.press("c")
        await settle(pilot)
        assert app.state.capture_files == {"aks_pools": AKS_MIXED}
        assert reading(app.state.snapshot, "K8s", "server", "version") is None
        assert app.state.last_change == "new"
        screen.open_file(AKS_NONE_SNAPSHOT)
        await settle(pilot)
        assert "it replaces the previous capture" in shown_text(screen, "#capture-status")
        assert app.state.snapshot.reading(*DRIVER) == "None"


async def test_a_criteria_choice_survives_a_new_capture(tmp_path) -> None:
    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        app.screen.open_file(AKS_NONE_SNAPSHOT)
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot, 3)
        app.screen.query_one("#sel-intent").value = "inference"
        await settle(pilot, 3)
        assert "intent" in app.state.user_criteria
        app.show_capture()
        await settle(pilot)
        app.screen.open_file(OKE_ADDONS)
        await settle(pilot)
        assert app.state.criteria["service"] == "oke"  # from the capture
        assert app.state.criteria["intent"] == "inference"  # the user's choice wins


# --------------------------------------------------------------------------- replays
async def _pick(pilot, key: str) -> None:  # type: ignore[no-untyped-def]
    pilot.app.show_capture()
    await settle(pilot)
    await pick_sample(pilot, key)


async def _validate(pilot):  # type: ignore[no-untyped-def]
    await pilot.press("n")
    await settle(pilot, 3)
    await pilot.press("v")
    await settle(pilot)
    return pilot.app.screen


async def test_v_plays_the_recording_of_this_recipe_or_says_it_is_another(tmp_path) -> None:
    from aicr_tui.screens.validate_dashboard import ValidationDashboardScreen

    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        # a failing verdict: v refuses like b
        await _pick(pilot, "aks-mixed")
        screen = await _validate(pilot)
        assert isinstance(screen, RecipeScreen) and app.state.recipe is None
        # the training recipe: its own recording
        await _pick(pilot, "aks-install")
        screen = await _validate(pilot)
        assert isinstance(screen, ValidationDashboardScreen)
        assert screen.source.path.name == "aks-h100-training-passed.jsonl"
        assert screen.source.note == ""
        await pilot.press("escape")
        await settle(pilot)
        # inference on dynamo: the dynamo recording
        app.screen.query_one("#sel-intent").value = "inference"
        await settle(pilot, 3)
        app.screen.query_one("#sel-platform").value = "dynamo"
        await settle(pilot, 3)
        assert app.state.recipe is not None, app.state.last_error
        await pilot.press("v")
        await settle(pilot)
        assert app.screen.source.path.name == "aks-h100-inference-dynamo-passed.jsonl"
        await pilot.press("escape")
        await settle(pilot)
        # OKE: no recording of its own, and the dashboard says so
        await _pick(pilot, "oke-active")
        screen = await _validate(pilot)
        assert isinstance(screen, ValidationDashboardScreen)
        assert "recorded demo data for another recipe" in screen.source.note
        assert "service=aks" in screen.source.note
        assert "another recipe" in screen.source.describe()


async def test_slash_filters_the_pane_that_has_focus(tmp_path) -> None:
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "oke-active")
        samples = app.screen.query_one("#capture-samples")
        readings = app.screen.query_one("#capture-readings")
        total = readings.row_count
        samples.focus()
        await pilot.press("slash", *"legacy")
        await settle(pilot)
        assert [o.id for o in samples.options] == ["oke-legacy-active"]
        assert readings.row_count == total  # not the readings
        await pilot.press("escape")
        await settle(pilot)
        assert samples.option_count == len(app.state.samples)
        readings.focus()
        await pilot.press("slash", *"nvidia-gpu-plugin")
        await settle(pilot)
        assert readings.row_count == 1
        assert samples.option_count == len(app.state.samples)


def test_reports_go_to_the_documented_reports_dir(monkeypatch, tmp_path) -> None:
    from aicr_tui.screens.state import default_reports_dir

    monkeypatch.delenv("AICR_TUI_REPORTS_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_reports_dir() == tmp_path / "state" / "aicr-tui" / "reports"
    monkeypatch.setenv("AICR_TUI_REPORTS_DIR", str(tmp_path / "mine"))
    assert default_reports_dir() == tmp_path / "mine"
