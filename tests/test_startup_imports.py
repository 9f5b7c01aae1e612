"""What the command line imports before it knows which command runs: the parser and the version tables,
never the object model, the framework or an analysis. (Start-up time itself is measured by
bench/startup.py, not here; this holds the import graph that decides it, which no clock can flake.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_an_explain_builds_no_typer_converter() -> None:
    """typer's pydantic converters (one schema a parameter) are skipped for plain values: an explain of a
    snapshot file, options given and left to their defaults, builds none."""
    code = (
        "import sys; from kschedctl.cli.main import main\n"
        "sys.argv = ['kschedctl', 'explain', 'pod', 'legacy-0x7q0', '-n', 'batch', '--plugin-timeout', '5',\n"
        "            '-o', 'json', '--snapshot', 'examples/ci/snapshots/prod.yaml']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('typer._adapters' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert out.stdout.lstrip().startswith("{") and out.stderr.splitlines()[-1] == "False"


def test_a_plain_value_is_what_typers_converter_makes_of_it() -> None:
    from enum import StrEnum

    from typer._adapters import build_adapter
    from typer.models import OptionInfo

    from kschedctl.cli.common import _TYPER, _plain_value

    class Out(StrEnum):
        table = "table"
        json = "json"

    cases: list[tuple[Any, OptionInfo, Any, bool]] = [
        (str, OptionInfo(), "a b", False),
        (list[str], OptionInfo(), ("x", "y"), True),
        (list[str], OptionInfo(), (), True),
        (int, OptionInfo(min=1), "500", False),
        (int, OptionInfo(), 7, False),
        (float, OptionInfo(min=0), "2.5", False),
        (float, OptionInfo(min=0), 10.0, False),
        (bool, OptionInfo(), True, False),
        (Out, OptionInfo(), "json", False),
        (Out, OptionInfo(), Out.table, False),
    ]
    for annotation, info, value, several in cases:
        plain = _plain_value(annotation, info, value, several, None)
        assert plain is not _TYPER, (annotation, value)
        made = build_adapter(annotation, info).validate_python(value)
        assert plain == made and type(plain) is type(made), (annotation, value)
    # what could fail, or needs typer's rules, is left to typer (and its message)
    left = [(int, OptionInfo(min=1), "0"), (int, OptionInfo(), "12a"), (int, OptionInfo(), " 5"), (float, OptionInfo(), "1e3"),
            (Out, OptionInfo(), "JSON"), (Out, OptionInfo(case_sensitive=False), "json"), (bool, OptionInfo(), "yes"),
            (float, OptionInfo(), 3)]
    for annotation, info, value in left:
        assert _plain_value(annotation, info, value, False, None) is _TYPER, (annotation, value)
