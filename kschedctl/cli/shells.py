"""Completion scripts per shell, and ``--install-completion`` / ``--show-completion SHELL``.

A leaf of the CLI: the root command (``cli/common.py``) answers the two options from here before
any command runs, and ``cli/complete.py`` (which needs the whole command tree, so sits above
``cli/main.py``) writes the scripts of ``completions/`` from the same text.
"""

from __future__ import annotations

PROG = "kschedctl"
COMPLETE_VAR = "_KSCHEDCTL_COMPLETE"


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
