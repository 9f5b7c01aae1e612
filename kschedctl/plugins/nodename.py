"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

In v1.35 the plugin has only a Filter (no PreFilter, so it never narrows the node
list up front): every other node is rejected with UnschedulableAndUnresolvable.
A pod with an empty nodeName fits every node.

Upstream model: ``pkg/scheduler/framework/plugins/nodename/node_name.go``.
"""

from __future__ import annotations

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle, NodeVerdict
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.snapshot.model import Pod

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.node.name


class NodeName(NodeVerdictFilter):
    name = NAME

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict | None:
        """Filter: only the node the pod names fits (any node when it names none)."""
        if not pod.node_name:
            return None

        def verdict(node_info: NodeInfo) -> Status | None:
            return None if fits(pod, node_info) else Status.unresolvable(ERR_REASON)

        return verdict

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on ``spec.nodeName`` only."""
        return [SignFragment(signers.NODE_NAME, pod.node_name)], Status()


def new(args: None, handle: Handle) -> NodeName:
    return NodeName()
