"""Install kschedctl and an example plugin into a new virtualenv, offline, for the example tests.

The new virtualenv is created without pip and sees the site-packages of the environment running
the tests through a ``.pth`` file, so pip, setuptools, wheel and kschedctl's dependencies are the
ones ``pip install '.[dev]'`` put there (``--system-site-packages`` would show the base
interpreter's instead, whose setuptools may be too old to build a wheel). pip installs with
``--no-deps --no-build-isolation --no-index`` into the new virtualenv, whose own site-packages come
first on ``sys.path``. kschedctl and the example are copied to a temporary directory first, so the
builds leave nothing in the work tree.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

#: Mark for a test module that builds wheels without isolation.
needs_build_tools = pytest.mark.skipif(
    importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None,
    reason="building without isolation needs setuptools and wheel (installed with '.[dev]')",
)


def run(*args: str | Path, cwd: Path, status: int = 0) -> subprocess.CompletedProcess[str]:
    """Run a command outside the test's environment variables; assert its exit status."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # a bound for a hung process: far above a pip build even on a machine ten times slower than this one
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == status, f"{args}\nexit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def running_site_dirs() -> list[str]:
    """Where the environment running the tests keeps its packages (a virtualenv, or the system's)."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def new_virtualenv(where: Path) -> Path:
    """A virtualenv whose ``sys.path`` ends with the running environment's site directories, its own
    site-packages first. Returns its python."""
    run(sys.executable, "-m", "venv", "--without-pip", where, cwd=where.parent)
    py = where / "bin" / "python"
    purelib = Path(run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=where).stdout.strip())
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / "_running_environment.pth").write_text("".join(f"{d}\n" for d in running_site_dirs()))
    return py


def install_with_example(tmp: Path, example: Path) -> tuple[Path, Path]:
    """Copies of kschedctl and ``example`` installed into a new virtualenv under ``tmp``:
    (its python, the copied example's directory)."""
    src = tmp / "kschedctl-src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "kschedctl", src / "kschedctl", ignore=shutil.ignore_patterns("__pycache__"))
    copied = tmp / example.name
    shutil.copytree(example, copied, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    py = new_virtualenv(tmp / "venv")
    pip = (py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index")
    run(*pip, src, cwd=tmp)
    run(*pip, copied, cwd=tmp)
    return py, copied
