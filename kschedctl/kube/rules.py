"""The scheduling rules that changed between Kubernetes minor versions with no feature gate.

Most differences between versions reach kube-scheduler through feature gates; a few came with
a release and nothing to switch them: a message's words, a status code, a score formula, the
tie-break. Each is one row here, named, with the minor version that brought it. The code that
holds both rules side by side asks ``Features.follows(ROW)``; ``diff-versions`` cites the same
row (``config.changes`` gives it its plugins, words and trigger), so the switch and its
attribution cannot drift apart. ``tests/test_versions.py`` checks that every row is both asked
for somewhere and cited.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VersionRule:
    """A rule that holds from ``since`` (a minor version, 34 for v1.34) on."""

    name: str
    since: int


TAINT_TOLERATION_MESSAGE = VersionRule("TaintTolerationMessage", 34)
FIT_UNRESOLVABLE = VersionRule("FitUnresolvable", 34)
READ_WRITE_ONCE_POD_MESSAGE = VersionRule("ReadWriteOncePodMessage", 34)
NODE_PORTS_SIDECARS = VersionRule("NodePortsSidecars", 34)
DYNAMIC_RESOURCES_SCORE = VersionRule("DynamicResourcesScore", 35)
DETERMINISTIC_TIE_BREAK = VersionRule("DeterministicTieBreak", 35)
BALANCED_ALLOCATION_CHANGE = VersionRule("BalancedAllocationChange", 36)
NODE_DECLARED_FEATURES_TABLE = VersionRule("NodeDeclaredFeaturesTable", 36)
POD_GROUP_CYCLE = VersionRule("PodGroupCycle", 36)
PERMIT_WAIT_MESSAGE = VersionRule("PermitWaitMessage", 36)
IMAGE_LOCALITY_IMAGE_VOLUMES = VersionRule("ImageLocalityImageVolumes", 36)
#: v1.37 removed the GangScheduling gate: GenericWorkload brings the GangScheduling plugin.
GANG_SCHEDULING_BY_GENERIC_WORKLOAD = VersionRule("GangSchedulingByGenericWorkload", 37)
#: v1.37's extension point for a PodGroup that cannot be scheduled (configuration field podGroupPostFilter).
POD_GROUP_POST_FILTER = VersionRule("PodGroupPostFilter", 37)
RESIZE_REQUESTS_MAX_OF_TOTALS = VersionRule("ResizeRequestsMaxOfTotals", 37)
IMAGE_LOCALITY_VOLUME_THRESHOLD = VersionRule("ImageLocalityVolumeThreshold", 37)
NODE_DECLARED_FEATURES_BIND_MOUNTS = VersionRule("NodeDeclaredFeaturesBindMounts", 37)
GATED_PODS_NOMINATED = VersionRule("GatedPodsNominated", 37)

#: Every row, oldest first.
ALL: tuple[VersionRule, ...] = (
    TAINT_TOLERATION_MESSAGE,
    FIT_UNRESOLVABLE,
    READ_WRITE_ONCE_POD_MESSAGE,
    NODE_PORTS_SIDECARS,
    DYNAMIC_RESOURCES_SCORE,
    DETERMINISTIC_TIE_BREAK,
    BALANCED_ALLOCATION_CHANGE,
    NODE_DECLARED_FEATURES_TABLE,
    POD_GROUP_CYCLE,
    PERMIT_WAIT_MESSAGE,
    IMAGE_LOCALITY_IMAGE_VOLUMES,
    GANG_SCHEDULING_BY_GENERIC_WORKLOAD,
    POD_GROUP_POST_FILTER,
    RESIZE_REQUESTS_MAX_OF_TOTALS,
    IMAGE_LOCALITY_VOLUME_THRESHOLD,
    NODE_DECLARED_FEATURES_BIND_MOUNTS,
    GATED_PODS_NOMINATED,
)
