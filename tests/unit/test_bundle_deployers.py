"""``bundle --deployer``: every layout renders the AKS H100 training bundle (both gpuStack
values) and the OKE default bundle, and what it writes validates (issue 16 items 1-2)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
import yaml

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.bundler.deployers.config import DEPLOYERS, deployer_config
from aicr_tui.core.bundler.deployers.layout import repository_name
from aicr_tui.core.foundation.errors import AicrError
from tests.unit.deployer_checks import (
    check_kustomize_file,
    crd_kinds,
    validate_bundle,
    validate_document,
    yaml_documents,
)
from tests.unit.test_bundle_support import demo_recipe, plan

RECIPES = ("aks-azure", "aks-operator", "oke-oci", "aks-inference")


@cache
def _recipe(name: str):
    """The demo recipes, plus AKS H100 inference (agentgateway, Gateway API CRDs and a Gateway)."""
    if name != "aks-inference":
        return demo_recipe(name)
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.qualification import qualify

    verdict = qualify(
        parse_criteria(service="aks", accelerator="h100", os="ubuntu", intent="inference"), None
    )
    assert verdict.ok and verdict.recipe is not None, verdict.error
    return verdict.recipe


GIT = "https://git.example.com/platform/gpu-bundle.git"
OCI = "oci://registry.example.com/platform/gpu-bundle"


def config(name: str, **kw: Any):
    if name == "argocd" and "repo" not in kw:
        kw["repo"] = GIT
    if name == "flux" and "repo" not in kw:
        kw["repo"] = OCI
    return deployer_config(name, **kw)


def _yaml(p, rel: str) -> Any:
    return yaml.safe_load(p.files[rel].decode())


def _units_in_order(p) -> list[dict[str, Any]]:
    return _yaml(p, "bundle-info.yaml")["layout"]["releases"]


def _deps(recipe, name: str, rendered: set[str]) -> list[str]:
    ref = next(r for r in recipe.componentRefs if r.name == name)
    return [d for d in ref.dependencyRefs if d in rendered]


def test_vendored_crds_are_the_kinds_we_emit() -> None:
    assert crd_kinds() == {
        ("argoproj.io/v1alpha1", "Application"),
        ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
        ("source.toolkit.fluxcd.io/v1", "OCIRepository"),
        ("source.toolkit.fluxcd.io/v1", "HelmRepository"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
    }


def test_the_crd_validator_rejects_a_bad_document() -> None:
    """The schema check can fail: a HelmRelease without spec.interval's type, an Application
    with an unknown sync option shape."""
    bad = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "x", "namespace": "flux-system"},
        "spec": {"interval": 5, "chart": {"spec": {"chart": "x"}}},
    }
    with pytest.raises(AssertionError, match="fails its CRD schema"):
        validate_document(bad, "bad")
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "x"},
        "spec": {"destination": {}, "project": "default", "syncPolicy": {"syncOptions": "x"}},
    }
    with pytest.raises(AssertionError, match="fails its CRD schema"):
        validate_document(app, "bad")
    with pytest.raises(AssertionError, match="DNS-1123"):
        validate_document(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "A_"}}, "x"
        )


@pytest.mark.parametrize("recipe_name", RECIPES)
@pytest.mark.parametrize("deployer", DEPLOYERS)
def test_every_deployer_renders_and_validates(deployer: str, recipe_name: str) -> None:
    recipe = _recipe(recipe_name)
    p = plan(recipe, deployer=config(deployer))
    assert p.errors == [], [e.render() for e in p.errors]
    assert p.deployer == deployer
    info = _yaml(p, "bundle-info.yaml")
    assert info["build"]["deployer"] == deployer
    assert info["layout"]["entrypoint"] == p.entrypoint and p.entrypoint in p.files
    releases = info["layout"]["releases"]
    # every component of the recipe is in the layout, in deployment order
    seen: list[str] = []
    for r in releases:
        if r["component"] not in seen:
            seen.append(r["component"])
    assert seen == recipe.deploymentOrder
    # each component's values are where the plan says they are
    for comp in p.components:
        values = yaml.safe_load(p.files[f"{comp.folder}/values.yaml"].decode())
        assert (values or {}) == json.loads(json.dumps(comp.values)), comp.name
    counts = validate_bundle(p.files)
    if deployer in ("argocd", "flux"):
        assert counts.get("crd", 0) >= len(recipe.deploymentOrder)
    if deployer in ("helmfile", "argocd", "flux") and any(c.manifests for c in p.components):
        assert counts.get("kubernetes", 0) > 0
    checks = {
        "helm": _check_helm,
        "helmfile": _check_helmfile,
        "argocd": _check_argocd,
        "argocd-helm": _check_argocd_helm,
        "flux": _check_flux,
    }
    checks[deployer](p, recipe)


def _check_helm(p, recipe) -> None:
    assert "deploy.sh" in p.files and "undeploy.sh" in p.files
    assert [c.folder for c in p.components] == [
        f"{i:03d}-{n}" for i, n in enumerate(recipe.deploymentOrder, 1)
    ]


def _check_helmfile(p, recipe) -> None:
    """Parse helmfile.yaml and its levels; compare the releases with the recipe."""
    root = _yaml(p, "helmfile.yaml")
    levels = [h["path"] for h in root["helmfiles"]]
    assert levels == [f"level-{i}.yaml" for i in range(1, len(levels) + 1)]
    level_of: dict[str, int] = {}
    releases: dict[str, dict[str, Any]] = {}
    for i, rel in enumerate(levels, 1):
        doc = _yaml(p, rel)
        assert doc["helmDefaults"]["wait"] is True
        repos = {r["name"]: r for r in doc.get("repositories", [])}
        for release in doc["releases"]:
            assert release["name"] not in releases
            releases[release["name"]] = release
            level_of[release["name"]] = i
            for v in release["values"]:
                assert v in p.files, v
            chart = release["chart"]
            if chart.startswith("./"):
                assert f"{chart[2:]}/Chart.yaml" in p.files
            else:
                repo_name, chart_name = chart.split("/", 1)
                assert repo_name in repos, f"{rel}: {chart} names no repository of its level"
                release["_repo"] = repos[repo_name]
                release["_chart"] = chart_name
    rendered = {c.name for c in p.components}
    for comp in p.components:
        rel = releases[comp.name]
        assert rel["namespace"] == comp.namespace
        if comp.has_chart:
            assert rel["version"] == comp.version and rel["_chart"] == comp.chart
            url = rel["_repo"]["url"]
            if comp.source.startswith("oci://"):
                assert rel["_repo"]["oci"] is True and f"oci://{url}" == comp.source.rstrip("/")
            else:
                assert url == comp.source.rstrip("/")
            assert rel["_repo"]["name"] == repository_name(comp.source.rstrip("/"))
            if comp.manifests:
                post = releases[f"{comp.name}-post"]
                assert level_of[post["name"]] > level_of[comp.name]
        for dep in _deps(p.recipe, comp.name, rendered):
            last = f"{dep}-post" if f"{dep}-post" in releases else dep
            assert level_of[last] < level_of[comp.name], (comp.name, dep)
    assert {r.split("-post")[0] for r in releases} == rendered


def _check_argocd(p, recipe) -> None:
    root = _yaml(p, "app-of-apps.yaml")
    assert root["metadata"]["name"] == "aicr-stack"
    assert root["spec"]["source"]["repoURL"] == GIT
    assert root["spec"]["source"]["directory"]["include"] == "*/application.yaml"
    apps = {}
    for r in _units_in_order(p):
        app = _yaml(p, f"{r['path']}/application.yaml")
        apps[app["metadata"]["name"]] = app
        assert app["spec"]["destination"]["namespace"] == r["namespace"]
        if "sources" in app["spec"]:
            chart, values = app["spec"]["sources"]
            assert values == {"repoURL": GIT, "targetRevision": "main", "ref": "values"}
            for vf in chart["helm"]["valueFiles"]:
                assert vf.startswith("$values/") and vf[len("$values/") :] in p.files
        else:
            src = app["spec"]["source"]
            assert src["repoURL"] == GIT and f"{src['path']}/Chart.yaml" in p.files
    wave = {
        n: int(a["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
        for n, a in apps.items()
    }
    rendered = {c.name for c in p.components}
    for comp in p.components:
        for dep in _deps(p.recipe, comp.name, rendered):
            last = f"{dep}-post" if f"{dep}-post" in apps else dep
            assert wave[last] < wave[comp.name], (comp.name, dep)
        if f"{comp.name}-post" in apps:
            assert wave[f"{comp.name}-post"] > wave[comp.name]
    # concurrency by tier: components without dependencies share wave 1
    roots = [c.name for c in p.components if not _deps(p.recipe, c.name, rendered)]
    assert len(roots) > 1 and {wave[n] for n in roots} == {1}


def _render_root_chart(p, tmp_path, values: dict[str, Any] | None = None):
    hp = pytest.importorskip("helm_python")
    out = tmp_path / "chart"
    write_bundle(p, out)
    chart = hp.Chart.load(str(out))
    defaults = yaml.safe_load((out / "values.yaml").read_text())
    rendered = chart.render(
        values if values is not None else defaults, name="aicr", namespace="argocd"
    )
    return chart, defaults, rendered


def _check_argocd_helm(p, recipe) -> None:
    chart = _yaml(p, "Chart.yaml")
    assert chart["apiVersion"] == "v2" and chart["name"] == "aicr-stack"
    assert "aicr.run/generated-by" in chart["annotations"]
    schema = json.loads(p.files["values.schema.json"])
    values = _yaml(p, "values.yaml")
    import jsonschema

    jsonschema.validate(values, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**values, "components": {"not-a-component": {}}}, schema)
    assert set(values["components"]) == set(recipe.deploymentOrder)
    locks = json.loads(p.files["static/locks.json"])
    profile = recipe.metadata.selectedProfile
    assert locks["profile"] == f"{profile.name}={profile.value}"
    assert locks["paths"], "a profiled recipe has owned paths"
    for name in ("applications.yaml", "manifests.yaml", "lock-guard.yaml"):
        assert f"templates/{name}" in p.files


def _check_flux(p, recipe) -> None:
    root = check_kustomize_file(p.files, "kustomization.yaml")
    docs: dict[tuple[str, str], dict[str, Any]] = {}
    for rel in root["resources"]:
        for d in yaml_documents(p.files[rel].decode(), rel):
            docs[(d["kind"], d["metadata"]["name"])] = d
            assert d["metadata"]["namespace"] == "flux-system"
    bundle = docs[("OCIRepository", "aicr-bundle")]
    assert bundle["spec"]["url"] == OCI
    ks = {n: d for (k, n), d in docs.items() if k == "Kustomization"}
    rendered = {c.name for c in p.components}
    for comp in p.components:
        assert comp.folder == comp.name
        main = ks[comp.name]
        assert main["spec"]["sourceRef"] == {"kind": "OCIRepository", "name": "aicr-bundle"}
        for dep in _deps(p.recipe, comp.name, rendered):
            last = f"{dep}-post" if f"{dep}-post" in ks else dep
            assert {"name": last} in main["spec"].get("dependsOn", []), (comp.name, dep)
        if comp.has_chart:
            assert main["spec"]["path"] == f"./{comp.name}"
            kfile = check_kustomize_file(p.files, f"{comp.name}/kustomization.yaml")
            (hr,) = yaml_documents(p.files[f"{comp.name}/helmrelease.yaml"].decode(), comp.name)
            assert hr["spec"]["targetNamespace"] == comp.namespace
            gen = kfile["configMapGenerator"][0]
            assert gen["namespace"] == "flux-system" and gen["options"]["disableNameSuffixHash"]
            assert hr["spec"]["valuesFrom"][0]["name"] == gen["name"]
            if "chartRef" in hr["spec"]:
                src = docs[("OCIRepository", hr["spec"]["chartRef"]["name"])]
                assert src["spec"]["url"] == f"{comp.source.rstrip('/')}/{comp.chart}"
                assert src["spec"]["ref"] == {"tag": comp.version}
            else:
                spec = hr["spec"]["chart"]["spec"]
                assert spec["chart"] == comp.chart and spec["version"] == comp.version
                repo = docs[("HelmRepository", spec["sourceRef"]["name"])]
                assert repo["spec"]["url"] == comp.source.rstrip("/")
        if comp.manifests:
            name = f"{comp.name}-post" if comp.has_chart else comp.name
            assert ks[name]["spec"]["path"] == f"./{comp.name}/manifests"
            for m in comp.manifests:
                assert f"{comp.name}/manifests/{m}" in p.files


def test_argocd_helm_root_chart_renders_with_helm_and_its_lock_guard_holds(tmp_path) -> None:
    """The real Helm engine renders the root chart; the Applications validate against the
    Argo CD CRD and carry exactly the bundle's values; install-time values that touch a
    profile-owned path (equal, descendant, ancestor replaced) fail the render."""
    recipe = demo_recipe("aks-azure")
    p = plan(recipe, deployer=config("argocd-helm"))
    chart, defaults, rendered = _render_root_chart(p, tmp_path)
    docs = [
        d
        for path, text in rendered.items()
        if not path.endswith("NOTES.txt")
        for d in yaml_documents(text, path)
    ]
    apps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Application"}
    assert set(apps) == {c.name for c in p.components if c.has_chart}
    for d in docs:
        validate_document(d, d["metadata"]["name"])
    for comp in p.components:
        if comp.has_chart:
            # the values travel as a JSON text Argo CD hands to Helm as written
            got = json.loads(apps[comp.name]["spec"]["source"]["helm"]["values"])
            assert got == json.loads(json.dumps(comp.values)), comp.name
    raw = [d for d in docs if d["kind"] != "Application"]
    assert {d["metadata"]["name"] for d in raw} >= {
        "nvidia-toolkit-hardening",
        "nvidia-peermem-reloader",
    }
    waves = {
        d["metadata"]["name"]: int(d["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
        for d in docs
    }
    assert waves["nvidia-toolkit-hardening"] > waves["gpu-operator"]
    assert waves["gpu-operator"] > waves["cert-manager"]

    def with_values(component: str, values: dict[str, Any], enabled: bool = True):
        v = json.loads(json.dumps(defaults))
        v["components"][component] = {"enabled": enabled, "values": values}
        return v

    for bad in (
        with_values("gpu-operator", {"driver": {"enabled": True}}),
        with_values("gpu-operator", {"driver": "replaced"}),
        with_values("gpu-operator", {"toolkit": {"enabled": {"deeper": 1}}}),
        with_values("gpu-operator", {}, enabled=False),
    ):
        with pytest.raises(Exception, match="profile"):
            chart.render(bad, name="aicr", namespace="argocd")
    ok = chart.render(
        with_values("gpu-operator", {"driver": {"version": "580.1"}}),
        name="aicr",
        namespace="argocd",
    )
    text = "".join(ok.values())
    assert "580.1" in text
    off = chart.render(
        with_values("prometheus-adapter", {}, enabled=False), name="aicr", namespace="argocd"
    )
    assert "prometheus-adapter" not in "".join(off.values())
    chart.validate_schema(defaults)  # raises on a violation
    with pytest.raises(Exception, match="additional"):
        chart.validate_schema({**defaults, "unknown": 1})


def test_argocd_helm_renders_a_raw_custom_resource_only_once_its_kind_is_served(tmp_path) -> None:
    """Found by tests/cluster/test_deploy_gitops.py: the README's ``helm upgrade --install``
    of the root chart failed on the real API server ("no matches for kind NicClusterPolicy
    ... ensure CRDs are installed first"): the raw NicClusterPolicy and Skyhook are rendered
    by the root chart itself, but their CRDs come with Applications Argo CD syncs later.
    units.json now lists each file's custom kinds; the root chart renders the file only when
    ``.Capabilities.APIVersions`` serves them (the engine here serves built-in kinds only),
    and NOTES.txt names what it left out. The namespaces of the raw manifests are made by
    the root chart, one sync-wave before them."""
    p = plan(demo_recipe("aks-azure"), deployer=config("argocd-helm"))
    _chart, _defaults, rendered = _render_root_chart(p, tmp_path)
    units = json.loads((tmp_path / "chart" / "static" / "units.json").read_text())["units"]
    requires = {f: k for u in units for f, k in (u.get("requires") or {}).items()}
    assert requires == {
        "nic-cluster-policy-aks.yaml": ["mellanox.com/v1alpha1/NicClusterPolicy"],
        "tuning.yaml": ["skyhook.nvidia.com/v1alpha1/Skyhook"],
    }
    kinds = {
        d["kind"]
        for path, text in rendered.items()
        if not path.endswith("NOTES.txt")
        for d in yaml_documents(text, path)
    }
    assert "NicClusterPolicy" not in kinds and "Skyhook" not in kinds
    assert {"Application", "DaemonSet"} <= kinds  # built-in raw manifests still render
    # ... and their namespaces come first (the real server refused the DaemonSets with
    # 'namespaces "gpu-operator" not found': only Argo CD syncing an Application makes them)
    docs = [d for path, text in rendered.items() if not path.endswith("NOTES.txt")
            for d in yaml_documents(text, path)]  # fmt: skip
    made = {d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"}
    assert made == {d["metadata"]["namespace"] for d in docs if d["kind"] == "DaemonSet"}
    notes = next(t for path, t in rendered.items() if path.endswith("NOTES.txt"))
    assert (
        "nic-cluster-policy-aks.yaml (mellanox.com/v1alpha1/NicClusterPolicy is not served" in notes
    )


def test_argocd_helm_dynamic_paths_are_seeded_as_install_time_values(tmp_path) -> None:
    p = plan(
        demo_recipe("aks-azure"),
        deployer=config("argocd-helm"),
        dynamic=("gpuoperator:dcgmExporter.serviceMonitor.enabled",),
    )
    assert p.errors == []
    values = _yaml(p, "values.yaml")
    seeded = values["components"]["gpu-operator"]["values"]
    assert seeded == {"dcgmExporter": {"serviceMonitor": {"enabled": True}}}
    static = _yaml(p, f"{p.component('gpu-operator').folder}/values.yaml")
    assert "enabled" not in static["dcgmExporter"]["serviceMonitor"]
    chart, defaults, rendered = _render_root_chart(p, tmp_path)
    apps = [
        d
        for t in rendered.values()
        for d in yaml_documents(t, "x")
        if d.get("kind") == "Application"
    ]
    gpu = next(a for a in apps if a["metadata"]["name"] == "gpu-operator")
    got = json.loads(gpu["spec"]["source"]["helm"]["values"])
    assert got["dcgmExporter"]["serviceMonitor"]["enabled"] is True


def test_dynamic_goes_to_cluster_values_for_helmfile_and_flux() -> None:
    dyn = ("gpuoperator:dcgmExporter.serviceMonitor.enabled",)
    hf = plan(demo_recipe("aks-azure"), deployer=config("helmfile"), dynamic=dyn)
    gpu = hf.component("gpu-operator")
    releases = [
        r
        for lv in _yaml(hf, "helmfile.yaml")["helmfiles"]
        for r in _yaml(hf, lv["path"])["releases"]
    ]
    rel = next(r for r in releases if r["name"] == "gpu-operator")
    assert rel["values"] == [f"{gpu.folder}/values.yaml", f"{gpu.folder}/cluster-values.yaml"]
    fx = plan(demo_recipe("aks-azure"), deployer=config("flux"), dynamic=dyn)
    (hr,) = yaml_documents(fx.files["gpu-operator/helmrelease.yaml"].decode(), "hr")
    assert [v["valuesKey"] for v in hr["spec"]["valuesFrom"]] == [
        "values.yaml",
        "cluster-values.yaml",
    ]
    kfile = check_kustomize_file(fx.files, "gpu-operator/kustomization.yaml")
    assert kfile["configMapGenerator"][0]["files"] == ["values.yaml", "cluster-values.yaml"]


@pytest.mark.parametrize("deployer", ("helmfile", "argocd", "flux"))
def test_serial_makes_every_folder_its_own_step(deployer: str) -> None:
    p = plan(demo_recipe("oke-oci"), deployer=config(deployer, serial=True))
    units = [r["name"] for r in _units_in_order(p)]
    if deployer == "helmfile":
        levels = _yaml(p, "helmfile.yaml")["helmfiles"]
        got = [[r["name"] for r in _yaml(p, lv["path"])["releases"]] for lv in levels]
        assert got == [[u] for u in units]
    elif deployer == "argocd":
        waves = [
            int(
                _yaml(p, f"{r['path']}/application.yaml")["metadata"]["annotations"][
                    "argocd.argoproj.io/sync-wave"
                ]
            )
            for r in _units_in_order(p)
        ]
        assert waves == list(range(1, len(units) + 1))
    else:
        ks = yaml_documents(p.files["sources/kustomizations.yaml"].decode(), "ks")
        deps = [[d["name"] for d in k["spec"].get("dependsOn", [])] for k in ks]
        assert deps == [[]] + [[u] for u in units[:-1]]


@pytest.mark.parametrize("deployer", ("argocd", "argocd-helm"))
def test_readiness_hooks_wait_for_expected_resources(deployer: str) -> None:
    recipe = demo_recipe("aks-azure")
    p = plan(recipe, deployer=config(deployer, readiness_hooks=True))
    names = [r["name"] for r in _units_in_order(p)]
    assert "gpu-operator-readiness" in names
    assert names.index("gpu-operator-readiness") < names.index("kai-scheduler")
    assert "kai-scheduler-readiness" not in names  # no expectedResources
    rel = next(r for r in _units_in_order(p) if r["name"] == "gpu-operator-readiness")
    path = (
        f"{rel['path']}/templates/readiness.yaml"
        if deployer == "argocd"
        else f"{rel['path']}/readiness.yaml"
    )
    docs = yaml_documents(p.files[path].decode(), path)
    for d in docs:
        validate_document(d, path)
    job = next(d for d in docs if d["kind"] == "Job")
    args = [c["args"][2] for c in job["spec"]["template"]["spec"]["containers"]]
    gpu = next(r for r in recipe.componentRefs if r.name == "gpu-operator")
    assert args == [f"{e['kind'].lower()}/{e['name']}" for e in gpu.expectedResources]
    if deployer == "argocd":
        waves = {
            r["name"]: int(
                _yaml(p, f"{r['path']}/application.yaml")["metadata"]["annotations"][
                    "argocd.argoproj.io/sync-wave"
                ]
            )
            for r in _units_in_order(p)
        }
        assert (
            waves["gpu-operator"]
            < waves["gpu-operator-post"]
            < waves["gpu-operator-readiness"]
            < waves["kai-scheduler"]
        )


def test_app_name_and_deployer_options_reach_the_documents() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        deployer=config("argocd", app_name="gpu-platform"),
        set_=(
            "deployer:project=gpu",
            "deployer:targetRevision=v1.2.0",
            "deployer:namespace=gitops",
        ),
    )
    root = _yaml(p, "app-of-apps.yaml")
    assert root["metadata"] == {"name": "gpu-platform", "namespace": "gitops"}
    assert root["spec"]["project"] == "gpu" and root["spec"]["source"]["targetRevision"] == "v1.2.0"
    app = _yaml(p, f"{p.components[0].folder}/application.yaml")
    assert app["metadata"]["namespace"] == "gitops" and app["spec"]["project"] == "gpu"
    assert app["spec"]["sources"][1]["targetRevision"] == "v1.2.0"
    settings = _yaml(p, "bundle-info.yaml")["build"]["settings"]
    assert settings["appName"] == "gpu-platform"
    assert settings["deployerOptions"] == {
        "namespace": "gitops",
        "project": "gpu",
        "targetRevision": "v1.2.0",
    }
    fx = plan(
        demo_recipe("oke-oci"),
        deployer=config("flux", flux_namespace="gitops", flux_oci_source_name="gpu-bundle"),
    )
    src = _yaml(fx, "sources/gpu-bundle.yaml")
    assert src["metadata"] == {"name": "gpu-bundle", "namespace": "gitops"}
    ks = yaml_documents(fx.files["sources/kustomizations.yaml"].decode(), "ks")
    assert {k["spec"]["sourceRef"]["name"] for k in ks} == {"gpu-bundle"}
    assert {k["metadata"]["namespace"] for k in ks} == {"gitops"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "kustomize"}, "must be one of"),
        (
            {"name": "helm", "flux_namespace": "x"},
            "--flux-namespace applies only to --deployer flux",
        ),
        ({"name": "argocd", "flux_oci_source_name": "x"}, "--flux-oci-source-name applies only"),
        ({"name": "helm", "app_name": "x"}, "--app-name applies only"),
        ({"name": "argocd", "app_name": "Bad_Name"}, "DNS-1123"),
        ({"name": "flux", "readiness_hooks": True}, "--readiness-hooks applies only"),
        ({"name": "helmfile", "readiness_hooks": True}, "--readiness-hooks applies only"),
        ({"name": "flux", "repo": "https://github.com/x/y"}, "expected oci://"),
        ({"name": "argocd", "repo": "ftp://x"}, "not a Git repository URL"),
        ({"name": "argocd", "repo": "https://x/y z"}, "no spaces"),
        ({"name": "flux", "flux_namespace": "-bad"}, "DNS-1123"),
    ],
)
def test_upstream_flag_refusals(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(AicrError, match=message):
        deployer_config(**kwargs)


def test_a_missing_repo_is_a_warning_naming_the_placeholder() -> None:
    for name, placeholder in (
        ("argocd", "git.example.invalid"),
        ("flux", "registry.example.invalid"),
    ):
        p = plan(demo_recipe("oke-oci"), deployer=deployer_config(name))
        (warning,) = [w for w in p.warnings if w.startswith("--repo is not set")]
        assert placeholder in warning
        assert any(placeholder in data.decode() for data in p.files.values())
    assert not any(
        "--repo" in w for w in plan(demo_recipe("oke-oci"), deployer=config("argocd")).warnings
    )


def test_repo_is_ignored_with_a_warning_for_argocd_helm() -> None:
    cfg = deployer_config("argocd-helm", repo=GIT)
    assert cfg.repo == "" and "ignored" in cfg.warnings[0]
    p = plan(demo_recipe("aks-azure"), deployer=cfg)
    assert any("--repo is ignored" in w for w in p.warnings)


@pytest.mark.parametrize(
    ("deployer", "kw", "message"),
    [
        ("argocd", {"dynamic": ("gpuoperator:driver.version",)}, "use --deployer argocd-helm"),
        ("argocd", {"set_json": ('deployer:project="x"',)}, "never typed"),
        ("argocd-helm", {"dynamic": ("deployer:project",)}, "never typed"),
        ("argocd", {"set_file": ("deployer:project=x.yaml",)}, "never typed"),
        ("helm", {"set_": ("deployer:project=x",)}, "apply only to --deployer argocd"),
        ("flux", {"set_": ("deployer:project=x",)}, "apply only to --deployer argocd"),
        ("argocd", {"set_": ("deployer:color=blue",)}, "unknown deployer option"),
        ("argocd", {"set_": ("deployer:namespace=Not_A_Label",)}, "DNS-1123"),
    ],
)
def test_plan_refusals(deployer: str, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(AicrError, match=message):
        plan(demo_recipe("aks-azure"), deployer=config(deployer), **kw)


@pytest.mark.parametrize("deployer", DEPLOYERS)
def test_profile_lock_and_blocking_checks_hold_for_every_deployer(deployer: str, tmp_path) -> None:
    recipe = demo_recipe("aks-azure")
    locked = plan(recipe, deployer=config(deployer), set_=("gpuoperator:driver.enabled=true",))
    assert "ProfileLock" in [e.check for e in locked.errors]
    wildcard = plan(recipe, deployer=config(deployer), tolerations=None)
    assert any(e.check == "CheckWildcardAcceleratedToleration" for e in wildcard.errors)
    for refused in (locked, wildcard):
        with pytest.raises(AicrError, match="bundle refused"):
            write_bundle(refused, tmp_path / "out")
        assert not (tmp_path / "out").exists()
    if deployer == "argocd-helm":  # an install-time path may not be a profile-owned one
        dyn = plan(recipe, deployer=config(deployer), dynamic=("gpuoperator:driver.enabled",))
        assert any(e.check == "ProfileLock" and "intersects" in e.message for e in dyn.errors), [
            e.render() for e in dyn.errors
        ]


@pytest.mark.parametrize("deployer", DEPLOYERS)
def test_written_bundles_verify_their_checksums(deployer: str, tmp_path) -> None:
    p = plan(demo_recipe("oke-oci"), deployer=config(deployer))
    out = tmp_path / deployer
    result = write_bundle(p, out)
    on_disk = sorted(q.relative_to(out).as_posix() for q in out.rglob("*") if q.is_file())
    assert on_disk == sorted(p.files) == sorted(result.files)
    readme = (out / "README.md").read_text()
    assert f"({deployer} deployer)" in readme and p.entrypoint in readme
