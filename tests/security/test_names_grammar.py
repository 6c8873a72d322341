"""The name grammars in ``aicr_tui.core.foundation.names``: what they accept (every name the shipped
catalog uses, the loose versions Helm takes) and what they refuse (the hostile corpus)."""

from __future__ import annotations

import pytest

from aicr_tui.core.foundation import names
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from tests.security import hostile

NEVER_VALID = hostile.SHELL + hostile.OPTIONS + hostile.PATHS + hostile.CONTROL

GOOD = {
    "is_dns1123_label": ["a", "gpu-operator", "0", "a" * 63, "nvidia-dra-driver-gpu"],
    "is_release_name": ["gpu-operator", "a.b", "a" * 53],
    "is_chart_name": ["gpu-operator", "dra-driver-nvidia-gpu", "Grove_Charts", "a.b"],
    "is_chart_reference": ["nvidia/gpu-operator", "grove-charts"],
    "is_semver": ["v26.7.0", "26.4.1", "v0.1.0-alpha.12", "1.2.3+build.7", "v1", "1.2"],
    "is_chart_repository": [
        "https://helm.ngc.nvidia.com/nvidia",
        "https://charts.example:8443/a/b",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "oci://ghcr.io/nvidia",
        "file:///srv/charts",
    ],
    "is_file_name": ["tuning.yaml", "nvidia-peermem-reloader.yaml", "a_b.yml"],
    "is_catalog_path": ["components/gpu-operator/manifests/nvidia-toolkit-hardening-aks.yaml"],
}
BAD = {
    "is_dns1123_label": ["a" * 64, "a.b", "A", "a_b", "-a", "a-", ""],
    "is_release_name": ["a" * 54, "A"],
    "is_chart_name": ["a" * 251, "-chart", ".chart", "_chart", "a/b"],
    "is_chart_reference": ["a/b/c", "/a", "a/"],
    "is_semver": ["v", "1.2.3.4", "^1.2", ">=1.0", "1.2.3-", "01.2.3x", "latest"],
    "is_chart_repository": [
        "http://charts.example",  # plain http: not one of the https/oci/file schemes
        "ftp://x",
        "https://",
        "https://user:pw@host/x",
        "https://host/x?q=1",
        "https://host/x#f",
        "file://relative",
        "file:///a/../etc",
        "git@github.com:x/y",
        "https://host/" + "a" * 2048,
    ],
    "is_file_name": ["a" * 254, "..", "."],
    "is_catalog_path": ["/abs", "a//b", "a/../b", "a/"],
}


@pytest.mark.parametrize("pred", sorted(GOOD))
def test_grammar_accepts_real_names(pred: str) -> None:
    test = getattr(names, pred)
    assert [v for v in GOOD[pred] if not test(v)] == []


@pytest.mark.parametrize("pred", sorted(BAD))
def test_grammar_refuses_near_misses(pred: str) -> None:
    test = getattr(names, pred)
    assert [v for v in BAD[pred] if test(v)] == []


@pytest.mark.parametrize("pred", sorted(GOOD))
def test_no_hostile_value_passes_any_grammar(pred: str) -> None:
    test = getattr(names, pred)
    assert [v for v in NEVER_VALID if test(v)] == []


def test_shipped_registry_values_all_pass() -> None:
    """Every value the shipped registry uses is accepted by its rule (the catalog loads
    through these checks, so a too-strict grammar would break every recipe)."""
    from aicr_tui.core.recipe.catalog import load_catalog

    reg = load_catalog().registry
    seen = 0
    for comp in reg.components:
        assert names.is_dns1123_label(comp.name)
        if comp.helm and comp.helm.defaultRepository:
            assert names.is_chart_repository(comp.helm.defaultRepository)
            assert names.is_semver(comp.helm.defaultVersion)
            assert names.is_chart_reference(comp.helm.defaultChart)
            seen += 1
    assert seen >= 10


@pytest.mark.parametrize("value", hostile.CONTROL + hostile.SHELL)
def test_refusal_is_one_short_escaped_line_naming_the_field(value: str) -> None:
    with pytest.raises(AicrError) as info:
        names.COMPONENT_NAME.check(value, 'recipe file "r.yaml": componentRefs[3].name')
    err = info.value
    line = err.render()
    assert err.code == ErrorCode.INVALID_REQUEST and err.exit_code == 2
    assert "componentRefs[3].name" in line and "DNS-1123 label" in line
    assert all(ch.isprintable() for ch in line), repr(line)
    assert len(line) < 400


def test_shown_escapes_and_shortens() -> None:
    assert names.shown("a\nb\x00") == '"a\\nb\\u0000"'
    long = names.shown("x" * 300)
    assert long.endswith("(300 characters)") and len(long) < 100


def test_non_string_values_are_refused_not_crashed() -> None:
    for value in (None, 7, ["a"], {"a": 1}):
        with pytest.raises(AicrError):
            names.NAMESPACE.check(value, "namespace")
    assert names.check_optional(names.NAMESPACE, "", "namespace") == ""
