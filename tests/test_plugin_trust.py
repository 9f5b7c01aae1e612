"""Out-of-tree plugins cannot hang a command nor lie about their name: ``--plugin-timeout`` (and Ctrl-C)
turn a call that never returns into a line naming plugin, extension point and node; a plugin whose
``NAME`` and ``.name`` differ, or that lacks a method its extension point requires, is refused when
loaded; ``--plugin-module pkg.mod:object`` names a plugin object as an entry point does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.framework import watchdog
from tests.test_check_ci import cluster_objects, web_pod

ROOT = Path(__file__).parent.parent
runner = CliRunner()


def invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def files(d: Path, plugin: str, args: dict[str, Any] | None = None, point: str = "filter") -> Path:
    """cluster.yaml, pod.yaml and a config.yaml enabling ``plugin`` at ``point``."""
    (d / "cluster.yaml").write_text(yaml.safe_dump_all(cluster_objects()))
    (d / "pod.yaml").write_text(yaml.safe_dump(web_pod()))
    ref: dict[str, Any] = {"name": plugin} if point != "score" else {"name": plugin, "weight": 1}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": {point: {"enabled": [ref]}}}
    if args:
        profile["pluginConfig"] = [{"name": plugin, "args": args}]
    (d / "config.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}))
    return d


def explain(d: Path, *more: Any) -> Any:
    return invoke("explain", "pod", "-f", d / "pod.yaml", "--snapshot", d / "cluster.yaml", "--config", d / "config.yaml", *more)


# --------------------------------------------------------------------------- a plugin that never returns


@pytest.mark.parametrize("where", ["after", "before"])
def test_a_call_that_does_not_return_becomes_the_plugins_error_status(tmp_path: Path, where: str) -> None:
    """The call never returns (within the test run), so the limit firing races nothing; the cluster has
    only the node it hangs on, so no other call of the plugin can be late against the short limit."""
    d = files(tmp_path, "Hang", {"node": "big"})
    (d / "cluster.yaml").write_text(yaml.safe_dump_all([o for o in cluster_objects() if o["metadata"]["name"] == "big"]))
    timeout = ["--plugin-timeout", "0.3"]
    if where == "before":
        r = runner.invoke(app, [*timeout, "explain", "pod", "-f", str(d / "pod.yaml"), "--snapshot", str(d / "cluster.yaml"),
                                "--config", str(d / "config.yaml"), "--plugin-module", "tests.hang_plugin", "-o", "json"])
    else:
        r = explain(d, "--plugin-module", "tests.hang_plugin", "-o", "json", *timeout)
    import json

    doc = json.loads(r.stdout)
    line = 'plugin "Hang" did not return from Filter on node "big" within 0.3s (--plugin-timeout)'
    assert doc["filter"]["big"] == {"code": "Error", "plugin": "Hang", "reasons": [f"PluginTimeout: {line}"]}
    assert line in doc["error"]


def test_the_limit_is_per_command_line_and_zero_means_none() -> None:
    invoke("version", "--plugin-timeout", "2")
    assert watchdog.settings.timeout == 2
    invoke("version")
    assert watchdog.settings.timeout == watchdog.DEFAULT_TIMEOUT
    plugin = object()
    assert watchdog.watched(plugin, "X", 0) is plugin
    r = invoke("version", "--plugin-timeout", "soon")
    assert r.exit_code == 2 and "--plugin-timeout soon: not a number of seconds" in r.stderr


def test_a_watched_plugin_keeps_its_attributes_and_errors() -> None:
    class Plugin:
        name = "P"

        def filter(self, state: Any, pod: Any, node: Any) -> str:
            return "ok"

        def score(self, state: Any, pod: Any, node: Any) -> int:
            raise ValueError("boom")

        def score_extensions(self) -> Any:
            return self

        def normalize_score(self, state: Any, pod: Any, scores: Any) -> str:
            return "normalized"

    w = watchdog.watched(Plugin(), "P", 5)
    assert w.name == "P" and w.filter(None, None, None) == "ok"
    assert getattr(w, "filter_nodes", None) is None
    with pytest.raises(ValueError, match="boom"):
        w.score(None, None, None)
    assert w.score_extensions().normalize_score(None, None, []) == "normalized"
    assert isinstance(watchdog.unwrapped(w), Plugin)


def test_ctrl_c_during_a_hung_call_names_it_and_exits_130(tmp_path: Path) -> None:
    marker = tmp_path / "hanging"
    d = files(tmp_path, "Hang", {"node": "big", "marker": str(marker)})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "kschedctl", "explain", "pod", "-f", str(d / "pod.yaml"), "--snapshot", str(d / "cluster.yaml"),
           "--config", str(d / "config.yaml"), "--plugin-module", "tests.hang_plugin", "--plugin-timeout", "60"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)  # the call was handed to the plugin: Ctrl-C from then on names it
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith('error: plugin "Hang" did not return from Filter on node "big" (interrupted after ')


# --------------------------------------------------------------------------- refused when loaded


def plugin_file(d: Path, name: str, body: str) -> Path:
    f = d / f"{name}.py"
    f.write_text(textwrap.dedent(body))
    return f


MISNAMED = """
    from kschedctl.framework.status import Status

    NAME = "Spread"

    class Plugin:
        name = "Sprad"

        def filter(self, state, pod, node_info):
            return Status()

    def new(args, handle):
        return Plugin()
"""

BREAKER = """
    NAME = "Breaker"

    class Breaker:
        name = NAME

        def score(self, state, pod, node_info):
            from kschedctl.framework.status import Status
            return 1, Status()

    def new(args, handle):
        return Breaker()
"""


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_a_plugin_whose_name_is_not_its_NAME_is_refused(tmp_path: Path, command: str) -> None:
    d = files(tmp_path, "Spread")
    f = plugin_file(tmp_path, f"misnamed_{command}", MISNAMED)
    if command == "explain":
        r = explain(d, "--plugin-module", f)
    else:
        r = invoke("simulate", "-f", d / "pod.yaml", "--snapshot", d / "cluster.yaml", "--config", d / "config.yaml", "--plugin-module", f)
    assert r.exit_code == 2, r.output
    assert 'NAME is "Spread" but its plugin\'s name is "Sprad"' in r.stderr
    assert "internal error" not in r.stderr


def test_a_plugin_class_whose_name_is_not_its_NAME_is_refused_at_load(tmp_path: Path) -> None:
    f = plugin_file(tmp_path, "classy", MISNAMED.replace("def new(args, handle):\n        return Plugin()", "new = Plugin"))
    r = invoke("plugins", "--plugin-module", f)
    assert r.exit_code == 2, r.output
    assert 'plugin module classy: NAME is "Spread" but its plugin\'s name is "Sprad"' in r.stderr


def test_a_plugin_missing_a_required_method_is_refused_naming_it(tmp_path: Path) -> None:
    d = files(tmp_path, "Breaker", point="score")
    f = plugin_file(tmp_path, "breaker", BREAKER)
    r = invoke("simulate", "-f", d / "pod.yaml", "--snapshot", d / "cluster.yaml", "--config", d / "config.yaml", "--plugin-module", f)
    assert r.exit_code == 2, r.output
    assert 'plugin "Breaker" defines score but not score_extensions, which its extension point requires' in r.stderr
    assert "internal error" not in r.stderr and "AttributeError" not in r.stderr


def test_plugin_module_names_an_object_as_entry_points_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin_file(tmp_path, "objplug", """
        import types
        from kschedctl.framework.status import Status

        class Only:
            name = "Only"

            def filter(self, state, pod, node_info):
                return Status() if node_info.name == "small" else Status.unschedulable("not small")

        PLUGIN = types.SimpleNamespace(NAME="Only", new=lambda args, handle: Only())
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    d = files(tmp_path, "Only")
    for spec in ("objplug:PLUGIN", tmp_path / "objplug.py:PLUGIN"):
        r = explain(d, "--plugin-module", spec, "-o", "json")
        assert r.exit_code == 0, r.output
        import json

        assert json.loads(r.stdout)["selected"]["candidates"] == ["small"]
    r = explain(d, "--plugin-module", "objplug:NOPE")
    assert r.exit_code == 2 and "--plugin-module objplug:NOPE: objplug has no attribute NOPE" in r.stderr


# --------------------------------------------------------------------------- the documented public surface


def test_two_plugins_in_one_package_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "twoplugs"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    plugin_file(pkg, "plugins", """
        import types
        from kschedctl.framework.status import Status

        class NoOddNodes:
            name = "NoOddNodes"

            def filter(self, state, pod, node_info):
                return Status()

        class PreferBig:
            name = "PreferBig"

            def score(self, state, pod, node_info):
                return (100 if node_info.name == "big" else 0), Status()

            def score_extensions(self):
                return None

        NO_ODD_NODES = types.SimpleNamespace(NAME="NoOddNodes", new=lambda args, handle: NoOddNodes())
        PREFER_BIG = types.SimpleNamespace(NAME="PreferBig", new=lambda args, handle: PreferBig())
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    r = invoke("plugins", "--plugin-module", "twoplugs.plugins:NO_ODD_NODES", "--plugin-module", "twoplugs.plugins:PREFER_BIG", "-o", "json")
    assert r.exit_code == 0, r.output
    import json

    rows = {p["name"]: p for p in json.loads(r.stdout)}
    assert rows["NoOddNodes"]["extensionPoints"] == ["filter"] and rows["PreferBig"]["extensionPoints"] == ["score"]


def test_documented_import_paths_and_quantities() -> None:
    from fractions import Fraction

    from kschedctl.errors import ConfigError, InputError  # noqa: F401
    from kschedctl.framework.cycle_state import CycleState, StateKey  # noqa: F401
    from kschedctl.framework.interfaces import (  # noqa: F401
        NodeScore,
        NodeToStatus,
        NominatingInfo,
        PostFilterResult,
        PreFilterResult,
    )
    from kschedctl.framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, Status  # noqa: F401
    from kschedctl.kube.quantity import QuantityError, parse_quantity
    from kschedctl.snapshot.model import KubeObject, Node, Pod  # noqa: F401

    assert PreFilterResult(node_names={"n1"}).node_names == {"n1"} and PreFilterResult().all_nodes()
    assert (parse_quantity("500m"), parse_quantity("1Gi"), parse_quantity("1e3"), parse_quantity(0.5)) == (
        Fraction(1, 2), 2**30, 1000, Fraction(1, 2))
    assert int(parse_quantity("250m") * 1000) == 250
    for bad in ("lots", True):
        with pytest.raises(QuantityError):
            parse_quantity(bad)


def test_node_builder_alloc_keeps_what_it_does_not_set() -> None:
    from kschedctl.testing import make_node

    assert make_node("n").alloc(cpu="16").raw["status"]["allocatable"] == {"cpu": "16", "memory": "16Gi", "pods": "110"}
    assert make_node("n").alloc_only(cpu="16").raw["status"]["allocatable"] == {"cpu": "16"}
