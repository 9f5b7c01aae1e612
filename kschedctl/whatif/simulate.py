"""The real scheduling loop over many pending pods: ``kschedctl simulate``.

kube-scheduler pops one pod at a time from its queue and runs ``ScheduleOne``; each placement is
*assumed* in its cache before the next cycle takes its snapshot. This module follows
``scheduler.go`` / ``schedule_one.go`` step by step, with one Framework per profile and one
framework Snapshot shared by the whole run (one method per step of the loop):

* ``SchedulingQueue`` (``whatif.podqueue``): pods come out in QueueSort order (PrioritySort: higher
  priority first, then earlier queued, then file order). Pods and the copies workloads expand into
  arrive as streams, each already in queue order, merged lazily: a workload's pods are created only
  when popped, so memory does not grow with the pods still waiting, and a run stops at ``max_pods``
  attempts. The snapshot's own pending pods are in the queue first (``RunOptions.pending``): the
  scheduler's pod informer lists them when it starts (by namespace, then name, as the API server
  lists), so they were queued before any pod created afterwards;
* ``scheduling_cycle``: the explain cycle (``run_cycle``) with a fresh CycleState, the
  ``nextStartNodeIndex`` left by the previous cycles and the profile's OpportunisticBatching state
  (``kschedctl.framework.batch``: the next node of the previous pod's sorted scores, taken
  without scoring when it fits); the queue's cycle counter advances once per pod popped;
* ``assume`` (``whatif.runcache``): the pod joins its NodeInfo and the lists plugins read
  (``Snapshot.assume``), leaves the nominator, and the objects plugins assumed for it (VolumeBinding's
  claim-to-PV bindings, DynamicResources' allocated claims) replace their originals in the run's
  Cluster before the next cycle, as the real loop waits for the binding to be seen;
* ``handle_scheduling_failure`` (``whatif.preemption``): PostFilter's nominating info applied as
  upstream applies it. By default (``preemption="apply"``, what the cluster would do) the victims
  are deleted, lower-priority nominations on that node are cleared and the pod is nominated: later
  pods see the victims gone and count the nominated pod on its node when their priority is not
  higher. The pod is not retried (one attempt per pod, as in the reference loop);
  ``retry_nominated`` gives every nominated pod a second attempt after all pods had their first.
  ``preemption="report"`` changes nothing and only reports the would-be preemption.

What the run reports (each ``Placement``, the ``SimulationResult``) is in ``whatif.placements``.

Skipping identical copies: once a copy of a workload whose copies the scheduler cannot tell apart
(Deployment, ReplicaSet, non-indexed Job, a Pod template) does not fit and its failure changed
nothing, every later copy would fail the same way; they are counted, not scheduled one by one.
``max`` mode schedules the snapshot's pending pods first (as the real queue holds them; cluster-capacity
does so too, but counts them as copies), then places copies of one template until the first one does
not fit (a copy's preemption only reported); only the copies are counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain import podgroup
from kschedctl.explain.cycle import PodGroupSteps, run_cycle, run_pod_group_cycle
from kschedctl.explain.trace import Trace
from kschedctl.framework.batch import OpportunisticBatch
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.podgroups import pod_group_cycle_on, pod_group_name
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.kube.gates import OPPORTUNISTIC_BATCHING
from kschedctl.plugins.queuesort import queue_arrival
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.placements import (
    APPLY,
    IGNORED,
    REPORT,
    Placement,
    RunOptions,
    SimulationResult,
    Skipped,
    note_assumptions,
)
from kschedctl.whatif.podqueue import PodStream, SchedulingQueue, queued_at_start
from kschedctl.whatif.preemption import FailureHandler, Nominator
from kschedctl.whatif.runcache import RunCache
from kschedctl.whatif.workloads import Manifests, PodFactory, Workload

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
        self.config = config
        self.registry = registry
        self.options = options or RunOptions()
        self.excluded = set(exclude_pod_uids)
        self.snapshot = Snapshot(cluster, features=config.features, exclude_pod_uids=self.excluded)
        self.frameworks: dict[str, Framework] = {}
        self.batches: dict[str, OpportunisticBatch] = {}
        #: ``nextStartNodeIndex``.
        self.start_index = 0
        #: Scheduling cycles run.
        self.cycles = 0
        #: The queue's cycle counter: pods popped so far (OpportunisticBatching compares it).
        self.queue_cycle = 0
        self.nominator = Nominator(self.snapshot)
        self.cache = RunCache(self.snapshot, owns_cluster)
        self.failures = FailureHandler(self.nominator, self.cache)
        self._state = CycleState()
        #: The QueueSort plugin's error, as a Go plugin's would read, when its ``less`` raised.
        self.queue_sort_error: str | None = None
        #: v1.36's pod-group cycle: the pods of PodGroups still in the queue (by uid), with their stream, and
        #: the workload each belongs to.
        self.group_queue: dict[str, int] = {}
        self.group_workload: dict[str, str | None] = {}

    @property
    def cluster(self) -> Cluster:
        """The run's cluster: the one given, or its copy once the run wrote to it (``RunCache``)."""
        return self.cache.cluster

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
        """The snapshot's pending pods, one stream each, as the scheduler's queue took them when it started
        (``podqueue.queued_at_start``; the pods the run schedules itself left out)."""
        return queued_at_start(self.cluster, self.excluded)

    def enqueue_pod_groups(self, streams: list[PodStream]) -> None:
        """With v1.36's pod-group cycle on: create the pods of the streams that name a PodGroup now, as the
        scheduler has every pod of a group in its queue (its cache counts them; its pod-group cycle takes
        them out together), and remember where each waits. The pods created here join the snapshot's
        ``created_pods`` in creation order."""
        if not pod_group_cycle_on(self.config.features):
            return
        created: list[tuple[object, int, int, Pod]] = []
        for i, stream in enumerate(streams):
            if stream.pod_group and not isinstance(stream.pods, list):
                stream.pods = list(stream.pods)
            if not isinstance(stream.pods, list):
                continue
            for k, pod in enumerate(stream.pods):
                if pod_group_name(pod) is None:
                    continue
                self.group_queue[pod.uid] = i
                self.group_workload[pod.uid] = stream.workload
                if pod.queued_at_start is None:
                    created.append((queue_arrival(pod), i, k, pod))
        for *_, pod in sorted(created, key=lambda c: c[:3]):
            self.cluster.default_priority(pod)
            self.snapshot.created_pods[pod.uid] = pod

    # -- ScheduleOne -----------------------------------------------------------------------------
    def schedule_popped(
        self, pod: Pod, order: int, workload: str | None = None, attempt: int = 1, queue: SchedulingQueue | None = None
    ) -> list[Placement]:
        """One pod popped from the queue, and its placement; for a pod of a PodGroup (v1.36's pod-group
        cycle) the placements of every pod of the group the cycle took out of ``queue`` with it, the popped
        pod's first, then the others in the cycle's order (``order`` counts on)."""
        self.group_queue.pop(pod.uid, None)
        fw = self.framework_for(pod.scheduler_name)
        if fw is None or not podgroup.applies(fw, pod):
            placements = [self.schedule_one(pod, order, workload, attempt)]
            placements[0].pending_at_start = pod.queued_at_start is not None
            return placements
        return self._schedule_group(fw, pod, order, workload, attempt, queue)

    def _schedule_group(
        self, fw: Framework, pod: Pod, order: int, workload: str | None, attempt: int, queue: SchedulingQueue | None
    ) -> list[Placement]:
        """The pod-group cycle for ``pod`` and the group's pods still in the queue (one attempt each)."""
        steps = PodGroupSteps(fw, self.config, self.start_index, self.batches.get(fw.profile_name), self.queue_cycle + 1)
        trace, members = run_pod_group_cycle(fw, pod, self.config, lambda p: p.uid in self.group_queue, steps)
        if not members:  # gated at PreEnqueue: never popped
            return [Placement.of(trace, order, workload, attempt)]
        self.queue_cycle = steps.cycle
        self.cycles += len(members)
        self.start_index = steps.start_index
        members.sort(key=lambda m: m.pod.uid != pod.uid)  # the popped pod first
        placements: list[Placement] = []
        for k, m in enumerate(members):
            own = workload
            if m.pod.uid != pod.uid:
                i = self.group_queue.pop(m.pod.uid)
                if queue is not None:
                    queue.take(m.pod, i)
                own = self.group_workload.get(m.pod.uid)
            self.cache.check_unbound_claims(m.pod)
            p = Placement.of(m.trace, order + k, own, attempt)
            p.pending_at_start = m.pod.queued_at_start is not None
            self._submit_member(fw, m, p, own)
            placements.append(p)
        return placements

    def _submit_member(self, fw: Framework, m: podgroup.Member, p: Placement, workload: str | None) -> None:
        """``submitPodGroupAlgorithmResult`` for one pod: bind it, or hand its failure and nomination over."""
        kind, pod = m.verdict.kind, m.pod
        apply = self.options.preemption == APPLY
        if kind == podgroup.SCHEDULED:
            assert m.verdict.node is not None and m.state is not None
            self.nominator.clear(pod)
            self.cache.assume(fw, self.frameworks.values(), m.state, pod, m.verdict.node, p)
        elif kind == podgroup.WAITING_FOR_PREEMPTION_KIND:
            if apply and m.verdict.node:  # nominated where it fit, to wait for the group's preemption
                self.nominator.nominate(pod, m.verdict.node, workload)
        elif kind in (podgroup.PREEMPTING, podgroup.UNSCHEDULABLE):
            self.failures.handle(pod, m.trace, p, workload, apply=apply)
        else:  # the gang's Permit status, or the group failed: the nomination is cleared
            if kind == podgroup.WAITED_AT_PERMIT and m.trace.post_filter is not None and m.trace.post_filter.nominated_node_name:
                self.failures.handle(pod, m.trace, p, workload, apply=apply)  # its preemption already began
            self.nominator.clear(pod)

    def schedule_one(self, pod: Pod, order: int, workload: str | None = None, attempt: int = 1) -> Placement:
        """One pod popped from the queue: its scheduling cycle, then assume (and bind) or the failure handling."""
        fw = self.framework_for(pod.scheduler_name)
        if fw is None:
            p = Placement(order, pod.key, workload, pod.scheduler_name, IGNORED, attempt=attempt)
            p.notes.append(f'no profile has schedulerName "{pod.scheduler_name}": kube-scheduler ignores this pod')
            return p
        self.cache.check_unbound_claims(pod)
        trace = self.scheduling_cycle(fw, pod)
        p = Placement.of(trace, order, workload, attempt)
        if trace.schedulable:
            assert trace.selected_node is not None
            self.nominator.clear(pod)  # the pod leaves the nominator as it is assumed
            self.cache.assume(fw, self.frameworks.values(), self._state, pod, trace.selected_node, p)
        elif not trace.gated:
            self.failures.handle(pod, trace, p, workload, apply=self.options.preemption == APPLY)
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

    # -- the result -------------------------------------------------------------------------------
    def finish(self, result: SimulationResult) -> None:
        """Counters, node changes and the notes on what the model assumed."""
        result.cycles = self.cycles
        result.nodes = self.cache.ledger.changes()
        result.notes.extend(self.cache.notes)
        pending = [p for p in self.cluster.pending_pods() if not p.scheduling_gates and p.uid not in self.excluded]
        note_assumptions(result, self.config.features, len(pending) if not self.options.pending else 0)


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
    sim.enqueue_pod_groups(streams)
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
        placements = sim.schedule_popped(pod, order, stream.workload, queue=queue)
        p = placements[0]
        p.pending_at_start = pod.queued_at_start is not None
        result.placements.extend(placements)
        order += len(placements) - 1
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
    waiting = [pod for pod, _ in sim.nominator.nominated.values() if not pod.node_name]
    retried: set[str] = set()
    for pod in sim.queue_order(waiting):
        if pod.uid in retried:  # a pod-group cycle of an earlier retry took it
            continue
        order += 1
        workload = sim.nominator.nominated[pod.uid][1]
        sim.group_queue = {p.uid: 0 for p in waiting if p.uid not in retried and p.uid != pod.uid}
        sim.group_workload = {p.uid: sim.nominator.nominated[p.uid][1] for p in waiting}
        placements = sim.schedule_popped(pod, order, workload, attempt=2)
        for p in placements:
            p.notes.append("second attempt of a nominated pod (--retry-nominated)")
        retried.update(p.uid for p in waiting if p.key in {q.pod for q in placements})
        result.placements.extend(placements)
        order += len(placements) - 1
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
        names_group = isinstance(w.template_spec.get("schedulingGroup"), dict)
        streams.append(PodStream(factory.pods(w, count), label, count, identical_copies(w), names_group))
    return streams, excluded


def _schedule_pending_first(sim: Simulator, result: SimulationResult) -> int:
    """``--max``: the snapshot's pending pods, in queue order, before any copy, as the real loop runs them
    (their preemption applied: victims gone, the pod nominated); how many attempts that took."""
    streams = sim.queued_at_start()
    sim.enqueue_pod_groups(streams)
    queue = sim.queue(streams)
    copies_options, sim.options = sim.options, replace(sim.options, preemption=APPLY)
    n = 0
    while (item := queue.pop()) is not None:
        placements = sim.schedule_popped(item[0], n + 1, queue=queue)
        n += len(placements)
        result.placements.extend(placements)
    sim.options = copies_options
    tried = [p for p in result.placements if p.outcome not in ("gated", IGNORED)]
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
        p = sim.schedule_popped(pod, first + i, workload)[0]
        result.placements.append(p)
        if progress is not None:
            progress(i, limit or None)
        if not p.placed:
            result.stop_reason = "the first copy that does not fit"
            break
    result.elapsed_seconds = time.perf_counter() - t0
    sim.finish(result)
    return result
