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

if TYPE_CHECKING:
    from typer._click.shell_completion import CompletionItem, ShellComplete
else:
    try:
        from typer._click.shell_completion import CompletionItem, ShellComplete
    except ImportError:  # typer releases that depend on click rather than vendoring it
        from click.shell_completion import CompletionItem, ShellComplete

PROG = "kschedctl"
COMPLETE_VAR = "_KSCHEDCTL_COMPLETE"
#: shell -> file name under completions/
SCRIPTS = {"bash": "kschedctl.bash", "zsh": "_kschedctl", "fish": "kschedctl.fish", "powershell": "kschedctl.ps1"}

# cobra's ShellCompDirective values
DIRECTIVE_DEFAULT = 0  # let the shell complete file names
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16


def completion_script(shell: str) -> str:
    """Typer's completion script for ``kschedctl`` in ``shell``."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell) + "\n"


#: ``--install-completion`` / ``--show-completion`` take the shell as an optional word after them
SHELL_OPTIONS = ("--install-completion", "--show-completion")
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def completion_request(args: list[str]) -> tuple[str, str | None] | None:
    """``(option, shell)`` when ``args`` (the words before any ``--``) ask to install or show completion;
    ``shell`` is the word after the option when it names a shell, else None (the current shell).

    typer's own options are flags that always detect the shell, so ``--install-completion zsh`` would
    install for the shell running the command; kschedctl reads the shell named instead."""
    for i, word in enumerate(args):
        if word in SHELL_OPTIONS:
            following = args[i + 1] if i + 1 < len(args) else None
            return word, (following.lower() if following and following.lower() in SHELLS else None)
    return None


def run_completion_request(option: str, shell: str | None) -> str:
    """Install or show the completion script for ``shell`` (None: the shell detected); what to print."""
    from typer._completion_shared import _get_shell_name, install

    from kschedctl.errors import UsageError

    shell = shell or _get_shell_name()
    if shell not in SHELLS:
        raise UsageError(
            f"{option}: could not tell which shell you use ({shell or 'none detected'}): "
            f"name it, e.g. {option} zsh (one of {', '.join(SHELLS)})"
        )
    if option == "--show-completion":
        return completion_script(shell).rstrip("\n")
    installed, path = install(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
    return f"{installed} completion installed in {path}\nCompletion will take effect once you restart the terminal"


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
