"""``upgrade-check -k`` against the real control plane, and the upgrade it judged, applied.

The installed side is a bundle of the current AKS H100 training recipe, deployed with its own
``deploy.sh``: its ``nvidia-dra-driver-gpu`` component at the pinned chart 0.4.1 (the newest
published tag) and ``nfd`` at its pin. To keep the tier's time short the bundle holds those
two components of the recipe only (the dra driver's ``dependencyRefs`` on gpu-operator are
dropped with it; nothing else of either component is changed).

The targets are the same two components with the dra driver at the next published chart, the
main-branch tree 0.5.0-dev (vendored under tests/data/upstream_charts, packaged into
tests/data/charts/archives by build.py: see tests/data/charts/PROVENANCE.md):

- ``upgrade``: the chart version alone. upgrade-check says nfd ``safe`` (unchanged) and the
  dra driver ``manual`` (a 0.x minor version is a major change); the new bundle's
  ``deploy.sh`` must then upgrade both cleanly (releases deployed, the dra driver at
  0.5.0-dev, the objects each target names present);
- ``selector``: the same, with a value a user may upgrade with, the chart's own
  ``selectorLabelsOverride``. upgrade-check says the dra driver is ``blocked`` (the selectors
  of its Deployment and DaemonSet change); that bundle's ``deploy.sh`` is run anyway and
  the real API server must refuse each object named, leaving the installed selectors as they
  were;
- ``namespace``: the dra driver in another namespace, a new Helm release over the objects the
  installed one owns: ``blocked``; that bundle's ``deploy.sh`` is refused by Helm (invalid
  ownership metadata) on an object the installed release owns;
- ``crd`` (judged after the upgrade, against 0.5.0-dev as installed): a derived 0.5.1-v1 tree
  whose ComputeDomain CRD no longer lists its stored version ``v1beta1`` (the one stated edit
  of the unit case; no such chart is published): ``blocked``; Helm never upgrades ``crds/``,
  so the change is forced as its step says, ``kubectl apply`` of the new CRD, and the server
  refuses it while ``status.storedVersions`` names ``v1beta1``.

Each verdict is read from ``-o json`` of the real run; the table of the ``upgrade`` run is
printed (docs/upgrade-check.md shows it).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import chart_repository
from tests.cluster.conftest import Cluster
from tests.cluster.deploy_support import (
    AKS_TOLERATION,
    AKS_TRAINING,
    ClusterState,
    bundle,
    recipe,
    releases,
    run_script,
    sweep,
    wait_gone,
)
from tests.cluster.livecap_support import model, modelled_cluster
from tests.conftest import REPO, run_cli

DRA = "nvidia-dra-driver-gpu"
KEPT = ("nfd", DRA)
OLD, NEW = "0.4.1", "0.5.0-dev"
CHARTS = [
    "--charts",
    str(REPO / "tests/data/upstream_charts"),
    "--charts",
    str(REPO / "tests/data/charts"),
]
# The chart's own value (values.yaml of both versions: selectorLabelsOverride), set by a user
# on the upgrade: every workload's selector changes.
SELECTOR_OVERRIDE = {"app": "dra"}
# The dra driver's namespace changed in the target recipe: a new Helm release.
MOVED_TO = "dra-system"
# A derived target (no such chart is published): 0.5.0-dev with its ComputeDomain CRD's
# stored version renamed; see _derived_stored_version_removed.
CRD_REMOVED = "0.5.1-v1"
CRD_FILE = "crds/resource.nvidia.com_computedomains.yaml"
CRD_NAME = "computedomains.resource.nvidia.com"


def _recipes(tmp: Path) -> dict[str, Path]:
    """The installed recipe (the current one, two components) and the four targets."""
    doc: dict[str, Any] = yaml.safe_load(recipe(tmp, *AKS_TRAINING).read_text(encoding="utf-8"))
    doc["componentRefs"] = [c for c in doc["componentRefs"] if c["name"] in KEPT]
    doc["deploymentOrder"] = [n for n in doc["deploymentOrder"] if n in KEPT]
    (dra,) = [c for c in doc["componentRefs"] if c["name"] == DRA]
    assert dra["version"] == OLD, "the current recipe no longer pins the older chart"
    dra.pop("dependencyRefs", None)
    out: dict[str, Path] = {}

    def write(name: str) -> None:
        out[name] = tmp / f"{name}.yaml"
        out[name].write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")

    write("installed")
    dra["version"] = NEW
    write("upgrade")
    dra["overrides"] = {**dra.get("overrides", {}), "selectorLabelsOverride": SELECTOR_OVERRIDE}
    write("selector")
    dra["overrides"].pop("selectorLabelsOverride")
    ns = dra["namespace"]
    dra["namespace"] = MOVED_TO
    write("namespace")
    dra["namespace"] = ns
    dra["version"] = CRD_REMOVED
    write("crd")
    return out


def _derived_stored_version_removed(tmp: Path) -> Path:
    """A charts directory holding a copy of the 0.5.0-dev tree as version 0.5.1-v1 whose
    ComputeDomain CRD (in ``crds/``) names its one, stored, version ``v1`` instead of
    ``v1beta1``: the one stated edit of tests/unit/test_upgrade_charts.py's stored-version
    case, not a published chart."""
    charts = tmp / "derived-charts"
    tree = charts / f"{DRA}-{CRD_REMOVED}"
    shutil.copytree(REPO / f"tests/data/upstream_charts/{DRA}-{NEW}", tree)
    chart_yaml = tree / "Chart.yaml"
    text = chart_yaml.read_text(encoding="utf-8")
    assert text.count(f'version: "{NEW}"') == 1
    chart_yaml.write_text(text.replace(f'version: "{NEW}"', f'version: "{CRD_REMOVED}"'))
    crd = tree / CRD_FILE
    text = crd.read_text(encoding="utf-8")
    assert text.count("  - name: v1beta1") == 1
    crd.write_text(text.replace("  - name: v1beta1", "  - name: v1"), encoding="utf-8")
    return charts


def _check(cluster: Cluster, target: Path, *extra: str) -> Any:
    started = time.monotonic()
    proc = run_cli(
        "upgrade-check", "-k", str(cluster.kubeconfig), "--to", str(target), *CHARTS,
        *AKS_TOLERATION, *extra, timeout=300,
    )  # fmt: skip
    print(f"upgrade-check --to {target.name}: {time.monotonic() - started:.0f} s")
    return proc


def _verdicts(cluster: Cluster, target: Path, *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    proc = _check(cluster, target, "-o", "json", *extra)
    assert proc.returncode in (0, 10, 11, 12), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["exitCode"] == proc.returncode
    return proc.returncode, {c["component"]: c for c in doc["components"]}


def _releases(cluster: Cluster) -> dict[tuple[str, str], dict[str, Any]]:
    """Every release Helm lists, in any state, by (namespace, name)."""
    listed = json.loads(
        cluster.helm(
            "list", "-A", "--deployed", "--failed", "--pending", "--superseded", "-o", "json"
        ).stdout
    )  # fmt: skip
    return {(r["namespace"], r["name"]): r for r in listed}


def _step(bundle_dir: Path, component: str) -> str:
    """The deploy.sh step number (folder prefix) of ``component``."""
    (found,) = [r for r in releases(bundle_dir) if r["component"] == component]
    return str(found["path"]).split("-", 1)[0]


def _selector(cluster: Cluster, kind: str, name: str, namespace: str) -> Any:
    got = cluster.get(kind, name, namespace)
    assert got is not None, f"{kind} {namespace}/{name} is gone"
    return got["spec"]["selector"]


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with chart_repository.serve(tmp_path_factory.mktemp("chart-repos")) as served:
        yield served


def test_upgrade_check_verdicts_agree_with_the_real_server(
    cluster: Cluster, repos: chart_repository.ChartRepositories, tmp_path: Path
) -> None:
    recipes = _recipes(tmp_path)
    bundles = {
        name: bundle(path, tmp_path / f"bundle-{name}", *AKS_TOLERATION)
        for name, path in recipes.items()
        if name != "crd"  # judged only: Helm never applies a crds/ change
    }
    started = time.monotonic()
    with modelled_cluster(cluster, model("aks-h100-install.yaml").nodes):
        before = ClusterState.read(cluster)
        try:
            deployed = run_script(cluster, repos, bundles["installed"] / "deploy.sh")
            assert deployed.returncode == 0, str(deployed)
            installed = _releases(cluster)
            (ns,) = [n for n, name in installed if name == DRA]
            assert installed[ns, DRA]["chart"] == f"dra-driver-nvidia-gpu-{OLD}", installed
            print(f"installed in {deployed.seconds:.0f} s")

            # ---- the verdicts, from the live cluster's Helm records
            code, upgrade = _verdicts(cluster, recipes["upgrade"])
            assert code == 10, upgrade
            assert upgrade["nfd"]["verdict"] == "safe", upgrade["nfd"]
            dra = upgrade[DRA]
            assert (dra["verdict"], dra["from"], dra["to"]) == ("manual", OLD, NEW), dra
            assert {r["kind"] for r in dra["reasons"]} == {"chart-major-version"}, dra
            table = _check(cluster, recipes["upgrade"])
            assert table.returncode == 10, table.stderr
            print(table.stdout)

            code, selector = _verdicts(cluster, recipes["selector"])
            assert code == 12, selector
            assert selector["nfd"]["verdict"] == "safe", selector["nfd"]
            assert selector[DRA]["verdict"] == "blocked", selector[DRA]
            blocked = [r for r in selector[DRA]["reasons"] if r["verdict"] == "blocked"]
            assert {r["kind"] for r in blocked} == {"immutable-field"}, blocked
            named = {r["message"].split(":", 1)[0] for r in blocked}
            assert named == {
                f"Deployment {ns}/nvidia-dra-driver-gpu-controller",
                f"DaemonSet {ns}/nvidia-dra-driver-gpu-kubelet-plugin",
            }, blocked

            code, moved = _verdicts(cluster, recipes["namespace"])
            assert code == 12, moved
            assert moved[DRA]["verdict"] == "blocked", moved[DRA]
            clashes = [r for r in moved[DRA]["reasons"] if r["verdict"] == "blocked"]
            assert clashes and {r["kind"] for r in clashes} <= {
                "release-renamed",
                "object-owned-by-another-release",
            }, clashes
            # (each forced change below leaves a failed release record, which upgrade-check
            # reads as unknown: every verdict is taken before any is forced)

            # ---- blocked: forced with that bundle's own deploy.sh, from the dra driver's
            # step (nfd's is the same as installed); the server refuses each object named
            step = ["--from", _step(bundles["selector"], DRA)]
            # "Kind namespace/name" -> (kind, name), and each selector as installed
            objects = {ref: (ref.split(" ")[0], ref.rsplit("/", 1)[1]) for ref in named}
            selectors = {ref: _selector(cluster, k, n, ns) for ref, (k, n) in objects.items()}
            forced = run_script(cluster, repos, bundles["selector"] / "deploy.sh", *step)
            print(
                f"forced selector change: {forced.seconds:.0f} s, exit {forced.returncode}\n{forced.stderr[-3000:]}"
            )
            assert forced.returncode != 0, str(forced)
            refused = forced.stderr + forced.stdout
            assert "field is immutable" in refused, str(forced)
            for ref, (kind, name) in objects.items():
                assert f'{kind}.apps "{name}" is invalid' in refused, (ref, str(forced))
                assert _selector(cluster, kind, name, ns) == selectors[ref], ref

            # ---- blocked: the release moved to another namespace, over the objects the
            # installed release owns; forced with that bundle's deploy.sh, it is refused
            # before any step (its preflight renders the chart: Helm would refuse the same
            # objects at the step, invalid ownership metadata), one line for each object,
            # naming the installed release as its owner; no release is made
            forced = run_script(cluster, repos, bundles["namespace"] / "deploy.sh", *step)
            print(
                f"forced namespace move: {forced.seconds:.0f} s, exit {forced.returncode}\n{forced.stderr[-3000:]}"
            )
            assert forced.returncode != 0, str(forced)
            refused = [ln for ln in forced.stderr.splitlines() if ln.startswith("REFUSED: ")]
            assert refused, str(forced)
            assert "deploy.sh: nothing was changed" in forced.stderr, str(forced)
            for line in refused:
                found = re.match(
                    r"REFUSED: (\w+)/(?:([^/ ]+)/)?([^/ ]+) exists and is not Helm release "
                    rf"{re.escape(MOVED_TO)}/{re.escape(DRA)}'s \(owner: Helm release ([^/]+)/([^)]+)\)",
                    line,
                )  # fmt: skip
                assert found, line
                kind, where, name, owner_ns, owner = found.groups()
                assert (owner_ns, owner) == (ns, DRA), line
                taken = cluster.get(kind.lower(), name, where)
                assert taken is not None, line
                marks = taken["metadata"].get("annotations", {})
                assert (
                    marks["meta.helm.sh/release-namespace"],
                    marks["meta.helm.sh/release-name"],
                ) == (
                    ns,
                    DRA,
                ), marks
            # nothing to undo: no release, and not even the namespace was made
            assert _releases(cluster).get((MOVED_TO, DRA)) is None
            assert cluster.get("namespace", MOVED_TO) is None

            # ---- safe and manual: the upgrade with the new bundle's deploy.sh, cleanly
            upgraded = run_script(cluster, repos, bundles["upgrade"] / "deploy.sh")
            assert upgraded.returncode == 0, str(upgraded)
            print(f"upgraded in {upgraded.seconds:.0f} s")
            after = _releases(cluster)
            assert after[ns, DRA]["chart"] == f"dra-driver-nvidia-gpu-{NEW}", after
            target = yaml.safe_load(recipes["upgrade"].read_text(encoding="utf-8"))
            for comp in target["componentRefs"]:
                assert after[comp["namespace"], comp["name"]]["status"] == "deployed", after
                for res in comp.get("expectedResources", []):
                    got = cluster.get(res["kind"].lower(), res["name"], res["namespace"])
                    assert got is not None, res
            # what upgrade-check reads now is the target: nothing left to change
            code, now = _verdicts(cluster, recipes["upgrade"])
            assert code == 0 and {c["verdict"] for c in now.values()} == {"safe"}, now

            # ---- blocked: a target whose crds/ CRD no longer lists the stored version. Helm
            # never upgrades crds/, so the step is applying the new CRD by hand: the server
            # refuses it while status.storedVersions names the version removed
            derived = _derived_stored_version_removed(tmp_path)
            code, crd = _verdicts(cluster, recipes["crd"], "--charts", str(derived))
            assert code == 12, crd
            kinds_of = {(r["kind"], r["verdict"]) for r in crd[DRA]["reasons"]}
            assert ("crd-stored-version-removed", "blocked") in kinds_of, crd[DRA]
            live = cluster.get("crd", CRD_NAME)
            assert live is not None and live["status"]["storedVersions"] == ["v1beta1"], live
            applied = cluster.kubectl(
                "apply", "-f", str(derived / f"{DRA}-{CRD_REMOVED}" / CRD_FILE), check=False
            )
            print(f"forced CRD stored version removal: exit {applied.returncode}\n{applied.stderr}")
            assert applied.returncode != 0, applied.stdout
            assert "status.storedVersions[0]" in applied.stderr, applied.stderr
            assert 'v1beta1": missing from spec.versions' in applied.stderr, applied.stderr
            kept = cluster.get("crd", CRD_NAME)
            assert kept is not None and [v["name"] for v in kept["spec"]["versions"]] == ["v1beta1"]

            # CRDs go only when asked (issue 32): this bundle made them all, the cluster is the tier's
            undeployed = run_script(
                cluster, repos, bundles["upgrade"] / "undeploy.sh", "--delete-crds"
            )
            assert undeployed.returncode == 0, str(undeployed)
            print(f"undeployed in {undeployed.seconds:.0f} s")
            left = wait_gone(cluster, before)
            assert not any(left.values()), f"undeploy.sh left behind: {left}"
        finally:
            swept = sweep(cluster, before)
            print(f"wall {time.monotonic() - started:.0f} s; swept {swept}")
