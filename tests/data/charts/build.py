"""Package the chart trees the cluster tier deploys into ``tests/data/charts/archives/*.tgz``.

Run from the repository root after ``make cluster-up`` has built helm (its ``helm package``
honours each tree's ``.helmignore``)::

    .venv/bin/python -m tests.data.charts.build [--sources tests/data/upstream_charts]

Each archive is named ``<chart>-<version>.tgz`` with the chart name the bundle asks for and
the version the catalog pins, so ``helm upgrade --install --version V`` against the loopback
chart repository of tests/cluster/deploy_support.py finds exactly the pin. Where the vendored
tree is a nearby tag or a stand-in, its ``Chart.yaml`` name/version are rewritten on a copy
and PROVENANCE.md says so. ``repositories.json`` maps every upstream repository URL (as in
aicr_tui/recipes/registry.yaml) to the archives it serves.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# A folder of its own: tests/data/charts itself is a `verify --charts` directory, where an
# archive named <component>-<version>.tgz would be taken for that pin's chart.
DEST = HERE / "archives"


class Source(NamedTuple):
    tree: str  # a directory under --sources, or "local:<dir>" under tests/data/charts
    repository: str  # the upstream repository URL the registry pins
    chart: str  # the chart name the bundle installs
    version: str  # the catalog pin


SOURCES: dict[str, Source] = {
    "cert-manager": Source("cert-manager-v1.20.2", "https://charts.jetstack.io", "cert-manager", "v1.20.2"),
    "nfd": Source(
        "nfd-0.19.0",
        "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
        "node-feature-discovery",
        "0.19.0",
    ),
    "gpu-operator": Source("gpu-operator-v26.7.0", "https://helm.ngc.nvidia.com/nvidia", "gpu-operator", "v26.7.0"),
    "network-operator": Source(
        "network-operator-26.4.1", "https://helm.ngc.nvidia.com/nvidia", "network-operator", "26.4.1"
    ),
    "nvidia-dra-driver-gpu": Source(
        "nvidia-dra-driver-gpu-v0.4.1",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "dra-driver-nvidia-gpu",
        "0.4.1",
    ),
    # The newer side of the cluster tier's upgrade case (tests/cluster/test_upgrade_check_cluster.py):
    # the main-branch tree after the v0.4.1 tag, at its own Chart.yaml version. No recipe pins it.
    "nvidia-dra-driver-gpu@0.5.0-dev": Source(
        "nvidia-dra-driver-gpu-0.5.0-dev",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "dra-driver-nvidia-gpu",
        "0.5.0-dev",
    ),
    "nvsentinel": Source("nvsentinel-main-2026-07-14", "oci://ghcr.io/nvidia", "nvsentinel", "v1.20.0"),
    "nodewright-operator": Source(
        "nodewright-chart-v0.15.1", "oci://ghcr.io/nvidia/nodewright/charts", "nodewright", "v0.17.1"
    ),
    "kube-prometheus-stack": Source(
        "kube-prometheus-stack-84.4.0",
        "https://prometheus-community.github.io/helm-charts",
        "kube-prometheus-stack",
        "84.4.0",
    ),
    "prometheus-adapter": Source(
        "prometheus-adapter-5.3.0",
        "https://prometheus-community.github.io/helm-charts",
        "prometheus-adapter",
        "5.3.0",
    ),
    "kai-scheduler": Source(
        "kai-scheduler-v0.16.8", "oci://ghcr.io/kai-scheduler/kai-scheduler", "kai-scheduler", "v0.16.8"
    ),
    # Issue 33: agentgateway replaces kgateway (upstream's inference gateway).
    "agentgateway-crds": Source(
        "upstream:agentgateway-crds-v1.3.1", "oci://cr.agentgateway.dev/charts", "agentgateway-crds", "v1.3.1"
    ),
    "agentgateway": Source(
        "upstream:agentgateway-v1.3.1", "oci://cr.agentgateway.dev/charts", "agentgateway", "v1.3.1"
    ),
    # Issue 33: in every bundle; trees under tests/data/upstream_charts (PROVENANCE-new.md).
    "prometheus-operator-crds": Source(
        "upstream:prometheus-operator-crds-28.0.1",
        "https://prometheus-community.github.io/helm-charts",
        "prometheus-operator-crds",
        "28.0.1",
    ),
    "k8s-ephemeral-storage-metrics": Source(
        "upstream:k8s-ephemeral-storage-metrics-1.19.2",
        "https://jmcgrath207.github.io/k8s-ephemeral-storage-metrics/chart",
        "k8s-ephemeral-storage-metrics",
        "1.19.2",
    ),
    # The Slurm platform of h100-aks-ubuntu-training-slurm (upstream's pins at 9793720d).
    "slinky-slurm-operator-crds": Source(
        "upstream:slurm-operator-crds-1.2.0", "oci://ghcr.io/slinkyproject/charts", "slurm-operator-crds", "1.2.0"
    ),
    "slinky-slurm-operator": Source(
        "upstream:slurm-operator-1.2.0", "oci://ghcr.io/slinkyproject/charts", "slurm-operator", "1.2.0"
    ),
    "slinky-slurm": Source("upstream:slurm-1.2.0", "oci://ghcr.io/slinkyproject/charts", "slurm", "1.2.0"),
    "mariadb-operator-crds": Source(
        "upstream:mariadb-operator-crds-26.6.0", "oci://ghcr.io/mariadb-operator/charts", "mariadb-operator-crds", "26.6.0"
    ),
    "mariadb-operator": Source(
        "upstream:mariadb-operator-26.6.0", "oci://ghcr.io/mariadb-operator/charts", "mariadb-operator", "26.6.0"
    ),
    "slurm-accounting-mariadb": Source(
        "upstream:mariadb-cluster-26.6.0", "oci://ghcr.io/mariadb-operator/charts", "mariadb-cluster", "26.6.0"
    ),
}  # fmt: skip


def _tree(src: Source, sources: Path) -> Path:
    if src.tree.startswith("local:"):
        return HERE / src.tree.removeprefix("local:")
    return sources / src.tree.removeprefix("upstream:")


def _patch_chart_yaml(path: Path, name: str, version: str) -> None:
    """Rewrite the top-level ``name:`` and ``version:`` lines (nothing else)."""
    text = path.read_text(encoding="utf-8")
    for key, value in (("name", name), ("version", version)):
        text, n = re.subn(rf"(?m)^{key}:.*$", f'{key}: "{value}"', text, count=1)
        if n != 1:
            raise SystemExit(f"{path}: no top-level {key}: line")
    path.write_text(text, encoding="utf-8")


def build(sources: Path, helm: str, only: list[str] | None = None) -> None:
    """Package every source (``only``: just those components, the other archives kept)."""
    repositories: dict[str, list[str]] = {}
    DEST.mkdir(exist_ok=True)
    if only:
        for component, src in SOURCES.items():
            if component not in only and (DEST / f"{src.chart}-{src.version}.tgz").is_file():
                repositories.setdefault(src.repository, []).append(f"{src.chart}-{src.version}.tgz")
    else:
        for archive in DEST.glob("*.tgz"):
            archive.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        for component, src in SOURCES.items():
            if only and component not in only:
                continue
            tree = _tree(src, sources)
            if not (tree / "Chart.yaml").is_file():
                raise SystemExit(f"{component}: {tree} holds no chart")
            work = Path(tmp) / src.chart
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(tree, work, ignore=shutil.ignore_patterns("PROVENANCE.txt"))
            _patch_chart_yaml(work / "Chart.yaml", src.chart, src.version)
            if helm == "helm-python":
                import helm_python  # the Helm SDK's own packager (honours .helmignore)

                helm_python.package(work, destination=DEST)
            else:
                subprocess.run(
                    [helm, "package", str(work), "--destination", str(DEST)],
                    check=True,
                    capture_output=True,
                    text=True,
                )
            archive = f"{src.chart}-{src.version}.tgz"
            if not (DEST / archive).is_file():
                raise SystemExit(f"{component}: helm package did not write {archive}")
            repositories.setdefault(src.repository, []).append(archive)
            print(f"{archive}  <- {tree}")
    repositories = {k: sorted(v) for k, v in repositories.items()}
    (DEST / "repositories.json").write_text(
        json.dumps(repositories, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    default = REPO / "tests" / "data" / "upstream_charts"
    parser.add_argument("--sources", type=Path, default=default, help="the upstream chart trees")
    parser.add_argument(
        "--helm",
        default=shutil.which("helm") or "helm",
        help='the helm CLI, or "helm-python" for the Helm SDK of the verify extra',
    )
    parser.add_argument("--only", nargs="*", help="package just these components")
    args = parser.parse_args()
    build(args.sources.resolve(), args.helm, args.only)


if __name__ == "__main__":
    main()
