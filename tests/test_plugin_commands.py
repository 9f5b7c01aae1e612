"""Every command that reads a KubeSchedulerConfiguration runs an out-of-tree plugin it names.

The GPUBinPack example (examples/gpu-binpack) goes through ``explain pod``, ``explain pending``,
``check``, ``diff-profiles`` and ``simulate``, found both ways kschedctl finds plugins: named with
``--plugin-module``, and offered by an installed distribution's entry point (a distribution
faked on sys.path here; tests/test_example_gpu_venv.py installs the real one into a virtualenv).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.framework.registry import ENTRY_POINT_GROUP
from kschedctl.plugins import registry_for

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "gpu-binpack"
DEMO = EXAMPLE / "demo"
MODULE = "kschedctl_gpu_binpack.plugin"
runner = CliRunner()


@pytest.fixture(params=["plugin-module", "entry-point"])
def found(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """The extra arguments a command needs to find GPUBinPack, one way or the other."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    if request.param == "plugin-module":
        yield ["--plugin-module", MODULE]
        return
    dist = tmp_path / "kschedctl_gpu_binpack-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kschedctl-gpu-binpack\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nGPUBinPack = {MODULE}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield []


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


SNAPSHOT = ("--snapshot", DEMO / "cluster.yaml")
CONFIG = ("--config", DEMO / "config.yaml")


def test_explain_pod(found: list[str]) -> None:
    r = invoke("explain", "pod", "-f", DEMO / "pod.yaml", *SNAPSHOT, *CONFIG, *found, "-o", "json")
    assert r.exit_code == 0, r.output
    t = json.loads(r.stdout)
    assert t["selected"]["candidates"] == ["gpu-a0"]
    assert t["filter"]["gpu-b0"]["plugin"] == "GPUBinPack"
    assert t["score"]["GPUBinPack"]["raw"] == {"gpu-a0": 100, "gpu-b1": 87, "gpu-a1": 25}


def test_explain_pending(found: list[str]) -> None:
    r = invoke("explain", "pending", "-n", "ml", *SNAPSHOT, *CONFIG, *found, "-o", "json")
    assert r.exit_code == 1, r.output  # pods are pending
    rows = {row["pod"]: row for row in json.loads(r.stdout)}
    assert rows["ml/infer-6d5b-x2x9q"]["selectedNode"] == "gpu-a0"
    big = rows["ml/finetune-big"]
    assert big["outcome"] == "unschedulable"
    assert "1 node(s) had GPUs in maintenance" in big["fitError"]


def test_remedies_rerun_cycles_with_the_plugin(found: list[str]) -> None:
    """--fix re-runs the cycle for each candidate change: with the same registry."""
    r = invoke("explain", "pending", "-n", "ml", *SNAPSHOT, *CONFIG, *found, "--fix", "-o", "json")
    assert r.exit_code == 1, r.output
    big = next(row for row in json.loads(r.stdout) if row["pod"] == "ml/finetune-big")
    assert big["remedies"] and big["remedies"][0]["verdict"]["outcome"] == "scheduled"
    r = invoke("explain", "pod", "finetune-big", "-n", "ml", *SNAPSHOT, *CONFIG, *found, "--fix")
    assert r.exit_code == 1, r.output
    assert "node(s) had GPUs in maintenance" in r.output


def test_check(found: list[str]) -> None:
    r = invoke("check", DEMO, *found)
    assert r.exit_code == 0, r.output
    assert "1 passed, 0 failed" in r.output


def test_diff_profiles(found: list[str]) -> None:
    r = invoke("diff-profiles", "--pending", "-n", "ml", *SNAPSHOT, *CONFIG, *found, "-o", "json")
    assert r.exit_code == 1, r.output  # the decisions differ
    pods = {p["pod"]: p for p in json.loads(r.stdout)["pods"]}
    infer = pods["ml/infer-6d5b-x2x9q"]
    assert (infer["a"]["node"], infer["b"]["node"]) == ("gpu-a1", "gpu-a0")
    assert pods["ml/finetune-big"]["change"] == "becomes-unschedulable"
    # the same through two configuration files
    r = invoke("diff-profiles", "-f", DEMO / "pod.yaml", *SNAPSHOT, "--config", ROOT / "profiles" / "default.yaml", *CONFIG, *found)
    assert r.exit_code == 1, r.output
    assert "gpu-a1 → gpu-a0" in r.output


def test_simulate(found: list[str]) -> None:
    r = invoke("simulate", "-f", DEMO / "workload.yaml", *SNAPSHOT, *CONFIG, *found, "--no-pending", "-o", "json")
    assert r.exit_code == 0, r.output
    placements = json.loads(r.stdout)["placements"]
    assert [p["node"] for p in placements] == ["gpu-a0", "gpu-b1", "gpu-b1", "gpu-a1"]  # fullest GPUs first


def test_a_named_plugin_without_the_plugin_is_a_configuration_error() -> None:
    if "GPUBinPack" in registry_for().names():
        pytest.skip("the example plugin is installed in this environment")
    r = invoke("simulate", "-f", DEMO / "workload.yaml", *SNAPSHOT, *CONFIG)
    assert r.exit_code == 2
    assert '"GPUBinPack" does not exist' in r.output


def _commands() -> Iterator[tuple[str, Any]]:
    """(path, command) of every leaf command of the app (typer's click commands)."""

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        subcommands = getattr(cmd, "commands", None)
        if subcommands is not None:
            for name, sub in subcommands.items():
                yield from walk(sub, f"{path} {name}".strip())
        else:
            yield path, cmd

    yield from walk(typer.main.get_command(app), "")


def test_every_command_reading_a_configuration_takes_plugin_module() -> None:
    """One rule for every command: --config (or a check scenario's config.yaml) goes with --plugin-module."""
    with_config = []
    for path, cmd in _commands():
        options = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "--config" in options or path in ("check", "plugins"):
            with_config.append(path)
            assert "--plugin-module" in options, f"kschedctl {path} takes --config but not --plugin-module"
    assert sorted(with_config) == [
        "check", "diff-profiles", "diff-versions", "explain pending", "explain pod", "plugins", "simulate"]
