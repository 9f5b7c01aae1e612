"""The GPUBinPack example installs into a new virtualenv and runs through every command there.

Found through its entry point only (no --plugin-module): ``explain pod``, ``explain pending``,
``check``, ``diff-profiles`` and ``simulate`` run the demo's configuration, which names the
plugin, and the example's own tests pass against the installed kschedctl. Offline, as
tests/test_example_venv.py installs the sticky-node example: kschedctl and the example are
copied to a temporary directory and installed with ``--no-deps --no-build-isolation
--no-index`` into a virtualenv that sees the running environment's packages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.venvs import ROOT, install_with_example, needs_build_tools, run

EXAMPLE = ROOT / "examples" / "gpu-binpack"

pytestmark = needs_build_tools


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the virtualenv's bin directory, the copied example) with kschedctl and the example installed."""
    py, example = install_with_example(tmp_path_factory.mktemp("gpu-venv"), EXAMPLE)
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

    sim = json.loads(kschedctl(installed, "simulate", "-f", "demo/workload.yaml", *SNAPSHOT, *CONFIG, "--no-pending", "-o", "json").stdout)
    assert [p["node"] for p in sim["placements"]] == ["gpu-a0", "gpu-b1", "gpu-b1", "gpu-a1"]


def test_the_examples_own_tests_pass(installed: tuple[Path, Path]) -> None:
    bin_dir, example = installed
    out = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=example).stdout
    assert " passed" in out and "failed" not in out
