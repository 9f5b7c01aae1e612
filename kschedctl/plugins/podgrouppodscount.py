"""PodGroupPodsCount (v1.36, alpha): prefer the placement that schedules most of a pod group.

Upstream: ``pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go``. A
PlacementScore plugin: a placement scores the group's already scheduled pods plus the pods the
placement proposes to place; NormalizePlacementScore scales the scores to 0..100 by the highest
one (an Error when no placement places any pod). It is in the default plugins (weight 1) only
with ``TopologyAwareWorkloadScheduling`` on; only a pod-group cycle calls it.
"""

from __future__ import annotations

from kschedctl.framework.interfaces import Handle
from kschedctl.framework.podgroups import PodGroup, PodGroupAssignments, group_state
from kschedctl.framework.status import MAX_NODE_SCORE, Status

NAME = "PodGroupPodsCount"

MIN_SCORE = 0


class PodGroupPodsCount:
    """The PodGroupPodsCount plugin (PlacementScore with its normalization)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score_placement(self, pod_group: PodGroup, assignments: PodGroupAssignments) -> tuple[int, Status]:
        scheduled = group_state(self.handle.snapshot, pod_group.namespace, pod_group.name).scheduled_pods_count()
        return scheduled + len(assignments.proposed), Status()

    def normalize_placement_scores(self, pod_group: PodGroup, scores: list[int]) -> Status:
        """Scale in place to 0..100 by the highest score (integer arithmetic)."""
        top = max(scores, default=0)
        if top <= 0:
            return Status.as_error("no pods from pod group are assigned to any of the candidate placements")
        for i, s in enumerate(scores):
            scores[i] = MIN_SCORE + s * (MAX_NODE_SCORE - MIN_SCORE) // top
        return Status()


def new(args: None, handle: Handle) -> PodGroupPodsCount:
    return PodGroupPodsCount(handle)
