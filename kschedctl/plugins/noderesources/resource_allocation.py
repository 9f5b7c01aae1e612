"""The resource-allocation scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Both plugins score a node from two vectors, one entry per configured resource:
what would be requested on the node with the incoming pod placed there, and what
the node can allocate. This module builds those vectors the way kube-scheduler
v1.35 does and holds the scoring strategies (LeastAllocated, MostAllocated,
RequestedToCapacityRatio, and the balanced-allocation standard deviation), all
with Go's int64 / float64 arithmetic reproduced.

Rules that matter for exact agreement:

* NodeResourcesFit scores with "non-zero" requests: the incoming pod's containers
  without a cpu/memory request count as 100m / 200Mi, and the node side uses the
  node's non-zero aggregate for cpu and memory. BalancedAllocation uses the plain
  requests on both sides.
* The incoming pod's side follows the flags each constructor sets in v1.35:
  ``NewBalancedAllocation`` enables PodLevelResources and in-place resize, so it
  reads ``spec.resources`` and the resize status; ``NewFit`` builds its scorer
  from the strategy map and sets neither, so Fit's Score ignores pod-level
  requests (containers with their non-zero defaults, plus overhead) while its
  Filter and every node aggregate honour them.
* ephemeral-storage always uses the node's plain requested amount.
* A scalar resource (extended, hugepages, ``*kubernetes.io/*``) the pod does not
  request, or one the node does not list in allocatable, is left out (its
  allocatable entry stays 0 and the strategies skip it).
* Any resource whose allocatable is 0 is skipped by every strategy.

v1.36 (``noderesources/resource_allocation.go`` and ``balanced_allocation.go`` of v1.36.2) builds
the same vectors plus a third one, what the node requests without the pod, and its
BalancedAllocation compares the balance with and without the pod (``score_balance_change``);
the other strategies ignore the new vector.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kschedctl.framework.resources import (
    CPU,
    DEFAULT_RESIZE_RULE,
    EPHEMERAL_STORAGE,
    MEMORY,
    NON_ZERO_DEFAULTS,
    ResizeRule,
    is_scalar_resource_name,
    pod_requests,
)
from kschedctl.framework.status import MAX_NODE_SCORE, Code, Status
from kschedctl.kube.quantity import milli_value, value
from kschedctl.plugins.helper import (
    MAX_CUSTOM_PRIORITY_SCORE,
    FunctionShapePoint,
    build_broken_linear_function,
    go_div,
    go_round,
)

if TYPE_CHECKING:
    from kschedctl.framework.types import NodeInfo
    from kschedctl.snapshot.model import Pod

#: A strategy: (requested, allocatable) vectors -> node score.
ScorerFn = Callable[[list[int], list[int]], int]

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

MAX_UTILIZATION = 100


@dataclass(frozen=True, slots=True)
class WeightedResource:
    """One entry of a plugin's ``resources`` list (name and weight, defaults applied)."""

    name: str
    weight: int


# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------
def least_requested_score(requested: int, capacity: int) -> int:
    """Share of the resource left free, on a 0..100 scale (0 when over-committed)."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """Share of the resource in use, on a 0..100 scale (capped at the capacity)."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)


def _weighted_average(resources: Sequence[WeightedResource], per_resource: Callable[[int, int], int]) -> ScorerFn:
    weights = [r.weight for r in resources]

    def score(requested: list[int], allocatable: list[int]) -> int:
        node_score = 0
        weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += per_resource(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)

    return score


def least_allocated_scorer(resources: Sequence[WeightedResource]) -> ScorerFn:
    """LeastAllocated: weighted mean of the free share of each resource (integer division)."""
    return _weighted_average(resources, least_requested_score)


def most_allocated_scorer(resources: Sequence[WeightedResource]) -> ScorerFn:
    """MostAllocated: weighted mean of the used share of each resource (integer division)."""
    return _weighted_average(resources, most_requested_score)



def requested_to_capacity_ratio_scorer(
    resources: Sequence[WeightedResource], shape: Sequence[tuple[int, int]]
) -> ScorerFn:
    """RequestedToCapacityRatio: a broken-linear function of utilization per resource.

    ``shape`` holds (utilization, score) with scores on the 0..10 scale of the
    configuration; they are scaled to 0..100 here. Resources scoring 0 do not count
    towards the weight sum, and the mean is rounded (not truncated).
    """
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    points = [FunctionShapePoint(int(u), int(s) * factor) for u, s in shape]
    raw = build_broken_linear_function(points)
    weights = [r.weight for r in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return int(raw(MAX_UTILIZATION))
        return int(raw(go_div(requested * MAX_UTILIZATION, capacity)))

    def score(requested: list[int], allocatable: list[int]) -> int:
        node_score = 0
        weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            s = resource_score(requested[i], alloc)
            if s > 0:
                node_score += s * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_round(float(node_score) / float(weight_sum))

    return score


def balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """BalancedAllocation: (1 - standard deviation of the used fractions) * 100, truncated.

    Float64 operations are done one at a time in Go's order so results match bit for bit.
    """
    fractions: list[float] = []
    total = 0.0
    for i, alloc in enumerate(allocatable):
        if alloc == 0:
            continue
        f = float(requested[i]) / float(alloc)
        if f > 1:
            f = 1.0
        total = total + f
        fractions.append(f)
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / float(n)
        acc = 0.0
        for f in fractions:
            d = f - mean
            acc = acc + d * d
        std = math.sqrt(acc / float(n))
    return int((1 - std) * float(MAX_NODE_SCORE))


def without_pod(requested: list[int], allocatable: list[int], pod_request_list: list[int]) -> list[int]:
    """What the node's pods already request of each resource that is scored (0 for the others)."""
    return [q - p if a else 0 for q, a, p in zip(requested, allocatable, pod_request_list, strict=True)]


def balance_change_score(with_pod: int, without: int) -> int:
    """v1.36's BalancedAllocation: how much placing the pod changes the node's balance.

    Both balances are ``balanced_resource_scorer`` values (50..100 for fractions in 0..1); their
    difference (-50..50) is shifted and halved back onto 50..100 with Go's integer division, so
    an unchanged balance scores 75, a better one up to 100 and a worse one down to 50.
    """
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without, 2)


# --------------------------------------------------------------------------------------------
# the shared scorer
# --------------------------------------------------------------------------------------------
class ResourceAllocationScorer:
    """Builds the requested/allocatable vectors for a node and applies one strategy."""

    __slots__ = ("name", "pod_level_resources", "resize_rule", "resources", "scorer", "use_requested", "use_status")

    def __init__(
        self,
        name: str,
        resources: Sequence[WeightedResource],
        scorer: ScorerFn,
        *,
        use_requested: bool,
        pod_level_resources: bool,
        use_status: bool,
        resize_rule: ResizeRule = DEFAULT_RESIZE_RULE,
    ) -> None:
        self.name = name
        self.resources = list(resources)
        self.scorer = scorer
        #: True: plain requests (BalancedAllocation); False: non-zero cpu/memory (Fit).
        self.use_requested = use_requested
        #: The scorer's enablePodLevelResources: read ``spec.resources.requests``.
        self.pod_level_resources = pod_level_resources
        #: The scorer's enableInPlacePodVerticalScaling: read resized containers' status ...
        self.use_status = use_status
        #: ... as the version counts it.
        self.resize_rule = resize_rule

    def pod_request_list(self, pod: Pod) -> list[int]:
        """The incoming pod's request for each configured resource (overhead included)."""
        reqs = pod_requests(
            pod,
            non_missing=None if self.use_requested else NON_ZERO_DEFAULTS,
            use_status=self.use_status,
            skip_pod_level=not self.pod_level_resources,
            rule=self.resize_rule,
        )
        out: list[int] = []
        for r in self.resources:
            q = reqs.get(r.name, Fraction(0))
            out.append(milli_value(q) if r.name == CPU else value(q))
        return out

    def allocatable_and_requested(self, node_info: NodeInfo, resource: str, pod_request: int) -> tuple[int, int]:
        """(allocatable, requested including the pod) of one resource; (0, 0) leaves it out."""
        if pod_request == 0 and is_scalar_resource_name(resource):
            return 0, 0
        alloc = node_info.allocatable
        if resource == CPU:
            base = node_info.requested if self.use_requested else node_info.non_zero_requested
            return alloc.milli_cpu, base.milli_cpu + pod_request
        if resource == MEMORY:
            base = node_info.requested if self.use_requested else node_info.non_zero_requested
            return alloc.memory, base.memory + pod_request
        if resource == EPHEMERAL_STORAGE:
            return alloc.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
        a = alloc.scalar.get(resource)
        if a is not None:
            return a, node_info.requested.scalar.get(resource, 0) + pod_request
        return 0, 0

    def vectors(self, node_info: NodeInfo, pod_request_list: list[int]) -> tuple[list[int], list[int]]:
        """(requested with the pod, allocatable) of every configured resource; both 0 where left out."""
        n = len(self.resources)
        requested = [0] * n
        allocatable = [0] * n
        for i, r in enumerate(self.resources):
            a, q = self.allocatable_and_requested(node_info, r.name, pod_request_list[i])
            if a == 0:
                continue
            allocatable[i] = a
            requested[i] = q
        return requested, allocatable

    def score(self, node_info: NodeInfo, pod_request_list: list[int]) -> tuple[int, Status]:
        if not self.resources:
            return 0, Status(Code.ERROR, "resources not found")
        requested, allocatable = self.vectors(node_info, pod_request_list)
        return self.scorer(requested, allocatable), Status()


def score_balance_change(scorer: ResourceAllocationScorer, node_info: NodeInfo, pod_request_list: list[int]) -> tuple[int, Status]:
    """v1.36's BalancedAllocation Score of one node: the balance with the pod against the balance without it."""
    if not scorer.resources:
        return 0, Status(Code.ERROR, "resources not found")
    requested, allocatable = scorer.vectors(node_info, pod_request_list)
    allocated = without_pod(requested, allocatable, pod_request_list)
    with_pod = balanced_resource_scorer(requested, allocatable)
    return balance_change_score(with_pod, balanced_resource_scorer(allocated, allocatable)), Status()


def score_placement(scorer: ResourceAllocationScorer, placement_nodes: list[NodeInfo], pods: list[Pod]) -> int:
    """v1.36's ``scorePlacement``: the strategy over a whole placement (pod-group cycle).

    The placed pods' requests are summed, then every node of the placement adds its allocatable
    and what it already has requested. The sum so far stands in for the pod's request when a node
    decides whether to leave out a scalar resource, as upstream passes it along.
    """
    n = len(scorer.resources)
    requested = [0] * n
    for pod in pods:
        for i, q in enumerate(scorer.pod_request_list(pod)):
            requested[i] += q
    allocatable = [0] * n
    for ni in placement_nodes:
        with_group, alloc = scorer.vectors(ni, requested)
        for i in range(n):
            if alloc[i]:
                allocated = with_group[i] - requested[i]  # what the node already has requested
                allocatable[i] += alloc[i]
                requested[i] += allocated
    return scorer.scorer(requested, allocatable)


def is_best_effort(pod_request_list: list[int]) -> bool:
    """No request at all for any configured resource."""
    return all(q == 0 for q in pod_request_list)
