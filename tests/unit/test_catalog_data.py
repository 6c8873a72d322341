"""Integrity of the recipe catalog data under aicr_tui/recipes/.

These tests read the YAML files directly (through aicr_tui.core.foundation.yamlio), independent of the
resolver, so a broken data file is reported as a data problem with its path. They check
the document shapes the resolver relies on, that every reference resolves, and the facts
the product briefs pin (AKS and OKE gpuStack tables, baseline values, bundle checks).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.documents.criteria import DIMENSIONS, STATIC_VALUES
from aicr_tui.core.documents.snapshot import load_snapshot
from aicr_tui.core.foundation.yamlio import load_yaml, to_plain
from aicr_tui.core.recipe.constraints import evaluate_constraint, parse_expression, parse_path

RECIPES = Path(__file__).resolve().parents[2] / "aicr_tui" / "recipes"
OVERLAYS = RECIPES / "overlays"
MIXINS = RECIPES / "mixins"
COMPONENTS = RECIPES / "components"
SNAPSHOTS = RECIPES / "samples" / "snapshots"

AUTHORING = "aicr.run/v1beta1"
PROFILED = "aicr.run/v1beta2"

# Helper C writes these manifests; the catalog references them by these exact paths.
THE_MANIFESTS = (
    "components/gpu-operator/manifests/nvidia-toolkit-hardening-aks.yaml",
    "components/network-operator/manifests/nvidia-peermem-reloader.yaml",
    "components/nodewright-customizations/manifests/tuning.yaml",
    # Issue 33: the inference gateway is agentgateway, as upstream.
    "components/agentgateway/manifests/inference-gateway.yaml",
    "components/agentgateway-crds/manifests/gateway-api-crds.yaml",
    "components/agentgateway-crds/manifests/inference-extension-crds.yaml",
    # Issue 13: the chart stopped rendering the NicClusterPolicy in 24.10.
    "components/network-operator/manifests/nic-cluster-policy-aks.yaml",
    # Issue 33: upstream's Slurm leaf (enroot ConfigMap, shared-storage claims).
    "components/slinky-slurm/manifests/enroot-config.yaml",
    "components/slinky-slurm/manifests/shared-storage-pvcs.yaml",
)


NIC_POLICY = "components/network-operator/manifests/nic-cluster-policy-aks.yaml"


def _load(path: Path) -> Any:
    return to_plain(load_yaml(path.read_text(encoding="utf-8"), str(path)))


@cache
def registry() -> dict[str, Any]:
    doc: dict[str, Any] = _load(RECIPES / "registry.yaml")
    return doc


@cache
def overlays() -> dict[str, dict[str, Any]]:
    return {p.stem: _load(p) for p in sorted(OVERLAYS.glob("*.yaml"))}


@cache
def mixins() -> dict[str, dict[str, Any]]:
    return {p.stem: _load(p) for p in sorted(MIXINS.glob("*.yaml"))}


def registry_names() -> set[str]:
    return {c["name"] for c in registry()["components"]}


def documents() -> list[tuple[str, dict[str, Any]]]:
    """Every overlay and mixin, labelled by its path relative to aicr_tui/recipes/."""
    docs = [(f"overlays/{n}.yaml", d) for n, d in overlays().items()]
    docs += [(f"mixins/{n}.yaml", d) for n, d in mixins().items()]
    return docs


def component_refs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    refs: list[dict[str, Any]] = list(doc["spec"].get("componentRefs") or [])
    return refs


def snapshot_constraints(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Constraints evaluated against a snapshot: spec.constraints and profile values."""
    spec = doc["spec"]
    found = [("spec.constraints", c) for c in spec.get("constraints") or []]
    profile = spec.get("profile") or {}
    for value, frag in (profile.get("values") or {}).items():
        for key in ("constraints", "readinessConstraints"):
            found += [(f"profile {value} {key}", c) for c in frag.get(key) or []]
    return found


def chain(name: str) -> list[str]:
    """The overlay and its ancestors, leaf first, ending at base."""
    seen: list[str] = []
    current = name
    while current != "base":
        assert current not in seen, f"inheritance cycle through {seen + [current]}"
        seen.append(current)
        parent = overlays()[current]["spec"].get("base") or "base"
        assert parent in overlays(), f"overlays/{current}.yaml: unknown base {parent!r}"
        current = parent
    return [*seen, "base"]


def leaves() -> list[str]:
    """Overlays a complete query ends on: service, accelerator, OS and intent all stated
    (a platform leaf adds the platform), plus the independent monitoring-hpa."""
    full = ("service", "accelerator", "os", "intent")
    return sorted(
        n
        for n, d in overlays().items()
        if n == "monitoring-hpa" or all(f in (d["spec"].get("criteria") or {}) for f in full)
    )


def mixins_of(name: str) -> list[str]:
    out: list[str] = []
    for ov in reversed(chain(name)):
        for m in overlays()[ov]["spec"].get("mixins") or []:
            if m not in out:
                out.append(m)
    return out


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, path + "."))
        else:
            out[path] = value
    return out


def profile_table(overlay: str) -> dict[str, dict[str, Any]]:
    """{value: {"component:path": leaf}} of an overlay's profile declaration."""
    values = overlays()[overlay]["spec"]["profile"]["values"]
    table: dict[str, dict[str, Any]] = {}
    for value, frag in values.items():
        leaves_of: dict[str, Any] = {}
        for ref in frag.get("componentRefs") or []:
            for path, leaf in flatten(ref.get("overrides") or {}).items():
                leaves_of[f"{ref['name']}:{path}"] = leaf
        table[value] = leaves_of
    return table


def values_file(rel: str) -> dict[str, Any]:
    doc: dict[str, Any] = _load(RECIPES / rel)
    return doc


# ------------------------------------------------------------------ shapes


def test_every_data_file_loads_as_one_mapping() -> None:
    files = [RECIPES / "registry.yaml", *OVERLAYS.glob("*.yaml"), *MIXINS.glob("*.yaml")]
    files += list(COMPONENTS.glob("*/values*.yaml"))
    assert len(files) > 50
    for path in files:
        assert isinstance(_load(path), dict), f"{path} is not a YAML mapping"


def test_registry_header_and_unique_names() -> None:
    reg = registry()
    assert reg["kind"] == "ComponentRegistry"
    assert reg["apiVersion"] == AUTHORING
    names = [c["name"] for c in reg["components"]]
    assert len(names) == len(set(names)), "duplicate registry component"
    aliases = [k for c in reg["components"] for k in c.get("valueOverrideKeys") or []]
    owners = {
        k: [c["name"] for c in reg["components"] if k in (c.get("valueOverrideKeys") or [])]
        for k in aliases
    }
    clashes = {k: v for k, v in owners.items() if len(v) > 1 or (k in names and v != [k])}
    assert not clashes, f"--set alias claimed by more than one component: {clashes}"


def test_registry_helm_defaults_are_complete() -> None:
    for comp in registry()["components"]:
        helm = comp.get("helm")
        assert helm is not None and "kustomize" not in comp, comp["name"]
        assert helm.get("defaultNamespace"), f"{comp['name']}: no default namespace"
        if helm.get("defaultRepository"):
            assert helm.get("defaultChart") and helm.get("defaultVersion"), comp["name"]
            version = str(helm["defaultVersion"])
            assert version == version.strip() and version not in ("v", ""), comp["name"]


def test_overlay_and_mixin_headers() -> None:
    for name, doc in overlays().items():
        where = f"overlays/{name}.yaml"
        assert doc["kind"] == "RecipeMetadata", where
        assert doc["metadata"]["name"] == name, f"{where}: metadata.name must match the file"
        has_profile = "profile" in doc["spec"]
        expected = PROFILED if has_profile else AUTHORING
        assert doc["apiVersion"] == expected, f"{where}: apiVersion {doc['apiVersion']}"
        if name != "base":
            assert doc["spec"].get("criteria"), (
                f"{where}: an overlay without criteria never matches"
            )
    # Issue 33: the OKE family root is upstream's oke-ol (it holds the gpuStack profile).
    assert {n for n, d in overlays().items() if "profile" in d["spec"]} == {"aks", "oke-ol"}
    for name, doc in mixins().items():
        where = f"mixins/{name}.yaml"
        assert doc["kind"] == "RecipeMixin" and doc["apiVersion"] == AUTHORING, where
        assert doc["metadata"]["name"] == name, where
        assert set(doc["spec"]) <= {"constraints", "componentRefs"}, f"{where}: mixin fields"


def test_criteria_use_known_values() -> None:
    for where, doc in documents():
        for field, value in (doc["spec"].get("criteria") or {}).items():
            assert field in DIMENSIONS, f"{where}: unknown criteria field {field}"
            assert value == "any" or value in STATIC_VALUES[field], f"{where}: {field}={value}"


def test_inheritance_reaches_base_and_mixins_exist() -> None:
    for name in overlays():
        if name == "base":
            continue
        chain(name)
        for mixin in overlays()[name]["spec"].get("mixins") or []:
            assert mixin in mixins(), f"overlays/{name}.yaml: unknown mixin {mixin}"


def test_overlay_names_follow_their_criteria() -> None:
    """A leaf named {accel}-{service}-{os}-{intent}[-{platform}] must match exactly that.

    Issue 33: upstream names its OKE Oracle Linux leaves without the OS
    (gb200-oke-training carries os: ol), and the catalog keeps upstream's names."""
    for name in leaves():
        crit = overlays()[name]["spec"]["criteria"]
        if name == "monitoring-hpa":
            assert crit == {"intent": "any"}
            continue
        os_part = None if (crit.get("service"), crit.get("os")) == ("oke", "ol") else crit.get("os")
        parts = [crit.get("accelerator"), crit.get("service"), os_part]
        parts += [crit.get(f) for f in ("intent", "platform")]
        assert name == "-".join(p for p in parts if p), f"overlays/{name}.yaml criteria {crit}"


def test_children_narrow_their_parents_criteria() -> None:
    for name, doc in overlays().items():
        parent = doc["spec"].get("base") or "base"
        if name == "base" or parent == "base":
            continue
        mine, theirs = doc["spec"]["criteria"], overlays()[parent]["spec"]["criteria"]
        for field, value in theirs.items():
            # Issue 33: upstream's OKE Ubuntu leaves sit under the Oracle Linux
            # leaf of their accelerator (gb200-oke-ubuntu-training under
            # gb200-oke-training): the one narrowing allowed to change a value.
            if (field, value, mine.get(field)) == ("os", "ol", "ubuntu"):
                continue
            assert mine.get(field) == value, f"overlays/{name}.yaml drops {field}={value}"


# ------------------------------------------------------------------ references


def test_component_and_dependency_refs_name_registry_components() -> None:
    known = registry_names()
    for where, doc in documents():
        for ref in component_refs(doc):
            assert ref["name"] in known, f"{where}: unknown component {ref['name']}"
            for dep in ref.get("dependencyRefs") or []:
                assert dep in known, f"{where}: {ref['name']} depends on unknown {dep}"
        profile = doc["spec"].get("profile") or {}
        for value, frag in (profile.get("values") or {}).items():
            for ref in frag.get("componentRefs") or []:
                assert ref["name"] in known, f"{where}: profile {value} names {ref['name']}"


def test_values_files_exist_and_belong_to_their_component() -> None:
    for where, doc in documents():
        for ref in component_refs(doc):
            rel = ref.get("valuesFile")
            if rel is None:
                continue
            assert rel.startswith(f"components/{ref['name']}/"), f"{where}: {rel}"
            assert (RECIPES / rel).is_file(), f"{where}: valuesFile {rel} does not exist"


def test_every_component_has_a_base_values_file() -> None:
    for name in registry_names():
        assert (COMPONENTS / name / "values.yaml").is_file(), f"components/{name}/values.yaml"


def _manifest_refs() -> list[tuple[str, str]]:
    found = []
    for where, doc in documents():
        for ref in component_refs(doc):
            for key in ("manifestFiles", "preManifestFiles"):
                found += [(where, rel) for rel in ref.get(key) or []]
    for comp in registry()["components"]:
        found += [("registry.yaml", rel) for rel in comp.get("manifestFiles") or []]
    return found


def test_manifest_references_are_the_agreed_paths() -> None:
    refs = _manifest_refs()
    assert {rel for _, rel in refs} == set(THE_MANIFESTS)
    for where, rel in refs:
        assert ".." not in Path(rel).parts, f"{where}: {rel}"


@pytest.mark.skipif(
    not all((RECIPES / rel).parent.is_dir() for rel in THE_MANIFESTS),
    reason="the manifests/ folders are written by the bundler helper and have not landed yet",
)
def test_manifest_files_exist() -> None:
    for where, rel in _manifest_refs():
        assert (RECIPES / rel).is_file(), f"{where}: manifest {rel} does not exist"


def test_dependency_graph_is_acyclic_across_the_whole_catalog() -> None:
    """The union of every edge anywhere has no cycle, so no composition can have one."""
    edges: dict[str, set[str]] = {}
    for _, doc in documents():
        for ref in component_refs(doc):
            edges.setdefault(ref["name"], set()).update(ref.get("dependencyRefs") or [])
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == 2:
            return
        assert state.get(node) != 1, f"dependency cycle: {' -> '.join(path + [node])}"
        state[node] = 1
        for dep in sorted(edges.get(node, ())):
            visit(dep, path + [node])
        state[node] = 2

    for node in sorted(edges):
        visit(node, [])


def test_every_leaf_composes_with_declared_dependencies() -> None:
    """Each dependencyRef of a composed leaf names a component that leaf declares."""
    for leaf in leaves():
        declared: set[str] = set()
        deps: list[tuple[str, str]] = []
        docs = [overlays()[n] for n in chain(leaf)] + [mixins()[m] for m in mixins_of(leaf)]
        for doc in docs:
            for ref in component_refs(doc):
                declared.add(ref["name"])
                deps += [(ref["name"], d) for d in ref.get("dependencyRefs") or []]
        for comp, dep in deps:
            assert dep in declared, f"{leaf}: {comp} depends on {dep}, which it does not declare"


# ------------------------------------------------------------------ constraints


def test_snapshot_constraint_names_and_expressions_parse() -> None:
    for where, doc in documents():
        for label, c in snapshot_constraints(doc):
            assert c.get("name") and c.get("value") is not None, f"{where} {label}: {c}"
            parse_path(c["name"])
            parse_expression(str(c["value"]))


def test_validation_constraints_are_gates_not_snapshot_paths() -> None:
    """Check gates (nccl-all-reduce-bw, Deployment.*) live only under spec.validation."""
    for where, doc in documents():
        for label, c in snapshot_constraints(doc):
            assert not c["name"].startswith("Deployment."), f"{where} {label}"
        for phase, body in (doc["spec"].get("validation") or {}).items():
            assert phase in ("readiness", "deployment", "performance", "conformance"), where
            for c in body.get("constraints") or []:
                assert c.get("name") and c.get("value") is not None, f"{where} {phase}: {c}"
                parse_expression(str(c["value"]))


def test_constraint_names_are_unique_per_list() -> None:
    for where, doc in documents():
        names = [c["name"] for c in doc["spec"].get("constraints") or []]
        assert len(names) == len(set(names)), where


def test_mixin_constraints_never_collide_with_a_chain_constraint() -> None:
    """A mixin constraint repeating a chain constraint is a resolution error upstream."""
    for leaf in leaves():
        chain_names = {
            c["name"] for n in chain(leaf) for c in overlays()[n]["spec"].get("constraints") or []
        }
        for m in mixins_of(leaf):
            for c in mixins()[m]["spec"].get("constraints") or []:
                assert c["name"] not in chain_names, f"{leaf}: mixin {m} repeats {c['name']}"


def _sample(name: str):  # type: ignore[no-untyped-def]
    path = SNAPSHOTS / name
    if not path.is_file():
        pytest.skip(f"sample snapshot {name} not present")
    return load_snapshot(str(path))


def _generation_constraints(leaf: str) -> list[dict[str, Any]]:
    """What snapshot-based generation evaluates for a leaf: its own constraints + mixins'."""
    own = list(overlays()[leaf]["spec"].get("constraints") or [])
    for m in mixins_of(leaf):
        own += mixins()[m]["spec"].get("constraints") or []
    return own


@pytest.mark.parametrize(
    ("snapshot", "prefix"),
    [("aks-h100-install.yaml", "h100-aks-ubuntu-"), ("oke-gb200-active.yaml", "gb200-oke-ol")],
)
def test_sample_snapshots_satisfy_the_matching_leaves(snapshot: str, prefix: str) -> None:
    snap = _sample(snapshot)
    if prefix == "gb200-oke-ol":
        # Issue 33: the Oracle Linux GB200 leaves are upstream's gb200-oke-{intent}
        # (no OL kubeflow/dynamo leaf is published).
        matched = [leaf for leaf in ("gb200-oke-training", "gb200-oke-inference")]
    else:
        matched = [leaf for leaf in leaves() if leaf.startswith(prefix)]
        # training, inference, kubeflow, dynamo and (issue 33) upstream's slurm leaf
        assert len(matched) == 5, matched
    for leaf in matched:
        for c in _generation_constraints(leaf):
            result = evaluate_constraint(c["name"], str(c["value"]), snap)
            assert result.passed, f"{leaf} on {snapshot}: {c['name']} {result.message}"


def test_a_1_33_cluster_fails_the_aks_leaf_floor() -> None:
    snap = _sample("aks-h100-install.yaml")
    data = snap.model_copy(deep=True)
    server = data.subtype("K8s", "server")
    assert server is not None
    server.data["version"] = "v1.33.5"
    floor = next(
        c
        for c in overlays()["h100-aks-ubuntu-training"]["spec"]["constraints"]
        if c["name"] == "K8s.server.version"
    )
    result = evaluate_constraint(floor["name"], floor["value"], data)
    assert result.status.value == "failed" and result.actual == "v1.33.5"


# ------------------------------------------------------------------ profiles


def test_profile_declarations_are_well_formed_and_total() -> None:
    for name in ("aks", "oke-ol"):
        profile = overlays()[name]["spec"]["profile"]
        assert profile["name"] == "gpuStack"
        assert profile["default"] in profile["values"]
        for value, frag in profile["values"].items():
            assert set(frag) <= {
                "advertiser",
                "constraints",
                "readinessConstraints",
                "componentRefs",
            }
            assert frag.get("advertiser", "") in ("", "external"), f"{name} {value}"
            for ref in frag.get("componentRefs") or []:
                assert set(ref) == {"name", "overrides"}, f"{name} {value} {ref['name']}"
                assert "enabled" not in ref["overrides"], f"{name} {value} {ref['name']}"
        table = profile_table(name)
        leaf_sets = {value: set(paths) for value, paths in table.items()}
        first = next(iter(leaf_sets.values()))
        for value, paths in leaf_sets.items():
            assert paths == first, f"{name}: {value} assigns {sorted(paths ^ first)} differently"


AKS_TABLE = {
    "gpu-operator:driver.enabled": (False, True),
    "gpu-operator:toolkit.enabled": (False, True),
    "gpu-operator:operator.runtimeClass": ("nvidia-container-runtime", "nvidia"),
    "nvidia-dra-driver-gpu:nvidiaDriverRoot": ("/", "/run/nvidia/driver"),
    "nvsentinel:labeler.assumeDriverInstalled": (True, False),
    "nvsentinel:metadata-collector.runtimeClassName": ("nvidia-container-runtime", "nvidia"),
}


def test_aks_profile_is_exactly_the_brief_table() -> None:
    profile = overlays()["aks"]["spec"]["profile"]
    assert profile["default"] == "azure-managed"
    assert sorted(profile["values"]) == ["azure-managed", "operator-managed"]
    table = profile_table("aks")
    assert table["azure-managed"] == {k: v[0] for k, v in AKS_TABLE.items()}
    assert table["operator-managed"] == {k: v[1] for k, v in AKS_TABLE.items()}
    for value, expected in (("azure-managed", "Install"), ("operator-managed", "None")):
        frag = profile["values"][value]
        assert "advertiser" not in frag
        assert frag["constraints"] == [{"name": "K8s.aks-gpu-pools.gpu-driver", "value": expected}]


OKE_TABLE = {
    "gpu-operator:driver.enabled": (False, True),
    "gpu-operator:toolkit.enabled": (False, True),
    "gpu-operator:devicePlugin.enabled": (False, True),
    # The chart's key; upstream's declaration names the no-op useOpenKernelModules.
    "gpu-operator:driver.kernelModuleType": ("auto", "open"),
    "gpu-operator:hostPaths.driverInstallDir": ("/run/nvidia/driver", "/run/nvidia/driver"),
    "nvidia-dra-driver-gpu:nvidiaDriverRoot": ("/", "/run/nvidia/driver"),
    "nvsentinel:labeler.assumeDriverInstalled": (True, False),
}


def test_oke_profile_matches_the_oke_table() -> None:
    profile = overlays()["oke-ol"]["spec"]["profile"]
    assert profile["default"] == "oci-managed"
    table = profile_table("oke-ol")
    assert table["oci-managed"] == {k: v[0] for k, v in OKE_TABLE.items()}
    assert table["operator-managed"] == {k: v[1] for k, v in OKE_TABLE.items()}
    oci, op = profile["values"]["oci-managed"], profile["values"]["operator-managed"]
    assert oci["advertiser"] == "external" and op.get("advertiser", "") == ""
    assert oci["constraints"] == [
        {"name": "K8s.oke-addons.nvidia-gpu-plugin", "value": "installed"}
    ]
    assert op["constraints"] == [
        {"name": "K8s.oke-addons.nvidia-gpu-plugin", "value": "absent"},
        {"name": "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin", "value": "none"},
    ]


def test_profile_components_are_in_every_composition_and_enabled() -> None:
    """The profile may not reference a component some leaf lacks or disables."""
    for family in ("aks", "oke-ol"):
        owned = {
            ref["name"]
            for ref in overlays()[family]["spec"]["profile"]["values"][
                overlays()[family]["spec"]["profile"]["default"]
            ]["componentRefs"]
        }
        for leaf in leaves():
            if family not in chain(leaf):
                continue
            enabled: dict[str, bool] = {}
            docs = [overlays()[n] for n in reversed(chain(leaf))]
            docs += [mixins()[m] for m in mixins_of(leaf)]
            for doc in docs:
                for ref in component_refs(doc):
                    flag = (ref.get("overrides") or {}).get("enabled", True)
                    enabled[ref["name"]] = enabled.get(ref["name"], True) and flag is not False
            for comp in owned:
                assert enabled.get(comp), f"{leaf}: profile component {comp} missing or disabled"


def test_family_constraints() -> None:
    def floor(name: str) -> str:
        return next(
            str(c["value"])
            for c in overlays()[name]["spec"]["constraints"]
            if c["name"] == "K8s.server.version"
        )

    assert floor("aks") == ">= 1.34"
    # Issue 33: upstream's OKE floors (GB200 training 1.34, GB200 inference 1.32.4), never
    # below issue 13's 1.32 (the DRA driver chart's kubeVersion; upstream says 1.28 / 1.30).
    assert floor("oke-ol") == ">= 1.32"
    assert floor("oke-ol-training") == ">= 1.32"
    assert floor("a100-oke-ubuntu-training") == ">= 1.32"
    assert floor("gb200-oke-training") == ">= 1.34"
    assert floor("gb200-oke-ubuntu-training") == ">= 1.34"
    assert floor("gb200-oke-ubuntu-inference") == ">= 1.32.4"
    for leaf in leaves():
        if "aks" in chain(leaf) and leaf != "monitoring-hpa":
            assert floor(leaf) == ">= 1.34", leaf


# ------------------------------------------------------------------ values the briefs pin


def test_gpu_operator_base_values() -> None:
    v = flatten(values_file("components/gpu-operator/values.yaml"))
    assert v["hostPaths.driverInstallDir"] == "/run/nvidia/driver"
    assert v["devicePlugin.enabled"] is True
    assert v["driver.enabled"] is True and v["toolkit.enabled"] is True
    assert v["gdrcopy.enabled"] is True
    assert v["driver.rdma.enabled"] is False


@pytest.mark.parametrize("rel", ["values-aks.yaml", "values-aks-training.yaml"])
def test_gpu_operator_aks_values(rel: str) -> None:
    v = flatten(values_file(f"components/gpu-operator/{rel}"))
    assert v["driver.enabled"] is False and v["toolkit.enabled"] is False
    assert v["operator.runtimeClass"] == "nvidia-container-runtime"
    assert v["driver.rdma.enabled"] is True and v["driver.rdma.useHostMofed"] is False
    assert v["gdrcopy.enabled"] is False and v["nfd.enabled"] is False
    env = {e["name"]: e["value"] for e in v["toolkit.env"]}
    assert env == {
        "RUNTIME_CONFIG_SOURCE": "file",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS": "true",
    }
    if rel == "values-aks-training.yaml":
        # cdi.default left the chart (issue 13): only cdi.enabled remains.
        assert v["cdi.enabled"] is True and "cdi.default" not in v
        assert {"name": "WITH_WORKLOAD", "value": "false"} in v["validator.plugin.env"]


def test_gpu_operator_oke_values_keep_host_mofed_out_of_gpu_pods() -> None:
    v = flatten(values_file("components/gpu-operator/values-oke.yaml"))
    assert v["cdi.enabled"] is True and "cdi.default" not in v
    assert v["driver.enabled"] is False and v["toolkit.enabled"] is False
    env = {e["name"]: e["value"] for e in v["devicePlugin.env"]}
    assert env["MOFED_ENABLED"] == "false"
    base_env = flatten(values_file("components/gpu-operator/values.yaml"))["devicePlugin.env"]
    for entry in base_env:  # the list replaces the base list, so nothing may be lost
        assert entry in v["devicePlugin.env"]


def test_network_operator_oke_deploys_no_ofed_driver() -> None:
    """Since chart 24.10 the NicClusterPolicy is a manifest (issue 13): AKS ships one with
    the OFED driver container and the shared HCA pool, OKE (host MOFED) ships none, and
    neither values file carries the keys the chart stopped reading."""
    dead = {"deployCR", "ofedDriver", "rdmaSharedDevicePlugin", "nvIpam", "secondaryNetwork"}
    for rel in ("values-oke.yaml", "values-aks.yaml", "values.yaml"):
        assert not dead & set(values_file(f"components/network-operator/{rel}")), rel
    oke = {r["name"]: r for r in component_refs(overlays()["oke-ol"])}
    assert not oke["network-operator"].get("manifestFiles")
    policy = _load(RECIPES / NIC_POLICY)
    assert policy["kind"] == "NicClusterPolicy"
    assert policy["spec"]["ofedDriver"]["image"] == "doca-driver"
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    pool = config["configList"][0]
    assert pool["resourceName"] == "hca_shared_devices_a"
    assert pool["selectors"] == {"vendors": ["15b3"], "linkTypes": ["infiniband"]}


def test_dra_driver_production_default() -> None:
    v = values_file("components/nvidia-dra-driver-gpu/values.yaml")
    assert v["nvidiaDriverRoot"] == "/run/nvidia/driver"
    assert v["resources"]["gpus"]["enabled"] is False
    assert v["gpuResourcesEnabledOverride"] is False


def test_aks_overlay_wiring() -> None:
    refs = {r["name"]: r for r in component_refs(overlays()["aks"])}
    assert refs["nvidia-dra-driver-gpu"]["overrides"]["nvidiaDriverRoot"] == "/"
    assert refs["gpu-operator"]["valuesFile"] == "components/gpu-operator/values-aks.yaml"
    assert "network-operator" in refs["gpu-operator"]["dependencyRefs"]
    assert refs["gpu-operator"]["manifestFiles"] == [THE_MANIFESTS[0]]
    assert refs["network-operator"]["manifestFiles"] == [NIC_POLICY, THE_MANIFESTS[1]]
    train = {r["name"]: r for r in component_refs(overlays()["aks-training"])}
    assert train["gpu-operator"]["valuesFile"].endswith("values-aks-training.yaml")


def test_tuning_is_off_on_every_aks_accelerator_overlay() -> None:
    found = 0
    for name, doc in overlays().items():
        for ref in component_refs(doc):
            if ref["name"] != "nodewright-customizations":
                continue
            found += 1
            assert doc["spec"]["criteria"].get("service") == "aks", name
            assert ref["overrides"]["tuningEnabled"] is False, name
            assert ref["manifestFiles"] == [THE_MANIFESTS[2]], name
            assert "nodewright-operator" in ref["dependencyRefs"], name
    assert found == 3  # h100 x training, inference; a100 training (issue 33: b200/gb200 removed)


def test_registry_validation_wiring() -> None:
    by_name = {c["name"]: c for c in registry()["components"]}

    def checks(comp: str) -> dict[str, dict[str, Any]]:
        return {v["function"]: v for v in by_name[comp].get("validations") or []}

    gpu = checks("gpu-operator")
    assert gpu["CheckHostMofedWithoutNetworkOperator"]["severity"] == "warning"
    assert gpu["CheckHostMofedWithoutNetworkOperator"]["conditions"] == {"service": ["aks"]}
    assert gpu["CheckDriverOwnershipCoherence"]["severity"] == "error"
    assert "conditions" not in gpu["CheckDriverOwnershipCoherence"]
    nw = checks("nodewright-customizations")
    assert nw["CheckWorkloadSelectorMissing"]["severity"] == "info"
    assert nw["CheckWorkloadSelectorMissing"]["conditions"] == {"intent": ["training"]}
    assert nw["CheckAcceleratedSelectorMissing"]["conditions"] == {
        "intent": ["training", "inference"]
    }
    wildcard = nw["CheckWildcardAcceleratedToleration"]
    assert wildcard["severity"] == "error" and wildcard["conditions"] == {"service": ["aks"]}
    assert "nodewright#296" in wildcard["message"]
    assert "--accelerated-node-toleration nvidia.com/gpu:NoSchedule" in wildcard["message"]
    nvs = checks("nvsentinel")
    for fn in ("CheckNVSentinelDriverLabelDetectable", "CheckNVSentinelRuntimeClassCoherence"):
        assert nvs[fn]["severity"] == "error" and "conditions" not in nvs[fn]


def test_registry_aliases() -> None:
    want = {
        "gpu-operator": {"gpuoperator"},
        "nvidia-dra-driver-gpu": {"dradriver"},
        "network-operator": {"networkoperator"},
        "nodewright-operator": {"nodewright", "skyhook"},
        "nodewright-customizations": {"nodewrightcustomizations", "skyhookcustomizations"},
        "nvsentinel": {"nv-sentinel"},
        "cert-manager": {"certmanager"},
        "kube-prometheus-stack": {"prometheus", "kubeprometheusstack"},
        "kai-scheduler": {"kaischeduler"},
        "kubeflow-trainer": {"kubeflowtrainer", "trainer"},
        "dynamo-platform": {"dynamoplatform", "dynamo"},
    }
    by_name = {c["name"]: set(c.get("valueOverrideKeys") or []) for c in registry()["components"]}
    for comp, aliases in want.items():
        assert aliases <= by_name[comp], comp
    assert by_name["nodewright-customizations"] and all(
        c["helm"]["defaultRepository"] == ""
        for c in registry()["components"]
        if c["name"] == "nodewright-customizations"
    )


# ------------------------------------------------------------------ validation blocks


def _phase(leaf: str, phase: str) -> tuple[list[str], dict[str, str]]:
    """Checks and constraints of one phase, merged down the chain as the resolver does."""
    checks: list[str] = []
    constraints: dict[str, str] = {}
    for name in reversed(chain(leaf)):
        body = (overlays()[name]["spec"].get("validation") or {}).get(phase) or {}
        checks += [c for c in body.get("checks") or [] if c not in checks]
        constraints.update({c["name"]: str(c["value"]) for c in body.get("constraints") or []})
    return checks, constraints


DEPLOYMENT_CHECKS = [
    "operator-health",
    "expected-resources",
    "gpu-operator-version",
    "check-nvidia-smi",
]
AKS_CONFORMANCE = [
    "platform-health",
    "gpu-operator-health",
    "dra-support",
    "accelerator-metrics",
    "ai-service-metrics",
]
TRAINING_CONFORMANCE = [
    "gang-scheduling",
    "pod-autoscaling",
    "cluster-autoscaling",
    "robust-controller",
    "secure-accelerator-access",
]


GPU_OPERATOR_FLOOR = {"h100": ">= v24.6.0", "a100": ">= v24.6.0", "l40s": ">= v24.6.0"}
GPU_OPERATOR_FLOOR["gb200"] = ">= v25.10.0"


def test_every_leaf_has_the_deployment_phase() -> None:
    """Issue 33: the deployment phase comes from the accelerator wildcard overlay
    ({accel}-any, as upstream), which joins every query for that accelerator; the
    GB200 floor is upstream's v25.10.0."""
    for leaf in leaves():
        if leaf == "monitoring-hpa":
            continue
        accel = overlays()[leaf]["spec"]["criteria"]["accelerator"]
        assert not _phase(leaf, "deployment")[1], f"{leaf}: the floor belongs to {accel}-any"
        checks, constraints = _phase(f"{accel}-any", "deployment")
        assert checks == DEPLOYMENT_CHECKS, leaf
        assert constraints == {"Deployment.gpu-operator.version": GPU_OPERATOR_FLOOR[accel]}, leaf


def test_aks_training_gates_and_conformance() -> None:
    checks, constraints = _phase("h100-aks-ubuntu-training", "performance")
    assert checks == ["nccl-all-reduce-bw"] and constraints == {"nccl-all-reduce-bw": ">= 150"}
    conf, _ = _phase("h100-aks-ubuntu-training", "conformance")
    assert conf == AKS_CONFORMANCE + TRAINING_CONFORMANCE


def test_aks_dynamo_gates_and_conformance() -> None:
    checks, constraints = _phase("h100-aks-ubuntu-inference-dynamo", "performance")
    assert checks == ["inference-perf"]
    assert constraints == {
        "inference-model": "Qwen/Qwen3-8B",
        "inference-concurrency-per-gpu": "256",
        "inference-routing-mode": "dynamo-router",
        "inference-throughput": ">= 50000",
        "inference-ttft-p99": "<= 2000",
    }
    conf, _ = _phase("h100-aks-ubuntu-inference-dynamo", "conformance")
    assert set(conf) == set(AKS_CONFORMANCE + TRAINING_CONFORMANCE + ["inference-gateway"])


def test_oke_gb200_training_has_the_nvls_gate() -> None:
    """Issue 33: upstream gates GB200 NVL72 training on OKE with the NVLS all-reduce
    (>= 500 GB/s) and leaves NET off OKE; every GB200 training leaf inherits it."""
    for leaf in (
        "gb200-oke-training",
        "gb200-oke-ubuntu-training",
        "gb200-oke-ubuntu-training-kubeflow",
    ):
        checks, constraints = _phase(leaf, "performance")
        assert checks == ["nccl-all-reduce-bw-nvls"], leaf
        assert constraints == {"nccl-all-reduce-bw-nvls": ">= 500"}, leaf
        assert parse_expression(constraints["nccl-all-reduce-bw-nvls"]).op.value == ">="


def test_required_leaves_exist() -> None:
    """Issue 33: exactly upstream's AKS/OKE leaves (the unpublished AKS B200/GB200,
    OKE H100/B200 and OKE GB200 OL kubeflow/dynamo leaves are gone)."""
    want = {
        f"h100-aks-ubuntu-{suffix}"
        for suffix in ("training", "inference", "training-kubeflow", "inference-dynamo")
    }
    want.add("h100-aks-ubuntu-training-slurm")
    want |= {"a100-aks-ubuntu-training", "a100-aks-ubuntu-training-kubeflow"}
    want |= {"gb200-oke-training", "gb200-oke-inference", "a100-oke-training"}
    want |= {"l40s-oke-training", "l40s-oke-inference"}
    want |= {
        f"gb200-oke-ubuntu-{suffix}"
        for suffix in ("training", "inference", "training-kubeflow", "inference-dynamo")
    }
    want |= {"a100-oke-ubuntu-training", "a100-oke-ubuntu-training-kubeflow"}
    assert set(leaves()) - {"monitoring-hpa"} == want
    for intermediate in ("aks-training", "aks-inference", "oke-ol-training", "oke-ol-inference"):
        assert intermediate in overlays()
    for removed in ("b200", "gb200-aks", "h100-oke", "gb200-oke-ol-"):
        assert not [n for n in overlays() if n.startswith(removed)], removed


@pytest.mark.skipif(
    not (RECIPES / "validators" / "catalog.yaml").is_file(),
    reason="the validator catalog is written by the validation helper and has not landed yet",
)
def test_declared_checks_exist_in_the_validator_catalog_for_their_phase() -> None:
    """Upstream's declared-check pre-flight fails validate when a check has no validator."""
    catalog = _load(RECIPES / "validators" / "catalog.yaml")
    phase_of = {v["name"]: v["phase"] for v in catalog["validators"]}
    for where, doc in documents():
        for phase, body in (doc["spec"].get("validation") or {}).items():
            for check in body.get("checks") or []:
                assert check in phase_of, f"{where}: no validator for check {check}"
                assert phase_of[check] == phase, f"{where}: {check} is a {phase_of[check]} check"
