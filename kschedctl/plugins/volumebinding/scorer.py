"""VolumeBinding's Score under the StorageCapacityScoring gate: how full a node's storage would get.

With the gate on (alpha and off by default in v1.35 and v1.36, beta and on in v1.37), kube-scheduler scores each feasible
node by the storage utilization the pod's volumes would cause there, per storage class:

* when Filter matched some of the pod's claims to existing PVs on that node, only those static
  bindings count: a class's utilization is the claims' requests over the chosen PVs' capacities;
* otherwise the dynamic provisions count, those whose class was checked against a
  CSIStorageCapacity on the node: the claims' requests over that object's ``capacity`` (the
  capacity is the node's, so it is taken once per class while the requests add up);
* a node where the pod has nothing to bind, or none of the above, scores 0.

Each class's utilization (0..100, a full or unknown capacity counting as 100) goes through the
configured broken-linear shape, whose scores (0..10 in the configuration) are scaled to 0..100;
the node's score is the mean over classes, rounded half away from zero. There is no NormalizeScore.

Upstream model: ``pkg/scheduler/framework/plugins/volumebinding/scorer.go`` and the Score method of
``volume_binding.go`` (identical in v1.35.4 and v1.36.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kschedctl.config.args import UtilizationShapePoint
from kschedctl.errors import ConfigError
from kschedctl.framework.status import MAX_NODE_SCORE
from kschedctl.plugins.helper import (
    MAX_CUSTOM_PRIORITY_SCORE,
    FunctionShapePoint,
    build_broken_linear_function,
    go_div,
    go_round,
)
from kschedctl.plugins.volumebinding.binder import PodVolumes
from kschedctl.plugins.volumebinding.storage import (
    claim_request,
    quantity_of,
    quantity_value,
    volume_capacity,
)

MAX_UTILIZATION = 100

#: What defaulting gives an empty shape when the gate is on: emptier nodes score higher.
DEFAULT_SHAPE: tuple[tuple[int, int], ...] = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))


@dataclass
class ClassUsage:
    """The bytes the pod's volumes of one storage class would take on a node, and the room there is."""

    requested: int = 0
    capacity: int = 0


#: A node's per-class usage -> its score (0..MAX_NODE_SCORE).
CapacityScorer = Callable[[dict[str, ClassUsage]], int]


def shape_errors(shape: Sequence[UtilizationShapePoint]) -> list[str]:
    """Why a configured shape cannot be used (the rules of the args validation, reported without a parent path)."""
    if not shape:
        return ["shape: Required value: at least one point must be specified"]
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(f"shape[{i}].utilization: Invalid value: {shape[i].utilization}: values must be sorted in increasing order")
            break
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= MAX_UTILIZATION:
            errs.append(f"shape[{i}].utilization: Invalid value: {p.utilization}: not in valid range [0, 100]")
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(f"shape[{i}].score: Invalid value: {p.score}: not in valid range [0, 10]")
    return errs


def capacity_scorer(shape: Sequence[UtilizationShapePoint]) -> CapacityScorer:
    """The scorer of a configured shape (an empty one is the default shape, as defaulting would make it).

    Raises ConfigError for a shape the configuration's validation would refuse."""
    points = list(shape) or [UtilizationShapePoint(utilization=u, score=s) for u, s in DEFAULT_SHAPE]
    errs = shape_errors(points)
    if errs:
        raise ConfigError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    curve = build_broken_linear_function([FunctionShapePoint(p.utilization, p.score * factor) for p in points])

    def class_score(usage: ClassUsage) -> int:
        if usage.capacity == 0 or usage.requested > usage.capacity:
            return int(curve(MAX_UTILIZATION))
        return int(curve(go_div(usage.requested * MAX_UTILIZATION, usage.capacity)))

    def node_score(usage_by_class: dict[str, ClassUsage]) -> int:
        if not usage_by_class:
            return 0
        total = sum(class_score(u) for u in usage_by_class.values())
        return go_round(total / len(usage_by_class))

    return node_score


def usage_by_class(volumes: PodVolumes) -> dict[str, ClassUsage]:
    """What the pod's volumes would use on the node Filter found ``volumes`` for, per storage class.

    Static bindings, when there are any, are all that counts: grouped by the PV's
    ``spec.storageClassName``, requests and PV capacities add up. Otherwise each provision checked
    against a CSIStorageCapacity counts under the claim's ``spec.storageClassName``: requests add up,
    the capacity is that object's ``capacity`` (a missing one counts as 0, a full node; upstream would
    dereference a nil pointer there)."""
    out: dict[str, ClassUsage] = {}
    if volumes.static_bindings:
        for b in volumes.static_bindings:
            usage = out.setdefault(str(b.pv.spec.get("storageClassName") or ""), ClassUsage())
            usage.requested += quantity_value(claim_request(b.pvc))
            usage.capacity += quantity_value(volume_capacity(b.pv))
        return out
    for d in volumes.dynamic_provisions:
        if d.node_capacity is None:
            continue
        usage = out.setdefault(str(d.pvc.spec.get("storageClassName") or ""), ClassUsage())
        usage.capacity = quantity_value(quantity_of(d.node_capacity.raw.get("capacity")))
        usage.requested += quantity_value(claim_request(d.pvc))
    return out
