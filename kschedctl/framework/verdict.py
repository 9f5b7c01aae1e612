"""One Filter verdict per node, from which both Filter paths are derived.

Many Filter plugins decide a node from the pod and that node alone, after reading the
pod (and maybe their PreFilter state) once. Such a plugin subclasses ``NodeVerdictFilter``
and writes only ``node_verdict(state, pod)``: what the pod needs, read once, returned as a
function of the node (``NodeVerdict``: None when the node passes, else its status), or None
when every node passes. ``filter`` (the per-node Filter, as upstream calls it) and
``filter_nodes`` (``BatchFilterPlugin``, the framework's whole-list path) are both built from
it, so the two paths cannot disagree and each rule and message is written once.

A plugin whose verdict can only reject nodes with some property (a taint, a cordon) may also
set ``only_when``, a C-level getter such as ``operator.attrgetter("node.taints")``: nodes for
which it is falsy pass without a Python call, which keeps the whole-list path as fast as a
hand-written comprehension on 5,000 nodes. It is a precondition of the verdict, not a second rule:
the verdict must also pass every node for which it is falsy (tests/test_fast_paths.py checks both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kschedctl.framework.status import Status

if TYPE_CHECKING:
    from kschedctl.framework.cycle_state import CycleState
    from kschedctl.framework.interfaces import NodeVerdict
    from kschedctl.framework.types import NodeInfo
    from kschedctl.snapshot.model import Pod


class NodeVerdictFilter:
    """Base class of a Filter plugin given by one per-node verdict (see the module docstring)."""

    name: str
    #: Nodes for which this is falsy pass without the verdict being called (None: every node is judged).
    only_when: Callable[[NodeInfo], object] | None = None

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict | None:
        """The pod's verdict as a function of the node, or None when the pod passes every node.
        Each rejection must be a new Status (the framework sets its plugin)."""
        raise NotImplementedError

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        verdict = self.node_verdict(state, pod)
        guard = self.only_when
        st = None if verdict is None or (guard is not None and not guard(node_info)) else verdict(node_info)
        return Status() if st is None else st

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        verdict = self.node_verdict(state, pod)
        if verdict is None:
            return [None] * len(nodes)
        guard = self.only_when
        if guard is None:
            return list(map(verdict, nodes))
        return [verdict(ni) if guard(ni) else None for ni in nodes]
