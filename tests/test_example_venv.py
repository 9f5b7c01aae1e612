"""The example plugin installs into a new virtualenv and runs there, found through its entry point.

Offline and inside any environment: the new virtualenv is created without pip and sees the
site-packages of the environment running the tests through a ``.pth`` file, so pip,
setuptools, wheel and kschedctl's dependencies are the ones ``pip install '.[dev]'`` put there
(``--system-site-packages`` would show the base interpreter's instead, whose setuptools may be
too old to build a wheel). pip installs with ``--no-deps --no-build-isolation --no-index``
into the new virtualenv, whose own site-packages come first on ``sys.path``. kschedctl and
the example are copied to a temporary directory first, so the builds leave nothing in the
work tree.
examples/sticky-node/check_fresh_venv.sh does the same in a fully isolated virtualenv
that downloads the dependencies.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "sticky-node"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None,
    reason="building without isolation needs setuptools and wheel (installed with '.[dev]')",
)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def running_site_dirs() -> list[str]:
    """Where the environment running the tests keeps its packages (a virtualenv, or the system's)."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def see_running_environment(py: Path) -> None:
    """Append the running environment's site directories to the new virtualenv's ``sys.path``."""
    purelib = run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=py.parent).stdout.strip()
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "_running_environment.pth").write_text("".join(f"{d}\n" for d in running_site_dirs()))


def test_example_plugin_installs_and_runs_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    src = tmp_path / "kschedctl-src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "kschedctl", src / "kschedctl", ignore=shutil.ignore_patterns("__pycache__"))
    example = tmp_path / "sticky-node"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    py = venv / "bin" / "python"
    see_running_environment(py)
    pip = (py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index")
    run(*pip, src, cwd=tmp_path)
    run(*pip, example, cwd=tmp_path)

    kschedctl = venv / "bin" / "kschedctl"
    rows = json.loads(run(kschedctl, "plugins", "-o", "json", cwd=tmp_path).stdout)
    sticky = next(r for r in rows if r["name"] == "StickyNode")
    assert sticky["source"] == "entry point kschedctl-sticky-node 0.1.0"
    assert sticky["extensionPoints"] == ["preFilter", "filter", "postBind"]

    # enabled only through the configuration: no --plugin-module once installed
    out = run(kschedctl, "check", example / "demo", cwd=tmp_path).stdout
    assert "1 passed, 0 failed" in out

    tests = run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", example / "tests", cwd=example).stdout
    assert " passed" in tests and "failed" not in tests
