"""Out-of-tree plugins: loading (``--plugin-module``, entry points), configuration, ``kschedctl plugins``.

The example plugin of examples/sticky-node is loaded from its source directory (no
install, no network); test_example_fresh_venv.py installs it into a new virtualenv.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import load_config
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError
from kschedctl.explain.cycle import explain_pod
from kschedctl.framework.profile import PluginRef, Profile
from kschedctl.framework.registry import ENTRY_POINT_GROUP, Registry, load_entry_points
from kschedctl.plugins import in_tree_registry, registry_for
from kschedctl.snapshot.loader import load_cluster, load_pods

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "sticky-node"
DEMO = EXAMPLE / "demo"
MODULE = "kschedctl_sticky_node.plugin"
runner = CliRunner()


@pytest.fixture
def example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def explain_demo(*extra: str) -> Any:
    return invoke(
        "explain", "pod", "-f", str(DEMO / "pod.yaml"), "--snapshot", str(DEMO / "cluster.yaml"),
        "--config", str(DEMO / "config.yaml"), *extra,
    )


# --plugin-module ---------------------------------------------------------------------------------


def test_plugins_command_lists_in_tree_and_module_plugins(example_on_path: None) -> None:
    r = invoke("plugins", "--plugin-module", MODULE, "-o", "json")
    assert r.exit_code == 0, r.output
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert rows["NodeResourcesFit"]["source"] == "in-tree"
    assert rows["NodeResourcesFit"]["extensionPoints"] == ["preFilter", "filter", "preScore", "score"]
    assert rows["NodeResourcesFit"]["argsModel"] == "kschedctl.config.args.NodeResourcesFitArgs"
    assert rows["DefaultBinder"]["argsModel"] is None
    sticky = rows["StickyNode"]
    assert sticky["source"] == f"module {MODULE}"
    assert sticky["module"] == MODULE
    assert sticky["extensionPoints"] == ["preFilter", "filter", "postBind"]
    assert sticky["argsModel"] == "kschedctl_sticky_node.plugin.StickyNodeArgs"
    assert list(rows)[-1] == "StickyNode"  # out-of-tree after in-tree


def test_plugins_command_table(example_on_path: None) -> None:
    r = invoke("plugins", "--plugin-module", MODULE)
    assert r.exit_code == 0, r.output
    assert "StickyNode" in r.output and f"module {MODULE}" in r.output
    assert "preFilter, filter, postBind" in r.output and "StickyNodeArgs" in r.output
    assert len(in_tree_registry().names()) == 23


def test_explain_with_plugin_module(example_on_path: None) -> None:
    r = explain_demo("--plugin-module", MODULE, "-o", "json")
    assert r.exit_code == 0, r.output
    t = json.loads(r.stdout)
    assert t["selected"] == {"maxScore": 0, "candidates": ["node-b"]}
    assert [p["plugin"] for p in t["preFilter"]][-1] == "StickyNode"
    assert t["filter"]["node-a"] == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": "StickyNode",
        "reasons": ["node(s) didn't match the node the pod's owner is pinned to"],
    }
    assert t["postBind"] == [
        {"plugin": "StickyNode", "note": "ReplicaSet shop/web-5d8f is already pinned to node-b: nothing to record"}
    ]
    # the plugin's own explanation in detailed traces
    assert t["details"]["plugins"]["StickyNode"]["cycle"]["pinnedNode"] == "node-b"
    table = explain_demo("--plugin-module", MODULE)
    assert "PostBind: StickyNode: ReplicaSet shop/web-5d8f is already pinned" in table.output


def test_explain_unpinned_owner_post_bind_would_pin(example_on_path: None) -> None:
    r = invoke(
        "explain", "pod", "api-7c4b-ccccc", "-n", "shop", "--snapshot", str(DEMO / "cluster.yaml"),
        "--config", str(DEMO / "config.yaml"), "--plugin-module", MODULE, "-o", "json",
    )
    assert r.exit_code == 0, r.output
    t = json.loads(r.stdout)
    assert t["preFilter"][-1] == {"plugin": "StickyNode", "code": "Skip", "reasons": []}
    host = t["details"]["selectedNode"]
    assert t["postBind"] == [
        {
            "plugin": "StickyNode",
            "note": f"would annotate ReplicaSet shop/api-7c4b with sticky.kschedctl.io/node={host} (dry run: not written)",
        }
    ]


def test_check_with_plugin_module(example_on_path: None) -> None:
    r = invoke("check", str(DEMO), "--plugin-module", MODULE)
    assert r.exit_code == 0, r.output
    assert "1 passed, 0 failed" in r.output


def test_enabled_but_not_registered_is_a_configuration_error() -> None:
    if "StickyNode" in registry_for().names():
        pytest.skip("the example plugin is installed in this environment")
    r = explain_demo()
    assert r.exit_code == 2
    assert '"StickyNode" does not exist' in r.output


def test_args_are_validated_against_the_plugins_model(example_on_path: None, tmp_path: Path) -> None:
    cfg = yaml.safe_load((DEMO / "config.yaml").read_text())
    cfg["profiles"][0]["pluginConfig"][0]["args"] = {"annotation": "x", "ownerKind": ["Job"]}
    bad = tmp_path / "config.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    r = invoke(
        "explain", "pod", "-f", str(DEMO / "pod.yaml"), "--snapshot", str(DEMO / "cluster.yaml"),
        "--config", str(bad), "--plugin-module", MODULE,
    )
    assert r.exit_code == 2
    assert r.output.strip() == (
        f"error: {bad}: initializing profiles: creating profile for scheduler name default-scheduler: "
        'initializing plugin "StickyNode": args.ownerKind: Extra inputs are not permitted'
    )


def test_args_of_a_plugin_that_is_not_enabled_are_not_validated(example_on_path: None, tmp_path: Path) -> None:
    cfg = yaml.safe_load((DEMO / "config.yaml").read_text())
    del cfg["profiles"][0]["plugins"]
    cfg["profiles"][0]["pluginConfig"][0]["args"] = {"nonsense": 1}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    c = load_config(str(path), registry_for([MODULE]))
    assert c.profiles[0].args("StickyNode") == {"nonsense": 1}


def test_config_read_without_the_registry_still_gives_the_plugin_its_model(example_on_path: None) -> None:
    from kschedctl_sticky_node.plugin import StickyNodeArgs  # type: ignore[import-not-found]

    registry = registry_for([MODULE], entry_points=False)
    cfg = load_config(str(DEMO / "config.yaml"))  # raw dict args for an unknown plugin
    assert isinstance(cfg.profiles[0].args("StickyNode"), dict)
    cluster = load_cluster([str(DEMO / "cluster.yaml")])
    trace = explain_pod(cluster, load_pods(str(DEMO / "pod.yaml"))[0], cfg, registry)
    assert trace.selected_node == "node-b"
    fw_args = StickyNodeArgs.model_validate(cfg.profiles[0].args("StickyNode"))
    assert fw_args.annotation == "sticky.kschedctl.io/node"


# loading errors ----------------------------------------------------------------------------------


def _write_module(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(body)


def test_module_that_cannot_be_imported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _write_module(tmp_path, "broken_plugin", "raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    r = invoke("plugins", "--plugin-module", "broken_plugin")
    assert r.exit_code == 2
    assert r.output.strip() == "error: --plugin-module broken_plugin: cannot import it: RuntimeError: boom"
    r = invoke("plugins", "--plugin-module", "no.such.module")
    assert r.exit_code == 2
    assert "no module named 'no' on the Python path" in r.output and "path/to/plugin.py" in r.output


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("def new(args, handle): pass\n", "NAME must be a non-empty string"),
        ("NAME = 'X'\n", "it must define new(args, handle)"),
        ("NAME = 'X'\nARGS_MODEL = dict\ndef new(args, handle): pass\n", "ARGS_MODEL must be a pydantic BaseModel subclass"),
        ("NAME = 'NodeName'\ndef new(args, handle): pass\n", "a plugin named NodeName already exists (in-tree)"),
    ],
)
def test_module_contract(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: str, message: str) -> None:
    name = f"contract_{abs(hash(body))}"
    _write_module(tmp_path, name, body)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        registry_for([name], entry_points=False)


def test_same_module_twice_is_registered_once(example_on_path: None) -> None:
    r = registry_for([MODULE, MODULE], entry_points=False)
    assert r.names().count("StickyNode") == 1


# entry points -------------------------------------------------------------------------------------


def _fake_distribution(tmp_path: Path, entry_points: str) -> None:
    d = tmp_path / "fake_sticky-0.3.dist-info"
    d.mkdir()
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-sticky\nVersion: 0.3\n")
    (d / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_points}\n")


def test_entry_point_plugins_are_loaded(example_on_path: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_distribution(tmp_path, f"StickyNode = {MODULE}")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    assert load_entry_points(reg) == ["StickyNode"]
    entry = reg.get("StickyNode")
    assert entry is not None and entry.source == "entry point fake-sticky 0.3" and entry.module == MODULE
    r = invoke("plugins", "-o", "json")
    assert r.exit_code == 0, r.output
    row = next(x for x in json.loads(r.stdout) if x["name"] == "StickyNode")
    assert row["source"] == "entry point fake-sticky 0.3"
    # installed and named again on the command line: one plugin
    assert explain_demo("--plugin-module", MODULE).exit_code == 0
    assert explain_demo().exit_code == 0  # no option needed once installed


def test_broken_entry_point_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "Nope = not_a_module_anywhere")
    monkeypatch.syspath_prepend(str(tmp_path))
    r = invoke("plugins")
    assert r.exit_code == 2
    assert r.output.startswith("error: entry point Nope = not_a_module_anywhere (group kschedctl.plugins, distribution fake-sticky 0.3)")


# runtime details ------------------------------------------------------------------------------------


class _Recorder:
    name = "Recorder"

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    def post_bind(self, state: Any, pod: Any, node_name: str) -> str | None:
        if self.fail:
            raise RuntimeError("no network in a dry run")
        return None


@pytest.mark.parametrize(("fail", "record"), [(False, {"plugin": "Recorder"}), (True, {"plugin": "Recorder", "error": "RuntimeError: no network in a dry run"})])
def test_post_bind_records(fail: bool, record: dict[str, Any]) -> None:
    reg = in_tree_registry()
    reg.register("Recorder", lambda args, handle: _Recorder(fail), source="module tests")
    prof = load_config(None).profiles[0]
    prof.plugins["postBind"].enabled.append(PluginRef("Recorder"))
    cluster = load_cluster([str(DEMO / "cluster.yaml")])
    trace = explain_pod(cluster, load_pods(str(DEMO / "pod.yaml"))[0], SchedulerConfig([Profile(prof.scheduler_name, prof.plugins, prof.plugin_config)]), reg)
    assert trace.post_bind == [record]
    assert trace.schedulable



# where a plugin comes from ---------------------------------------------------------------------------


def _stale_source_tree(tmp_path: Path) -> Path:
    """What ``pip install .`` then ``pip uninstall`` leave in a plugin's source tree: the package and
    the build's ``*.egg-info``, whose entry point importlib.metadata still finds when the tree is on sys.path."""
    src = tmp_path / "src"
    (src / "stale_plugin").mkdir(parents=True)
    (src / "stale_plugin" / "__init__.py").write_text("")
    (src / "stale_plugin" / "plugin.py").write_text(
        "NAME = 'Stale'\n\nclass Stale:\n    name = NAME\n\n    def filter(self, state, pod, node_info):\n"
        "        from kschedctl.framework.status import Status\n        return Status()\n\n"
        "def new(args, handle):\n    return Stale()\n"
    )
    meta = src / "stale_plugin.egg-info"
    meta.mkdir()
    (meta / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: stale-plugin\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nStale = stale_plugin.plugin\n")
    return src


def test_plugin_module_is_reported_as_such_despite_stale_metadata(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = _stale_source_tree(tmp_path)
    monkeypatch.syspath_prepend(str(src))
    r = invoke("plugins", "--plugin-module", "stale_plugin.plugin", "-o", "json")
    assert r.exit_code == 0, r.output
    row = next(x for x in json.loads(r.stdout) if x["name"] == "Stale")
    assert row["source"] == "module stale_plugin.plugin"
    assert row["file"] == str(src / "stale_plugin" / "plugin.py")
    assert row["alsoOfferedBy"] == "entry point stale-plugin 0.1"
    assert row["metadata"] == str(src / "stale_plugin.egg-info")
    # without the option, the metadata is what offers it, and the listing says where both are
    r = invoke("plugins", "-o", "json")
    row = next(x for x in json.loads(r.stdout) if x["name"] == "Stale")
    assert (row["source"], row["alsoOfferedBy"]) == ("entry point stale-plugin 0.1", None)
    assert row["file"] == str(src / "stale_plugin" / "plugin.py")
    assert row["metadata"] == str(src / "stale_plugin.egg-info")
    table = invoke("plugins", "--plugin-module", "stale_plugin.plugin")
    assert table.exit_code == 0, table.output
    assert "(also" in table.stdout and "loaded from" in table.stdout  # the table says it too


def test_file_is_where_the_class_was_loaded_from(example_on_path: None) -> None:
    rows = {r["name"]: r for r in json.loads(invoke("plugins", "--plugin-module", MODULE, "-o", "json").stdout)}
    assert rows["StickyNode"]["file"] == str(EXAMPLE / "src" / "kschedctl_sticky_node" / "plugin.py")
    assert rows["NodeName"]["file"].endswith("kschedctl/plugins/nodename.py")
    assert rows["NodeName"]["metadata"] is None and rows["NodeName"]["alsoOfferedBy"] is None
