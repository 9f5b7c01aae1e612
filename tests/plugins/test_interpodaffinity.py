"""InterPodAffinity: PreFilter/Filter (incl. first-of-group and namespaces), AddPod/RemovePod,
PreScore/Score/NormalizeScore (symmetry, hardPodAffinityWeight, ignorePreferredTermsOfExistingPods),
and the explain detail."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config.args import InterPodAffinityArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore, extension_points_of
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import PodInfo
from kschedctl.plugins.interpodaffinity import plugin as ipa
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
AFF = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
WEB = {"app": "web"}
DB = {"app": "db"}

OK = ("Success", "")
NO_AFF = ("UnschedulableAndUnresolvable", AFF)
NO_ANTI = ("Unschedulable", ANTI)
NO_EXISTING = ("Unschedulable", EXISTING)


def zone_nodes(*spec: tuple[str, str | None]) -> NodeList:
    out: NodeList = []
    for name, zone in spec:
        n = make_node(name)
        if zone is not None:
            n.zone(zone)
        out.append(n)
    return out


def three_zones() -> NodeList:
    return zone_nodes(("n1", "a"), ("n2", "a"), ("n3", "b"), ("n4", None))


def placed(name: str, node: str, labels: dict[str, str] | None = None, ns: str = "default") -> PodBuilder:
    return make_pod(name, ns).labels(**(WEB if labels is None else labels)).node(node)


def namespace(name: str, **labels: str) -> KubeObject:
    return make_object("Namespace", name, labels={"kubernetes.io/metadata.name": name, **labels})


def plugin(snap: Snapshot, args: InterPodAffinityArgs | None = None) -> ipa.InterPodAffinity:
    return ipa.new(args, FakeHandle(snap))


def _build(p: Pod | PodBuilder) -> Pod:
    return p.build() if isinstance(p, PodBuilder) else p


def run_filter(
    nodes: NodeList, pods: PodList, pod: PodBuilder, objects: list[KubeObject] | None = None
) -> tuple[str, dict[str, tuple[str, str]]]:
    snap = make_snapshot(nodes, pods, objects or [])
    pl = plugin(snap)
    state = CycleState()
    incoming = pod.build()
    res, st = pl.pre_filter(state, incoming, snap.node_info_list)
    assert res is None
    if not st.is_success():
        return st.code.label, {}
    out: dict[str, tuple[str, str]] = {}
    for ni in snap.node_info_list:
        f = pl.filter(state, incoming, ni)
        out[ni.name] = (f.code.label, f.message())
    return st.code.label, out


def run_score(
    nodes: NodeList,
    pods: PodList,
    pod: PodBuilder,
    args: InterPodAffinityArgs | None = None,
    objects: list[KubeObject] | None = None,
    feasible: list[str] | None = None,
) -> tuple[str, dict[str, int], dict[str, int]]:
    snap = make_snapshot(nodes, pods, objects or [])
    pl = plugin(snap, args)
    state = CycleState()
    incoming = pod.build()
    names = feasible if feasible is not None else [ni.name for ni in snap.node_info_list]
    nis = [snap.get(n) for n in names]
    st = pl.pre_score(state, incoming, [ni for ni in nis if ni is not None])
    if not st.is_success():
        return st.code.label, {}, {}
    scores: list[NodeScore] = []
    for ni in nis:
        assert ni is not None
        v, s = pl.score(state, incoming, ni)
        assert s.is_success()
        scores.append(NodeScore(ni.name, v))
    raw = {s.name: s.score for s in scores}
    assert pl.normalize_score(state, incoming, scores).is_success()
    return st.code.label, raw, {s.name: s.score for s in scores}


def with_match_label_keys(p: PodBuilder, key: str, keys: list[str], anti: bool = False) -> PodBuilder:
    kind = "podAntiAffinity" if anti else "podAffinity"
    p.spec["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"][-1][key] = keys
    return p


# ----------------------------------------------------------------------------------- plugin shape


def test_extension_points_and_names() -> None:
    pl = plugin(make_snapshot())
    assert ipa.NAME == "InterPodAffinity" == pl.name
    assert extension_points_of(pl) == ["preFilter", "filter", "preScore", "score"]
    assert pl.pre_filter_extensions() is pl
    assert pl.score_extensions() is pl


@pytest.mark.parametrize("weight", [-1, 101])
def test_hard_pod_affinity_weight_validation(weight: int) -> None:
    with pytest.raises(
        ConfigError, match=r"hardPodAffinityWeight: Invalid value: -?\d+: not in valid range \[0, 100\]"
    ):
        plugin(make_snapshot(), InterPodAffinityArgs(hard_pod_affinity_weight=weight))


def test_defaults_when_no_args() -> None:
    pl = plugin(make_snapshot())
    assert pl.args.hard_pod_affinity_weight == 1
    assert pl.args.ignore_preferred_terms_of_existing_pods is False


# ----------------------------------------------------------------------------------- PreFilter / Filter

FILTER_CASES: list[
    tuple[str, NodeList, PodList, PodBuilder, list[KubeObject], str, dict[str, tuple[str, str]]]
] = [
    (
        "no terms and no existing anti-affinity: Skip",
        three_zones(),
        [placed("w1", "n1")],
        make_pod("p").labels(**WEB),
        [],
        "Skip",
        {},
    ),
    (
        "existing anti-affinity that does not match the pod: Skip",
        three_zones(),
        [placed("w1", "n1").pod_affinity("required", ZONE, DB, anti=True)],
        make_pod("p").labels(**WEB),
        [],
        "Skip",
        {},
    ),
    (
        "existing anti-affinity matching, but its node lacks the topology key: Skip",
        three_zones(),
        [placed("w1", "n4", DB).pod_affinity("required", ZONE, WEB, anti=True)],
        make_pod("p").labels(**WEB),
        [],
        "Skip",
        {},
    ),
    (
        "required affinity by zone: other zone and nodes without the key are rejected",
        three_zones(),
        [placed("d1", "n2", DB)],
        make_pod("p").pod_affinity("required", ZONE, DB),
        [],
        "Success",
        {"n1": OK, "n2": OK, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "required affinity: a match in another namespace does not count",
        three_zones(),
        [placed("d1", "n2", DB, ns="other"), placed("d2", "n3", DB)],
        make_pod("p").pod_affinity("required", ZONE, DB),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "required affinity with explicit namespaces",
        three_zones(),
        [placed("d1", "n2", DB, ns="other"), placed("d2", "n3", DB)],
        make_pod("p").pod_affinity("required", ZONE, DB, namespaces=["other"]),
        [],
        "Success",
        {"n1": OK, "n2": OK, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "first of group: nothing matches anywhere and the pod matches its own term",
        three_zones(),
        [placed("w1", "n1", DB)],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB),
        [],
        "Success",
        {"n1": OK, "n2": OK, "n3": OK, "n4": NO_AFF},
    ),
    (
        "first of group does not apply when the pod does not match its own term",
        three_zones(),
        [],
        make_pod("p").labels(**DB).pod_affinity("required", ZONE, WEB),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "first of group: a matching pod on a node without the key is not counted",
        three_zones(),
        [placed("w1", "n4")],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB),
        [],
        "Success",
        {"n1": OK, "n2": OK, "n3": OK, "n4": NO_AFF},
    ),
    (
        "first of group does not apply once a matching pod is counted somewhere",
        three_zones(),
        [placed("w1", "n3")],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "two required terms: one existing pod must match both",
        three_zones(),
        [placed("x", "n1", {"app": "db"}), placed("y", "n3", {"app": "db", "tier": "cache"})],
        make_pod("p")
        .pod_affinity("required", ZONE, DB)
        .pod_affinity("required", HOST, None, label_selector={"matchLabels": {"tier": "cache"}}),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "required anti-affinity by hostname",
        three_zones(),
        [placed("w1", "n1"), placed("w2", "n4")],
        make_pod("p").labels(**WEB).pod_affinity("required", HOST, WEB, anti=True),
        [],
        "Success",
        {"n1": NO_ANTI, "n2": OK, "n3": OK, "n4": NO_ANTI},
    ),
    (
        "required anti-affinity by zone: nodes without the zone are allowed",
        three_zones(),
        [placed("w1", "n1"), placed("w2", "n4")],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB, anti=True),
        [],
        "Success",
        {"n1": NO_ANTI, "n2": NO_ANTI, "n3": OK, "n4": OK},
    ),
    (
        "existing pods' required anti-affinity rejects the whole domain",
        three_zones(),
        [placed("d1", "n3", DB).pod_affinity("required", ZONE, WEB, anti=True)],
        make_pod("p").labels(**WEB),
        [],
        "Success",
        {"n1": OK, "n2": OK, "n3": NO_EXISTING, "n4": OK},
    ),
    (
        "affinity is checked before anti-affinity, anti-affinity before existing anti-affinity",
        three_zones(),
        [
            placed("d1", "n1", DB),
            placed("w1", "n2"),
            placed("e1", "n3", {"app": "cache"}).pod_affinity("required", ZONE, WEB, anti=True),
            placed("d3", "n3", DB),
        ],
        make_pod("p")
        .labels(**WEB)
        .pod_affinity("required", ZONE, DB)
        .pod_affinity("required", HOST, WEB, anti=True),
        [],
        "Success",
        {"n1": OK, "n2": NO_ANTI, "n3": NO_EXISTING, "n4": NO_AFF},
    ),
    (
        "namespaceSelector selects namespaces by their labels",
        three_zones(),
        [placed("d1", "n1", DB, ns="team-a"), placed("d2", "n3", DB, ns="team-b")],
        make_pod("p").pod_affinity("required", ZONE, DB, namespace_selector={"matchLabels": {"team": "b"}}),
        [namespace("team-a", team="a"), namespace("team-b", team="b"), namespace("default")],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "namespaceSelector and namespaces are ORed",
        three_zones(),
        [placed("d1", "n1", DB, ns="team-a"), placed("d2", "n3", DB, ns="team-b")],
        make_pod("p").pod_affinity(
            "required", HOST, DB, namespaces=["team-a"], namespace_selector={"matchLabels": {"team": "b"}}
        ),
        [namespace("team-a", team="a"), namespace("team-b", team="b")],
        "Success",
        {"n1": OK, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "an empty namespaceSelector selects every namespace",
        three_zones(),
        [placed("d1", "n1", DB, ns="team-a"), placed("d2", "n3", DB, ns="nowhere")],
        make_pod("p").pod_affinity("required", HOST, DB, namespace_selector={}),
        [namespace("team-a", team="a")],
        "Success",
        {"n1": OK, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
    (
        "a namespaceSelector with only DoesNotExist still matches every namespace (upstream keeps the selector)",
        three_zones(),
        [placed("d1", "n1", DB, ns="team-a")],
        make_pod("p").pod_affinity(
            "required",
            HOST,
            DB,
            namespace_selector={"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
        ),
        [namespace("team-a", team="a"), namespace("default")],
        "Success",
        {"n1": OK, "n2": NO_AFF, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "empty namespaces list with a selector that selects nothing: no namespace, not even the pod's own",
        three_zones(),
        [placed("d1", "n1", DB)],
        make_pod("p")
        .labels(**DB)
        .pod_affinity("required", HOST, DB, namespace_selector={"matchLabels": {"x": "y"}}),
        [namespace("default")],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
        three_zones(),
        [
            placed("d1", "n1", DB, ns="db").pod_affinity(
                "required", ZONE, WEB, anti=True, namespace_selector={"matchLabels": {"env": "prod"}}
            ),
            placed("d2", "n3", DB, ns="db").pod_affinity(
                "required", ZONE, WEB, anti=True, namespace_selector={"matchLabels": {"env": "dev"}}
            ),
        ],
        make_pod("p", "shop").labels(**WEB),
        [namespace("shop", env="prod"), namespace("db")],
        "Success",
        {"n1": NO_EXISTING, "n2": NO_EXISTING, "n3": OK, "n4": OK},
    ),
    (
        "incoming namespace has no Namespace object: an existing pod's empty namespaceSelector still matches",
        three_zones(),
        [
            placed("d1", "n1", DB, ns="db").pod_affinity(
                "required", HOST, WEB, anti=True, namespace_selector={}
            )
        ],
        make_pod("p", "ghost").labels(**WEB),
        [],
        "Success",
        {"n1": NO_EXISTING, "n2": OK, "n3": OK, "n4": OK},
    ),
    (
        "incoming namespace has no Namespace object: NotIn matches the empty label set",
        three_zones(),
        [
            placed("d1", "n1", DB, ns="db").pod_affinity(
                "required",
                HOST,
                WEB,
                anti=True,
                namespace_selector={
                    "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]
                },
            ),
            placed("d2", "n3", DB, ns="db").pod_affinity(
                "required", HOST, WEB, anti=True, namespace_selector={"matchLabels": {"env": "dev"}}
            ),
        ],
        make_pod("p", "ghost").labels(**WEB),
        [],
        "Success",
        {"n1": NO_EXISTING, "n2": OK, "n3": OK, "n4": OK},
    ),
    (
        "existing pod's nil namespaceSelector and no namespaces: only its own namespace",
        three_zones(),
        [placed("d1", "n1", DB, ns="db").pod_affinity("required", HOST, WEB, anti=True)],
        make_pod("p").labels(**WEB),
        [],
        "Skip",
        {},
    ),
    (
        "matchLabelKeys is not read by the scheduler (the API server merges it at creation)",
        three_zones(),
        [placed("w1", "n1", {"app": "web", "pod-template-hash": "old"})],
        with_match_label_keys(
            make_pod("p")
            .labels(app="web", **{"pod-template-hash": "new"})
            .pod_affinity("required", HOST, WEB, anti=True),
            "matchLabelKeys",
            ["pod-template-hash"],
            anti=True,
        ),
        [],
        "Success",
        {"n1": NO_ANTI, "n2": OK, "n3": OK, "n4": OK},
    ),
    (
        "a nil labelSelector matches no pod",
        three_zones(),
        [placed("d1", "n1", DB)],
        make_pod("p").pod_affinity("required", HOST, None),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": NO_AFF, "n4": NO_AFF},
    ),
    (
        "an empty labelSelector matches every pod of the namespaces",
        three_zones(),
        [placed("d1", "n3", DB)],
        make_pod("p").pod_affinity("required", ZONE, None, label_selector={}),
        [],
        "Success",
        {"n1": NO_AFF, "n2": NO_AFF, "n3": OK, "n4": NO_AFF},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "pod", "objects", "pre", "want"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_pre_filter_and_filter(
    nodes: NodeList,
    pods: PodList,
    pod: PodBuilder,
    objects: list[KubeObject],
    pre: str,
    want: dict[str, tuple[str, str]],
) -> None:
    got_pre, got = run_filter(nodes, pods, pod, objects)
    assert got_pre == pre
    assert got == want


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snap = make_snapshot(three_zones())
    st = plugin(snap).filter(CycleState(), make_pod("p").build(), snap.node_info_list[0])
    assert st.code == Code.ERROR
    assert st.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


def test_pre_filter_counts() -> None:
    snap = make_snapshot(
        three_zones(),
        [
            placed("w1", "n1"),
            placed("w2", "n2"),
            placed("w3", "n4"),
            placed("d1", "n3", DB)
            .pod_affinity("required", ZONE, WEB, anti=True)
            .pod_affinity("required", HOST, WEB, anti=True),
        ],
    )
    state = CycleState()
    pod = (
        make_pod("p")
        .labels(**WEB)
        .pod_affinity("required", ZONE, WEB)
        .pod_affinity("required", HOST, WEB, anti=True)
    )
    _, st = plugin(snap).pre_filter(state, pod.build(), snap.node_info_list)
    assert st.is_success()
    s = state.read(ipa.PRE_FILTER_STATE_KEY)
    assert s.affinity_counts == {(ZONE, "a"): 2}
    assert s.anti_affinity_counts == {(HOST, "n1"): 1, (HOST, "n2"): 1, (HOST, "n4"): 1}
    assert s.existing_anti_affinity_counts == {(ZONE, "b"): 1, (HOST, "n3"): 1}


# ----------------------------------------------------------------------------------- AddPod / RemovePod


def _prefiltered(
    nodes: NodeList, pods: PodList, pod: PodBuilder
) -> tuple[Snapshot, ipa.InterPodAffinity, CycleState, Pod]:
    snap = make_snapshot(nodes, pods)
    pl = plugin(snap)
    state = CycleState()
    incoming = pod.build()
    _, st = pl.pre_filter(state, incoming, snap.node_info_list)
    assert st.is_success()
    return snap, pl, state, incoming


def _verdict(st: Status) -> tuple[str, str]:
    return st.code.label, st.message()


def test_add_pod_changes_only_the_clone() -> None:
    snap, pl, state, incoming = _prefiltered(
        three_zones(),
        [placed("d1", "n3", DB)],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB, anti=True),
    )
    n1 = snap.get("n1")
    assert n1 is not None
    nominated = PodInfo(placed("w9", "n1").build())
    clone = state.clone()
    ni2 = n1.snapshot()
    ni2.add_pod_info(nominated)
    assert pl.add_pod(clone, incoming, nominated, ni2).is_success()
    for name, want in {"n1": NO_ANTI, "n2": NO_ANTI, "n3": OK}.items():
        ni = snap.get(name)
        assert ni is not None
        assert _verdict(pl.filter(clone, incoming, ni)) == want
        assert _verdict(pl.filter(state, incoming, ni)) == OK
    # Removing the same pod brings the count back to zero, and the entry disappears.
    assert pl.remove_pod(clone, incoming, nominated, ni2).is_success()
    assert clone.read(ipa.PRE_FILTER_STATE_KEY).anti_affinity_counts == {}


def test_add_pod_with_anti_affinity_matching_incoming() -> None:
    snap, pl, state, incoming = _prefiltered(
        three_zones(), [], make_pod("p").labels(**WEB).pod_affinity("required", HOST, DB)
    )
    # PreFilter ran (the pod has a required term); a nominated pod hating "web" arrives on n3.
    n3 = snap.get("n3")
    assert n3 is not None
    hater = PodInfo(placed("h", "n3", DB).pod_affinity("required", ZONE, WEB, anti=True).build())
    clone = state.clone()
    assert pl.add_pod(clone, incoming, hater, n3).is_success()
    s = clone.read(ipa.PRE_FILTER_STATE_KEY)
    assert s.existing_anti_affinity_counts == {(ZONE, "b"): 1}
    assert s.affinity_counts == {(HOST, "n3"): 1}
    assert _verdict(pl.filter(clone, incoming, n3)) == NO_EXISTING


def test_remove_pod_for_preemption() -> None:
    victim = placed("d1", "n1", DB).pod_affinity("required", ZONE, WEB, anti=True).build()
    snap, pl, state, incoming = _prefiltered(
        three_zones(),
        [victim, placed("d2", "n3", DB)],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, DB),
    )
    n1, n2 = snap.get("n1"), snap.get("n2")
    assert n1 is not None and n2 is not None
    assert _verdict(pl.filter(state, incoming, n2)) == NO_EXISTING
    clone = state.clone()
    assert pl.remove_pod(clone, incoming, PodInfo.of(victim), n1).is_success()
    s = clone.read(ipa.PRE_FILTER_STATE_KEY)
    assert s.existing_anti_affinity_counts == {}
    # The victim matched the affinity term too: zone a has no db pod any more.
    assert s.affinity_counts == {(ZONE, "b"): 1}
    assert _verdict(pl.filter(clone, incoming, n2)) == NO_AFF


def test_remove_last_matching_pod_enables_first_of_group() -> None:
    only = placed("w1", "n3").build()
    snap, pl, state, incoming = _prefiltered(
        three_zones(), [only], make_pod("p").labels(**WEB).pod_affinity("required", ZONE, WEB)
    )
    n1, n3 = snap.get("n1"), snap.get("n3")
    assert n1 is not None and n3 is not None
    assert _verdict(pl.filter(state, incoming, n1)) == NO_AFF
    clone = state.clone()
    assert pl.remove_pod(clone, incoming, PodInfo.of(only), n3).is_success()
    assert clone.read(ipa.PRE_FILTER_STATE_KEY).affinity_counts == {}
    assert _verdict(pl.filter(clone, incoming, n1)) == OK


def test_add_pod_without_state_is_an_error() -> None:
    snap = make_snapshot(three_zones())
    pl = plugin(snap)
    pi = PodInfo(placed("w", "n1").build())
    ni = snap.node_info_list[0]
    assert pl.add_pod(CycleState(), make_pod("p").build(), pi, ni).code == Code.ERROR
    assert pl.remove_pod(CycleState(), make_pod("p").build(), pi, ni).code == Code.ERROR


# ----------------------------------------------------------------------------------- PreScore / Score

SCORE_CASES: list[
    tuple[
        str, NodeList, PodList, PodBuilder, InterPodAffinityArgs | None, str, dict[str, int], dict[str, int]
    ]
] = [
    (
        "nothing to count: Skip",
        three_zones(),
        [placed("w1", "n1")],
        make_pod("p").labels(**WEB),
        None,
        "Skip",
        {},
        {},
    ),
    (
        "incoming preferred affinity per zone",
        three_zones(),
        [placed("d1", "n1", DB), placed("d2", "n2", DB), placed("d3", "n3", DB)],
        make_pod("p").pod_affinity("preferred", ZONE, DB, weight=10),
        None,
        "Success",
        {"n1": 20, "n2": 20, "n3": 10, "n4": 0},
        {"n1": 100, "n2": 100, "n3": 50, "n4": 0},
    ),
    (
        "incoming preferred anti-affinity gives negative raw scores",
        three_zones(),
        [placed("w1", "n1"), placed("w2", "n1"), placed("w3", "n3")],
        make_pod("p").labels(**WEB).pod_affinity("preferred", HOST, WEB, anti=True, weight=100),
        None,
        "Success",
        {"n1": -200, "n2": 0, "n3": -100, "n4": 0},
        {"n1": 0, "n2": 100, "n3": 50, "n4": 100},
    ),
    (
        "existing pods' preferred anti-affinity counts symmetrically",
        three_zones(),
        [
            placed("d1", "n1", DB).pod_affinity("preferred", HOST, WEB, anti=True, weight=100),
            placed("d2", "n2", DB).pod_affinity("preferred", ZONE, WEB, anti=True, weight=50),
        ],
        make_pod("p").labels(**WEB),
        None,
        "Success",
        {"n1": -150, "n2": -50, "n3": 0, "n4": 0},
        {"n1": 0, "n2": 66, "n3": 100, "n4": 100},
    ),
    (
        "existing pods' preferred affinity counts symmetrically",
        three_zones(),
        [placed("d1", "n3", DB).pod_affinity("preferred", ZONE, WEB, weight=7)],
        make_pod("p").labels(**WEB),
        None,
        "Success",
        {"n1": 0, "n2": 0, "n3": 7, "n4": 0},
        {"n1": 0, "n2": 0, "n3": 100, "n4": 0},
    ),
    (
        "existing pods' required affinity is weighted by hardPodAffinityWeight (default 1)",
        three_zones(),
        [placed("d1", "n1", DB).pod_affinity("required", ZONE, WEB)],
        make_pod("p").labels(**WEB),
        None,
        "Success",
        {"n1": 1, "n2": 1, "n3": 0, "n4": 0},
        {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
    ),
    (
        "hardPodAffinityWeight from the args",
        three_zones(),
        [
            placed("d1", "n1", DB).pod_affinity("required", ZONE, WEB),
            placed("d2", "n3", DB).pod_affinity("required", ZONE, WEB),
        ],
        make_pod("p").labels(**WEB).pod_affinity("preferred", HOST, DB, weight=3),
        InterPodAffinityArgs(hard_pod_affinity_weight=5),
        "Success",
        {"n1": 8, "n2": 5, "n3": 8, "n4": 0},
        {"n1": 100, "n2": 62, "n3": 100, "n4": 0},
    ),
    (
        "hardPodAffinityWeight 0 ignores existing required affinity",
        three_zones(),
        [placed("d1", "n1", DB).pod_affinity("required", ZONE, WEB)],
        make_pod("p").labels(**WEB),
        InterPodAffinityArgs(hard_pod_affinity_weight=0),
        "Skip",
        {},
        {},
    ),
    (
        "ignorePreferredTermsOfExistingPods: Skip when the pod has no preferred terms",
        three_zones(),
        [placed("d1", "n1", DB).pod_affinity("preferred", HOST, WEB, anti=True, weight=100)],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, DB),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        "Skip",
        {},
        {},
    ),
    (
        "ignorePreferredTermsOfExistingPods: existing terms still count when the pod has preferred terms",
        three_zones(),
        [placed("d1", "n1", DB).pod_affinity("preferred", HOST, WEB, anti=True, weight=100)],
        make_pod("p").labels(**WEB).pod_affinity("preferred", ZONE, DB, weight=40),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        "Success",
        {"n1": -60, "n2": 40, "n3": 0, "n4": 0},
        {"n1": 0, "n2": 100, "n3": 60, "n4": 60},
    ),
    (
        "contributions that cancel out still make PreScore succeed; all scores normalize to 0",
        three_zones(),
        [placed("d1", "n1", DB).pod_affinity("preferred", HOST, WEB, weight=5)],
        make_pod("p").labels(**WEB).pod_affinity("preferred", HOST, DB, anti=True, weight=5),
        None,
        "Success",
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
    (
        "float64 math as upstream: 100 * (29/100) truncates to 28",
        zone_nodes(("n1", "a"), ("n2", "b"), ("n3", "c")),
        [placed("d1", "n2", DB).pod_affinity("preferred", ZONE, WEB, weight=29)]
        + [placed(f"d{i}", "n3", DB).pod_affinity("preferred", ZONE, WEB, weight=50) for i in range(2, 4)],
        make_pod("p").labels(**WEB),
        None,
        "Success",
        {"n1": 0, "n2": 29, "n3": 100},
        {"n1": 0, "n2": 28, "n3": 100},
    ),
    (
        "an existing pod on a node without labels contributes nothing",
        [make_node("bare").set("metadata.labels", {}), make_node("n2").zone("a")],
        [placed("d1", "bare", DB).pod_affinity("preferred", HOST, WEB, weight=50), placed("d2", "n2", DB)],
        make_pod("p").labels(**WEB).pod_affinity("preferred", ZONE, DB, weight=3),
        None,
        "Success",
        {"bare": 0, "n2": 3},
        {"bare": 0, "n2": 100},
    ),
    (
        "incoming preferred term with namespaceSelector",
        three_zones(),
        [placed("d1", "n1", DB, ns="team-a"), placed("d2", "n3", DB, ns="team-b")],
        make_pod("p").pod_affinity(
            "preferred", ZONE, DB, weight=50, anti=True, namespace_selector={"matchLabels": {"team": "a"}}
        ),
        None,
        "Success",
        {"n1": -50, "n2": -50, "n3": 0, "n4": 0},
        {"n1": 0, "n2": 0, "n3": 100, "n4": 100},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "pod", "args", "pre", "raw", "normalized"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_pre_score_score_normalize(
    nodes: NodeList,
    pods: PodList,
    pod: PodBuilder,
    args: InterPodAffinityArgs | None,
    pre: str,
    raw: dict[str, int],
    normalized: dict[str, int],
) -> None:
    objects = [namespace("team-a", team="a"), namespace("team-b", team="b")]
    got_pre, got_raw, got_norm = run_score(nodes, pods, pod, args, objects)
    assert got_pre == pre
    assert got_raw == raw
    assert got_norm == normalized


def test_pre_score_walks_all_nodes_not_only_feasible() -> None:
    # d1 runs on n2, which is infeasible; its zone is shared with the feasible n1.
    pre, raw, norm = run_score(
        three_zones(),
        [placed("d1", "n2", DB).pod_affinity("preferred", ZONE, WEB, weight=30)],
        make_pod("p").labels(**WEB),
        feasible=["n1", "n3"],
    )
    assert pre == "Success"
    assert raw == {"n1": 30, "n3": 0}
    assert norm == {"n1": 100, "n3": 0}


def test_score_without_pre_score_state_is_an_error() -> None:
    snap = make_snapshot(three_zones())
    pl = plugin(snap)
    v, st = pl.score(CycleState(), make_pod("p").build(), snap.node_info_list[0])
    assert v == 0
    assert st.code == Code.ERROR
    assert st.message() == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
    assert pl.normalize_score(CycleState(), make_pod("p").build(), []).code == Code.ERROR


def test_pre_score_state_clone_is_shared() -> None:
    snap = make_snapshot(three_zones(), [placed("d1", "n1", DB)])
    pl = plugin(snap)
    state = CycleState()
    assert pl.pre_score(
        state, make_pod("p").pod_affinity("preferred", HOST, DB, weight=1).build(), []
    ).is_success()
    s = state.read(ipa.PRE_SCORE_STATE_KEY)
    assert s.clone() is s
    assert s.topology_score == {HOST: {"n1": 1}}


# ----------------------------------------------------------------------------------- explain


def test_explain_node_filter_detail() -> None:
    snap, pl, state, incoming = _prefiltered(
        three_zones(),
        [
            placed("d1", "n1", DB),
            placed("d2", "n2", DB),
            placed("h1", "n3", {"app": "cache"}).pod_affinity("required", ZONE, WEB, anti=True),
        ],
        make_pod("p").labels(**WEB).pod_affinity("required", ZONE, DB),
    )
    n2, n3 = snap.get("n2"), snap.get("n3")
    assert n2 is not None and n3 is not None
    d: dict[str, Any] = pl.explain_node(state, incoming, n2)
    assert d["score"] is None
    f = d["filter"]
    term = f["affinity"]["terms"][0]
    assert term["nodeValue"] == "a"
    assert term["matchingPods"] == 2
    assert [(p["pod"], p["node"]) for p in term["pods"]] == [("default/d1", "n1"), ("default/d2", "n2")]
    assert f["affinity"]["satisfied"] is True
    assert f["affinity"]["firstOfGroup"] is False
    assert f["reason"] is None
    f3 = pl.explain_node(state, incoming, n3)["filter"]
    assert f3["reason"] == AFF
    assert f3["existingPodsAntiAffinity"]["domains"] == [
        {
            "topologyKey": ZONE,
            "value": "b",
            "matchingPods": 1,
            "pods": [{"pod": "default/h1", "node": "n3", "term": 0}],
        }
    ]
    summary = pl.explain(state)
    assert summary["preScore"] is None
    assert summary["preFilter"]["affinityCounts"] == [{"topologyKey": ZONE, "value": "a", "count": 2}]


def test_explain_node_score_detail() -> None:
    snap = make_snapshot(
        three_zones(),
        [
            placed("d1", "n1", DB).pod_affinity("preferred", HOST, WEB, anti=True, weight=100),
            placed("d2", "n2", DB).pod_affinity("required", ZONE, WEB),
        ],
    )
    pl = plugin(snap, InterPodAffinityArgs(hard_pod_affinity_weight=3))
    state = CycleState()
    incoming = make_pod("p").labels(**WEB).pod_affinity("preferred", ZONE, DB, weight=10).build()
    assert pl.pre_score(state, incoming, snap.node_info_list).is_success()
    n1 = snap.get("n1")
    assert n1 is not None
    sd = pl.explain_node(state, incoming, n1)["score"]
    assert sd["raw"] == -100 + 10 + 10 + 3
    by_key = {d["topologyKey"]: d for d in sd["domains"]}
    assert by_key[HOST]["score"] == -100
    assert by_key[HOST]["pods"] == [
        {
            "pod": "default/d1",
            "node": "n1",
            "source": "existingPreferredAntiAffinity",
            "term": 0,
            "weight": -100,
        }
    ]
    assert by_key[ZONE]["score"] == 23
    assert sorted((p["pod"], p["source"], p["weight"]) for p in by_key[ZONE]["pods"]) == [
        ("default/d1", "incomingPreferredAffinity", 10),
        ("default/d2", "existingRequiredAffinity", 3),
        ("default/d2", "incomingPreferredAffinity", 10),
    ]
    assert pl.explain(state)["preScore"]["walkedAllPods"] is True
