"""GPUBinPack: keep GPU pods off nodes in maintenance and pack them onto the fullest GPU nodes.

An example of an out-of-tree kschedctl plugin with a Filter, a Score and pydantic args,
written against kschedctl's plugin API (docs/plugin-api.md in the kschedctl repository):

* PreFilter reads how many GPUs (``args.resource``, ``nvidia.com/gpu`` by default) the pod
  requests into CycleState; a pod that requests none makes it return Skip, so this plugin's
  Filter does not run for that pod.
* Filter rejects a node carrying the maintenance label (``args.maintenanceLabel``) with
  UnschedulableAndUnresolvable: evicting pods would not take the node out of maintenance.
* PreScore returns Skip for a pod without GPUs, so Score does not run for it either.
* Score bin-packs: the share of the node's GPUs that would be in use with the pod placed,
  0..100 (``MAX_NODE_SCORE``): a node whose GPUs are already busy scores higher than an idle
  one, so whole nodes stay free for large jobs. Scores are already in 0..100, so the plugin
  has no NormalizeScore (``score_extensions`` returns None).

The module exposes what kschedctl's loader looks for: ``NAME``, ``new(args, handle)`` and
``ARGS_MODEL`` (the pydantic model kschedctl validates ``pluginConfig`` args with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.status import MAX_NODE_SCORE, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.snapshot.model import Pod

NAME = "GPUBinPack"

#: The Filter's reason; one fixed text, so that the FitError counts every such node together.
ERR_MAINTENANCE = "node(s) had GPUs in maintenance"


class GPUBinPackArgs(BaseModel):
    """``pluginConfig`` args of GPUBinPack (unknown fields are rejected, as kube-scheduler's strict decoding)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: The extended resource that counts as a GPU.
    resource: str = Field(default="nvidia.com/gpu", min_length=1)
    #: A node with this label (any value) is in maintenance: GPU pods must not land there.
    maintenance_label: str = Field(default="gpu.example.com/maintenance", min_length=1, alias="maintenanceLabel")


ARGS_MODEL = GPUBinPackArgs


@dataclass(frozen=True)
class GPURequest:
    """What PreFilter found: how many GPUs the pod asks for (immutable, so ``clone`` returns itself)."""

    count: int

    def clone(self) -> GPURequest:
        return self


REQUEST_KEY: StateKey[GPURequest] = StateKey("PreFilterGPUBinPack")


class GPUBinPack:
    name = NAME

    def __init__(self, args: GPUBinPackArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    def gpus_requested(self, pod: Pod) -> int:
        """The pod's GPU request as the scheduler computes it (containers, init containers, overhead)."""
        return PodInfo.of(pod).resource.resource.get(self.args.resource)

    # PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        count = self.gpus_requested(pod)
        if count == 0:
            return None, Status.skip()  # no GPUs: this plugin's Filter is skipped for the pod
        state.write(REQUEST_KEY, GPURequest(count))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None  # the Filter does not depend on other pods: nothing to update for preemption

    # Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if self.args.maintenance_label in node_info.node.labels:
            return Status.unresolvable(ERR_MAINTENANCE)
        return Status()

    # PreScore / Score -----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        if state.get(REQUEST_KEY) is None and self.gpus_requested(pod) == 0:
            return Status.skip()
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        capacity = node_info.allocatable.get(self.args.resource)
        if capacity <= 0:
            return 0, Status()
        request = state.get(REQUEST_KEY)
        wanted = request.count if request is not None else self.gpus_requested(pod)
        in_use = node_info.requested.get(self.args.resource) + wanted
        return min(in_use, capacity) * MAX_NODE_SCORE // capacity, Status()

    def score_extensions(self) -> None:
        return None  # scores are already in 0..MAX_NODE_SCORE

    # explanation for detailed traces (-o wide/json) -------------------------------------------
    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        return {
            "gpus": node_info.allocatable.get(self.args.resource),
            "gpusInUse": node_info.requested.get(self.args.resource),
            "maintenance": self.args.maintenance_label in node_info.node.labels,
        }


def new(args: GPUBinPackArgs | None, handle: Handle) -> GPUBinPack:
    return GPUBinPack(args if args is not None else GPUBinPackArgs(), handle)
