"""The layering rules, enforced: I/O and presentation stay at the edges.

* only the live-cluster module imports ``kubernetes``;
* ``framework/`` and ``plugins/`` import neither typer nor rich (nor the CLI, renderers or loaders);
* ``explain/``, ``whatif/`` and ``check/`` (the analyses and their entry points) leave presentation
  to ``render/`` and the command line to ``cli/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).parent.parent / "kschedctl"
LIVE_MODULES = {"snapshot/live.py"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


ALL = sorted(p for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("path", ALL, ids=[str(p.relative_to(PKG)) for p in ALL])
def test_only_live_module_imports_kubernetes(path: Path) -> None:
    rel = str(path.relative_to(PKG))
    if rel in LIVE_MODULES:
        return
    bad = {m for m in _imports(path) if m == "kubernetes" or m.startswith("kubernetes.")}
    assert not bad, f"{rel} imports {bad}; only {LIVE_MODULES} may import the kubernetes client"


CORE = sorted(p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] in ("framework", "plugins"))
FORBIDDEN = ("typer", "rich", "kschedctl.cli", "kschedctl.render", "kschedctl.snapshot.loader", "kschedctl.snapshot.live")


@pytest.mark.parametrize("path", CORE, ids=[str(p.relative_to(PKG)) for p in CORE])
def test_core_does_not_import_edges(path: Path) -> None:
    bad = {m for m in _imports(path) if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)}
    assert not bad, f"{path.relative_to(PKG)} imports {bad}"


ANALYSES = sorted(p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] in ("explain", "whatif", "check"))
PRESENTATION = ("typer", "rich", "tabulate", "kschedctl.cli", "kschedctl.render")


@pytest.mark.parametrize("path", ANALYSES, ids=[str(p.relative_to(PKG)) for p in ANALYSES])
def test_analyses_leave_presentation_to_render(path: Path) -> None:
    bad = {m for m in _imports(path) if any(m == f or m.startswith(f + ".") for f in PRESENTATION)}
    assert not bad, f"{path.relative_to(PKG)} imports {bad}: showing results is render/'s job, options cli/'s"
