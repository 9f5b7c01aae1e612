"""The runtime view of a scheduling profile and of an extender: what the framework is built from.

A KubeSchedulerConfiguration is decoded, defaulted and validated by ``kschedctl.config``; what
comes out for each profile is a plain description of which plugin runs at which extension
point, with which args and weight, under which version's rules. The framework is built from
these types alone, so it does not depend on how a configuration file is read.

Upstream model: the profile and extender parts of ``pkg/scheduler/apis/config/types.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kschedctl.framework.interfaces import PLACEMENT_POINTS, POD_GROUP_POST_FILTER_POINT
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

EXTENSION_POINT_FIELDS = (
    "multiPoint",
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    # v1.36: the pod-group cycle's two extension points (unknown fields in older versions)
    "placementGenerate",
    "placementScore",
    # v1.37: a PodGroup's PostFilter (an unknown field in older versions)
    "podGroupPostFilter",
)
#: The extension points only v1.36 and later have (``kschedctl.config.decode.configuration_type``).
PLACEMENT_EXTENSION_POINTS = PLACEMENT_POINTS
#: The extension point only v1.37 and later have.
POD_GROUP_POST_FILTER_FIELD = POD_GROUP_POST_FILTER_POINT


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0  # 0: not set


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class Plugins:
    """One PluginSet per extension point, keyed by the YAML field name (``multiPoint``, ``score``...)."""

    sets: dict[str, PluginSet] = field(default_factory=lambda: {k: PluginSet() for k in EXTENSION_POINT_FIELDS})

    def __getitem__(self, ep: str) -> PluginSet:
        return self.sets[ep]


@dataclass
class Extender:
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    enable_https: bool = False
    http_timeout_seconds: float = 30.0
    node_cache_capable: bool = False
    managed_resources: list[dict[str, Any]] = field(default_factory=list)
    ignorable: bool = False


@dataclass
class Profile:
    scheduler_name: str
    plugins: Plugins
    plugin_config: dict[str, BaseModel | dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    #: The version and feature gates whose rules this profile's plugins follow.
    features: Features = DEFAULT_FEATURES

    def args(self, plugin: str) -> BaseModel | dict[str, Any] | None:
        return self.plugin_config.get(plugin)


#: (config field, Go interface) of each extension point, in the order kube-scheduler's framework fills them
#: (getExtensionPoints): the runtime builds its lists in it, config validation names interfaces from it.
EXTENSION_INTERFACES = (
    ("preFilter", "PreFilterPlugin"),
    ("filter", "FilterPlugin"),
    ("postFilter", "PostFilterPlugin"),
    ("reserve", "ReservePlugin"),
    ("preScore", "PreScorePlugin"),
    ("score", "ScorePlugin"),
    ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"),
    ("postBind", "PostBindPlugin"),
    ("permit", "PermitPlugin"),
    ("preEnqueue", "PreEnqueuePlugin"),
    ("queueSort", "QueueSortPlugin"),
    ("placementGenerate", "PlacementGeneratePlugin"),
    ("placementScore", "PlacementScorePlugin"),
    ("podGroupPostFilter", "PodGroupPostFilterPlugin"),
)
