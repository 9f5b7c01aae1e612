"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

In v1.35 the plugin has only a Filter (no PreFilter, so it never narrows the node
list up front): every other node is rejected with UnschedulableAndUnresolvable.
A pod with an empty nodeName fits every node.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.model import Pod

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.node.name


class NodeName:
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if fits(pod, node_info):
            return Status()
        return Status.unresolvable(ERR_REASON)

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on ``spec.nodeName`` only."""
        return [SignFragment(signers.NODE_NAME, pod.node_name)], Status()

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """``filter`` for a list of nodes (None: Success)."""
        want = pod.node_name
        if not want:
            return [None] * len(nodes)
        return [None if ni.node.name == want else Status.unresolvable(ERR_REASON) for ni in nodes]


def new(args: Any, handle: Handle) -> NodeName:
    return NodeName()
