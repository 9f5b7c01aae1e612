"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly.

For each configured resource (cpu and memory by default) the fraction
requested/allocatable is computed with the pod placed on the node (plain requests,
no non-zero defaults; fractions capped at 1). A node's *balance* is ``(1 - std) * 100``
truncated to an integer, where std is the population standard deviation of the
fractions (half the difference when there are two). Pods requesting none of the
configured resources make PreScore return Skip, so the plugin does not score them.

The score changed in v1.36 with no feature gate; both rules are here, chosen when the
plugin is built from ``handle.features``:

* up to v1.35 (``noderesources/balanced_allocation.go`` of v1.35.4) the score is the balance
  with the pod placed;
* from v1.36 (the same file in v1.36.2) it is the change of balance the pod causes: the
  balance with the pod minus the balance without it, mapped onto 50..100 (75: unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedctl.config.args import NodeResourcesBalancedAllocationArgs
from kschedctl.config.field import aggregate
from kschedctl.config.validation import validate_node_resources_balanced_allocation_args
from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.resources import resize_rule
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.kube.rules import BALANCED_ALLOCATION_CHANGE
from kschedctl.plugins.noderesources.fit import request_signature
from kschedctl.plugins.noderesources.indexed import balance_change_columns, score_columns
from kschedctl.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    WeightedResource,
    balanced_resource_scorer,
    is_best_effort,
    score_balance_change,
)

if TYPE_CHECKING:
    from kschedctl.framework.types import NodeInfo
    from kschedctl.snapshot.model import Pod

NAME = "NodeResourcesBalancedAllocation"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = NodeResourcesBalancedAllocationArgs

_PRE_SCORE_KEY: StateKey[list[int]] = StateKey("PreScore" + NAME)


class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin (PreScore, Score)."""

    def __init__(self, resources: list[WeightedResource], handle: Handle) -> None:
        self.name = NAME
        self.handle = handle
        self.scorer = ResourceAllocationScorer(
            NAME, resources, balanced_resource_scorer, use_requested=True, pod_level_resources=True, use_status=True,
            resize_rule=resize_rule(handle.features),
        )
        #: v1.36 scores the change of balance, earlier versions the balance after placing the pod.
        self.scores_change = handle.features.follows(BALANCED_ALLOCATION_CHANGE)
        self._score_node = self._balance_change if self.scores_change else self.scorer.score
        self._score_columns = balance_change_columns if self.scores_change else score_columns

    def _balance_change(self, node_info: NodeInfo, reqs: list[int]) -> tuple[int, Status]:
        return score_balance_change(self.scorer, node_info, reqs)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        reqs = self.scorer.pod_request_list(pod)
        if is_best_effort(reqs):
            return Status.skip()
        state.write(_PRE_SCORE_KEY, reqs)
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_request_list(pod)
            if is_best_effort(reqs):
                return 0, Status()
        return self._score_node(node_info, reqs)

    def score_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the score depends on the pod's requests only (same fragment as Fit)."""
        return [SignFragment(signers.RESOURCES, request_signature(pod))], Status()

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        """``score`` for a list of nodes."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_request_list(pod)
            if is_best_effort(reqs):
                return [0] * len(nodes), Status()
        return self._score_columns(self.scorer, nodes, reqs)


def _resources(args: NodeResourcesBalancedAllocationArgs) -> list[WeightedResource]:
    """Defaulting: an empty list means cpu and memory; weight 0 means 1."""
    if not args.resources:
        return [WeightedResource("cpu", 1), WeightedResource("memory", 1)]
    return [WeightedResource(r.name, r.weight or 1) for r in args.resources]


def validate_args(resources: list[WeightedResource]) -> str | None:
    """``ValidateNodeResourcesBalancedAllocationArgs`` as ``NewBalancedAllocation`` runs it; the message or None."""
    raw = {"resources": [{"name": r.name, "weight": r.weight} for r in resources]}
    errs = validate_node_resources_balanced_allocation_args(None, raw)
    return aggregate(errs) if errs else None


def new(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> BalancedAllocation:
    if args is None:
        args = NodeResourcesBalancedAllocationArgs()
    resources = _resources(args)
    err = validate_args(resources)
    if err:
        raise ValueError(err)
    return BalancedAllocation(resources, handle)
