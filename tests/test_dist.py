"""The single-file build (``python3 -m kschedctl.dist``) runs outside any virtualenv: built once per
session, then run from an empty directory with an empty environment (``env -i``) by a system Python of
the same minor version, it explains the demo pod, reads a live cluster (the recorded API server),
answers kubectl's completion under that name, and refuses another Python minor with a message."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apiserver import RecordedAPIServer

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "fixtures" / "demo" / "cluster.yaml"
MINOR = f"{sys.version_info.major}.{sys.version_info.minor}"
#: A bound for a hung process, far above a build or run even on a machine ten times slower than this one.
TIMEOUT = 600

pytestmark = pytest.mark.slow


def system_python() -> Path:
    """A Python of this minor version that is no virtualenv's: /usr/bin's, else this venv's base interpreter."""
    for candidate in (Path(f"/usr/bin/python{MINOR}"), Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip(f"no Python {MINOR} interpreter outside the virtualenv")


def other_python() -> Path | None:
    """An interpreter of another minor version (3.8 or later), if the machine has one."""
    pyenv = Path.home() / ".pyenv" / "versions"
    for p in sorted([*Path("/usr/bin").glob("python3.*"), *pyenv.glob("3.*/bin/python3.*")]):
        m = re.fullmatch(r"python3\.(\d+)", p.name)
        if m and 8 <= int(m.group(1)) != sys.version_info.minor and os.access(p, os.X_OK):
            return p
    return None


def build(out: Path) -> Path:
    r = subprocess.run([sys.executable, "-m", "kschedctl.dist", "-o", str(out)], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {out} (")
    return out


@pytest.fixture(scope="session")
def single_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("dist") / "kschedctl")


def run(file: Path, *args: str, cwd: Path, home: Path, python: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``file ARGS`` with nothing of this session's environment: ``env -i PATH=/usr/bin:/bin HOME=...``."""
    command = [str(python), str(file)] if python else [str(file)]
    extra = [f"{k}={v}" for k, v in env.items()]
    return subprocess.run(["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}", *extra, *command, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def test_the_file_explains_the_demo_pod_outside_any_virtualenv(single_file: Path, tmp_path: Path) -> None:
    python = system_python()
    empty, home = tmp_path / "empty", tmp_path / "home"
    empty.mkdir()
    # run as an executable (its #! names python3.X) when /usr/bin has that Python, else with the interpreter
    direct = shutil.which(f"python{MINOR}", path="/usr/bin:/bin") is not None
    r = run(single_file, "explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", str(DEMO),
            cwd=empty, home=home, python=None if direct else python)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("shop/web-7d9f-pending: schedulable on memory-b0 (score 873)")
    assert r.stderr == "note: default configuration (kube-scheduler v1.35)\n"
    assert not any(empty.iterdir())  # nothing written where it runs; unpacked under HOME's cache
    [unpacked] = (home / ".cache" / "kschedctl" / "dist").iterdir()
    # what ran was imported from there (Python cached its bytecode beside it), not from the interpreter's own packages
    assert list((unpacked / "kschedctl" / "cli" / "__pycache__").glob("main.*.pyc"))
    assert list((unpacked / "pydantic_core" / "__pycache__").glob("*.pyc"))
    again = run(single_file, "version", cwd=empty, home=home, python=python)
    assert again.returncode == 0 and again.stdout.startswith("kschedctl ")


def test_the_file_reads_a_live_cluster(single_file: Path, tmp_path: Path) -> None:
    """The kubernetes client the file carries works (its asyncio half is left out)."""
    empty, home = tmp_path / "empty", tmp_path / "home"
    empty.mkdir()
    with RecordedAPIServer() as server:
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        r = run(single_file, "snapshot", cwd=empty, home=home, python=system_python(), KUBECONFIG=str(kubeconfig))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# kschedctl snapshot of context ") and '"kind": "List"' in r.stdout


def test_the_file_answers_kubectl_completion_under_that_name(single_file: Path, tmp_path: Path) -> None:
    link = tmp_path / "bin" / "kubectl_complete-kschedctl"
    link.parent.mkdir()
    link.symlink_to(single_file)
    empty = tmp_path / "empty"
    empty.mkdir()
    r = subprocess.run(["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"HOME={tmp_path / 'home'}", str(system_python()), str(link),
                        "explain", "p"], cwd=empty, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("pod\t") and r.stdout.splitlines()[-1].startswith(":")


def test_another_python_is_refused_with_the_one_needed(single_file: Path, tmp_path: Path) -> None:
    other = other_python()
    if other is None:
        pytest.skip("no Python of another minor version here")
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(single_file, "version", cwd=empty, home=tmp_path / "home", python=other)
    assert r.returncode == 2
    assert f"run it with Python {MINOR}" in r.stderr and "python3 -m kschedctl.dist" in r.stderr


def test_the_same_environment_builds_the_same_bytes(single_file: Path, tmp_path: Path) -> None:
    second = build(tmp_path / "kschedctl")
    assert hashlib.sha256(second.read_bytes()).digest() == hashlib.sha256(single_file.read_bytes()).digest()


def test_the_krew_shim_runs_the_file_on_the_path(single_file: Path, tmp_path: Path) -> None:
    if shutil.which(f"python{MINOR}", path="/usr/bin:/bin") is None:
        pytest.skip(f"the file's #! line needs python{MINOR} in /usr/bin or /bin")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(single_file, bin_dir / "kschedctl")
    r = subprocess.run(["/usr/bin/env", "-i", f"PATH={bin_dir}:/usr/bin:/bin", f"HOME={tmp_path / 'home'}",
                        str(ROOT / "krew" / "kubectl-kschedctl"), "explain", "pod", "-h"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: kubectl kschedctl explain pod ")


def test_the_readme_install_section_matches_the_build() -> None:
    """The README's install lines install this repository (a clone's ``.`` or its pinned URL), and the file
    name it shows is the one ``python3 -m kschedctl.dist`` writes (for the Python the README names)."""
    from kschedctl import dist

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    install = text[text.index("## Install"):text.index("## Usage")]
    lines = [ln.split("#")[0].strip() for ln in install.split("```")[1].strip().splitlines()]
    assert {ln.split()[0] for ln in lines} == {"python3", "pipx", "uv"}
    for ln in lines:
        assert ln.endswith(" .") or ln.endswith(" git+https://github.com/OWNER/kschedctl@REF"), ln
    name = dist.default_output({"version": "0.1.0", "abi": "cpython-311", "platform": "linux-x86_64"}).as_posix()
    assert f"`{name}`" in install


@pytest.mark.parametrize(
    ("marker", "holds"),
    [(None, True), ('python_version >= "3.11"', True), ('python_version < "3.8"', False), ('extra == "speedups"', False),
     ('sys_platform == "win32" and extra == "x"', False)],
)
def test_requirement_markers(marker: str | None, holds: bool) -> None:
    from kschedctl import dist

    assert dist._marker_holds(marker) is holds


def test_what_the_file_carries() -> None:
    from kschedctl import dist

    names = {dist._key(d.metadata["Name"]) for d in dist.runtime_distributions()}
    assert {"kschedctl", "typer", "rich", "kubernetes", "pyyaml", "pydantic", "pydantic-core", "tabulate"} <= names
    assert not names & {"aiohttp", "aiohttp-retry", "pytest", "mypy"}
    files = dist.contents()
    assert "site/kschedctl/cli/main.py" in files and "site/kubernetes/client/__init__.py" in files
    assert not [n for n in files if n.startswith("site/kubernetes/aio/") or "__pycache__" in n or n.endswith(".pyc")]
