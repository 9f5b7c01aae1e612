"""The nodes a scale-up what-if adds, built as cluster-autoscaler builds a node from a template node."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod
from kschedctl.whatif.nodetemplate import new_node_names, new_nodes, node_from_template, with_new_nodes


def _template(**spec: Any) -> Node:
    return Node({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-a0", "uid": "u-1", "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                     "labels": {"kubernetes.io/hostname": "gpu-a0", "pool": "gpu", "topology.kubernetes.io/zone": "a"}},
        "spec": {"providerID": "aws:///i-1", "podCIDR": "10.0.0.0/24", **spec},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "7900m", "memory": "31Gi", "pods": "110"},
                   "images": [{"names": ["registry/app:1"], "sizeBytes": 500_000_000}],
                   "nodeInfo": {"kubeletVersion": "v1.35.4"},
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                   "conditions": [{"type": "Ready", "status": "False"}, {"type": "MemoryPressure", "status": "True"}]},
    })


def _pod(name: str, owner_kind: str | None, node: str = "gpu-a0", phase: str = "Running") -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": "kube-system", "uid": f"uid-{name}"}
    if owner_kind:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": owner_kind, "name": "owner", "uid": "o", "controller": True}]
    p = Pod.from_raw({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                      "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i",
                                                                 "resources": {"requests": {"cpu": "100m"}}}]},
                      "status": {"phase": phase}})
    p.priority = 2_000_001_000
    return p


@pytest.mark.parametrize(("taints", "kept"), [
    ([], []),
    ([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], []),
    ([{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}], ["nvidia.com/gpu"]),
    ([{"key": k, "effect": "NoSchedule"} for k in (
        "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable")]
     + [{"key": "dedicated", "value": "infra", "effect": "NoExecute"}], ["dedicated"]),
])
def test_taints_copied_except_cordon_and_node_conditions(taints: list[dict[str, str]], kept: list[str]) -> None:
    node = node_from_template(_template(taints=taints, unschedulable=True), "gpu-a0-new-1")
    assert [t.key for t in node.taints] == kept
    assert not node.unschedulable


def test_new_node_keeps_the_machine_and_drops_the_history() -> None:
    node = node_from_template(_template(), "gpu-a0-new-1")
    assert node.name == "gpu-a0-new-1"
    assert node.labels == {"kubernetes.io/hostname": "gpu-a0-new-1", "pool": "gpu", "topology.kubernetes.io/zone": "a"}
    assert set(node.raw["metadata"]) == {"name", "labels"}
    assert node.raw["spec"] == {}
    assert set(node.raw["status"]) == {"capacity", "allocatable", "images", "nodeInfo", "conditions"}
    assert node.conditions == [{"type": "Ready", "status": "True"}]
    assert [im.names for im in node.images] == [("registry/app:1",)]
    assert node.allocatable == _template().allocatable


def test_names_skip_taken_ones() -> None:
    assert new_node_names("n", 3, {"n-new-2"}) == ["n-new-1", "n-new-3", "n-new-4"]


def test_daemonset_and_mirror_pods_copied_onto_each_new_node() -> None:
    t = _template()
    c = Cluster()
    c.add_node(t)
    for p in (_pod("ds", "DaemonSet"), _pod("static", "Node"), _pod("web", "ReplicaSet"), _pod("bare", None),
              _pod("ds-done", "DaemonSet", phase="Succeeded"), _pod("ds-other", "DaemonSet", node="elsewhere")):
        c.add_pod(p)
    added = new_nodes(c, t, 2)
    assert added.names == ["gpu-a0-new-1", "gpu-a0-new-2"]
    assert sorted((p.name, p.node_name) for p in added.pods) == [
        ("ds-gpu-a0-new-1", "gpu-a0-new-1"), ("ds-gpu-a0-new-2", "gpu-a0-new-2"),
        ("static-gpu-a0-new-1", "gpu-a0-new-1"), ("static-gpu-a0-new-2", "gpu-a0-new-2")]
    assert len({p.uid for p in added.pods} | {p.uid for p in c.pods}) == len(added.pods) + len(c.pods)
    assert all(p.priority == 2_000_001_000 for p in added.pods)
    bigger = with_new_nodes(c, [added])
    assert [n.name for n in bigger.nodes] == ["gpu-a0", "gpu-a0-new-1", "gpu-a0-new-2"]
    assert len(bigger.pods) == len(c.pods) + 4
    assert len(c.nodes) == 1  # the original is untouched
