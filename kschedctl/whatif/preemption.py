"""What a failed cycle does to a simulated run: ``handleSchedulingFailure``, preemption and nominations.

PostFilter's nominating info is applied as upstream applies it. By default (``preemption="apply"``,
what the cluster would do) the victims are deleted, lower-priority nominations on that node are
cleared and the pod is nominated: later pods see the victims gone and count the nominated pod on
its node when their priority is not higher. ``preemption="report"`` changes nothing and only
reports the would-be preemption. The ``Nominator`` keeps the nominations where the cycles read
them (the snapshot's per-node lists) and the pods nominated, for ``retry_nominated``.
"""

from __future__ import annotations

from kschedctl.explain.trace import Trace
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.types import PodInfo
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.placements import Placement, Preemption
from kschedctl.whatif.runcache import RunCache


class Nominator:
    """The pods nominated to nodes (``nominatedNodeName``), as later cycles count them."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        #: Pods preemption nominated (still pending), with their workloads, for ``retry_nominated``.
        self.nominated: dict[str, tuple[Pod, str | None]] = {}

    def nominate(self, pod: Pod, node: str, workload: str | None) -> None:
        """``AddNominatedPod`` (mode Override): the pod is counted on ``node`` by later, lower-or-equal priority pods."""
        self.clear(pod)
        pod.nominated_node_name = node
        self.snapshot.nominated.setdefault(node, []).append(PodInfo.of(pod))
        self.nominated[pod.uid] = (pod, workload)

    def clear(self, pod: Pod) -> None:
        """``DeleteNominatedPodIfExists`` / a cleared ``nominatedNodeName``."""
        node = pod.nominated_node_name
        if not node:
            return
        pod.nominated_node_name = ""
        nominated = self.snapshot.nominated.get(node)
        if nominated:
            self.snapshot.nominated[node] = [pi for pi in nominated if pi.pod.uid != pod.uid]


class FailureHandler:
    """``handleSchedulingFailure``: the nominating info of a failed cycle, and the preemption it asks for."""

    def __init__(self, nominator: Nominator, cache: RunCache) -> None:
        self.nominator = nominator
        self.cache = cache

    def handle(self, pod: Pod, trace: Trace, p: Placement, workload: str | None, *, apply: bool) -> None:
        """The nominating info of the failed cycle: a nomination (after the victims' deletion, with ``apply``),
        a cleared nomination, or none kept as it was (PostFilter returned no result)."""
        pf = trace.post_filter
        if pf is None or trace.error:
            self.nominator.clear(pod)  # clearNominatedNode
            return
        if pf.nominated_node_name:
            p.preemption = Preemption(pf.nominated_node_name, list(pf.victims), apply)
            if apply:
                self.preempt(pod, pf.nominated_node_name, pf.victims)
                self.nominator.nominate(pod, pf.nominated_node_name, workload)
        elif pf.clears_nomination:
            self.nominator.clear(pod)

    def preempt(self, pod: Pod, node: str, victims: list[str]) -> None:
        """``prepareCandidateAsync``: delete the victims (those not already terminating), then clear the
        nominations of lower-priority pods on that node."""
        if not self.cache.delete_victims(pod, node, victims):
            return
        prio = pod.effective_priority
        for pi in list(self.cache.snapshot.nominated_pods_for_node(node)):
            if pi.pod.effective_priority < prio:
                self.nominator.clear(pi.pod)
