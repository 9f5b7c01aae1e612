"""StickyNode: keep a workload's pods on the node its owner is pinned to.

An example of an out-of-tree kschedctl plugin, written against the same plugin
API as the in-tree plugins (docs/plugin-api.md in the kschedctl repository):

* PreFilter finds the pod's controller (a ReplicaSet or StatefulSet, by default)
  and reads the node it is pinned to from an annotation on it, into CycleState.
  A pod without such an owner, or whose owner is not pinned yet, makes PreFilter
  return Skip, so the Filter is skipped for it.
* Filter rejects every node but the pinned one (UnschedulableAndUnresolvable:
  evicting pods elsewhere would not help).
* PostBind is where a real scheduler plugin would pin an unpinned owner to the node
  its first pod was bound to. kschedctl never writes, so PostBind only says what it
  would record; the trace shows that sentence.

The module exposes what kschedctl's loader looks for: ``NAME``, ``new(args, handle)``
and ``ARGS_MODEL`` (the pydantic model kschedctl validates ``pluginConfig`` args with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.model import KubeObject, Pod

NAME = "StickyNode"

DEFAULT_ANNOTATION = "sticky.kschedctl.io/node"

#: The reason every other node gets; one text for all nodes, so the FitError histogram counts them together.
ERR_REASON = "node(s) didn't match the node the pod's owner is pinned to"


class StickyNodeArgs(BaseModel):
    """``pluginConfig`` args of StickyNode (unknown fields are rejected, as kube-scheduler's strict decoding)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: The owner's annotation that names the node.
    annotation: str = Field(default=DEFAULT_ANNOTATION, min_length=1)
    #: Controller kinds whose pods are kept together.
    owner_kinds: list[str] = Field(default_factory=lambda: ["ReplicaSet", "StatefulSet"], alias="ownerKinds")


ARGS_MODEL = StickyNodeArgs


@dataclass(frozen=True)
class Pin:
    """What PreFilter found: the owner ("Kind namespace/name") and the node it is pinned to, if any."""

    owner: str
    node: str | None

    def clone(self) -> Pin:
        return self  # immutable


PIN_KEY: StateKey[Pin] = StateKey("PreFilterStickyNode")


class StickyNode:
    name = NAME

    def __init__(self, args: StickyNodeArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    def _owner(self, pod: Pod) -> KubeObject | None:
        ref = pod.meta.controller_ref()
        if ref is None or ref.get("kind") not in self.args.owner_kinds:
            return None
        return self.handle.cluster.get(str(ref["kind"]), pod.namespace, str(ref.get("name") or ""))

    # PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        owner = self._owner(pod)
        if owner is None:
            return None, Status.skip()
        node = owner.meta.annotations.get(self.args.annotation) or None
        state.write(PIN_KEY, Pin(f"{owner.kind} {owner.key}", node))
        if node is None:
            return None, Status.skip()  # not pinned yet: every node is fine; PostBind would pin it
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    # Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        pin = state.get(PIN_KEY)
        if pin is None or pin.node is None or node_info.name == pin.node:
            return Status()
        return Status.unresolvable(ERR_REASON)

    # PostBind -------------------------------------------------------------------------------
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> str | None:
        pin = state.get(PIN_KEY)
        if pin is None:
            return None
        if pin.node == node_name:
            return f"{pin.owner} is already pinned to {node_name}: nothing to record"
        return f"would annotate {pin.owner} with {self.args.annotation}={node_name} (dry run: not written)"

    # explanation for detailed traces (-o wide/json) -------------------------------------------
    def explain(self, state: CycleState) -> dict[str, Any]:
        pin = state.get(PIN_KEY)
        if pin is None:
            return {}
        return {"owner": pin.owner, "pinnedNode": pin.node, "annotation": self.args.annotation}


def new(args: StickyNodeArgs | None, handle: Handle) -> StickyNode:
    return StickyNode(args if args is not None else StickyNodeArgs(), handle)
