"""kube-scheduler's defaulting of KubeSchedulerConfiguration (``apis/config/v1``), per version.

Three things happen before validation, and they decide which plugins run and
with which arguments, so they are reproduced exactly:

* the default plugin set (``getDefaultPlugins`` in ``default_plugins.go``) with the
  run's feature gates applied (``applyFeatureGates``): NodeDeclaredFeatures is
  appended when its gate is on (beta and on from v1.36), DynamicResources is
  inserted just before DefaultPreemption when DynamicResourceAllocation is on (off
  by default in v1.33), GangScheduling and the topology-aware workload plugins
  (alpha) are appended when theirs are on (GangScheduling's gate is GenericWorkload
  from v1.37, which removed the GangScheduling gate);
* ``mergePlugins``/``mergePluginSet``: per extension point, disabled plugins
  (or ``"*"``) drop defaults, a re-configured default plugin is replaced in
  place (keeping its position), other custom plugins are appended in order;
* ``SetDefaults_*``: parallelism, one ``default-scheduler`` profile when none,
  the scheduler name only when there is exactly one profile, the global
  ``percentageOfNodesToScore`` (0 = adaptive), and a defaulted args object for
  every plugin named in any enabled set that has an args kind (user-given args
  are defaulted too).

Everything here works on decoded v1 data (see ``decode``) and produces a
``DefaultedConfig``: the internal configuration that validation inspects and
from which ``SchedulerConfig`` is built.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.decode import API_VERSION, EXTENSION_POINTS, args_types
from kschedctl.framework.profile import EXTENSION_POINT_FIELDS, PluginRef, Plugins, PluginSet
from kschedctl.kube import gates
from kschedctl.kube.features import Features
from kschedctl.kube.rules import DYNAMIC_RESOURCES_SCORE, GANG_SCHEDULING_BY_GENERIC_WORKLOAD

DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: ``getDefaultPlugins`` before feature gates: (name, weight); weight 0 means "not set".
BASE_DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


# ---------------------------------------------------------------------------------------------
# default plugins and merging


def default_plugins(features: Features) -> Plugins:
    """``getDefaultPlugins()`` + ``applyFeatureGates`` of the run's version: everything is in MultiPoint."""
    enabled = [PluginRef(n, w) for n, w in BASE_DEFAULT_PLUGINS]
    if features.enabled(gates.NODE_DECLARED_FEATURES):
        enabled.append(PluginRef("NodeDeclaredFeatures"))
    if features.enabled(gates.DYNAMIC_RESOURCE_ALLOCATION):
        # before DynamicResources scored, default_plugins.go added it without a weight
        weight = 2 if features.follows(DYNAMIC_RESOURCES_SCORE) else 0
        for i, ref in enumerate(enabled):
            if ref.name == "DefaultPreemption":
                enabled.insert(i, PluginRef("DynamicResources", weight))
                break
    gang_gate = gates.GENERIC_WORKLOAD if features.follows(GANG_SCHEDULING_BY_GENERIC_WORKLOAD) else gates.GANG_SCHEDULING
    if features.enabled(gang_gate):
        enabled.append(PluginRef("GangScheduling"))
    if features.enabled(gates.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
        enabled.extend((PluginRef("TopologyPlacementGenerator"), PluginRef("PodGroupPodsCount", 1)))
    plugins = Plugins()
    plugins.sets["multiPoint"] = PluginSet(enabled, [])
    return plugins


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """``mergePluginSet``: merge one extension point's custom set into its default set."""
    disabled = [*custom.disabled, *default.disabled]
    disabled_names = set(disabled)
    # name -> (index in custom.enabled, plugin); a repeated name keeps its last occurrence
    custom_by_name = {ref.name: (i, ref) for i, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for ref in default.enabled:
            if ref.name in disabled_names:
                continue
            hit = custom_by_name.get(ref.name)
            if hit is not None:
                # re-configured default plugin: takes the custom settings, keeps the default position
                ref = hit[1]
                replaced.add(hit[0])
            enabled.append(ref)
    # custom plugins that did not replace a default one, in their order (duplicates included:
    # the framework rejects those later)
    enabled.extend(ref for i, ref in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled, disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """``mergePlugins``: every extension point, MultiPoint included."""
    if custom is None:
        return default
    out = Plugins()
    for ep in EXTENSION_POINT_FIELDS:
        out.sets[ep] = merge_plugin_set(default.sets.get(ep, PluginSet()), custom.sets.get(ep, PluginSet()))
    return out


def plugins_names(plugins: Plugins) -> list[str]:
    """``pluginsNames``: every plugin enabled at any extension point, sorted."""
    names: set[str] = set()
    for ps in plugins.sets.values():
        names.update(ref.name for ref in ps.enabled)
    return sorted(names)


def plugins_from_v1(raw: dict[str, Any] | None) -> Plugins | None:
    """A decoded v1 ``plugins`` object as ``Plugins`` (an unset weight becomes 0, as in conversion)."""
    if raw is None:
        return None
    out = Plugins()
    for ep in EXTENSION_POINTS:
        ps = raw.get(ep) or {}
        out.sets[ep] = PluginSet(
            [PluginRef(p.get("name", ""), p.get("weight", 0)) for p in ps.get("enabled") or []],
            [p.get("name", "") for p in ps.get("disabled") or []],
        )
    return out


# ---------------------------------------------------------------------------------------------
# plugin args defaulting (SetDefaults_*Args), on decoded v1 dicts

_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
_SECOND = 1_000_000_000


def default_args(name: str, args: dict[str, Any] | None, features: Features) -> dict[str, Any]:
    """Return a defaulted copy of ``name``'s v1 args (``{}`` stands for "no args given")."""
    a = copy.deepcopy(args) if args else {}
    a.setdefault("kind", f"{name}Args")
    a.setdefault("apiVersion", API_VERSION)
    if name == "DefaultPreemption":
        a.setdefault("minCandidateNodesPercentage", 10)
        a.setdefault("minCandidateNodesAbsolute", 100)
    elif name == "InterPodAffinity":
        a.setdefault("hardPodAffinityWeight", 1)
        a.setdefault("ignorePreferredTermsOfExistingPods", False)
    elif name == "VolumeBinding":
        a.setdefault("bindTimeoutSeconds", 600)
        if not a.get("shape") and features.enabled(gates.STORAGE_CAPACITY_SCORING):
            a["shape"] = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    elif name == "NodeResourcesBalancedAllocation":
        if not a.get("resources"):
            a["resources"] = [dict(r) for r in _DEFAULT_RESOURCES]
        else:
            for r in a["resources"]:
                if not r.get("weight"):
                    r["weight"] = 1
    elif name == "PodTopologySpread":
        if not a.get("defaultingType"):
            a["defaultingType"] = "System"
    elif name == "NodeResourcesFit":
        st = a.get("scoringStrategy")
        if st is None:
            st = a["scoringStrategy"] = {
                "type": "LeastAllocated",
                "resources": [dict(r) for r in _DEFAULT_RESOURCES],
            }
        if not st.get("resources"):
            st["resources"] = [dict(r) for r in _DEFAULT_RESOURCES]
        for r in st["resources"]:
            if not r.get("weight"):
                r["weight"] = 1
    elif name == "DynamicResources":
        if a.get("filterTimeout") is None and features.enabled(gates.DRA_SCHEDULER_FILTER_TIMEOUT):
            a["filterTimeout"] = 10 * _SECOND
        if (
            a.get("bindingTimeout") is None
            and features.enabled(gates.DRA_DEVICE_BINDING_CONDITIONS)
            and features.enabled(gates.DRA_RESOURCE_CLAIM_DEVICE_STATUS)
        ):
            a["bindingTimeout"] = 600 * _SECOND
    return a


# ---------------------------------------------------------------------------------------------
# the defaulted (internal) configuration


@dataclass
class PluginConfigEntry:
    """One ``pluginConfig`` item after defaulting.

    ``args`` is the defaulted v1 dict for plugins with an args kind (``known``),
    otherwise the raw args as written (None when absent).
    """

    name: str
    args: Any
    known: bool


@dataclass
class DefaultedProfile:
    scheduler_name: str  # "" when not set (Go's conversion of a nil *string)
    percentage_of_nodes_to_score: int | None
    plugins: Plugins
    plugin_config: list[PluginConfigEntry] = field(default_factory=list)


@dataclass
class DefaultedConfig:
    """The internal KubeSchedulerConfiguration that kube-scheduler validates."""

    api_version: str
    parallelism: int
    percentage_of_nodes_to_score: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    leader_election: dict[str, Any]
    client_connection: dict[str, Any]
    enable_profiling: bool
    enable_contention_profiling: bool
    delay_cache_until_active: bool
    profiles: list[DefaultedProfile]
    extenders: list[dict[str, Any]]
    #: The version and feature gates defaulting followed; validation reads the same ones.
    features: Features


def default_profile(raw: dict[str, Any], features: Features) -> DefaultedProfile:
    """``setDefaults_KubeSchedulerProfile`` (the scheduler name is handled by the caller)."""
    plugins = merge_plugins(default_plugins(features), plugins_from_v1(raw.get("plugins")))
    kinds = frozenset(args_types(features.minor))
    entries: list[PluginConfigEntry] = []
    existing: set[str] = set()
    for pc in raw.get("pluginConfig") or []:
        name = pc.get("name", "")
        existing.add(name)
        if name in kinds:
            entries.append(PluginConfigEntry(name, default_args(name, pc.get("args"), features), True))
        else:
            entries.append(PluginConfigEntry(name, copy.deepcopy(pc.get("args")), False))
    for name in plugins_names(plugins):
        if name in existing or name not in kinds:
            continue
        entries.append(PluginConfigEntry(name, default_args(name, None, features), True))
    return DefaultedProfile(
        raw.get("schedulerName", ""),
        raw.get("percentageOfNodesToScore"),
        plugins,
        entries,
    )


def set_defaults(doc: dict[str, Any], features: Features) -> DefaultedConfig:
    """``SetDefaults_KubeSchedulerConfiguration`` of the run's version on a decoded v1 document."""
    raw_profiles = [dict(p) for p in doc.get("profiles") or []]
    if not raw_profiles:
        raw_profiles.append({})
    if len(raw_profiles) == 1 and "schedulerName" not in raw_profiles[0]:
        raw_profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    profiles = [default_profile(p, features) for p in raw_profiles]

    le = dict(doc.get("leaderElection") or {})
    if not le.get("resourceLock"):
        le["resourceLock"] = "leases"
    if not le.get("resourceNamespace"):
        le["resourceNamespace"] = "kube-system"
    if not le.get("resourceName"):
        le["resourceName"] = "kube-scheduler"
    # RecommendedDefaultLeaderElectionConfiguration
    for k, v in (("leaseDuration", 15), ("renewDeadline", 10), ("retryPeriod", 2)):
        if not le.get(k):
            le[k] = v * _SECOND
    le.setdefault("leaderElect", True)

    cc = dict(doc.get("clientConnection") or {})
    if not cc.get("contentType"):
        cc["contentType"] = "application/vnd.kubernetes.protobuf"
    if not cc.get("qps"):
        cc["qps"] = 50.0
    if not cc.get("burst"):
        cc["burst"] = 100

    enable_profiling = doc.get("enableProfiling", True)
    contention = doc.get("enableContentionProfiling")
    if contention is None:
        contention = bool(enable_profiling)

    return DefaultedConfig(
        api_version=API_VERSION,
        parallelism=doc.get("parallelism", 16),
        percentage_of_nodes_to_score=doc.get("percentageOfNodesToScore", 0),
        pod_initial_backoff_seconds=doc.get("podInitialBackoffSeconds", 1),
        pod_max_backoff_seconds=doc.get("podMaxBackoffSeconds", 10),
        leader_election=le,
        client_connection=cc,
        enable_profiling=enable_profiling,
        enable_contention_profiling=contention,
        delay_cache_until_active=doc.get("delayCacheUntilActive", False),
        profiles=profiles,
        extenders=[copy.deepcopy(e) for e in doc.get("extenders") or []],
        features=features,
    )
