"""New nodes built from an existing node, the way cluster-autoscaler builds a node from a node group's template.

A scale-up what-if ("if N more nodes like T were added, where would these pods go?") is only worth
asking if the added nodes are the nodes the autoscaler would really bring: a fresh machine of T's
shape, not a clone of T's state. So a new node keeps what belongs to the machine type and the node
group (labels, the group's taints, capacity, allocatable, images, nodeInfo) and drops what belongs to
T's life so far (its name and hostname label, annotations, uid, providerID, pod CIDRs, the cordon, the
taints the node lifecycle controller puts on an unhealthy node, its conditions other than Ready).
The pods a new node would start with are T's DaemonSet pods and its mirror (static) pods, one copy
each, bound to the new node; no other pod of T is copied.

The rules are those of ``../shared/scaleup/README.md``; ``tests/test_nodetemplate.py`` holds them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kschedctl.kube.topology import HOSTNAME_LABEL
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod

#: Taints a new node never carries: the cordon, and the taints the node lifecycle controller sets
#: from a node's conditions (a node fresh from its group is Ready and healthy).
DROPPED_TAINTS = frozenset({
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
})

#: The status fields a new node takes from its template (everything else of the status is left out).
COPIED_STATUS = ("capacity", "allocatable", "images", "nodeInfo")


def new_node_names(template: str, count: int, taken: Iterable[str] = ()) -> list[str]:
    """``T-new-1`` ... ``T-new-N``, skipping a name the cluster already has."""
    used = set(taken)
    out: list[str] = []
    i = 0
    while len(out) < count:
        i += 1
        name = f"{template}-new-{i}"
        if name not in used:
            out.append(name)
    return out


def node_from_template(template: Node, name: str) -> Node:
    """A new, Ready, schedulable node named ``name`` of ``template``'s shape."""
    t = template.raw
    labels = dict((t.get("metadata") or {}).get("labels") or {})
    labels[HOSTNAME_LABEL] = name
    spec: dict[str, Any] = {}
    taints = [copy.deepcopy(x) for x in ((t.get("spec") or {}).get("taints") or [])
              if not (isinstance(x, dict) and x.get("key") in DROPPED_TAINTS)]
    if taints:
        spec["taints"] = taints
    old_status = t.get("status") or {}
    status: dict[str, Any] = {k: copy.deepcopy(old_status[k]) for k in COPIED_STATUS if k in old_status}
    status["conditions"] = [{"type": "Ready", "status": "True"}]
    raw = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
           "spec": spec, "status": status}
    return Node(raw)


def is_daemon_or_mirror(pod: Pod) -> bool:
    """A pod a new node of the group would run from its start: a DaemonSet's pod or a static (mirror) pod."""
    return any(ref.get("kind") in ("DaemonSet", "Node") for ref in pod.meta.owner_references)


def pod_copy_for(pod: Pod, node_name: str) -> Pod:
    """``pod`` copied onto the new node ``node_name``: named ``<pod>-<node>``, a new uid, bound there."""
    raw = copy.deepcopy(pod.raw)
    meta = raw.setdefault("metadata", {})
    name = f"{pod.name}-{node_name}"
    meta["name"] = name
    meta["uid"] = f"kschedctl-scaleup-{pod.namespace}-{name}"
    meta.pop("generateName", None)
    meta.pop("resourceVersion", None)
    raw.setdefault("spec", {})["nodeName"] = node_name
    out = Pod.from_raw(raw)
    out.priority = pod.priority
    out.preemption_policy = pod.preemption_policy
    return out


@dataclass(frozen=True)
class NewNodes:
    """The nodes (and their starting pods) that ``--add-nodes T=N`` adds."""

    template: str
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]

    @property
    def names(self) -> list[str]:
        return [n.name for n in self.nodes]


def new_nodes(cluster: Cluster, template: Node, count: int, taken: Iterable[str] = ()) -> NewNodes:
    """``count`` nodes like ``template``, each with a copy of the template's DaemonSet and mirror pods."""
    names = new_node_names(template.name, count, {n.name for n in cluster.nodes} | set(taken))
    starting = [p for p in cluster.pods if p.node_name == template.name and is_daemon_or_mirror(p)]
    nodes = tuple(node_from_template(template, name) for name in names)
    pods = tuple(pod_copy_for(p, name) for name in names for p in starting)
    return NewNodes(template.name, nodes, pods)


def with_new_nodes(cluster: Cluster, added: Iterable[NewNodes]) -> Cluster:
    """A copy of ``cluster`` holding the added nodes (after its own) and their starting pods."""
    groups = list(added)
    nodes = [n for g in groups for n in g.nodes]
    if not nodes:
        return cluster
    pods = list(cluster.pods) + [p for g in groups for p in g.pods]
    return cluster.copy_with(nodes=nodes, pods=pods)
