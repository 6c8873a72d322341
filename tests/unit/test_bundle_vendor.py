"""``bundle --vendor-charts``: the pinned archives inside the bundle, installed from there."""

from __future__ import annotations

import fnmatch
import hashlib
import io
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import RECIPES, TEST_DATA, run_cli
from tests.dead_proxy import DeadProxy
from tests.manifest_yaml import load_manifest
from tests.unit.deployer_checks import validate_bundle, validate_document

ARCHIVES = TEST_DATA / "charts" / "archives"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
TOLERATION = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("vendor") / "recipe.yaml"
    made = run_cli("recipe", *AKS, "-o", str(target))
    assert made.returncode == 0, made.stderr
    return target


def _bundle(
    recipe: Path, out: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "bundle", "-r", str(recipe), "-o", str(out), *TOLERATION, "--vendor-charts", *extra, env=env
    )


def test_helm_bundle_carries_and_installs_from_archives(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES))
    assert proc.returncode == 0, proc.stderr
    prov = yaml.safe_load((out / "provenance.yaml").read_text())
    charts = prov["charts"]
    recipe_doc = yaml.safe_load((out / "recipe.yaml").read_text())
    pinned = {
        r["name"]: r
        for r in recipe_doc["componentRefs"]
        if r.get("source") and r.get("enabled", True) is not False
    }
    assert {c["component"] for c in charts} == set(pinned)
    checksums = dict(
        reversed(line.split("  ", 1)) for line in (out / "checksums.txt").read_text().splitlines()
    )
    for c in charts:
        ref = pinned[c["component"]]
        assert (c["source"], c["version"], c["chart"]) == (
            ref["source"],
            ref["version"],
            ref["chart"],
        )
        data = (out / c["file"]).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        assert c["sha256"] == digest == checksums[c["file"]]
        assert data == (ARCHIVES / Path(c["file"]).name).read_bytes()
    assert "provenance.yaml" in checksums
    check = subprocess.run(
        ["sha256sum", "-c", "checksums.txt"], cwd=out, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # Every helm call installs (or reads CRDs) from the bundle's own files: no repository.
    for script in [out / "deploy.sh", out / "undeploy.sh", *out.glob("*/install.sh")]:
        text = script.read_text()
        calls = [line for line in text.splitlines() if re.match(r"\s*helm (upgrade|show)", line)]
        assert all(
            "--repo" not in line and "oci://" not in line and "https://" not in line
            for line in calls
        ), script
    deploy = (out / "deploy.sh").read_text()
    assert "-- gpu-operator charts/gpu-operator-v26.7.0.tgz" in deploy
    own = (next(out.glob("*-gpu-operator")) / "install.sh").read_text()
    assert "-- gpu-operator ../charts/gpu-operator-v26.7.0.tgz" in own
    # undeploy.sh reads no chart at all (issue 32: the CRDs it may delete are the ones
    # carrying this bundle's marks, not a `helm show crds` of the pin), so no repository
    # either; deploy.sh reads each chart's crds/ from the archive before the release
    undeploy = (out / "undeploy.sh").read_text()
    assert "chart_crds --version" not in undeploy
    assert "chart_crds --version v26.7.0 -- charts/gpu-operator-v26.7.0.tgz" in deploy
    readme = (out / "README.md").read_text()
    assert (
        "## Vendored charts" in readme
        and "| `gpu-operator` | `charts/gpu-operator-v26.7.0.tgz` |" in readme
    )


def test_helmfile_releases_point_at_archives(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "helmfile")
    assert proc.returncode == 0, proc.stderr
    releases = []
    for level in sorted(out.glob("level-*.yaml")):
        doc = yaml.safe_load(level.read_text())
        assert "repositories" not in doc
        releases += doc["releases"]
    gpu = next(r for r in releases if r["name"] == "gpu-operator")
    assert gpu["chart"] == "./charts/gpu-operator-v26.7.0.tgz"
    assert all((out / r["chart"]).exists() for r in releases)


def test_environment_directory(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "env"
    proc = _bundle(recipe, out, env={"AICR_VENDOR_CHARTS_DIR": str(ARCHIVES)})
    assert proc.returncode == 0, proc.stderr
    assert (out / "charts" / "cert-manager-v1.20.2.tgz").is_file()


def _one_line_refusal(proc: subprocess.CompletedProcess[str], out: Path) -> str:
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.exists()
    return proc.stderr


def test_missing_archive_refused(recipe: Path, tmp_path: Path) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    (charts / "cert-manager-v1.20.2.tgz").write_bytes(
        (ARCHIVES / "cert-manager-v1.20.2.tgz").read_bytes()
    )
    out = tmp_path / "b"
    err = _one_line_refusal(_bundle(recipe, out, "--charts", str(charts)), out)
    assert "no archive of" in err


def _archive(name: str, version: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        body = f"apiVersion: v2\nname: {name}\nversion: {version}\n".encode()
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def test_archive_of_another_version_refused(recipe: Path, tmp_path: Path) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    for f in ARCHIVES.glob("*.tgz"):
        (charts / f.name).write_bytes(f.read_bytes())
    (charts / "gpu-operator-v26.7.0.tgz").write_bytes(_archive("gpu-operator", "v25.3.0"))
    out = tmp_path / "b"
    err = _one_line_refusal(_bundle(recipe, out, "--charts", str(charts)), out)
    assert "is chart gpu-operator v25.3.0, but the bundle pins gpu-operator v26.7.0" in err


def test_archive_escaping_its_folder_refused() -> None:
    from aicr_tui.core.bundler.vendor import check_archive
    from aicr_tui.core.foundation.errors import AicrError

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("gpu-operator/../../evil")
        info.size = 0
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(AicrError, match="not a plain file inside the chart folder"):
        check_archive(buf.getvalue(), "gpu-operator", "v1", "x.tgz")
    with pytest.raises(AicrError, match="not a gzip tar"):
        check_archive(b"not an archive", "gpu-operator", "v1", "x.tgz")


GIT = "https://git.example.com/platform/gpu-bundle.git"
OCI = "oci://registry.example.com/platform/gpu-bundle"


def _files(out: Path) -> dict[str, bytes]:
    """The bundle's files (provenance.yaml, no Kubernetes object, is checked on its own)."""
    return {
        r: p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and (r := p.relative_to(out).as_posix()) != "provenance.yaml"
    }


def _members(archive: Path) -> dict[str, bytes]:
    """An archive's files by their path inside the chart folder."""
    with tarfile.open(archive, mode="r:gz") as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def _pinned(out: Path) -> dict[str, dict[str, str]]:
    return {
        c["component"]: c for c in yaml.safe_load((out / "provenance.yaml").read_text())["charts"]
    }


def test_argocd_applications_install_the_charts_unpacked_in_the_bundle_repository(
    recipe: Path, tmp_path: Path
) -> None:
    """Argo CD reads a Helm chart from a Git path: each chart is unpacked in its folder's
    ``chart/`` and its Application's sources are this repository only (CRD-valid)."""
    out = tmp_path / "argo"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "argocd", "--repo", GIT)
    assert proc.returncode == 0, proc.stderr
    files = _files(out)
    own = {r: d for r, d in files.items() if "/chart/" not in r}
    counts = validate_bundle(own)
    pinned = _pinned(out)
    apps = {}
    for rel in sorted(files):
        if rel.endswith("/application.yaml") and rel.count("/") == 1:
            app = yaml.safe_load(files[rel])
            validate_document(app, rel)
            apps[rel.split("/")[0]] = app
    assert counts.get("crd", 0) >= len(apps) + 1  # every Application and the app-of-apps
    charted = {f: a for f, a in apps.items() if f.split("-", 1)[1] in pinned}
    assert {f.split("-", 1)[1] for f in charted} == set(pinned)
    for folder, app in charted.items():
        prov = pinned[folder.split("-", 1)[1]]
        chart, values = app["spec"]["sources"]
        assert "chart" not in chart and chart["repoURL"] == GIT == values["repoURL"]
        assert chart["path"] == f"{folder}/chart"
        assert chart["helm"]["valueFiles"] == [f"$values/{folder}/values.yaml"]
        assert values["ref"] == "values"
        # the tree is the archive, file for file, and checksums.txt covers it
        tree = {
            r[len(folder) + 7 :]: d for r, d in files.items() if r.startswith(f"{folder}/chart/")
        }
        assert tree == _members(out / prov["file"])
        meta = yaml.safe_load(tree["Chart.yaml"])
        assert (meta["name"], str(meta["version"]).lstrip("v")) == (
            prov["chart"],
            prov["version"].lstrip("v"),
        )
    assert not any(
        "://" in str(a["spec"].get("sources", "")).replace(GIT, "") for a in apps.values()
    )
    # the app-of-apps syncs only the folders' application.yaml, never a chart's file
    include = yaml.safe_load(files["app-of-apps.yaml"])["spec"]["source"]["directory"]["include"]
    synced = [r for r in files if fnmatch.fnmatch(r, include)]
    assert sorted(synced) == sorted(f"{f}/application.yaml" for f in apps)
    check = subprocess.run(
        ["sha256sum", "-c", "--quiet", "checksums.txt"], cwd=out, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    listed = {line.split("  ", 1)[1] for line in (out / "checksums.txt").read_text().splitlines()}
    assert {r for r in files if "/chart/" in r} <= listed
    readme = (out / "README.md").read_text()
    assert "installs the chart unpacked" in readme
    assert "its Application installs it from there" in readme and "`deploy.sh`" not in readme


def test_flux_helmreleases_install_the_archives_pushed_beside_the_bundle(
    recipe: Path, tmp_path: Path
) -> None:
    """Flux's HelmChart cannot read a chart out of the bundle's OCIRepository: each archive is
    pushed from the bundle to ``<repo>/charts`` (the README says how) and each HelmRelease's
    chartRef is that OCI chart, tagged as ``helm push`` tags it; no HelmRepository is left."""
    out = tmp_path / "flux"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "flux", "--repo", OCI)
    assert proc.returncode == 0, proc.stderr
    files = _files(out)
    counts = validate_bundle(files)
    assert counts.get("crd", 0) > 0
    pinned = _pinned(out)
    assert not list(
        out.glob("sources/*helmrepository*")
    ) and b"kind: HelmRepository" not in b"".join(
        files[r] for r in files if r.startswith("sources/")
    )
    readme = (out / "README.md").read_text()
    for component, prov in pinned.items():
        hr = yaml.safe_load((out / component / "helmrelease.yaml").read_text())
        ref = hr["spec"]["chartRef"]
        assert "chart" not in hr["spec"] and ref["kind"] == "OCIRepository"
        src = yaml.safe_load((out / "sources" / f"{ref['name']}.yaml").read_text())
        assert src["spec"]["url"] == f"{OCI}/charts/{prov['chart']}"
        with tarfile.open(out / prov["file"], mode="r:gz") as tar:
            meta = yaml.safe_load(tar.extractfile(f"{prov['chart']}/Chart.yaml").read())  # type: ignore[union-attr]
        assert src["spec"]["ref"] == {"tag": str(meta["version"]).replace("+", "_")}
        assert src["spec"]["layerSelector"]["operation"] == "copy"
        assert f"helm push {prov['file']} {OCI}/charts\n" in readme
    assert "each HelmRelease installs its chart from there" in readme


def test_argocd_helm_applications_install_the_archives_pushed_to_the_repo(
    recipe: Path, tmp_path: Path
) -> None:
    """argocd-helm with --vendor-charts: --repo is the OCI repository the archives are pushed
    to; the root chart, rendered by Helm's engine, makes Applications (CRD-valid) that install
    each chart from ``<repo>/charts`` at the tag ``helm push`` gives it, and ``.helmignore``
    keeps ``charts/`` from being loaded as the root chart's subcharts (without it, it is)."""
    hp = pytest.importorskip("helm_python")
    out = tmp_path / "ah"
    proc = _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "argocd-helm", "--repo", OCI)
    assert proc.returncode == 0, proc.stderr
    assert "--repo is ignored" not in proc.stderr
    pinned = _pinned(out)
    defaults = yaml.safe_load((out / "values.yaml").read_text())
    rendered = hp.Chart.load(str(out)).render(defaults, name="aicr", namespace="argocd")
    assert not [k for k in rendered if "/charts/" in k]
    apps = {
        d["metadata"]["name"]: d
        for path, text in rendered.items()
        if path.endswith("applications.yaml")
        for d in yaml.safe_load_all(text)
        if d
    }
    assert set(apps) >= set(pinned)
    readme = (out / "README.md").read_text()
    for component, prov in pinned.items():
        validate_document(apps[component], component)
        src = apps[component]["spec"]["source"]
        with tarfile.open(out / prov["file"], mode="r:gz") as tar:
            meta = yaml.safe_load(tar.extractfile(f"{prov['chart']}/Chart.yaml").read())  # type: ignore[union-attr]
        assert (src["repoURL"], src["chart"], src["targetRevision"]) == (
            OCI[len("oci://") :] + "/charts",
            prov["chart"],
            str(meta["version"]).replace("+", "_"),
        )
        assert f"helm push {prov['file']} {OCI}/charts\n" in readme
    assert "each Application installs its chart from there" in readme
    (out / ".helmignore").unlink()
    # the control: without it Helm loads the archives as subcharts, whose names the root
    # chart's values schema then refuses
    with pytest.raises(Exception, match="additional properties .*'gpu-operator'"):
        hp.Chart.load(str(out)).render(defaults, name="aicr", namespace="argocd")


def test_argocd_helm_vendored_repo_must_be_oci(recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "ah"
    err = _one_line_refusal(
        _bundle(recipe, out, "--charts", str(ARCHIVES), "-d", "argocd-helm", "--repo", GIT), out
    )
    assert "is not an OCI repository; with --vendor-charts the argocd-helm" in err


@pytest.mark.parametrize("deployer", ["helm", "argocd"])
def test_verify_runs_from_the_vendored_archives_with_no_network(
    recipe: Path, tmp_path: Path, deployer: str
) -> None:
    """Every proxy variable points at a proxy that never forwards (it counts connections):
    a plain bundle's verify cannot pull its charts through it (the control), a vendored
    bundle's verifies every chart from its own ``charts/`` and never connects."""
    from aicr_tui.core.verify import helm

    try:
        helm.require_engine()
    except Exception as exc:
        pytest.skip(str(exc))
    extra = ["-d", deployer, "--repo", GIT] if deployer == "argocd" else []
    out = tmp_path / "b"
    assert _bundle(recipe, out, "--charts", str(ARCHIVES), *extra).returncode == 0
    proxy = DeadProxy()
    try:
        # No --charts and empty cache/config homes: only the bundle's own files can be read.
        env = {**proxy.env(tmp_path / "helm"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
               "HOME": str(tmp_path)}  # fmt: skip
        if deployer == "helm":
            plain = tmp_path / "plain"
            made = run_cli("bundle", "-r", str(recipe), "-o", str(plain), *TOLERATION)
            assert made.returncode == 0, made.stderr
            control = run_cli(
                "verify", str(plain), "--report", "-", "--pull-timeout", "10", env=env
            )
            assert control.returncode != 0 and "cannot pull chart" in control.stderr
            assert proxy.connections >= 1
            proxy.connections = 0
        proc = run_cli("verify", str(out), "--report", "-", "-v", env=env)
        assert proxy.connections == 0
    finally:
        proxy.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "vendored archives" in proc.stderr
    assert "chart missing" not in proc.stdout and "pull" not in proc.stdout.lower()
    charted = [line for line in proc.stdout.splitlines() if ": verified (" in line]
    assert len(charted) == len(_pinned(out)) > 0
    assert all(f" from {out / 'charts'}/" in line for line in charted), charted


def _images(rendered: dict[str, str]) -> dict[tuple[str, int, str], str]:
    """(template, document index, field path) -> image reference over a chart's rendered
    templates (object names are left out: the bundle's fullnameOverride changes them)."""
    from aicr_tui.core.bundler.mirror import image_fields

    out: dict[tuple[str, int, str], str] = {}
    for name, text in rendered.items():
        if "/tests/" in name or not name.endswith((".yaml", ".yml")):
            continue
        for i, chunk in enumerate(re.split(r"(?m)^---.*$", text)):
            obj = load_manifest(chunk)
            if isinstance(obj, dict):
                for ref, where in image_fields(obj):
                    out[(name, i, where)] = ref
    return out


def _repository(ref: str) -> str:
    name = ref.split("@", 1)[0]
    head, _, last = name.rpartition("/")
    return f"{head}/{last.split(':', 1)[0]}" if head else last.split(":", 1)[0]


# Upstream aicr's image inventory at 9793720d (every image its catalog renders, as
# repository:tag@digest), vendored verbatim beside its catalog files.
INVENTORY = TEST_DATA / "upstream_catalog" / "container-images.md"


def _normal(repository: str) -> str:
    """Docker Hub's implicit prefixes dropped: docker.io/alpine/kubectl == alpine/kubectl."""
    for prefix in ("docker.io/library/", "docker.io/", "library/"):
        if repository.startswith(prefix):
            return repository.removeprefix(prefix)
    return repository


def _digest_owners(refs: list[str]) -> dict[str, set[str]]:
    """sha256 digest -> the repositories it is published under, from true references."""
    out: dict[str, set[str]] = {}
    for ref in refs:
        if "@sha256:" in ref:
            out.setdefault(ref.split("@", 1)[1], set()).add(_normal(_repository(ref)))
    return out


def _inventory_refs() -> list[str]:
    return re.findall(r"(?m)^- `([^`]+@sha256:[0-9a-f]{64})`$", INVENTORY.read_text())


def _mismatched(refs: list[str], owners: dict[str, set[str]]) -> list[str]:
    """References naming a known digest under a repository that digest does not belong to."""
    return [
        ref
        for ref in refs
        if "@sha256:" in ref
        and ref.split("@", 1)[1] in owners
        and _normal(_repository(ref)) not in owners[ref.split("@", 1)[1]]
    ]


def test_an_image_at_another_repositorys_digest_is_caught() -> None:
    """The pair check the digest test applies, on the reference the catalog used to ship:
    alpine/kubectl named at the digest the nodewright chart pins for bitnami/kubectl."""
    chart = yaml.safe_load(
        (TEST_DATA / "upstream_charts" / "nodewright-chart-v0.15.1" / "values.yaml").read_text()
    )["webhook"]
    bitnami = f"{chart['removalImage']}:{chart['removalTag']}@{chart['removalDigest']}"
    owners = _digest_owners([bitnami, *_inventory_refs()])
    assert len(_inventory_refs()) >= 10
    old = f"docker.io/alpine/kubectl:latest@{chart['removalDigest']}"
    assert _mismatched([old], owners) == [old]
    catalog = yaml.safe_load(
        (RECIPES / "components" / "nodewright-operator" / "values.yaml").read_text()
    )["webhook"]
    now = f"{catalog['removalImage']}:{catalog['removalTag']}@{catalog['removalDigest']}"
    assert now in {f"docker.io/{r}" for r in _inventory_refs()}, now  # a published pair
    assert _mismatched([now, bitnami], owners) == []


# Image fields whose bundle value moves the chart's digest pin to another repository, each
# to a pair upstream publishes (INVENTORY): nodewright's cleanup kubectl is set to what the
# pinned v0.17.1 chart ships (alpine/kubectl:1.36.2 at its own digest), while the public
# v0.15.1 stand-in renders bitnami/kubectl:latest at bitnami's.
REPINNED = {
    ("nodewright-operator", "bitnami/kubectl", "alpine/kubectl"),
}


def test_images_upstream_pins_by_digest_stay_pinned_in_the_vendored_bundle(
    recipe: Path, tmp_path: Path
) -> None:
    """Each vendored archive rendered twice with Helm's engine: with its own defaults (what
    upstream pins) and with the bundle's values. Every image field the defaults pin by digest
    and the bundle still renders carries the same digest on the same repository, or a pair
    upstream's inventory publishes; and no bundled image names a known digest under a
    repository that digest does not belong to."""
    from aicr_tui.core.verify import helm
    from aicr_tui.core.verify.api import bundle_input
    from aicr_tui.core.verify.engine import RenderError

    try:
        helm.require_engine()
    except Exception as exc:
        pytest.skip(str(exc))
    out = tmp_path / "b"
    assert _bundle(recipe, out, "--charts", str(ARCHIVES)).returncode == 0
    pinned = _pinned(out)
    compared: dict[str, int] = {}
    unmeasured = []
    repinned = set()
    defaults: list[str] = []
    bundled_refs: list[str] = []
    published = set(_inventory_refs())
    for comp in bundle_input(out).components:
        if not comp.has_chart:
            continue
        chart = helm.load_chart(out / pinned[comp.name]["file"])
        bundled = _images(chart.render(comp.values, release=comp.name, namespace=comp.namespace))
        bundled_refs += bundled.values()
        try:
            upstream = _images(chart.render({}, release=comp.name, namespace=comp.namespace))
        except RenderError:
            unmeasured.append(comp.name)  # the chart refuses its own defaults (dra-driver)
            continue
        defaults += upstream.values()
        for key, ref in upstream.items():
            if "@sha256:" in ref and key in bundled:
                compared[comp.name] = compared.get(comp.name, 0) + 1
                got = bundled[key]
                if got.endswith("@" + ref.split("@", 1)[1]):
                    assert _repository(got) == _repository(ref), (comp.name, key, got)
                else:
                    assert got.removeprefix("docker.io/") in published, (comp.name, key, got)
                    repinned.add((comp.name, _normal(_repository(ref)), _normal(_repository(got))))
    print("digest pins compared:", compared, "not measured:", unmeasured)
    assert compared.get("nodewright-operator", 0) >= 4  # upstream pins its images by digest
    assert len(unmeasured) <= 1
    assert repinned == REPINNED
    assert _mismatched(bundled_refs, _digest_owners([*defaults, *_inventory_refs()])) == []
