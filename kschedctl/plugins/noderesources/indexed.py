"""NodeResourcesFit and BalancedAllocation over a whole node list at once (their fast paths).

The per-node methods (``fit.fits_request``, ``ResourceAllocationScorer.score``) are the
reference; these functions compute the same verdicts and scores for many nodes with one
loop per resource instead of a few function calls per node:

* ``fit_statuses``: a node that has room for every request passes at once; any other
  node goes through Fit's own per-node verdict, so reasons and codes are the reference's;
* ``allocation_columns``: per configured resource, the node's allocatable and its
  requested amount with the pod placed there, exactly as ``allocatable_and_requested``;
* ``least_allocated_columns`` / ``most_allocated_columns`` / ``balanced_columns``: the
  strategies on those columns, with the same integer and float64 operations in the same
  order. Nodes whose columns need the general rule (a resource with no allocatable, more
  than two resources for the balanced score) are scored by the reference function;
* ``balance_change_columns``: v1.36's BalancedAllocation, the balance on the columns with the
  pod against the balance on the columns without it.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import truediv
from typing import TYPE_CHECKING, Protocol, TypeVar

from kschedctl.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kschedctl.framework.status import MAX_NODE_SCORE, Code, Status
from kschedctl.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    ResourceAllocationScorer,
    balanced_resource_scorer,
    score_balance_change,
)

if TYPE_CHECKING:
    from kschedctl.framework.types import NodeInfo

#: Per-resource columns: (allocatable per node, requested-with-the-pod per node).
Columns = list[tuple[list[int], list[int]]]


class PodTotals(Protocol):
    """The pod's requests as Fit's Filter compares them (``fit.PodRequest``)."""

    @property
    def milli_cpu(self) -> int: ...

    @property
    def memory(self) -> int: ...

    @property
    def ephemeral_storage(self) -> int: ...

    @property
    def scalar(self) -> tuple[tuple[str, int], ...]: ...


R = TypeVar("R", bound=PodTotals)


def fit_statuses(
    req: R, nodes: list[NodeInfo], verdict: Callable[[R, NodeInfo], Status | None], unresolvable: bool = True
) -> list[Status | None]:
    """NodeResourcesFit's Filter for each node (None: fits); ``verdict`` is Fit's per-node one, and
    ``unresolvable`` its rule for a request above the whole allocatable (``fit.insufficiency_status``).

    Without scalar requests (the ignored resources and groups are about those), a node short of room
    gets its status here, with the verdict's reasons in its order and its code; any other goes through
    ``verdict``."""
    if req.scalar:
        return [verdict(req, ni) for ni in nodes]
    cpu, mem, eph = req.milli_cpu, req.memory, req.ephemeral_storage
    out: list[Status | None] = []
    append = out.append
    shapes: dict[tuple[bool, bool, bool, bool, bool], tuple[Code, tuple[str, ...]]] = {}  # the nodes short alike
    for ni in nodes:
        a = ni.allocatable
        u = ni.requested
        room = len(ni.pods) < a.allowed_pod_number
        cpu_short = cpu > 0 and cpu > a.milli_cpu - u.milli_cpu
        mem_short = mem > 0 and mem > a.memory - u.memory
        eph_short = eph > 0 and eph > a.ephemeral_storage - u.ephemeral_storage
        if room and not (cpu_short or mem_short or eph_short):
            append(None)
            continue
        worst = unresolvable and (
            (cpu_short and cpu > a.milli_cpu) or (mem_short and mem > a.memory) or (eph_short and eph > a.ephemeral_storage)
        )
        key = (room, cpu_short, mem_short, eph_short, worst)
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = _shortage(*key)
        append(Status(shape[0], *shape[1]))
    return out


def _shortage(room: bool, cpu_short: bool, mem_short: bool, eph_short: bool, worst: bool) -> tuple[Code, tuple[str, ...]]:
    """The code and reasons ``fit.insufficiency_status(fit.fits_request(...))`` gives a node short of these
    (``worst``: a request above the node's whole allocatable, under the rule that makes it unresolvable)."""
    reasons = [] if room else ["Too many pods"]
    if cpu_short:
        reasons.append("Insufficient cpu")
    if mem_short:
        reasons.append("Insufficient memory")
    if eph_short:
        reasons.append("Insufficient ephemeral-storage")
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if worst else Code.UNSCHEDULABLE), tuple(reasons)


def allocation_columns(scorer: ResourceAllocationScorer, nodes: list[NodeInfo], pod_request_list: list[int]) -> Columns:
    """(allocatable, requested + pod) per node, for each of the scorer's resources; (0, 0) leaves it out."""
    cols: Columns = []
    n = len(nodes)
    plain = scorer.use_requested
    for r, q in zip(scorer.resources, pod_request_list, strict=True):
        name = r.name
        if q == 0 and is_scalar_resource_name(name):
            cols.append(([0] * n, [0] * n))
        elif name == CPU:
            cols.append((
                [ni.allocatable.milli_cpu for ni in nodes],
                [(ni.requested if plain else ni.non_zero_requested).milli_cpu + q for ni in nodes],
            ))
        elif name == MEMORY:
            cols.append((
                [ni.allocatable.memory for ni in nodes],
                [(ni.requested if plain else ni.non_zero_requested).memory + q for ni in nodes],
            ))
        elif name == EPHEMERAL_STORAGE:
            cols.append(([ni.allocatable.ephemeral_storage for ni in nodes],
                         [ni.requested.ephemeral_storage + q for ni in nodes]))
        else:
            alloc: list[int] = []
            used: list[int] = []
            for ni in nodes:
                a = ni.allocatable.scalar.get(name)
                alloc.append(0 if a is None else a)
                used.append(0 if a is None else ni.requested.scalar.get(name, 0) + q)
            cols.append((alloc, used))
    # a resource with no allocatable is left out with requested 0, as the reference does
    return [(a, us if all(a) else [u if x else 0 for x, u in zip(a, us, strict=True)]) for a, us in cols]


def _weighted_columns(per_resource: list[list[int]], allocs: list[list[int]], weights: list[int]) -> list[int]:
    """Weighted mean of per-resource scores over the resources a node can allocate (integer division)."""
    n = len(allocs[0]) if allocs else 0
    if all(all(a) for a in allocs) and all(w > 0 for w in weights):
        total_w = sum(weights)
        sums = [0] * n
        for col, w in zip(per_resource, weights, strict=True):
            sums = [s + v * w for s, v in zip(sums, col, strict=True)]
        return [s // total_w for s in sums]
    out = []
    for j in range(n):
        node_score = weight_sum = 0
        for col, a, w in zip(per_resource, allocs, weights, strict=True):
            if a[j] == 0:
                continue
            node_score += col[j] * w
            weight_sum += w
        out.append(node_score // weight_sum if weight_sum > 0 else 0)
    return out


def least_allocated_columns(cols: Columns, weights: list[int]) -> list[int]:
    """LeastAllocated: ``(capacity - requested) * 100 / capacity`` per resource (0 when over-committed)."""
    if len(cols) == 2 and all(cols[0][0]) and all(cols[1][0]) and min(weights) > 0:  # one pass, the usual case
        (a0s, q0s), (a1s, q1s) = cols
        w0, w1 = weights
        tw = w0 + w1
        return [
            (((a0 - q0) * MAX_NODE_SCORE // a0 if q0 <= a0 else 0) * w0
             + ((a1 - q1) * MAX_NODE_SCORE // a1 if q1 <= a1 else 0) * w1) // tw
            for a0, q0, a1, q1 in zip(a0s, q0s, a1s, q1s, strict=True)
        ]
    per = [
        [0 if a == 0 or q > a else (a - q) * MAX_NODE_SCORE // a for a, q in zip(allocs, reqs, strict=True)]
        for allocs, reqs in cols
    ]
    return _weighted_columns(per, [a for a, _ in cols], weights)


def most_allocated_columns(cols: Columns, weights: list[int]) -> list[int]:
    """MostAllocated: ``min(requested, capacity) * 100 / capacity`` per resource."""
    if len(cols) == 2 and all(cols[0][0]) and all(cols[1][0]) and min(weights) > 0:  # one pass, the usual case
        (a0s, q0s), (a1s, q1s) = cols
        w0, w1 = weights
        tw = w0 + w1
        return [
            ((a0 if q0 > a0 else q0) * MAX_NODE_SCORE // a0 * w0 + (a1 if q1 > a1 else q1) * MAX_NODE_SCORE // a1 * w1) // tw
            for a0, q0, a1, q1 in zip(a0s, q0s, a1s, q1s, strict=True)
        ]
    per = [
        [0 if a == 0 else (a if q > a else q) * MAX_NODE_SCORE // a for a, q in zip(allocs, reqs, strict=True)]
        for allocs, reqs in cols
    ]
    return _weighted_columns(per, [a for a, _ in cols], weights)


def balanced_columns(cols: Columns, reference: Callable[[list[int], list[int]], int]) -> list[int]:
    """BalancedAllocation: with two resources both allocatable, ``(1 - |f0 - f1| / 2) * 100``
    truncated (float64, the reference's operations); any other node by the reference function."""
    n = len(cols[0][0]) if cols else 0
    if len(cols) == 2 and all(cols[0][0]) and all(cols[1][0]):  # the common case, in one pass
        (a0s, q0s), (a1s, q1s) = cols
        return [
            int((1 - abs(((1.0 if x > 1 else x) - (1.0 if y > 1 else y)) / 2)) * float(MAX_NODE_SCORE))
            for x, y in zip(map(truediv, q0s, a0s), map(truediv, q1s, a1s), strict=True)
        ]
    out: list[int] = []
    two = len(cols) == 2
    for j in range(n):
        if two:
            a0, a1 = cols[0][0][j], cols[1][0][j]
            if a0 and a1:
                f0 = float(cols[0][1][j]) / float(a0)
                f1 = float(cols[1][1][j]) / float(a1)
                if f0 > 1:
                    f0 = 1.0
                if f1 > 1:
                    f1 = 1.0
                out.append(int((1 - abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE)))
                continue
        out.append(reference([c[1][j] for c in cols], [c[0][j] for c in cols]))
    return out


def score_columns(scorer: ResourceAllocationScorer, nodes: list[NodeInfo], pod_request_list: list[int]) -> tuple[list[int], Status]:
    """``scorer.score`` for each node."""
    if not scorer.resources:
        return [], Status(Code.ERROR, "resources not found")
    cols = allocation_columns(scorer, nodes, pod_request_list)
    if any(min(reqs, default=0) < 0 for _, reqs in cols):  # only the reference handles negative amounts
        return [scorer.score(ni, pod_request_list)[0] for ni in nodes], Status()
    weights = [r.weight for r in scorer.resources]
    if scorer.scorer is balanced_resource_scorer:
        return balanced_columns(cols, balanced_resource_scorer), Status()
    if scorer.name == LEAST_ALLOCATED:
        return least_allocated_columns(cols, weights), Status()
    if scorer.name == MOST_ALLOCATED:
        return most_allocated_columns(cols, weights), Status()
    fn = scorer.scorer
    n = len(nodes)
    return [fn([c[1][j] for c in cols], [c[0][j] for c in cols]) for j in range(n)], Status()


def _two_resource_changes(cols: Columns, pod_request_list: list[int]) -> list[int] | None:
    """``balance_change_columns`` for two resources every node can allocate, with the two-resource
    balance ``(1 - |f0 - f1| / 2) * 100`` computed inline before and after; None when an amount is
    negative (the reference path handles those)."""
    (a0s, q0s), (a1s, q1s) = cols
    p0, p1 = pod_request_list
    if p0 < 0 or p1 < 0 or min(q0s) < p0 or min(q1s) < p1:
        return None
    half = MAX_NODE_SCORE // 2
    scale = float(MAX_NODE_SCORE)
    out: list[int] = []
    append = out.append
    for a0, q0, a1, q1 in zip(a0s, q0s, a1s, q1s, strict=True):
        x = q0 / a0
        y = q1 / a1
        xb = (q0 - p0) / a0
        yb = (q1 - p1) / a1
        if x > 1:
            x = 1.0
        if y > 1:
            y = 1.0
        if xb > 1:
            xb = 1.0
        if yb > 1:
            yb = 1.0
        after = int((1 - abs((x - y) / 2)) * scale)
        before = int((1 - abs((xb - yb) / 2)) * scale)
        append(half + (half + after - before) // 2)  # both balances are 50..100: // is Go's /
    return out


def balance_change_columns(
    scorer: ResourceAllocationScorer, nodes: list[NodeInfo], pod_request_list: list[int]
) -> tuple[list[int], Status]:
    """``score_balance_change`` for each node (v1.36's BalancedAllocation)."""
    if not scorer.resources:
        return [], Status(Code.ERROR, "resources not found")
    with_pod = allocation_columns(scorer, nodes, pod_request_list)
    if len(with_pod) == 2 and all(with_pod[0][0]) and all(with_pod[1][0]):  # the common case, in one pass
        changes = _two_resource_changes(with_pod, pod_request_list)
        if changes is not None:
            return changes, Status()
    without = [
        (allocs, [u - q if a else 0 for a, u in zip(allocs, used, strict=True)])
        for (allocs, used), q in zip(with_pod, pod_request_list, strict=True)
    ]
    if any(min(reqs, default=0) < 0 for _, reqs in with_pod + without):  # only the reference handles negative amounts
        return [score_balance_change(scorer, ni, pod_request_list)[0] for ni in nodes], Status()
    after = balanced_columns(with_pod, balanced_resource_scorer)
    before = balanced_columns(without, balanced_resource_scorer)
    half = MAX_NODE_SCORE // 2  # balance_change_score inline: both balances are 50..100 here, so // is Go's /
    return [half + (half + w - b) // 2 for w, b in zip(after, before, strict=True)], Status()
