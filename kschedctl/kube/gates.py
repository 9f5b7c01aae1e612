"""The names of the feature gates kschedctl's scheduling rules read.

A gate is asked for by one of these constants, never by a string written at the call site:
``Features.enabled`` refuses a name that no supported release registers, so a misspelt gate
fails the tests instead of reading as "off". Every constant here is checked against the
generated gate tables (``kube.gate_tables``) by ``tests/test_versions.py``.
"""

from __future__ import annotations

DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
DRA_DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
DRA_DEVICE_TAINTS = "DRADeviceTaints"
DRA_DEVICE_TAINT_RULES = "DRADeviceTaintRules"
DRA_RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
DRA_SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
GANG_SCHEDULING = "GangScheduling"
GENERIC_WORKLOAD = "GenericWorkload"
IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING = "InPlacePodLevelResourcesVerticalScaling"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
POD_LEVEL_RESOURCES = "PodLevelResources"
STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
VOLUME_LIMIT_SCALING = "VolumeLimitScaling"

#: Every gate above: the ones whose value a run's rules can depend on.
READ_BY_RULES: tuple[str, ...] = (
    DYNAMIC_RESOURCE_ALLOCATION,
    DRA_DEVICE_BINDING_CONDITIONS,
    DRA_DEVICE_TAINTS,
    DRA_DEVICE_TAINT_RULES,
    DRA_RESOURCE_CLAIM_DEVICE_STATUS,
    DRA_SCHEDULER_FILTER_TIMEOUT,
    GANG_SCHEDULING,
    GENERIC_WORKLOAD,
    IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING,
    NODE_DECLARED_FEATURES,
    OPPORTUNISTIC_BATCHING,
    POD_LEVEL_RESOURCES,
    STORAGE_CAPACITY_SCORING,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    VOLUME_BIND_MOUNT_OPTIONS,
    VOLUME_LIMIT_SCALING,
)
