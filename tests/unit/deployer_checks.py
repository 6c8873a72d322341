"""Validators for generated bundles: the vendored Argo CD / Flux CRD schemas, Kubernetes 1.34
schemas for core objects, and structural checks of kustomize files (no cluster needed).

The CRDs are upstream's own (tests/data/crds/PROVENANCE.txt); each document of a CRD kind
is validated against the openAPIV3Schema of the served version its apiVersion names.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

CRDS = Path(__file__).resolve().parents[1] / "data" / "crds"
# CRDs a bundle's chart installs for the custom resources its own manifests create
# (issue 33: the AgentgatewayParameters of the inference gateway), from the vendored chart.
CHART_CRDS = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "upstream_charts"
    / "agentgateway-crds-v1.3.1"
    / "templates"
)
K8S_VERSION = "1.34.0"
KUSTOMIZE = "kustomize.config.k8s.io/v1beta1"
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Custom resources of the catalog's own operators (checked by their own tests; the
# NicClusterPolicy against the network-operator chart's own CRD in tests/verify).
FOREIGN_GROUPS = ("skyhook.nvidia.com/", "mellanox.com/")


@cache
def crd_validators() -> dict[tuple[str, str], jsonschema.protocols.Validator]:
    out: dict[tuple[str, str], jsonschema.protocols.Validator] = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if not version.get("served"):
                continue
            schema = version["schema"]["openAPIV3Schema"]
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
            out[(f"{group}/{version['name']}", kind)] = cls(schema)
    return out


@cache
def chart_crd_validators() -> dict[tuple[str, str], Any]:
    """Validators of the CRDs the agentgateway-crds chart installs (its templates are plain
    CRD documents), for the custom resources the gateway's manifest creates."""
    crds = [
        yaml.safe_load(p.read_text()) for p in sorted(CHART_CRDS.glob("agentgateway.dev_*.yaml"))
    ]
    return validators_of(crds)


def crd_kinds() -> set[tuple[str, str]]:
    return set(crd_validators())


def validators_of(crds: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    """Schema validators of CRDs (served versions), keyed by (apiVersion, kind)."""
    out: dict[tuple[str, str], Any] = {}
    for crd in crds:
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if version.get("served") and schema:
                cls = jsonschema.validators.validator_for(
                    schema, default=jsonschema.Draft7Validator
                )
                out[(f"{group}/{version['name']}", kind)] = cls(schema)
    return out


def validate_document(
    doc: dict[str, Any], where: str, bundled: dict[tuple[str, str], Any] | None = None
) -> str:
    """Validate one object; returns how ("crd", "kubernetes", "kustomize", "foreign").

    ``bundled``: validators of CRDs the bundle itself ships (a custom resource of one of
    them is checked against that CRD's schema)."""
    assert isinstance(doc, dict), where
    api, kind = doc.get("apiVersion"), doc.get("kind")
    assert isinstance(api, str) and isinstance(kind, str), f"{where}: no apiVersion/kind"
    if api == KUSTOMIZE:
        return "kustomize"
    name = doc.get("metadata", {}).get("name", "")
    assert isinstance(name, str) and SUBDOMAIN.match(name) and len(name) <= 253, (
        f"{where}: metadata.name {name!r} is not a DNS-1123 subdomain"
    )
    validator = (
        crd_validators().get((api, kind))
        or (bundled or {}).get((api, kind))
        or chart_crd_validators().get((api, kind))
    )
    if validator is not None:
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        assert not errors, f"{where}: {kind} fails its CRD schema: " + "; ".join(
            f"{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors[:5]
        )
        return "crd"
    if api.startswith(FOREIGN_GROUPS):
        return "foreign"
    assert not api.endswith((".fluxcd.io/v1", ".fluxcd.io/v2", "argoproj.io/v1alpha1")), (
        f"{where}: {api} {kind} has no vendored CRD"
    )
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    return "kubernetes"


def yaml_documents(text: str, where: str) -> list[dict[str, Any]]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:  # pragma: no cover - the assertion names it
        raise AssertionError(f"{where} is not YAML: {exc}") from exc
    return docs


def validate_bundle(files: dict[str, bytes]) -> dict[str, int]:
    """Validate every Kubernetes object in a bundle's YAML files; returns counts per method.

    Helm templates (anything under a chart's ``templates/`` holding ``{{``) are skipped
    here: they are rendered by the real engine in the argocd-helm tests.
    """
    counts: dict[str, int] = {}
    crds = [
        d
        for rel, data in files.items()
        if rel.endswith(".yaml") and b"kind: CustomResourceDefinition" in data and b"{{" not in data
        for d in yaml_documents(data.decode(), rel)
        if d.get("kind") == "CustomResourceDefinition"
    ]
    bundled = validators_of(crds)
    for rel, data in files.items():
        if not rel.endswith(".yaml") or rel.endswith("values.yaml") or rel == "recipe.yaml":
            continue
        text = data.decode()
        if rel == "bundle-info.yaml" or rel.startswith(("helmfile", "level-")):
            continue
        if rel.endswith("Chart.yaml"):
            check_chart_yaml(yaml.safe_load(text), rel)
            counts["chart"] = counts.get("chart", 0) + 1
            continue
        if "/templates/" in f"/{rel}" and "{{" in text and not _escaped_only(text):
            continue
        for doc in yaml_documents(_unescape(text), rel):
            if "apiVersion" not in doc:
                continue
            how = validate_document(doc, rel, bundled)
            counts[how] = counts.get(how, 0) + 1
    return counts


def _escaped_only(text: str) -> bool:
    return "{{" not in text.replace('{{ "{{" }}', "").replace('{{ "}}" }}', "")


def _unescape(text: str) -> str:
    return text.replace('{{ "{{" }}', "{{").replace('{{ "}}" }}', "}}")


def check_kustomize_file(files: dict[str, bytes], rel: str) -> dict[str, Any]:
    """A kustomize file: every resource and generator file it names is in the bundle."""
    doc = yaml.safe_load(files[rel].decode())
    assert doc["apiVersion"] == KUSTOMIZE and doc["kind"] == "Kustomization", rel
    base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
    for res in doc.get("resources", []):
        assert f"{base}{res}" in files, f"{rel}: resource {res} is not in the bundle"
    for gen in doc.get("configMapGenerator", []):
        for f in gen["files"]:
            assert f"{base}{f.split('=', 1)[-1]}" in files, f"{rel}: {f} is not in the bundle"
    return doc


SEMVER = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def check_chart_yaml(doc: dict[str, Any], where: str) -> None:
    """A generated Chart.yaml: Helm v2 chart metadata with a name and a SemVer version."""
    assert doc["apiVersion"] == "v2", where
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["name"]), where
    assert SEMVER.match(str(doc["version"])), f"{where}: version {doc['version']!r}"
    assert doc.get("type", "application") == "application", where
