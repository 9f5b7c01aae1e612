"""KubeSchedulerConfiguration loading: v1.35 defaulting, plugin-set merging, validation messages.

The expected messages are kube-scheduler's own texts (validation.go,
validation_pluginargs.go, the strict decoder), so a user can compare our output
with the real scheduler's word for word. The corpus tests load every real
config.yaml and check that the resulting profile runs the plugins, in the order
and with the weights, that the reference trace in expected.json shows.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.config import default_config, load_config, parse_config
from kschedctl.config.args import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)
from kschedctl.config.defaults import default_plugins, merge_plugin_set, merge_plugins
from kschedctl.config.field import aggregate, go_duration_string, parse_go_duration
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError
from kschedctl.framework.profile import EXTENSION_POINT_FIELDS, PluginRef, Plugins, PluginSet
from kschedctl.framework.runtime import Framework
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.plugins import in_tree_registry
from tests.builders import make_node, make_snapshot

REPO = Path(__file__).resolve().parent.parent
PROFILES_DIR = REPO / "profiles"
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

DEFAULT_MULTIPOINT = [
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
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]
ARGS_PLUGINS = {
    "DefaultPreemption",
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
}


def cfg(**fields: Any) -> SchedulerConfig:
    return parse_config({**HEADER, **fields})


def one_profile(**profile: Any) -> dict[str, Any]:
    return {"profiles": [profile]}


def refs(ps: PluginSet) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in ps.enabled]


def plugin_args(name: str, args: Any) -> dict[str, Any]:
    return one_profile(pluginConfig=[{"name": name, "args": args}])


# =============================================================================================
# defaulting


def test_default_config() -> None:
    c = default_config()
    assert c.source is None
    assert c.parallelism == 16
    assert c.percentage_of_nodes_to_score == 0
    assert c.extenders == []
    assert [p.scheduler_name for p in c.profiles] == ["default-scheduler"]
    prof = c.profiles[0]
    assert prof.percentage_of_nodes_to_score is None
    assert refs(prof.plugins["multiPoint"]) == DEFAULT_MULTIPOINT
    for ep in EXTENSION_POINT_FIELDS:
        if ep != "multiPoint":
            assert prof.plugins[ep].enabled == [] and prof.plugins[ep].disabled == []
    assert set(prof.plugin_config) == ARGS_PLUGINS
    assert prof.args("NodeResourcesFit") == NodeResourcesFitArgs(
        kind="NodeResourcesFitArgs", apiVersion=HEADER["apiVersion"]
    )
    assert prof.args("DynamicResources") == DynamicResourcesArgs(
        kind="DynamicResourcesArgs", apiVersion=HEADER["apiVersion"], filterTimeout="10s", bindingTimeout=None
    )


def test_header_only_document_is_the_default() -> None:
    c = parse_config(dict(HEADER), source="x.yaml")
    assert c.source == "x.yaml"
    c.source = None
    assert c == default_config()


def test_load_none_is_default() -> None:
    assert load_config(None) == default_config()


@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({}, ["default-scheduler"]),
        ({"profiles": []}, ["default-scheduler"]),
        ({"profiles": [{}]}, ["default-scheduler"]),
        ({"profiles": [{"schedulerName": "mine"}]}, ["mine"]),
        ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]}, ["a", "b"]),
    ],
)
def test_profiles_and_scheduler_name_defaulting(fields: dict[str, Any], names: list[str]) -> None:
    assert [p.scheduler_name for p in cfg(**fields).profiles] == names


def test_scheduler_name_is_not_defaulted_with_two_profiles() -> None:
    with pytest.raises(ConfigError) as e:
        cfg(profiles=[{}, {"schedulerName": "b"}])
    assert str(e.value) == "profiles[0].schedulerName: Required value"


@pytest.mark.parametrize(
    ("fields", "global_pct", "profile_pct"),
    [
        ({}, 0, None),
        ({"percentageOfNodesToScore": 50}, 50, None),
        ({"percentageOfNodesToScore": 0}, 0, None),
        (one_profile(percentageOfNodesToScore=5), 0, 5),
        ({"percentageOfNodesToScore": 100, **one_profile(percentageOfNodesToScore=0)}, 100, 0),
    ],
)
def test_percentage_of_nodes_to_score(
    fields: dict[str, Any], global_pct: int, profile_pct: int | None
) -> None:
    c = cfg(**fields)
    assert c.percentage_of_nodes_to_score == global_pct
    assert c.profiles[0].percentage_of_nodes_to_score == profile_pct


def test_parallelism() -> None:
    assert cfg(parallelism=4).parallelism == 4


V1 = HEADER["apiVersion"]


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        # NodeResourcesFit: weights 0 -> 1, no resources -> cpu/memory, no strategy -> LeastAllocated
        (
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}],
                }
            },
            NodeResourcesFitArgs.model_validate(
                {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                    }
                }
            ),
        ),
        (
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated", "resources": []}},
            NodeResourcesFitArgs.model_validate(
                {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                    }
                }
            ),
        ),
        (
            "NodeResourcesFit",
            {"ignoredResources": ["example.com/foo"]},
            NodeResourcesFitArgs(ignoredResources=["example.com/foo"]),
        ),
        ("NodeResourcesFit", None, NodeResourcesFitArgs()),
        # NodeResourcesBalancedAllocation: weight unset -> 1; no resources -> cpu/memory
        (
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "memory"}, {"name": "ephemeral-storage", "weight": 0}]},
            NodeResourcesBalancedAllocationArgs.model_validate(
                {"resources": [{"name": "memory", "weight": 1}, {"name": "ephemeral-storage", "weight": 1}]}
            ),
        ),
        ("NodeResourcesBalancedAllocation", {}, NodeResourcesBalancedAllocationArgs()),
        # InterPodAffinity: unset weight -> 1, an explicit 0 stays 0
        ("InterPodAffinity", {}, InterPodAffinityArgs(hardPodAffinityWeight=1)),
        ("InterPodAffinity", {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(hardPodAffinityWeight=0)),
        (
            "InterPodAffinity",
            {"ignorePreferredTermsOfExistingPods": True},
            InterPodAffinityArgs(hardPodAffinityWeight=1, ignorePreferredTermsOfExistingPods=True),
        ),
        # DefaultPreemption: each field on its own
        (
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 0},
            DefaultPreemptionArgs(minCandidateNodesPercentage=0),
        ),
        (
            "DefaultPreemption",
            {"minCandidateNodesAbsolute": 5},
            DefaultPreemptionArgs(minCandidateNodesAbsolute=5),
        ),
        # PodTopologySpread: defaultingType -> System
        ("PodTopologySpread", {}, PodTopologySpreadArgs(defaultingType="System")),
        (
            "PodTopologySpread",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            },
            PodTopologySpreadArgs(
                defaultingType="List",
                defaultConstraints=[
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            ),
        ),
        ("VolumeBinding", {}, VolumeBindingArgs(bindTimeoutSeconds=600)),
        ("VolumeBinding", {"bindTimeoutSeconds": 0}, VolumeBindingArgs(bindTimeoutSeconds=0)),
        ("DynamicResources", {}, DynamicResourcesArgs(filterTimeout="10s")),
        ("DynamicResources", {"filterTimeout": "0s"}, DynamicResourcesArgs(filterTimeout="0s")),
        ("DynamicResources", {"filterTimeout": "90s"}, DynamicResourcesArgs(filterTimeout="1m30s")),
        ("NodeAffinity", {}, NodeAffinityArgs()),
        (
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
                    }
                }
            },
            NodeAffinityArgs(
                addedAffinity={
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
                    }
                }
            ),
        ),
    ],
)
def test_user_args_are_defaulted(name: str, given: Any, expected: Any) -> None:
    got = cfg(**plugin_args(name, given)).profiles[0].args(name)
    expected = expected.model_copy(update={"kind": f"{name}Args", "api_version": V1})
    assert got == expected


def test_args_kind_and_api_version_may_be_given() -> None:
    args = {"apiVersion": V1, "kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 7}
    got = cfg(**plugin_args("InterPodAffinity", args)).profiles[0].args("InterPodAffinity")
    assert isinstance(got, InterPodAffinityArgs) and got.hard_pod_affinity_weight == 7


def test_default_args_only_for_enabled_plugins_with_an_args_kind() -> None:
    c = cfg(
        **one_profile(
            plugins={
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "DefaultBinder"},
                        {"name": "NodeResourcesFit"},
                    ],
                },
                "score": {"enabled": [{"name": "InterPodAffinity", "weight": 3}]},
            }
        )
    )
    assert set(c.profiles[0].plugin_config) == {"NodeResourcesFit", "InterPodAffinity"}


def test_out_of_tree_args_stay_raw_and_args_of_disabled_plugins_are_kept() -> None:
    c = cfg(
        **one_profile(
            plugins={
                "multiPoint": {
                    "enabled": [{"name": "MyPlugin", "weight": 4}],
                    "disabled": [{"name": "VolumeBinding"}],
                }
            },
            pluginConfig=[
                {"name": "MyPlugin", "args": {"anything": [1, 2], "Nested": {"x": "y"}}},
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}},
                {"name": "Unused"},
            ],
        )
    )
    prof = c.profiles[0]
    assert prof.args("MyPlugin") == {"anything": [1, 2], "Nested": {"x": "y"}}
    assert prof.args("Unused") == {}
    vb = prof.args("VolumeBinding")
    assert isinstance(vb, VolumeBindingArgs) and vb.bind_timeout_seconds == 30
    assert refs(prof.plugins["multiPoint"])[-1] == ("MyPlugin", 4)
    assert "VolumeBinding" not in [n for n, _ in refs(prof.plugins["multiPoint"])]


def test_extenders() -> None:
    c = cfg(
        extenders=[
            {
                "urlPrefix": "http://ext",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 3,
                "httpTimeout": "2s",
                "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
            },
            {"urlPrefix": "http://b", "bindVerb": "bind"},
        ]
    )
    a, b = c.extenders
    assert (a.url_prefix, a.filter_verb, a.prioritize_verb, a.weight, a.http_timeout_seconds) == (
        "http://ext",
        "filter",
        "prioritize",
        3,
        2.0,
    )
    assert a.managed_resources == [{"name": "example.com/foo", "ignoredByScheduler": True}]
    assert (b.bind_verb, b.weight, b.http_timeout_seconds) == ("bind", 0, 5.0)


# =============================================================================================
# default plugins and merge semantics


def test_default_plugins_feature_gates() -> None:
    def gated(**gates: bool) -> Features:
        return Features(35, {**DEFAULT_FEATURES.gates, **gates}, DEFAULT_FEATURES.release)

    assert refs(default_plugins(DEFAULT_FEATURES)["multiPoint"]) == DEFAULT_MULTIPOINT
    no_dra = refs(default_plugins(gated(DynamicResourceAllocation=False))["multiPoint"])
    assert no_dra == [r for r in DEFAULT_MULTIPOINT if r[0] != "DynamicResources"]
    alpha = refs(
        default_plugins(gated(NodeDeclaredFeatures=True, GangScheduling=True))["multiPoint"]
    )
    assert alpha == [*DEFAULT_MULTIPOINT, ("NodeDeclaredFeatures", 0), ("GangScheduling", 0)]


def ps(enabled: list[str | tuple[str, int]], disabled: list[str] | None = None) -> PluginSet:
    return PluginSet(
        [PluginRef(e) if isinstance(e, str) else PluginRef(*e) for e in enabled],
        list(disabled or []),
    )


@pytest.mark.parametrize(
    ("default", "custom", "enabled", "disabled"),
    [
        # nothing custom: the defaults
        (ps(["A", ("B", 2), "C"]), ps([]), [("A", 0), ("B", 2), ("C", 0)], []),
        # a disabled default plugin disappears, the others keep their order
        (ps(["A", "B", "C"]), ps([], ["B"]), [("A", 0), ("C", 0)], ["B"]),
        # "*" drops every default; custom ones stay, in their order
        (ps(["A", "B"]), ps(["X", ("B", 5)], ["*"]), [("X", 0), ("B", 5)], ["*"]),
        # a re-configured default plugin is replaced in place (keeps its position, takes the new weight)
        (ps(["A", ("B", 2), "C"]), ps([("B", 7)]), [("A", 0), ("B", 7), ("C", 0)], []),
        # custom plugins that are not defaults are appended in order
        (ps(["A", "B"]), ps(["Y", "X"]), [("A", 0), ("B", 0), ("Y", 0), ("X", 0)], []),
        # mixed: replaced in place + appended
        (
            ps(["A", "B", "C"]),
            ps(["X", ("C", 9), "Y"]),
            [("A", 0), ("B", 0), ("C", 9), ("X", 0), ("Y", 0)],
            [],
        ),
        # disabled and enabled again: not in place any more, appended after the defaults
        (ps(["A", "B", "C"]), ps([("A", 4)], ["A"]), [("B", 0), ("C", 0), ("A", 4)], ["A"]),
        # a duplicated custom plugin: the last occurrence replaces the default, the first is appended
        (ps(["A", "B"]), ps([("A", 1), ("A", 2)]), [("A", 2), ("B", 0), ("A", 1)], []),
        # default-disabled plugins are kept in the disabled list after the custom ones
        (ps(["A", "B"], ["Z"]), ps([], ["A"]), [("B", 0)], ["A", "Z"]),
        # disabling a plugin that is not a default has no effect on the enabled list
        (ps(["A"]), ps(["X"], ["Nope"]), [("A", 0), ("X", 0)], ["Nope"]),
    ],
)
def test_merge_plugin_set(
    default: PluginSet, custom: PluginSet, enabled: list[tuple[str, int]], disabled: list[str]
) -> None:
    merged = merge_plugin_set(default, custom)
    assert refs(merged) == enabled
    assert merged.disabled == disabled


def test_merge_plugins_none_is_the_default() -> None:
    d = default_plugins(DEFAULT_FEATURES)
    assert merge_plugins(d, None) is d


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        # MultiPoint re-configuration (dev-031): weights replaced in place, order unchanged
        (
            {
                "multiPoint": {
                    "enabled": [
                        {"name": "PodTopologySpread", "weight": 20},
                        {"name": "NodeAffinity", "weight": 1},
                        {"name": "InterPodAffinity", "weight": 5},
                        {"name": "NodeResourcesBalancedAllocation", "weight": 20},
                    ]
                }
            },
            {
                "multiPoint": [
                    (
                        n,
                        {
                            "PodTopologySpread": 20,
                            "NodeAffinity": 1,
                            "InterPodAffinity": 5,
                            "NodeResourcesBalancedAllocation": 20,
                        }.get(n, w),
                    )
                    for n, w in DEFAULT_MULTIPOINT
                ]
            },
        ),
        # MultiPoint disabled (dev-095) and a per-point disable (kept for the runtime's expansion)
        (
            {
                "multiPoint": {"disabled": [{"name": "ImageLocality"}, {"name": "NodeAffinity"}]},
                "score": {"disabled": [{"name": "PodTopologySpread"}]},
            },
            {
                "multiPoint": [
                    r for r in DEFAULT_MULTIPOINT if r[0] not in ("ImageLocality", "NodeAffinity")
                ],
                "score": [],
            },
        ),
        # Score with weights on top of MultiPoint (dev-201)
        (
            {
                "score": {
                    "enabled": [
                        {"name": "TaintToleration", "weight": 3},
                        {"name": "PodTopologySpread", "weight": 20},
                        {"name": "NodeResourcesFit", "weight": 50},
                    ]
                }
            },
            {
                "multiPoint": DEFAULT_MULTIPOINT,
                "score": [("TaintToleration", 3), ("PodTopologySpread", 20), ("NodeResourcesFit", 50)],
            },
        ),
        # Score "*" then explicit list (dev-187)
        (
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeAffinity", "weight": 10}]}},
            {"multiPoint": DEFAULT_MULTIPOINT, "score": [("NodeAffinity", 10)]},
        ),
    ],
)
def test_profile_plugins_merge(plugins: dict[str, Any], expected: dict[str, list[tuple[str, int]]]) -> None:
    prof = cfg(**one_profile(plugins=plugins)).profiles[0]
    for ep, want in expected.items():
        assert refs(prof.plugins[ep]) == want, ep
    for ep, raw in plugins.items():
        assert prof.plugins[ep].disabled == [d["name"] for d in raw.get("disabled", [])]


# =============================================================================================
# validation messages (exact kube-scheduler texts)

NRF = 'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin "NodeResourcesFit": '
PC = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # --- top level -------------------------------------------------------------------
        ({"parallelism": 0}, "parallelism: Invalid value: 0: should be an integer value greater than zero"),
        ({"parallelism": -3}, "parallelism: Invalid value: -3: should be an integer value greater than zero"),
        (
            {"percentageOfNodesToScore": 101},
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        ),
        (
            {"percentageOfNodesToScore": -1},
            "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        ),
        (
            {"podInitialBackoffSeconds": 0},
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            {"podInitialBackoffSeconds": 20},
            "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        (
            {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4},
            "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        (
            {"clientConnection": {"burst": -1}},
            "clientConnection.burst: Invalid value: -1: must be non-negative",
        ),
        (
            {"leaderElection": {"leaseDuration": "5s"}},
            'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
        ),
        (
            {"leaderElection": {"retryPeriod": "-1s"}},
            'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
        ),
        (
            {"leaderElection": {"resourceLock": "endpointsleases"}},
            'leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"',
        ),
        (
            {"leaderElection": {"leaderElect": False, "resourceLock": "configmaps", "leaseDuration": "1s"}},
            None,
        ),
        # --- profiles --------------------------------------------------------------------
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            'profiles[1].schedulerName: Duplicate value: "a": profiles[0] has the same schedulerName',
        ),
        (
            {"profiles": [{}, {}]},
            "[profiles[0].schedulerName: Required value, profiles[1].schedulerName: Required value, "
            'profiles[1].schedulerName: Duplicate value: "": profiles[0] has the same schedulerName]',
        ),
        (
            one_profile(percentageOfNodesToScore=101),
            "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        ),
        (
            {
                "profiles": [
                    {"schedulerName": "a"},
                    {
                        "schedulerName": "b",
                        "plugins": {
                            "queueSort": {"enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]}
                        },
                    },
                ]
            },
            'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"PrioritySort","Weight":0}],"Disabled":[{"Name":"*","Weight":0}]}: must be the same for all profiles',
        ),
        (
            {
                "profiles": [
                    {
                        "schedulerName": "a",
                        "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}},
                    }
                ]
            },
            "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
        ),
        (
            {
                "profiles": [
                    {
                        "schedulerName": "a",
                        "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                        "pluginConfig": [{"name": "Q", "args": {"x": 1}}],
                    },
                    {
                        "schedulerName": "b",
                        "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                        "pluginConfig": [{"name": "Q", "args": {"x": 2}}],
                    },
                ]
            },
            'profiles[1].pluginConfig.args: Invalid value: {"x":2}: queueSort must be the same for all profiles',
        ),
        (
            one_profile(
                plugins={"filter": {"enabled": [{"name": "NodePorts"}, {"name": "AzureDiskLimits"}]}}
            ),
            'profiles[0].plugins.filter.enabled[1]: Invalid value: "AzureDiskLimits": was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
        (
            one_profile(pluginConfig=[{"name": "CinderLimits", "args": {}}]),
            'profiles[0].pluginConfig[0]: Invalid value: "CinderLimits": was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
        (
            one_profile(pluginConfig=[{"name": "VolumeBinding"}, {"name": "VolumeBinding"}]),
            'profiles[0].pluginConfig[1]: Duplicate value: "VolumeBinding"',
        ),
        (
            one_profile(pluginConfig=[{"name": "NodeResourcesFitArgs", "args": {"b": 1, "a": 2}}]),
            'profiles[0].pluginConfig[0].args: Invalid value: {"a":2,"b":1}: has to match plugin args',
        ),
        # --- NodeResourcesFit (checked when the plugin is built, with Go's nil path) -------
        (
            plugin_args(
                "NodeResourcesFit",
                {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
            ),
            NRF
            + "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
        ),
        (
            plugin_args(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "LeastAllocated",
                        "resources": [{"name": "cpu", "weight": -1}, {"name": "memory", "weight": 200}],
                    }
                },
            ),
            NRF
            + "[scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100], "
            "scoringStrategy.resources[1].weight: Invalid value: 200: resource weight of memory not in valid range (0, 100]]",
        ),
        (
            plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "Balanced"}}),
            NRF
            + 'scoringStrategy.type: Unsupported value: "Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            plugin_args("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}}),
            NRF
            + 'scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            plugin_args(
                "NodeResourcesFit",
                {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
            ),
            NRF + "scoringStrategy.shape: Required value: at least one point must be specified",
        ),
        (
            plugin_args(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {
                            "shape": [
                                {"utilization": 10, "score": 11},
                                {"utilization": 10, "score": 2},
                                {"utilization": 101, "score": -1},
                            ]
                        },
                    }
                },
            ),
            NRF
            + "[scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order, "
            "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10], "
            "scoringStrategy.shape[2].utilization: Invalid value: 101: not in valid range [0, 100], "
            "scoringStrategy.shape[2].score: Invalid value: -1: not in valid range [0, 10]]",
        ),
        (
            plugin_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/x"]}),
            NRF
            + "ignoredResourceGroups[0]: Invalid value: \"example.com/x\": resource group name can't contain '/'",
        ),
        (
            plugin_args("NodeResourcesFit", {"ignoredResources": ["bad name"]}),
            NRF
            + "ignoredResources[0]: Invalid value: \"bad name\": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        # bad NodeResourcesFit args are not rejected when the plugin is not used at all
        (
            {
                **one_profile(
                    plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
                    pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}],
                )
            },
            None,
        ),
        # --- NodeResourcesBalancedAllocation ---------------------------------------------------
        (
            plugin_args(
                "NodeResourcesBalancedAllocation",
                {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}, {"name": "cpu"}]},
            ),
            f'[{PC}.resources[0].weight: Invalid value: 2: must be 1, {PC}.resources[2].name: Duplicate value: "cpu"]',
        ),
        # --- InterPodAffinity ------------------------------------------------------------------
        (
            plugin_args("InterPodAffinity", {"hardPodAffinityWeight": 101}),
            f"{PC}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            plugin_args("InterPodAffinity", {"hardPodAffinityWeight": -1}),
            f"{PC}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
        ),
        (plugin_args("InterPodAffinity", {"hardPodAffinityWeight": 0}), None),
        (plugin_args("InterPodAffinity", {"hardPodAffinityWeight": 100}), None),
        # --- DefaultPreemption -----------------------------------------------------------------
        (
            plugin_args("DefaultPreemption", {"minCandidateNodesPercentage": 101}),
            f"{PC}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            plugin_args("DefaultPreemption", {"minCandidateNodesAbsolute": -1}),
            f"{PC}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ),
        (
            plugin_args(
                "DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
            ),
            f"[{PC}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, "
            f"{PC}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
        ),
        (plugin_args("DefaultPreemption", {"minCandidateNodesPercentage": 0}), None),
        # --- PodTopologySpread -----------------------------------------------------------------
        (
            plugin_args("PodTopologySpread", {"defaultingType": "Custom"}),
            f'{PC}.defaultingType: Unsupported value: "Custom": supported values: "System", "List"',
        ),
        (
            plugin_args(
                "PodTopologySpread",
                {
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                    ]
                },
            ),
            f'{PC}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (plugin_args("PodTopologySpread", {"defaultingType": "List"}), None),
        (
            plugin_args(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": ""},
                        {
                            "maxSkew": 1,
                            "topologyKey": "zone",
                            "whenUnsatisfiable": "Maybe",
                            "labelSelector": {},
                        },
                        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                        {"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": "ScheduleAnyway"},
                    ],
                },
            ),
            f"[{PC}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
            f"{PC}.defaultConstraints[1].topologyKey: Required value: can not be empty, "
            f"{PC}.defaultConstraints[1].whenUnsatisfiable: Required value: can not be empty, "
            f'{PC}.defaultConstraints[2].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway", '
            f"{PC}.defaultConstraints[2].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod, "
            f'{PC}.defaultConstraints[3]: Duplicate value: "{{zone, DoNotSchedule}}", '
            f'{PC}.defaultConstraints[4].topologyKey: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')]",
        ),
        # --- VolumeBinding ---------------------------------------------------------------------
        (
            plugin_args("VolumeBinding", {"bindTimeoutSeconds": -1}),
            f"{PC}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
        ),
        (
            plugin_args("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]}),
            f'{PC}.shape: Invalid value: [{{"Utilization":0,"Score":10}}]: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring',
        ),
        # --- DynamicResources ------------------------------------------------------------------
        (
            plugin_args("DynamicResources", {"filterTimeout": "-1s"}),
            f'{PC}.filterTimeout: Invalid value: "-1s": must be zero or positive',
        ),
        (
            plugin_args("DynamicResources", {"bindingTimeout": "1m"}),
            f"{PC}.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        ),
        # --- NodeAffinity addedAffinity --------------------------------------------------------
        (
            plugin_args(
                "NodeAffinity",
                {
                    "addedAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {},
                                {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In"},
                                        {"key": "zone", "operator": "Near", "values": ["a"]},
                                        {"key": "gen", "operator": "Gt", "values": ["x"]},
                                        {"key": "ok", "operator": "Exists", "values": ["v"]},
                                        {"key": "ok", "operator": "In", "values": ["bad value"]},
                                    ],
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}
                                    ],
                                },
                            ]
                        },
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 0,
                                "preference": {"matchExpressions": [{"key": "x", "operator": "Bad"}]},
                            },
                            {
                                "weight": 1,
                                "preference": {
                                    "matchFields": [{"key": "metadata.name", "operator": "Exists"}]
                                },
                            },
                        ],
                    }
                },
            ),
            "["
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[0].values: "
            "Invalid value: null: for 'in', 'notin' operators, values set can't be empty, "
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[1].operator: "
            'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", '
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[2].values[0]: "
            "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer, "
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[3].values: "
            'Invalid value: ["v"]: values set must be empty for exists and does not exist, '
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[4].values[0][ok]: "
            "Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
            "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), "
            f"{PC}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchFields[0].values: "
            'Invalid value: ["a","b"]: must have one element, '
            f"{PC}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchFields[0].operator: "
            'Unsupported value: "Exists": supported values: "In", "NotIn"'
            "]",
        ),
        # --- extenders -------------------------------------------------------------------------
        (
            {"extenders": [{"urlPrefix": "u", "prioritizeVerb": "p"}]},
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
        ),
        ({"extenders": [{"urlPrefix": "u", "prioritizeVerb": "p", "weight": 1}]}, None),
        (
            {"extenders": [{"urlPrefix": "u", "bindVerb": "b"}, {"urlPrefix": "v", "bindVerb": "b"}]},
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
        ),
        (
            {
                "extenders": [
                    {
                        "urlPrefix": "u",
                        "managedResources": [
                            {"name": "cpu"},
                            {"name": "kubernetes.io/x"},
                            {"name": "example.com/gpu"},
                        ],
                    },
                    {"urlPrefix": "v", "managedResources": [{"name": "example.com/gpu"}]},
                ]
            },
            '[extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name, '
            'extenders[0].managedResources[1].name: Invalid value: "kubernetes.io/x": is an invalid extended resource name, '
            'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed resource name]',
        ),
        (
            {"extenders": [{"urlPrefix": "u", "managedResources": [{"name": "Example.com/x"}]}]},
            'extenders[0].managedResources[0].name: Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain must '
            "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ],
)
def test_validation_messages(fields: dict[str, Any], message: str | None) -> None:
    if message is None:
        cfg(**fields)
        return
    with pytest.raises(ConfigError) as e:
        cfg(**fields)
    assert str(e.value) == message


def test_identical_messages_are_shown_once() -> None:
    assert aggregate(["a", "b", "a"]) == "[a, b]"
    assert aggregate(["a", "a"]) == "a"
    assert aggregate([]) == ""


# =============================================================================================
# decoding: unknown fields, wrong types, wrong apiVersion/kind, file errors


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({**HEADER, "parallelizm": 3}, 'strict decoding error: unknown field "parallelizm"'),
        (
            {**HEADER, **one_profile(plugins={"score": {"enabled": [{"name": "X", "wieght": 1}]}}, foo=1)},
            'strict decoding error: unknown field "profiles[0].plugins.score.enabled[0].wieght", unknown field "profiles[0].foo"',
        ),
        (
            {**HEADER, **one_profile(plugins={"Score": {}})},
            'strict decoding error: unknown field "profiles[0].plugins.Score"',
        ),
        (
            {
                **HEADER,
                **plugin_args(
                    "NodeResourcesFit",
                    {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "wieght": 2}],
                        }
                    },
                ),
            },
            "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin "
            'NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.resources[0].wieght"',
        ),
        (
            {**HEADER, "bogus": True, **plugin_args("InterPodAffinity", {"weight": 1})},
            'strict decoding error: unknown field "bogus", decoding .profiles[0].pluginConfig[0]: strict decoding error: '
            'decoding args for plugin InterPodAffinity: strict decoding error: unknown field "weight"',
        ),
        (
            {**HEADER, "parallelism": "16"},
            "parallelism: got a string, want an integer (kube-scheduler: json: cannot unmarshal string into Go struct "
            "field KubeSchedulerConfiguration.parallelism of type int32)",
        ),
        (
            {**HEADER, "parallelism": 2.5},
            "parallelism: got 2.5, want an integer (kube-scheduler: json: cannot unmarshal number 2.5 into Go struct "
            "field KubeSchedulerConfiguration.parallelism of type int32)",
        ),
        (
            {**HEADER, **one_profile(plugins={"score": {"enabled": [{"name": "X", "weight": "high"}]}})},
            "profiles[0].plugins.score.enabled[0].weight: got a string, want an integer (kube-scheduler: json: cannot "
            "unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled.weight of type int32)",
        ),
        (
            {**HEADER, "profiles": {"schedulerName": "x"}},
            "profiles: got a mapping, want a list (kube-scheduler: json: cannot unmarshal object into Go struct field "
            "KubeSchedulerConfiguration.profiles of type []v1.KubeSchedulerProfile)",
        ),
        (
            {
                **HEADER,
                **plugin_args(
                    "NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": "1"}]}}
                ),
            },
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: decoding args for plugin NodeResourcesFit: "
            "got a string, want an integer (kube-scheduler: json: cannot unmarshal string into Go struct field "
            "ResourceSpec.scoringStrategy.resources.weight of type int64)",
        ),
        (
            {**HEADER, **plugin_args("DynamicResources", {"filterTimeout": "soon"})},
            "profiles[0].pluginConfig[0].args.filterTimeout: decoding args for plugin DynamicResources: "
            'want a duration such as 30s or 1m30s (time: invalid duration "soon")',
        ),
        (
            {**HEADER, **plugin_args("InterPodAffinity", {"kind": "NodeResourcesFitArgs"})},
            "profiles[0].pluginConfig[0].args.kind: args for plugin InterPodAffinity were not of type "
            "InterPodAffinityArgs.kubescheduler.config.k8s.io, got NodeResourcesFitArgs.kubescheduler.config.k8s.io",
        ),
        (
            {
                **HEADER,
                **plugin_args("InterPodAffinity", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
            },
            'profiles[0].pluginConfig[0].args.apiVersion: decoding args for plugin InterPodAffinity: no kind "InterPodAffinityArgs" '
            'is registered for version "kubescheduler.config.k8s.io/v1beta3": kube-scheduler v1.35 reads only '
            "kubescheduler.config.k8s.io/v1 (v1beta3 was removed in v1.29; see the KubeSchedulerConfiguration migration notes)",
        ),
        (
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
            'apiVersion: no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3": '
            "kube-scheduler v1.35 reads only kubescheduler.config.k8s.io/v1 (v1beta3 was removed in v1.29; see the "
            "KubeSchedulerConfiguration migration notes)",
        ),
        (
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "SchedulerConfig"},
            'kind: no kind "SchedulerConfig" is registered for version "kubescheduler.config.k8s.io/v1": '
            "kube-scheduler reads KubeSchedulerConfiguration (with plugin args of the kinds <Plugin>Args)",
        ),
        (
            {"kind": "KubeSchedulerConfiguration"},
            "Object 'apiVersion' is missing in '{\"kind\":\"KubeSchedulerConfiguration\"}'",
        ),
        (
            {"apiVersion": "kubescheduler.config.k8s.io/v1"},
            "Object 'Kind' is missing in '{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}'",
        ),
    ],
)
def test_decode_errors(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(doc)
    assert str(e.value) == message


def test_out_of_tree_args_are_not_strictly_decoded() -> None:
    c = parse_config({**HEADER, **plugin_args("Custom", {"whatever": {"deep": [1]}})})
    assert c.profiles[0].args("Custom") == {"whatever": {"deep": [1]}}


def test_errors_name_the_file(tmp_path: Path) -> None:
    f = tmp_path / "sched.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 0\n"
    )
    with pytest.raises(ConfigError) as e:
        load_config(str(f))
    assert str(e.value) == f"{f}: parallelism: Invalid value: 0: should be an integer value greater than zero"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: [\n",
            "error converting YAML to JSON: yaml: line 3: ",
        ),
        ("a: b: c\n", "error converting YAML to JSON: yaml: line 1: mapping values are not allowed here"),
        ("", "Object 'Kind' is missing in 'null'"),
        (
            "- 1\n",
            "got a list, want a mapping with apiVersion and kind (kube-scheduler: couldn't get version/kind; json parse error)",
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
            'apiVersion: no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta2"',
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 2\nparallelism: 3\n",
            'strict decoding error: error converting YAML to JSON: yaml: unmarshal errors: line 4: key "parallelism" already set in map',
        ),
    ],
)
def test_file_errors(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(str(f))
    assert str(e.value).startswith(f"{f}: {message}")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file or directory"):
        load_config(str(tmp_path / "nope.yaml"))


def test_json_file(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text(json.dumps({**HEADER, "percentageOfNodesToScore": 30}))
    assert load_config(str(f)).percentage_of_nodes_to_score == 30


# =============================================================================================
# ready-to-use profiles/


def _profile_files() -> list[Path]:
    return sorted(PROFILES_DIR.glob("*.yaml"))


def test_profiles_dir_has_the_documented_files() -> None:
    assert {p.name for p in _profile_files()} >= {
        "default.yaml",
        "bin-packing.yaml",
        "gpu-aware.yaml",
        "spread-first.yaml",
    }


@pytest.mark.parametrize("path", _profile_files(), ids=lambda p: p.name)
def test_profile_file_loads_validates_and_builds(path: Path) -> None:
    text = path.read_text()
    assert text.startswith("#"), "each profile starts with a comment header"
    assert "When to use it" in text.split("apiVersion:")[0]
    c = load_config(str(path))
    snapshot = make_snapshot([make_node("n1"), make_node("n2")])
    for prof in c.profiles:
        fw = Framework(prof, in_tree_registry(), snapshot)
        assert fw.plugins.names("queueSort") == ["PrioritySort"]
        assert fw.plugins.names("bind") == ["DefaultBinder"]


def test_default_profile_file_is_the_default() -> None:
    c = load_config(str(PROFILES_DIR / "default.yaml"))
    c.source = None
    assert c == default_config()


def test_bin_packing_profile() -> None:
    prof = load_config(str(PROFILES_DIR / "bin-packing.yaml")).profiles[0]
    fit = prof.args("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs) and fit.scoring_strategy.type == "MostAllocated"
    assert dict(refs(prof.plugins["multiPoint"]))["NodeResourcesFit"] > 1


def test_gpu_aware_profile() -> None:
    prof = load_config(str(PROFILES_DIR / "gpu-aware.yaml")).profiles[0]
    fit = prof.args("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs)
    st_ = fit.scoring_strategy
    assert st_.type == "RequestedToCapacityRatio"
    weights = {r.name: r.weight for r in st_.resources}
    assert weights["nvidia.com/gpu"] > weights["cpu"]
    assert st_.requested_to_capacity_ratio is not None and len(st_.requested_to_capacity_ratio.shape) >= 2


def test_spread_first_profile() -> None:
    prof = load_config(str(PROFILES_DIR / "spread-first.yaml")).profiles[0]
    pts = prof.args("PodTopologySpread")
    assert isinstance(pts, PodTopologySpreadArgs) and pts.defaulting_type == "List"
    assert [c["topologyKey"] for c in pts.default_constraints] == [
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    ]
    weights = dict(refs(prof.plugins["multiPoint"]))
    assert weights["PodTopologySpread"] > 2 and weights["InterPodAffinity"] > 2
    fit = prof.args("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs) and fit.scoring_strategy.type == "LeastAllocated"


# =============================================================================================
# the conformance corpus: every real config.yaml loads and gives the plugin lists upstream ran


def _corpus_dirs() -> list[Path]:
    seen: dict[str, Path] = {}
    for root in (REPO / "tests" / "conformance", Path("/work/shared/conformance/dev")):
        if root.is_dir():
            for cfg_file in sorted(root.glob("*/config.yaml")):
                seen.setdefault(cfg_file.parent.name, cfg_file.parent)
    return [seen[k] for k in sorted(seen)]


CORPUS = _corpus_dirs()


def test_corpus_configs_are_present() -> None:
    if not CORPUS:
        pytest.skip("no conformance corpus on this machine")
    assert len(CORPUS) >= 50


@pytest.mark.parametrize("scenario", CORPUS, ids=[d.name for d in CORPUS])
def test_corpus_config_gives_the_reference_plugins(scenario: Path) -> None:
    c = load_config(str(scenario / "config.yaml"))
    expected = json.loads((scenario / "expected.json").read_text())
    pod = yaml.safe_load((scenario / "pod.yaml").read_text())
    name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
    assert expected["profile"] == name
    prof = c.profile_for(name)
    assert prof is not None
    fw = Framework(prof, in_tree_registry(), make_snapshot([make_node("n")]))
    # PreFilter stops at the first rejection: what ran is a prefix of the profile's list
    ran = [r["plugin"] for r in expected["preFilter"]]
    assert fw.plugins.names("preFilter")[: len(ran)] == ran
    if expected["preScore"]:
        assert fw.plugins.names("preScore") == [r["plugin"] for r in expected["preScore"]]
    for plugin, s in expected["score"].items():
        assert plugin in fw.plugins.names("score")
        assert fw.plugins.score_weights[plugin] == s["weight"], plugin
    for verdict in expected["filter"].values():
        if verdict.get("plugin"):
            assert verdict["plugin"] in fw.plugins.names("filter")
    if expected.get("postFilter"):
        assert expected["postFilter"]["plugin"] in fw.plugins.names("postFilter")


# =============================================================================================
# properties of mergePluginSet

NAMES = ["A", "B", "C", "D", "E", "X", "Y", "Z"]
ref_st = st.builds(PluginRef, st.sampled_from(NAMES), st.integers(min_value=0, max_value=5))


@st.composite
def default_sets(draw: st.DrawFn) -> PluginSet:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=6))
    return PluginSet([PluginRef(n, draw(st.integers(0, 5))) for n in names], [])


custom_st = st.builds(
    PluginSet,
    st.lists(ref_st, max_size=6),
    st.lists(st.sampled_from([*NAMES, "*"]), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(default_sets(), custom_st)
def test_disabled_plugins_never_appear_unless_enabled_again(default: PluginSet, custom: PluginSet) -> None:
    merged = merge_plugin_set(default, custom)
    custom_names = {r.name for r in custom.enabled}
    for r in merged.enabled:
        if r.name in custom_names:
            continue
        assert r.name not in custom.disabled and "*" not in custom.disabled
        assert r in default.enabled


@settings(max_examples=300, deadline=None)
@given(default_sets(), custom_st)
def test_every_custom_plugin_is_kept_and_defaults_keep_their_order(
    default: PluginSet, custom: PluginSet
) -> None:
    merged = merge_plugin_set(default, custom)
    assert not Counter(custom.enabled) - Counter(merged.enabled)
    kept = [r.name for r in default.enabled if r.name not in custom.disabled and "*" not in custom.disabled]
    assert [r.name for r in merged.enabled[: len(kept)]] == kept


@settings(max_examples=300, deadline=None)
@given(default_sets(), custom_st)
def test_merging_is_idempotent(default: PluginSet, custom: PluginSet) -> None:
    # meaningful when custom names are unique and not disabled at the same time (otherwise Go's
    # mergePluginSet itself moves re-enabled plugins and repeats duplicates on a second pass)
    names = [r.name for r in custom.enabled]
    if len(set(names)) != len(names) or set(names) & set(custom.disabled):
        return
    once = merge_plugin_set(default, custom)
    twice = merge_plugin_set(once, custom)
    assert twice.enabled == once.enabled


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([n for n, _ in DEFAULT_MULTIPOINT]), unique=True, max_size=5))
def test_multipoint_disable_on_the_real_defaults(disabled: list[str]) -> None:
    custom = Plugins()
    custom.sets["multiPoint"] = PluginSet([], disabled)
    merged = merge_plugins(default_plugins(DEFAULT_FEATURES), custom)
    assert refs(merged["multiPoint"]) == [r for r in DEFAULT_MULTIPOINT if r[0] not in disabled]


# =============================================================================================
# Go durations


@pytest.mark.parametrize(
    ("text", "ns", "printed"),
    [
        ("10s", 10_000_000_000, "10s"),
        ("1m30s", 90_000_000_000, "1m30s"),
        ("1.5h", 5_400_000_000_000, "1h30m0s"),
        ("0", 0, "0s"),
        ("-1s", -1_000_000_000, "-1s"),
        ("250ms", 250_000_000, "250ms"),
        ("1500us", 1_500_000, "1.5ms"),
        ("7ns", 7, "7ns"),
    ],
)
def test_go_durations(text: str, ns: int, printed: str) -> None:
    assert parse_go_duration(text) == ns
    assert go_duration_string(ns) == printed
