"""v1.36's pod-group cycle, as ``explain`` runs it for a pod that belongs to a PodGroup.

Upstream: ``pkg/scheduler/schedule_one_podgroup.go`` (v1.36.2). With ``GenericWorkload`` on, a pod
naming a PodGroup (``spec.schedulingGroup``) is not scheduled alone: the scheduler takes every
unscheduled pod of its group out of the queue and schedules them together in one snapshot:

* the *default algorithm* tries each pod in turn (priority first; the pod popped first leads),
  running the usual PreFilter..Score, assuming the feasible ones in the snapshot, then Reserve and
  Permit. GangScheduling's Permit makes a pod Wait until ``minCount`` pods of the group are
  scheduled; the group succeeds once a Permit succeeds, and every assumed pod is reverted at the end;
* with ``TopologyAwareWorkloadScheduling`` the *placement algorithm* asks the PlacementGenerate
  plugin for placements (subsets of the nodes), runs the default algorithm on each, and, when more
  than one worked, scores them with the PlacementScore plugins; the best total wins (a tie is
  broken at random upstream: here the first generated wins, and a note says so).

The trace of the pod under test records it as the v1.36 reference does: ``preFilter``, ``reserve``
and ``permit`` list every run (one per placement tried), ``filter`` and ``score`` keep the last
run per node, ``placementGenerate`` / ``placementScore`` what those extension points did; the
cycle's own steps (one pod's scheduling, the binding cycle) are the callables in ``Steps``, so this
module does not import ``kschedctl.explain.cycle``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.explain.trace import PluginScores, Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.placement import best_placements, run_placement_generate, run_placement_score
from kschedctl.framework.podgroups import (
    Placement,
    PodGroup,
    PodGroupAssignments,
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


def _members(fw: Framework, pod: Pod, group: str) -> list[Pod]:
    """The pods the cycle schedules: ``pod`` first, then the group's other unscheduled pods the queue
    holds (not gated at PreEnqueue, not being deleted), higher priority first (``podGroupInfoForPod``)."""
    others = [
        p
        for p in fw.cluster.pending_pods()
        if p.uid != pod.uid and p.namespace == pod.namespace and pod_group_name(p) == group and not p.meta.deletion_timestamp
    ]
    queued = [p for p in others if all(r.status.is_success() for r in fw.queueing.run_pre_enqueue(p))]
    queued.sort(key=lambda p: (-(p.priority or 0), p.meta.creation_timestamp or "", p.name))
    # the pod under test was popped first: among equal priorities its initial attempt is the earliest
    ordered = [p for p in queued if (p.priority or 0) > (pod.priority or 0)]
    return ordered + [pod] + [p for p in queued if p not in ordered]


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
    run.status = st if not st.is_rejected() else Status(st.code, f"0/1 nodes are available: {st.message()}.", plugin=st.plugin)
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


def _placement_name(p: Placement) -> str:
    return p.name or f"<{len(p.nodes)} nodes>"


@dataclass
class _Tried:
    placement: Placement
    result: GroupResult


def placement_algorithm(fw: Framework, steps: Steps, pods: list[Pod], group: PodGroup, trace: Trace) -> tuple[GroupResult, list[_Tried]]:
    """``podGroupSchedulingPlacementAlgorithm``: generate placements, try each, score the feasible."""
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
                "placements": [_placement_name(p) for p in placements],
            }
        )
    if not st.is_success():
        return GroupResult(status=st), []
    tried: list[_Tried] = []
    for placement in placements:
        fw.snapshot.assume_placement(placement.nodes)
        try:
            result = default_algorithm(fw, steps, pods)
        finally:
            fw.snapshot.forget_placement()
        tried.append(_Tried(placement, result))
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


def _best_placement(fw: Framework, group: PodGroup, feasible: list[_Tried], trace: Trace) -> GroupResult:
    """``findBestPlacement``: PlacementScore over the feasible placements' proposed assignments."""
    assignments = [
        PodGroupAssignments(t.placement, [(r.pod, r.host) for r in t.result.runs if r.host]) for t in feasible
    ]
    plugins = fw.plugins.lists["placementScore"]
    columns: dict[str, tuple[list[int], list[int]]] = {}
    scores, st = run_placement_score(plugins, fw.plugins.placement_score_weights, group, assignments, columns)
    if not st.is_success():
        return GroupResult(status=st)
    names = [_placement_name(t.placement) for t in feasible]
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
            "placements " + ", ".join(_placement_name(p) for p in best) + " tie on the best PlacementScore total: "
            f"kube-scheduler picks one at random; shown: {_placement_name(best[0])}"
        )
    return next(t.result for t in feasible if t.placement is best[0])


def _merge_run(trace: Trace, run: Trace) -> None:
    """Add one run of the pod under test to its trace, as the reference records repeated runs."""
    trace.pre_filter.extend(run.pre_filter)
    trace.reserve.extend(run.reserve)
    trace.permit.extend(run.permit)
    verdicts = trace.filter
    verdicts.update(run.filter)
    trace.filter = verdicts
    for plugin, ps in run.score.items():
        old = trace.score.get(plugin)
        if old is None:
            trace.score[plugin] = PluginScores(ps.weight, dict(ps.raw), dict(ps.normalized), dict(ps.weighted))
        else:
            old.raw.update(ps.raw)
            old.normalized.update(ps.normalized)
            old.weighted.update(ps.weighted)
    trace.totals.update(run.totals)
    trace.pre_score = list(run.pre_score)
    trace.filter_plugins, trace.skipped_filter_plugins = run.filter_plugins, run.skipped_filter_plugins
    trace.extender_calls.extend(run.extender_calls)


def _adopt_verdict(trace: Trace, run: Trace) -> None:
    """The pod's final numbers are those of its run in the chosen placement."""
    trace.feasible_nodes = list(run.feasible_nodes)
    trace.candidates, trace.max_score = list(run.candidates), run.max_score
    trace.selected_node, trace.post_filter = run.selected_node, run.post_filter
    trace.pre_filter_node_names = run.pre_filter_node_names
    trace.num_all_nodes, trace.num_nodes_to_find = run.num_all_nodes, run.num_nodes_to_find
    trace.evaluated_order, trace.tie_break = list(run.evaluated_order), run.tie_break


def _gang_story(fw: Framework, group: PodGroup, pods: list[Pod], result: GroupResult) -> dict[str, Any]:
    """The group's story for the trace: its pods, where each went, and why a gang waits at Permit."""
    story: dict[str, Any] = {
        "name": f"{group.namespace}/{group.name}",
        "minCount": group.gang_min_count,
        "topologyKeys": list(group.topology_keys),
        "pods": [p.key for p in pods],
        "status": result.status.code.label if not result.status.is_success() else "Success",
        "message": result.status.message(),
        "assignments": {r.pod.key: r.host for r in result.runs if r.host},
        "permit": {r.pod.key: r.permit.code.label for r in result.runs if r.permit is not None},
    }
    return story


def _wait_note(group: PodGroup, pods: list[Pod], result: GroupResult, scheduled_before: int) -> str | None:
    """Why the gang waited at Permit: GangScheduling counts scheduled pods against minCount."""
    if group.gang_min_count is None:
        return None
    placed = sum(1 for r in result.runs if r.permit is not None)
    total = scheduled_before + placed
    if total >= group.gang_min_count:
        return (
            f"gang {group.namespace}/{group.name}: GangScheduling's Permit made the first pods Wait until "
            f"minCount {group.gang_min_count} pods were scheduled; {total} were ({scheduled_before} already bound, "
            f"{placed} placed in this cycle), so the gang was allowed"
        )
    missing = group.gang_min_count - total
    return (
        f"gang {group.namespace}/{group.name} waits at Permit: GangScheduling needs minCount {group.gang_min_count} "
        f"scheduled pods, only {total} could be ({scheduled_before} already bound, {placed} of the {len(pods)} queued "
        f"placed in this cycle): {missing} more pod(s) of the group are missing"
    )


def run(fw: Framework, pod: Pod, trace: Trace, steps: Steps) -> Trace:
    """The pod-group cycle for ``pod``, recorded into ``trace`` (PreEnqueue has passed)."""
    group_name = pod_group_name(pod)
    assert group_name is not None
    group = find_pod_group(fw.cluster, pod.namespace, group_name)
    if group is None:  # GangScheduling's PreEnqueue holds such a pod; without it the group is still read
        group = PodGroup(pod.namespace, group_name)
    pods = _members(fw, pod, group_name)
    schedulers = {p.scheduler_name for p in pods}
    if len(schedulers) > 1:
        other = next(p.scheduler_name for p in pods if p.scheduler_name != pod.scheduler_name)
        trace.error = trace.fit_error = (
            "all pods in a single pod group should have the same .spec.schedulerName set, got: "
            f"{other!r} and {pod.scheduler_name!r}".replace("'", '"')
        )
        return trace
    if fw.features.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
        result, tried = placement_algorithm(fw, steps, pods, group, trace)
    else:
        result = default_algorithm(fw, steps, pods)
        tried = [_Tried(Placement(list(fw.snapshot.node_info_list)), result)]
    for t in tried:
        for r in t.result.runs:
            if r.pod is pod:
                _merge_run(trace, r.trace)
    mine = next((r for r in result.runs if r.pod is pod), None)
    if mine is not None:
        _adopt_verdict(trace, mine.trace)
    scheduled_before = sum(1 for p in fw.cluster.bound_pods() if p.namespace == pod.namespace and pod_group_name(p) == group_name)
    trace.pod_group = _gang_story(fw, group, pods, result)
    note = _wait_note(group, pods, result, scheduled_before)
    if note:
        trace.notes.append(note)
    return _submit(fw, pod, trace, steps, result, mine)


def _submit(fw: Framework, pod: Pod, trace: Trace, steps: Steps, result: GroupResult, mine: PodRun | None) -> Trace:
    """``submitPodGroupAlgorithmResult`` for the pod under test: its binding cycle, or why it failed."""
    if result.status.code == Code.ERROR:
        trace.selected_node = None
        own = mine.status if mine is not None and mine.status.code == Code.ERROR else result.status
        trace.error = trace.fit_error = own.message()
        return trace
    if mine is None:  # the group failed before this pod was tried
        trace.selected_node = None
        trace.fit_error = result.status.message()
        return trace
    if mine.permit is not None and not mine.requires_preemption and result.status.is_success():
        host = mine.host
        assert host is not None
        trace.notes.append(f"pod group scheduled: {pod.key} goes to its binding cycle on {host}")
        return steps.bind(mine.state, pod, host, trace)
    trace.selected_node = None
    if mine.permit is not None and not result.waiting_on_preemption:
        trace.fit_error = f"{POD_GROUP_UNSCHEDULABLE}, {mine.permit.message()}"
    elif result.waiting_on_preemption:
        trace.fit_error = result.status.message()
    else:
        trace.fit_error = mine.trace.fit_error or mine.status.message()
    return trace
