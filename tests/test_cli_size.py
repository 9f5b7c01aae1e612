"""Commands stay thin: every typer command's body parses options, calls one use case's entry point, prints.

A command's body (its signature and docstring aside, a nested ``def body()`` included) is held
under ``MAX_BODY_LINES`` lines. Work that grows beyond that belongs in the use cases' entry points
(``kschedctl.usecases``, one module per command) or in a helper beside the command. Commands are found in the
source (``@app.command(...)`` decorators and ``app.command(...)(fn)`` registrations in
``kschedctl/cli``); typer's own list of registered callbacks checks that none was missed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).parent.parent / "kschedctl" / "cli"
MAX_BODY_LINES = 25
REGISTRARS = ("command", "callback")


def _registrar(node: ast.expr) -> bool:
    """``x.command(...)`` or ``x.callback(...)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGISTRARS


def _registered_names() -> set[str]:
    """Names of functions registered as commands anywhere in the package."""
    names: set[str] = set()
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(_registrar(d) for d in node.decorator_list):
                names.add(node.name)
            elif isinstance(node, ast.Call) and _registrar(node.func) and node.args:
                target = node.args[0]
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, ast.Attribute):
                    names.add(target.attr)
    return names


def _commands() -> dict[str, tuple[Path, ast.FunctionDef]]:
    """Every registered command function, by name, with the file defining it."""
    wanted = _registered_names()
    found: dict[str, tuple[Path, ast.FunctionDef]] = {}
    for path in sorted(CLI.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name in wanted:
                assert node.name not in found, f"two command functions named {node.name}"
                found[node.name] = (path, node)
    return found


def body_lines(fn: ast.FunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    stmts = fn.body
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) and isinstance(stmts[0].value.value, str):
        stmts = stmts[1:]
    if not stmts:
        return 0
    end = fn.end_lineno
    assert end is not None
    return end - stmts[0].lineno + 1


COMMANDS = _commands()


def test_every_registered_command_is_found() -> None:
    import typer

    from kschedctl.cli.main import app

    def callbacks(t: typer.Typer) -> set[str]:
        out = {c.callback.__name__ for c in t.registered_commands if c.callback is not None}
        if t.registered_callback is not None and t.registered_callback.callback is not None:
            out.add(t.registered_callback.callback.__name__)
        for group in t.registered_groups:
            assert group.typer_instance is not None
            out |= callbacks(group.typer_instance)
        return out

    registered = callbacks(app)
    assert registered, "no command registered"
    assert registered <= set(COMMANDS), f"registered but not found in kschedctl/cli: {registered - set(COMMANDS)}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_body_is_thin(name: str) -> None:
    path, fn = COMMANDS[name]
    n = body_lines(fn)
    assert n < MAX_BODY_LINES, (
        f"{path.name}:{fn.lineno} {name}: its body is {n} lines (limit {MAX_BODY_LINES - 1}); "
        "move the work into the use case's entry point or a helper"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('def f():\n    """Doc."""\n    a = 1\n    return a\n', 2),
        ("def f():\n    a = 1\n\n    return a\n", 3),
        ('def f():\n    """Only a docstring."""\n', 0),
    ],
)
def test_body_lines(source: str, expected: int) -> None:
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert body_lines(fn) == expected
