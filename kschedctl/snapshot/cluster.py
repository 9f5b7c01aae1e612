"""The Cluster: every object of a snapshot, indexed once, with API-server defaulting applied.

A Cluster is what every source (files, a live cluster, recordings) produces and
what the scheduling core consumes. It is read-only once built; what-if changes
(a pod placed by ``simulate``, a pod explained as if pending) are made on the
framework's NodeInfo snapshot, never here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from kschedctl.snapshot.model import KubeObject, Node, Pod
from kschedctl.snapshot.nodeorder import StartupOrder

#: Kinds the model knows, with whether they are namespaced.
KNOWN_KINDS: dict[str, bool] = {
    "Node": False,
    "Pod": True,
    "Namespace": False,
    "PersistentVolume": False,
    "PersistentVolumeClaim": True,
    "StorageClass": False,
    "CSINode": False,
    "CSIDriver": False,
    "CSIStorageCapacity": True,
    "PriorityClass": False,
    "Service": True,
    "ReplicaSet": True,
    "StatefulSet": True,
    "ReplicationController": True,
    "PodDisruptionBudget": True,
    "DeviceClass": False,
    "ResourceSlice": False,
    "ResourceClaim": True,
    # DRADeviceTaintRules (beta and off in v1.36, GA and on in v1.37): taints for the devices it selects
    "DeviceTaintRule": False,
    # scheduling.k8s.io v1alpha2 (v1.36), v1beta1 or v1alpha3 (v1.37), with GenericWorkload: the pod-group cycle reads PodGroups
    "PodGroup": True,
}

#: The PriorityClasses every API server creates at start-up (``scheduling.k8s.io``'s bootstrap
#: classes): a pod may name them although a snapshot written by hand does not hold them.
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


@dataclass
class Cluster:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    objects: dict[str, list[KubeObject]] = field(default_factory=lambda: defaultdict(list))
    notes: list[str] = field(default_factory=list)
    #: Pods dropped because they are Succeeded or Failed (the scheduler never sees them).
    terminal_pods: list[Pod] = field(default_factory=list)
    #: The pods are in the order an API server listed them (a live read): the scheduler's cache keeps it.
    #: Otherwise (files) the snapshot sorts them as a list of the same objects would come back.
    pods_listed: bool = False
    #: The order the scheduler's informers handed it the nodes (its node tree) and pending pods (its
    #: start-up queue): by name unless a run says otherwise (``--node-order``, ``snapshot.nodeorder``).
    startup: StartupOrder = field(default_factory=StartupOrder)

    def __post_init__(self) -> None:
        self._index: dict[str, dict[str, KubeObject]] = {}
        self._pods_by_key: dict[str, Pod] = {}
        self._nodes_by_name: dict[str, Node] = {}

    # building -------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """Add a node; one of the same name is replaced where it stands (the node order is kept)."""
        old = self._nodes_by_name.get(node.name)
        if old is not None:
            self.nodes[self.nodes.index(old)] = node
        else:
            self.nodes.append(node)
        self._nodes_by_name[node.name] = node

    def add_pod(self, pod: Pod) -> None:
        if pod.phase in ("Succeeded", "Failed"):
            self.terminal_pods.append(pod)
            return
        old = self._pods_by_key.get(pod.key)
        if old is not None:
            self.pods.remove(old)
        self.pods.append(pod)
        self._pods_by_key[pod.key] = pod

    def add_object(self, obj: KubeObject) -> None:
        idx = self._index.setdefault(obj.kind, {})
        if obj.key in idx:
            self.objects[obj.kind] = [o for o in self.objects[obj.kind] if o.key != obj.key]
        idx[obj.key] = obj
        self.objects[obj.kind].append(obj)

    def finish(self) -> None:
        """Apply defaulting that needs other objects (pod priority from PriorityClasses)."""
        for pod in self.pods:
            self.default_priority(pod)

    def default_priority(self, pod: Pod) -> None:
        """Priority admission: spec.priority and preemptionPolicy from the PriorityClass."""
        pc: KubeObject | None = None
        if pod.priority_class_name:
            pc = self.get("PriorityClass", "", pod.priority_class_name)
        else:
            for c in self.of_kind("PriorityClass"):
                if c.raw.get("globalDefault"):
                    pc = c
                    break
        if pod.priority is None:
            if pc is not None:
                pod.priority = int(pc.raw.get("value") or 0)
            else:
                pod.priority = SYSTEM_PRIORITY_CLASSES.get(pod.priority_class_name, 0)
        if not pod.preemption_policy:
            pol = pc.raw.get("preemptionPolicy") if pc is not None else None
            pod.preemption_policy = str(pol or "PreemptLowerPriority")

    def copy_with(
        self,
        *,
        nodes: Iterable[Node] = (),
        objects: Iterable[KubeObject] = (),
        drop_nodes: Iterable[str] = (),
        pods: Iterable[Pod] | None = None,
    ) -> Cluster:
        """A new Cluster holding this one's objects, with ``nodes`` in place of the nodes of the same
        name (where they stood; otherwise added at the end), the nodes named in ``drop_nodes`` left
        out, ``pods`` instead of this cluster's pods (when given) and ``objects`` added (same key:
        replaced).

        Nothing is deep-copied and this cluster stays untouched: the copy may be added to, while
        the objects it shares are only read (by the scheduling cycle)."""
        replacing = {n.name: n for n in nodes}
        dropped = set(drop_nodes)
        c = Cluster()
        for n in self.nodes:
            if n.name not in dropped:
                c.add_node(replacing.pop(n.name, n))
        for n in replacing.values():
            c.add_node(n)
        if pods is None:  # this cluster's pods hold no terminal pod and no key twice: copied as they are
            c.pods = list(self.pods)
            c._pods_by_key = dict(self._pods_by_key)
        else:
            for p in pods:
                c.add_pod(p)
        for objs in self.objects.values():
            for o in objs:
                c.add_object(o)
        for o in objects:
            c.add_object(o)
        c.notes = list(self.notes)
        c.terminal_pods = list(self.terminal_pods)
        c.pods_listed = self.pods_listed
        c.startup = self.startup
        return c

    # reading --------------------------------------------------------------------
    def of_kind(self, kind: str) -> list[KubeObject]:
        return self.objects.get(kind, [])

    def get(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        key = f"{namespace}/{name}" if namespace else name
        return self._index.get(kind, {}).get(key)

    def node(self, name: str) -> Node | None:
        return self._nodes_by_name.get(name)

    def pod(self, namespace: str, name: str) -> Pod | None:
        return self._pods_by_key.get(f"{namespace}/{name}")

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.get("Namespace", "", namespace)
        if ns is None:
            return None
        return ns.labels

    def pending_pods(self) -> list[Pod]:
        return [p for p in self.pods if not p.node_name]

    def bound_pods(self) -> Iterable[Pod]:
        return (p for p in self.pods if p.node_name)
