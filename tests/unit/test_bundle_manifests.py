"""The manifest template convention and the three shipped manifests (aks.md §4.7, §4.9, §4.10)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from aicr_tui.core.bundler.templates import (
    TemplateContext,
    parse_manifest_documents,
    render_template,
)
from aicr_tui.core.foundation.errors import AicrError
from tests.unit.test_bundle_support import demo_recipe, plan

K8S_VERSION = "1.34.0"


def test_file_gate_and_blocks() -> None:
    tpl = (
        "# aicr-render-if: c.flag != false\n"
        "kind: X\n"
        "# aicr-if: c.mode == fast\n"
        "speed: 1\n"
        "# aicr-else\n"
        "speed: 0\n"
        "# aicr-end\n"
        "ns: ${aicr:namespace}\n"
        "list: ${aicr:value:c.items|[]}\n"
        "shell: $HOME ${HOME}\n"
    )
    out = render_template(tpl, TemplateContext({"c": {"mode": "fast", "items": [1]}}, "ns1"), "t")
    assert out == "kind: X\nspeed: 1\nns: ns1\nlist: [1]\nshell: $HOME ${HOME}\n"
    out = render_template(tpl, TemplateContext({"c": {"mode": "slow"}}, "n"), "t")
    assert out is not None and "speed: 0" in out and "list: []" in out
    assert render_template(tpl, TemplateContext({"c": {"flag": False}}, "n"), "t") is None


def test_condition_uses_helm_strings() -> None:
    tpl = "# aicr-render-if: c.on == false\nkind: X\n"
    assert render_template(tpl, TemplateContext({"c": {"on": False}}, "n"), "t")
    assert render_template(tpl, TemplateContext({"c": {"on": "false"}}, "n"), "t")
    assert render_template(tpl, TemplateContext({"c": {}}, "n"), "t") is None
    # a component that does not render reads enabled == false
    tpl2 = "# aicr-render-if: other.enabled == false\nkind: X\n"
    assert render_template(tpl2, TemplateContext({"c": {}}, "n"), "t")


def test_missing_value_without_default_names_the_manifest() -> None:
    with pytest.raises(AicrError, match="manifest t needs c:x"):
        render_template("kind: X\nv: ${aicr:value:c.x}\n", TemplateContext({"c": {}}, "n"), "t")


def test_unbalanced_blocks_are_internal_errors() -> None:
    with pytest.raises(AicrError, match="aicr-if without a matching aicr-end"):
        render_template("kind: X\n# aicr-if: c.a == b\n", TemplateContext({"c": {}}, "n"), "t")


def test_structural_parse_rejects_nameless_objects() -> None:
    with pytest.raises(AicrError, match="metadata.name"):
        parse_manifest_documents("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "t")


def _docs(p, component: str, name: str) -> list[dict]:
    comp = p.component(component)
    assert comp is not None
    return parse_manifest_documents(comp.manifests[name], name)


def _validate(doc: dict) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_toolkit_hardening_renders_only_under_azure_managed() -> None:
    p = plan(demo_recipe("aks-azure"))
    (ds,) = _docs(p, "gpu-operator", "nvidia-toolkit-hardening-aks.yaml")
    _validate(ds)
    assert ds["kind"] == "DaemonSet" and ds["metadata"]["namespace"] == "gpu-operator"
    pod = ds["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    script = c["args"][0]
    assert "accept-nvidia-visible-devices-envvar-when-unprivileged=false" in script
    assert "accept-nvidia-visible-devices-as-volume-mounts=true" in script
    assert (
        "sleep 60" in script and "touch /tmp/hardened" in script and "rm -f /tmp/hardened" in script
    )
    assert c["readinessProbe"]["exec"]["command"] == ["test", "-f", "/tmp/hardened"]
    assert c["readinessProbe"]["initialDelaySeconds"] == 2
    assert c["readinessProbe"]["periodSeconds"] == 10
    expr = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchExpressions"][0]
    assert expr == {
        "key": "kubernetes.azure.com/accelerator",
        "operator": "In",
        "values": ["nvidia"],
    }
    assert pod["priorityClassName"] == "system-node-critical"
    operator = plan(demo_recipe("aks-operator")).component("gpu-operator")
    assert operator is not None and operator.manifests == {}


def test_peermem_reloader_targets_ib_nodes_without_a_probe() -> None:
    for name in ("aks-azure", "aks-operator"):
        (ds,) = _docs(plan(demo_recipe(name)), "network-operator", "nvidia-peermem-reloader.yaml")
        _validate(ds)
        pod = ds["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        assert "readinessProbe" not in c and "startupProbe" not in c
        assert "sleep 30" in c["args"][0] and "modprobe nvidia-peermem" in c["args"][0]
        term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchExpressions"][0]
        assert term["key"] == "feature.node.kubernetes.io/pci-15b3.present"
        assert term["values"] == ["true"]
        assert pod["tolerations"] == [{"operator": "Exists"}]
    dropped = plan(
        demo_recipe("aks-azure"),
        set_=("networkoperator:enabled=false", "gpuoperator:driver.rdma.useHostMofed=false"),
    )
    assert dropped.component("network-operator") is None
    assert not any("peermem" in f for f in dropped.files)


def _skyhook(p) -> dict:
    (cr,) = _docs(p, "nodewright-customizations", "tuning.yaml")
    assert cr["apiVersion"] == "skyhook.nvidia.com/v1alpha1" and cr["kind"] == "Skyhook"
    spec = cr["spec"]
    assert isinstance(spec["packages"], dict)
    for pkg in spec["packages"].values():
        assert pkg["version"] and pkg["image"]
    return spec


def test_tuning_gate_on_aks() -> None:
    spec = _skyhook(plan(demo_recipe("aks-azure")))
    assert "nvidia-tuned" not in spec["packages"]
    assert spec["packages"]["nvidia-setup-full"]["dependsOn"] == {"nvidia-setup-kernel": "0.5.0"}
    assert "nvidia-setup-kernel" in spec["packages"]
    assert spec["additionalTolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    spec = _skyhook(
        plan(demo_recipe("aks-azure"), set_=("nodewrightcustomizations:tuningEnabled=true",))
    )
    assert spec["packages"]["nvidia-tuned"]["version"] == "0.3.2"
    assert spec["packages"]["nvidia-setup-full"]["dependsOn"] == {"nvidia-tuned": "0.3.2"}


def test_skyhook_takes_selectors() -> None:
    p = plan(
        demo_recipe("aks-azure"),
        accelerated_node_selector={"nodepool": "gpu"},
        workload_selector={"app": "train"},
    )
    spec = _skyhook(p)
    assert spec["nodeSelectors"] == {"matchLabels": {"nodepool": "gpu"}}
    assert spec["podNonInterruptLabels"] == {"matchLabels": {"app": "train"}}


def test_every_rendered_manifest_of_every_demo_recipe_is_valid() -> None:
    for name in ("aks-azure", "aks-operator", "oke-oci", "oke-operator"):
        p = plan(demo_recipe(name))
        for comp in p.components:
            for mname, body in comp.manifests.items():
                for doc in parse_manifest_documents(body, mname):
                    if doc["apiVersion"].startswith(("skyhook.", "mellanox.com/")):
                        # custom resources: checked structurally above, and against their
                        # CRD's schema by the chart verification (tests/verify)
                        continue
                    _validate(doc)


def test_each_loop_ranges_over_a_map_in_sorted_key_order() -> None:
    """aicr-each (issue 33, upstream's enroot ConfigMap ranges over two maps): one copy of
    the body per entry, keys sorted as Go's range; an absent map repeats nothing; a value
    is inserted as text and never substituted again."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n"
        "# aicr-each: c.env\n    ${aicr:key}=${aicr:text}\n# aicr-end\n"
        "  b: |\n# aicr-each: c.missing\n    ${aicr:key}\n# aicr-end\n    end\n"
    )
    ctx = TemplateContext({"c": {"env": {"Z": "${aicr:namespace}", "A": True, "M": 3}}}, "ns")
    out = render_template(text, ctx, "t.yaml")
    assert out is not None
    assert "    A=true\n    M=3\n    Z=${aicr:namespace}\n" in out
    assert parse_manifest_documents(out, "t.yaml")[0]["data"]["b"] == "end\n"
    with pytest.raises(AicrError, match="aicr-each needs a map at c.env"):
        render_template(text, TemplateContext({"c": {"env": [1]}}, "ns"), "t.yaml")
    with pytest.raises(AicrError, match="aicr-each without a matching aicr-end"):
        render_template("# aicr-each: c.env\nx: 1\n", ctx, "t.yaml")


def test_slurm_leaf_manifests_and_values() -> None:
    """The slurm leaf: enroot ConfigMap from the values, no claims unless storage is on,
    manifest-only values out of the chart's values.yaml, the MariaDB components declared but
    not deployed, and what this port cannot honour refused."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.catalog import load_catalog
    from tests.recipe_resolve import resolve

    recipe = resolve(
        load_catalog(),
        parse_criteria(
            service="aks", accelerator="h100", os="ubuntu", intent="training", platform="slurm"
        ),
    )
    assert recipe.configuration == {"slurm": {"accounting": {"mode": "disabled"}}}
    p = plan(recipe)
    assert not p.errors
    names = [c.name for c in p.components]
    assert names[-3:] == ["slinky-slurm-operator-crds", "slinky-slurm-operator", "slinky-slurm"]
    assert not {"mariadb-operator-crds", "mariadb-operator", "slurm-accounting-mariadb"} & set(
        names
    )
    slurm = p.components[-1]
    assert sorted(slurm.manifests) == ["enroot-config.yaml"]
    (cm,) = parse_manifest_documents(slurm.manifests["enroot-config.yaml"], "enroot-config.yaml")
    assert cm["metadata"]["namespace"] == "slurm"
    assert cm["data"]["enroot.conf"] == "ENROOT_MOUNT_HOME=yes\nENROOT_REMAP_ROOT=yes\n"
    assert cm["data"]["99-aicr-defaults.env"] == "NCCL_DEBUG=WARN\n"
    assert "enroot" not in slurm.values and "storage" not in slurm.values
    assert slurm.values["accounting"]["enabled"] is False
    # a bundle-time key reaches the manifest, not the chart
    p = plan(recipe, set_=("slinkyslurm:enroot.env.NCCL_DEBUG=INFO",))
    assert "NCCL_DEBUG=INFO" in p.components[-1].manifests["enroot-config.yaml"]
    for override, words in (
        ("slinkyslurm:storage.enabled=true", "storage.enabled=true is not supported"),
        ("slinkyslurm:accounting.enabled=true", "owned by the recipe's Slurm accounting mode"),
    ):
        errors = plan(recipe, set_=(override,)).errors
        assert errors and words in errors[0].render(), override
