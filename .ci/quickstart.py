"""Print the shell commands of README.md's "Quick start" section, one per line, exactly as written.

``.ci/run`` runs what this prints, so CI proves what the README promises. A command is a line of
the section that starts with ``$ ``. Exits 1 (and prints nothing) unless there are exactly two:
installing and explaining the demo pod, then installing the dev tools and running the tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands(text: str) -> list[str]:
    commands: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Quick start"
        elif inside and line.startswith("$ "):
            commands.append(line[2:].strip())
    return commands


def main() -> int:
    commands = quickstart_commands(README.read_text(encoding="utf-8"))
    if len(commands) != 2 or "kschedctl explain pod" not in commands[0] or "pytest" not in commands[1]:
        print(f"README.md's Quick start should hold two '$ ' commands (explain, then pytest); found {commands}", file=sys.stderr)
        return 1
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
