"""Pods caught between two cycles: a nominated pod whose victims are still going, and a gated pod.

A pod that preempted others keeps ``status.nominatedNodeName`` while its victims terminate; the
DefaultPreemption plugin then declines to preempt again ("not eligible due to a terminating pod
on the nominated node"), so the node and the victims are what a reader needs to see. A pod
created with ``spec.schedulingGates`` never reaches a cycle, but the API server's pod strategy
gave it a PodScheduled condition on create (reason SchedulingGated), which the reader sees in
``kubectl get pod``; a dry run shows the same condition.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.plugins.defaultpreemption.plugin import NOT_ELIGIBLE_TERMINATING, pod_terminating_by_preemption
from kschedctl.snapshot.model import Pod

#: The condition the API server writes on a pod created with scheduling gates.
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def gated_condition(pod: Pod) -> dict[str, str] | None:
    """The PodScheduled condition of a pod that still carries scheduling gates (None: no gates)."""
    if not pod.scheduling_gates:
        return None
    return {"type": "PodScheduled", "status": "False", "reason": SCHEDULING_GATED, "message": SCHEDULING_GATED_MESSAGE}


def nominated_wait(fw: Framework, pod: Pod, post_filter_msg: str = "") -> dict[str, Any] | None:
    """The pod's nominated node and the lower-priority pods there that the scheduler's preemption is
    still terminating (those that keep DefaultPreemption from preempting again); None when none are.
    ``preemptionWaits``: PostFilter's message (``post_filter_msg``) says it declined for that reason;
    ``fitsOnceGone``: the pod passes Filter on that node without them."""
    node = pod.nominated_node_name
    ni = fw.snapshot.get(node) if node else None
    if ni is None:
        return None
    prio = pod.effective_priority
    going = [pi for pi in ni.pods if pi.pod.effective_priority < prio and pod_terminating_by_preemption(pi.pod)]
    if not going:
        return None
    return {
        "name": node,
        "terminatingVictims": sorted(pi.pod.key for pi in going),
        "preemptionWaits": NOT_ELIGIBLE_TERMINATING in post_filter_msg,
        "fitsOnceGone": _fits_without(fw, pod, ni, going),
    }


def _fits_without(fw: Framework, pod: Pod, ni: NodeInfo, going: list[PodInfo]) -> bool:
    """Whether the pod passes Filter on a copy of ``ni`` without ``going`` (PreFilter in a state of its own,
    told of each removal as preemption's dry run tells it)."""
    state = CycleState()
    if not fw.filtering.run_pre_filter(state, pod).status.is_success():
        return False
    copy = ni.snapshot()
    for pi in going:
        copy.remove_pod(pi.pod)
        if not fw.filtering.run_pre_filter_extension_remove_pod(state, pod, pi, copy).is_success():
            return False
    return fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, copy).is_success()
