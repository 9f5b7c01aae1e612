"""The GPUBinPack example installs into a new virtualenv and runs through every command there.

Found through its entry point only (no --plugin-module): ``explain pod``, ``explain pending``,
``check``, ``diff-profiles`` and ``simulate`` run the demo's configuration, which names the
plugin, and the example's own tests pass against the installed kschedctl. Offline, as
tests/test_example_venv.py installs the sticky-node example: kschedctl and the example are
copied to a temporary directory and installed with ``--no-deps --no-build-isolation
--no-index`` into a virtualenv that sees the running environment's packages.
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
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "gpu-binpack"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None,
    reason="building without isolation needs setuptools and wheel (installed with '.[dev]')",
)


def run(*args: str | Path, cwd: Path, status: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == status, f"{args}\nexit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def new_virtualenv(where: Path) -> Path:
    """A virtualenv whose ``sys.path`` ends with the running environment's site directories (pip,
    setuptools, wheel and kschedctl's dependencies), its own site-packages first. Returns its python."""
    run(sys.executable, "-m", "venv", "--without-pip", where, cwd=where.parent)
    py = where / "bin" / "python"
    purelib = Path(run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=where).stdout.strip())
    purelib.mkdir(parents=True, exist_ok=True)
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    (purelib / "_running_environment.pth").write_text("".join(f"{d}\n" for d in dict.fromkeys(dirs) if Path(d).is_dir()))
    return py


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the virtualenv's bin directory, the copied example) with kschedctl and the example installed."""
    tmp = tmp_path_factory.mktemp("gpu-venv")
    src = tmp / "kschedctl-src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "kschedctl", src / "kschedctl", ignore=shutil.ignore_patterns("__pycache__"))
    example = tmp / "gpu-binpack"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    py = new_virtualenv(tmp / "venv")
    pip = (py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index")
    run(*pip, src, cwd=tmp)
    run(*pip, example, cwd=tmp)
    return py.parent, example


def kschedctl(installed: tuple[Path, Path], *args: str, status: int = 0) -> Any:
    bin_dir, example = installed
    return run(bin_dir / "kschedctl", *args, cwd=example, status=status)


SNAPSHOT = ("--snapshot", "demo/cluster.yaml")
CONFIG = ("--config", "demo/config.yaml")


def test_listed_from_its_entry_point(installed: tuple[Path, Path]) -> None:
    rows = json.loads(kschedctl(installed, "plugins", "-o", "json").stdout)
    row = next(r for r in rows if r["name"] == "GPUBinPack")
    assert row["source"] == "entry point kschedctl-gpu-binpack 0.1.0"
    assert row["extensionPoints"] == ["preFilter", "filter", "preScore", "score"]
    assert row["file"].startswith(str(installed[0].parent)) and row["file"].endswith("kschedctl_gpu_binpack/plugin.py")


def test_every_command(installed: tuple[Path, Path]) -> None:
    t = json.loads(kschedctl(installed, "explain", "pod", "-f", "demo/pod.yaml", *SNAPSHOT, *CONFIG, "-o", "json").stdout)
    assert t["selected"]["candidates"] == ["gpu-a0"]

    rows = json.loads(kschedctl(installed, "explain", "pending", "-n", "ml", *SNAPSHOT, *CONFIG, "-o", "json", status=1).stdout)
    assert "1 node(s) had GPUs in maintenance" in next(r for r in rows if r["pod"] == "ml/finetune-big")["fitError"]

    assert "1 passed, 0 failed" in kschedctl(installed, "check", "demo").stdout

    diff = json.loads(kschedctl(installed, "diff-profiles", "--pending", "-n", "ml", *SNAPSHOT, *CONFIG, "-o", "json", status=1).stdout)
    infer = next(p for p in diff["pods"] if p["pod"] == "ml/infer-6d5b-x2x9q")
    assert (infer["a"]["node"], infer["b"]["node"]) == ("gpu-a1", "gpu-a0")

    sim = json.loads(kschedctl(installed, "simulate", "-f", "demo/workload.yaml", *SNAPSHOT, *CONFIG, "-o", "json").stdout)
    assert [p["node"] for p in sim["placements"]] == ["gpu-a0", "gpu-b1", "gpu-b1", "gpu-a1"]


def test_the_examples_own_tests_pass(installed: tuple[Path, Path]) -> None:
    bin_dir, example = installed
    out = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=example).stdout
    assert " passed" in out and "failed" not in out
