"""No import cycles inside the kschedctl package, lazy and type-only imports included, and the
floors of docs/design.md kept: a package imports only its own floor and the floors below it.

A cycle hidden in a function body or behind ``if TYPE_CHECKING:`` still couples the two
modules both ways: neither can be read, tested or moved without the other. The graph is
built from the source with ``ast`` (nothing is imported), its strongly connected components
are found with Tarjan's algorithm, and every component of more than one module (or a module
importing itself) is a failure, printed with its members.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG_NAME = "kschedctl"


Graph = Mapping[str, Iterable[str]]


def module_files(root: Path = ROOT, package: str = PKG_NAME) -> dict[str, Path]:
    """Every module of the package by dotted name (a package is named by its ``__init__``)."""
    out: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(name: str, modules: Mapping[str, Path]) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _base(module: str, node: ast.ImportFrom, modules: Mapping[str, Path]) -> str:
    """The absolute module a ``from`` import names, resolving leading dots."""
    if not node.level:
        return node.module or ""
    package = module if _is_package(module, modules) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, or its longest prefix that is a module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: Mapping[str, Path], package: str = PKG_NAME) -> set[str]:
    """The modules of ``package`` that ``module`` imports anywhere in its source.

    ``from p import name`` is an import of ``p.name`` when that is a module, else of ``p``;
    a package is the module of its ``__init__.py``.
    """
    targets: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(_resolve(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, node, modules)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in modules else _resolve(base, modules))
    return {t for t in targets if t is not None and (t == package or t.startswith(package + "."))}


def import_graph(root: Path = ROOT, package: str = PKG_NAME) -> dict[str, set[str]]:
    modules = module_files(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on long import chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def cycles(graph: Graph) -> list[frozenset[str]]:
    """The components that are cycles: more than one module, or one that imports itself."""
    return [
        frozenset(c)
        for c in strongly_connected(graph)
        if len(c) > 1 or c[0] in set(graph.get(c[0], ()))
    ]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [{"a", "b"}]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [{"a", "b", "c"}]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a", "c"}}, [{"a", "b"}, {"c", "d", "e"}]),
        ({"a": {"a"}}, [{"a"}]),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),
    ],
    ids=["chain", "two-cycle", "three-cycle", "two-and-three", "self-import", "diamond"],
)
def test_cycle_finder(graph: dict[str, set[str]], expected: list[set[str]]) -> None:
    assert sorted(map(sorted, cycles(graph))) == sorted(map(sorted, expected))


@pytest.mark.parametrize(
    ("source", "module", "expected"),
    [
        ("from . import b", "pkg.a", {"pkg.b"}),
        ("from .b import x", "pkg.a", {"pkg.b"}),
        ("from pkg.sub import c", "pkg.a", {"pkg.sub.c"}),
        ("from pkg.sub import name", "pkg.a", {"pkg.sub"}),
        ("def f():\n    import pkg.b\n", "pkg.a", {"pkg.b"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n", "pkg.a", {"pkg.b"}),
        ("from .. import b", "pkg.sub.c", {"pkg.b"}),
        ("from . import c", "pkg.sub", {"pkg.sub.c"}),
        ("import pkg.sub\nimport os", "pkg.a", {"pkg.sub"}),
        ("from .sub.c import f", "pkg.a", {"pkg.sub.c"}),
    ],
    ids=["relative-submodule", "relative-name", "absolute-package", "absolute-name",
         "lazy", "type-checking", "two-dots", "from-package-init", "package", "relative-dotted"],
)
def test_imports_resolved(tmp_path: Path, source: str, module: str, expected: set[str]) -> None:
    files = ["pkg/__init__.py", "pkg/b.py", "pkg/sub/__init__.py", "pkg/sub/c.py", "pkg/a.py"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    modules = module_files(tmp_path, "pkg")
    path = modules[module]
    path.write_text(source)
    assert imports_of(module, path, modules, "pkg") == expected


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    report = "\n".join("  " + " <-> ".join(sorted(c)) for c in found)
    assert not found, f"import cycles in {PKG_NAME}:\n{report}"


#: The floors of docs/design.md, bottom first. A module at the top of the package (``kschedctl/x.py``)
#: is a unit of its own; ``kschedctl`` is the package's ``__init__``. Imports inside one floor are
#: allowed (the package-level cycle test still applies to them); an import of a higher floor is not.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor.split())
    for floor in (
        "kschedctl errors",
        "kube",
        "apivalidation",
        "snapshot",
        "framework",
        "config",
        "plugins",
        "parallel explain whatif check testing",
        "usecases",
        "render",
        "cli __main__ distboot dist",
    )
)


def package_of(module: str) -> str:
    """The top-level unit a module belongs to: ``kschedctl.framework.runtime`` -> ``framework``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(graph: Graph) -> dict[str, set[str]]:
    """The module graph folded onto top-level units (imports inside one unit are left out)."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = package_of(module)
        out.setdefault(here, set()).update(package_of(t) for t in targets if package_of(t) != here)
    return out


def floor_of(unit: str) -> int:
    for level, floor in enumerate(FLOORS):
        if unit in floor:
            return level
    raise AssertionError(f"{unit} is on no floor of FLOORS (docs/design.md): place it")


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"p.a.x": {"p.b.y"}, "p.b.y": set()}, {"a": {"b"}, "b": set()}),
        ({"p.a.x": {"p.a.y"}, "p.a.y": set()}, {"a": set()}),
        ({"p.a.x": {"p"}, "p": set()}, {"a": {"p"}, "p": set()}),
    ],
    ids=["across", "inside", "root-init"],
)
def test_package_graph(graph: dict[str, set[str]], expected: dict[str, set[str]]) -> None:
    assert package_graph(graph) == expected


def test_no_package_import_cycles() -> None:
    found = cycles(package_graph(import_graph()))
    report = "\n".join("  " + " <-> ".join(sorted(c)) for c in found)
    assert not found, f"top-level packages of {PKG_NAME} import each other:\n{report}"


def test_every_import_goes_down_the_floors() -> None:
    graph = import_graph()
    climbs = sorted(
        f"{module} ({package_of(module)}) imports {target} ({package_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if floor_of(package_of(target)) > floor_of(package_of(module))
    )
    assert not climbs, "imports that climb a floor (docs/design.md):\n  " + "\n  ".join(climbs)
