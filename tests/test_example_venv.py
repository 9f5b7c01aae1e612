"""The example plugin installs into a new virtualenv and runs there, found through its entry point.

Offline and inside any environment (tests/venvs.py says how). examples/sticky-node/check_fresh_venv.sh
does the same in a fully isolated virtualenv that downloads the dependencies.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.venvs import ROOT, install_with_example, needs_build_tools, run

EXAMPLE = ROOT / "examples" / "sticky-node"

pytestmark = needs_build_tools


def test_example_plugin_installs_and_runs_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    py, example = install_with_example(tmp_path, EXAMPLE)
    kschedctl = py.parent / "kschedctl"
    rows = json.loads(run(kschedctl, "plugins", "-o", "json", cwd=tmp_path).stdout)
    sticky = next(r for r in rows if r["name"] == "StickyNode")
    assert sticky["source"] == "entry point kschedctl-sticky-node 0.1.0"
    assert sticky["extensionPoints"] == ["preFilter", "filter", "postBind"]

    # enabled only through the configuration: no --plugin-module once installed
    out = run(kschedctl, "check", example / "demo", cwd=tmp_path).stdout
    assert "1 passed, 0 failed" in out

    tests = run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", example / "tests", cwd=example).stdout
    assert " passed" in tests and "failed" not in tests
