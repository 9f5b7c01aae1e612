"""kschedctl.testing, the helpers plugin authors test with: what each one promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.runtime import Framework
from kschedctl.kube.versions import DEFAULT_FEATURES, resolve_features
from kschedctl.testing import (
    GPU,
    SnapshotHandle,
    cluster_from_yaml,
    load_config,
    make_cluster,
    make_node,
    make_object,
    make_pod,
    make_snapshot,
    node_info,
    registry,
    schedule,
)
from tests import boom_plugin

CONFIG_TEXT = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Boom}]
  pluginConfig:
  - name: Boom
    args: {points: [filter], node: n2}
"""


def test_node_info_with_gpus_in_use() -> None:
    ni = node_info(make_node("g").gpus(8), make_pod("a").gpus(3), make_pod("b").req(cpu="1").gpus(2))
    assert ni.allocatable.get(GPU) == 8
    assert ni.requested.get(GPU) == 5 and ni.requested.scalar == {GPU: 5}
    assert ni.requested.get("cpu") == 1000
    assert [pi.pod.node_name for pi in ni.pods] == ["g", "g"]
    other = node_info(make_node("f").alloc_extra({"example.com/fpga": "2"}), make_pod("c").res({"example.com/fpga": "1"}))
    assert other.requested.get("example.com/fpga") == 1


def test_pod_gpus_sets_request_and_limit() -> None:
    c = make_pod("p").gpus(2, "amd.com/gpu").build().containers[0]
    assert (c.requests["amd.com/gpu"], c.limits["amd.com/gpu"]) == (2, 2)


def test_clusters_from_builders_dicts_and_yaml() -> None:
    c = make_cluster(
        [make_node("n1"), {"kind": "Node", "metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "2"}}}],
        [make_pod("web").node("n1")],
        [make_object("Namespace", "shop", labels={"team": "a"})],
    )
    assert [n.name for n in c.nodes] == ["n1", "n2"]
    assert c.node("n2") is not None and c.node("n2").allocatable["cpu"] == 2  # type: ignore[union-attr]
    assert c.namespace_labels("shop") == {"team": "a"}
    y = cluster_from_yaml("kind: Node\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n")
    assert [n.name for n in y.nodes] == ["a"] and [p.key for p in y.pods] == ["default/p"]
    snap = make_snapshot([make_node("x").zone("z1"), make_node("y").zone("z2")])
    assert [ni.name for ni in snap.node_info_list] == ["x", "y"]


def test_handle() -> None:
    c = make_cluster([make_node("n1")], objects=[make_object("ReplicaSet", "rs", "shop")])
    h = SnapshotHandle(c)
    assert h.cluster is c and h.cluster.get("ReplicaSet", "shop", "rs") is not None
    assert h.snapshot.get("n1") is not None
    assert SnapshotHandle(Snapshot(c)).cluster is c
    assert h.run_filter_plugins_with_nominated_pods(CycleState(), make_pod().build(), h.snapshot.node_info_list[0]).is_success()
    assert h.extenders == []
    assert isinstance(h, Framework) and h.features is DEFAULT_FEATURES  # the runtime's own Handle
    assert SnapshotHandle(features=resolve_features(33)).features.minor == 33


def test_load_config_from_text_dict_path_or_nothing(tmp_path: Path) -> None:
    import yaml

    from_text = load_config(CONFIG_TEXT, plugins=[boom_plugin])
    from_dict = load_config(yaml.safe_load(CONFIG_TEXT), plugins=["tests.boom_plugin"])
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG_TEXT)
    from_path = load_config(path, plugins=[boom_plugin])
    for cfg in (from_text, from_dict, from_path):
        assert [p.name for p in cfg.profiles[0].plugins["filter"].enabled][-1] == "Boom"
    assert from_path.source == str(path)
    assert isinstance(load_config(), SchedulerConfig)
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config("- a list")


def test_registry_adds_only_what_it_is_given() -> None:
    r = registry(boom_plugin)
    entry = r.get("Boom")
    assert entry is not None and entry.source == "module tests.boom_plugin"
    assert len(registry().names()) == 23


def test_schedule_runs_one_cycle_and_returns_the_trace() -> None:
    nodes = [make_node(f"n{i}") for i in (1, 2, 3)]
    trace = schedule(make_pod("web").req(cpu="1"), CONFIG_TEXT, nodes=nodes, plugins=[boom_plugin])
    assert trace.error == 'running "Boom" filter plugin: ValueError: boom'
    trace = schedule(make_pod("web").req(cpu="1"), nodes=nodes, pods=[make_pod("old").req(cpu="3").node("n1")])
    assert trace.selected_node in ("n2", "n3") and trace.to_dict()["outcome"] == "scheduled"


def test_schedule_leaves_a_given_cluster_as_it_was() -> None:
    base = make_cluster([make_node("n1")])
    trace = schedule(make_pod("web"), cluster=base, nodes=[make_node("n2")])
    assert set(trace.filter) == {"n1", "n2"}
    assert [n.name for n in base.nodes] == ["n1"]
