"""Kubernetes versions: the version and ``--feature-gates`` parsing, each version's gate table, and
what a version changes before any plugin runs (configuration defaults, the loader, tie-breaking)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.config import default_config, parse_config
from kschedctl.config.args import DynamicResourcesArgs
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError, InputError
from kschedctl.explain.cycle import explain_pod
from kschedctl.kube.features import Features
from kschedctl.kube.versions import (
    DEFAULT_FEATURES,
    RELEASES,
    FeatureGateError,
    GateNotReproduced,
    default_gates,
    gate_specs,
    nearest_supported,
    parse_feature_gates,
    parse_kube_version,
    patch_note,
    resolve_features,
)
from kschedctl.snapshot.loader import build_cluster, parse_documents
from kschedctl.testing import make_cluster, make_node, make_pod
from tests.simulation import simulate_pods

# ------------------------------------------------------------------------------------------ versions


@pytest.mark.parametrize(
    ("text", "minor"),
    [("1.33", 33), ("1.34.2", 34), ("v1.35", 35), ("v1.36.0", 36), (" 1.36 ", 36), ("v1.36.2-eks-4a2f1c", 36),
     ("v1.35.10+k3s1", 35), ("1.35.99", 35), ("1.37", 37), ("v1.37.1", 37)],
)
def test_parse_kube_version(text: str, minor: int) -> None:
    assert parse_kube_version(text) == minor


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.32", "Kubernetes 1.32 is not supported: kschedctl explains kube-scheduler 1.33, 1.34, 1.35, 1.36, 1.37"),
        ("1.38.1", "Kubernetes 1.38 is not supported: kschedctl explains kube-scheduler 1.33, 1.34, 1.35, 1.36, 1.37"),
        ("2.1", 'invalid Kubernetes version "2.1": want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
        ("latest", 'invalid Kubernetes version "latest": want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
        ("1.035", 'invalid Kubernetes version "1.035": "035" starts with 0 (did you mean 1.35?)'),
        ("1.35.04", 'invalid Kubernetes version "1.35.04": "04" starts with 0 (did you mean 1.35.4?)'),
        ("1.x", 'invalid Kubernetes version "1.x": want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
        ("1.36.2-", 'invalid Kubernetes version "1.36.2-": want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35'),
    ],
)
def test_parse_kube_version_refuses(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_kube_version(text)
    assert str(e.value) == message


@pytest.mark.parametrize(("minor", "nearest"), [(30, 33), (33, 33), (35, 35), (37, 37), (38, 37), (40, 37)])
def test_nearest_supported(minor: int, nearest: int) -> None:
    assert nearest_supported(minor) == nearest


@pytest.mark.parametrize(
    ("value", "gates"),
    [
        ("", {}),
        ("A=true,B=false", {"A": True, "B": False}),
        (" A = 1 ,,B=F", {"A": True, "B": False}),
        ("A=True,A=0", {"A": False}),
    ],
)
def test_parse_feature_gates(value: str, gates: dict[str, bool]) -> None:
    assert parse_feature_gates(value) == gates


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("A", "missing bool value for A"),
        ("A=yes", 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ],
)
def test_parse_feature_gates_refuses(value: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as e:
        parse_feature_gates(value)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("minor", "gate", "default", "locked", "stage"),
    [
        (33, "DynamicResourceAllocation", False, False, "Beta"),
        (34, "DynamicResourceAllocation", True, False, "GA"),
        (35, "DynamicResourceAllocation", True, True, "GA"),
        (33, "PodLevelResources", False, False, "Alpha"),
        (34, "PodLevelResources", True, False, "Beta"),
        (35, "NodeDeclaredFeatures", False, False, "Alpha"),
        (36, "NodeDeclaredFeatures", True, False, "Beta"),
        (35, "OpportunisticBatching", True, False, "Beta"),
        (36, "GangScheduling", False, False, "Alpha"),
        (33, "SidecarContainers", True, True, "GA"),
        (34, "SchedulerQueueingHints", True, True, "GA"),
        (33, "ContextualLogging", True, False, "Beta"),  # component-base logging
        (33, "ComponentSLIs", True, True, "GA"),  # component-base metrics
        (36, "WatchListClient", True, False, "Beta"),  # client-go
        (35, "APIResponseCompression", True, False, "Beta"),  # generic API server
        (36, "AllAlpha", False, False, "Alpha"),
        # deprecated gates locked to false (GitRepoVolumeDriver: 1.33 deprecated, 1.36 locked)
        (33, "AllowServiceLBStatusOnNonLB", False, True, "Deprecated"),
        (34, "WatchFromStorageWithoutResourceVersion", False, True, "Deprecated"),
        (35, "AllowOverwriteTerminationGracePeriodSeconds", False, True, "Deprecated"),
        (35, "GitRepoVolumeDriver", False, False, "Deprecated"),
        (36, "GitRepoVolumeDriver", False, True, "Deprecated"),
        (36, "SeparateCacheWatchRPC", False, True, "Deprecated"),
        # v1.37 (notes on v1.36.2 to v1.37, section 8)
        (37, "StorageCapacityScoring", True, False, "Beta"),
        (37, "VolumeLimitScaling", True, False, "Beta"),
        (37, "GenericWorkload", False, False, "Beta"),
        (37, "NodeDeclaredFeatures", True, True, "GA"),
        (37, "DRADeviceTaints", True, False, "GA"),
        (37, "DRADeviceTaintRules", True, False, "GA"),
        (37, "DRAExtendedResource", True, True, "GA"),
        (37, "DRAFractionalCapacityRange", False, False, "Beta"),  # on only with --min-compatibility-version>=1.37
        (37, "InPlacePodVerticalScalingSchedulerPreemption", False, False, "Alpha"),
        (37, "InPlacePodVerticalScalingInitContainers", True, True, "GA"),
        (37, "DynamicResourceAllocation", True, True, "GA"),  # removed in 1.38, not 1.37
        (37, "PodSchedulingReadiness", True, True, "GA"),
        (37, "NativeHistograms", True, False, "Beta"),  # component-base metrics
        (37, "APIServerWebhookAuthenticationToken", False, False, "Alpha"),  # generic API server
    ],
)
def test_gate_tables(minor: int, gate: str, default: bool, locked: bool, stage: str) -> None:
    spec = gate_specs(minor)[gate]
    assert (spec.default, spec.locked, spec.stage) == (default, locked, stage)


@pytest.mark.parametrize(
    ("minor", "absent"),
    [(33, "OpportunisticBatching"), (34, "OpportunisticBatching"), (34, "NodeDeclaredFeatures"), (35, "TopologyAwareWorkloadScheduling"),
     (37, "GangScheduling"), (37, "SidecarContainers"), (37, "SchedulerQueueingHints"), (37, "WorkloadAwarePreemption"),
     (37, "TopologyAwareCompositePodGroupOptimization"), (37, "ManagedFieldsOptOut"), (36, "CompositePodGroup")],
)
def test_gates_a_version_does_not_have(minor: int, absent: str) -> None:
    assert absent not in gate_specs(minor)
    with pytest.raises(FeatureGateError) as e:
        resolve_features(minor, {absent: True})
    assert str(e.value).startswith(f"unrecognized feature gate: {absent} (kube-scheduler {RELEASES[minor]} has no such gate")


@pytest.mark.parametrize(
    ("minor", "gate", "message"),
    [
        (35, "Foo", "unrecognized feature gate: Foo (kube-scheduler v1.35.4 has no such gate)"),
        (35, "TopologyAwareWorkloadScheduling",
         "unrecognized feature gate: TopologyAwareWorkloadScheduling (kube-scheduler v1.35.4 has no such gate; it exists in v1.36 and v1.37)"),
        (33, "OpportunisticBatching",
         "unrecognized feature gate: OpportunisticBatching (kube-scheduler v1.33.5 has no such gate; it exists in v1.35, v1.36 and v1.37)"),
        (37, "GangScheduling",
         "unrecognized feature gate: GangScheduling (kube-scheduler v1.37.2 has no such gate; it exists in v1.35 and v1.36)"),
        (36, "storagecapacityscoring",
         "unrecognized feature gate: storagecapacityscoring (kube-scheduler v1.36.2 has no such gate; did you mean "
         "StorageCapacityScoring?)"),
    ],
)
def test_an_unknown_gate_names_the_version_and_where_it_exists(minor: int, gate: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as e:
        resolve_features(minor, {gate: True})
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("1.35.99", "kschedctl follows kube-scheduler v1.35.4's rules for every v1.35 patch release"),
        ("v1.36.0", "kschedctl follows kube-scheduler v1.36.2's rules for every v1.36 patch release"),
        ("v1.36.2-eks-4a2f1c", None),
        ("1.36", None),
        ("v1.37.1", "kschedctl follows kube-scheduler v1.37.2's rules for every v1.37 patch release"),
        ("v1.38.1", None),  # outside the range: server_minor's note says which release runs
        ("banana", None),
    ],
)
def test_a_patch_other_than_the_modelled_one_is_noted(text: str, note: str | None) -> None:
    assert patch_note(text) == note


def test_resolve_features_defaults() -> None:
    for minor, release in RELEASES.items():
        f = resolve_features(minor)
        assert (f.minor, f.release) == (minor, release)
        assert dict(f.gates) == default_gates(minor)
    v135 = resolve_features(35)
    assert all(v135.enabled(g) == on for g, on in DEFAULT_FEATURES.gates.items())


@pytest.mark.parametrize(
    ("minor", "overrides", "message"),
    [
        (35, {"DynamicResourceAllocation": False}, "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
        (35, {"DynamicResourceAllocation": True}, None),
        (33, {"SidecarContainers": False}, "cannot set feature gate SidecarContainers to false, feature is locked to true"),
        (36, {"GitRepoVolumeDriver": True}, "cannot set feature gate GitRepoVolumeDriver to true, feature is locked to false"),
        (36, {"GitRepoVolumeDriver": False}, None),
        (35, {"GangScheduling": True}, "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
        (35, {"GangScheduling": True, "GenericWorkload": True}, None),
        # v1.33/v1.34 have no gate dependencies
        (33, {"DynamicResourceAllocation": True}, None),
        (37, {"GenericWorkload": True}, None),
        (37, {"TopologyAwareWorkloadScheduling": True},
         "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
        (37, {"DRADeviceTaints": False}, "DRADeviceTaintRules is enabled, but depends on features that are disabled: [DRADeviceTaints]"),
        (37, {"InPlacePodVerticalScalingSchedulerPreemption": False}, None),
    ],
)
def test_resolve_features_refusals(minor: int, overrides: dict[str, bool], message: str | None) -> None:
    if message is None:
        f = resolve_features(minor, overrides)
        assert all(f.enabled(g) == v for g, v in overrides.items())
        return
    with pytest.raises(FeatureGateError) as e:
        resolve_features(minor, overrides)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("overrides", "how"),
    [
        ({"InPlacePodVerticalScalingSchedulerPreemption": True}, "leave it off"),
        ({"AllAlpha": True, "AllBeta": True}, "add InPlacePodVerticalScalingSchedulerPreemption=false to keep AllAlpha's other gates"),
    ],
)
def test_a_gate_kschedctl_does_not_reproduce_is_refused(overrides: dict[str, bool], how: str) -> None:
    """v1.37's DeferredPodScheduling plugin (and the preemption for deferred resizes) is not here: its gate
    is refused with kschedctl's own words, not run as if it were off."""
    with pytest.raises(GateNotReproduced) as e:
        resolve_features(37, overrides)
    assert str(e.value).startswith(
        "kschedctl does not reproduce feature gate InPlacePodVerticalScalingSchedulerPreemption of kube-scheduler v1.37.2: "
        "with it on, kube-scheduler adds the DeferredPodScheduling plugin before NodeResourcesFit"
    )
    assert str(e.value).endswith(f"; {how}")
    assert isinstance(e.value, FeatureGateError)  # refused as a --feature-gates value
    f = resolve_features(37, {"AllAlpha": True, "AllBeta": True, "InPlacePodVerticalScalingSchedulerPreemption": False})
    assert f.enabled("CompositePodGroup") and not f.enabled("InPlacePodVerticalScalingSchedulerPreemption")


def test_all_alpha_and_all_beta() -> None:
    f = resolve_features(33, {"AllBeta": True, "ContextualLogging": False})
    assert f.enabled("DynamicResourceAllocation")  # beta, off by default in v1.33
    assert not f.enabled("ContextualLogging")  # named: wins over AllBeta
    assert not f.enabled("PodLevelResources")  # alpha
    g = resolve_features(35, {"AllAlpha": True})
    assert g.enabled("GangScheduling") and g.enabled("GenericWorkload")
    assert g.enabled("OpportunisticBatching")  # beta, its default


# ------------------------------------------------------------------------------------------ config


def _multipoint(cfg: SchedulerConfig) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in cfg.profiles[0].plugins.sets["multiPoint"].enabled]


BASE = [
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0), ("TaintToleration", 3),
    ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1), ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0), ("VolumeZone", 0), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
]
TAIL = [("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0)]


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        pytest.param(resolve_features(33), [*BASE, *TAIL], id="v1.33-no-dra"),
        pytest.param(resolve_features(33, {"DynamicResourceAllocation": True}), [*BASE, ("DynamicResources", 0), *TAIL], id="v1.33-dra-on"),
        pytest.param(resolve_features(34), [*BASE, ("DynamicResources", 0), *TAIL], id="v1.34-dra-unweighted"),
        pytest.param(resolve_features(35), [*BASE, ("DynamicResources", 2), *TAIL], id="v1.35"),
        pytest.param(DEFAULT_FEATURES, [*BASE, ("DynamicResources", 2), *TAIL], id="default"),
        pytest.param(resolve_features(36), [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0)], id="v1.36"),
        pytest.param(
            resolve_features(36, {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}),
            [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0), ("GangScheduling", 0),
             ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)],
            id="v1.36-workload-alpha",
        ),
        # v1.37: the default profile of v1.36 (NodeDeclaredFeatures locked on now)
        pytest.param(resolve_features(37), [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0)], id="v1.37"),
        # GangScheduling comes with GenericWorkload: its own gate is gone
        pytest.param(
            resolve_features(37, {"GenericWorkload": True}),
            [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0), ("GangScheduling", 0)],
            id="v1.37-generic-workload",
        ),
        pytest.param(
            resolve_features(37, {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}),
            [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0), ("GangScheduling", 0),
             ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)],
            id="v1.37-workload",
        ),
        # v1.36 with GenericWorkload alone: no GangScheduling (its own gate is off)
        pytest.param(
            resolve_features(36, {"GenericWorkload": True}),
            [*BASE, ("DynamicResources", 2), *TAIL, ("NodeDeclaredFeatures", 0)],
            id="v1.36-generic-workload",
        ),
    ],
)
def test_default_plugins_per_version(features: Features, expected: list[tuple[str, int]]) -> None:
    cfg = default_config(features)
    assert _multipoint(cfg) == expected
    assert cfg.features is features
    assert all(p.features is features for p in cfg.profiles)


def test_gated_validation_follows_the_version() -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "5s"}}]}],
    }
    assert parse_config(doc, features=resolve_features(34)).features.minor == 34
    with pytest.raises(ConfigError) as e:
        parse_config(doc, features=resolve_features(34, {"DRASchedulerFilterTimeout": False}))
    assert "DRASchedulingFilterTimeout feature gate is disabled" in str(e.value)


@pytest.mark.parametrize(
    ("minor", "args", "error"),
    [
        # v1.33 has no DynamicResourcesArgs: its args are kept as given, like an out-of-tree plugin's
        (33, {"filterTimeout": "5s"}, None),
        (34, {"filterTimeout": "5s"}, None),
        (34, {"bindingTimeout": "5s"}, 'unknown field "bindingTimeout"'),
        (35, {"bindingTimeout": "5s"}, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"),
    ],
)
def test_dynamic_resources_args_kind_per_version(minor: int, args: dict[str, str], error: str | None) -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": args}]}],
    }
    if error is None:
        assert parse_config(doc, features=resolve_features(minor)).profiles[0].args("DynamicResources") is not None
        return
    with pytest.raises(ConfigError) as e:
        parse_config(doc, features=resolve_features(minor))
    assert error in str(e.value)



@pytest.mark.parametrize(("args", "enabled"), [({"filterTimeout": "5s"}, False), ({"filterTimeout": "5s"}, True), (None, True)])
def test_v133_dynamic_resources_args_are_handed_as_its_model(args: dict[str, str] | None, enabled: bool) -> None:
    """v1.33 registers no DynamicResourcesArgs kind; configuration still decodes the args as written into
    the model the plugin takes (a plugin gets typed args only)."""
    profile: dict[str, object] = {"pluginConfig": [{"name": "DynamicResources", "args": args}]}
    if enabled:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    got = parse_config(doc, features=resolve_features(33)).profiles[0].args("DynamicResources")
    assert got == DynamicResourcesArgs.model_validate(args or {})


def test_v133_dynamic_resources_args_its_model_refuses() -> None:
    """Refused only when the profile builds the plugin, as its constructor would refuse them."""
    profile: dict[str, object] = {"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimout": "5s"}}]}
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    assert parse_config(doc, features=resolve_features(33)).profiles[0].args("DynamicResources") is None
    profile["plugins"] = {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}
    with pytest.raises(ConfigError) as e:
        parse_config(doc, features=resolve_features(33))
    assert str(e.value) == (
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        'initializing plugin "DynamicResources": args.filterTimout: Extra inputs are not permitted'
    )

# ------------------------------------------------------------------------------------------ loader

DEVICE_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
"""
POD_LEVEL = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  resources: {requests: {cpu: "2"}}
  containers: [{name: c, image: x}]
"""


def test_v1_33_refuses_resource_k8s_io_v1() -> None:
    assert build_cluster(parse_documents("c.yaml", DEVICE_CLASS), features=resolve_features(34)).get("DeviceClass", "", "gpu")
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", DEVICE_CLASS), features=resolve_features(33))
    assert e.value.message == (
        'no kind "DeviceClass" is registered for version "resource.k8s.io/v1" in scheme '
        '"k8s.io/client-go/kubernetes/scheme/register.go:84" (this API version does not exist in kube-scheduler/apiserver v1.33.5)'
    )
    assert e.value.field == "apiVersion"


@pytest.mark.parametrize(("minor", "kept"), [(33, False), (34, True), (35, True)])
def test_pod_level_resources_dropped_when_the_gate_is_off(minor: int, kept: bool) -> None:
    cluster = build_cluster(parse_documents("c.yaml", POD_LEVEL), features=resolve_features(minor))
    [pod] = cluster.pods
    assert ("resources" in pod.raw["spec"]) is kept
    assert any("PodLevelResources is off" in n for n in cluster.notes) is not kept


# ------------------------------------------------------------------------------------------ ties


@pytest.mark.parametrize(("minor", "rule", "worded"), [(34, "random", "at random"), (35, "first", "does not pick")])
def test_tie_rule(minor: int, rule: str, worded: str) -> None:
    cluster = make_cluster([make_node("a"), make_node("b")])
    trace = explain_pod(cluster, make_pod().build(), default_config(resolve_features(minor)))
    assert trace.candidates == ["a", "b"]
    assert trace.tie_rule == rule
    d = trace.to_dict()
    assert d["details"]["tieRule"] == rule and worded in d["details"]["tieBreak"]
    assert d["k8sVersion"] == RELEASES[minor]


@pytest.mark.parametrize(("minor", "noted"), [(34, True), (35, False)])
def test_simulate_notes_random_ties(minor: int, noted: bool) -> None:
    cluster = make_cluster([make_node("a"), make_node("b")])
    result = simulate_pods(cluster, default_config(resolve_features(minor)), [(make_pod().build(), None)])
    assert any("breaks a tie among the top totals at random" in n for n in result.notes) is noted


@pytest.mark.parametrize(("minor", "batches"), [(34, False), (35, True)])
def test_opportunistic_batching_only_from_v1_35(minor: int, batches: bool) -> None:
    from kschedctl.check.sequence import simulate_sequence

    scenario = Path(__file__).parent / "sequences" / "dev-029-host-ports-batching"
    result, _ = simulate_sequence(scenario, features=resolve_features(minor))
    assert any(p.batched for p in result.placements) is batches


@pytest.mark.parametrize(
    ("minor", "fit_error"),
    [
        (
            33,
            "0/1 nodes are available: 1 node(s) had untolerated taint {k: v}. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        ),
        (
            35,
            "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        ),
    ],
)
def test_a_cycle_under_each_version(minor: int, fit_error: str) -> None:
    """v1.33: DynamicResources is not in the default profile, so its PostFilter says nothing."""
    from kschedctl.testing import schedule

    trace = schedule(make_pod("p"), nodes=[make_node("a").taint("k", "v")], features=resolve_features(minor))
    assert trace.fit_error == fit_error


# ------------------------------------------------------------------------------------------ one version model


def test_every_gate_constant_is_a_real_gate() -> None:
    from kschedctl.kube import gates
    from kschedctl.kube.features import KNOWN_GATES

    constants = {v for k, v in vars(gates).items() if k.isupper() and isinstance(v, str)}
    assert constants == set(gates.READ_BY_RULES)
    assert constants <= KNOWN_GATES, constants - KNOWN_GATES


def test_a_misspelt_gate_fails_loudly() -> None:
    with pytest.raises(ValueError, match="not a feature gate"):
        DEFAULT_FEATURES.enabled("StorageCapacityScorin")
    # a real gate this release does not have is simply off
    assert not resolve_features(33).enabled("GenericWorkload")


def test_every_rule_row_is_switched_in_code_and_cited_by_diff_versions() -> None:
    """A ``kube.rules`` row is asked by the code that holds both rules (``follows(ROW)``) and is the
    row ``diff-versions`` cites (``config.changes.RULES``): neither side can drift from the other."""
    import ast
    from pathlib import Path

    from kschedctl.config.changes import RULES
    from kschedctl.kube import rules

    names = {k for k, v in vars(rules).items() if isinstance(v, rules.VersionRule)}
    asked: set[str] = set()
    for path in (Path(__file__).parent.parent / "kschedctl").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "follows":
                for arg in node.args:
                    asked.add(arg.attr if isinstance(arg, ast.Attribute) else getattr(arg, "id", ""))
    assert names <= asked, f"rows no code asks: {sorted(names - asked)}"
    assert asked <= names | {"rule"}, f"follows() given something else: {sorted(asked - names)}"
    cited = {(r.name, r.minor) for r in RULES}
    assert cited == {(r.name, r.since) for r in rules.ALL}
    assert set(rules.ALL) == {vars(rules)[n] for n in names}


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_follows_is_the_row_version(minor: int) -> None:
    from kschedctl.kube import rules

    f = resolve_features(minor)
    for row in rules.ALL:
        assert f.follows(row) is (minor >= row.since)


@pytest.mark.parametrize(("minor", "shape"), [(36, []), (37, [(0, 10), (100, 0)])])
def test_volume_binding_args_follow_the_storage_capacity_scoring_default(minor: int, shape: list[tuple[int, int]]) -> None:
    """StorageCapacityScoring is beta and on in v1.37: VolumeBindingArgs get the default shape there."""
    args = default_config(resolve_features(minor)).profiles[0].args("VolumeBinding")
    assert [(p.utilization, p.score) for p in args.shape] == shape  # type: ignore[union-attr]
