"""The README's examples are real output: each ``$ kschedctl ...`` shown on the bundled fixtures is run
as the README says it was rendered (``COLUMNS=100``, ``NO_COLOR=1``), and the lines shown must be what
it prints, in order, where ``...`` stands for lines left out.

A ``$ cd DIR`` runs the block's later commands in DIR, as in a shell. Commands that need something a
test machine may lack are left to their own tests: ``kschedctl snapshot`` of a live cluster
(tests/test_live.py) and ``kubectl`` itself (``kubectl kschedctl ...`` runs kschedctl as the plugin).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
KSCHEDCTL = [sys.executable, "-m", "kschedctl"]
TIMING = re.compile(r"\b\d+(\.\d+)? (ms|s)\b")


def examples() -> list[tuple[str, list[str], str]]:
    """(command, lines shown after it, directory it runs in relative to the clone) for each ``$ `` command
    of the README's unlabeled code blocks."""
    found: list[tuple[str, list[str], str]] = []
    for m in FENCE.finditer((ROOT / "README.md").read_text(encoding="utf-8")):
        if m.group(1):
            continue
        cwd, first = ".", len(found)  # a block's lines belong to its own commands only
        for line in m.group(2).splitlines():
            if line.startswith("$ cd "):
                cwd = line.removeprefix("$ cd ").strip()
                assert (ROOT / cwd).is_dir(), line
            elif line.startswith("$ "):
                found.append((line[2:], [], cwd))
            elif len(found) > first and found[-1][0].endswith("\\"):
                found[-1] = (found[-1][0][:-1] + line.strip(), found[-1][1], found[-1][2])
            elif len(found) > first:
                found[-1][1].append(line)
    return found


def runnable(command: str) -> bool:
    """A ``kschedctl`` command, or ``kubectl kschedctl`` (run as kubectl runs the plugin), not a live snapshot."""
    words = [w for w in shlex.split(command) if "=" not in w.split("/")[0]]
    if words[:2] == ["kubectl", "kschedctl"]:
        words = words[1:]
    return words[:1] == ["kschedctl"] and words[1] != "snapshot"


def chunks(shown: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            out.append([])
        else:
            out[-1].append(TIMING.sub("T", line))
    return [c for c in out if c]


def test_the_readme_has_examples_to_run() -> None:
    assert len([c for c, _, _ in examples() if runnable(c)]) >= 6


@pytest.mark.parametrize(("command", "shown", "cwd"), [e for e in examples() if runnable(e[0])],
                         ids=lambda v: v[:60] if isinstance(v, str) and v.startswith("kschedctl") else "")
def test_readme_example_is_the_real_output(command: str, shown: list[str], cwd: str) -> None:
    words = shlex.split(command)
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    env.pop("KSCHEDCTL_DEBUG", None)
    if words[0] == "kubectl":  # kubectl kschedctl: the plugin, named as kubectl names it
        words.pop(0)
        env["KSCHEDCTL_KUBECTL_PLUGIN"] = "1"
    while "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    r = subprocess.run([*KSCHEDCTL, *words[1:]], cwd=ROOT / cwd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    printed = [TIMING.sub("T", line) for line in r.stdout.splitlines()]
    at = 0
    for i, chunk in enumerate(chunks(shown)):
        starts = [k for k in range(at, len(printed) - len(chunk) + 1) if printed[k:k + len(chunk)] == chunk]
        assert starts, f"{command}: not printed (after line {at}):\n" + "\n".join(chunk)
        if i == 0 and shown[0] != "...":
            assert starts[0] == 0, f"{command}: the output does not begin with the lines shown"
        at = starts[0] + len(chunk)
    if shown and shown[-1] != "...":
        assert at == len(printed), f"{command}: the output goes on after the lines shown"
