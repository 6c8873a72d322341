"""Capture screen: samples, files typed or picked, bad files inline, filter, live fetch errors."""

from __future__ import annotations

from aicr_tui.core.recipe.troubleshooting import guide_entry
from aicr_tui.screens.capture import CaptureScreen
from tests.conftest import SAMPLES
from tests.pilot.wizard_helpers import demo_app, pick_sample, settle, wait_until, wizard_running

CAPTURES = SAMPLES / "captures"


async def type_text(pilot, text: str) -> None:
    await pilot.press(*list(text))


def check_sample_list(app):
    """Every shipped capture is listed, in walking order, and its files exist."""
    keys = [s.key for s in app.state.samples]
    assert keys == [
        "aks-install",
        "aks-none",
        "aks-mixed",
        "aks-managed",
        "aks-no-reading",
        "oke-active",
        "oke-absent",
        "oke-deleting",
        "oke-legacy-active",
    ]
    assert all(not s.missing() for s in app.state.samples)
    assert app.screen.query_one("#capture-samples").option_count == len(keys)


async def check_filter(pilot):
    app = pilot.app
    await pick_sample(pilot, "aks-install")
    table = app.screen.query_one("#capture-readings")
    total = table.row_count
    table.focus()  # `/` filters the pane that has focus
    await pilot.press("slash")
    await type_text(pilot, "gpu-dr")
    await pilot.pause()
    assert table.row_count == 1
    await pilot.press("escape")
    await pilot.pause()
    assert table.row_count == total


async def test_samples_listed_projected_and_filtered(tmp_path):
    expected = {
        "aks-install": ("K8s", "aks-gpu-pools", "gpu-driver", "Install"),
        "aks-mixed": ("K8s", "aks-gpu-pools", "gpu-driver", "Mixed"),
        "aks-managed": ("K8s", "aks-gpu-pools", "gpu-driver", "Managed"),
        "oke-active": ("K8s", "oke-addons", "nvidia-gpu-plugin", "installed"),
        "oke-deleting": ("K8s", "oke-addons", "nvidia-gpu-plugin", "addon-deleting"),
        "oke-legacy-active": ("K8s", "oke-legacy-plugin", "nvidia-gpu-device-plugin", "active"),
    }
    async with wizard_running(tmp_path, (120, 40)) as (app, pilot):
        check_sample_list(app)
        for key, (mtype, sub, name, value) in expected.items():
            await pick_sample(pilot, key)
            assert app.state.sample_key == key
            assert app.state.snapshot.reading(mtype, sub, name) == value
            table = app.screen.query_one("#capture-readings")
            assert table.row_count == len(list(_readings(app.state.snapshot)))
        await pick_sample(pilot, "aks-no-reading")
        assert app.state.snapshot.subtype("K8s", "aks-gpu-pools") is None
        assert app.state.rows == []
        await check_filter(pilot)


def _readings(snapshot):
    for m in snapshot.measurements:
        for s in m.subtypes:
            yield from s.data


async def test_bad_file_shows_the_cli_message_inline_and_changes_nothing(
    tmp_path, cli, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "p.json"
    bad.write_text('[{"name": 5, "vmSize": "Standard_ND96isr_H100_v5"}]')  # an AKS pool list
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-install")
        before = app.state.snapshot
        await pilot.press("o")
        await pilot.pause()
        await type_text(pilot, "p.json")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CaptureScreen)
        status = app.screen.query_one("#capture-status")
        shown = str(status.render())
        assert "az aks nodepool list" in shown and "p.json" in shown
        assert status.has_class("error")
        assert app.state.snapshot is before
        assert app.state.sample_key == "aks-install"
    result = cli("snapshot", "--no-cluster", "--aks-gpu-pools", "p.json", cwd=tmp_path)
    assert result.returncode == 2
    assert app.state.last_error in result.stderr


async def test_a_file_of_no_known_kind_names_every_kind_and_changes_nothing(tmp_path):
    bad = tmp_path / "rest.json"
    bad.write_text('{"value": []}')  # `az rest` shape, not `az aks nodepool list`
    async with wizard_running(tmp_path) as (app, pilot):
        await pick_sample(pilot, "aks-install")
        before = app.state.snapshot
        app.screen.open_file(str(bad))
        await settle(pilot)
        shown = app.state.last_error
        assert shown.startswith(f'[INVALID_REQUEST] cannot tell what "{bad}" holds')
        for kind in ("Snapshot", "az aks nodepool list", "list-addons", "get daemonsets"):
            assert kind in shown
        assert app.state.snapshot is before


async def test_open_a_dump_by_path_then_next(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pilot.press("o")
        await pilot.pause()
        app.screen.query_one("#open-path").value = str(CAPTURES / "aks-pools-mixed.json")
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.snapshot.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Mixed"
        assert app.state.capture_label == "aks-pools-mixed.json"
        status = str(app.screen.query_one("#capture-status").render())
        assert (
            "aks-pools-mixed.json (AKS node pools (az aks nodepool list)): a new capture" in status
        )
        assert app.state.criteria["service"] == "aks"
        await pilot.press("n")
        await settle(pilot)
        # a dump alone carries no server version: qualification fails closed either way
        assert not app.state.verdict.ok
        assert app.state.last_error.startswith("[INVALID_REQUEST]")
        assert "Pools read Mixed" in app.screen.trouble_text()


async def test_browse_picks_a_file_with_the_tree(tmp_path):
    async with wizard_running(tmp_path) as (app, pilot):
        await pilot.press("t")
        await pilot.pause()
        tree = app.screen.query_one("DirectoryTree")
        assert str(tree.path) == str(CAPTURES)
        # the tree loads in its own long-lived worker: wait for the entries, not for workers
        await wait_until(pilot, lambda: len(tree.root.children) > 0)
        # the first entry of the captures directory is aks-pools-install.json; picking it
        # loads it (its kind comes from its content)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, CaptureScreen)
        assert app.state.snapshot.reading("K8s", "aks-gpu-pools", "gpu-driver") == "Install"


async def test_fetch_live_failure_is_inline(tmp_path):
    from aicr_tui.screens.state import WizardServices

    calls = []

    def live(request, cancel, progress):
        calls.append(request)
        progress("asking the Kubernetes API")
        from aicr_tui.core.foundation.errors import invalid

        raise invalid('kubeconfig "nope" not found: expected a readable kubeconfig file')

    app = demo_app(tmp_path)
    app.services = WizardServices(live_capture=live)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("F")
        await pilot.pause()
        await type_text(pilot, "nope")
        await pilot.press("enter")
        await settle(pilot)
        assert calls and calls[0].kubeconfig == "nope"
        assert 'kubeconfig "nope" not found' in str(
            app.screen.query_one("#capture-status").render()
        )
        assert app.state.snapshot is None


def test_guide_entry_for_missing_reading_names_the_recapture():
    assert "--aks-gpu-pools" in " ".join(guide_entry("aks-pools-reading-missing").commands)
