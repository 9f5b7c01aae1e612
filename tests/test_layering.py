"""The layering rules, enforced: I/O and presentation stay at the edges.

* only the live-cluster module imports ``kubernetes``;
* ``framework/`` and ``plugins/`` import neither typer nor rich (nor the CLI, renderers or loaders);
* ``explain/``, ``whatif/`` and ``check/`` (the analyses) leave presentation to ``render/`` and the
  command line to ``cli/``;
* ``usecases/`` (one module per command: its request and one entry point, above the analyses)
  leaves them to ``render/`` and ``cli/`` too.

Which floor may import which (nothing below ``usecases/`` imports it, say) is
``tests/test_import_graph.py``'s check of the floors.
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


USECASES = sorted(p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] == "usecases")


@pytest.mark.parametrize("path", USECASES, ids=[str(p.relative_to(PKG)) for p in USECASES])
def test_usecases_leave_presentation_to_render(path: Path) -> None:
    bad = {m for m in _imports(path) if any(m == f or m.startswith(f + ".") for f in PRESENTATION)}
    assert not bad, f"{path.relative_to(PKG)} imports {bad}: a use case returns results, render/ shows them, cli/ reads options"


#: The modules of ``usecases/`` that are not a command's: the request base types, what the diffs share.
SHARED_USECASES = {"__init__.py", "request.py", "comparison.py"}
COMMAND_USECASES = [p for p in USECASES if p.name not in SHARED_USECASES]


def test_usecases_are_a_package() -> None:
    assert COMMAND_USECASES, "kschedctl/usecases/ holds one module per command"


@pytest.mark.parametrize("path", COMMAND_USECASES, ids=[p.name for p in COMMAND_USECASES])
def test_a_use_case_has_a_request_and_one_entry_point(path: Path) -> None:
    tree = ast.parse(path.read_text())
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    requests = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Request")]
    assert len(functions) == 1, f"{path.name}: one entry point per use case, found {functions}"
    assert len(requests) == 1, f"{path.name}: one request type per use case, found {requests}"

