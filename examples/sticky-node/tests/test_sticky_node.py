"""Tests of the StickyNode example plugin: the plugin alone, then inside kschedctl's scheduling cycle."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kschedctl_sticky_node import plugin as sticky
from pydantic import ValidationError

from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.snapshot.model import KubeObject
from kschedctl.testing import (
    PodBuilder,
    SnapshotHandle,
    cluster_from_yaml,
    load_config,
    make_cluster,
    make_node,
    make_object,
    make_pod,
    node_info,
    registry,
    schedule,
)

DEMO = Path(__file__).parent.parent / "demo"


def replica_set(name: str, pinned: str | None) -> KubeObject:
    annotations = {sticky.DEFAULT_ANNOTATION: pinned} if pinned else {}
    return make_object("ReplicaSet", name, "shop", apiVersion="apps/v1", annotations=annotations)


def pod(owner_kind: str | None = "ReplicaSet", owner: str = "web") -> PodBuilder:
    p = make_pod("p", "shop")
    return p.owner(owner_kind, owner) if owner_kind else p


def plugin(*objects: KubeObject, args: sticky.StickyNodeArgs | None = None) -> sticky.StickyNode:
    return sticky.new(args, SnapshotHandle(make_cluster(objects=objects)))


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
    p = pod(owner_kind).build()
    result, st = pl.pre_filter(state, p, [])
    assert result is None
    assert st.code.label == pre_filter_code
    f = pl.filter(state, p, node_info(make_node("node-b")))
    assert f.code.label == node_b_code
    if not f.is_success():
        assert f.reasons == [sticky.ERR_REASON]


def test_post_bind_says_what_it_would_record_and_writes_nothing() -> None:
    rs = replica_set("web", None)
    pl = plugin(rs)
    state = CycleState()
    pl.pre_filter(state, pod().build(), [])
    assert pl.post_bind(state, pod().build(), "node-c") == (
        "would annotate ReplicaSet shop/web with sticky.kschedctl.io/node=node-c (dry run: not written)"
    )
    assert rs.meta.annotations == {}
    assert pl.post_bind(CycleState(), pod(None).build(), "node-c") is None


def test_in_a_scheduling_cycle() -> None:
    entry = registry(sticky).get("StickyNode")
    assert entry is not None and entry.args_model is sticky.StickyNodeArgs
    cfg = load_config(DEMO / "config.yaml", plugins=[sticky])
    assert isinstance(cfg.profiles[0].args("StickyNode"), sticky.StickyNodeArgs)
    cluster = (DEMO / "cluster.yaml").read_text()
    new_replica = yaml.safe_load((DEMO / "pod.yaml").read_text())
    trace = schedule(new_replica, cfg, cluster=cluster, plugins=[sticky]).to_dict()
    assert trace["selected"]["candidates"] == ["node-b"]
    assert trace["filter"]["node-a"]["plugin"] == "StickyNode"
    assert trace["postBind"] == [
        {"plugin": "StickyNode", "note": "ReplicaSet shop/web-5d8f is already pinned to node-b: nothing to record"}
    ]
    unpinned = cluster_from_yaml(cluster).pod("shop", "api-7c4b-ccccc")
    assert unpinned is not None
    trace = schedule(unpinned, cfg, cluster=cluster, plugins=[sticky]).to_dict()
    assert trace["outcome"] == "scheduled"
    assert trace["postBind"][0]["note"].startswith("would annotate ReplicaSet shop/api-7c4b with sticky.kschedctl.io/node=")


def test_configuration_as_text() -> None:
    """A configuration written in the test itself; its args are validated against StickyNodeArgs."""
    text = (DEMO / "config.yaml").read_text().replace("ownerKinds: [ReplicaSet, StatefulSet]", "ownerKinds: [Job]")
    args = load_config(text, plugins=[sticky]).profiles[0].args("StickyNode")
    assert isinstance(args, sticky.StickyNodeArgs) and args.owner_kinds == ["Job"]
    with pytest.raises(ConfigError, match=r"args\.ownerKind: Extra inputs are not permitted"):
        load_config(text.replace("ownerKinds:", "ownerKind:"), plugins=[sticky])
