"""``explain``'s account of a pod-group cycle, from the side of the pod under test.

The cycle itself is ``kschedctl.explain.podgroup``; this module records it into the pod's trace
as the v1.36 reference harness does: ``preFilter``, ``reserve`` and ``permit`` list every run of
the pod (one per placement tried), ``filter`` and ``score`` keep the last run per node,
``placementGenerate`` / ``placementScore`` what those extension points did. Beside that it tells
the group's story (``details.podGroup``: its pods in the cycle's order, where each went, each
one's Permit code and verdict, the group's status), a note on why a gang waited at Permit (or was
allowed), and, when some of the group's pods entered the queue together, how far the order the
cycle took them in decided where each went (``uncertainty.GroupOrder``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedctl.explain import podgroup
from kschedctl.explain.podgroup import GroupCycle, Steps, Verdict
from kschedctl.explain.trace import PluginScores, Trace
from kschedctl.explain.uncertainty import POD_GROUP_ORDER, GroupOrder, OrderDependence
from kschedctl.framework.podgroups import PodGroup, known_pods
from kschedctl.framework.runtime import Framework
from kschedctl.snapshot.model import Pod


def run(fw: Framework, pod: Pod, trace: Trace, steps: Steps, queued: Callable[[Pod], bool] | None = None) -> Trace:
    """The pod-group cycle for ``pod``, recorded into ``trace`` (PreEnqueue has passed); ``queued``: which
    of the group's pending pods are in the queue with it (None: every pending one)."""
    group = podgroup.group_of(fw, pod)
    order = podgroup.cycle_pods(fw, pod, group, queued)
    wrong = podgroup.scheduler_name_error(order.pods)
    if wrong is not None:
        trace.error = trace.fit_error = wrong
        return trace
    cycle = podgroup.schedule_group(fw, pod, steps, trace, order)
    for t in cycle.tried:
        run_ = t.result.run_of(pod)
        if run_ is not None:
            _merge_run(trace, run_.trace)
    mine = cycle.result.run_of(pod)
    if mine is not None:
        _adopt_verdict(trace, mine.trace)
    verdicts = {p.uid: podgroup.verdict_of(cycle, p) for p in cycle.pods}
    trace.pod_group = _story(cycle, verdicts)
    note = wait_note(cycle, _scheduled_before(fw, pod, group))
    if note:
        trace.notes.append(note)
    trace.order = group_order(cycle, verdicts, pod, trace.k8s_version)
    podgroup.conclude(cycle, pod, trace, steps)
    return trace


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
    trace.processed_nodes, trace.searchable_nodes = run.processed_nodes, run.searchable_nodes
    trace.nominated_wait = run.nominated_wait


def _story(cycle: GroupCycle, verdicts: dict[str, Verdict]) -> dict[str, Any]:
    """The group's story for the trace: its pods in the cycle's order, where each went, and the group's status."""
    group, result = cycle.group, cycle.result
    return {
        "name": f"{group.namespace}/{group.name}",
        "minCount": group.gang_min_count,
        "topologyKeys": list(group.topology_keys),
        "pods": [p.key for p in cycle.pods],
        "status": result.status.code.label if not result.status.is_success() else "Success",
        "message": result.status.message(),
        "assignments": {r.pod.key: r.host for r in result.runs if r.host},
        "permit": {r.pod.key: r.permit.code.label for r in result.runs if r.permit is not None},
        "verdicts": {p.key: verdicts[p.uid].kind for p in cycle.pods},
        "enteredQueueTogether": [[p.key for p in ps] for ps in cycle.order.together],
    }


def _scheduled_before(fw: Framework, pod: Pod, group: PodGroup) -> int:
    """The group's pods already bound, as the cache has them (the pod under test is not one of them,
    even when it is explained as if it were pending)."""
    return sum(1 for p in known_pods(fw.snapshot, group.namespace, group.name) if p.node_name and p.uid != pod.uid)


def wait_note(cycle: GroupCycle, scheduled_before: int) -> str | None:
    """Why the gang waited at Permit (or was allowed): GangScheduling counts scheduled pods against minCount."""
    group, result = cycle.group, cycle.result
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
        f"scheduled pods, only {total} could be ({scheduled_before} already bound, {placed} of the {len(cycle.pods)} "
        f"queued placed in this cycle): {missing} more pod(s) of the group are missing"
    )


def group_order(cycle: GroupCycle, verdicts: dict[str, Verdict], pod: Pod, version: str) -> OrderDependence | None:
    """When ``pod`` entered the queue together with other pods of its group and their outcomes differ: the
    order the cycle took them in decided which of them got which outcome (None otherwise)."""
    for together in cycle.order.together:
        if all(p.uid != pod.uid for p in together):
            continue
        outcomes = {p.key: verdicts[p.uid] for p in together}
        if len({(v.kind, v.node) for v in outcomes.values()}) <= 1:
            return None
        dep = OrderDependence(verdicts[pod.uid].node, version, 1)
        dep.reasons.append(POD_GROUP_ORDER)
        dep.group_order = GroupOrder(
            f"{cycle.group.namespace}/{cycle.group.name}",
            [p.key for p in together],
            {k: (v.node if v.kind == podgroup.SCHEDULED else None) for k, v in outcomes.items()},
            {k: v.kind for k, v in outcomes.items()},
            podgroup.alike(together),
        )
        dep.possible = sorted({v.node for v in outcomes.values() if v.kind == podgroup.SCHEDULED and v.node})
        return dep
    return None
