"""``explain``'s account of what node order, chance and queue order leave open (``uncertainty``).

After the cycle (``cycle.run_cycle``; ``cycle.explain_pod(..., after=assess)``) three questions are asked of the same Framework and
snapshot, each only when it can matter:

* a tie among the top totals: the tie set (the nodes an extender answered for, when extender
  scores break it at random);
* an early stop (``findNodesThatPassFilters`` quit at ``numFeasibleNodesToFind`` before the end of
  the nodes PreFilter allowed): the window depends on kube-scheduler's node order and
  ``nextStartNodeIndex``, so PreFilter, Filter and Score run once more over every node, as
  with percentageOfNodesToScore 100, in a cycle state of their own (extenders asked again,
  their calls not recorded), for the feasible count, the best node and the nodes that could win;
* other pods' nominations (``addGENominatedPods``: pods nominated to a node with priority at
  least this pod's are counted there): the nodes rejected only because of them, re-filtered
  without them, and where the pod would go if they were free. That holds only while those
  pods stay nominated there, which depends on the queue (are they placed first, and where).

A pod's own nominated node that passes Filter is chosen without a search: nothing is left to
order then. A pod of a PodGroup is decided by its pod-group cycle, which says itself what the
order inside the group decided (``explain.podgrouptrace.group_order``). The model is ``schedule_one.go`` (``findNodesThatFitPod``, ``evaluateNominatedNode``)
and ``framework/runtime/framework.go`` (``RunFilterPluginsWithNominatedPods``).
"""

from __future__ import annotations

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.cycle import (
    Diagnosis,
    _filter_nodes,
    _pass_extenders,
    _prioritize_nodes,
    has_scoring,
    percentage_to_score,
)
from kschedctl.explain.trace import Trace
from kschedctl.explain.uncertainty import (
    EARLY_STOP,
    NOMINATED_PODS,
    TIE,
    EarlyStop,
    HeldNode,
    OrderDependence,
    could_top_a_window,
)
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.extender import ExtenderError, build_extenders
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.model import Pod


def assess(fw: Framework, pod: Pod, config: SchedulerConfig, trace: Trace) -> None:
    """Fill ``trace.order`` (None when the answer is certain) and ``trace.possible_nodes``."""
    selected = trace.selected_node
    trace.possible_nodes = [selected] if selected else []
    if trace.pod_group is not None:  # the pod-group cycle said what the order inside the group decided
        if trace.order is not None:
            trace.possible_nodes = list(trace.order.possible)
        return
    if trace.gated or trace.error:
        return
    dep = OrderDependence(selected, trace.k8s_version, config.parallelism)
    possible: set[str] = set(trace.possible_nodes)
    if selected and len(trace.candidates) > 1:
        _tie(dep, trace)
        possible.update(dep.possible)
    early = _early_stop(fw, pod, config, trace)
    if early is not None:
        dep.reasons.append(EARLY_STOP)
        dep.early_stop = early
        possible.update(early.possible)
    if _nominations(fw, pod, config, trace, dep):
        possible.update(dep.if_released)
    if not dep.reasons:
        return
    if early is not None and possible.issubset(early.possible):
        dep.possible = list(early.possible)  # already best first
    else:
        totals = trace.totals
        dep.possible = sorted(possible, key=lambda n: (-totals.get(n, -1), n))
    trace.possible_nodes = list(dep.possible)
    trace.order = dep


def _tie(dep: OrderDependence, trace: Trace) -> None:
    """Several nodes share the top total: which one wins is not known from outside."""
    dep.reasons.append(TIE)
    dep.tie = list(trace.candidates)
    dep.tie_total = trace.max_score
    if trace.random_tie_nodes:
        dep.random = "extender"
        dep.possible = list(trace.random_tie_nodes)
    else:
        dep.random = "version" if trace.tie_rule == "random" else None
        dep.possible = list(trace.candidates)


def _early_stop(fw: Framework, pod: Pod, config: SchedulerConfig, trace: Trace) -> EarlyStop | None:
    """The search quit before the end of the nodes it could visit: what a search of all of them finds."""
    k = trace.num_nodes_to_find
    if not trace.searchable_nodes or trace.processed_nodes >= trace.searchable_nodes or k >= trace.searchable_nodes:
        return None
    if not trace.selected_node:
        return None
    pct: int | None
    pct, adaptive = percentage_to_score(
        fw.percentage_of_nodes_to_score, config.percentage_of_nodes_to_score, trace.searchable_nodes
    )
    if k == 1:  # nothing is scored: one feasible node is enough (never a percentage: at least 100)
        pct, adaptive = None, False
    early = EarlyStop(k, trace.searchable_nodes, pct, adaptive)
    found = _search_all(fw, pod, config)
    if found is None:
        return None
    feasible, totals = found
    early.feasible = len(feasible)
    early.possible = could_top_a_window(feasible, totals, k)
    if totals:
        early.best_total = max(totals.values())
        early.best = sorted(n for n, t in totals.items() if t == early.best_total)
    elif len(feasible) == 1:
        early.best = list(feasible)
    return early


def _fresh_state(fw: Framework, pod: Pod) -> tuple[CycleState, list[NodeInfo]] | None:
    """PreFilter again in a state of its own: the state and the nodes it allows (None: it did not pass)."""
    state = CycleState()
    pre = fw.filtering.run_pre_filter(state, pod)
    if not pre.status.is_success():
        return None
    nodes = fw.snapshot.nodes_in_placement()
    allowed = pre.result.node_names if pre.result is not None else None
    if allowed is not None:
        nodes = [ni for ni in nodes if ni.name in allowed]
    return state, nodes


def _search_all(fw: Framework, pod: Pod, config: SchedulerConfig) -> tuple[list[str], dict[str, int]] | None:
    """Filter (with nominated pods, as the cycle) and Score over every allowed node: the feasible
    node names and their totals ({} when nothing is scored). None when a step failed."""
    fresh = _fresh_state(fw, pod)
    if fresh is None:
        return None
    state, nodes = fresh
    scratch = Trace(pod=pod.key, profile=fw.profile_name)
    with _own_extenders(fw, config):
        try:
            feasible = nodes
            if fw.plugins.has_filter_plugins():
                feasible, err = _filter_nodes(fw, state, pod, nodes, len(nodes), Diagnosis(), scratch)
                if err:
                    return None
            if fw.extenders:
                feasible = _pass_extenders(fw, pod, feasible, Diagnosis(), scratch)
        except ExtenderError:
            return None
        totals = _totals(fw, state, pod, feasible, scratch)
    if totals is None:
        return None
    return [ni.name for ni in feasible], totals


def _totals(fw: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo], scratch: Trace) -> dict[str, int] | None:
    """Each node's total as prioritizeNodes sums it ({} for fewer than two nodes or nothing to score)."""
    if len(feasible) < 2 or not has_scoring(fw):
        return {}
    try:
        prioritized = _prioritize_nodes(fw, state, pod, feasible, scratch)
    except ExtenderError:
        return None
    return None if prioritized is None else prioritized[0]


class _own_extenders:
    """Extenders of their own for a second search (their calls are not the cycle's); plugin
    exceptions of that search are dropped (the cycle reported its own)."""

    def __init__(self, fw: Framework, config: SchedulerConfig) -> None:
        self.fw = fw
        self.config = config
        self.saved: list[object] = []

    def __enter__(self) -> None:
        self.saved = self.fw.extenders
        self.fw.extenders = build_extenders(self.config.extenders, []) if self.saved else []

    def __exit__(self, *exc: object) -> None:
        self.fw.extenders = self.saved
        self.fw.calls.take_failures()


def _nominations(fw: Framework, pod: Pod, config: SchedulerConfig, trace: Trace, dep: OrderDependence) -> bool:
    """Nodes rejected only because of pods nominated to them, and where the pod would go without
    those nominations; recorded in ``dep`` when that changes the answer."""
    if not fw.snapshot.nominated:
        return False
    prio = pod.effective_priority
    suspects: list[tuple[NodeInfo, list[str]]] = []
    for name, verdict in trace.filter.items():
        if verdict.status.is_success() or verdict.extender is not None:
            continue
        pods = [pi.pod.key for pi in fw.nominated_pods_for_node(name)
                if pi.pod.effective_priority >= prio and pi.pod.uid != pod.uid]
        ni = fw.snapshot.get_in_placement(name)
        if pods and ni is not None:
            suspects.append((ni, sorted(pods)))
    if not suspects:
        return False
    fresh = _fresh_state(fw, pod)
    if fresh is None:
        return False
    state, _ = fresh
    held = [(ni, pods) for ni, pods in suspects if fw.filtering.run_filter_plugins(state, pod, ni).is_success()]
    fw.calls.take_failures()
    if not held:
        return False
    instead = _winners_with(fw, pod, config, state, trace, [ni for ni, _ in held])
    if not instead or instead == [trace.selected_node]:
        return False
    dep.reasons.append(NOMINATED_PODS)
    dep.held = [HeldNode(ni.name, pods) for ni, pods in held]
    dep.if_released = instead
    return True


def _winners_with(
    fw: Framework, pod: Pod, config: SchedulerConfig, state: CycleState, trace: Trace, freed: list[NodeInfo]
) -> list[str]:
    """The top-total nodes of the cycle's feasible nodes plus ``freed`` (several on a tie)."""
    names = {n for n in trace.feasible_nodes if n != trace.dropped_feasible}
    nodes = [ni for ni in fw.snapshot.nodes_in_placement() if ni.name in names] + freed
    if len(nodes) == 1:
        return [nodes[0].name]
    scratch = Trace(pod=pod.key, profile=fw.profile_name)
    with _own_extenders(fw, config):
        totals = _totals(fw, state, pod, nodes, scratch)
    if not totals:
        return []
    best = max(totals.values())
    return sorted(n for n, t in totals.items() if t == best)
