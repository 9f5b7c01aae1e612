"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable: true``).

A cordoned node is rejected (UnschedulableAndUnresolvable, so preemption does not
try it) unless the pod tolerates the taint ``node.kubernetes.io/unschedulable``
with effect NoSchedule; the check uses the flag, not the node's actual taints.

Upstream model: ``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``.
"""

from __future__ import annotations

import operator

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle, NodeVerdict
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.snapshot.model import Pod, Taint, tolerations_tolerate

NAME = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: What a pod must tolerate to land on a cordoned node.
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _cordoned(node_info: NodeInfo) -> Status | None:
    return Status.unresolvable(ERR_REASON_UNSCHEDULABLE) if node_info.node.unschedulable else None


class NodeUnschedulable(NodeVerdictFilter):
    name = NAME
    only_when = operator.attrgetter("node.unschedulable")

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict | None:
        """Filter: a cordoned node is rejected unless the pod tolerates the unschedulable taint."""
        if tolerations_tolerate(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return _cordoned

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's tolerations only."""
        return [SignFragment(signers.TOLERATIONS, signers.tolerations(pod))], Status()


def new(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
