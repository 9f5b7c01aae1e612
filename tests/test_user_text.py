"""User-supplied text is printed as typed: rich interprets neither markup (``[bold]``) nor emoji codes
(``:smile:``) in paths, names, module names, messages or reasons, on stdout, on stderr, in tables and
in the progress line."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CONFORMANCE = ROOT / "tests" / "conformance"
TRICKY = "x:smile:[bold]b:new:"  # no "/": it names a directory too
runner = CliRunner()


def assert_literal(text: str) -> None:
    assert TRICKY in text, text
    assert "😄" not in text and "🆕" not in text


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "pod", "-f", f"{TRICKY}.yaml", "--snapshot", DEMO],
        ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", f"{TRICKY}.yaml"],
        ["plugins", "--plugin-module", f"pkg.{TRICKY}"],
        ["simulate", "-f", f"{TRICKY}.yaml", "--snapshot", DEMO],
        ["check", f"{TRICKY}/"],
    ],
    ids=["pod-file", "config", "plugin-module", "simulate", "check"],
)
def test_errors_print_user_text_literally(args: list[str]) -> None:
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert_literal(r.stderr)


def test_tables_and_notes_print_user_text_literally(tmp_path: Path) -> None:
    scenario = tmp_path / TRICKY
    shutil.copytree(CONFORMANCE / "dev-015-taint-toleration", scenario)
    r = runner.invoke(app, ["check", str(scenario)])
    assert r.exit_code == 0, r.output
    assert_literal(r.stdout)  # the scenario's row in the table
    config = tmp_path / f"{TRICKY}.yaml"
    shutil.copy(ROOT / "profiles" / "default.yaml", config)
    r = runner.invoke(app, ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", str(config)])
    assert r.exit_code == 0, r.output
    assert_literal(r.stderr)  # note: configuration: ...


def test_every_console_is_made_by_plain_console() -> None:
    """rich Consoles are made in one place, which turns markup, emoji codes and highlighting off."""
    makers = []
    for path in (ROOT / "kschedctl").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Console":
                makers.append(str(path.relative_to(ROOT)))
    assert makers == ["kschedctl/cli/streams.py"]


def test_plain_console_prints_markup_and_emoji_codes_as_typed() -> None:
    from io import StringIO

    from kschedctl.cli.streams import plain_console

    out = StringIO()
    plain_console(file=out, width=200).print(TRICKY)
    assert out.getvalue() == TRICKY + "\n"
