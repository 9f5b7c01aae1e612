"""The scheduler's per-cycle view of nodes: NodeInfos in kube-scheduler's node order.

kube-scheduler lists nodes from its node tree: zones in the order they were first
seen, and nodes interleaved across zones (first node of each zone, then the
second of each, ...). Nodes join the tree as the scheduler's informer lists them at
start-up. kschedctl assumes the API server's order, by name, whatever the order of the
snapshot file, unless the run is given another (``--node-order``: the cluster's
``startup``, ``snapshot/nodeorder.py``); the real list comes from a map and its order
changes with every scheduler restart. Filtering starts at
index 0 in the first cycle, so this order decides which nodes are evaluated when
percentageOfNodesToScore stops the search early, and which of equally scored nodes
the heap yields.

A snapshot is built for one version's rules: its NodeInfos count the resize status of running
pods as that version does (``resize_rule``); a framework refuses a snapshot built for other rules.

Upstream model: ``pkg/scheduler/backend/cache/snapshot.go and backend/cache/node_tree.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any, TypeVar

from kschedctl.framework.podindex import MatchCounts, PodIndex
from kschedctl.framework.resources import PodResourceMemo, Resource, resize_rule
from kschedctl.framework.types import ImageStateSummary, NodeInfo, PodInfo
from kschedctl.kube.features import Features
from kschedctl.kube.topology import zone_key
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.bulk import bulk_build
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod


def node_tree_order(names_and_zones: Iterable[tuple[str, str]]) -> list[str]:
    zones: list[str] = []
    tree: dict[str, list[str]] = {}
    for name, zone in names_and_zones:
        if zone not in tree:
            zones.append(zone)
            tree[zone] = []
        tree[zone].append(name)
    out: list[str] = []
    i = 0
    total = sum(len(v) for v in tree.values())
    while len(out) < total:
        for z in zones:
            members = tree[z]
            if i < len(members):
                out.append(members[i])
        i += 1
    return out


def _shareable(base: Snapshot, cluster: Cluster, excluded: set[str]) -> dict[str, NodeInfo]:
    """The NodeInfos of ``base`` that ``cluster``'s snapshot (without ``excluded``) would build equal:
    same Node object and same pods. None (an empty map) when the clusters differ in more than Node
    objects (pods, or nodes dropped), or when a pod excluded by one snapshot only is nominated or has
    volumes (the nominated pods and the used claims are then the base's); the snapshot's own pods are
    then those of the nodes it does not share."""
    base_pods, pods = base.cluster.pods, cluster.pods
    if len(base_pods) != len(pods) or any(a is not b for a, b in zip(base_pods, pods, strict=True)):
        return {}
    if any(cluster.node(name) is None for name in base.node_info_map):
        return {}
    differ = excluded ^ base.excluded
    moved = [p for p in pods if p.uid in differ] if differ else []
    if any((not p.node_name and p.nominated_node_name) or p.volumes for p in moved):
        return {}
    touched = {p.node_name for p in moved}
    out: dict[str, NodeInfo] = {}
    for node in cluster.nodes:
        ni = base.node_info_map.get(node.name)
        if ni is not None and ni.node is node and node.name not in touched:
            out[node.name] = ni
    return out


def list_order(pods: list[Pod]) -> list[Pod]:
    """Pods in the order a list of them comes back (namespace, then name), as the informer hands
    them to the scheduler's cache at start-up."""
    return sorted(pods, key=_LIST_KEY)


_LIST_KEY = attrgetter("meta.namespace", "meta.name")


T = TypeVar("T")


class _AllocatableMemo:
    """One ``Resource`` per shape of allocatable amounts (a NodeInfo's ``allocatable`` is never changed in
    place: copies share it), keyed by the names and the identity of the quantities (a loaded cluster holds
    one object per amount; the nodes keep them alive as long as the snapshot)."""

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Resource] = {}

    def of(self, node: Node) -> Resource:
        amounts = node.allocatable
        key = (*amounts, *map(id, amounts.values()))
        res = self._memo.get(key)
        if res is None:
            res = self._memo[key] = Resource.from_list(amounts)
        return res


def _pods_by_node(
    pods: list[Pod], by_name: dict[str, NodeInfo], excluded: set[str]
) -> tuple[dict[str, list[Pod]], list[Pod]]:
    """The pods on the snapshot's nodes (not ``excluded``) by node, each node's in ``pods``' order; and the
    pods on no node (``excluded`` or not), in that order."""
    groups: dict[str, list[Pod]] = {}
    unbound: list[Pod] = []
    for pod in pods:
        node_name = pod.node_name
        if not node_name:
            unbound.append(pod)
            continue
        if excluded and pod.meta.uid in excluded:  # (Pod.uid)
            continue
        group = groups.get(node_name)
        if group is None:
            if node_name not in by_name:
                continue  # a pod on a node the snapshot does not have: not listed, as upstream
            group = groups[node_name] = []
        group.append(pod)
    return groups, unbound


class Snapshot:
    """NodeInfo lister (``fwk.SharedLister``) plus the cluster objects plugins read."""

    @bulk_build()  # NodeInfos, PodInfos and aggregates of every pod: built in bulk, kept for the command
    def __init__(
        self,
        cluster: Cluster,
        *,
        features: Features = DEFAULT_FEATURES,
        exclude_pod_uids: Iterable[str] = (),
        reuse: Snapshot | None = None,
    ) -> None:
        """``features``: the version whose rules the NodeInfos follow. ``reuse``: a snapshot of a cluster
        that differs from ``cluster`` only in some Node objects (as ``Cluster.copy_with(nodes=...)``
        makes), built for the same rules: its NodeInfos of unchanged nodes are shared, not rebuilt.
        Both snapshots are then only read, as cycles do (or changed on the nodes they do not share)."""
        self.cluster = cluster
        #: How the resize status of running pods counts in the NodeInfos' requests.
        self.resize_rule = resize_rule(features)
        excluded = set(exclude_pod_uids)
        self.excluded = excluded
        by_name: dict[str, NodeInfo] = {}
        if reuse is not None and reuse.resize_rule != self.resize_rule:
            raise ValueError("a snapshot can share NodeInfos only with one built for the same version's rules")
        shared = _shareable(reuse, cluster, excluded) if reuse is not None else {}
        allocatable = _AllocatableMemo()
        for node in cluster.nodes:
            by_name[node.name] = shared.get(node.name) or NodeInfo(node, self.resize_rule, allocatable.of(node))
        self.used_pvc_set: set[str] = set(reuse.used_pvc_set) if shared and reuse is not None else set()
        # The cache learns the pods from the informer's initial list, in the order the list came back:
        # that is the order of each NodeInfo's pods (preemption's victims keep it among equals). A live
        # read is that list already; the pods of files are ordered as a list of them would be.
        listed = [p for p in cluster.pods if p.node_name not in shared] if shared else cluster.pods
        pods = listed if cluster.pods_listed else list_order(listed)
        resource_of = PodResourceMemo(self.resize_rule).of  # (most pods repeat a few shapes of requests)
        groups, unbound = _pods_by_node(pods, by_name, excluded)
        for name, on_node in groups.items():
            by_name[name].add_pods(on_node, resource_of)
            for pod in on_node:
                if pod.volumes:
                    self._use_claims(pod)
        # image states: size of the first node that reported the image, count of nodes.
        image_nodes: dict[str, tuple[int, set[str]]] = {}
        for node in cluster.nodes:
            for img in node.images:
                for n in img.names:
                    entry = image_nodes.get(n)
                    if entry is None:
                        image_nodes[n] = (img.size_bytes, {node.name})
                    else:
                        entry[1].add(node.name)
        for node in cluster.nodes:
            states: dict[str, ImageStateSummary] = {}
            for img in node.images:
                for n in img.names:
                    size, nodes = image_nodes[n]
                    states[n] = ImageStateSummary(size, len(nodes))
            if by_name[node.name].image_states != states:  # a shared NodeInfo keeps its (equal) states
                if node.name in shared:
                    by_name[node.name] = by_name[node.name].snapshot()
                by_name[node.name].image_states = states
        # The scheduler's cache learns the nodes from its informer's initial list: the node tree is built
        # in that order, by name (etcd key order) unless the run says otherwise (``Cluster.startup``).
        order = node_tree_order((n.name, zone_key(n.labels)) for n in cluster.startup.insertion(cluster.nodes))
        self.node_info_map = by_name
        self.node_info_list: list[NodeInfo] = [by_name[n] for n in order]
        self.have_pods_with_affinity_list = [ni for ni in self.node_info_list if ni.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            ni for ni in self.node_info_list if ni.pods_with_required_anti_affinity
        ]
        self.nominated: dict[str, list[PodInfo]] = {}
        if shared and reuse is not None:  # the same pods and no nominated pod excluded by one only
            self.nominated = {k: list(v) for k, v in reuse.nominated.items()}
        else:
            for pod in unbound:
                if pod.nominated_node_name and pod.uid not in excluded:
                    self.nominated.setdefault(pod.nominated_node_name, []).append(PodInfo.of(pod))
        self._derived: dict[str, Any] = {}
        #: v1.36's pod-group cycle: the nodes of the placement being tried (None: every node), and the
        #: group's pods assumed in this snapshot during the cycle (by uid), which GangScheduling counts.
        self.placement_nodes: list[NodeInfo] | None = None
        self.pod_group_assumed: dict[str, Pod] = {}
        #: Pods created after the cluster was read that the scheduler knows (by uid, in creation order): a
        #: simulation's own pods, the other pods of a file ``explain`` places. Its cache counts them in
        #: their pod groups (``framework.podgroups.group_state``); the cluster object does not hold them.
        self.created_pods: dict[str, Pod] = {}

    def _use_claims(self, pod: Pod) -> None:
        """Count the claims of the pod's volumes as used."""
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if isinstance(pvc, dict):
                self.used_pvc_set.add(f"{pod.namespace}/{pvc.get('claimName', '')}")

    def derived(self, key: str, build: Callable[[Snapshot], T]) -> T:
        """A structure computed from the NodeInfos (an index), built on first use and kept with the
        snapshot. ``assume``/``forget`` keep it current through its ``pod_added``/``pod_removed``
        methods (``(PodInfo, NodeInfo)``), or drop it when it has none."""
        d = self._derived.get(key)
        if d is None:
            d = self._derived[key] = build(self)
        return d

    def pod_index(self) -> PodIndex:
        """The pods on the nodes by namespace and label (``framework/podindex.py``)."""
        return self.derived("PodIndex", lambda s: PodIndex(s.node_info_list))

    def match_counts(self) -> MatchCounts:
        """Matching pods per node for the selectors cycles ask about (``framework/podindex.py``)."""
        return self.derived("MatchCounts", lambda s: MatchCounts(s.pod_index()))

    def _changed(self, hook: str, pi: PodInfo, ni: NodeInfo) -> None:
        for key, d in list(self._derived.items()):
            update = getattr(d, hook, None)
            if update is None:
                del self._derived[key]
            else:
                update(pi, ni)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    # placements (backend/cache/snapshot.go of v1.36): the scheduler looks for nodes only in the
    # placement; plugins keep seeing every node
    def assume_placement(self, nodes: list[NodeInfo]) -> None:
        self.placement_nodes = None if len(nodes) == len(self.node_info_list) else list(nodes)

    def forget_placement(self) -> None:
        self.placement_nodes = None

    def nodes_in_placement(self) -> list[NodeInfo]:
        return self.node_info_list if self.placement_nodes is None else self.placement_nodes

    def num_nodes_in_placement(self) -> int:
        return len(self.nodes_in_placement())

    def get_in_placement(self, name: str) -> NodeInfo | None:
        if self.placement_nodes is None or any(ni.name == name for ni in self.placement_nodes):
            return self.get(name)
        return None

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominated.get(node_name, [])

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        return self.cluster.namespace_labels(namespace)

    def assume(self, pod: Pod, node_name: str) -> None:
        """Place a pod on a node as the scheduler cache's AssumePod does (for simulations)."""
        ni = self.node_info_map[node_name]
        had_aff = bool(ni.pods_with_affinity)
        had_anti = bool(ni.pods_with_required_anti_affinity)
        ni.add_pod(pod)
        self._changed("pod_added", PodInfo.of(pod), ni)
        if not had_aff and ni.pods_with_affinity:
            self.have_pods_with_affinity_list.append(ni)
        if not had_anti and ni.pods_with_required_anti_affinity:
            self.have_pods_with_required_anti_affinity_list.append(ni)
        self._use_claims(pod)

    def forget(self, pod: Pod, node_name: str) -> bool:
        """Take a pod off its node (a preemption victim deleted, for simulations): the inverse of ``assume``.

        The affinity lists and the used-PVC set are kept as the cache's next snapshot would build them.
        """
        ni = self.node_info_map.get(node_name)
        if ni is None or not ni.remove_pod(pod):
            return False
        self._changed("pod_removed", PodInfo.of(pod), ni)
        if not ni.pods_with_affinity and ni in self.have_pods_with_affinity_list:
            self.have_pods_with_affinity_list.remove(ni)
        if not ni.pods_with_required_anti_affinity and ni in self.have_pods_with_required_anti_affinity_list:
            self.have_pods_with_required_anti_affinity_list.remove(ni)
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if isinstance(pvc, dict):
                key = f"{pod.namespace}/{pvc.get('claimName', '')}"
                if not any(key in other.pvc_ref_counts for other in self.node_info_list):
                    self.used_pvc_set.discard(key)
        return True
