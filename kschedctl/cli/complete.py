"""Shell completion: the scripts in completions/, and ``kubectl_complete-kschedctl`` for kubectl.

Two ways in, one source of truth (the typer/click command tree):

* ``kschedctl`` on its own: the bash, zsh, fish and PowerShell scripts in
  ``completions/`` are typer's generated scripts; they call kschedctl back for
  the candidates. ``python3 -m kschedctl.cli.complete`` regenerates them, and a
  test fails when they are stale.
* ``kubectl kschedctl``: kubectl (1.26+) completes a plugin's arguments by
  running ``kubectl_complete-kschedctl ARGS... WORD`` and reading cobra's
  ``__complete`` protocol: one candidate per line (``value<TAB>help``), then a
  line ``:<directive>``. This module's ``kubectl_complete`` speaks it, asking the
  same click command tree for the candidates.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kschedctl.cli.shells import COMPLETE_VAR, PROG, completion_script

__all__ = ["COMPLETE_VAR", "PROG", "SCRIPTS", "cobra_completions", "completion_script", "kubectl_complete", "write_scripts"]

if TYPE_CHECKING:
    from typer._click.shell_completion import CompletionItem, ShellComplete
else:
    try:
        from typer._click.shell_completion import CompletionItem, ShellComplete
    except ImportError:  # typer releases that depend on click rather than vendoring it
        from click.shell_completion import CompletionItem, ShellComplete

#: shell -> file name under completions/
SCRIPTS = {"bash": "kschedctl.bash", "zsh": "_kschedctl", "fish": "kschedctl.fish", "powershell": "kschedctl.ps1"}

# cobra's ShellCompDirective values
DIRECTIVE_DEFAULT = 0  # let the shell complete file names
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16


def write_scripts(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for shell, name in SCRIPTS.items():
        path = directory / name
        path.write_text(completion_script(shell), encoding="utf-8")
        out.append(path)
    return out


class CobraComplete(ShellComplete):
    """click's completion machinery, answering in cobra's ``__complete`` format."""

    name = "cobra"
    source_template = ""

    def source_vars(self) -> dict[str, Any]:
        return {}

    def get_completion_args(self) -> tuple[list[str], str]:
        raise NotImplementedError("kubectl passes the words on the command line")

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.value}\t{' '.join(item.help.split())}" if item.help else str(item.value)


def cobra_completions(words: list[str]) -> list[str]:
    """Lines of cobra's ``__complete`` answer for ``kubectl kschedctl WORDS...`` (the last word is completed)."""
    import typer

    from kschedctl.cli.main import app

    args, incomplete = (words[:-1], words[-1]) if words else ([], "")
    comp = CobraComplete(typer.main.get_command(app), {}, "kubectl kschedctl", COMPLETE_VAR)
    try:
        items = comp.get_completions(args, incomplete)
    except Exception:  # a half-typed command line the parser rejects: offer nothing, no traceback
        return [f":{DIRECTIVE_DEFAULT}"]
    kinds = {item.type for item in items}
    plain = [comp.format_completion(item) for item in items if item.type == "plain"]
    if "dir" in kinds:
        directive = DIRECTIVE_FILTER_DIRS
    elif "file" in kinds or not plain:
        directive = DIRECTIVE_DEFAULT
    else:
        directive = DIRECTIVE_NO_FILE_COMP
    return [*plain, f":{directive}"]


def kubectl_complete() -> None:
    """Entry point of ``kubectl_complete-kschedctl``."""
    sys.stdout.write("\n".join(cobra_completions(sys.argv[1:])) + "\n")


def main() -> None:
    """``python3 -m kschedctl.cli.complete [DIR]``: regenerate the completion scripts (default: completions/)."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[2] / "completions"
    for path in write_scripts(target):
        print(path)


if __name__ == "__main__":
    main()
