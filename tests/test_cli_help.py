"""``-h`` is ``--help`` on every command and group, and the completion options install or print for the
shell named after them (``--install-completion zsh``), not for the shell that runs the command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent.parent
runner = CliRunner()


def command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in (getattr(command, "commands", None) or {}).items():
        found += command_paths(sub, (*path, name))
    return found


PATHS = command_paths(typer.main.get_command(app))


def test_every_command_is_reached() -> None:
    assert ("explain", "pod") in PATHS and ("simulate",) in PATHS and () in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "kschedctl")
def test_dash_h_is_help(path: tuple[str, ...]) -> None:
    short = runner.invoke(app, [*path, "-h"])
    long = runner.invoke(app, [*path, "--help"])
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.stdout == long.stdout
    assert "-h, --help" in short.stdout


@pytest.mark.parametrize(("shell", "installed"), [("zsh", ".zfunc/_kschedctl"), ("fish", ".config/fish/completions/kschedctl.fish")])
def test_install_completion_for_the_shell_named(tmp_path: Path, shell: str, installed: str) -> None:
    r = runner.invoke(app, ["--install-completion", shell], env={"HOME": str(tmp_path), "SHELL": "/bin/bash"})
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"{shell} completion installed in {tmp_path / installed}")
    assert (tmp_path / installed).is_file()
    assert not (tmp_path / ".bash_completions").exists() and not (tmp_path / ".bashrc").exists()


@pytest.mark.parametrize(("shell", "script"), [("zsh", "_kschedctl"), ("bash", "kschedctl.bash"), ("fish", "kschedctl.fish")])
def test_show_completion_for_the_shell_named(shell: str, script: str) -> None:
    r = runner.invoke(app, ["--show-completion", shell])
    assert r.exit_code == 0, r.output
    assert r.stdout == (ROOT / "completions" / script).read_text(encoding="utf-8")


def test_completion_options_name_their_shell_in_help() -> None:
    out = runner.invoke(app, ["-h"]).stdout
    assert "--install-completion [SHELL]" in out and "--show-completion [SHELL]" in out


def test_completing_a_line_with_install_completion_installs_nothing(tmp_path: Path) -> None:
    from kschedctl.cli.complete import cobra_completions

    lines = cobra_completions(["--install-completion", "zsh", ""])
    assert lines[-1].startswith(":")
    r = runner.invoke(app, [], env={"HOME": str(tmp_path), "_KSCHEDCTL_COMPLETE": "complete_bash",
                                    "COMP_WORDS": "kschedctl --install-completion zsh ", "COMP_CWORD": "3"})
    assert r.exit_code == 0
    assert not list(tmp_path.iterdir())  # nothing written into HOME
