"""Plugin arguments of KubeSchedulerConfiguration v1, with v1.35 defaults.

Each model mirrors one ``*Args`` kind of ``kubescheduler.config.k8s.io/v1``;
field names are the Python spelling, aliases are the YAML spelling. Defaults are
the ones ``SetDefaults_*Args`` applies. Validation that kube-scheduler performs
lives in ``kschedctl.config.validation``.

Upstream model: ``k8s.io/kube-scheduler config/v1/types_pluginargs.go with pkg/scheduler/apis/config/v1/defaults.go``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Args(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    kind: str | None = None
    api_version: str | None = Field(default=None, alias="apiVersion")


class ResourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: Go's zero values for fields left out (kube-scheduler validates neither a name nor a point's score).
    name: str = ""
    weight: int = 1


class UtilizationShapePoint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    utilization: int = 0
    score: int = 0


class RequestedToCapacityRatioParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shape: list[UtilizationShapePoint] = Field(default_factory=list)


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    type: str = "LeastAllocated"
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(default=None, alias="requestedToCapacityRatio")


class NodeResourcesFitArgs(_Args):
    ignored_resources: list[str] = Field(default_factory=list, alias="ignoredResources")
    ignored_resource_groups: list[str] = Field(default_factory=list, alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")


class NodeResourcesBalancedAllocationArgs(_Args):
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)


class NodeAffinityArgs(_Args):
    #: A v1.NodeAffinity object, kept raw and parsed by the plugin.
    added_affinity: dict[str, Any] | None = Field(default=None, alias="addedAffinity")


class InterPodAffinityArgs(_Args):
    hard_pod_affinity_weight: int = Field(default=1, alias="hardPodAffinityWeight")
    ignore_preferred_terms_of_existing_pods: bool = Field(default=False, alias="ignorePreferredTermsOfExistingPods")


class PodTopologySpreadArgs(_Args):
    #: v1.TopologySpreadConstraint objects, kept raw and parsed by the plugin.
    default_constraints: list[dict[str, Any]] = Field(default_factory=list, alias="defaultConstraints")
    defaulting_type: str = Field(default="System", alias="defaultingType")


class DefaultPreemptionArgs(_Args):
    min_candidate_nodes_percentage: int = Field(default=10, alias="minCandidateNodesPercentage")
    min_candidate_nodes_absolute: int = Field(default=100, alias="minCandidateNodesAbsolute")


class VolumeBindingArgs(_Args):
    bind_timeout_seconds: int = Field(default=600, alias="bindTimeoutSeconds")
    #: Only used when StorageCapacityScoring is enabled (alpha in v1.35, off by default).
    shape: list[UtilizationShapePoint] = Field(default_factory=list)


class DynamicResourcesArgs(_Args):
    filter_timeout: str | None = Field(default="10s", alias="filterTimeout")
    binding_timeout: str | None = Field(default=None, alias="bindingTimeout")


#: Plugin name -> its args model (plugins without args are absent).
ARGS_MODELS: dict[str, type[BaseModel]] = {
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeAffinity": NodeAffinityArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "VolumeBinding": VolumeBindingArgs,
    "DynamicResources": DynamicResourcesArgs,
}
