"""NodeResourcesBalancedAllocation: PreScore Skip for best-effort pods, std-deviation score with Go float math;
v1.35's balance after placing the pod and v1.36's change of balance."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config.args import NodeResourcesBalancedAllocationArgs
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES, resolve_features
from kschedctl.plugins.noderesources import balanced_allocation as ba
from kschedctl.plugins.noderesources.resource_allocation import balance_change_score, balanced_resource_scorer
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, node_info

V136 = resolve_features(36, {"NodeDeclaredFeatures": True})


def _plugin(resources: list[str] | None = None, features: Features = DEFAULT_FEATURES) -> ba.BalancedAllocation:
    if resources is None:
        return ba.new(None, FakeHandle(features=features))
    model = NodeResourcesBalancedAllocationArgs.model_validate({"resources": [{"name": r} for r in resources]})
    return ba.new(model, FakeHandle(features=features))


def node(extra: dict[str, str] | None = None) -> NodeBuilder:
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    alloc.update(extra or {})
    return make_node("n1").set("status.allocatable", alloc)


def existing(req: dict[str, str] | None = None) -> PodBuilder:
    b = make_pod("existing")
    return b.res(req) if req else b


@pytest.mark.parametrize(
    ("pod", "ni", "resources", "want"),
    [
        # 0.25 / 0.25: perfectly balanced.
        pytest.param(make_pod().req(cpu="1", memory="4Gi"), node_info(node()), None, 100, id="balanced"),
        # 0.5 / 0.25: std 0.125 -> 87.5 truncated to 87.
        pytest.param(make_pod().req(cpu="2", memory="4Gi"), node_info(node()), None, 87, id="two-resources"),
        # Plain requests: an existing pod without requests adds nothing (no 100m/200Mi defaults).
        pytest.param(make_pod().req(cpu="1", memory="4Gi"), node_info(node(), existing({"cpu": "1"})), None, 87, id="plain-requests"),
        pytest.param(make_pod().req(cpu="1", memory="4Gi"), node_info(node(), existing()), None, 100, id="besteffort-existing-adds-nothing"),
        # Fractions capped at 1: cpu 1.25 -> 1, memory 0.25 -> std 0.375 -> 62.
        pytest.param(make_pod().req(cpu="2", memory="4Gi"), node_info(node(), existing({"cpu": "3"})), None, 62, id="capped"),
        # BalancedAllocation reads pod-level requests (unlike Fit's Score): 0.25 / 0.25.
        pytest.param(make_pod().pod_level(requests={"cpu": "1", "memory": "4Gi"}), node_info(node()), None, 100, id="pod-level"),
        # ... on the node side too: existing pod-level cpu 1 -> 0.5 / 0.25 -> 87.
        pytest.param(
            make_pod().req(cpu="1", memory="4Gi"),
            node_info(node(), make_pod("existing-lvl").pod_level(requests={"cpu": "1"})),
            None,
            87,
            id="node-pod-level",
        ),
        # Only cpu requested: 0.25 / 0 -> 87.
        pytest.param(make_pod().req(cpu="1"), node_info(node()), None, 87, id="cpu-only"),
        # Three resources: 0.25, 0.5, 0.75 -> population std 0.2041 -> 79.
        pytest.param(
            make_pod().req(cpu="1", memory="8Gi", ephemeral_storage="75Gi"),
            node_info(node({"ephemeral-storage": "100Gi"})),
            ["cpu", "memory", "ephemeral-storage"],
            79,
            id="three-resources",
        ),
        # ephemeral-storage absent from the node's allocatable: skipped, two-resource formula.
        pytest.param(
            make_pod().req(cpu="2", memory="4Gi", ephemeral_storage="1Gi"),
            node_info(node()),
            ["cpu", "memory", "ephemeral-storage"],
            87,
            id="zero-allocatable-skipped",
        ),
        # Extended resource not requested by the pod: skipped.
        pytest.param(
            make_pod().req(cpu="2", memory="4Gi"),
            node_info(node({"example.com/foo": "4"})),
            ["cpu", "memory", "example.com/foo"],
            87,
            id="extended-not-requested",
        ),
        # Extended resource requested: 0.5, 0.25, 0.25 -> 88.
        pytest.param(
            make_pod().res({"cpu": "2", "memory": "4Gi", "example.com/foo": "1"}),
            node_info(node({"example.com/foo": "4"})),
            ["cpu", "memory", "example.com/foo"],
            88,
            id="extended-requested",
        ),
        # One resource: std 0.
        pytest.param(make_pod().req(cpu="3"), node_info(node()), ["cpu"], 100, id="single-resource"),
        # Overhead is part of the request.
        pytest.param(make_pod().req(cpu="1", memory="4Gi").overhead(cpu="1"), node_info(node()), None, 87, id="overhead"),
    ],
)
def test_score(pod: PodBuilder, ni: NodeInfo, resources: list[str] | None, want: int) -> None:
    pl = _plugin(resources)
    p = pod.build()
    st = CycleState()
    assert pl.pre_score(st, p, [ni]).code == Code.SUCCESS
    v, s = pl.score(st, p, ni)
    assert s.is_success()
    assert v == want


@pytest.mark.parametrize(
    ("pod", "resources", "code"),
    [
        pytest.param(make_pod(), None, Code.SKIP, id="besteffort"),
        pytest.param(make_pod().req(cpu="0", memory="0"), None, Code.SKIP, id="explicit-zero"),
        pytest.param(make_pod().req(ephemeral_storage="1Gi"), None, Code.SKIP, id="only-unconfigured-resource"),
        pytest.param(make_pod().req(ephemeral_storage="1Gi"), ["cpu", "ephemeral-storage"], Code.SUCCESS, id="configured"),
        pytest.param(make_pod().req(memory="1Gi"), None, Code.SUCCESS, id="memory-only"),
        pytest.param(make_pod().overhead(cpu="100m"), None, Code.SUCCESS, id="overhead-only"),
        pytest.param(make_pod().pod_level(requests={"cpu": "1"}), None, Code.SUCCESS, id="pod-level"),
    ],
)
def test_pre_score(pod: PodBuilder, resources: list[str] | None, code: Code) -> None:
    assert _plugin(resources).pre_score(CycleState(), pod.build(), []).code == code


@pytest.mark.parametrize(
    ("pod", "ni", "resources", "v135", "v136"),
    [
        # Empty node, balanced pod: 100 either way before; v1.36: unchanged balance -> 75.
        pytest.param(make_pod().req(cpu="1", memory="4Gi"), node_info(node()), None, 100, 75, id="balanced-on-empty"),
        # 0.5 / 0.25 -> 87 with the pod, 100 without: 50 + (50 + 87 - 100) / 2 = 68.
        pytest.param(make_pod().req(cpu="2", memory="4Gi"), node_info(node()), None, 87, 68, id="unbalances-empty"),
        # The pod evens out a cpu-heavy node: 75 without, 100 with -> 87.
        pytest.param(
            make_pod().req(memory="8Gi"), node_info(node(), existing({"cpu": "2"})), None, 100, 87, id="improves-balance"
        ),
        # The pod tilts a balanced node: 100 without, 75 with -> 62.
        pytest.param(
            make_pod().req(cpu="2"), node_info(node(), existing({"cpu": "1", "memory": "4Gi"})), None, 75, 62, id="worsens-balance"
        ),
        # cpu capped at 1 with the pod; 0.75 / 0 without: both 62 -> 75.
        pytest.param(
            make_pod().req(cpu="2", memory="4Gi"), node_info(node(), existing({"cpu": "3"})), None, 62, 75, id="capped"
        ),
        # Three resources: 79 with, 100 without -> 64.
        pytest.param(
            make_pod().req(cpu="1", memory="8Gi", ephemeral_storage="75Gi"),
            node_info(node({"ephemeral-storage": "100Gi"})),
            ["cpu", "memory", "ephemeral-storage"],
            79,
            64,
            id="three-resources",
        ),
        # A requested extended resource counts on both sides: 88 with, 100 without -> 69.
        pytest.param(
            make_pod().res({"cpu": "2", "memory": "4Gi", "example.com/foo": "1"}),
            node_info(node({"example.com/foo": "4"})),
            ["cpu", "memory", "example.com/foo"],
            88,
            69,
            id="extended-requested",
        ),
        # One resource: std 0 on both sides.
        pytest.param(make_pod().req(cpu="3"), node_info(node()), ["cpu"], 100, 75, id="single-resource"),
        # A configured resource the node does not list is left out on both sides.
        pytest.param(
            make_pod().req(cpu="2", memory="4Gi", ephemeral_storage="1Gi"),
            node_info(node()),
            ["cpu", "memory", "ephemeral-storage"],
            87,
            68,
            id="zero-allocatable-skipped",
        ),
    ],
)
def test_score_by_version(pod: PodBuilder, ni: NodeInfo, resources: list[str] | None, v135: int, v136: int) -> None:
    p = pod.build()
    for features, want in ((DEFAULT_FEATURES, v135), (V136, v136)):
        pl = _plugin(resources, features)
        st = CycleState()
        assert pl.pre_score(st, p, [ni]).code == Code.SUCCESS
        v, s = pl.score(st, p, ni)
        assert (v, s.code) == (want, Code.SUCCESS)
        assert pl.score(CycleState(), p, ni)[0] == want  # without PreScore's state
        scores, s = pl.score_nodes(st, p, [ni, ni])
        assert s.is_success()
        assert scores == [want, want]


@pytest.mark.parametrize(
    ("with_pod", "without", "want"),
    [
        (100, 100, 75),
        (100, 50, 100),
        (50, 100, 50),
        (87, 100, 68),  # (50 - 13) / 2 = 18 (integer division)
        (75, 62, 81),
    ],
)
def test_balance_change_score(with_pod: int, without: int, want: int) -> None:
    assert balance_change_score(with_pod, without) == want


def test_rule_chosen_from_the_version() -> None:
    assert not _plugin().scores_change
    assert _plugin(features=V136).scores_change
    assert _plugin(features=Features(minor=37, gates=V136.gates, release="v1.37.0")).scores_change


def test_score_without_pre_score() -> None:
    pl = _plugin()
    v, s = pl.score(CycleState(), make_pod().req(cpu="2", memory="4Gi").build(), node_info(node()))
    assert (v, s.code) == (87, Code.SUCCESS)
    v, s = pl.score(CycleState(), make_pod().build(), node_info(node()))
    assert (v, s.code) == (0, Code.SUCCESS)


def test_plugin_shape() -> None:
    pl = _plugin()
    assert pl.name == "NodeResourcesBalancedAllocation"
    assert pl.score_extensions() is None
    assert not hasattr(pl, "filter") and not hasattr(pl, "pre_filter")


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        ([1, 1], [3, 3], 100),
        ([1, 2], [3, 3], 83),  # |1/3 - 2/3| / 2 = 0.1666.. -> 83.33
        ([0, 0], [0, 0], 100),  # nothing to compare: std 0
        ([5, 0], [10, 0], 100),  # one usable resource
        ([1, 0, 3], [4, 4, 4], 68),  # 0.25, 0, 0.75: std 0.3118
        ([7, 1], [10, 10], 70),
        # Exactly 65 / 90 in real numbers, 64.99999999999999 / 89.99999999999999 in float64: truncated.
        ([2, 16], [20, 20], 64),
        ([7, 11], [20, 20], 89),
        ([9, 5], [4, 4], 100),  # both capped at 1
    ],
)
def test_balanced_scorer_float_math(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_scorer(requested, allocatable) == want


def test_truncation_not_rounding() -> None:
    # 82.5 -> 82 (Go converts with int64(), which truncates).
    assert balanced_resource_scorer([6, 13], [20, 20]) == 82


@pytest.mark.parametrize(
    ("resources", "error"),
    [
        ([{"name": "cpu", "weight": 2}], "must be 1"),
        ([{"name": "cpu"}, {"name": "cpu"}], "Duplicate value"),
    ],
)
def test_invalid_args(resources: list[dict[str, Any]], error: str) -> None:
    with pytest.raises(ValueError) as ei:
        ba.new(NodeResourcesBalancedAllocationArgs.model_validate({"resources": resources}), FakeHandle())
    assert error in str(ei.value)


def test_defaults() -> None:
    pl = ba.new(NodeResourcesBalancedAllocationArgs(resources=[]), FakeHandle())
    assert [(r.name, r.weight) for r in pl.scorer.resources] == [("cpu", 1), ("memory", 1)]
    pl = ba.new(NodeResourcesBalancedAllocationArgs.model_validate({"resources": [{"name": "memory", "weight": 0}]}), FakeHandle())
    assert [(r.name, r.weight) for r in pl.scorer.resources] == [("memory", 1)]
