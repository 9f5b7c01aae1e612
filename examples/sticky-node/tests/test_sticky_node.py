"""Tests of the StickyNode example plugin: the plugin alone, then inside kschedctl's scheduling cycle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kschedctl_sticky_node import plugin as sticky
from pydantic import ValidationError

from kschedctl.config import load_config
from kschedctl.explain.cycle import explain_pod
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.snapshot import Snapshot
from kschedctl.framework.types import NodeInfo
from kschedctl.plugins import registry_for
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import load_cluster, load_pods
from kschedctl.snapshot.model import KubeObject, Node, Pod

DEMO = Path(__file__).parent.parent / "demo"
MODULE = "kschedctl_sticky_node.plugin"


class Handle:
    """Just enough of kschedctl's Handle for the plugin: the cluster it reads owners from."""

    def __init__(self, cluster: Cluster) -> None:
        self._snapshot = Snapshot(cluster)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def cluster(self) -> Cluster:
        return self._snapshot.cluster


def replica_set(name: str, pinned: str | None) -> KubeObject:
    md: dict[str, Any] = {"name": name, "namespace": "shop"}
    if pinned:
        md["annotations"] = {sticky.DEFAULT_ANNOTATION: pinned}
    return KubeObject({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": md}, "ReplicaSet", True)


def pod(owner_kind: str | None = "ReplicaSet", owner: str = "web") -> Pod:
    md: dict[str, Any] = {"name": "p", "namespace": "shop"}
    if owner_kind:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner, "controller": True}]
    return Pod({"metadata": md, "spec": {"containers": [{"name": "c"}]}})


def node(name: str) -> NodeInfo:
    return NodeInfo(Node({"metadata": {"name": name}, "status": {"capacity": {"cpu": "1", "pods": "10"}}}))


def plugin(*objects: KubeObject, args: sticky.StickyNodeArgs | None = None) -> sticky.StickyNode:
    cluster = Cluster()
    for o in objects:
        cluster.add_object(o)
    return sticky.new(args, Handle(cluster))  # type: ignore[arg-type]


def test_extension_points() -> None:
    assert extension_points_of(plugin()) == ["preFilter", "filter", "postBind"]


def test_args_model_defaults_and_strictness() -> None:
    a = sticky.StickyNodeArgs()
    assert a.annotation == "sticky.kschedctl.io/node"
    assert a.owner_kinds == ["ReplicaSet", "StatefulSet"]
    assert sticky.StickyNodeArgs.model_validate({"ownerKinds": ["Job"]}).owner_kinds == ["Job"]
    with pytest.raises(ValidationError):
        sticky.StickyNodeArgs.model_validate({"annotaton": "typo"})
    with pytest.raises(ValidationError):
        sticky.StickyNodeArgs.model_validate({"annotation": ""})


@pytest.mark.parametrize(
    ("owner_kind", "pinned", "pre_filter_code", "node_b_code"),
    [
        (None, None, "Skip", "Success"),  # no owner: nothing to do
        ("Job", "node-a", "Skip", "Success"),  # an owner kind the plugin does not handle
        ("ReplicaSet", None, "Skip", "Success"),  # owner not pinned yet
        ("ReplicaSet", "node-a", "Success", "UnschedulableAndUnresolvable"),
        ("ReplicaSet", "node-b", "Success", "Success"),
    ],
)
def test_pre_filter_and_filter(owner_kind: str | None, pinned: str | None, pre_filter_code: str, node_b_code: str) -> None:
    pl = plugin(replica_set("web", pinned))
    state = CycleState()
    p = pod(owner_kind)
    result, st = pl.pre_filter(state, p, [])
    assert result is None
    assert st.code.label == pre_filter_code
    f = pl.filter(state, p, node("node-b"))
    assert f.code.label == node_b_code
    if not f.is_success():
        assert f.reasons == [sticky.ERR_REASON]


def test_post_bind_says_what_it_would_record_and_writes_nothing() -> None:
    rs = replica_set("web", None)
    pl = plugin(rs)
    state = CycleState()
    pl.pre_filter(state, pod(), [])
    assert pl.post_bind(state, pod(), "node-c") == (
        "would annotate ReplicaSet shop/web with sticky.kschedctl.io/node=node-c (dry run: not written)"
    )
    assert rs.meta.annotations == {}
    assert pl.post_bind(CycleState(), pod(None), "node-c") is None


def test_in_a_scheduling_cycle() -> None:
    registry = registry_for([MODULE])
    entry = registry.get("StickyNode")
    assert entry is not None and entry.args_model is sticky.StickyNodeArgs
    cfg = load_config(str(DEMO / "config.yaml"), registry)
    assert isinstance(cfg.profiles[0].args("StickyNode"), sticky.StickyNodeArgs)
    cluster = load_cluster([str(DEMO / "cluster.yaml")])
    trace = explain_pod(cluster, load_pods(str(DEMO / "pod.yaml"))[0], cfg, registry).to_dict()
    assert trace["selected"]["candidates"] == ["node-b"]
    assert trace["filter"]["node-a"]["plugin"] == "StickyNode"
    assert trace["postBind"] == [
        {"plugin": "StickyNode", "note": "ReplicaSet shop/web-5d8f is already pinned to node-b: nothing to record"}
    ]
    unpinned = cluster.pod("shop", "api-7c4b-ccccc")
    assert unpinned is not None
    trace = explain_pod(cluster, unpinned, cfg, registry).to_dict()
    assert trace["outcome"] == "scheduled"
    assert trace["postBind"][0]["note"].startswith("would annotate ReplicaSet shop/api-7c4b with sticky.kschedctl.io/node=")
