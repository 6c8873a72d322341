"""Pilot: the bundle step picks the deployer, previews its files and writes that layout."""

from __future__ import annotations

from textual.widgets import TabbedContent

from aicr_tui.screens.bundle_preview import BundlePreviewScreen
from tests.pilot.test_pilot_bundle_preview import KEYED, _edit, _host, _planned, _render
from tests.pilot.validate_fixtures import wait_until


async def test_deployer_is_picked_previewed_and_written(aks_recipe, tmp_path) -> None:
    app = _host(aks_recipe, tmp_path, KEYED + "--set deployer:project=gpu\n")
    out = tmp_path / "bundle"
    async with app.run_test(size=(100, 30)) as pilot:
        screen: BundlePreviewScreen = app.shown
        await _planned(pilot, screen)
        assert screen.deployer == "helm" and screen.plan.deployer == "helm"
        assert "deployer helm" in _render(screen, "#bundle-banner")
        # deployer options only exist for the Argo CD layouts: rejected under helm
        (line,) = [ln for ln in screen.result.lines if "deployer:" in ln.raw]
        assert line.verdict == "rejected" and "argocd" in line.message
        assert "deploy.sh  (" in screen.files_text and "<- entry point" in screen.files_text

        await pilot.press("d")  # helmfile
        await _planned(pilot, screen)
        assert screen.plan.deployer == "helmfile"
        assert "helmfile.yaml" in screen.plan.files and "deploy.sh" not in screen.plan.files

        await pilot.press("d")  # argocd
        await _planned(pilot, screen)
        assert screen.deployer == "argocd" and screen.plan.entrypoint == "app-of-apps.yaml"
        (line,) = [ln for ln in screen.result.lines if "deployer:" in ln.raw]
        assert line.verdict == "accepted", line.message
        await pilot.press("f")
        await pilot.pause()
        assert screen.query_one("#bundle-tabs", TabbedContent).active == "files"
        assert "# app-of-apps.yaml" in screen.files_text
        assert "# --- app-of-apps.yaml ---" in screen.files_text
        assert "project: gpu" in screen.files_text.split("# --- app-of-apps.yaml ---")[1]
        assert "deployer argocd" in _render(screen, "#bundle-banner")
        # the component's values are found in this layout's folder (cert-manager is step
        # 003 since it follows nfd and prometheus-operator-crds, issue 33)
        assert (
            screen.values_text
            and "003-cert-manager" in screen.plan.component("cert-manager").folder
        )

        # --dynamic is refused under argocd and accepted once argocd-helm is picked
        await _edit(
            pilot, screen, KEYED + "--dynamic gpuoperator:dcgmExporter.serviceMonitor.enabled\n"
        )
        (line,) = [ln for ln in screen.result.lines if "--dynamic" in ln.raw]
        assert line.verdict == "rejected" and "argocd-helm" in line.message
        await pilot.press("d")
        await _planned(pilot, screen)
        assert screen.plan.deployer == "argocd-helm"
        (line,) = [ln for ln in screen.result.lines if "--dynamic" in ln.raw]
        assert line.verdict == "accepted", line.message

        await pilot.press("w")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.written_to is not None)
        assert (out / "Chart.yaml").is_file() and (out / "values.schema.json").is_file()
        assert not (out / "deploy.sh").exists()

        await pilot.press("d")  # flux, then round to helm
        await _planned(pilot, screen)
        assert screen.plan.deployer == "flux" and "kustomization.yaml" in screen.plan.files
        await pilot.press("d")
        await _planned(pilot, screen)
        assert screen.plan.deployer == "helm"


async def test_helmfile_component_list_is_numbered_like_its_folders(aks_recipe, tmp_path) -> None:
    """Issue 34 item 4: under helmfile (whose ``-post`` folders shift the later numbers) the
    list said ``005 nodewright-operator`` while the Files tab and the bundle said 006-."""
    from textual.widgets import Tree

    app = _host(aks_recipe, tmp_path, KEYED)
    async with app.run_test(size=(100, 30)) as pilot:
        screen: BundlePreviewScreen = app.shown
        await _planned(pilot, screen)
        await pilot.press("d")  # helmfile
        await _planned(pilot, screen)
        assert screen.plan.deployer == "helmfile"
        tree = screen.query_one(Tree)
        labels = {
            node.data[1]: str(node.label)
            for node in tree.root.children
            if node.data and node.data[0] == "component"
        }
        shifted = 0
        for component in screen.plan.components:
            number = component.folder.split("-", 1)[0]
            assert labels[component.name] == f"{number} {component.name}"
            assert any(path.startswith(f"{component.folder}/") for path in screen.plan.files)
            shifted += int(number) != component.index
        assert shifted, "the helmfile layout shifts no number here: the test proves nothing"
