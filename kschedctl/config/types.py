"""The resolved scheduler configuration the runtime consumes.

``kschedctl.config.load`` turns a KubeSchedulerConfiguration file (or nothing)
into these plain objects after v1.35 defaulting: every profile's plugin sets are
already merged with the default plugins (``mergePlugins``), and every plugin
that needs args has a defaulted args model. MultiPoint expansion happens in the
runtime, as in kube-scheduler.

Upstream model: ``pkg/scheduler/apis/config/types.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kschedctl.framework.features import DEFAULT_FEATURES, Features
from kschedctl.framework.interfaces import PLACEMENT_POINTS

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
)
#: The extension points only v1.36 and later have (``kschedctl.config.decode.configuration_type``).
PLACEMENT_EXTENSION_POINTS = PLACEMENT_POINTS


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


@dataclass
class SchedulerConfig:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int = 0
    parallelism: int = 16
    extenders: list[Extender] = field(default_factory=list)
    source: str | None = None
    #: The version and feature gates the whole configuration was defaulted and validated for.
    features: Features = DEFAULT_FEATURES

    def profile_for(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


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
)
