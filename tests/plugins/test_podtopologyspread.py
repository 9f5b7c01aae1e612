"""PodTopologySpread: constraint building, PreFilter/Filter, add/remove-pod, PreScore/Score/NormalizeScore."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kschedctl.config.args import PodTopologySpreadArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore, extension_points_of
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.status import Code
from kschedctl.framework.types import PodInfo
from kschedctl.plugins.helper import go_round
from kschedctl.plugins.podtopologyspread import plugin as pts
from kschedctl.plugins.podtopologyspread.common import default_selector
from kschedctl.snapshot.model import KubeObject, Node, Pod
from tests.builders import (
    FakeHandle,
    NodeBuilder,
    PodBuilder,
    make_node,
    make_object,
    make_pod,
    make_snapshot,
)

NodeList = list[Node | NodeBuilder]
PodList = list[Pod | PodBuilder]

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
APP = {"app": "web"}


def zone_nodes(*spec: tuple[str, str | None]) -> NodeList:
    out: NodeList = []
    for name, zone in spec:
        n = make_node(name)
        if zone is not None:
            n.zone(zone)
        out.append(n)
    return out


def placed(name: str, node: str, labels: dict[str, str] | None = None, ns: str = "default") -> PodBuilder:
    return make_pod(name, ns).labels(**(APP if labels is None else labels)).node(node)


def plugin(snap: Snapshot, args: PodTopologySpreadArgs | None = None) -> pts.PodTopologySpread:
    return pts.new(args, FakeHandle(snap))


def list_args(*constraints: dict[str, Any]) -> PodTopologySpreadArgs:
    return PodTopologySpreadArgs.model_validate({"defaultingType": "List", "defaultConstraints": list(constraints)})


def run_filter(
    snap: Snapshot, pod: Pod, args: PodTopologySpreadArgs | None = None
) -> tuple[Code, dict[str, tuple[str, list[str]]]]:
    pl = plugin(snap, args)
    st = CycleState()
    _, s = pl.pre_filter(st, pod, snap.node_info_list)
    if not s.is_success():
        return s.code, {}
    out = {}
    for ni in snap.node_info_list:
        fs = pl.filter(st, pod, ni)
        out[ni.name] = (fs.code.label, fs.reasons)
    return s.code, out


def run_score(
    snap: Snapshot, pod: Pod, feasible: list[str] | None = None, args: PodTopologySpreadArgs | None = None
) -> tuple[Code, dict[str, int], dict[str, int]]:
    pl = plugin(snap, args)
    st = CycleState()
    nodes = [ni for ni in snap.node_info_list if feasible is None or ni.name in feasible]
    s = pl.pre_score(st, pod, nodes)
    if not s.is_success():
        return s.code, {}, {}
    raw = {}
    for ni in nodes:
        v, ss = pl.score(st, pod, ni)
        assert ss.is_success()
        raw[ni.name] = v
    scores = [NodeScore(n, v) for n, v in raw.items()]
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(st, pod, scores).is_success()
    return s.code, raw, {x.name: x.score for x in scores}


OK: tuple[str, list[str]] = ("Success", [])
REJ: tuple[str, list[str]] = ("Unschedulable", [NOT_MATCH])
MISSING: tuple[str, list[str]] = ("UnschedulableAndUnresolvable", [MISSING_LABEL])


def test_extension_points() -> None:
    pl = plugin(make_snapshot())
    assert pl.name == "PodTopologySpread"
    assert extension_points_of(pl) == ["preFilter", "filter", "preScore", "score"]
    assert pl.pre_filter_extensions() is pl
    assert pl.score_extensions() is pl


# ----------------------------------------------------------------------------- PreFilter / Filter

FILTER_CASES: list[tuple[str, NodeList, PodList, PodBuilder, dict[str, tuple[str, list[str]]]]] = [
    (
        "zone skew: the crowded zone is rejected",
        zone_nodes(("a", "z1"), ("b", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "b")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP),
        {"a": REJ, "b": REJ, "c": OK},
    ),
    (
        "skew exactly maxSkew is allowed",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a")],
        make_pod("in").labels(**APP).spread(2, ZONE, match_labels=APP),
        {"a": OK, "c": OK},
    ),
    (
        "node without the topology label: unresolvable, missing label",
        zone_nodes(("a", "z1"), ("b", None)),
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP),
        {"a": OK, "b": MISSING},
    ),
    (
        "pod not matching its own selector does not add itself",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a")],
        make_pod("in").labels(app="other").spread(1, ZONE, match_labels=APP),
        {"a": OK, "c": OK},
    ),
    (
        "other namespaces and terminating pods are not counted",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [
            placed("p1", "a", ns="other"),
            placed("p2", "a").set("metadata.deletionTimestamp", "2024-01-01T00:00:00Z"),
        ],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP),
        {"a": OK, "c": OK},
    ),
    (
        "minDomains above the domain count makes the global minimum 0",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "c")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, minDomains=3),
        {"a": REJ, "c": REJ},
    ),
    (
        "minDomains met: normal skew",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "c")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, minDomains=2),
        {"a": OK, "c": OK},
    ),
    (
        "nodeAffinityPolicy defaults to Honor: nodes outside nodeSelector do not form domains",
        [make_node("a").zone("z1").label("pool", "x"), make_node("c").zone("z2")],
        [placed("p1", "c"), placed("p2", "c")],
        make_pod("in").labels(**APP).node_selector(pool="x").spread(1, ZONE, match_labels=APP),
        # only z1 is a domain (min 0); c's zone z2 is no domain, so its count reads as 0.
        {"a": OK, "c": OK},
    ),
    (
        "nodeAffinityPolicy Ignore: every node's domain counts",
        [make_node("a").zone("z1").label("pool", "x"), make_node("c").zone("z2")],
        [placed("p1", "c"), placed("p2", "c")],
        make_pod("in").labels(**APP).node_selector(pool="x").spread(1, ZONE, match_labels=APP, nodeAffinityPolicy="Ignore"),
        {"a": OK, "c": REJ},
    ),
    (
        "nodeAffinityPolicy Ignore: an empty allowed zone sets the minimum",
        [make_node("a").zone("z1").label("pool", "x"), make_node("b").zone("z1").label("pool", "x"), make_node("c").zone("z2")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).node_selector(pool="x").spread(1, ZONE, match_labels=APP, nodeAffinityPolicy="Ignore"),
        {"a": REJ, "b": REJ, "c": OK},
    ),
    (
        "nodeAffinityPolicy Honor: the excluded empty zone does not set the minimum",
        [make_node("a").zone("z1").label("pool", "x"), make_node("b").zone("z1").label("pool", "x"), make_node("c").zone("z2")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).node_selector(pool="x").spread(1, ZONE, match_labels=APP),
        {"a": OK, "b": OK, "c": OK},
    ),
    (
        "nodeTaintsPolicy defaults to Ignore: a tainted empty zone sets the minimum",
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP),
        {"a": REJ, "c": OK},
    ),
    (
        "nodeTaintsPolicy Honor: untolerated taints exclude the node",
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, nodeTaintsPolicy="Honor"),
        {"a": OK, "c": OK},
    ),
    (
        "nodeTaintsPolicy Honor: tolerated taints keep the node",
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [placed("p1", "a")],
        make_pod("in")
        .labels(**APP)
        .toleration("dedicated", "x", "NoSchedule")
        .spread(1, ZONE, match_labels=APP, nodeTaintsPolicy="Honor"),
        {"a": REJ, "c": OK},
    ),
    (
        "nodeTaintsPolicy Honor: PreferNoSchedule taints do not exclude",
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x", "PreferNoSchedule")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, nodeTaintsPolicy="Honor"),
        {"a": REJ, "c": OK},
    ),
    (
        "matchLabelKeys: only pods with the same pod-template-hash count",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a", {"app": "web", "pod-template-hash": "old"}), placed("p2", "a", {"app": "web", "pod-template-hash": "old"})],
        make_pod("in").labels(app="web", **{"pod-template-hash": "new"}).spread(
            1, ZONE, match_labels=APP, matchLabelKeys=["pod-template-hash"]
        ),
        {"a": OK, "c": OK},
    ),
    (
        "matchLabelKeys: same hash counts",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a", {"app": "web", "pod-template-hash": "new"}), placed("p2", "a", {"app": "web", "pod-template-hash": "old"})],
        make_pod("in").labels(app="web", **{"pod-template-hash": "new"}).spread(
            1, ZONE, match_labels=APP, matchLabelKeys=["pod-template-hash"]
        ),
        {"a": REJ, "c": OK},
    ),
    (
        "matchLabelKeys: a key the pod lacks is ignored",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "a", {"app": "web", "x": "1"})],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, matchLabelKeys=["x"]),
        {"a": REJ, "c": OK},
    ),
    (
        "empty labelSelector counts no pods but matches the incoming pod",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE, labelSelector={}),
        {"a": OK, "c": OK},
    ),
    (
        "missing labelSelector matches nothing",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE),
        {"a": OK, "c": OK},
    ),
    (
        "two constraints: the first violated one decides; a node lacking any key is unresolvable",
        [make_node("a").zone("z1"), make_node("b").zone("z2"), make_node("c").label("rack", "r1")],
        [placed("p1", "a")],
        make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP).spread(1, HOST, match_labels=APP),
        {"a": REJ, "b": OK, "c": MISSING},
    ),
    (
        "hostname spreading: nodes without matching pods are the minimum",
        zone_nodes(("a", "z1"), ("b", "z1"), ("c", "z2")),
        [placed("p1", "a"), placed("p2", "b")],
        make_pod("in").labels(**APP).spread(1, HOST, match_labels=APP),
        {"a": REJ, "b": REJ, "c": OK},
    ),
    (
        "nodes missing a key are not domains: minimum over labelled nodes",
        [make_node("a").label("rack", "r1"), make_node("b").label("rack", "r2"), make_node("c")],
        [placed("p1", "a"), placed("p2", "c"), placed("p3", "c")],
        make_pod("in").labels(**APP).spread(1, "rack", match_labels=APP),
        {"a": REJ, "b": OK, "c": MISSING},
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "pod", "want"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(
    nodes: NodeList, pods: PodList, pod: PodBuilder, want: dict[str, tuple[str, list[str]]]
) -> None:
    code, got = run_filter(make_snapshot(nodes, pods), pod.build())
    assert code == Code.SUCCESS
    assert got == want


PRE_FILTER_CASES: list[tuple[str, PodBuilder, list[KubeObject], PodTopologySpreadArgs | None, Code]] = [
    ("no constraints, no owner", make_pod("in").labels(**APP), [], None, Code.SKIP),
    ("only soft constraints", make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP), [], None, Code.SKIP),
    ("hard constraint", make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP), [], None, Code.SUCCESS),
    (
        "system defaults are soft only",
        make_pod("in").labels(**APP),
        [make_object("Service", "svc", "default", spec={"selector": APP})],
        None,
        Code.SKIP,
    ),
    (
        "List defaults with a hard constraint and a selecting Service",
        make_pod("in").labels(**APP),
        [make_object("Service", "svc", "default", spec={"selector": APP})],
        list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}),
        Code.SUCCESS,
    ),
    (
        "List defaults but nothing selects the pod",
        make_pod("in").labels(**APP),
        [make_object("Service", "svc", "default", spec={"selector": {"app": "other"}})],
        list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}),
        Code.SKIP,
    ),
    (
        "own soft constraints replace hard List defaults",
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP),
        [make_object("Service", "svc", "default", spec={"selector": APP})],
        list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}),
        Code.SKIP,
    ),
]


@pytest.mark.parametrize(
    ("pod", "objects", "args", "want"), [c[1:] for c in PRE_FILTER_CASES], ids=[c[0] for c in PRE_FILTER_CASES]
)
def test_pre_filter_status(
    pod: PodBuilder, objects: list[KubeObject], args: PodTopologySpreadArgs | None, want: Code
) -> None:
    snap = make_snapshot(zone_nodes(("a", "z1")), [], objects)
    pl = plugin(snap, args)
    st = CycleState()
    result, s = pl.pre_filter(st, pod.build(), snap.node_info_list)
    assert result is None
    assert s.code == want
    assert s.reasons == []
    assert (st.get(pts.PRE_FILTER_STATE_KEY) is not None) == (want == Code.SUCCESS)


def test_filter_with_list_default_constraints() -> None:
    nodes = zone_nodes(("a", "z1"), ("c", "z2"))
    pods: PodList = [placed("p1", "a"), placed("p2", "a", {"app": "other"})]
    objects = [make_object("Service", "svc", "default", spec={"selector": APP})]
    args = list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"})
    code, got = run_filter(make_snapshot(nodes, pods, objects), make_pod("in").labels(**APP).build(), args)
    assert code == Code.SUCCESS
    assert got == {"a": REJ, "c": OK}


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snap = make_snapshot(zone_nodes(("a", "z1")))
    st = plugin(snap).filter(CycleState(), make_pod("in").build(), snap.node_info_list[0])
    assert st.code == Code.ERROR
    assert st.reasons == ['reading "PreFilterPodTopologySpread" from cycleState: not found']


def test_pre_filter_state_and_explain() -> None:
    nodes: NodeList = [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c").zone("z2"), make_node("d")]
    pods: PodList = [placed("p1", "a"), placed("p2", "b"), placed("p3", "b"), placed("p4", "d")]
    snap = make_snapshot(nodes, pods)
    pl = plugin(snap)
    pod = make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, minDomains=3).build()
    st = CycleState()
    pl.pre_filter(st, pod, snap.node_info_list)
    ex = pl.explain(st)
    assert ex["preScore"] is None
    [c] = ex["preFilter"]
    assert c["matchNum"] == {"z1": 3, "z2": 0}
    assert c["domains"] == 2
    assert c["minMatchNum"] == 0  # 2 domains < minDomains 3
    assert c["criticalPaths"][0] == {"topologyValue": "z2", "matchNum": 0}
    assert c["minDomains"] == 3
    assert c["nodeAffinityPolicy"] == "Honor"
    assert c["nodeTaintsPolicy"] == "Ignore"
    node = pl.explain_node(st, pod, snap.get("a"))  # type: ignore[arg-type]
    assert node["filter"] == [
        {
            "topologyKey": ZONE,
            "topologyValue": "z1",
            "matchNum": 3,
            "selfMatch": 1,
            "minMatchNum": 0,
            "skew": 4,
            "maxSkew": 1,
            "ok": False,
        }
    ]
    assert node["score"] is None


# ----------------------------------------------------------------------------- AddPod / RemovePod


def test_add_and_remove_pod_on_cloned_state() -> None:
    nodes: NodeList = [make_node("a").zone("z1"), make_node("c").zone("z2"), make_node("x")]
    pods0: PodList = [placed("p1", "a")]
    snap = make_snapshot(nodes, pods0)
    pl = plugin(snap)
    pod = make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP).build()
    st = CycleState()
    pl.pre_filter(st, pod, snap.node_info_list)
    a, c, x = (snap.get(n) for n in ("a", "c", "x"))
    assert a is not None and c is not None and x is not None
    assert pl.filter(st, pod, a).code == Code.UNSCHEDULABLE

    ext = pl.pre_filter_extensions()
    clone = st.clone()
    # Ignored: another namespace, a pod the selector does not match, a node without the key.
    for ignored, node in (
        (placed("o1", "c", ns="other"), c),
        (placed("o2", "c", {"app": "other"}), c),
        (placed("o3", "x"), x),
    ):
        assert ext.add_pod(clone, pod, PodInfo(ignored.build()), node).is_success()
    assert pl.filter(clone, pod, a).code == Code.UNSCHEDULABLE

    assert ext.add_pod(clone, pod, PodInfo(placed("n1", "c").build()), c).is_success()
    assert pl.filter(clone, pod, a).is_success()  # z1=1, z2=1
    assert pl.filter(st, pod, a).code == Code.UNSCHEDULABLE  # the original is untouched
    assert st.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"z1": 1, "z2": 0}]
    assert clone.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"z1": 1, "z2": 1}]

    victim = snap.get("a").pods[0]  # type: ignore[union-attr]
    assert ext.remove_pod(st, pod, victim, a).is_success()
    assert st.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"z1": 0, "z2": 0}]
    assert pl.filter(st, pod, a).is_success()


def test_add_pod_honors_inclusion_policies_of_the_incoming_pod() -> None:
    nodes: NodeList = [make_node("a").zone("z1"), make_node("c").zone("z2").taint("t", "v")]
    pods0: PodList = [placed("p1", "a")]
    snap = make_snapshot(nodes, pods0)
    pl = plugin(snap)
    pod = make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP, nodeTaintsPolicy="Honor").build()
    st = CycleState()
    pl.pre_filter(st, pod, snap.node_info_list)
    c = snap.get("c")
    assert c is not None
    pl.add_pod(st, pod, PodInfo(placed("n1", "c").build()), c)
    assert st.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"z1": 1}]


def test_add_pod_without_state_is_an_error() -> None:
    snap = make_snapshot(zone_nodes(("a", "z1")))
    ni = snap.node_info_list[0]
    st = plugin(snap).add_pod(CycleState(), make_pod("in").build(), PodInfo(make_pod("x").build()), ni)
    assert st.code == Code.ERROR


def test_critical_paths_keep_the_minimum_first() -> None:
    from kschedctl.plugins.podtopologyspread.filtering import CriticalPaths

    p = CriticalPaths()
    for v, n in (("z1", 3), ("z2", 1), ("z3", 2), ("z4", 5)):
        p.update(v, n)
    assert (p.value, p.num) == (["z2", "z3"], [1, 2])
    p.update("z2", 4)  # the minimum grows past slot 1: swapped
    assert (p.value, p.num) == (["z3", "z2"], [2, 4])
    p.update("z1", 0)
    assert (p.value, p.num) == (["z1", "z3"], [0, 2])


# ----------------------------------------------------------------------------- PreScore / Score / NormalizeScore

LOG4 = math.log(4)
LOG5 = math.log(5)

SCORE_CASES: list[
    tuple[str, NodeList, PodList, list[KubeObject], PodBuilder, list[str] | None, dict[str, int], dict[str, int]]
] = [
    (
        "zone counts, node without the key is ignored",
        [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c").zone("z2"), make_node("d")],
        [placed("p1", "a"), placed("p2", "a"), placed("p3", "b"), placed("p4", "c"), placed("p5", "d")],
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP),
        None,
        {"a": 4, "b": 4, "c": 1, "d": 0},  # 3*log4=4.16, log4=1.39
        {"a": 25, "b": 25, "c": 100, "d": 0},
    ),
    (
        "maxSkew - 1 is added to every count",
        [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c").zone("z2")],
        [placed("p1", "a"), placed("p2", "a"), placed("p3", "b"), placed("p4", "c")],
        [],
        make_pod("in").labels(**APP).spread(3, ZONE, "ScheduleAnyway", APP),
        None,
        {"a": 6, "b": 6, "c": 3},
        {"a": 50, "b": 50, "c": 100},
    ),
    (
        "pods on infeasible nodes of a feasible domain count; infeasible domains do not form",
        [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c").zone("z2"), make_node("e").zone("z3")],
        [placed("p1", "a"), placed("p2", "a"), placed("p3", "b"), placed("p4", "c"), placed("p5", "e")],
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP),
        ["a", "c"],
        {"a": 4, "c": 1},
        {"a": 25, "c": 100},
    ),
    (
        "hostname counts per node, weight from the number of feasible nodes",
        [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c").zone("z2")],
        [placed("p1", "a"), placed("p2", "a"), placed("p3", "b")],
        [],
        make_pod("in").labels(**APP).spread(1, HOST, "ScheduleAnyway", APP),
        None,
        {"a": 3, "b": 2, "c": 0},  # 2*log5=3.22, log5=1.61
        {"a": 0, "b": 33, "c": 100},
    ),
    (
        "no matching pods anywhere: every node gets 100",
        zone_nodes(("a", "z1"), ("c", "z2")),
        [placed("p1", "a", {"app": "other"})],
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP),
        None,
        {"a": 0, "c": 0},
        {"a": 100, "c": 100},
    ),
    (
        "nodeTaintsPolicy Honor: pods on tainted nodes are not counted",
        [make_node("a").zone("z1"), make_node("b").zone("z1").taint("t", "v"), make_node("c").zone("z2")],
        [placed("p1", "b"), placed("p2", "c")],
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP, nodeTaintsPolicy="Honor"),
        ["a", "c"],
        {"a": 0, "c": 1},
        {"a": 100, "c": 0},
    ),
    (
        "nodeTaintsPolicy Ignore (default): pods on tainted nodes count",
        [make_node("a").zone("z1"), make_node("b").zone("z1").taint("t", "v"), make_node("c").zone("z2")],
        [placed("p1", "b"), placed("p2", "c")],
        [],
        make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP),
        ["a", "c"],
        {"a": 1, "c": 1},
        {"a": 100, "c": 100},
    ),
    (
        "nodeAffinityPolicy Honor: pods on nodes outside the nodeSelector are not counted",
        [make_node("a").zone("z1").label("pool", "x"), make_node("b").zone("z1"), make_node("c").zone("z2").label("pool", "x")],
        [placed("p1", "b"), placed("p2", "b"), placed("p3", "c")],
        [],
        make_pod("in").labels(**APP).node_selector(pool="x").spread(1, ZONE, "ScheduleAnyway", APP),
        ["a", "c"],
        {"a": 0, "c": 1},
        {"a": 100, "c": 0},
    ),
    (
        "system defaults from a ReplicaSet: nodes without a zone are not ignored",
        [make_node("a").zone("z1"), make_node("b").zone("z1"), make_node("c")],
        [placed("p1", "a"), placed("p2", "c")],
        [make_object("ReplicaSet", "rs", "default", spec={"selector": {"matchLabels": APP}})],
        make_pod("in").labels(**APP).owner("ReplicaSet", "rs"),
        None,
        # a: log5+2 + log4+4 = 9.0; b: 2 + log4+4 = 7.4; c: log5+2 = 3.6
        {"a": 9, "b": 7, "c": 4},
        {"a": 44, "b": 66, "c": 100},
    ),
    (
        "List defaults require every key: nodes without a zone are ignored",
        [make_node("a").zone("z1"), make_node("b").zone("z2"), make_node("c")],
        [placed("p1", "a"), placed("p2", "c")],
        [make_object("Service", "svc", "default", spec={"selector": APP})],
        make_pod("in").labels(**APP),
        None,
        {"a": 1, "b": 0, "c": 0},
        {"a": 0, "b": 100, "c": 0},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "objects", "pod", "feasible", "raw", "normalized"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    nodes: NodeList,
    pods: PodList,
    objects: list[KubeObject],
    pod: PodBuilder,
    feasible: list[str] | None,
    raw: dict[str, int],
    normalized: dict[str, int],
) -> None:
    args = None
    if not pod.raw["metadata"].get("ownerReferences") and objects and objects[0].kind == "Service":
        args = list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"})
    code, got_raw, got_norm = run_score(make_snapshot(nodes, pods, objects), pod.build(), feasible, args)
    assert code == Code.SUCCESS
    assert got_raw == raw
    assert got_norm == normalized


@pytest.mark.parametrize(
    ("nodes", "pod", "objects", "args"),
    [
        (zone_nodes(("a", "z1")), make_pod("in").labels(**APP), [], None),
        (zone_nodes(("a", "z1")), make_pod("in").labels(**APP).spread(1, ZONE, match_labels=APP), [], None),
        (
            zone_nodes(("a", "z1")),
            make_pod("in").labels(**APP),
            [make_object("Service", "svc", "default", spec={"selector": APP})],
            list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}),
        ),
        ([], make_pod("in").labels(**APP).spread(1, ZONE, "ScheduleAnyway", APP), [], None),
    ],
    ids=["no constraints, nothing selects the pod", "hard only", "List defaults hard only", "no nodes"],
)
def test_pre_score_skip(
    nodes: NodeList, pod: PodBuilder, objects: list[KubeObject], args: PodTopologySpreadArgs | None
) -> None:
    snap = make_snapshot(nodes, [], objects)
    st = CycleState()
    s = plugin(snap, args).pre_score(st, pod.build(), snap.node_info_list)
    assert s.code == Code.SKIP
    assert st.get(pts.PRE_SCORE_STATE_KEY) is None


def test_score_explain() -> None:
    snap = make_snapshot(
        [make_node("a").zone("z1"), make_node("c").zone("z2"), make_node("d")],
        [placed("p1", "a"), placed("p2", "a")],
    )
    pl = plugin(snap)
    pod = make_pod("in").labels(**APP).spread(2, ZONE, "ScheduleAnyway", APP).build()
    st = CycleState()
    assert pl.pre_score(st, pod, snap.node_info_list).is_success()
    ex = pl.explain(st)
    assert ex["preFilter"] is None
    assert ex["preScore"]["ignoredNodes"] == ["d"]
    [c] = ex["preScore"]["constraints"]
    assert c["podCounts"] == {"z1": 2, "z2": 0}
    assert c["topologyNormalizingWeight"] == LOG4
    a = snap.get("a")
    assert a is not None
    sc = pl.explain_node(st, pod, a)["score"]
    assert sc["raw"] == 4  # 2*log4 + 1 = 3.77
    assert sc["constraints"][0]["matchingPods"] == 2
    assert sc["sum"] == 2 * LOG4 + 1
    d = snap.get("d")
    assert d is not None
    assert pl.explain_node(st, pod, d)["score"]["ignored"] is True


def test_score_without_pre_score_state_is_an_error() -> None:
    snap = make_snapshot(zone_nodes(("a", "z1")))
    pl = plugin(snap)
    v, st = pl.score(CycleState(), make_pod("in").build(), snap.node_info_list[0])
    assert (v, st.code) == (0, Code.ERROR)
    assert pl.normalize_score(CycleState(), make_pod("in").build(), []).code == Code.ERROR


@pytest.mark.parametrize(
    ("x", "want"),
    [(0.0, 0), (0.4999999999999999, 0), (0.5, 1), (1.5, 2), (2.5, 3), (3.4999, 3), (-0.5, -1), (8.996, 9)],
)
def test_go_round_is_half_away_from_zero(x: float, want: int) -> None:
    assert go_round(x) == want


# ----------------------------------------------------------------------------- default selector


def _rs(name: str, selector: dict[str, Any] | None, ns: str = "default") -> KubeObject:
    return make_object("ReplicaSet", name, ns, spec={"selector": selector})


DEFAULT_SELECTOR_CASES: list[tuple[str, PodBuilder, list[KubeObject], list[tuple[dict[str, str], bool]] | None]] = [
    ("nothing selects the pod: empty", make_pod("in").labels(**APP), [], None),
    (
        "Services are merged",
        make_pod("in").labels(app="web", tier="fe", x="1"),
        [
            make_object("Service", "s1", "default", spec={"selector": {"app": "web"}}),
            make_object("Service", "s2", "default", spec={"selector": {"tier": "fe"}}),
        ],
        [({"app": "web", "tier": "fe"}, True), ({"app": "web"}, False)],
    ),
    (
        "Services without selector, of another namespace or not matching are ignored",
        make_pod("in").labels(**APP),
        [
            make_object("Service", "s1", "default", spec={}),
            make_object("Service", "s2", "other", spec={"selector": APP}),
            make_object("Service", "s3", "default", spec={"selector": {"app": "api"}}),
        ],
        None,
    ),
    (
        "ReplicaSet selector requirements are added",
        make_pod("in").labels(app="web", tier="fe").owner("ReplicaSet", "rs"),
        [
            make_object("Service", "s1", "default", spec={"selector": {"app": "web"}}),
            _rs("rs", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]}),
        ],
        [({"app": "web", "tier": "be"}, True), ({"app": "web"}, False), ({"tier": "fe"}, False)],
    ),
    (
        "a ReplicaSet with an empty selector adds nothing",
        make_pod("in").labels(**APP).owner("ReplicaSet", "rs"),
        [_rs("rs", {})],
        None,
    ),
    (
        "owner apiVersion must be apps/v1",
        make_pod("in").labels(**APP).set("metadata.ownerReferences", [
            {"apiVersion": "extensions/v1beta1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
        ]),
        [_rs("rs", {"matchLabels": APP})],
        None,
    ),
    (
        "only the controller owner is used",
        make_pod("in").labels(**APP).owner("ReplicaSet", "rs", controller=False),
        [_rs("rs", {"matchLabels": APP})],
        None,
    ),
    (
        "the owner is looked up in the pod's namespace",
        make_pod("in").labels(**APP).owner("ReplicaSet", "rs"),
        [_rs("rs", {"matchLabels": APP}, ns="other")],
        None,
    ),
    (
        "StatefulSet",
        make_pod("in").labels(**APP).owner("StatefulSet", "ss"),
        [make_object("StatefulSet", "ss", "default", spec={"selector": {"matchLabels": APP}})],
        [(APP, True), ({"app": "x"}, False)],
    ),
    (
        "ReplicationController (core v1) merges its label map",
        make_pod("in").labels(app="web", rc="r").set("metadata.ownerReferences", [
            {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "uid": "u", "controller": True}
        ]),
        [
            make_object("Service", "s1", "default", spec={"selector": {"app": "web"}}),
            make_object("ReplicationController", "rc", "default", spec={"selector": {"rc": "r"}}),
        ],
        [({"app": "web", "rc": "r"}, True), ({"rc": "r"}, False)],
    ),
]


@pytest.mark.parametrize(
    ("pod", "objects", "checks"), [c[1:] for c in DEFAULT_SELECTOR_CASES], ids=[c[0] for c in DEFAULT_SELECTOR_CASES]
)
def test_default_selector(
    pod: PodBuilder, objects: list[KubeObject], checks: list[tuple[dict[str, str], bool]] | None
) -> None:
    sel = default_selector(pod.build(), make_snapshot([], [], objects).cluster)
    if checks is None:
        assert sel.empty
        return
    assert not sel.empty
    for labels, want in checks:
        assert sel.matches(labels) is want, labels


# ----------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"defaultingType": "System", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
            "when .defaultConstraints are not empty",
        ),
        ({"defaultingType": "Other"}, 'Unsupported value: "Other"'),
        (
            {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
            "not in valid range (0, inf)",
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE}]},
            "whenUnsatisfiable: Required value",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
                ],
            },
            "constraint must not define a selector",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "Duplicate value",
        ),
    ],
)
def test_invalid_args(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        plugin(make_snapshot(), PodTopologySpreadArgs.model_validate(raw))


def test_default_args_are_system_defaulting() -> None:
    for args in (None, PodTopologySpreadArgs.model_validate({"defaultingType": ""})):
        pl = plugin(make_snapshot(), args)
        assert pl.system_defaulted
        assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in pl.default_constraints] == [
            (HOST, 3, "ScheduleAnyway"),
            (ZONE, 5, "ScheduleAnyway"),
        ]
    pl = plugin(make_snapshot(), PodTopologySpreadArgs.model_validate({"defaultingType": "List"}))
    assert not pl.system_defaulted
    assert pl.default_constraints == []


def test_list_default_min_domains_and_policies_are_used() -> None:
    nodes: NodeList = [make_node("a").zone("z1"), make_node("c").zone("z2")]
    pods: PodList = [placed("p1", "a"), placed("p2", "c")]
    objects = [make_object("Service", "svc", "default", spec={"selector": APP})]
    args = list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3})
    code, got = run_filter(make_snapshot(nodes, pods, objects), make_pod("in").labels(**APP).build(), args)
    assert code == Code.SUCCESS
    assert got == {"a": REJ, "c": REJ}
