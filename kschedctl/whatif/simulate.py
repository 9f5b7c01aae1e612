"""Successive scheduling cycles whose placements build on each other: ``kschedctl simulate``.

kube-scheduler schedules one pod per cycle, in queue order (PrioritySort: higher priority
first, then earlier queued), and *assumes* each placement in its cache before the next cycle
takes its snapshot. This module does the same with one Framework per profile and one
framework Snapshot shared by the whole run:

* every cycle is the ``explain`` cycle (``run_cycle``) with a fresh CycleState, so plugins
  carry nothing from one pod to the next except what the Snapshot holds;
* after a pod is placed, ``Snapshot.assume`` adds it to its NodeInfo (resources, ports, PVC
  references) and to the affinity lists, so resource fit, PodTopologySpread, InterPodAffinity
  and the volume plugins of later cycles see it;
* objects a plugin assumes for a placed pod (``assumed_objects``: VolumeBinding's claim-to-PV
  bindings) replace their originals in the run's Cluster before the next cycle, as the real
  scheduler's assume caches hold them, so no two claims of the run take the same PV;
* the filter pass starts where the previous cycle stopped (``nextStartNodeIndex``), as
  upstream rotates through the nodes;
* with preemption, a pod that does not fit and for which DefaultPreemption nominates a node
  has its victims deleted (``Snapshot.forget``), lower-priority nominations on that node
  cleared, and is scheduled again with ``status.nominatedNodeName`` set, which makes the next
  cycle try that node first, as the retried pod would (should it still not fit, it stays
  nominated and later pods see the node reserved for it). Without it, the would-be preemption
  is only reported.

Each pod gets one attempt (plus the retry after its preemption): pods that did not fit are
not re-queued when later events would make room, so with preemption the order of the result
is the order of the cycles. ``max`` mode places copies of one template until the first one
does not fit, like cluster-capacity.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.cycle import run_cycle
from kschedctl.explain.trace import Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import Resource
from kschedctl.framework.runtime import Framework
from kschedctl.framework.snapshot import Snapshot
from kschedctl.framework.types import PodInfo
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.workloads import extend_cluster


@dataclass
class Preemption:
    """What DefaultPreemption decided for a pod that did not fit."""

    nominated_node: str
    victims: list[str]
    #: Whether the victims were deleted and the pod retried (``--preemption``).
    applied: bool

    def to_dict(self) -> dict[str, Any]:
        return {"nominatedNode": self.nominated_node, "victims": list(self.victims), "applied": self.applied}


@dataclass
class Placement:
    """One pod's outcome in the run."""

    order: int  # 1-based position in the queue
    pod: str
    workload: str | None
    profile: str
    outcome: str  # scheduled | unschedulable | gated | error | ignored
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    #: Feasible nodes the cycle found (at most numFeasibleNodesToFind).
    feasible: int = 0
    fit_error: str | None = None
    error: str | None = None
    preemption: Preemption | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.outcome == "scheduled"

    def to_dict(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "pod": self.pod,
            "workload": self.workload,
            "profile": self.profile,
            "outcome": self.outcome,
            "node": self.node,
            "score": self.score,
            "candidates": list(self.candidates),
            "feasibleNodes": self.feasible,
            "fitError": self.fit_error,
            "error": self.error,
            "preemption": self.preemption.to_dict() if self.preemption else None,
            "notes": list(self.notes),
        }


@dataclass
class NodeChange:
    """What the run did to one node."""

    node: str
    added: list[str]
    removed: list[str]
    allocatable: dict[str, int]
    requested_before: dict[str, int]
    requested_after: dict[str, int]
    pods_before: int
    pods_after: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "added": list(self.added),
            "removed": list(self.removed),
            "allocatable": dict(self.allocatable),
            "requestedBefore": dict(self.requested_before),
            "requestedAfter": dict(self.requested_after),
            "podsBefore": self.pods_before,
            "podsAfter": self.pods_after,
        }


@dataclass
class SimulationResult:
    mode: str  # "pods" or "max"
    num_nodes: int
    preemption: bool
    placements: list[Placement] = field(default_factory=list)
    nodes: list[NodeChange] = field(default_factory=list)
    stop_reason: str = ""
    cycles: int = 0
    elapsed_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: Set when the run itself failed: the QueueSort plugin raised (the pods kept the order given).
    error: str | None = None

    @property
    def placed(self) -> list[Placement]:
        return [p for p in self.placements if p.placed]

    @property
    def not_placed(self) -> list[Placement]:
        return [p for p in self.placements if not p.placed]

    @property
    def first_failure(self) -> Placement | None:
        return next((p for p in self.placements if not p.placed), None)

    @property
    def victims(self) -> list[str]:
        out: list[str] = []
        for p in self.placements:
            if p.preemption is not None and p.preemption.applied:
                out.extend(p.preemption.victims)
        return out

    @property
    def pods_per_second(self) -> float:
        return len(self.placed) / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "mode": self.mode,
            "numNodes": self.num_nodes,
            "preemption": self.preemption,
            "summary": {
                "pods": len(self.placements),
                "placed": len(self.placed),
                "notPlaced": len(self.not_placed),
                "victims": len(self.victims),
                "stopReason": self.stop_reason,
            },
            "firstFailure": first.to_dict() if first else None,
            "placements": [p.to_dict() for p in self.placements],
            "nodes": [n.to_dict() for n in self.nodes],
            "timing": {
                "cycles": self.cycles,
                "elapsedSeconds": round(self.elapsed_seconds, 4),
                "podsPerSecond": round(self.pods_per_second, 1),
            },
            "notes": list(self.notes),
            "error": self.error,
        }


class Simulator:
    """One Snapshot and one Framework per profile, reused by every cycle of the run."""

    def __init__(
        self,
        cluster: Cluster,
        config: SchedulerConfig,
        registry: Registry | None = None,
        *,
        preemption: bool = False,
        exclude_pod_uids: Iterable[str] = (),
    ) -> None:
        if registry is None:
            from kschedctl.plugins import in_tree_registry

            registry = in_tree_registry()
        self.cluster = cluster
        self.config = config
        self.registry = registry
        self.preemption = preemption
        self.snapshot = Snapshot(cluster, exclude_pod_uids=exclude_pod_uids)
        self.frameworks: dict[str, Framework] = {}
        self.start_index = 0
        self.cycles = 0
        self._before: dict[str, tuple[Resource, int]] = {}
        self._added: dict[str, list[str]] = {}
        self._removed: dict[str, list[str]] = {}
        #: Limits of the model met during the run, reported once each.
        self.notes: list[str] = []
        #: Unbound claims of placed pods (VolumeBinding would bind them at PreBind).
        self._unbound_claims: set[str] = set()
        self._state = CycleState()
        self._own_cluster = False
        #: The QueueSort plugin's error, as a Go plugin's would read, when its ``less`` raised.
        self.queue_sort_error: str | None = None

    # -- frameworks and queue order ------------------------------------------------------------
    def framework_for(self, scheduler_name: str) -> Framework | None:
        fw = self.frameworks.get(scheduler_name)
        if fw is None:
            profile = self.config.profile_for(scheduler_name)
            if profile is None:
                return None
            fw = Framework(profile, self.registry, self.snapshot)
            self.frameworks[scheduler_name] = fw
        return fw

    def queue_order(self, pods: list[Pod]) -> list[Pod]:
        """The order the scheduling queue pops ``pods`` (QueueSort; ties keep the given order)."""
        fw = self.framework_for(self.config.profiles[0].scheduler_name)
        if fw is None or len(pods) < 2:
            return list(pods)

        def cmp(a: Pod, b: Pod) -> int:
            if fw.queue_sort_less(a, b):
                return -1
            if fw.queue_sort_less(b, a):
                return 1
            return 0

        ordered = sorted(pods, key=cmp_to_key(cmp))
        raised = [f for f in fw.take_failures() if f.extension_point == "QueueSort"]
        if raised:  # less() has no error path upstream; the pairs it failed on count as equal
            self.queue_sort_error = f'running QueueSort plugin "{raised[0].plugin}": {raised[0].exception}'
        return ordered

    # -- one pod ---------------------------------------------------------------------------------
    def place(self, pod: Pod, order: int, workload: str | None = None) -> Placement:
        """Schedule ``pod`` against everything placed so far; assume it when it fits."""
        fw = self.framework_for(pod.scheduler_name)
        if fw is None:
            p = Placement(order, pod.key, workload, pod.scheduler_name, "ignored")
            p.notes.append(f'no profile has schedulerName "{pod.scheduler_name}": kube-scheduler ignores this pod')
            return p
        if self._unbound_claims and any(k in self._unbound_claims for k in self._unbound_claims_of(pod)):
            self._note(
                "dynamic provisioning for placed pods (VolumeBinding) is not recorded: a claim that an earlier pod "
                "of the run would have had provisioned is still unbound for a later pod using it"
            )
        trace = self._cycle(fw, pod)
        p = self._placement(trace, order, workload)
        if not trace.schedulable and trace.post_filter is not None and trace.post_filter.nominated_node_name:
            node = trace.post_filter.nominated_node_name
            victims = list(trace.post_filter.victims)
            p.preemption = Preemption(node, victims, self.preemption)
            if self.preemption:
                self._preempt(pod, node, victims)
                pod.nominated_node_name = node
                retry = self._cycle(fw, pod)
                after = self._placement(retry, order, workload)
                after.preemption = p.preemption
                after.notes.append(
                    f"preempted {len(victims)} pod(s) on {node}, then scheduled again with nominatedNodeName {node}"
                )
                p = after
                trace = retry
                if not retry.schedulable:
                    # still nominated: the node stays reserved for it, as upstream's nominator keeps it
                    self.snapshot.nominated.setdefault(node, []).append(PodInfo.of(pod))
        if trace.schedulable:
            assert trace.selected_node is not None
            self._assume(pod, trace.selected_node)
            self._apply_assumed_objects(fw, pod, trace.selected_node)
        return p

    def _cycle(self, fw: Framework, pod: Pod) -> Trace:
        self._state = CycleState()
        trace = run_cycle(fw, pod, self.config, start_index=self.start_index, state=self._state)
        self.cycles += 1
        n = self.snapshot.num_nodes()
        if trace.processed_nodes and n:
            self.start_index = (self.start_index + trace.processed_nodes) % n
        return trace

    @staticmethod
    def _placement(trace: Trace, order: int, workload: str | None) -> Placement:
        p = Placement(order, trace.pod, workload, trace.profile, trace.outcome)
        p.node = trace.selected_node if trace.schedulable else None
        p.score = trace.max_score if trace.schedulable else None
        p.candidates = list(trace.candidates) if trace.schedulable else []
        p.feasible = len(trace.feasible_nodes)
        p.fit_error = trace.fit_error
        p.error = trace.error
        return p

    def _touch(self, node: str) -> None:
        if node not in self._before:
            ni = self.snapshot.node_info_map[node]
            self._before[node] = (ni.requested.clone(), len(ni.pods))

    def _assume(self, pod: Pod, node: str) -> None:
        self._touch(node)
        self.snapshot.assume(pod, node)
        pod.node_name = node
        self._added.setdefault(node, []).append(pod.key)
        if pod.resource_claims:
            self._note(
                "device allocations of placed pods (DynamicResources) are not recorded: later pods still see "
                "the devices as free"
            )
        self._unbound_claims.update(self._unbound_claims_of(pod))

    def _apply_assumed_objects(self, fw: Framework, pod: Pod, node: str) -> None:
        """Objects plugins assumed for the placed pod (e.g. VolumeBinding's PV bindings) become part
        of the run's cluster before the next cycle, as the real scheduler's assume caches hold them."""
        for pl in fw.plugins_map.values():
            assumed = getattr(pl, "assumed_objects", None)
            if assumed is None:
                continue
            for obj in assumed(self._state, pod, node):
                if not self._own_cluster:  # the caller's Cluster stays as it was
                    self.cluster = extend_cluster(self.cluster, [], always_copy=True)
                    self.snapshot.cluster = self.cluster
                    self._own_cluster = True
                self.cluster.add_object(obj)

    def _unbound_claims_of(self, pod: Pod) -> list[str]:
        out: list[str] = []
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if not isinstance(pvc, dict):
                continue
            claim = self.cluster.get("PersistentVolumeClaim", pod.namespace, str(pvc.get("claimName") or ""))
            if claim is not None and not claim.spec.get("volumeName"):
                out.append(claim.key)
        return out

    def _note(self, msg: str) -> None:
        if msg not in self.notes:
            self.notes.append(msg)

    def _preempt(self, pod: Pod, node: str, victims: list[str]) -> None:
        """Delete the victims from the nominated node and clear lower-priority nominations there."""
        ni = self.snapshot.node_info_map[node]
        on_node = {pi.pod.key: pi.pod for pi in ni.pods}
        self._touch(node)
        for key in victims:
            victim = on_node.get(key)
            if victim is None or not self.snapshot.forget(victim, node):
                continue
            self._removed.setdefault(node, []).append(key)
        nominated = self.snapshot.nominated.get(node)
        if nominated:
            prio = pod.effective_priority
            self.snapshot.nominated[node] = [pi for pi in nominated if pi.pod.effective_priority >= prio]

    # -- the result -------------------------------------------------------------------------------
    def node_changes(self) -> list[NodeChange]:
        out: list[NodeChange] = []
        for name in sorted(self._before):
            ni = self.snapshot.node_info_map[name]
            before, pods_before = self._before[name]
            out.append(
                NodeChange(
                    node=name,
                    added=list(self._added.get(name, [])),
                    removed=list(self._removed.get(name, [])),
                    allocatable=ni.allocatable.as_dict(),
                    requested_before=before.as_dict(),
                    requested_after=ni.requested.as_dict(),
                    pods_before=pods_before,
                    pods_after=len(ni.pods),
                )
            )
        return out


def simulate_pods(
    cluster: Cluster,
    config: SchedulerConfig,
    pods: list[tuple[Pod, str | None]],
    registry: Registry | None = None,
    *,
    preemption: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
) -> SimulationResult:
    """Schedule ``pods`` (each with the workload it belongs to) one after another in queue order
    (``progress`` hears pods done / total)."""
    sim = Simulator(cluster, config, registry, preemption=preemption, exclude_pod_uids=[p.uid for p, _ in pods])
    workload_of = {id(p): w for p, w in pods}
    result = SimulationResult("pods", sim.snapshot.num_nodes(), preemption)
    ordered = sim.queue_order([p for p, _ in pods])
    if sim.queue_sort_error:
        result.error = sim.queue_sort_error
        result.notes.append(f"{sim.queue_sort_error}: the pods could not be sorted and were taken in the order given")
    t0 = time.perf_counter()
    for i, pod in enumerate(ordered, 1):
        result.placements.append(sim.place(pod, i, workload_of.get(id(pod))))
        if progress is not None:
            progress(i, len(ordered))
    result.elapsed_seconds = time.perf_counter() - t0
    result.cycles = sim.cycles
    result.stop_reason = "every pod was tried once, in queue order"
    result.nodes = sim.node_changes()
    result.notes.extend(sim.notes)
    return result


def simulate_max(
    cluster: Cluster,
    config: SchedulerConfig,
    pods: Iterable[Pod],
    registry: Registry | None = None,
    *,
    workload: str | None = None,
    limit: int = 0,
    preemption: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
) -> SimulationResult:
    """Place copies from ``pods`` until one does not fit (or ``limit`` are placed; 0: no limit);
    ``progress`` hears copies placed (and the limit, if any)."""
    sim = Simulator(cluster, config, registry, preemption=preemption)
    result = SimulationResult("max", sim.snapshot.num_nodes(), preemption)
    t0 = time.perf_counter()
    result.stop_reason = "the template produced no more pods"
    for i, pod in enumerate(pods, 1):
        if limit and i > limit:  # every earlier copy was placed
            result.stop_reason = f"limit of {limit} pods reached"
            break
        p = sim.place(pod, i, workload)
        result.placements.append(p)
        if progress is not None:
            progress(i, limit or None)
        if not p.placed:
            result.stop_reason = "the first copy that does not fit"
            break
    result.elapsed_seconds = time.perf_counter() - t0
    result.cycles = sim.cycles
    result.nodes = sim.node_changes()
    result.notes.extend(sim.notes)
    return result
