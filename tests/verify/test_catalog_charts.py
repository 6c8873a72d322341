"""Every bundle the catalog can produce renders clean against the real upstream charts.

The charts are ``tests/data/upstream_charts`` (the upstream chart trees at the catalog's
pins, or the nearest public release, vendored with their provenance) plus ``tests/data/charts`` (charts vendored by this
repository, each with a PROVENANCE.txt). One verifier serves the whole matrix, so each
distinct chart + values step is rendered and checked once.

Values-only sources (no templates: dynamo-platform) cannot be rendered. They are not
counted as findings, because nothing was measured, but the test pins exactly which
components are in that state, so a new unrenderable step cannot slip in unnoticed.
"""

from __future__ import annotations

import time

import pytest

from aicr_tui.core.verify.analysis import Verifier
from aicr_tui.core.verify.api import _stand_ins, verify_plan
from aicr_tui.core.verify.model import NOT_RENDERABLE, UNDEFINED_VALUE
from tests.verify import matrix

NOT_RENDERABLE_EXPECTED = {"dynamo-platform"}
STATUSES = {"verified", "verified against stand-in", "manifest-only", NOT_RENDERABLE}


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    assert matrix.UPSTREAM_CHARTS.is_dir(), f"chart sources missing: {matrix.UPSTREAM_CHARTS}"
    return Verifier(matrix.chart_dirs(), stand_ins=_stand_ins(None))


def test_every_catalog_bundle_verifies_clean(verifier: Verifier) -> None:
    started = time.monotonic()
    every = matrix.every_case()
    labels = {c.label for c, _ in every}
    # AKS and OKE, every accelerator, both OS families, both intents, every platform and
    # both gpuStack values are represented, and every case also with every flag.
    seen = {(c.service, c.profile) for c, _ in every}
    assert {s for s, _ in seen} == {"aks", "oke"}
    assert len({p for s, p in seen if s == "aks"}) == 2
    assert len({p for s, p in seen if s == "oke"}) == 2
    assert {c.os for c, _ in every} == {"ubuntu", "ol"}
    assert {c.platform for c, _ in every} == {None, "kubeflow", "dynamo", "slurm"}
    assert {c.flags for c, _ in every} == {"keyed", "every-flag"}
    # issue 33: 18 published leaves naming an OS (the slurm leaf included) x 2 gpuStack
    # values x 2 flag sets
    assert len(labels) == len(every) == 72
    findings: list[str] = []
    unrenderable: set[str] = set()
    for case, recipe in every:
        plan = matrix.plan(case, recipe)
        assert not plan.errors, f"{case.label}: {plan.errors[0].render()}"
        report = verify_plan(plan, verifier=verifier)
        assert [c.name for c in report.components] == [c.name for c in plan.components]
        for comp in report.components:
            assert comp.status in STATUSES, f"{case.label}: {comp.folder}: {comp.status}"
            if comp.status == NOT_RENDERABLE:
                unrenderable.add(comp.name)
            elif comp.status != "manifest-only":
                assert comp.objects > 0, f"{case.label}: {comp.folder} rendered nothing"
        findings += [f"{case.label}: {f.render()}" for f in report.findings]
    elapsed = time.monotonic() - started
    assert findings == []
    assert unrenderable == NOT_RENDERABLE_EXPECTED
    print(f"\nverified {len(every)} bundles in {elapsed:.1f}s")


def test_a_misspelled_key_is_reported_exactly(verifier: Verifier) -> None:
    case, recipe = next(
        (c, r) for c, r in matrix.cases() if c.service == "aks" and c.platform is None
    )
    from aicr_tui.core.bundler import parse_overrides, plan_bundle
    from aicr_tui.core.bundler.tolerations import parse_tolerations

    plan = plan_bundle(
        recipe,
        parse_overrides(
            set_=["gpuoperator:driver.enabeld=false"], set_json=[], set_file=[], dynamic=[]
        ),
        accelerated_tolerations=parse_tolerations(matrix.KEYED),
    )
    report = verify_plan(plan, verifier=verifier)
    assert [(f.component, f.kind, f.path) for f in report.findings] == [
        ("gpu-operator", UNDEFINED_VALUE, "driver.enabeld")
    ]
    assert report.exit_code == 8
