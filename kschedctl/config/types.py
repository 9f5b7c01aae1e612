"""The resolved scheduler configuration: its profiles, extenders and global settings.

``kschedctl.config.load`` turns a KubeSchedulerConfiguration file (or nothing) into this
plain object after the chosen version's defaulting: every profile's plugin sets are already
merged with the default plugins (``mergePlugins``), and every plugin that needs args has a
defaulted args model. A profile and an extender are the framework's own types
(``kschedctl.framework.profile``); MultiPoint expansion happens in the runtime, as in
kube-scheduler.

Upstream model: ``pkg/scheduler/apis/config/types.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kschedctl.framework.profile import Extender, Profile
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES


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
