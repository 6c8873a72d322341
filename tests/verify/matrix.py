"""Every bundle the catalog can produce, for the chart verification test and for
``python -m tests.verify.matrix`` (prints the verifier's report for each bundle).

Criteria: every registered service x accelerator x OS x intent x platform (and no
platform), under each value of the gpuStack profile; a combination the catalog cannot
resolve is not a bundle it can produce and is skipped (the test asserts that enough
remain). On top, one set built with every scheduling flag.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The upstream chart trees at the catalog's pins, vendored with their provenance
# (tests/data/upstream_charts/README.md); AICR_TUI_UPSTREAM_CHARTS points elsewhere.
UPSTREAM_CHARTS = Path(
    os.environ.get("AICR_TUI_UPSTREAM_CHARTS") or ROOT / "tests" / "data" / "upstream_charts"
)
VENDORED_CHARTS = ROOT / "tests" / "data" / "charts"

KEYED = ["nvidia.com/gpu:NoSchedule"]
EVERY_FLAG: dict[str, Any] = {
    "accelerated_tolerations": ["nvidia.com/gpu:NoSchedule"],
    "accelerated_node_selector": ["nvidia.com/gpu.present=true"],
    "system_tolerations": ["CriticalAddonsOnly=true:NoSchedule"],
    "system_node_selector": ["kubernetes.azure.com/mode=system"],
    "workload_selector": ["app.kubernetes.io/part-of=training"],
    "storage_class": "managed-csi",
}


@dataclass(frozen=True)
class Case:
    service: str
    accelerator: str
    os: str
    intent: str
    platform: str | None
    profile: str | None
    flags: str = "keyed"

    @property
    def label(self) -> str:
        plat = self.platform or "-"
        return (
            f"{self.service}/{self.accelerator}/{self.os}/{self.intent}/{plat}/"
            f"{self.profile or 'default'}/{self.flags}"
        )


def chart_dirs() -> list[Path]:
    return [d for d in (UPSTREAM_CHARTS, VENDORED_CHARTS) if d.is_dir()]


def _profile_values(service: str) -> list[str]:
    """The gpuStack values the service's family overlay declares (``aks``; ``oke-ol``, the
    OKE root every OKE leaf inherits since issue 33)."""
    from aicr_tui.core.recipe.catalog import load_catalog

    for overlay in load_catalog().overlays.values():
        crit = overlay.criteria
        prof = overlay.spec.profile
        if crit is None or crit.service != service or prof is None:
            continue
        if getattr(prof, "name", "") == "gpuStack":
            return sorted(prof.values)
    return []


def cases() -> list[tuple[Case, Any]]:
    """(case, recipe) for every combination the catalog resolves."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.catalog import load_catalog
    from aicr_tui.core.recipe.qualification import qualify

    reg = load_catalog().registered
    out: list[tuple[Case, Any]] = []
    for service, accel, os_, intent, platform in itertools.product(
        sorted(reg["service"]),
        sorted(reg["accelerator"]),
        sorted(reg["os"]),
        sorted(reg["intent"]),
        [None, *sorted(reg["platform"])],
    ):
        try:
            crit = parse_criteria(
                service=service, accelerator=accel, os=os_, intent=intent, platform=platform
            )
        except Exception:
            continue
        for value in _profile_values(service) or [None]:
            profile = f"gpuStack={value}" if value else None
            verdict = qualify(crit, profile)
            if not verdict.ok or verdict.recipe is None:
                continue
            out.append((Case(service, accel, os_, intent, platform, profile), verdict.recipe))
    return out


def plan(case: Case, recipe: Any) -> Any:
    from aicr_tui.core.bundler import parse_overrides, plan_bundle
    from aicr_tui.core.bundler.tolerations import parse_selectors, parse_tolerations

    kw: dict[str, Any] = {"accelerated_tolerations": parse_tolerations(KEYED)}
    if case.flags == "every-flag":
        kw = {
            "accelerated_tolerations": parse_tolerations(EVERY_FLAG["accelerated_tolerations"]),
            "accelerated_node_selector": parse_selectors(
                EVERY_FLAG["accelerated_node_selector"], "--accelerated-node-selector"
            ),
            "system_tolerations": parse_tolerations(
                EVERY_FLAG["system_tolerations"], "--system-node-toleration"
            ),
            "system_node_selector": parse_selectors(
                EVERY_FLAG["system_node_selector"], "--system-node-selector"
            ),
            "workload_selector": parse_selectors(
                EVERY_FLAG["workload_selector"], "--workload-selector"
            ),
            "storage_class": EVERY_FLAG["storage_class"],
        }
    return plan_bundle(recipe, parse_overrides(set_=[], set_json=[], set_file=[], dynamic=[]), **kw)


def every_case() -> list[tuple[Case, Any]]:
    base = cases()
    flagged = [
        (Case(c.service, c.accelerator, c.os, c.intent, c.platform, c.profile, "every-flag"), r)
        for c, r in base
    ]
    return base + flagged


def main(argv: list[str]) -> int:
    from aicr_tui.core.verify.analysis import Verifier
    from aicr_tui.core.verify.api import _stand_ins, verify_plan

    verifier = Verifier(chart_dirs(), stand_ins=_stand_ins(None))
    total = 0
    for case, recipe in every_case():
        p = plan(case, recipe)
        if p.errors:
            print(f"== {case.label}: bundle refused: {p.errors[0].render()}")
            continue
        report = verify_plan(p, verifier=verifier)
        total += len(report.findings)
        print(f"== {case.label}: {len(report.findings)} finding(s)")
        sys.stdout.write(report.render_text())
    print(f"TOTAL {total} finding(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
