"""VolumeBinding's Score under StorageCapacityScoring: the shape, the per-class usage, the plugin's PreScore/Score.

The gate comes from the handle's features (v1.36 with StorageCapacityScoring=true here); without it
the plugin refuses a shape and never scores.
"""

from __future__ import annotations

import pytest

from kschedctl.config.args import UtilizationShapePoint, VolumeBindingArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins.volumebinding import plugin as vbmod
from kschedctl.plugins.volumebinding.binder import DynamicProvision, PodVolumes, StaticBinding
from kschedctl.plugins.volumebinding.plugin import VolumeBinding
from kschedctl.plugins.volumebinding.scorer import ClassUsage, capacity_scorer, usage_by_class
from kschedctl.snapshot.model import KubeObject
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, make_snapshot, node_info
from tests.plugins.storage_objects import capacity, csi_driver, pv, pvc, storage_class

SCS = resolve_features(36, {"StorageCapacityScoring": True})
OFF = resolve_features(36)
GI = 1024**3
CAP = "cap.example.com"
ZONE = "topology.kubernetes.io/zone"


def shape(*points: tuple[int, int]) -> list[UtilizationShapePoint]:
    return [UtilizationShapePoint(utilization=u, score=s) for u, s in points]


# --------------------------------------------------------------------------- the shape


@pytest.mark.parametrize(
    ("points", "requested", "cap", "score"),
    [
        pytest.param((), 0, 100, 100, id="default-empty"),
        pytest.param((), 50, 100, 50, id="default-half"),
        pytest.param((), 1, 3, 67, id="default-utilization-truncated"),  # 33% -> 100 - 33
        pytest.param((), 100, 100, 0, id="default-full"),
        pytest.param((), 101, 100, 0, id="default-over-capacity"),
        pytest.param((), 5, 0, 0, id="default-no-capacity"),
        pytest.param(((0, 0), (100, 10)), 30, 100, 30, id="most-allocated"),
        pytest.param(((0, 10), (30, 0)), 10, 100, 67, id="falling-segment-truncates-toward-zero"),
        pytest.param(((0, 10), (30, 0)), 50, 100, 0, id="past-the-last-point"),
        pytest.param(((20, 4), (80, 8)), 10, 100, 40, id="before-the-first-point"),
        pytest.param(((20, 4), (80, 8)), 50, 100, 60, id="between-points"),
        pytest.param(((50, 7),), 90, 100, 70, id="one-point"),
    ],
)
def test_one_class(points: tuple[tuple[int, int], ...], requested: int, cap: int, score: int) -> None:
    assert capacity_scorer(shape(*points))({"fast": ClassUsage(requested, cap)}) == score


@pytest.mark.parametrize(
    ("usages", "score"),
    [
        pytest.param({}, 0, id="nothing-to-bind"),
        pytest.param({"a": ClassUsage(55, 100), "b": ClassUsage(50, 100)}, 48, id="mean-half-rounds-up"),  # (45 + 50) / 2
        pytest.param({"a": ClassUsage(0, 100), "b": ClassUsage(100, 100), "c": ClassUsage(100, 100)}, 33, id="mean-rounds-down"),
        pytest.param({"a": ClassUsage(0, 100), "b": ClassUsage(0, 100), "c": ClassUsage(99, 100)}, 67, id="mean-rounds-up"),
    ],
)
def test_classes_weigh_the_same(usages: dict[str, ClassUsage], score: int) -> None:
    assert capacity_scorer([])(usages) == score


@pytest.mark.parametrize(
    ("points", "message"),
    [
        pytest.param(((50, 5), (50, 6)), "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order", id="unsorted"),
        pytest.param(((0, 11),), "shape[0].score: Invalid value: 11: not in valid range [0, 10]", id="score-range"),
        pytest.param(
            ((-1, 0), (101, 10)),
            "[shape[0].utilization: Invalid value: -1: not in valid range [0, 100], "
            "shape[1].utilization: Invalid value: 101: not in valid range [0, 100]]",
            id="utilization-range",
        ),
    ],
)
def test_a_shape_validation_refuses_is_refused(points: tuple[tuple[int, int], ...], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        capacity_scorer(shape(*points))
    assert str(e.value) == message


# --------------------------------------------------------------------------- usage per class


def _static(claim: str, request: str, volume: str, size: str, sc: str = "standard") -> StaticBinding:
    return StaticBinding(pvc(claim, size=request), pv(volume, size=size, sc=sc))


def _dynamic(claim: str, request: str, sc: str, cap: str | None) -> DynamicProvision:
    node_capacity = None if cap is None else capacity(f"cap-{claim}", sc, capacity=cap)
    return DynamicProvision(pvc(claim, sc=sc, size=request), node_capacity)


@pytest.mark.parametrize(
    ("volumes", "usages"),
    [
        pytest.param(PodVolumes(), {}, id="nothing"),
        pytest.param(PodVolumes([_static("a", "5Gi", "pv1", "10Gi")]), {"standard": ClassUsage(5 * GI, 10 * GI)}, id="one-static"),
        pytest.param(
            PodVolumes([_static("a", "5Gi", "pv1", "10Gi"), _static("b", "1Gi", "pv2", "2Gi"), _static("c", "1Gi", "pv3", "4Gi", "slow")]),
            {"standard": ClassUsage(6 * GI, 12 * GI), "slow": ClassUsage(GI, 4 * GI)},
            id="static-by-pv-class-sums-both",
        ),
        pytest.param(
            PodVolumes([], [_dynamic("a", "50Gi", "fast", "100Gi"), _dynamic("b", "50Gi", "fast", "100Gi")]),
            {"fast": ClassUsage(100 * GI, 100 * GI)},
            id="dynamic-capacity-once-requests-summed",
        ),
        pytest.param(PodVolumes([], [_dynamic("a", "5Gi", "fast", None)]), {}, id="dynamic-without-capacity-check"),
        pytest.param(PodVolumes([], [_dynamic("a", "1500m", "fast", "3")]), {"fast": ClassUsage(2, 3)}, id="values-round-up"),
        pytest.param(
            PodVolumes([_static("a", "5Gi", "pv1", "10Gi")], [_dynamic("b", "50Gi", "fast", "100Gi")]),
            {"standard": ClassUsage(5 * GI, 10 * GI)},
            id="static-bindings-win-over-provisions",
        ),
    ],
)
def test_usage_by_class(volumes: PodVolumes, usages: dict[str, ClassUsage]) -> None:
    assert usage_by_class(volumes) == usages


# --------------------------------------------------------------------------- the plugin


def _plugin(objects: list[KubeObject], *nodes: NodeBuilder, features: Features = SCS) -> tuple[VolumeBinding, list[NodeInfo]]:
    snap = make_snapshot(list(nodes) or [make_node("n1")], [], objects, features)
    return vbmod.new(None, FakeHandle(snap, features=features)), snap.node_info_list


def _scores(pod: PodBuilder, objects: list[KubeObject], *nodes: NodeBuilder) -> tuple[Code, dict[str, int]]:
    """PreFilter, Filter on every node, then PreScore and Score on the feasible ones."""
    pl, infos = _plugin(objects, *nodes)
    state = CycleState()
    p = pod.build()
    pl.pre_filter(state, p, infos)
    feasible = [ni for ni in infos if pl.filter(state, p, ni).is_success()]
    st = pl.pre_score(state, p, feasible)
    out: dict[str, int] = {}
    for ni in feasible:
        score, sst = pl.score(state, p, ni)
        assert sst.is_success()
        out[ni.name] = score
    return st.code, out


def _zone(name: str, zone: str) -> NodeBuilder:
    return make_node(name).labels(**{ZONE: zone})


@pytest.mark.parametrize(
    ("pod", "objects", "nodes", "scores"),
    [
        pytest.param(make_pod(), [], [make_node("n1"), make_node("n2")], {"n1": 0, "n2": 0}, id="no-claims-scores-zero"),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", volume="pv1"), pv("pv1", phase="Bound")], [make_node("n1")], {"n1": 0},
            id="bound-claim-nothing-to-bind",
        ),
        pytest.param(
            make_pod().pvc("data"),
            [pvc("data", size="5Gi"), storage_class("standard", provisioner="kubernetes.io/no-provisioner"),
             pv("pv-a", size="10Gi", affinity=[[{"key": ZONE, "operator": "In", "values": ["a"]}]]),
             pv("pv-b", size="25Gi", affinity=[[{"key": ZONE, "operator": "In", "values": ["b"]}]])],
            [_zone("n1", "a"), _zone("n2", "b")], {"n1": 50, "n2": 80}, id="static-pv-capacity",
        ),
        pytest.param(
            make_pod().pvc("data"),
            [pvc("data", sc="fast", size="50Gi"), storage_class("fast", provisioner=CAP), csi_driver(CAP, True),
             capacity("c-a", "fast", capacity="100Gi", topology={ZONE: "a"}),
             capacity("c-b", "fast", capacity="250Gi", maximum="100Gi", topology={ZONE: "b"})],
            [_zone("n1", "a"), _zone("n2", "b")], {"n1": 50, "n2": 80}, id="dynamic-node-capacity-not-maximum",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc="fast", size="50Gi"), storage_class("fast", provisioner=CAP)],
            [make_node("n1")], {"n1": 0}, id="dynamic-without-capacity-tracking",
        ),
    ],
)
def test_plugin_scores_nodes(pod: PodBuilder, objects: list[KubeObject], nodes: list[NodeBuilder], scores: dict[str, int]) -> None:
    code, got = _scores(pod, objects, *nodes)
    assert code == Code.SUCCESS
    assert got == scores


def test_without_the_gate_prescore_skips_and_a_shape_is_refused() -> None:
    pl, infos = _plugin([], features=OFF)
    state = CycleState()
    p = make_pod().build()
    pl.pre_filter(state, p, infos)
    assert pl.scorer is None and pl.pre_score(state, p, []).code == Code.SKIP
    with pytest.raises(ConfigError, match="turn on the feature gate StorageCapacityScoring"):
        vbmod.new(VolumeBindingArgs.model_validate({"shape": [{"utilization": 0, "score": 10}]}), FakeHandle(features=OFF))


def test_with_the_gate_a_shape_is_taken_and_missing_state_is_an_error() -> None:
    args = VolumeBindingArgs.model_validate({"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]})
    pl = vbmod.new(args, FakeHandle(features=SCS))
    assert pl.scorer is not None and pl.scorer({"x": ClassUsage(3, 10)}) == 30
    got = pl.pre_score(CycleState(), make_pod().build(), [])
    assert (got.code, got.reasons) == (Code.ERROR, ["not found"])
    score, st = pl.score(CycleState(), make_pod().build(), node_info(make_node("n1")))
    assert (score, st.code) == (0, Code.ERROR)
    assert pl.score_extensions() is None
