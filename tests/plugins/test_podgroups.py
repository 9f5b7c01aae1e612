"""Pod groups (v1.36 alpha): PodGroup parsing, the per-group pod state, and the plugins
GangScheduling (PreEnqueue, Permit), TopologyPlacementGenerator, PodGroupPodsCount and
NodeResourcesFit's PlacementScore; running the PlacementGenerate and PlacementScore extension points."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config.args import NodeResourcesFitArgs
from kschedctl.framework import placement
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.podgroups import (
    Placement,
    PodGroup,
    PodGroupAssignments,
    PodGroupState,
    find_pod_group,
    group_state,
    pod_group_name,
)
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins import gangscheduling, podgrouppodscount, topologyaware
from kschedctl.plugins.noderesources import fit
from kschedctl.snapshot.model import KubeObject
from tests.builders import (
    NodeBuilder,
    PodBuilder,
    SnapshotHandle,
    make_cluster,
    make_node,
    make_object,
    make_pod,
)


def pod_group(name: str = "pg", *, min_count: int | None = None, topology: list[str] | None = None) -> KubeObject:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": k} for k in topology]}
    return make_object("PodGroup", name, "default", apiVersion="scheduling.k8s.io/v1alpha2", spec=spec)


def member(name: str, group: str = "pg", node: str | None = None) -> PodBuilder:
    p = make_pod(name).set("spec.schedulingGroup", {"podGroupName": group})
    return p.node(node) if node else p


def zone_node(name: str, zone: str | None) -> NodeBuilder:
    b = make_node(name)
    return b.label("zone", zone) if zone else b


def handle(pods: list[PodBuilder], objects: list[KubeObject], nodes: list[NodeBuilder] | None = None) -> Framework:
    cluster = make_cluster(nodes or [make_node("n1"), make_node("n2")], pods, objects)
    return SnapshotHandle(Snapshot(cluster))


def test_parse_and_lookup() -> None:
    h = handle([], [pod_group(min_count=3, topology=["zone", "rack"]), pod_group("basic")])
    assert find_pod_group(h.cluster, "default", "pg") == PodGroup("default", "pg", 3, ("zone", "rack"))
    assert find_pod_group(h.cluster, "default", "basic") == PodGroup("default", "basic", None, ())
    assert find_pod_group(h.cluster, "other", "pg") is None
    assert pod_group_name(member("a").build()) == "pg"
    assert pod_group_name(make_pod("b").build()) is None


def test_state_follows_assume_and_forget() -> None:
    h = handle([member("bound", node="n1"), member("waiting"), make_pod("loner")], [pod_group(min_count=2)])
    bound, waiting = h.cluster.pod("default", "bound"), h.cluster.pod("default", "waiting")
    assert bound is not None and waiting is not None
    s = group_state(h.snapshot, "default", "pg")
    assert (s.all_pods_count(), s.scheduled_pods_count(), s.unscheduled) == (2, 1, {waiting.uid})
    s.assume(waiting)
    assert (s.scheduled_pods_count(), s.unscheduled) == (2, set())
    assert [p.name for p in s.scheduled_pods()] == ["bound", "waiting"]
    s.forget(waiting)
    assert (s.scheduled_pods_count(), s.unscheduled) == (1, {waiting.uid})
    s.assume(make_pod("stranger").build())  # not a member: ignored
    assert s.all_pods_count() == 2
    assert PodGroupState().scheduled_pods() == []


def test_state_counts_pods_created_since_and_a_pod_explained_as_pending_once() -> None:
    """The cache knows the pods created after the cluster was read; a bound pod the snapshot leaves out (explained
    as if pending) is not counted where it is bound."""
    cluster = make_cluster([make_node("n1")], [member("bound", node="n1"), member("other", node="n1")], [pod_group(min_count=2)])
    snap = Snapshot(cluster, exclude_pod_uids=[cluster.pods[0].uid])
    late = member("late").build()
    snap.created_pods[late.uid] = late
    s = group_state(snap, "default", "pg")
    assert (s.all_pods_count(), s.scheduled_pods_count(), s.unscheduled) == (2, 1, {late.uid})


@pytest.mark.parametrize(
    ("pods", "objects", "incoming", "code", "reasons"),
    [
        pytest.param([], [], make_pod("p"), Code.SUCCESS, [], id="no-group"),
        pytest.param(
            [], [], member("p"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['waiting for pods\'s pod group "pg" to appear in scheduling queue'], id="group-missing",
        ),
        pytest.param([], [pod_group()], member("p"), Code.SUCCESS, [], id="basic-policy"),
        pytest.param(
            [member("a")], [pod_group(min_count=3)], member("p"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            [gangscheduling.WAITING_FOR_MIN_COUNT], id="too-few-pods",
        ),
        pytest.param([member("a"), member("b", node="n1")], [pod_group(min_count=3)], member("p"), Code.SUCCESS, [],
                     id="enough-pods"),
    ],
)
def test_gang_pre_enqueue(
    pods: list[PodBuilder], objects: list[KubeObject], incoming: PodBuilder, code: Code, reasons: list[str]
) -> None:
    st = gangscheduling.new(None, handle(pods, objects)).pre_enqueue(incoming.build())
    assert (st.code, st.reasons) == (code, reasons)


@pytest.mark.parametrize(
    ("pods", "objects", "code", "timeout"),
    [
        pytest.param([], [pod_group(min_count=2)], Code.WAIT, gangscheduling.PERMIT_TIMEOUT_SECONDS, id="first-of-two-waits"),
        pytest.param([member("a", node="n1")], [pod_group(min_count=2)], Code.SUCCESS, 0.0, id="completes-quorum"),
        pytest.param([], [pod_group()], Code.SUCCESS, 0.0, id="basic-policy"),
        pytest.param([], [], Code.ERROR, 0.0, id="group-missing"),
    ],
)
def test_gang_permit(pods: list[PodBuilder], objects: list[KubeObject], code: Code, timeout: float) -> None:
    st, t = gangscheduling.new(None, handle(pods, objects)).permit(CycleState(), member("p").build(), "n1")
    assert (st.code, t) == (code, timeout)
    if code == Code.WAIT:
        assert st.reasons == [gangscheduling.WAITING_FOR_QUORUM]


def test_gang_permit_without_group() -> None:
    st, t = gangscheduling.new(None, handle([], [])).permit(CycleState(), make_pod("p").build(), "n1")
    assert (st.code, t) == (Code.SUCCESS, 0.0)


NODES = [zone_node("a1", "a"), zone_node("a2", "a"), zone_node("b1", "b"), zone_node("x", None)]


@pytest.mark.parametrize(
    ("pods", "topology", "want"),
    [
        pytest.param([], None, [("", ["a1", "a2", "b1", "x"])], id="no-constraint-parent"),
        pytest.param([], ["zone"], [("a", ["a1", "a2"]), ("b", ["b1"])], id="per-zone"),
        pytest.param([member("s", node="b1")], ["zone"], [("b", ["b1"])], id="scheduled-pods-pin-domain"),
    ],
)
def test_topology_placements(pods: list[PodBuilder], topology: list[str] | None, want: list[tuple[str, list[str]]]) -> None:
    h = handle(pods, [pod_group(min_count=2, topology=topology)], NODES)
    pl = topologyaware.new(None, h)
    pg = find_pod_group(h.cluster, "default", "pg")
    assert pg is not None
    placements, st = pl.generate_placements(pg, Placement(list(h.snapshot.node_info_list)))
    assert st.is_success()
    assert [(p.name, [ni.name for ni in p.nodes]) for p in placements] == want


def test_topology_scheduled_pods_in_two_domains() -> None:
    h = handle([member("s1", node="a1"), member("s2", node="b1")], [pod_group(topology=["zone"])], NODES)
    pg = find_pod_group(h.cluster, "default", "pg")
    assert pg is not None
    placements, st = topologyaware.new(None, h).generate_placements(pg, Placement(list(h.snapshot.node_info_list)))
    assert (placements, st.code) == ([], Code.ERROR)
    assert "more than 1 domain found for pod group" in st.message()


def test_pods_count_scores_and_normalizes() -> None:
    h = handle([member("s", node="n1")], [pod_group(min_count=3)])
    pl = podgrouppodscount.new(None, h)
    pg = PodGroup("default", "pg", 3)
    p = member("p").build()
    place = Placement(list(h.snapshot.node_info_list), "all")
    scores = [pl.score_placement(pg, PodGroupAssignments(place, [(p, "n1"), (p, "n2")]))[0],
              pl.score_placement(pg, PodGroupAssignments(place, [(p, "n2")]))[0]]
    assert scores == [3, 2]
    assert pl.normalize_placement_scores(pg, scores).is_success()
    assert scores == [100, 66]
    st = pl.normalize_placement_scores(pg, [0, 0])
    assert st.code == Code.ERROR


TOPOLOGY_AWARE = resolve_features(36, {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})


@pytest.mark.parametrize(
    ("resources", "want"),
    [
        # cpu: 2 pods x 1 + 1 already on a1 = 3 of 8 -> 37; memory: 2 x 4Gi + 2Gi = 10Gi of 32Gi -> 31.
        pytest.param(None, (37 + 31) // 2, id="default-resources"),
        pytest.param([{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}], (37 * 2 + 31) // 3, id="weighted"),
    ],
)
def test_fit_score_placement(resources: list[dict[str, Any]] | None, want: int) -> None:
    nodes = [make_node("a1").alloc(cpu="4", memory="16Gi"), make_node("a2").alloc(cpu="4", memory="16Gi")]
    cluster = make_cluster(nodes, [make_pod("old").req(cpu="1", memory="2Gi").node("a1")], [])
    h = SnapshotHandle(cluster, features=TOPOLOGY_AWARE)
    args = {"scoringStrategy": {"type": "LeastAllocated", **({"resources": resources} if resources else {})}}
    pl = fit.new(NodeResourcesFitArgs.model_validate(args), h)
    p = member("p").req(cpu="1", memory="4Gi").build()
    place = Placement(list(h.snapshot.node_info_list), "a")
    score, st = pl.score_placement(PodGroup("default", "pg", 2), PodGroupAssignments(place, [(p, "a1"), (p, "a2")]))
    assert (score, st.code) == (want, Code.SUCCESS)


def test_fit_score_placement_needs_the_gate() -> None:
    pl = fit.new(None, SnapshotHandle(Snapshot(make_cluster([make_node("a1")], [], []))))
    score, st = pl.score_placement(PodGroup("default", "pg"), PodGroupAssignments(Placement([])))
    assert (score, st.code) == (0, Code.ERROR)


class _Scorer:
    """A PlacementScore plugin giving fixed raw scores, optionally without normalization."""

    def __init__(self, name: str, raw: list[int], *, normalize: bool = True, fail: bool = False) -> None:
        self.name = name
        self.raw = list(raw)
        self.fail = fail
        if normalize:
            self.normalize_placement_scores = self._double

    def score_placement(self, pod_group: PodGroup, assignments: PodGroupAssignments) -> tuple[int, Status]:
        if self.fail:
            return 0, Status.as_error("boom")
        return self.raw.pop(0), Status()

    def _double(self, pod_group: PodGroup, scores: list[int]) -> Status:
        scores[:] = [s * 2 for s in scores]
        return Status()


def _assignments(*names: str) -> list[PodGroupAssignments]:
    return [PodGroupAssignments(Placement([], n)) for n in names]


@pytest.mark.parametrize(
    ("plugins", "weights", "totals", "best", "error"),
    [
        pytest.param([_Scorer("A", [10, 40], normalize=False)], {"A": 2}, [20, 80], ["b"], None, id="weighted"),
        pytest.param(
            [_Scorer("A", [10, 40]), _Scorer("B", [30, 0], normalize=False)], {"A": 1, "B": 1}, [50, 80], ["b"], None,
            id="normalized-then-summed",
        ),
        pytest.param([_Scorer("A", [25, 25], normalize=False)], {}, [25, 25], ["a", "b"], None, id="tie-set"),
        pytest.param([_Scorer("A", [60, 0])], {}, None, None, "returns an invalid score 120", id="out-of-range"),
        pytest.param([_Scorer("A", [1, 1], fail=True)], {}, None, None,
                     'running PlacementScore plugins: plugin "A" failed with: boom', id="plugin-error"),
    ],
)
def test_run_placement_score(
    plugins: list[Any], weights: dict[str, int], totals: list[int] | None, best: list[str] | None, error: str | None
) -> None:
    scores, st = placement.run_placement_score(plugins, weights, PodGroup("default", "pg"), _assignments("a", "b"))
    if error is not None:
        assert st.code == Code.ERROR and error in st.message()
        return
    assert [s.total for s in scores] == totals
    assert [p.name for p in placement.best_placements(scores)] == best


def test_run_placement_generate() -> None:
    h = handle([], [pod_group(topology=["zone"])], NODES)
    pg = find_pod_group(h.cluster, "default", "pg")
    assert pg is not None
    nodes = list(h.snapshot.node_info_list)
    parent, st = placement.run_placement_generate([], pg, nodes)
    assert st.is_success() and [(p.name, len(p.nodes)) for p in parent] == [("", 4)]
    per_zone, st = placement.run_placement_generate([topologyaware.new(None, h)], pg, nodes)
    assert [p.name for p in per_zone] == ["a", "b"]
    none, st = placement.run_placement_generate([topologyaware.new(None, h)], pg, [nodes[-1]])  # x has no zone
    assert (none, st.code, st.reasons, st.plugin) == (
        [], Code.UNSCHEDULABLE, ["no feasible placements found"], "TopologyPlacementGenerator"
    )
