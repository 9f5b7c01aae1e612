"""The real scheduling loop over many pending pods: ``kschedctl simulate``.

kube-scheduler pops one pod at a time from its queue and runs ``ScheduleOne``; each placement is
*assumed* in its cache before the next cycle takes its snapshot. This module follows
``scheduler.go`` / ``schedule_one.go`` step by step, with one Framework per profile and one
framework Snapshot shared by the whole run (one method per step of the loop):

* ``SchedulingQueue``: pods come out in QueueSort order (PrioritySort: higher priority first, then
  earlier queued, then file order). Pods and the copies workloads expand into arrive as streams,
  each already in queue order, merged lazily: a workload's pods are created only when popped, so
  memory does not grow with the pods still waiting, and a run stops at ``max_pods`` attempts.
  The snapshot's own pending pods are in the queue first (``RunOptions.pending``): the scheduler's
  pod informer lists them when it starts (by namespace, then name, as the API server lists), so
  they were queued before any pod created afterwards;
* ``scheduling_cycle``: the explain cycle (``run_cycle``) with a fresh CycleState, the
  ``nextStartNodeIndex`` left by the previous cycles and the profile's OpportunisticBatching state
  (``kschedctl.framework.batch``: the next node of the previous pod's sorted scores, taken
  without scoring when it fits); the queue's cycle counter advances once per pod popped;
* ``assume``: the pod joins its NodeInfo and the lists plugins read (``Snapshot.assume``), leaves
  the nominator, and the objects plugins assumed for it (VolumeBinding's claim-to-PV bindings,
  DynamicResources' allocated claims) replace their originals in the run's Cluster before the
  next cycle, as the real loop waits for the binding to be seen;
* ``handle_scheduling_failure``: PostFilter's nominating info applied as upstream applies it.
  By default (``preemption="apply"``, what the cluster would do) the victims are deleted,
  lower-priority nominations on that node are cleared and the pod is nominated: later pods see the
  victims gone and count the nominated pod on its node when their priority is not higher. The pod
  is not retried (one attempt per pod, as in the reference loop); ``retry_nominated`` gives every
  nominated pod a second attempt after all pods had their first. ``preemption="report"`` changes
  nothing and only reports the would-be preemption.

Skipping identical copies: once a copy of a workload whose copies the scheduler cannot tell apart
(Deployment, ReplicaSet, non-indexed Job, a Pod template) does not fit and its failure changed
nothing, every later copy would fail the same way; they are counted, not scheduled one by one.
``max`` mode schedules the snapshot's pending pods first (as the real queue holds them; cluster-capacity
does so too, but counts them as copies), then places copies of one template until the first one does
not fit (a copy's preemption only reported); only the copies are counted.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cmp_to_key
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.cycle import run_cycle, tie_rule
from kschedctl.explain.trace import Trace
from kschedctl.framework.batch import OpportunisticBatch
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot, list_order
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import Resource
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import PodInfo
from kschedctl.kube.gates import OPPORTUNISTIC_BATCHING
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.snapshot.nodeorder import StartupOrder
from kschedctl.whatif.workloads import Manifests, PodFactory, Workload, extend_cluster

#: Attempts a run makes before it stops (``--max-pods``; 0: no cap).
DEFAULT_MAX_PODS = 10_000

APPLY = "apply"
REPORT = "report"


@dataclass
class RunOptions:
    """How the loop treats preemption, batching and long runs."""

    #: "apply": victims deleted and the pod nominated, as the cluster would; "report": nothing changes.
    preemption: str = APPLY
    #: After every pod had its attempt, give each pod preemption nominated a second one.
    retry_nominated: bool = False
    #: OpportunisticBatching (v1.35 beta, on by default): off as with ``--feature-gates OpportunisticBatching=false``.
    batching: bool = True
    #: Stop after this many attempts (0: no cap).
    max_pods: int = DEFAULT_MAX_PODS
    #: Count, rather than schedule, the remaining copies of a workload once one does not fit.
    skip_identical_failures: bool = True
    #: Schedule the snapshot's pending pods too (queued at start-up, before the pods of the run).
    pending: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "preemption": self.preemption,
            "retryNominated": self.retry_nominated,
            "batching": self.batching,
            "maxPods": self.max_pods,
            "pending": self.pending,
        }


@dataclass
class PodStream:
    """Pods already in queue order from one source: a Pod document, or the copies a workload's controller creates."""

    pods: Iterable[Pod]
    workload: str | None = None
    #: How many pods the stream yields (None: not known).
    count: int | None = None
    #: The copies are identical to the scheduler (same spec, labels and volumes; only names differ).
    identical: bool = False


@dataclass
class Preemption:
    """What DefaultPreemption decided for a pod that did not fit."""

    nominated_node: str
    victims: list[str]
    #: Whether the victims were deleted and the pod nominated (the default) or it was only reported.
    applied: bool

    def to_dict(self) -> dict[str, Any]:
        return {"nominatedNode": self.nominated_node, "victims": list(self.victims), "applied": self.applied}


@dataclass
class Placement:
    """One scheduling attempt of one pod."""

    order: int  # 1-based position in the order of attempts
    pod: str
    workload: str | None
    profile: str
    outcome: str  # scheduled | unschedulable | gated | error | ignored
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    #: Feasible nodes the cycle found (at most numFeasibleNodesToFind; 1 when the batch's hint fit).
    feasible: int = 0
    fit_error: str | None = None
    error: str | None = None
    preemption: Preemption | None = None
    #: 1, or 2 for the retry of a nominated pod.
    attempt: int = 1
    #: OpportunisticBatching's node hint placed the pod (no scoring).
    batched: bool = False
    #: A later pod's preemption deleted this (placed) pod.
    evicted_by: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Nodes the cycle's Filter pass processed (how far ``nextStartNodeIndex`` moved).
    processed_nodes: int = 0
    #: The pod was pending in the snapshot (queued at start-up), not one of the run's own pods.
    pending_at_start: bool = False
    #: Why another node order could have placed the pod elsewhere: "tie", "earlyStop" (``order_dependence``).
    order_dependent: list[str] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.outcome == "scheduled"

    @property
    def nominated_node_name(self) -> str | None:
        return self.preemption.nominated_node if self.preemption else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "pod": self.pod,
            "workload": self.workload,
            "profile": self.profile,
            "attempt": self.attempt,
            "outcome": self.outcome,
            "node": self.node,
            "score": self.score,
            "candidates": list(self.candidates),
            "feasibleNodes": self.feasible,
            "batched": self.batched,
            "fitError": self.fit_error,
            "nominatedNodeName": self.nominated_node_name,
            "victims": list(self.preemption.victims) if self.preemption else [],
            "error": self.error,
            "preemption": self.preemption.to_dict() if self.preemption else None,
            "evictedBy": self.evicted_by,
            "pendingAtStart": self.pending_at_start,
            "orderDependent": list(self.order_dependent),
            "notes": list(self.notes),
        }


@dataclass
class Skipped:
    """Copies of a workload not scheduled one by one: identical to one that did not fit."""

    workload: str | None
    count: int
    same_as: str

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "count": self.count, "sameAs": self.same_as}


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
    options: RunOptions = field(default_factory=RunOptions)
    parallelism: int = 16
    placements: list[Placement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    nodes: list[NodeChange] = field(default_factory=list)
    stop_reason: str = ""
    #: Pods the run did not reach because of ``max_pods``.
    capped: bool = False
    cycles: int = 0
    elapsed_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: Set when the run itself failed: the QueueSort plugin raised (the pods kept the order given).
    error: str | None = None
    #: The node and start-up queue order the run assumed (``--node-order``).
    startup: StartupOrder = field(default_factory=StartupOrder)

    def _counted(self) -> list[Placement]:
        """The attempts the summary counts: with ``--max`` the copies only, not the snapshot's pending pods."""
        if self.mode != "max":
            return self.placements
        return [p for p in self.placements if not p.pending_at_start]

    def _final(self) -> dict[str, Placement]:
        """Each counted pod's last attempt."""
        out: dict[str, Placement] = {}
        for p in self._counted():
            out[p.pod] = p
        return out

    @property
    def final_attempts(self) -> list[Placement]:
        """Each counted pod's last attempt, in the order of first attempts."""
        return list(self._final().values())

    @property
    def placed(self) -> list[Placement]:
        return [p for p in self._final().values() if p.placed]

    @property
    def not_placed(self) -> list[Placement]:
        return [p for p in self._final().values() if not p.placed]

    @property
    def not_tried(self) -> int:
        return sum(s.count for s in self.skipped)

    @property
    def first_failure(self) -> Placement | None:
        final = self._final()
        return next((p for p in self._counted() if not p.placed and final[p.pod] is p), None)

    @property
    def victims(self) -> list[str]:
        out: list[str] = []
        for p in self.placements:
            if p.preemption is not None and p.preemption.applied:
                out.extend(p.preemption.victims)
        return out

    @property
    def all_placed(self) -> bool:
        return not self.not_placed and not self.not_tried and not self.capped

    @property
    def pods_per_second(self) -> float:
        return len(self.placed) / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        final = self._final()
        return {
            "mode": self.mode,
            "numNodes": self.num_nodes,
            "preemption": self.options.preemption,
            "options": {**self.options.to_dict(), "parallelism": self.parallelism},
            "summary": {
                "pods": len(final) + self.not_tried,
                "placed": len(self.placed),
                "notPlaced": len(self.not_placed) + self.not_tried,
                "notTried": self.not_tried,
                "nominated": sum(1 for p in final.values() if not p.placed and p.preemption is not None),
                "victims": len(self.victims),
                "batched": sum(1 for p in self.placements if p.batched),
                "capped": self.capped,
                "stopReason": self.stop_reason,
            },
            "firstFailure": first.to_dict() if first else None,
            "placements": [p.to_dict() for p in self.placements],
            "skipped": [s.to_dict() for s in self.skipped],
            "nodes": [n.to_dict() for n in self.nodes],
            "timing": {
                "cycles": self.cycles,
                "elapsedSeconds": round(self.elapsed_seconds, 4),
                "podsPerSecond": round(self.pods_per_second, 1),
            },
            "notes": list(self.notes),
            "error": self.error,
            "nodeOrder": self.startup.to_dict(),
        }


# --------------------------------------------------------------------------- the queue


class SchedulingQueue:
    """Pops pods in QueueSort order from streams that are each in queue order (``activeQ``).

    With a QueueSort plugin that gives a sort key (PrioritySort) the streams are merged lazily;
    otherwise up to ``limit`` pods of each stream are read and sorted with the plugin's ``less``.
    """

    def __init__(
        self,
        streams: list[PodStream],
        key: Callable[[Pod], Any] | None,
        less: Callable[[Pod, Pod], bool],
        limit: int = 0,
    ) -> None:
        self.streams = streams
        self.popped = [0] * len(streams)
        self.dropped: set[int] = set()
        self._iters: list[Iterator[Pod]] = [iter(s.pods) for s in streams]
        self._key = key
        self._heap: list[tuple[Any, int]] = []
        self._heads: dict[int, Pod] = {}
        self._sorted: Iterator[tuple[Pod, int]] | None = None
        if key is not None:
            for i in range(len(streams)):
                self._advance(i)
        else:
            items: list[tuple[Pod, int]] = []
            for i, it in enumerate(self._iters):
                for n, pod in enumerate(it):
                    if limit and n >= limit:
                        break
                    items.append((pod, i))

            def cmp(a: tuple[Pod, int], b: tuple[Pod, int]) -> int:
                return -1 if less(a[0], b[0]) else (1 if less(b[0], a[0]) else 0)

            self._sorted = iter(sorted(items, key=cmp_to_key(cmp)))

    def _advance(self, i: int) -> None:
        assert self._key is not None
        pod = next(self._iters[i], None)
        if pod is not None:
            self._heads[i] = pod
            heapq.heappush(self._heap, (self._key(pod), i))

    def pop(self) -> tuple[Pod, int] | None:
        if self._sorted is not None:
            for pod, i in self._sorted:
                if i not in self.dropped:
                    self.popped[i] += 1
                    return pod, i
            return None
        while self._heap:
            _, i = heapq.heappop(self._heap)
            pod = self._heads.pop(i)
            if i in self.dropped:
                continue
            self._advance(i)
            self.popped[i] += 1
            return pod, i
        return None

    def drop(self, i: int) -> int:
        """Stop popping stream ``i``; how many of its pods were left (0 when not known)."""
        self.dropped.add(i)
        count = self.streams[i].count
        return max(0, count - self.popped[i]) if count is not None else 0

    def remaining(self) -> int | None:
        """Pods not popped yet, when every stream knows its count."""
        total = 0
        for i, s in enumerate(self.streams):
            if i in self.dropped:
                continue
            if s.count is None:
                return None
            total += max(0, s.count - self.popped[i])
        return total


# --------------------------------------------------------------------------- the loop


class Simulator:
    """One Snapshot and one Framework per profile, reused by every cycle of the run."""

    def __init__(
        self,
        cluster: Cluster,
        config: SchedulerConfig,
        registry: Registry | None = None,
        *,
        options: RunOptions | None = None,
        exclude_pod_uids: Iterable[str] = (),
        owns_cluster: bool = False,
    ) -> None:
        """``owns_cluster``: the cluster is the run's own (``PodFactory(private=True)``, which keeps adding the
        claims of pods it creates); otherwise it is copied before the run first writes to it."""
        if registry is None:
            from kschedctl.plugins import in_tree_registry

            registry = in_tree_registry()
        self.cluster = cluster
        self.config = config
        self.registry = registry
        self.options = options or RunOptions()
        self.excluded = set(exclude_pod_uids)
        self.snapshot = Snapshot(cluster, exclude_pod_uids=self.excluded)
        self.frameworks: dict[str, Framework] = {}
        self.batches: dict[str, OpportunisticBatch] = {}
        #: ``nextStartNodeIndex``.
        self.start_index = 0
        #: Scheduling cycles run.
        self.cycles = 0
        #: The queue's cycle counter: pods popped so far (OpportunisticBatching compares it).
        self.queue_cycle = 0
        self._before: dict[str, tuple[Resource, int]] = {}
        self._added: dict[str, list[str]] = {}
        self._removed: dict[str, list[str]] = {}
        #: Limits of the model met during the run, reported once each.
        self.notes: list[str] = []
        #: Unbound claims of placed pods (VolumeBinding would bind them at PreBind).
        self._unbound_claims: set[str] = set()
        #: Pods preemption nominated (still pending), for ``retry_nominated``.
        self.nominated: dict[str, tuple[Pod, str | None]] = {}
        #: The attempt that placed each pod still on its node (to mark it when preemption evicts it).
        self._placed: dict[str, Placement] = {}
        self._state = CycleState()
        self._own_cluster = owns_cluster
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
            # OpportunisticBatching exists from v1.35 (beta, on): an older version, or the gate off, never batches
            if self.options.batching and profile.features.enabled(OPPORTUNISTIC_BATCHING):
                self.batches[scheduler_name] = OpportunisticBatch(fw, has_extenders=bool(self.config.extenders))
        return fw

    def queue(self, streams: list[PodStream]) -> SchedulingQueue:
        """The scheduling queue over ``streams`` (the first profile's QueueSort plugin, as upstream).

        ``less`` has no error path upstream: a plugin that raises leaves the pairs it failed on
        unordered (the order given) and the run records its error."""
        fw = self.framework_for(self.config.profiles[0].scheduler_name)
        assert fw is not None
        key = getattr(fw.plugins.lists["queueSort"][0], "sort_key", None)
        queue = SchedulingQueue(streams, key if callable(key) else None, fw.queueing.queue_sort_less, self.options.max_pods)
        raised = [f for f in fw.calls.take_failures() if f.extension_point == "QueueSort"]
        if raised:
            self.queue_sort_error = f'running QueueSort plugin "{raised[0].plugin}": {raised[0].exception}'
        return queue

    def queue_order(self, pods: list[Pod]) -> list[Pod]:
        """The order the scheduling queue pops ``pods`` (QueueSort; ties keep the given order)."""
        q = self.queue([PodStream([p]) for p in pods])
        out: list[Pod] = []
        while (item := q.pop()) is not None:
            out.append(item[0])
        return out

    def queued_at_start(self) -> list[PodStream]:
        """The snapshot's pending pods, one stream each, as the informers' initial list queued them when the
        scheduler started: in the API server's list order (by namespace, then name; a live read's own order),
        before every pod created afterwards. Pods the run schedules itself (``exclude_pod_uids``) and pods being deleted (the
        scheduler skips them) are left out; gated pods and pods of no profile stay out of activeQ.
        Like the run's own pods, these Pod objects take the node and nomination the run gives them."""
        pending = self.cluster.pending_pods()
        for pod in pending:
            pod.queued_at_start = None
        listed = self.cluster.startup.queue(pending if self.cluster.pods_listed else list_order(pending))
        pods = [p for p in listed if p.uid not in self.excluded and p.meta.deletion_timestamp is None]
        for i, pod in enumerate(pods):
            pod.queued_at_start = i
        return [PodStream([pod], None, 1) for pod in pods]

    # -- ScheduleOne -----------------------------------------------------------------------------
    def schedule_one(self, pod: Pod, order: int, workload: str | None = None, attempt: int = 1) -> Placement:
        """One pod popped from the queue: its scheduling cycle, then assume (and bind) or the failure handling."""
        fw = self.framework_for(pod.scheduler_name)
        if fw is None:
            p = Placement(order, pod.key, workload, pod.scheduler_name, "ignored", attempt=attempt)
            p.notes.append(f'no profile has schedulerName "{pod.scheduler_name}": kube-scheduler ignores this pod')
            return p
        self._check_unbound_claims(pod)
        trace = self.scheduling_cycle(fw, pod)
        p = self._placement(trace, order, workload, attempt)
        if trace.schedulable:
            assert trace.selected_node is not None
            self.assume(fw, pod, trace.selected_node)
            self._placed[pod.key] = p
        elif not trace.gated:
            self.handle_scheduling_failure(pod, trace, p, workload)
        return p

    def scheduling_cycle(self, fw: Framework, pod: Pod) -> Trace:
        """``schedulingCycle``: a fresh CycleState, the node rotation and the profile's batch state."""
        self._state = CycleState()
        trace = run_cycle(
            fw,
            pod,
            self.config,
            start_index=self.start_index,
            state=self._state,
            batch=self.batches.get(fw.profile_name),
            cycle=self.queue_cycle + 1,
        )
        if trace.gated:  # rejected at PreEnqueue: never reaches activeQ, never popped
            return trace
        self.queue_cycle += 1
        self.cycles += 1
        n = self.snapshot.num_nodes()
        if trace.processed_nodes and n:
            self.start_index = (self.start_index + trace.processed_nodes) % n
        return trace

    @staticmethod
    def _placement(trace: Trace, order: int, workload: str | None, attempt: int) -> Placement:
        p = Placement(order, trace.pod, workload, trace.profile, trace.outcome, attempt=attempt)
        p.node = trace.selected_node if trace.schedulable else None
        p.score = trace.max_score if trace.schedulable and not trace.batched else None
        p.candidates = list(trace.candidates) if trace.schedulable else []
        p.feasible = len(trace.feasible_nodes)
        p.fit_error = trace.fit_error
        p.error = trace.error
        p.batched = trace.batched
        p.processed_nodes = trace.processed_nodes
        p.order_dependent = order_dependence(trace)
        return p

    # -- assume / bind ---------------------------------------------------------------------------
    def _touch(self, node: str) -> None:
        if node not in self._before:
            ni = self.snapshot.node_info_map[node]
            self._before[node] = (ni.requested.clone(), len(ni.pods))

    def assume(self, fw: Framework, pod: Pod, node: str) -> None:
        """``assume`` and the binding cycle: the pod on its node, out of the nominator, its objects applied."""
        self._touch(node)
        self.clear_nomination(pod)
        self.snapshot.assume(pod, node)
        pod.node_name = node
        self._added.setdefault(node, []).append(pod.key)
        self._unbound_claims.update(self._unbound_claims_of(pod))
        self._apply_assumed_objects(fw, pod, node)

    def _apply_assumed_objects(self, fw: Framework, pod: Pod, node: str) -> None:
        """Objects plugins assumed for the placed pod (VolumeBinding's PV bindings, DynamicResources'
        allocations) become part of the run's cluster before the next cycle, as the real scheduler's
        assume caches hold them until the informers see them written."""
        applied: list[Any] = []
        for pl in fw.plugins.by_name.values():
            assumed = getattr(pl, "assumed_objects", None)
            if assumed is None:
                continue
            for obj in assumed(self._state, pod, node):
                if not self._own_cluster:  # the caller's Cluster stays as it was
                    self.cluster = extend_cluster(self.cluster, [], always_copy=True)
                    self.snapshot.cluster = self.cluster
                    self._own_cluster = True
                self.cluster.add_object(obj)
                applied.append(obj)
        if not applied:
            return
        for f in self.frameworks.values():
            for pl in f.plugins.by_name.values():
                changed = getattr(pl, "objects_changed", None)
                if changed is not None:
                    changed(applied)
        if any(o.kind == "ResourceClaim" for o in applied):
            self._note(
                "devices allocated to placed pods' ResourceClaims are seen by later pods, as the scheduler's "
                "in-flight claim tracking does until the allocation is written"
            )

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

    def _check_unbound_claims(self, pod: Pod) -> None:
        if self._unbound_claims and any(k in self._unbound_claims for k in self._unbound_claims_of(pod)):
            self._note(
                "dynamic provisioning for placed pods (VolumeBinding) is not recorded: a claim that an earlier pod "
                "of the run would have had provisioned is still unbound for a later pod using it"
            )

    def _note(self, msg: str) -> None:
        if msg not in self.notes:
            self.notes.append(msg)

    # -- handleSchedulingFailure -----------------------------------------------------------------
    def handle_scheduling_failure(self, pod: Pod, trace: Trace, p: Placement, workload: str | None) -> None:
        """The nominating info of the failed cycle: a nomination (after the victims' deletion), a cleared
        nomination, or none kept as it was (PostFilter returned no result)."""
        pf = trace.post_filter
        if pf is None or trace.error:
            self.clear_nomination(pod)  # clearNominatedNode
            return
        if pf.nominated_node_name:
            apply = self.options.preemption == APPLY
            p.preemption = Preemption(pf.nominated_node_name, list(pf.victims), apply)
            if apply:
                self.preempt(pod, pf.nominated_node_name, pf.victims)
                self.nominate(pod, pf.nominated_node_name, workload)
        elif pf.clears_nomination:
            self.clear_nomination(pod)

    def preempt(self, pod: Pod, node: str, victims: list[str]) -> None:
        """``prepareCandidateAsync``: delete the victims (those not already terminating), then clear the
        nominations of lower-priority pods on that node."""
        ni = self.snapshot.node_info_map[node]
        on_node = {pi.pod.key: pi.pod for pi in ni.pods}
        to_delete = [on_node[k] for k in victims if k in on_node and on_node[k].meta.deletion_timestamp is None]
        if not to_delete:
            return
        self._touch(node)
        for victim in to_delete:
            if not self.snapshot.forget(victim, node):
                continue
            self._removed.setdefault(node, []).append(victim.key)
            earlier = self._placed.pop(victim.key, None)
            if earlier is not None:
                earlier.evicted_by = pod.key
            if victim.resource_claims:
                self._note(
                    "the ResourceClaims of deleted victims stay allocated: the resourceclaim controller of a real "
                    "cluster would release them after the pods are gone"
                )
        self._note(
            "preemption victims are deleted at once (no graceful termination); a real cluster's controllers "
            "would then act: a ReplicaSet or StatefulSet re-creates its deleted pods (new pending pods), and the "
            "disruption controller lowers PodDisruptionBudgets' disruptionsAllowed, which later preemptions read "
            "(the run keeps PDB status as in the snapshot)"
        )
        prio = pod.effective_priority
        for pi in list(self.snapshot.nominated_pods_for_node(node)):
            if pi.pod.effective_priority < prio:
                self.clear_nomination(pi.pod)

    def nominate(self, pod: Pod, node: str, workload: str | None) -> None:
        """``AddNominatedPod`` (mode Override): the pod is counted on ``node`` by later, lower-or-equal priority pods."""
        self.clear_nomination(pod)
        pod.nominated_node_name = node
        self.snapshot.nominated.setdefault(node, []).append(PodInfo.of(pod))
        self.nominated[pod.uid] = (pod, workload)

    def clear_nomination(self, pod: Pod) -> None:
        """``DeleteNominatedPodIfExists`` / a cleared ``nominatedNodeName``."""
        node = pod.nominated_node_name
        if not node:
            return
        pod.nominated_node_name = ""
        nominated = self.snapshot.nominated.get(node)
        if nominated:
            self.snapshot.nominated[node] = [pi for pi in nominated if pi.pod.uid != pod.uid]

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

    def finish(self, result: SimulationResult) -> None:
        """Counters, node changes and the notes on what the model assumed."""
        result.cycles = self.cycles
        result.nodes = self.node_changes()
        result.notes.extend(self.notes)
        batched = sum(1 for p in result.placements if p.batched)
        if batched:
            result.notes.append(
                f"{batched} pod(s) placed by OpportunisticBatching (v1.35 beta, on by default): the previous pod had the "
                "same signature, so the next node of its sorted scores was tried first and taken without scoring. "
                "Upstream drops a batch older than 500 ms (wall clock); this run assumes pods arrive back to back "
                "(the fast case), so a batch never expires"
            )
        order_note = order_dependence_note(result.placements)
        if order_note:
            result.notes.append(order_note)
        tied = any(p.placed and len(p.candidates) > 1 for p in result.placements)
        features = self.config.features
        if tied and tie_rule(features) == "random":
            result.notes.append(
                f"kube-scheduler {features.release} breaks a tie among the top totals at random: where several nodes "
                "share it (a placement's candidates), the real loop may pick another of them, and the rest of the run "
                "follows from that choice; this run takes the first, as v1.35 does"
            )
        if result.parallelism > 1 and (tied or batched):
            result.notes.append(
                f"parallelism {result.parallelism}: kube-scheduler filters nodes in parallel, so its feasible list, and "
                "with it the choice among nodes with equal totals (and the next node a batch offers), varies from run "
                "to run; this run follows node order from nextStartNodeIndex, as with parallelism 1"
            )
        pending = [p for p in self.cluster.pending_pods() if not p.scheduling_gates and p.uid not in self.excluded]
        if pending and not self.options.pending:
            result.notes.append(
                f"{len(pending)} pending pod(s) of the snapshot are not scheduled in this run (a real queue holds them "
                "too; they are left out on request); nominated ones are counted on their nominated node"
            )


# --------------------------------------------------------------------------- what the node order decided


TIE = "tie"
EARLY_STOP = "earlyStop"
#: How the note on placements the node order decided begins (``whatif.runs`` leaves it out of its notes).
ORDER_NOTE_START = "order-dependent:"


def order_dependence(trace: Trace) -> list[str]:
    """Why another node order (``--node-order``) could have given this placement another node: several
    nodes share the top total (``TIE``: the heap's pop follows the order), or the node search stopped
    at numFeasibleNodesToFind with nodes left unsearched (``EARLY_STOP``: the order decides which
    nodes were searched). A batch hint, and a pod that does not fit (every node searched), have neither."""
    if not trace.schedulable or trace.batched:
        return []
    out = [TIE] if len(trace.candidates) > 1 else []
    names = trace.pre_filter_node_names
    searchable = len(names) if names is not None else trace.num_all_nodes
    if 0 < trace.num_nodes_to_find <= len(trace.feasible_nodes) and trace.processed_nodes < searchable:
        out.append(EARLY_STOP)
    return out


def order_dependence_note(placements: list[Placement]) -> str | None:
    """One line on the placements the node order decided (None: none was)."""
    ties = sum(1 for p in placements if TIE in p.order_dependent)
    stops = [p for p in placements if EARLY_STOP in p.order_dependent]
    if not ties and not stops:
        return None
    n = sum(1 for p in placements if p.order_dependent)
    why = [f"{ties} by a tie among nodes with the top total"] if ties else []
    if stops:
        searched = min(p.processed_nodes for p in stops)
        why.append(f"{len(stops)} by a node search that stopped early (percentageOfNodesToScore; as few as {searched} "
                   "nodes searched)")
    return (f"{ORDER_NOTE_START} {n} placement(s) were one outcome among several, {' and '.join(why)}; the node "
            "order the scheduler was started with decides them (--node-order; --runs N shows the range)")


# --------------------------------------------------------------------------- runs


def simulate_streams(
    cluster: Cluster,
    config: SchedulerConfig,
    streams: list[PodStream],
    registry: Registry | None = None,
    *,
    options: RunOptions | None = None,
    exclude_pod_uids: Iterable[str] = (),
    owns_cluster: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
) -> SimulationResult:
    """Schedule the pods of ``streams`` one after another in queue order, each once (see the module doc);
    ``progress`` hears pods done / total."""
    opts = options or RunOptions()
    sim = Simulator(cluster, config, registry, options=opts, exclude_pod_uids=exclude_pod_uids, owns_cluster=owns_cluster)
    result = SimulationResult("pods", sim.snapshot.num_nodes(), opts, config.parallelism)
    if opts.pending:
        streams = sim.queued_at_start() + streams
    queue = sim.queue(streams)
    if sim.queue_sort_error:
        result.error = sim.queue_sort_error
        result.notes.append(f"{sim.queue_sort_error}: the pods could not be sorted and were taken in the order given")
    total = queue.remaining()
    if total is not None and opts.max_pods:
        total = min(total, opts.max_pods)
    t0 = time.perf_counter()
    order = 0
    result.stop_reason = "every pod was tried once, in queue order"
    while True:
        if opts.max_pods and order >= opts.max_pods:
            left = queue.remaining()
            if left != 0 and queue.pop() is not None:
                result.capped = True
                result.stop_reason = f"stopped after {opts.max_pods} pods (--max-pods)"
                more = f"{left:,} more pod(s)" if left else "more pods"
                result.notes.append(
                    f"{more} were not simulated: a run stops after {opts.max_pods} pods in queue order; "
                    "--max-pods N raises the cap (0: none)"
                )
            break
        item = queue.pop()
        if item is None:
            break
        pod, i = item
        order += 1
        stream = streams[i]
        p = sim.schedule_one(pod, order, stream.workload)
        p.pending_at_start = pod.queued_at_start is not None
        result.placements.append(p)
        if progress is not None:
            progress(order, total)
        if stream.identical and opts.skip_identical_failures and _failed_without_effect(p):
            _skip_rest(sim, queue, i, p, result)
    if opts.retry_nominated:
        _retry_nominated(sim, result, order)
    result.elapsed_seconds = time.perf_counter() - t0
    sim.finish(result)
    return result


def _failed_without_effect(p: Placement) -> bool:
    return p.outcome == "unschedulable" and not (p.preemption is not None and p.preemption.applied)


def _skip_rest(sim: Simulator, queue: SchedulingQueue, i: int, p: Placement, result: SimulationResult) -> None:
    """The stream's remaining copies would each fail as ``p`` did: count them, advance the counters as their
    cycles would (each processes the same nodes), and stop popping the stream."""
    rest = queue.drop(i)
    if not rest:
        return
    result.skipped.append(Skipped(p.workload, rest, p.pod))
    sim.queue_cycle += rest
    n = sim.snapshot.num_nodes()
    if n and p.processed_nodes:
        sim.start_index = (sim.start_index + rest * p.processed_nodes) % n


def _retry_nominated(sim: Simulator, result: SimulationResult, order: int) -> None:
    """Every pod preemption nominated, still pending, gets one more attempt, in queue order."""
    waiting = [pod for pod, _ in sim.nominated.values() if not pod.node_name]
    for pod in sim.queue_order(waiting):
        order += 1
        workload = sim.nominated[pod.uid][1]
        p = sim.schedule_one(pod, order, workload, attempt=2)
        p.pending_at_start = pod.queued_at_start is not None
        p.notes.append("second attempt of a nominated pod (--retry-nominated)")
        result.placements.append(p)
    if waiting:
        result.stop_reason = "every pod was tried once, in queue order, then each nominated pod once more"


def identical_copies(w: Workload) -> bool:
    """Whether the scheduler cannot tell the workload's pods apart (only names and uids differ)."""
    if w.kind in ("Deployment", "ReplicaSet"):
        return True
    if w.kind == "Job":
        return w.spec.get("completionMode") != "Indexed"
    return w.kind == "Pod" and w.as_template


def workload_streams(
    manifests: Manifests, factory: PodFactory, replicas: int | None = None
) -> tuple[list[PodStream], list[str]]:
    """One lazy stream per workload (``replicas`` overrides the counts and makes bare Pods templates),
    and the uids of the bare Pods (the snapshot must not count them where they already are)."""
    streams: list[PodStream] = []
    excluded: list[str] = []
    for w in manifests.workloads:
        if w.kind == "Pod" and replicas is not None:
            w.as_template = True
        if w.kind == "Pod" and not w.as_template:
            count = 1
            uid = (w.raw.get("metadata") or {}).get("uid")
            if uid:
                excluded.append(str(uid))
        else:
            count = replicas if replicas is not None else w.replicas
        label = None if w.kind == "Pod" and not w.as_template else w.display
        streams.append(PodStream(factory.pods(w, count), label, count, identical_copies(w)))
    return streams, excluded


def simulate_pods(
    cluster: Cluster,
    config: SchedulerConfig,
    pods: Iterable[tuple[Pod, str | None]],
    registry: Registry | None = None,
    *,
    options: RunOptions | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> SimulationResult:
    """Schedule ``pods`` (each with the workload it belongs to) one after another in queue order."""
    items = list(pods)
    streams = [PodStream([p], w, 1) for p, w in items]
    return simulate_streams(
        cluster, config, streams, registry, options=options, exclude_pod_uids=[p.uid for p, _ in items], progress=progress
    )


def _schedule_pending_first(sim: Simulator, result: SimulationResult) -> int:
    """``--max``: the snapshot's pending pods, in queue order, before any copy, as the real loop runs them
    (their preemption applied: victims gone, the pod nominated); how many attempts that took."""
    queue = sim.queue(sim.queued_at_start())
    copies_options, sim.options = sim.options, replace(sim.options, preemption=APPLY)
    n = 0
    while (item := queue.pop()) is not None:
        n += 1
        p = sim.schedule_one(item[0], n)
        p.pending_at_start = True
        result.placements.append(p)
    sim.options = copies_options
    tried = [p for p in result.placements if p.outcome not in ("gated", "ignored")]
    if tried:
        placed = sum(1 for p in tried if p.placed)
        result.notes.append(
            f"the snapshot's {len(tried)} pending pod(s) were scheduled first ({placed} placed), as kube-scheduler's "
            "queue holds them before any new copy; they are not counted as copies (--no-pending leaves them out)"
        )
    return n


def simulate_max(
    cluster: Cluster,
    config: SchedulerConfig,
    pods: Iterable[Pod],
    registry: Registry | None = None,
    *,
    workload: str | None = None,
    limit: int = 0,
    batching: bool = True,
    pending: bool = True,
    owns_cluster: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
) -> SimulationResult:
    """Place copies from ``pods`` until one does not fit (or ``limit`` are placed; 0: no limit);
    ``progress`` hears copies placed (and the limit, if any).

    A copy fits only in the room left: preemption is reported, not applied. With ``pending`` the
    snapshot's pending pods are scheduled first, as the real queue does; they
    are in ``placements`` but are not copies: neither counted nor the failure that ends the search."""
    opts = RunOptions(preemption=REPORT, batching=batching, max_pods=0, pending=pending)
    sim = Simulator(cluster, config, registry, options=opts, owns_cluster=owns_cluster)
    result = SimulationResult("max", sim.snapshot.num_nodes(), opts, config.parallelism)
    t0 = time.perf_counter()
    first = _schedule_pending_first(sim, result) if pending else 0
    result.stop_reason = "the template produced no more pods"
    for i, pod in enumerate(pods, 1):
        if limit and i > limit:  # every earlier copy was placed
            result.stop_reason = f"limit of {limit} pods reached"
            break
        p = sim.schedule_one(pod, first + i, workload)
        result.placements.append(p)
        if progress is not None:
            progress(i, limit or None)
        if not p.placed:
            result.stop_reason = "the first copy that does not fit"
            break
    result.elapsed_seconds = time.perf_counter() - t0
    sim.finish(result)
    return result
