"""The object model's parsing: API-server defaulting applied by ``Pod.from_raw``, the same pod from
``Pod(raw)``, and ``Cluster.copy_with`` sharing a cluster without changing it."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from kschedctl.snapshot.model import Pod
from tests.builders import PodBuilder, make_cluster, make_node, make_object, make_pod

PORT_8080 = [{"name": "c", "image": "i", "ports": [{"containerPort": 8080}]}]


def _q(n: int | str) -> Fraction:
    return Fraction(n)


@pytest.mark.parametrize(
    ("builder", "read", "expected"),
    [
        (make_pod("p").lim(cpu="2", memory="1Gi"), lambda p: p.containers[0].requests,
         {"cpu": _q(2), "memory": _q(2**30)}),
        (make_pod("p").req(cpu="1").lim(cpu="2"), lambda p: p.containers[0].requests, {"cpu": _q(1)}),
        (make_pod("p").set("spec.hostNetwork", True).set("spec.containers", PORT_8080),
         lambda p: (p.containers[0].ports[0].host_port, p.containers[0].ports[0].protocol), (8080, "TCP")),
        (make_pod("p").set("spec.containers", PORT_8080), lambda p: p.containers[0].ports[0].host_port, 0),
        (make_pod("p"), lambda p: p.scheduler_name, "default-scheduler"),
        (make_pod("p").req(cpu="500m").pod_level(limits={"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}),
         lambda p: p.pod_requests, {"cpu": Fraction(1, 2), "memory": _q(2**30), "hugepages-2Mi": _q(4 * 2**20)}),
        (make_pod("p").pod_level(requests={"cpu": "1"}), lambda p: p.pod_requests, {"cpu": _q(1)}),
        (make_pod("p"), lambda p: (p.pod_requests, p.pod_limits), (None, None)),
    ],
    ids=["requests-from-limits", "request-kept", "host-network-port", "no-host-port",
         "scheduler-name", "pod-level-requests", "pod-level-requests-only", "no-pod-level"],
)
def test_from_raw_applies_api_defaults(builder: PodBuilder, read: Callable[[Pod], Any], expected: Any) -> None:
    assert read(Pod.from_raw(builder.raw)) == expected


@pytest.mark.parametrize(
    "builder",
    [
        make_pod("plain").req(cpu="100m"),
        make_pod("rich").init_container("i", sidecar=True, cpu="1").toleration("k", "v", "NoSchedule")
        .node_selector(zone="a").spread(1, "zone").gate("g").pvc("claim").priority(5).nominated("n1"),
    ],
    ids=["plain", "rich"],
)
def test_constructor_and_from_raw_agree(builder: PodBuilder) -> None:
    built, parsed = Pod(builder.raw), Pod.from_raw(builder.raw)
    for name in Pod.__slots__:
        assert getattr(built, name) == getattr(parsed, name), name


def test_node_allocatable_defaults_to_capacity() -> None:
    node = make_node("n").set("status.capacity", {"cpu": "4"}).set("status.allocatable", None).build()
    assert node.allocatable == {"cpu": _q(4)}


@pytest.mark.parametrize(
    ("replace", "expected_nodes", "expected_cpu"),
    [
        ("b", ["a", "b", "c"], _q(64)),
        ("d", ["a", "b", "c", "d"], _q(64)),
    ],
    ids=["replaces-in-place", "adds-at-end"],
)
def test_copy_with_nodes(replace: str, expected_nodes: list[str], expected_cpu: Fraction) -> None:
    cluster = make_cluster([make_node(n).alloc(cpu="4") for n in "abc"], [make_pod("p").node("a")])
    new = make_node(replace).alloc(cpu="64").build()
    copied = cluster.copy_with(nodes=[new])
    assert [n.name for n in copied.nodes] == expected_nodes
    assert copied.node(replace) is new and new.allocatable["cpu"] == expected_cpu
    assert [n.name for n in cluster.nodes] == ["a", "b", "c"] and cluster.node(replace) is not new
    assert copied.pods == cluster.pods and copied.pod("default", "p") is cluster.pod("default", "p")


def test_copy_with_objects_replaces_same_key_and_leaves_original() -> None:
    old = make_object("PriorityClass", "high", value=10)
    cluster = make_cluster([make_node("a")], objects=[old])
    new = make_object("PriorityClass", "high", value=20)
    extra = make_object("PriorityClass", "low", value=1)
    copied = cluster.copy_with(objects=[new, extra])
    assert copied.get("PriorityClass", "", "high") is new
    assert [o.name for o in copied.of_kind("PriorityClass")] == ["high", "low"]
    assert cluster.get("PriorityClass", "", "high") is old and cluster.of_kind("PriorityClass") == [old]
    assert copied.copy_with().nodes == copied.nodes


@pytest.mark.parametrize(
    ("drop", "keep_pods", "expected_nodes", "expected_pods"),
    [
        ([], None, ["a", "b", "c"], ["p", "q"]),
        (["b"], None, ["a", "c"], ["p", "q"]),
        (["b"], ["q"], ["a", "c"], ["q"]),
        ([], [], ["a", "b", "c"], []),
    ],
    ids=["nothing-dropped", "node-dropped", "node-dropped-pods-given", "no-pods"],
)
def test_copy_with_drops_nodes_and_takes_pods(
    drop: list[str], keep_pods: list[str] | None, expected_nodes: list[str], expected_pods: list[str]
) -> None:
    cluster = make_cluster([make_node(n) for n in "abc"], [make_pod("p").node("a"), make_pod("q").node("c")])
    pods = None if keep_pods is None else [p for p in cluster.pods if p.name in keep_pods]
    copied = cluster.copy_with(drop_nodes=drop, pods=pods)
    assert [n.name for n in copied.nodes] == expected_nodes
    assert [p.name for p in copied.pods] == expected_pods
    assert [n.name for n in cluster.nodes] == ["a", "b", "c"] and len(cluster.pods) == 2
