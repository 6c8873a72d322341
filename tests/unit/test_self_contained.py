"""A bare clone is enough: nothing in the repository reads outside it.

CI runs the suite from a clone with nothing beside it (.ci/run), which catches a read that
happens; this test names the line that would do it, so the failure says where to look. The
upstream chart trees and catalog files the tests read are vendored under tests/data with
their provenance.
"""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO

# A path that leaves the repository for a sibling checkout (the sibling named in the pattern),
# REPO.parent / "shared", and the same spelled with the workplace's absolute root.
OUTSIDE = re.compile(r"\.\./(\.\./)*sha[r]ed\b|parent\s*/\s*\"sha[r]ed\"|/work/(sha[r]ed|coord)\b")
# Vendored third-party trees are data, quoted as published.
VENDORED = ("tests/data/upstream_charts/", "tests/data/upstream_catalog/")
SUFFIXES = (".py", ".sh", ".cmd", ".toml", ".cfg", ".md", ".yaml", ".yml", ".txt", ".json")


def tracked_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    return [name for name in listing.split("\0") if name]


def test_no_tracked_file_reads_a_sibling_checkout() -> None:
    names = [
        name
        for name in tracked_files()
        if not name.startswith(VENDORED)
        and (name.endswith(SUFFIXES) or name in {"Makefile", ".ci/run"})
        and name != "tests/unit/test_self_contained.py"
    ]
    assert len(names) > 100, "git ls-files listed too little to mean anything"
    hits = []
    for name in names:
        text = (REPO / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{name}:{number}: {line.strip()}")
    assert hits == []


def test_the_pattern_finds_what_it_is_for() -> None:
    # assembled from parts, so this file itself holds no line a repository-wide grep for a
    # sibling checkout would find
    sibling = "sha" + "red"
    for line in (
        f'SHARED = ROOT.parent / "{sibling}" / "charts"',
        f"see ../{sibling}/charts for the trees",
        f"`../../{sibling}/spec/recipe-bundle.md`",
        f"read /work/{sibling}/DESIGN.md",
    ):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search("tests/data/upstream_charts/nfd-0.19.0")
    assert not OUTSIDE.search("a shared cluster")
