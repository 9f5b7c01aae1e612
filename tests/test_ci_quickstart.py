"""CI runs the README's quick start verbatim: ``.ci/quickstart.py`` finds its two commands."""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / ".ci" / "quickstart.py"


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("quickstart", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ci_runs_the_readme_quick_start_commands_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    shown = [line[2:] for line in section.splitlines() if line.startswith("$ ")]
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == shown
    assert len(shown) == 2
    assert "quickstart.py" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_extraction_stops_at_the_next_section() -> None:
    text = "# t\n## Quick start\n\n$ a\n\ntext\n$ b\n## Usage\n$ c\n"
    assert _module().quickstart_commands(text) == ["a", "b"]


def test_the_quick_start_explain_command_gives_a_documented_result() -> None:
    first = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    args = shlex.split(first.split("&&", 1)[1])
    assert args[0] == "kschedctl"
    r = CliRunner().invoke(app, args[1:])
    assert r.exit_code in (0, 1), r.output
    assert r.output.startswith("shop/web-7d9f-pending: ")
