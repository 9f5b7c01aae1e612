"""What the command line imports before it knows which command runs: the parser and the version tables,
never the object model, the framework or an analysis. (Start-up time itself is measured by
bench/startup.py, not here; this holds the import graph that decides it, which no clock can flake.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Packages whose modules bring the scheduling core (or rich) with them: imported only when a command runs.
HEAVY = ("kschedctl.snapshot", "kschedctl.framework", "kschedctl.config", "kschedctl.plugins", "kschedctl.explain",
         "kschedctl.whatif.", "kschedctl.usecases", "kschedctl.render", "rich", "kubernetes", "pydantic")


def test_the_command_line_imports_no_scheduling_core() -> None:
    code = "import json, sys, kschedctl.cli.main; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=600)
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if _heavy(m)] == []


def _heavy(module: str) -> bool:
    """A module of HEAVY (an entry ending in "." names the package's modules, not the package itself)."""
    return any(module.startswith(h) if h.endswith(".") else module == h or module.startswith(h + ".") for h in HEAVY)


def test_heavy_names_packages_and_their_modules() -> None:
    assert _heavy("kschedctl.whatif.scaleup") and _heavy("rich") and _heavy("rich.console")
    assert not _heavy("kschedctl.whatif") and not _heavy("richer") and not _heavy("kschedctl.cli.main")
