"""The overrides editor's logic without widgets, on the real bundler and a resolved recipe."""

from __future__ import annotations

from aicr_tui.core.services.bundle import overrides_of, parse_lines, preview, split_lines

KEYED = "--accelerated-node-toleration nvidia.com/gpu:NoSchedule"


def _run(recipe, text: str, tmp_path):
    return preview(recipe, text, base_dir=tmp_path)


def test_lines_become_the_same_overrides_the_cli_flags_would(tmp_path) -> None:
    (tmp_path / "toolkit.yaml").write_text("env:\n  - name: X\n    value: '1'\n")
    lines = split_lines(
        "--set gpu-operator:driver.version=580.95.05\n"
        '--set-json nvsentinel:labeler={"resources": {}}\n'
        "--set-file gpu-operator:toolkit=toolkit.yaml\n"
        "--dynamic gpu-operator:driver.repository\n"
        f"{KEYED}\n"
    )
    parse_lines(lines, base_dir=tmp_path)
    assert [line.verdict for line in lines] == ["accepted"] * 5
    overrides, tolerations = overrides_of(lines)
    assert [e.display() for e in overrides.all_entries()] == [
        "--set gpu-operator:driver.version=580.95.05",
        "--set-file gpu-operator:toolkit=toolkit.yaml",
        '--set-json nvsentinel:labeler={"resources": {}}',
        "--dynamic gpu-operator:driver.repository",
    ]
    assert overrides.set_file[0].value == {"env": [{"name": "X", "value": "1"}]}
    assert [t.to_values() for t in tolerations] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_no_toleration_line_means_the_wildcard_default(aks_recipe, tmp_path) -> None:
    result = _run(aks_recipe, "", tmp_path)
    assert [e.check for e in result.plan.errors] == ["CheckWildcardAcceleratedToleration"]
    keyed = _run(aks_recipe, KEYED, tmp_path)
    assert keyed.plan.errors == []


def test_each_rejected_line_is_left_out_and_the_rest_still_plans(aks_recipe, tmp_path) -> None:
    result = _run(
        aks_recipe,
        f"{KEYED}\n"
        "--set gpu-operator:driver.enabled=true\n"  # profile lock
        "--set nonexistent:a=1\n"  # unknown component
        "--set-file gpu-operator:x=missing.yaml\n"  # unreadable file
        "--set gpu-operator:driver.version=580.95.05\n",
        tmp_path,
    )
    verdicts = {line.lineno: line for line in result.lines}
    assert verdicts[1].verdict == "accepted"
    assert verdicts[2].verdict == "rejected" and "ProfileLock" in verdicts[2].message
    assert verdicts[3].verdict == "rejected" and "nonexistent" in verdicts[3].message
    assert verdicts[4].verdict == "rejected" and "missing.yaml" in verdicts[4].message
    assert verdicts[5].verdict == "accepted"
    assert result.error == ""
    gpu = result.plan.component("gpu-operator")
    assert gpu.values["driver"]["version"] == "580.95.05"
    assert gpu.values["driver"]["enabled"] is False  # the rejected line did not apply


def test_policy_keys_warn_and_the_verdict_is_about_all_lines_together(aks_recipe, tmp_path) -> None:
    """#1327 in the editor: static policy-key overrides are deprecated warnings (naming the
    recipe-overlay replacement), never rejections; the three-line DRA-only flip carries no
    coherence warning, one line of it alone does; --dynamic on a policy key is rejected."""
    full = (
        f"{KEYED}\n"
        "--set dradriver:gpuResourcesEnabledOverride=true\n"
        "--set dradriver:resources.gpus.enabled=true\n"
        "--set gpuoperator:devicePlugin.enabled=false\n"
    )
    result = _run(aks_recipe, full, tmp_path)
    assert result.plan is not None and not result.error
    policy_lines = [line for line in result.lines if line.kind == "set"]
    assert [line.verdict for line in policy_lines] == ["warning"] * 3
    for line in policy_lines:
        assert "deprecated" in line.message and "recipe overlay" in line.message
        assert "GPU allocation policy:" not in line.message
    alone = _run(aks_recipe, f"{KEYED}\n--set gpuoperator:devicePlugin.enabled=false\n", tmp_path)
    (line,) = [ln for ln in alone.lines if ln.kind == "set"]
    assert line.verdict == "warning" and alone.plan is not None
    assert "GPU allocation policy: no whole-GPU advertiser" in line.message
    dynamic = _run(aks_recipe, f"{KEYED}\n--dynamic gpuoperator:devicePlugin.enabled\n", tmp_path)
    (line,) = [ln for ln in dynamic.lines if ln.kind == "dynamic"]
    assert line.verdict == "rejected" and "GpuAllocationPolicy" in line.message
    typed = _run(aks_recipe, f"{KEYED}\n--set-json dradriver:enabled=false\n", tmp_path)
    (line,) = [ln for ln in typed.lines if ln.kind == "set-json"]
    assert line.verdict == "rejected" and "enabled must be set with --set" in line.message
