"""One scheduling cycle, as kube-scheduler v1.35's ``ScheduleOne`` runs it, recorded into a Trace.

The steps and their order follow ``schedule_one.go``: PreEnqueue, PreFilter (and
its node subset), the nominated node first, Filter over nodes in node-tree order
until ``numFeasibleNodesToFind`` are found, PostFilter when nothing fits, no
scoring when exactly one node fits, PreScore/Score/NormalizeScore/weights,
selection of the top total (a heap pop: ties are not broken at random), then
Reserve, Permit, PreBind, Bind and PostBind, none of which touches a cluster.
Configured scheduler extenders are called where v1.35 calls them (filter after the
Filter plugins, prioritize beside Score, bind instead of the Bind plugins — never
actually sent); ``kschedctl.explain.extenders`` holds those rules.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain import podgroup, podgrouptrace
from kschedctl.explain.extenders import (
    bind_extender,
    find_nodes_that_pass_extenders,
    prioritize_with_extenders,
)
from kschedctl.explain.inflight import gated_condition, nominated_wait
from kschedctl.explain.trace import NodeVerdict, PluginScores, PostFilterRecord, Trace
from kschedctl.framework.batch import OpportunisticBatch, SortedScoredNodes
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.extender import ExtenderCall, ExtenderError, build_extenders
from kschedctl.framework.failures import notes as failure_notes
from kschedctl.framework.interfaces import NodeToStatus
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.rules import DETERMINISTIC_TIE_BREAK
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def percentage_to_score(percentage: int | None, global_percentage: int, num_all_nodes: int) -> tuple[int, bool]:
    """The percentage of nodes the search looks for, and whether it is adaptive: the profile's, else the
    global one; 0 means adaptive (50 less one per 125 nodes, at least 5)."""
    pct = percentage if percentage is not None else global_percentage
    if pct != 0:
        return pct, False
    return max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND), True


def has_scoring(fw: Framework) -> bool:
    """``hasScoring``: Score plugins or a prioritizing extender."""
    return fw.plugins.has_score_plugins() or any(e.is_prioritizer() for e in fw.extenders)


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind``: all nodes below 100, else the (adaptive) percentage, at least 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct, _ = percentage_to_score(percentage, global_percentage, num_all_nodes)
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


#: The codes whose plugin ``Diagnosis`` counts among the unschedulable plugins.
UNSCHEDULABLE_CODES = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE})


class Diagnosis:
    """Why the pod did not fit: per-node statuses and messages of PreFilter/PostFilter."""

    def __init__(self) -> None:
        self.node_to_status = NodeToStatus()
        self.unschedulable_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""

    def add_plugin_status(self, status: Status) -> None:
        if status.plugin and status.code in UNSCHEDULABLE_CODES:
            self.unschedulable_plugins.add(status.plugin)


def fit_error_message(num_all_nodes: int, d: Diagnosis) -> str:
    """``FitError.Error()``: "0/N nodes are available: <prefilter or histogram>. <postfilter>"."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if d.pre_filter_msg:
        msg += f" {d.pre_filter_msg}."
    else:
        reasons: Counter[str] = Counter()
        for st in d.node_to_status.node_to_status.values():
            for r in st.reasons:
                reasons[r] += 1
        explicit = len(d.node_to_status)
        if explicit < num_all_nodes:
            for r in d.node_to_status.absent_nodes_status.reasons:
                reasons[r] += num_all_nodes - explicit
        histogram = sorted(f"{n} {r}" for r, n in reasons.items())
        if histogram:
            msg += f" {', '.join(histogram)}."
    if d.post_filter_msg:
        msg += f" {d.post_filter_msg}"
    return msg


def explain_pod(
    cluster: Cluster,
    pod: Pod,
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    details: bool = False,
    on_phase: Callable[[str], None] | None = None,
    after: Callable[[Framework, Pod, SchedulerConfig, Trace], None] | None = None,
    created: Sequence[Pod] = (),
) -> Trace:
    """Run one scheduling cycle for ``pod`` against ``cluster`` and return its trace
    (``on_phase`` hears when NodeInfos are built and when the cycle starts, for a progress display;
    ``after`` is called with the cycle's Framework and trace, e.g. ``order.assess``). ``created``: pods
    created after the cluster was read, in creation order (the other pods of a file explained one by
    one; ``pod`` may be among them), which kube-scheduler knows and holds in its queue too: a PodGroup's
    pods among them are scheduled in ``pod``'s pod-group cycle."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    profile = config.profile_for(pod.scheduler_name)
    if profile is None:
        names = ", ".join(p.scheduler_name for p in config.profiles)
        raise UsageError(
            f"pod {pod.key} asks for schedulerName \"{pod.scheduler_name}\", but the configuration only has "
            f"profile(s) {names}: kube-scheduler would ignore this pod"
        )
    cluster.default_priority(pod)
    if on_phase is not None:
        on_phase("building NodeInfos")
    snapshot = Snapshot(cluster, features=profile.features, exclude_pod_uids=(pod.uid,))
    for p in created:
        cluster.default_priority(p)
        snapshot.created_pods[p.uid] = p
    held = cluster.pod(pod.namespace, pod.name)
    if pod.uid not in snapshot.created_pods and (held is None or held.uid != pod.uid or held.node_name):
        snapshot.created_pods[pod.uid] = pod  # not pending in the cluster: the scheduler learns it now
    fw = Framework(profile, registry, snapshot)
    if on_phase is not None:
        on_phase("running the scheduling cycle")
    trace = run_cycle(fw, pod, config, details=details)
    if after is not None:
        after(fw, pod, config, trace)
    return trace


def run_cycle(
    fw: Framework,
    pod: Pod,
    config: SchedulerConfig,
    *,
    details: bool = False,
    start_index: int = 0,
    state: CycleState | None = None,
    batch: OpportunisticBatch | None = None,
    cycle: int = 1,
) -> Trace:
    """Run the cycle; with ``details`` also record per-node figures and plugins' own explanations.

    ``start_index`` is kube-scheduler's ``nextStartNodeIndex``: 0 in the first cycle (what ``explain``
    models); a simulation of successive cycles passes the index the previous cycles left (advanced by
    ``Trace.processed_nodes``). A caller that needs what plugins decided (a simulation applying volume
    bindings) passes its own fresh ``state`` and reads it afterwards. A simulation also passes the
    profile's OpportunisticBatching state (``batch``) and the scheduling queue's cycle number."""
    if state is None:
        state = CycleState()
    fw.calls.take_failures()
    trace = _run_cycle(fw, pod, config, state, start_index, batch, cycle)
    trace.plugin_failures = fw.calls.take_failures()
    trace.notes.extend(failure_notes(trace.plugin_failures))
    if details:
        _add_node_details(fw, trace)
        _add_plugin_details(fw, trace, state, pod)
    return trace


def _run_cycle(
    fw: Framework,
    pod: Pod,
    config: SchedulerConfig,
    state: CycleState,
    start_index: int = 0,
    batch: OpportunisticBatch | None = None,
    cycle: int = 1,
) -> Trace:
    """schedulingCycle and the binding cycle after it: PreEnqueue, schedulePod, then Reserve to
    PostBind on the selected host. Every step that ends the cycle leaves its verdict in the trace."""
    trace = _new_trace(fw, pod, config)
    if _gated_at_pre_enqueue(fw, pod, trace):
        return trace
    if fw.snapshot.num_nodes_in_placement() == 0:
        trace.fit_error = NO_NODES_AVAILABLE
        trace.notes.append("the snapshot has no nodes")
        return trace
    if podgroup.applies(fw, pod):
        return podgrouptrace.run(fw, pod, trace, PodGroupSteps(fw, config, start_index, batch, cycle).steps())
    if not _schedule_pod(fw, pod, config, state, trace, _BatchTurn(batch, cycle), start_index):
        return trace
    return _reserve_to_bind(fw, state, pod, trace)


class PodGroupSteps:
    """This module's steps the pod-group cycle runs for each pod of the group. Every pod of the cycle
    searches from the ``nextStartNodeIndex`` the pods before it left (``start_index`` when done),
    and shares the cycle number of the queue (in which it was popped) for OpportunisticBatching."""

    def __init__(
        self, fw: Framework, config: SchedulerConfig, start_index: int = 0, batch: OpportunisticBatch | None = None,
        cycle: int = 1,
    ) -> None:
        self.fw = fw
        self.config = config
        self.start_index = start_index
        self.batch = batch
        self.cycle = cycle

    def schedule(self, pod: Pod, state: CycleState, trace: Trace) -> bool:
        fw = self.fw
        n = fw.snapshot.num_nodes_in_placement()
        if n == 0:
            trace.fit_error = NO_NODES_AVAILABLE
            return False
        ok = _schedule_pod(fw, pod, self.config, state, trace, _BatchTurn(self.batch, self.cycle), self.start_index)
        if trace.processed_nodes:
            self.start_index = (self.start_index + trace.processed_nodes) % n
        return ok

    def steps(self) -> podgroup.Steps:
        return podgroup.Steps(
            new_trace=lambda pod: _new_trace(self.fw, pod, self.config),
            schedule=self.schedule,
            bind=lambda state, pod, host, trace: _binding_cycle(self.fw, state, pod, host, trace),
        )


def run_pod_group_cycle(
    fw: Framework, pod: Pod, config: SchedulerConfig, queued: Callable[[Pod], bool], steps: PodGroupSteps
) -> tuple[Trace, list[podgroup.Member]]:
    """The cycle a simulation runs for ``pod`` popped from its queue when the pod names a PodGroup
    (``podgroup.applies``): PreEnqueue, then the pod-group cycle for it and the group's pods its queue
    holds (``queued``), each taken out of the queue too (every such pop counts in ``steps.cycle``).
    Returns the popped pod's trace (gated, or with the cycle's PlacementGenerate and PlacementScore)
    and every pod of the cycle with its own trace and verdict, in the cycle's order (none when the
    pod is gated)."""
    fw.calls.take_failures()
    trace = _new_trace(fw, pod, config)
    if _gated_at_pre_enqueue(fw, pod, trace):
        return trace, []
    group = podgroup.group_of(fw, pod)
    order = podgroup.cycle_pods(fw, pod, group, queued)
    steps.cycle += len(order.pods) - 1
    wrong = podgroup.scheduler_name_error(order.pods)
    if fw.snapshot.num_nodes_in_placement() == 0 or wrong is not None:
        members = []
        for p in order.pods:
            t = _new_trace(fw, p, config)
            t.fit_error = wrong or NO_NODES_AVAILABLE
            t.error = wrong
            members.append(podgroup.Member(p, t, podgroup.Verdict(podgroup.GROUP_FAILED)))
        return trace, members
    cycle = podgroup.schedule_group(fw, pod, steps.steps(), trace, order)
    members = podgroup.member_traces(cycle, steps.steps())
    failures = fw.calls.take_failures()
    verdicts = {m.pod.uid: m.verdict for m in members}
    for m in members:
        m.trace.plugin_failures = list(failures)
        m.trace.notes.extend(failure_notes(failures))
        m.trace.order = podgrouptrace.group_order(cycle, verdicts, m.pod, m.trace.k8s_version)
    return trace, members


def tie_rule(features: Features) -> str:
    """How ``selectHost`` breaks a tie among the top totals: "random" (reservoir sampling, before
    ``DETERMINISTIC_TIE_BREAK``) or "first" (the first node its score heap pops)."""
    return "first" if features.follows(DETERMINISTIC_TIE_BREAK) else "random"


def _new_trace(fw: Framework, pod: Pod, config: SchedulerConfig) -> Trace:
    """An empty trace for ``pod``, with the configuration it runs and the profile's extenders ready."""
    features = fw.features
    trace = Trace(pod=pod.key, profile=fw.profile_name, k8s_version=features.release)
    trace.tie_rule = tie_rule(features)
    trace.num_all_nodes = fw.snapshot.num_nodes_in_placement()
    if config.source is None:
        trace.notes.append(f"default configuration (kube-scheduler v1.{features.minor})")
    else:
        trace.notes.append(f"configuration: {config.source}")
    extender_log: list[ExtenderCall] = []
    fw.extenders = build_extenders(config.extenders, extender_log)
    trace.extender_calls = extender_log
    return trace


def _gated_at_pre_enqueue(fw: Framework, pod: Pod, trace: Trace) -> bool:
    """Run PreEnqueue; True when a plugin keeps the pod out of the active queue (no cycle runs)."""
    trace.pre_enqueue = fw.queueing.run_pre_enqueue(pod)
    if trace.pre_enqueue and not trace.pre_enqueue[-1].status.is_success():
        trace.gated = True
        trace.pod_scheduled = gated_condition(pod)
        trace.notes.append(
            "pod rejected at PreEnqueue: it stays in the unschedulable pool; no scheduling cycle runs and "
            "kube-scheduler writes no PodScheduled condition"
            + ("; the API server wrote the one it has when the pod was created with scheduling gates" if trace.pod_scheduled else "")
        )
        return True
    return False


@dataclass(slots=True)
class _BatchTurn:
    """This cycle's part in OpportunisticBatching: the profile's batch state (None: no batching),
    the queue's cycle number, and what the batch offered (its node hint and the pod's signature)."""

    batch: OpportunisticBatch | None
    cycle: int
    hint: str | None = None
    signature: str | None = None


def _schedule_pod(
    fw: Framework,
    pod: Pod,
    config: SchedulerConfig,
    state: CycleState,
    trace: Trace,
    turn: _BatchTurn,
    start_index: int,
) -> bool:
    """schedulePod: the feasible nodes, their scores and the selected host. False when the cycle
    ends here (unschedulable, or an error), with the trace saying why."""
    diagnosis = Diagnosis()
    feasible = _find_nodes_that_fit_pod(fw, pod, config, state, trace, diagnosis, turn, start_index)
    if feasible is None:
        return False
    # as the reference records it: every node that passed Filter, the dropped one included
    trace.feasible_nodes = sorted([ni.name for ni in feasible] + ([trace.dropped_feasible] if trace.dropped_feasible else []))
    if not feasible:
        _unschedulable(fw, state, pod, trace, diagnosis)
        return False
    scored = _prioritize_and_select(fw, state, pod, feasible, trace, turn)
    if scored is None:
        return False
    host = trace.selected_node
    assert host is not None
    if turn.batch is not None:
        turn.batch.store_schedule_results(turn.signature, turn.hint, host, scored.rest, turn.cycle, trace.batch)
        if trace.batch is not None and trace.batch.batched:
            trace.batched = True
    return True


def _find_nodes_that_fit_pod(
    fw: Framework,
    pod: Pod,
    config: SchedulerConfig,
    state: CycleState,
    trace: Trace,
    diagnosis: Diagnosis,
    turn: _BatchTurn,
    start_index: int,
) -> list[NodeInfo] | None:
    """findNodesThatFitPod: PreFilter, then the nominated node (or the batch's hint) alone, then
    every node PreFilter allows, then the filtering extenders. None when the cycle ended (an error,
    or PreFilter rejected the pod: PostFilter has run)."""
    pre = fw.filtering.run_pre_filter(state, pod)
    trace.pre_filter = pre.records
    trace.filter_plugins = fw.plugins.names("filter")
    trace.skipped_filter_plugins = sorted(state.skip_filter_plugins)
    diagnosis.unschedulable_plugins = set(pre.unschedulable_plugins)
    allowed = pre.result.node_names if pre.result is not None else None
    if allowed is not None:
        trace.pre_filter_node_names = sorted(allowed)
    if not pre.status.is_success():
        if not pre.status.is_rejected():
            _cycle_error(trace, pre.status.message())
            return None
        diagnosis.node_to_status.absent_nodes_status = pre.status
        diagnosis.pre_filter_msg = pre.status.message()
        diagnosis.add_plugin_status(pre.status)
        _unschedulable(fw, state, pod, trace, diagnosis)
        return None
    if turn.batch is not None:
        turn.hint, turn.signature, trace.batch = turn.batch.get_node_hint(state, pod, turn.cycle)
    first = pod.nominated_node_name or turn.hint
    feasible = _evaluate_first_node(fw, state, pod, first, trace, diagnosis) if first else []
    if feasible:
        return feasible
    return _search_all_nodes(fw, pod, config, state, trace, diagnosis, allowed, start_index)


def _evaluate_first_node(
    fw: Framework, state: CycleState, pod: Pod, first: str, trace: Trace, diagnosis: Diagnosis
) -> list[NodeInfo]:
    """The nominated node (or OpportunisticBatching's hint) through Filter and the filtering
    extenders: that node alone when it passes, else nothing (and every node is searched)."""
    ni = fw.snapshot.get_in_placement(first)
    if pod.nominated_node_name:
        trace.nominated_node_tried = pod.nominated_node_name
    if ni is None:
        return []
    ok, err = _filter_nodes(fw, state, pod, [ni], 1, diagnosis, trace)
    if err:  # upstream logs it and searches all nodes
        trace.notes.append(f"evaluating the nominated node failed ({err}); all nodes were searched")
        return []
    if ok and fw.extenders:
        try:
            ok = _pass_extenders(fw, pod, ok, diagnosis, trace)
        except ExtenderError as e:  # upstream logs it and searches all nodes
            trace.notes.append(f"evaluating the nominated node failed ({e}); all nodes were searched")
            return []
    if ok:
        if pod.nominated_node_name:
            trace.notes.append(f"the pod's nominated node {ni.name} passed every filter, so no other node was tried")
        else:
            trace.notes.append(
                f"OpportunisticBatching: the node hint {ni.name} (the next best node of the previous pod's sorted "
                "scores, same signature) passed every filter, so no other node was filtered or scored"
            )
    return ok


def _search_all_nodes(
    fw: Framework,
    pod: Pod,
    config: SchedulerConfig,
    state: CycleState,
    trace: Trace,
    diagnosis: Diagnosis,
    allowed: set[str] | None,
    start_index: int,
) -> list[NodeInfo] | None:
    """Filter the nodes PreFilter allows from ``nextStartNodeIndex`` on, until enough are feasible,
    then ask the filtering extenders. None when the cycle ended in an error."""
    nodes = fw.snapshot.nodes_in_placement()
    if allowed is not None:
        nodes = [ni for ni in nodes if ni.name in allowed]
        plugins = " ".join(sorted(diagnosis.unschedulable_plugins))
        diagnosis.node_to_status.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{plugins}]"
        )
    # hasScoring decides how many nodes to look for
    num_to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, config.percentage_of_nodes_to_score, len(nodes))
    if not has_scoring(fw) and not _has_extender_filters(config):
        num_to_find = 1
    trace.num_nodes_to_find = num_to_find
    trace.searchable_nodes = len(nodes)
    if start_index and nodes:
        k = start_index % len(nodes)
        nodes = nodes[k:] + nodes[:k]
    if not fw.plugins.has_filter_plugins():
        feasible = nodes[:num_to_find]
        trace.evaluated_order = [ni.name for ni in feasible]
        trace.processed_nodes = len(feasible)
    else:
        feasible, err = _filter_nodes(fw, state, pod, nodes, num_to_find, diagnosis, trace)
        trace.processed_nodes = len(feasible) + len(diagnosis.node_to_status)
        if err:
            _cycle_error(trace, err)
            return None
    if fw.extenders:
        passed_filters = len(feasible)
        try:
            feasible = _pass_extenders(fw, pod, feasible, diagnosis, trace)
        except ExtenderError as e:
            _cycle_error(trace, str(e))
            return None
        if len(feasible) != passed_filters:
            diagnosis.unschedulable_plugins.add("Extender")
    return feasible


@dataclass(slots=True)
class _Selected:
    """A host was selected; ``rest`` is the heap of the other scored nodes when one was built (what
    OpportunisticBatching keeps for the next pod)."""

    rest: SortedScoredNodes | None = None


def _prioritize_and_select(
    fw: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo], trace: Trace, turn: _BatchTurn
) -> _Selected | None:
    """prioritizeNodes and selectHost (or neither, with one feasible node). None when scoring ended
    the cycle in an error."""
    if len(feasible) == 1:
        host = feasible[0].name
        trace.max_score = 0
        trace.candidates = [host]
        trace.selected_node = host
        if not (turn.hint and host == turn.hint and not pod.nominated_node_name):
            trace.notes.append("exactly one node is feasible: kube-scheduler does not run PreScore/Score")
        return _Selected()
    if not fw.plugins.has_score_plugins() and not fw.extenders:
        trace.totals = {ni.name: 1 for ni in feasible}
        trace.max_score = 1
        trace.candidates = sorted(trace.totals)
        rest = SortedScoredNodes([ni.name for ni in feasible], trace.totals)
        trace.selected_node = rest.pop()
        _note_tie(trace)
        return _Selected(rest)
    prioritized = _prioritize_nodes(fw, state, pod, feasible, trace)
    if prioritized is None:
        return None
    totals, randomized = prioritized
    return _select_host(trace, [ni.name for ni in feasible], totals, randomized, keep_rest=turn.signature is not None)


def _prioritize_nodes(
    fw: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo], trace: Trace
) -> tuple[dict[str, int], set[str]] | None:
    """PreScore, Score (normalized and weighted) and the prioritizing extenders: each node's total
    and the nodes an extender answered for (a tie among those is broken at random). None on an error."""
    st, trace.pre_score = fw.scoring.run_pre_score(state, pod, feasible)
    if not st.is_success():
        _cycle_error(trace, st.message())
        return None
    out = fw.scoring.run_score(state, pod, feasible)
    for name in out.plugins:  # what was returned, also when the point failed part way
        if name in out.columns:
            trace.score[name] = PluginScores.of_columns(out.weights[name], out.names, *out.columns[name])
        elif name in out.raw:
            trace.score[name] = PluginScores(
                out.weights[name], out.raw[name], out.normalized.get(name, {}), out.weighted.get(name, {})
            )
    if not out.status.is_success():
        if out.detail:
            trace.notes.append(out.detail)
        _cycle_error(trace, out.status.message())
        return None
    totals = dict(out.totals)
    randomized: set[str] = set()
    if fw.extenders:
        added = prioritize_with_extenders(fw.extenders, pod, feasible, trace.notes)
        for n, v in added.added.items():
            totals[n] = totals.get(n, 0) + v
        randomized = added.randomized
    return totals, randomized


def _select_host(
    trace: Trace, order: list[str], totals: dict[str, int], randomized: set[str], *, keep_rest: bool
) -> _Selected:
    """selectHost: the top total, from a heap over the feasible list (ties are not random unless an
    extender scored). The heap is built only when a tie needs it or ``keep_rest`` (a batch) wants it."""
    trace.totals = totals
    best = max(totals.values())
    trace.max_score = best
    trace.candidates = sorted(n for n, t in totals.items() if t == best)
    lucky = [n for n in order if n in randomized and totals[n] == best]
    rest: SortedScoredNodes | None = None
    if not keep_rest and not lucky and len(trace.candidates) == 1:
        # the heap's root holds the highest total: a unique one wins (and no batch keeps the rest)
        trace.selected_node = trace.candidates[0]
    else:
        rest = SortedScoredNodes(order, totals)
        trace.selected_node = lucky[0] if lucky else rest.pop()
    if len(trace.candidates) > 1 and lucky:
        trace.random_tie_nodes = sorted(lucky)
        trace.tie_break = (
            f"{len(trace.candidates)} nodes share the top total {best}. Extenders scored these nodes, so "
            "kube-scheduler v1.35 breaks the tie at random: every node an extender answered for gets a random "
            "number and the highest wins"
            + (" (nodes no extender answered for lose the tie)" if len(lucky) < len(trace.candidates) else "")
            + f". Any of {', '.join(sorted(lucky))} can win; this dry run shows {trace.selected_node}."
        )
    _note_tie(trace)
    return _Selected(rest)


def _note_tie(trace: Trace) -> None:
    """Say how the version picks among several nodes with the top total, unless an extender's rule said it."""
    if len(trace.candidates) > 1 and trace.tie_break is None and trace.tie_rule == "random":
        trace.tie_break = (
            f"{len(trace.candidates)} nodes share the top total {trace.max_score}. kube-scheduler "
            f"{trace.k8s_version} picks one of them at random; any of the candidates can win, this dry run "
            f"shows {trace.selected_node}."
        )
    elif len(trace.candidates) > 1 and trace.tie_break is None:
        trace.tie_break = (
            f"{len(trace.candidates)} nodes share the top total {trace.max_score}. kube-scheduler v1.35 does not "
            "pick among them at random (only extender scores add a random tie-breaker): it pops a heap built from "
            "the feasible list, whose order depends on which parallel Filter goroutine finished first. Any of the "
            f"candidates can win; this dry run shows {trace.selected_node}."
        )


def _reserve_to_bind(fw: Framework, state: CycleState, pod: Pod, trace: Trace) -> Trace:
    """Reserve and Permit (the end of schedulingCycle), then bindingCycle: PreBind, Bind (or the
    binding extender, never called) and PostBind. A failure unreserves and ends the trace there."""
    host = trace.selected_node
    assert host is not None
    st, trace.reserve = fw.binding.run_reserve(state, pod, host)
    if not st.is_success():
        fw.binding.run_unreserve(state, pod, host)
        return _late_failure(trace, host, st)
    st, trace.permit = fw.binding.run_permit(state, pod, host)
    if not st.is_success() and not st.is_wait():
        fw.binding.run_unreserve(state, pod, host)
        return _late_failure(trace, host, st)
    if st.is_wait():
        trace.notes.append(f"a Permit plugin asked to wait: {st.message()}")
    return _binding_cycle(fw, state, pod, host, trace)


def _binding_cycle(fw: Framework, state: CycleState, pod: Pod, host: str, trace: Trace) -> Trace:
    """bindingCycle: PreBind, Bind (or the binding extender, never called) and PostBind."""
    st, trace.pre_bind = fw.binding.run_pre_bind(state, pod, host)
    if st.is_success():
        st = _bind(fw, state, pod, host, trace)
    if not st.is_success():
        fw.binding.run_unreserve(state, pod, host)
        return _late_failure(trace, host, st, binding_cycle=True)
    trace.post_bind = fw.binding.run_post_bind(state, pod, host)
    return trace


def _bind(fw: Framework, state: CycleState, pod: Pod, host: str, trace: Trace) -> Status:
    """The Bind plugins, or the extender that binds instead of them (a dry run does not call it)."""
    binder = bind_extender(fw.extenders, pod)
    if binder is not None:
        binder.record_bind_not_called(pod, host)
        trace.notes.append(
            f"extender {binder.name} would bind the pod (POST {binder.bind_verb}) instead of the Bind plugins; "
            "not called: kschedctl never binds"
        )
        return Status()
    st, trace.bind = fw.binding.run_bind(state, pod, host)
    for pl in fw.plugins.bind_plugins:
        binding_for = getattr(pl, "binding_for", None)
        if binding_for is not None and trace.bind and trace.bind[-1].plugin == pl.name:
            trace.binding = binding_for(pod, host)
    return st


def _cycle_error(trace: Trace, message: str) -> Trace:
    """The cycle ended in an error (a plugin's Error status, a failing extender): kube-scheduler
    writes the error's text into the PodScheduled condition (reason SchedulerError), so it is the
    trace's ``fitError`` as well as its ``error``."""
    trace.error = message
    trace.fit_error = message
    return trace


def _pass_extenders(fw: Framework, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis, trace: Trace) -> list[NodeInfo]:
    """``findNodesThatPassExtenders``, recording each node an extender rejected as its Filter verdict."""
    verdicts: dict[str, tuple[str, Status]] = {}
    try:
        return find_nodes_that_pass_extenders(fw.extenders, pod, feasible, diagnosis.node_to_status, trace.notes, verdicts)
    finally:
        for node, (extender, st) in verdicts.items():
            trace.filter[node] = NodeVerdict(node, st, extender)


def _has_extender_filters(config: SchedulerConfig) -> bool:
    return any(e.filter_verb for e in config.extenders)


def _filter_nodes(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    nodes: list[NodeInfo],
    num_to_find: int,
    diagnosis: Diagnosis,
    trace: Trace,
) -> tuple[list[NodeInfo], str | None]:
    """``findNodesThatPassFilters`` evaluated in the given node order (one worker: parallelism 1).

    Upstream stops only when a node passes *beyond* ``num_to_find`` (that node is dropped): the
    nodes rejected in between are recorded and counted in ``nextStartNodeIndex``'s advance.

    With the framework's fast paths the nodes are filtered a chunk at a time, each chunk plugin
    by plugin over the whole list; the walk below then reads the verdicts in node order and stops
    where the node-by-node loop stops, so the trace is the same. A chunk holds as many nodes as
    may still pass before that stop, so no node past it is filtered (only when every filter
    plugin that runs has a side-effect free ``filter_nodes`` may it hold a few more); it ends
    before a node with nominated pods, which takes the per-node path. When a chunk meets
    something only the per-node path reports exactly (an exception, an error), the rest of the
    cycle takes that path."""
    feasible: list[NodeInfo] = []
    failed = diagnosis.node_to_status.node_to_status
    recorded_before = bool(failed)  # (the nominated node's verdict): each node is walked once below
    pos = 0
    fast = fw.fast_paths
    overshoot = fast and fw.filtering.all_filters_batched(state)
    nominated = bool(fw.snapshot.nominated)
    while pos < len(nodes):
        statuses: list[Status | None] | None = None
        if fast and not (nominated and fw.filtering.has_nominated_pods(nodes[pos])):
            need = num_to_find + 1 - len(feasible)  # the node that passes beyond num_to_find is filtered too
            end = min(len(nodes), pos + (max(need + need // 8, 32) if overshoot else need))
            chunk = nodes[pos:end]
            cut = next((k for k, ni in enumerate(chunk) if fw.filtering.has_nominated_pods(ni)), None) if nominated else None
            if cut is not None:
                chunk = chunk[:cut]
            statuses = fw.filtering.run_filter_plugins_for_nodes(state, pod, chunk)
            fast = statuses is not None
        if statuses is None:
            chunk = nodes[pos : pos + 1]
            statuses = [fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, chunk[0])]
        pos += len(chunk)
        done, outcome = _walk_verdicts(chunk, statuses, num_to_find, feasible, failed, recorded_before, diagnosis)
        names = [ni.name for ni in chunk[:done]]
        trace.evaluated_order.extend(names)
        trace.record_filter(names, statuses[:done] if done < len(statuses) else statuses)
        if outcome is not None:
            st = outcome
            if st.code == Code.ERROR:
                return feasible, st.error or st.message()
            trace.dropped_feasible = names[-1]
            trace.notes.append(
                f"{names[-1]} also passed Filter but was dropped: kube-scheduler stops once it finds more than "
                f"numFeasibleNodesToFind ({num_to_find}) feasible nodes"
            )
            return feasible, None
    return feasible, None


def _walk_verdicts(
    chunk: list[NodeInfo],
    statuses: list[Status | None],
    num_to_find: int,
    feasible: list[NodeInfo],
    failed: dict[str, Status],
    recorded_before: bool,
    diagnosis: Diagnosis,
) -> tuple[int, Status | None]:
    """Read a chunk's verdicts in node order as the node-by-node loop does: how many nodes it took,
    and why it stopped there (an Error status; a Success status for the feasible node beyond
    ``num_to_find``, which is dropped), or None when it went through the chunk."""
    unschedulable = diagnosis.unschedulable_plugins  # (Diagnosis.add_plugin_status, inline: thousands of nodes)
    for k, st in enumerate(statuses):
        if st is None or st.code == Code.SUCCESS:
            if len(feasible) >= num_to_find:
                return k + 1, st or Status()
            ni = chunk[k]
            if recorded_before:
                failed.pop(ni.name, None)
            feasible.append(ni)
        elif st.code == Code.ERROR:
            return k + 1, st
        else:
            failed[chunk[k].name] = st
            if st.plugin and st.code in UNSCHEDULABLE_CODES:
                unschedulable.add(st.plugin)
    return len(statuses), None


def _unschedulable(fw: Framework, state: CycleState, pod: Pod, trace: Trace, diagnosis: Diagnosis) -> Trace:
    if fw.plugins.has_post_filter_plugins():
        result, st, records = fw.filtering.run_post_filter(state, pod, diagnosis.node_to_status)
        diagnosis.post_filter_msg = st.message()
        victims = result.victims if result else []
        nominated = None
        override = result is not None and result.nominating_info is not None and result.nominating_info.mode == "Override"
        if override and result is not None and result.nominating_info is not None:
            nominated = result.nominating_info.nominated_node_name or None
        trace.post_filter = PostFilterRecord(
            plugin=st.plugin,
            status=st,
            nominated_node_name=nominated,
            victims=[v.key for v in victims],
            victim_priorities={v.key: v.effective_priority for v in victims},
            per_plugin=records,
            details=dict(result.details) if result else {},
            clears_nomination=override and nominated is None,
        )
        if st.code == Code.ERROR:
            trace.notes.append(f"PostFilter returned an error: {st.message()}")
    trace.nominated_wait = nominated_wait(fw, pod, diagnosis.post_filter_msg)
    trace.fit_error = fit_error_message(trace.num_all_nodes, diagnosis)
    return trace


def _late_failure(trace: Trace, host: str, st: Status, *, binding_cycle: bool = False) -> Trace:
    """Reserve, Permit, PreBind or Bind did not succeed on the selected host.

    A rejection at Reserve or Permit becomes a FitError over that one node ("0/1 nodes are
    available: ..."); the binding cycle (PreBind, Bind) hands the plugin's status to the failure
    handler as it is, so the condition carries the plugin's message alone."""
    trace.selected_node = None
    if not st.is_rejected():
        return _cycle_error(trace, st.message())
    if binding_cycle:
        trace.fit_error = st.message()
        return trace
    d = Diagnosis()
    d.node_to_status.set(host, st)
    trace.fit_error = fit_error_message(1, d)
    return trace


#: How many nodes get a per-node explanation from each plugin in a detailed trace.
MAX_EXPLAINED_NODES = 20


def _explained_nodes(trace: Trace, plugin: str) -> list[str]:
    """The nodes worth explaining: the candidates, the best scored, and nodes this plugin rejected."""
    out: list[str] = list(trace.candidates)
    if len(out) >= MAX_EXPLAINED_NODES:
        return out
    seen = set(out)
    # (the best MAX_EXPLAINED_NODES scored are enough: however many of them are candidates already, the
    # rest fill ``out``; the rejected and the others are walked only as far as needed)
    totals = trace.totals
    ranked = heapq.nsmallest(MAX_EXPLAINED_NODES, totals, key=lambda n: (-totals[n], n))
    rejected = (n for n, v in trace.filter.items() if v.status.plugin == plugin)
    for n in itertools.chain(ranked, rejected, trace.filter):
        if len(out) >= MAX_EXPLAINED_NODES:
            break
        if n not in seen:
            out.append(n)
            seen.add(n)
    return out


def _add_plugin_details(fw: Framework, trace: Trace, state: CycleState, pod: Pod) -> None:
    """Ask plugins that can explain themselves (``explain``/``explain_node``) why, not only what."""
    for name, pl in fw.plugins.by_name.items():
        explain = getattr(pl, "explain", None)
        explain_node = getattr(pl, "explain_node", None)
        if explain is None and explain_node is None:
            continue
        entry: dict[str, Any] = {}
        try:
            if explain is not None:
                entry["cycle"] = explain(state)
            if explain_node is not None:
                nodes: dict[str, Any] = {}
                for n in _explained_nodes(trace, name):
                    ni = fw.snapshot.get(n)
                    if ni is not None:
                        detail = explain_node(state, pod, ni)
                        if detail and any(v for v in (detail.values() if isinstance(detail, dict) else [detail])):
                            nodes[n] = detail
                if nodes:
                    entry["nodes"] = nodes
        except Exception as e:  # an explanation must never break the trace
            entry["error"] = f"{type(e).__name__}: {e}"
        if any(v for v in entry.values()):
            trace.plugin_details[name] = entry


def _add_node_details(fw: Framework, trace: Trace) -> None:
    for name in trace.filter:
        ni = fw.snapshot.get(name)
        if ni is None:
            continue
        d: dict[str, Any] = {
            "allocatable": ni.allocatable.as_dict(),
            "requested": ni.requested.as_dict(),
            "nonZeroRequested": ni.non_zero_requested.as_dict(),
            "pods": len(ni.pods),
            "taints": [str(t) for t in ni.node.taints],
            "unschedulable": ni.node.unschedulable,
        }
        trace.node_details[name] = d
