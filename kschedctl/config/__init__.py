"""PROVISIONAL (written by the lead to unblock end-to-end runs; the config owner replaces this file).

Only the v1.35 default configuration and a naive file load are supported here.
"""

from __future__ import annotations

from typing import Any

import yaml

from kschedctl.config.args import ARGS_MODELS
from kschedctl.config.types import EXTENSION_POINT_FIELDS, PluginRef, Plugins, PluginSet, Profile, SchedulerConfig
from kschedctl.errors import ConfigError

_DEFAULT = [
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
]


def _profile(name: str, percentage: int | None = None) -> Profile:
    plugins = Plugins()
    plugins.sets["multiPoint"] = PluginSet([PluginRef(n, w) for n, w in _DEFAULT], [])
    cfg: dict[str, Any] = {n: m() for n, m in ARGS_MODELS.items()}
    return Profile(name, plugins, cfg, percentage)


def default_config() -> SchedulerConfig:
    return SchedulerConfig([_profile("default-scheduler")])


def parse_config(data: dict[str, Any], source: str = "<config>") -> SchedulerConfig:
    profiles = []
    for i, p in enumerate(data.get("profiles") or [{}]):
        prof = _profile(p.get("schedulerName") or "default-scheduler", p.get("percentageOfNodesToScore"))
        for ep, ps in (p.get("plugins") or {}).items():
            if ep not in EXTENSION_POINT_FIELDS:
                raise ConfigError(f"profiles[{i}].plugins: unknown field {ep!r}")
            enabled = [PluginRef(e["name"], e.get("weight") or 0) for e in ps.get("enabled") or []]
            disabled = [e["name"] for e in ps.get("disabled") or []]
            base = prof.plugins.sets[ep]
            if "*" in disabled:
                kept: list[PluginRef] = []
            else:
                kept = [r for r in base.enabled if r.name not in disabled]
            names = {r.name: r for r in enabled}
            merged = [names.pop(r.name) if r.name in names else r for r in kept]
            merged += [r for r in enabled if r.name in names]
            prof.plugins.sets[ep] = PluginSet(merged, disabled)
        for pc in p.get("pluginConfig") or []:
            model = ARGS_MODELS.get(pc["name"])
            args = pc.get("args") or {}
            prof.plugin_config[pc["name"]] = model.model_validate(args) if model else args
        profiles.append(prof)
    return SchedulerConfig(profiles, data.get("percentageOfNodesToScore") or 0, source=source)


def load_config(path: str | None) -> SchedulerConfig:
    if path is None:
        return default_config()
    with open(path) as f:
        return parse_config(yaml.safe_load(f), source=path)
