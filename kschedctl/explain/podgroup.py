"""v1.36's pod-group cycle: one cycle decides every queued pod of a PodGroup.

Upstream: ``pkg/scheduler/schedule_one_podgroup.go`` (v1.36.2). With ``GenericWorkload`` on, a pod
naming a PodGroup (``spec.schedulingGroup``) is not scheduled alone: the scheduler takes every
queued pod of its group out of the queue and schedules them together in one snapshot:

* the pods are taken by priority, then by the time each first entered the active queue
  (``framework.podgroups.cycle_order``, which also says which of them entered it together, in an
  order nobody outside the scheduler can know);
* the *default algorithm* tries each pod in turn, running the usual PreFilter..Score, assuming the
  feasible ones in the snapshot, then Reserve and Permit. GangScheduling's Permit makes a pod Wait
  until ``minCount`` pods of the group are scheduled; the group succeeds once a Permit succeeds, and
  every assumed pod is reverted at the end;
* with ``TopologyAwareWorkloadScheduling`` the *placement algorithm* asks the PlacementGenerate
  plugin for placements (subsets of the nodes), runs the default algorithm on each, and, when more
  than one worked, scores them with the PlacementScore plugins; the best total wins (a tie is
  broken at random upstream: here the first generated wins, and a note says so);
* ``submitPodGroupAlgorithmResult`` then gives each pod its verdict (``conclude``): the binding
  cycle when the group succeeded, its own FitError when it did not fit, the gang's Permit status or
  the wait for preemption otherwise.

``schedule_group`` runs the cycle for the pod popped from the queue and returns every pod's run;
``explain`` tells it from the pod under test's side (``kschedctl.explain.podgrouptrace``) and
``simulate`` gives each pod its placement. The cycle's own steps (one pod's scheduling, the
binding cycle) are the callables in ``Steps``, so this module does not import
``kschedctl.explain.cycle``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from kschedctl.explain.trace import PluginScores, Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.placement import best_placements, run_placement_generate, run_placement_score
from kschedctl.framework.podgroups import (
    CycleOrder,
    Placement,
    PodGroup,
    PodGroupAssignments,
    arrivals,
    cycle_order,
    find_pod_group,
    pod_group_cycle_on,
    pod_group_name,
)
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.kube.gates import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from kschedctl.snapshot.model import Pod

#: ``errPodGroupUnschedulable``.
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
WAITING_FOR_PREEMPTION = "pod group is waiting for preemption to complete"

# What the cycle concluded for one pod (``Verdict.kind``).
#: The group succeeded: the pod goes to its binding cycle.
SCHEDULED = "scheduled"
#: The pod fit, but the group did not succeed: it keeps its Permit status (the gang waited at Permit).
WAITED_AT_PERMIT = "waitedAtPermit"
#: The pod fit (or needed preemption) and the group waits for a preemption to complete.
WAITING_FOR_PREEMPTION_KIND = "waitingForPreemption"
#: The pod needed preemption and the group waits for it: nominated, its victims deleted.
PREEMPTING = "preempting"
#: The pod did not fit: it keeps its own FitError (and whatever its PostFilter decided).
UNSCHEDULABLE = "unschedulable"
#: The group failed before this pod was tried, or failed with an error.
GROUP_FAILED = "groupFailed"


def applies(fw: Framework, pod: Pod) -> bool:
    """Whether kube-scheduler would run a pod-group cycle for ``pod`` (GenericWorkload on, a group named)."""
    return pod_group_cycle_on(fw.features) and pod_group_name(pod) is not None


@dataclass(frozen=True)
class Steps:
    """What the pod-group cycle borrows from the single-pod cycle (``explain/cycle.py``)."""

    #: A fresh trace for one pod's run (its ``numAllNodes`` is the placement's).
    new_trace: Callable[[Pod], Trace]
    #: ``schedulingAlgorithm``: True when a host was selected (``trace.selected_node``).
    schedule: Callable[[Pod, CycleState, Trace], bool]
    #: The binding cycle on the host (PreBind, Bind, PostBind), recorded into the trace.
    bind: Callable[[CycleState, Pod, str, Trace], Trace]


@dataclass
class PodRun:
    """One pod's attempt in one placement (``algorithmResult``)."""

    pod: Pod
    trace: Trace
    state: CycleState
    status: Status
    host: str | None = None
    permit: Status | None = None
    requires_preemption: bool = False


@dataclass
class GroupResult:
    """``podGroupAlgorithmResult``: every pod's run, the group's status."""

    runs: list[PodRun] = field(default_factory=list)
    status: Status = field(default_factory=lambda: Status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE))
    waiting_on_preemption: bool = False

    @property
    def feasible(self) -> bool:
        return self.status.is_success() or self.waiting_on_preemption

    def run_of(self, pod: Pod) -> PodRun | None:
        return next((r for r in self.runs if r.pod.uid == pod.uid), None)


@dataclass
class Tried:
    """One placement the cycle tried, and what the default algorithm made of it there."""

    placement: Placement
    result: GroupResult


@dataclass
class GroupCycle:
    """One pod-group cycle: the group, its pods in the cycle's order, the result the cycle kept and
    every placement it tried (one without ``TopologyAwareWorkloadScheduling``)."""

    group: PodGroup
    order: CycleOrder
    result: GroupResult
    tried: list[Tried] = field(default_factory=list)

    @property
    def pods(self) -> list[Pod]:
        return self.order.pods


# --------------------------------------------------------------------------- the pods of the cycle


def group_of(fw: Framework, pod: Pod) -> PodGroup:
    """The PodGroup ``pod`` names (a stand-in without a policy when its object is missing)."""
    name = pod_group_name(pod)
    assert name is not None
    return find_pod_group(fw.cluster, pod.namespace, name) or PodGroup(pod.namespace, name)


def cycle_pods(fw: Framework, pod: Pod, group: PodGroup, queued: Callable[[Pod], bool] | None = None) -> CycleOrder:
    """The pods the cycle popped with ``pod`` schedules, in its order (``podGroupInfoForPod``): the group's
    pending pods the queue holds (``queued``: those still in this run's queue; None: every pending one),
    less those a PreEnqueue plugin holds back and those being deleted (``skipPodGroupPodSchedule``)."""

    def in_queue(p: Pod) -> bool:
        if p.meta.deletion_timestamp or (queued is not None and not queued(p)):
            return False
        return all(r.status.is_success() for r in fw.queueing.run_pre_enqueue(p))

    bound, arrived = arrivals(fw.snapshot, pod.namespace, group.name)
    return cycle_order(pod, group.gang_min_count, bound, arrived, in_queue)


def scheduler_name_error(pods: list[Pod]) -> str | None:
    """``frameworkForPodGroup``: every pod of the group must name the same scheduler."""
    names = [p.scheduler_name for p in pods]
    other = next((n for n in names if n != names[0]), None)
    if other is None:
        return None
    return f'all pods in a single pod group should have the same .spec.schedulerName set, got: "{other}" and "{names[0]}"'


def alike(pods: list[Pod]) -> bool:
    """Whether the scheduler cannot tell the pods apart (same spec, labels and priority: only names differ)."""
    def shape(p: Pod) -> str:
        spec = {k: v for k, v in (p.raw.get("spec") or {}).items() if k not in ("nodeName", "hostname")}
        return json.dumps([spec, p.labels, p.effective_priority], sort_keys=True, default=str)

    return len({shape(p) for p in pods}) <= 1


# --------------------------------------------------------------------------- the algorithms


def _pod_algorithm(fw: Framework, steps: Steps, pod: Pod, assumed: list[PodRun]) -> PodRun:
    """``podGroupPodSchedulingAlgorithm``: schedule, assume in the snapshot, Reserve, Permit."""
    state = CycleState()
    trace = steps.new_trace(pod)
    run = PodRun(pod, trace, state, Status())
    if not steps.schedule(pod, state, trace):
        nominated = trace.post_filter.nominated_node_name if trace.post_filter is not None else None
        if not nominated:
            run.status = Status.as_error(trace.error) if trace.error else Status(Code.UNSCHEDULABLE, trace.fit_error or "")
            return run
        run.requires_preemption = True  # later pods see it on its nominated node
        run.status = Status(Code.UNSCHEDULABLE, trace.fit_error or "")
        trace.selected_node = nominated
    host = trace.selected_node
    assert host is not None
    run.host = host
    fw.snapshot.assume(pod, host)
    fw.snapshot.pod_group_assumed[pod.uid] = pod
    st, trace.reserve = fw.binding.run_reserve(state, pod, host)
    if st.is_success():
        st, trace.permit = fw.binding.run_permit(state, pod, host)
        if st.is_success() or st.is_wait():
            run.permit = st
            assumed.append(run)
            return run
    _revert(fw, run)
    run.host, trace.selected_node = None, None
    run.requires_preemption = False  # the nomination is cleared (its victims were already asked to go)
    run.status = st if not st.is_rejected() else Status(st.code, f"0/1 nodes are available: {st.message()}.", plugin=st.plugin)
    if st.is_rejected() or st.code == Code.ERROR:
        trace.fit_error = run.status.message()
    return run


def _revert(fw: Framework, run: PodRun) -> None:
    """``unreserveAndForget``."""
    assert run.host is not None
    fw.binding.run_unreserve(run.state, run.pod, run.host)
    fw.snapshot.forget(run.pod, run.host)
    fw.snapshot.pod_group_assumed.pop(run.pod.uid, None)


def default_algorithm(fw: Framework, steps: Steps, pods: list[Pod]) -> GroupResult:
    """``podGroupSchedulingDefaultAlgorithm``: every pod in order; the snapshot is left as it was."""
    result = GroupResult()
    assumed: list[PodRun] = []
    needs_preemption = False
    try:
        for pod in pods:
            run = _pod_algorithm(fw, steps, pod, assumed)
            result.runs.append(run)
            if run.permit is None:
                if run.status.is_rejected():
                    continue
                result.status = Status.as_error(f"failed to schedule other pod from a pod group: {run.status.message()}")
                result.waiting_on_preemption = False
                break
            needs_preemption = needs_preemption or run.requires_preemption
            if run.permit.is_success():
                if needs_preemption:
                    result.status = Status(Code.UNSCHEDULABLE, f"{POD_GROUP_UNSCHEDULABLE}, {WAITING_FOR_PREEMPTION}")
                    result.waiting_on_preemption = True
                else:
                    result.status = Status()
    finally:
        for run in reversed(assumed):
            _revert(fw, run)
    return result


def placement_name(p: Placement) -> str:
    return p.name or f"<{len(p.nodes)} nodes>"


def placement_algorithm(
    fw: Framework, steps: Steps, pods: list[Pod], group: PodGroup, trace: Trace
) -> tuple[GroupResult, list[Tried]]:
    """``podGroupSchedulingPlacementAlgorithm``: generate placements, try each, score the feasible; what
    PlacementGenerate and PlacementScore did goes into ``trace``."""
    generators = fw.plugins.lists["placementGenerate"]
    all_nodes = list(fw.snapshot.node_info_list)
    placements, st = run_placement_generate(generators, group, all_nodes)
    if generators:
        trace.placement_generate.append(
            {
                "plugin": generators[0].name,
                "code": st.code.label,
                "reasons": list(st.reasons),
                "parent": f"<{len(all_nodes)} nodes>",
                "placements": [placement_name(p) for p in placements],
            }
        )
    if not st.is_success():
        return GroupResult(status=st), []
    tried: list[Tried] = []
    for placement in placements:
        fw.snapshot.assume_placement(placement.nodes)
        try:
            result = default_algorithm(fw, steps, pods)
        finally:
            fw.snapshot.forget_placement()
        tried.append(Tried(placement, result))
        if result.status.code == Code.ERROR:
            return result, tried
    feasible = [t for t in tried if t.result.feasible]
    if not feasible:
        first = tried[0].result
        first_msg = POD_GROUP_UNSCHEDULABLE if first.status.is_rejected() else first.status.message()
        first.status = Status(
            Code.UNSCHEDULABLE, f"0/{len(placements)} placements are available, first placement status: {first_msg}"
        )
        return first, tried
    if len(feasible) == 1:
        return feasible[0].result, tried
    return _best_placement(fw, group, feasible, trace), tried


def _best_placement(fw: Framework, group: PodGroup, feasible: list[Tried], trace: Trace) -> GroupResult:
    """``findBestPlacement``: PlacementScore over the feasible placements' proposed assignments."""
    assignments = [
        PodGroupAssignments(t.placement, [(r.pod, r.host) for r in t.result.runs if r.host]) for t in feasible
    ]
    plugins = fw.plugins.lists["placementScore"]
    columns: dict[str, tuple[list[int], list[int]]] = {}
    scores, st = run_placement_score(plugins, fw.plugins.placement_score_weights, group, assignments, columns)
    if not st.is_success():
        return GroupResult(status=st)
    names = [placement_name(t.placement) for t in feasible]
    for pl in plugins:
        raw, normalized = columns[pl.name]
        w = fw.plugins.placement_score_weights.get(pl.name, 1)
        trace.placement_score[pl.name] = PluginScores(
            w, dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True)),
            {n: s * w for n, s in zip(names, normalized, strict=True)},
        )
    best = best_placements(scores)
    if len(best) > 1:
        trace.notes.append(
            "placements " + ", ".join(placement_name(p) for p in best) + " tie on the best PlacementScore total: "
            f"kube-scheduler picks one at random; shown: {placement_name(best[0])}"
        )
    return next(t.result for t in feasible if t.placement is best[0])


def schedule_group(fw: Framework, pod: Pod, steps: Steps, trace: Trace, order: CycleOrder) -> GroupCycle:
    """``podGroupSchedulingAlgorithm`` for the pods of ``order`` (``pod`` popped first); PlacementGenerate
    and PlacementScore are recorded into ``trace`` (the popped pod's)."""
    group = group_of(fw, pod)
    if fw.features.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
        result, tried = placement_algorithm(fw, steps, order.pods, group, trace)
        return GroupCycle(group, order, result, tried)
    result = default_algorithm(fw, steps, order.pods)
    return GroupCycle(group, order, result, [Tried(Placement(list(fw.snapshot.node_info_list)), result)])


# --------------------------------------------------------------------------- each pod's verdict


@dataclass
class Verdict:
    """What ``submitPodGroupAlgorithmResult`` does with one pod (``kind``: one of the constants above)."""

    kind: str
    #: The node: where it binds (SCHEDULED), or where the failure handler nominates it (the group
    #: waits for a preemption: its own nominated node, or the node it fit on).
    node: str | None = None


def verdict_of(cycle: GroupCycle, pod: Pod) -> Verdict:
    """The pod's verdict from the cycle's result, as ``submitPodGroupAlgorithmResult`` decides it."""
    result = cycle.result
    run = result.run_of(pod)
    if result.status.code == Code.ERROR or run is None:
        return Verdict(GROUP_FAILED)
    fit = run.permit is not None and not run.requires_preemption
    if fit and result.status.is_success():
        return Verdict(SCHEDULED, run.host)
    if fit and result.waiting_on_preemption:
        return Verdict(WAITING_FOR_PREEMPTION_KIND, run.host)
    if fit or (run.requires_preemption and not result.waiting_on_preemption):
        return Verdict(WAITED_AT_PERMIT)
    if run.requires_preemption:
        return Verdict(PREEMPTING, run.host)
    return Verdict(UNSCHEDULABLE)


def conclude(cycle: GroupCycle, pod: Pod, trace: Trace, steps: Steps) -> Verdict:
    """Write the pod's verdict into ``trace`` (its run's, or the one ``explain`` merged): the binding
    cycle on its host, or the FitError the failure handler writes into its PodScheduled condition."""
    result = cycle.result
    run = result.run_of(pod)
    verdict = verdict_of(cycle, pod)
    if verdict.kind != SCHEDULED:
        trace.selected_node = None
    if verdict.kind == GROUP_FAILED:
        own = run.status if run is not None and run.status.code == Code.ERROR else result.status
        trace.fit_error = own.message()
        if own.code == Code.ERROR:
            trace.error = own.message()
        return verdict
    assert run is not None
    if verdict.kind == SCHEDULED:
        assert run.host is not None
        trace.notes.append(f"pod group scheduled: {pod.key} goes to its binding cycle on {run.host}")
        steps.bind(run.state, pod, run.host, trace)
    elif verdict.kind == WAITING_FOR_PREEMPTION_KIND:
        trace.fit_error = result.status.message()
    elif verdict.kind == WAITED_AT_PERMIT:
        assert run.permit is not None
        trace.fit_error = f"{POD_GROUP_UNSCHEDULABLE}, {run.permit.message()}"
    else:  # its own FitError (a preemption it asked for included)
        trace.fit_error = run.trace.fit_error or run.status.message()
    return verdict


@dataclass
class Member:
    """One pod of the cycle as ``simulate`` records it: its own trace with its verdict written in, and the
    CycleState of its run (what plugins reserved for it, for its binding), None when it was not tried."""

    pod: Pod
    trace: Trace
    verdict: Verdict
    state: CycleState | None = None


def member_traces(cycle: GroupCycle, steps: Steps) -> list[Member]:
    """Every pod of the cycle with its own trace (its run in the placement kept; a fresh one for a pod the
    cycle did not reach) and its verdict written into it, in the cycle's order."""
    out: list[Member] = []
    for pod in cycle.pods:
        run = cycle.result.run_of(pod)
        trace = run.trace if run is not None else steps.new_trace(pod)
        out.append(Member(pod, trace, conclude(cycle, pod, trace, steps), run.state if run is not None else None))
    return out
