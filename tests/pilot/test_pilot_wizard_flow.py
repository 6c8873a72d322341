"""The demo walked with the keyboard alone: capture -> recipe (fail, then pass) -> bundle -> replay."""

from __future__ import annotations

from aicr_tui.screens.capture import CaptureScreen
from aicr_tui.screens.recipe import RecipeScreen
from tests.pilot.wizard_helpers import escape_to, pick_sample, settle, wait_until, wizard_running


async def test_demo_flow_from_capture_to_replayed_validation(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        assert isinstance(app.screen, CaptureScreen)

        # 1. capture: --gpu-driver none pools, the second entry of the list
        assert app.focused is app.screen.query_one("#capture-samples")
        await pilot.press("down", "enter")
        await settle(pilot)
        state = app.state
        assert state.sample_key == "aks-none"
        assert [r.mode for r in state.rows if r.mode != "(not a GPU pool)"] == ["None", "None"]
        assert state.snapshot.reading("K8s", "aks-gpu-pools", "gpu-driver") == "None"

        # 2. recipe: the default azure-managed fails closed, naming the observed state
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        assert state.verdict is not None and not state.verdict.ok
        assert state.recipe is None
        assert "expected Install" in state.last_error and "None" in state.last_error
        failed = [c for c in state.verdict.checks if c.status == "failed"]
        assert [c.name for c in failed] == ["K8s.aks-gpu-pools.gpu-driver"]
        trouble = screen.trouble_text()
        assert "s: switch to gpuStack=operator-managed" in trouble
        assert "Pools read None under azure-managed" in trouble

        # the remedy as an action: switch the profile value -> passes
        await pilot.press("s")
        await settle(pilot)
        assert state.profile_value == "operator-managed"
        assert state.verdict.ok and state.recipe is not None
        assert state.recipe.metadata.selectedProfile.value == "operator-managed"
        assert screen.trouble_text() == ""

        # side-by-side diff of what the other value would change
        await pilot.press("d")
        await settle(pilot)
        changed = {(c, p): (b, a) for c, p, b, a in screen.diff_rows}
        assert changed[("gpu-operator", "driver.enabled")] == ("true", "false")
        assert changed[("nvidia-dra-driver-gpu", "nvidiaDriverRoot")] == ("/run/nvidia/driver", "/")

        # 3. bundle preview, write with the keyboard
        await pilot.press("b")
        await settle(pilot, 3)
        bundle = app.screen
        assert type(bundle).__name__ == "BundlePreviewScreen"
        await wait_until(pilot, lambda: bundle.plan is not None)
        assert not bundle.plan.errors
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: state.bundle_dir is not None)
        out = tmp_path / "bundles"
        assert state.bundle_dir == out and any(out.iterdir())

        # 4. back to the recipe, replay the recorded validation run
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RecipeScreen)
        await pilot.press("v")
        await pilot.pause()
        dash = app.screen
        assert type(dash).__name__ == "ValidationDashboardScreen"
        await wait_until(pilot, lambda: dash._ended, timeout=30)
        assert dash.events_applied > 0

        # esc back through the steps to the capture screen, q quits
        await pilot.press("escape")
        await pilot.pause()
        await escape_to(pilot, CaptureScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None)


async def test_failing_then_passing_on_oke(tmp_path):
    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        await pick_sample(pilot, "oke-legacy-active")
        await pilot.press("n")
        await settle(pilot)
        state = app.state
        assert state.criteria["service"] == "oke"
        # default oci-managed: the add-on is absent -> fails
        assert not state.verdict.ok
        assert "K8s.oke-addons.nvidia-gpu-plugin" in state.last_error
        # operator-managed would fail too (the legacy DaemonSet is active), so `s` is not
        # offered and does nothing
        assert "s: switch" not in app.screen.trouble_text()
        await pilot.press("s")
        await settle(pilot)
        assert state.profile_value is None
        # chosen in the select anyway: it fails, now on the legacy reading
        app.screen.query_one("#sel-profile").value = "operator-managed"
        await settle(pilot)
        assert state.profile_value == "operator-managed"
        assert not state.verdict.ok
        assert "oke-legacy-plugin" in state.last_error
        assert "Legacy nvidia-gpu-device-plugin DaemonSet is active" in app.screen.trouble_text()
        # load another capture (l), the add-on absent without legacy plugin -> passes
        await pilot.press("l")
        await settle(pilot)
        await pick_sample(pilot, "oke-absent")
        state.profile_value = "operator-managed"
        await pilot.press("n")
        await settle(pilot)
        assert state.verdict.ok, state.last_error
