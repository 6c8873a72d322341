"""The layer order of aicr_tui/core/ holds and its import graph has no cycle.

`make lint` runs the import-linter contracts in pyproject.toml; this test checks the same
graph module by module (every import statement counts, including function-local and
TYPE_CHECKING ones), so a circle that two modules paper over with a deferred import fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

from tests.conftest import REPO, run_captured


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    adj = {m: sorted(graph.find_modules_directly_imported_by(m) & modules - {m}) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            if i < len(adj[node]):
                work.append((node, i + 1))
                nxt = adj[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_core_import_graph_has_no_cycle() -> None:
    graph = grimp.build_graph("aicr_tui")
    modules = {m for m in graph.modules if m == "aicr_tui.core" or m.startswith("aicr_tui.core.")}
    assert len(modules) > 50
    assert _cycles(graph, modules) == []


def test_cycle_finder_sees_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert _cycles(graph, {"p.a", "p.b", "p.c"}) == [["p.a", "p.b"]]


def test_layer_contracts_hold_and_catch_an_upward_import(tmp_path: Path) -> None:
    """lint-imports passes on the tree, and fails once a lower layer imports a higher one."""
    lint = Path(sys.executable).with_name("lint-imports")
    ok = subprocess.run([str(lint)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 broken" in ok.stdout

    # The same contracts over a copy whose foundation layer reaches up into the recipe engine.
    for pkg in ("aicr_tui",):
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    errors = tmp_path / "aicr_tui" / "core" / "foundation" / "errors.py"
    errors.write_text(
        errors.read_text() + "\nfrom aicr_tui.core.recipe import catalog as _upward  # noqa\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    bad = run_captured([str(lint), "--no-cache"], cwd=tmp_path, env=env)
    assert bad.returncode != 0
    assert "aicr_tui.core.foundation.errors -> aicr_tui.core.recipe.catalog" in bad.stdout
