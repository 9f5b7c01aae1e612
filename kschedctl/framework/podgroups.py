"""Pod groups (v1.36 alpha, v1.37 beta): the objects and per-group pod state the gang plugins read.

kube-scheduler v1.36 schedules the pods of a ``scheduling.k8s.io/v1alpha2`` PodGroup together
when ``GenericWorkload`` is on (v1.37: ``v1beta1`` or ``v1alpha3``; the fields read here, the gang
policy and the topology constraints, did not change): a pod names its group in ``spec.schedulingGroup.podGroupName``;
the scheduler cache keeps, per group, which of its pods are unscheduled, assumed or assigned
(``pkg/scheduler/backend/cache/podgroupstate.go``), and the pod-group cycle tries the group on
*placements*, subsets of the nodes (``fwk.Placement``), scoring the assignments it found
(``fwk.PodGroupAssignments``). This module holds those pieces as plain data; the plugins that
use them are ``gangscheduling``, ``topologyaware`` and ``podgrouppodscount``.

``group_state`` is the cache's view of one group that every plugin reads: the cluster's pods, the
pods created after the snapshot was taken that the scheduler knows (``Snapshot.created_pods``: a
simulation's own pods, the other pods of a file ``explain`` places) and, during a pod-group
cycle, the pods it assumed. ``cycle_order`` is the order in which the cycle takes a group's
queued pods (``podGroupInfoForPod``: priority, then the time each first entered the active queue),
and which of them entered it together, in an order nobody outside the scheduler can know. The
cycle itself is ``kschedctl.explain.podgroup``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.kube.gates import GENERIC_WORKLOAD
from kschedctl.kube.rules import POD_GROUP_CYCLE

if TYPE_CHECKING:
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.types import NodeInfo
    from kschedctl.kube.features import Features
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod

KIND = "PodGroup"


def pod_group_cycle_on(features: Features) -> bool:
    """Whether kube-scheduler runs pod-group cycles: its version has them and GenericWorkload is on."""
    return features.follows(POD_GROUP_CYCLE) and features.enabled(GENERIC_WORKLOAD)


def pod_group_name(pod: Pod) -> str | None:
    """``spec.schedulingGroup.podGroupName`` of a pod, None when it belongs to no group."""
    spec = pod.raw.get("spec")
    group = spec.get("schedulingGroup") if isinstance(spec, dict) else None
    name = group.get("podGroupName") if isinstance(group, dict) else None
    return str(name) if name else None


@dataclass(frozen=True)
class PodGroup:
    """What the scheduler reads of a PodGroup object."""

    namespace: str
    name: str
    #: ``spec.schedulingPolicy.gang.minCount``; None for a basic (non-gang) policy.
    gang_min_count: int | None = None
    #: ``spec.schedulingConstraints.topology[].key`` in order.
    topology_keys: tuple[str, ...] = ()
    #: ``spec.schedulingConstraints`` is set (DefaultPreemption asks, whatever it holds).
    constrained: bool = field(default=False, compare=False)

    @staticmethod
    def parse(raw: dict[str, Any], namespace: str, name: str) -> PodGroup:
        spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        policy = spec.get("schedulingPolicy") if isinstance(spec.get("schedulingPolicy"), dict) else {}
        gang = policy.get("gang") if isinstance(policy, dict) else None
        min_count = int(gang.get("minCount") or 0) if isinstance(gang, dict) else None
        constraints = spec.get("schedulingConstraints")
        topology = constraints.get("topology") if isinstance(constraints, dict) else None
        keys = tuple(str(t.get("key", "")) for t in topology if isinstance(t, dict)) if isinstance(topology, list) else ()
        return PodGroup(namespace, name, min_count, keys, constrained=constraints is not None)


def find_pod_group(cluster: Cluster, namespace: str, name: str) -> PodGroup | None:
    """The PodGroup object of that namespace and name in the cluster (the scheduler's lister)."""
    for obj in cluster.objects.get(KIND, ()):
        if obj.namespace == namespace and obj.name == name:
            return PodGroup.parse(obj.raw, namespace, name)
    return None


@dataclass
class PodGroupState:
    """One group's pods as the scheduler cache tracks them (``podGroupStateData``)."""

    all_pods: dict[str, Pod] = field(default_factory=dict)
    unscheduled: set[str] = field(default_factory=set)
    assumed: dict[str, Pod] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)

    def add(self, pod: Pod) -> None:
        self.all_pods[pod.uid] = pod
        (self.assigned if pod.node_name else self.unscheduled).add(pod.uid)

    def assume(self, pod: Pod) -> None:
        """The pod is assumed on a node (in the snapshot during a pod-group cycle)."""
        stored = self.all_pods.get(pod.uid)
        if stored is None:
            return
        if stored.node_name:
            self.assigned.add(pod.uid)
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.discard(pod.uid)

    def forget(self, pod: Pod) -> None:
        stored = self.all_pods.get(pod.uid)
        if stored is None:
            return
        self.assumed.pop(pod.uid, None)
        (self.assigned if stored.node_name else self.unscheduled).add(pod.uid)

    def all_pods_count(self) -> int:
        return len(self.all_pods)

    def scheduled_pods(self) -> list[Pod]:
        """Assigned pods, then assumed ones."""
        return [self.all_pods[u] for u in self.assigned] + list(self.assumed.values())

    def scheduled_pods_count(self) -> int:
        return len(self.assigned) + len(self.assumed)


@dataclass
class Placement:
    """A set of nodes a pod group is tried on (``fwk.Placement``); the first has no name."""

    nodes: list[NodeInfo]
    name: str = ""


@dataclass
class PodGroupAssignments:
    """What one placement gave: the placement and the (pod, node name) each placed pod got."""

    placement: Placement
    proposed: list[tuple[Pod, str]] = field(default_factory=list)


# --------------------------------------------------------------------------- the cache's view of a group


def _in_group(pod: Pod, namespace: str, group: str) -> bool:
    return pod.namespace == namespace and pod_group_name(pod) == group


def known_pods(snapshot: Snapshot, namespace: str, group: str) -> list[Pod]:
    """The group's pods the scheduler's cache knows: the cluster's, then the pods created after it
    (``Snapshot.created_pods``, which stand for the cluster's pod of the same uid). A bound pod the
    snapshot leaves out (``Snapshot.excluded``: its placement removed, as when it is explained as if
    pending) is not counted where it is bound."""
    created = snapshot.created_pods
    out = [
        p for p in snapshot.cluster.pods
        if _in_group(p, namespace, group) and p.uid not in created and not (p.node_name and p.uid in snapshot.excluded)
    ]
    out.extend(p for p in created.values() if _in_group(p, namespace, group))
    return out


def group_state(snapshot: Snapshot, namespace: str, group: str, pod: Pod | None = None) -> PodGroupState:
    """One group's state as plugins read it (``PodGroupStates().Get``): the pods the cache knows,
    ``pod`` itself (the pod in its cycle, which the cache has since it was created), and the
    pods a pod-group cycle assumed in the snapshot so far (``Snapshot.pod_group_assumed``)."""
    state = PodGroupState()
    for p in known_pods(snapshot, namespace, group):
        state.add(p)
    if pod is not None and pod.uid not in state.all_pods:
        state.add(pod)
    for p in snapshot.pod_group_assumed.values():
        if _in_group(p, namespace, group):
            if p.uid not in state.all_pods:
                state.add(p)
            state.assume(p)
    return state


def arrivals(snapshot: Snapshot, namespace: str, group: str) -> tuple[int, list[Pod]]:
    """How many of the group's pods the cache has bound, and its pending pods in the order they reached
    the scheduling queue: the cluster's as the informers' initial list hands them over (by namespace
    and name, or the order a live list came in; ``--node-order random`` shuffles it), then the pods
    created after the snapshot in creation order."""
    from kschedctl.framework.nodeinfos import list_order

    cluster = snapshot.cluster
    known = known_pods(snapshot, namespace, group)
    created = set(snapshot.created_pods)
    listed = [p for p in known if not p.node_name and p.uid not in created]
    listed = cluster.startup.queue(listed if cluster.pods_listed else list_order(listed))
    later = [p for p in known if p.uid in created and not p.node_name]
    bound = sum(1 for p in known if p.node_name)
    return bound, listed + later


@dataclass
class CycleOrder:
    """The pods one pod-group cycle schedules, in the order it takes them (``podGroupInfoForPod``)."""

    pods: list[Pod]
    #: Sets of pods (two or more, of equal priority) that entered the active queue at once: the
    #: arrival of another pod of the group released them from GangScheduling's PreEnqueue, and the
    #: scheduler stamps their first attempt one by one in the order of a Go map. Their order in
    #: ``pods`` (their arrival order) is one of several the real scheduler may take.
    together: list[list[Pod]] = field(default_factory=list)


def cycle_order(
    pod: Pod, min_count: int | None, bound: int, arrived: list[Pod], queued: Callable[[Pod], bool]
) -> CycleOrder:
    """The order in which the cycle popped with ``pod`` takes the group's queued pods: higher priority
    first, then the time each first entered the active queue.

    A pod that passes GangScheduling's PreEnqueue when it arrives enters the queue then. Before the
    group has ``min_count`` pods (``bound`` already bound, then ``arrived`` in arrival order), the
    arriving pods are held at PreEnqueue; the one that completes the count enters the queue on its own
    and its arrival moves the held ones in right after it, together. ``queued``: whether a pod of
    ``arrived`` is in the queue for this cycle (not held by another plugin, not attempted already);
    ``pod`` always is. A basic group (``min_count`` None) holds no pod back."""
    if all(p.uid != pod.uid for p in arrived):  # not among the arrivals (a bound pod explained as pending): it came last
        arrived = [*arrived, pod]
    release = None
    if min_count is not None:
        release = next((i for i in range(len(arrived)) if bound + i + 1 >= min_count), None)
    rank: dict[str, tuple[int, int]] = {}
    for i, p in enumerate(arrived):
        held = release is not None and i < release
        rank[p.uid] = (release, 1) if held and release is not None else (i, 0)
    members = [p for p in arrived if p.uid == pod.uid or queued(p)]
    members.sort(key=lambda p: (-p.effective_priority, rank[p.uid]))
    together: dict[int, list[Pod]] = {}
    for p in members:
        if rank[p.uid][1]:
            together.setdefault(p.effective_priority, []).append(p)
    return CycleOrder(members, [ps for ps in together.values() if len(ps) > 1])
