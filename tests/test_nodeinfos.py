"""A snapshot adds each node's pods at once (``NodeInfo.add_pods``): the NodeInfo must be the one
adding them one by one (``add_pod``) makes, lists, aggregates (scalar resources in the same order),
host ports, claims and generation alike."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.resources import DEFAULT_RESIZE_RULE, PodResourceMemo, Resource
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.snapshot.model import Pod
from tests.builders import make_cluster, make_node, make_pod

pod_shapes = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from([None, "100m", "1", "0.5m"]),
        "memory": st.sampled_from([None, "1Gi", "0.5"]),
        "gpus": st.sampled_from([0, 1, 2]),
        "scalar": st.sampled_from([None, "example.com/a", "example.com/b"]),
        "port": st.sampled_from([None, 80, 8080]),
        "init": st.booleans(),
        "claim": st.sampled_from([None, "data", "logs"]),
        "affinity": st.sampled_from([None, "required", "preferred", "anti"]),
        "memo": st.booleans(),
    }
)


def _pod(i: int, shape: dict[str, Any]) -> Pod:
    b = make_pod(f"p{i}").node("n0").req(**{k: shape[k] for k in ("cpu", "memory") if shape[k] is not None})
    if shape["gpus"]:
        b.gpus(shape["gpus"])
    if shape["scalar"]:
        b.res({shape["scalar"]: "3"})
    if shape["port"]:
        b.host_port(shape["port"])
    if shape["init"]:
        b.init_container("i", cpu="2")
    if shape["claim"]:
        b.pvc(shape["claim"])
    if shape["affinity"] == "anti":
        b.pod_affinity("required", "zone", {"app": "x"}, anti=True)
    elif shape["affinity"]:
        b.pod_affinity(shape["affinity"], "zone", {"app": "x"})
    return b.build()


def _state(ni: NodeInfo) -> tuple[Any, ...]:
    def resource(r: Any) -> tuple[Any, ...]:
        return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, list(r.scalar.items()))

    return (
        [pi.pod.name for pi in ni.pods],
        [pi.pod.name for pi in ni.pods_with_affinity],
        [pi.pod.name for pi in ni.pods_with_required_anti_affinity],
        resource(ni.requested),
        resource(ni.non_zero_requested),
        {ip: sorted(ports) for ip, ports in ni.used_ports.ports.items()},
        list(ni.pvc_ref_counts.items()),
        ni.generation,
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(pod_shapes, max_size=12))
def test_all_at_once_is_one_by_one(shapes: list[dict[str, Any]]) -> None:
    node = make_node("n0").build()
    pods = [_pod(i, shape) for i, shape in enumerate(shapes)]
    one_by_one = NodeInfo(node)
    for pod in pods:
        one_by_one.add_pod(pod)
        pod._info = None
    for pod, shape in zip(pods, shapes, strict=True):
        if shape["memo"]:  # some pods with a PodInfo already (the memo's resource replaces its own)
            PodInfo.of(pod)
    together = NodeInfo(node)
    together.add_pods(pods, PodResourceMemo(DEFAULT_RESIZE_RULE).of)
    assert _state(together) == _state(one_by_one)
    assert all(pi.pod._info is pi for pi in together.pods)


def test_nodes_of_one_allocatable_shape_share_its_resource() -> None:
    """A snapshot computes each shape of allocatable amounts once; every node still gets its own amounts."""
    nodes = [
        make_node("a").alloc(cpu="4", memory="8Gi").build(),
        make_node("b").alloc(cpu="4", memory="8Gi").build(),
        make_node("c").alloc(cpu="8", memory="8Gi").gpus(2).build(),
    ]
    snapshot = Snapshot(make_cluster(nodes, []))
    for node in nodes:
        assert snapshot.node_info_map[node.name].allocatable == Resource.from_list(node.allocatable)
    a, b, c = (snapshot.node_info_map[n].allocatable for n in "abc")
    assert a == b != c
