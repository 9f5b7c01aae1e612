"""Pod groups (v1.36 alpha, v1.37 beta): the objects and per-group pod state the gang plugins read.

kube-scheduler v1.36 schedules the pods of a ``scheduling.k8s.io/v1alpha2`` PodGroup together
when ``GenericWorkload`` is on (v1.37: ``v1beta1`` or ``v1alpha3``; the fields read here, the gang
policy and the topology constraints, did not change): a pod names its group in ``spec.schedulingGroup.podGroupName``;
the scheduler cache keeps, per group, which of its pods are unscheduled, assumed or assigned
(``pkg/scheduler/backend/cache/podgroupstate.go``), and the pod-group cycle tries the group on
*placements*, subsets of the nodes (``fwk.Placement``), scoring the assignments it found
(``fwk.PodGroupAssignments``). This module holds those pieces as plain data; the plugins that
use them are ``gangscheduling``, ``topologyaware`` and ``podgrouppodscount``.

Not yet here: the pod-group cycle itself (``schedule_one_podgroup.go``); see the notes of the
v1.36 work for its plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.kube.gates import GENERIC_WORKLOAD
from kschedctl.kube.rules import POD_GROUP_CYCLE

if TYPE_CHECKING:
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
        return PodGroup(namespace, name, min_count, keys)


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


def pod_group_states(pods: Iterable[Pod]) -> dict[tuple[str, str], PodGroupState]:
    """The state of every group the pods belong to, keyed by (namespace, group name)."""
    out: dict[tuple[str, str], PodGroupState] = {}
    for p in pods:
        name = pod_group_name(p)
        if name is not None:
            out.setdefault((p.namespace, name), PodGroupState()).add(p)
    return out


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
