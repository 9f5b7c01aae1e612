"""DefaultPreemption (dry run): eligibility, candidate nodes, victim selection, PDBs, node choice, messages.

Each test builds a real Framework (a test Registry with the real NodeResourcesFit,
small fake filters, a fake queue sort and binder) and runs PreFilter + Filter the
way the scheduler does before calling the plugin's PostFilter.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kschedctl.config.args import DefaultPreemptionArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import NodeToStatus, PostFilterResult, PreFilterResult
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.profile import PluginRef, Plugins, Profile
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.plugins.defaultpreemption import plugin as dp
from kschedctl.plugins.defaultpreemption.evaluator import (
    PDB,
    Candidate,
    more_important_pod,
    parse_time_ns,
    pick_one_node_for_preemption,
    split_by_pdb_violation,
)
from kschedctl.plugins.defaultpreemption.gosort import go_sort_slice
from kschedctl.plugins.noderesources import fit
from kschedctl.snapshot.model import KubeObject, Node, Pod
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_cluster, make_node, make_object, make_pod

# --------------------------------------------------------------------------- fakes


class FakeSort:
    name = "FakeSort"

    def less(self, a: Pod, b: Pod) -> bool:
        return a.effective_priority > b.effective_priority


class FakeBind:
    name = "FakeBind"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


class Blocked:
    """Rejects nodes labelled ``blocked`` as UnschedulableAndUnresolvable (like a node selector)."""

    name = "Blocked"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if "blocked" in node_info.node.labels:
            return Status.unresolvable("node(s) are blocked")
        return Status()


class _Count:
    def __init__(self, n: int) -> None:
        self.n = n

    def clone(self) -> _Count:
        return _Count(self.n)


_COUNT_KEY: StateKey[dict[str, _Count]] = StateKey("TeamLimit")


class _TeamExt:
    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        if pod_info_to_add.pod.labels.get("team") == "x":
            counts = state.read(_COUNT_KEY)
            counts[node_info.name].n += 1
        return Status()

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        if pod_info_to_remove.pod.labels.get("team") == "x":
            counts = state.read(_COUNT_KEY)
            counts[node_info.name].n -= 1
        return Status()


class _CountMap(dict[str, _Count]):
    def clone(self) -> _CountMap:
        return _CountMap({k: v.clone() for k, v in self.items()})


class TeamLimit:
    """At most one ``team=x`` pod per node, counted ONLY through CycleState (PreFilter + extensions)."""

    name = "TeamLimit"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        counts = _CountMap()
        for ni in nodes:
            counts[ni.name] = _Count(sum(1 for pi in ni.pods if pi.pod.labels.get("team") == "x"))
        state.write(_COUNT_KEY, counts)
        return None, Status()

    def pre_filter_extensions(self) -> _TeamExt:
        return _TeamExt()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if state.read(_COUNT_KEY)[node_info.name].n >= 1:
            return Status.unschedulable("team x is already here")
        return Status()


class AlwaysPass:
    """A filter that admits everything (to build a node the status map calls Unschedulable)."""

    name = "AlwaysPass"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()


def _registry() -> Registry:
    r = Registry()
    r.register("FakeSort", lambda a, h: FakeSort())
    r.register("FakeBind", lambda a, h: FakeBind())
    r.register("NodeResourcesFit", lambda a, h: fit.new(None, h))
    r.register("Blocked", lambda a, h: Blocked())
    r.register("TeamLimit", lambda a, h: TeamLimit())
    r.register("AlwaysPass", lambda a, h: AlwaysPass())
    r.register(dp.NAME, lambda a, h: dp.new(a, h), args_model=DefaultPreemptionArgs)
    return r


def _framework(
    snapshot: Snapshot, filters: tuple[str, ...], args: DefaultPreemptionArgs | None = None
) -> Framework:
    plugins = Plugins()
    plugins["queueSort"].enabled = [PluginRef("FakeSort")]
    plugins["bind"].enabled = [PluginRef("FakeBind")]
    plugins["preFilter"].enabled = [PluginRef(n) for n in filters if n in ("NodeResourcesFit", "TeamLimit")]
    plugins["filter"].enabled = [PluginRef(n) for n in filters]
    plugins["preEnqueue"].enabled = [PluginRef(dp.NAME)]
    plugins["postFilter"].enabled = [PluginRef(dp.NAME)]
    config: dict[str, Any] = {dp.NAME: args} if args is not None else {}
    return Framework(Profile("default-scheduler", plugins, config), _registry(), snapshot)


def preempt(
    nodes: list[NodeBuilder],
    pods: list[PodBuilder],
    incoming: PodBuilder,
    *,
    objects: list[KubeObject] | None = None,
    filters: tuple[str, ...] = ("Blocked", "NodeResourcesFit"),
    args: DefaultPreemptionArgs | None = None,
) -> tuple[PostFilterResult | None, Status, NodeToStatus]:
    """Run PreFilter and Filter on every node, then DefaultPreemption's PostFilter."""
    cluster = make_cluster(list[Node | NodeBuilder](nodes), list[Pod | PodBuilder](pods), objects or [])
    pod = incoming.build()
    cluster.default_priority(pod)
    fw = _framework(Snapshot(cluster), filters, args)
    state = CycleState()
    pre = fw.filtering.run_pre_filter(state, pod)
    assert pre.status.is_success(), pre.status
    statuses = NodeToStatus()
    for ni in fw.snapshot.node_info_list:
        st = fw.run_filter_plugins_with_nominated_pods(state, pod, ni)
        assert not st.is_success(), f"{ni.name} should not fit"
        statuses.set(ni.name, st)
    before = {ni.name: [pi.pod.key for pi in ni.pods] for ni in fw.snapshot.node_info_list}
    result, status = fw.plugins.by_name[dp.NAME].post_filter(state, pod, statuses)
    # a dry run: the snapshot is untouched
    assert {ni.name: [pi.pod.key for pi in ni.pods] for ni in fw.snapshot.node_info_list} == before
    return result, status, statuses


def node(name: str, cpu: str = "4", **labels: str) -> NodeBuilder:
    return make_node(name).alloc(cpu=cpu, memory="16Gi", pods="110").labels(**labels)


def running(
    name: str, node_name: str, cpu: str, prio: int, start: str = "2025-01-01T00:00:00Z", **labels: str
) -> PodBuilder:
    return (
        make_pod(name)
        .req(cpu=cpu)
        .priority(prio)
        .node(node_name)
        .labels(**labels)
        .set("status.startTime", start)
    )


def incoming(cpu: str = "2", prio: int = 100, **kw: Any) -> PodBuilder:
    b = make_pod("incoming").req(cpu=cpu).priority(prio, kw.pop("policy", None))
    for k, v in kw.items():
        b.set(k, v)
    return b


def victims(result: PostFilterResult | None) -> list[str]:
    assert result is not None
    return [v.name for v in result.victims]


def nominated(result: PostFilterResult | None) -> str | None:
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.mode == "Override"
    return result.nominating_info.nominated_node_name


def pdb(
    name: str, allowed: int, ns: str = "default", selector: Any = None, disrupted: list[str] | None = None
) -> KubeObject:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {n: "2025-01-01T00:00:00Z" for n in disrupted}
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["selector"] = selector
    return make_object("PodDisruptionBudget", name, ns, apiVersion="policy/v1", spec=spec, status=status)


# --------------------------------------------------------------------------- PreEnqueue / args


def test_pre_enqueue_always_admits() -> None:
    pl = dp.new(None, FakeHandle())
    assert pl.pre_enqueue(make_pod("p").build()).code == Code.SUCCESS
    assert pl.name == "DefaultPreemption"
    assert not hasattr(pl, "filter") and not hasattr(pl, "pre_filter") and not hasattr(pl, "score")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            {"minCandidateNodesPercentage": 101},
            "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesAbsolute": -1},
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, "
            "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
        ),
    ],
)
def test_invalid_args(args: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        dp.new(DefaultPreemptionArgs.model_validate(args), FakeHandle())
    assert str(e.value) == message


@pytest.mark.parametrize(
    "pct, absolute, nodes, want",
    [
        (10, 100, 50, 50),  # never more than the candidates there are
        (10, 100, 500, 100),  # the absolute floor
        (10, 100, 5000, 500),  # 10% once that is larger
        (0, 3, 50, 3),
        (50, 0, 7, 3),  # int32 division truncates
        (100, 0, 7, 7),
    ],
)
def test_num_candidates(pct: int, absolute: int, nodes: int, want: int) -> None:
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=pct, minCandidateNodesAbsolute=absolute)
    pl = dp.new(args, FakeHandle())
    assert pl.get_offset_and_num_candidates(nodes) == (0, want)


# --------------------------------------------------------------------------- eligibility


def test_preemption_policy_never() -> None:
    result, st, _ = preempt([node("n1")], [running("low", "n1", "3", 0)], incoming(policy="Never"))
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == ["preemption: not eligible due to preemptionPolicy=Never."]
    assert result is None or result.nominating_info is None


def _terminating(b: PodBuilder, reason: str = "PreemptionByScheduler", status: str = "True") -> PodBuilder:
    return b.set("metadata.deletionTimestamp", "2025-01-02T00:00:00Z").set(
        "status.conditions", [{"type": "DisruptionTarget", "status": status, "reason": reason}]
    )


@pytest.mark.parametrize(
    "victim, want_eligible",
    [
        (_terminating(running("low", "n1", "3", 0)), False),
        (_terminating(running("low", "n1", "3", 0), reason="EvictionByEvictionAPI"), True),
        (_terminating(running("low", "n1", "3", 0), status="False"), True),
        (running("low", "n1", "3", 0).set("metadata.deletionTimestamp", "2025-01-02T00:00:00Z"), True),
        # a terminating pod of higher priority is not one this pod preempted
        (_terminating(running("high", "n1", "3", 500)), True),
    ],
)
def test_terminating_victim_on_nominated_node(victim: PodBuilder, want_eligible: bool) -> None:
    _result, st, _ = preempt([node("n1")], [victim], incoming().nominated("n1"))
    if want_eligible:
        assert st.reasons != ["preemption: not eligible due to a terminating pod on the nominated node."]
    else:
        assert st.code == Code.UNSCHEDULABLE
        assert st.reasons == ["preemption: not eligible due to a terminating pod on the nominated node."]


def test_unresolvable_nominated_node_allows_preempting_again() -> None:
    nodes = [node("n1", blocked="yes"), node("n2")]
    pods = [_terminating(running("dying", "n1", "3", 0)), running("low", "n2", "3", 0)]
    result, st, _ = preempt(nodes, pods, incoming().nominated("n1"))
    assert st.is_success()
    assert nominated(result) == "n2"
    assert victims(result) == ["low"]


# --------------------------------------------------------------------------- messages


def test_basic_preemption() -> None:
    result, st, _ = preempt([node("n1")], [running("low", "n1", "3", 0)], incoming())
    assert st.code == Code.SUCCESS and st.reasons == []
    assert nominated(result) == "n1"
    assert victims(result) == ["low"]
    assert result is not None
    assert result.details["candidates"] == [
        {"node": "n1", "victims": ["default/low"], "victimPriorities": [0], "numPDBViolations": 0}
    ]


@pytest.mark.parametrize(
    "nodes, pods, message",
    [
        (
            [node("n1"), node("n2")],
            [running("a", "n1", "3", 500), running("b", "n2", "3", 100)],
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
        ),
        (
            [node("n1", blocked="y"), node("n2", blocked="y")],
            [running("a", "n1", "3", 0)],
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        ),
        (
            # n1: even with every lower-priority pod gone, the higher one leaves too little room
            [node("n1"), node("n2", blocked="y"), node("n3")],
            [running("hi", "n1", "3", 500), running("lo", "n1", "1", 0), running("x", "n3", "3", 100)],
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
            "1 Preemption is not helpful for scheduling.",
        ),
    ],
)
def test_no_candidate_messages(nodes: list[NodeBuilder], pods: list[PodBuilder], message: str) -> None:
    result, st, _ = preempt(nodes, pods, incoming())
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == [message]
    # the nomination is cleared
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == ""
    assert result.nominating_info.mode == "Override"
    assert result.victims == []


def test_pod_larger_than_node_is_not_a_candidate() -> None:
    # NodeResourcesFit says UnschedulableAndUnresolvable when the request exceeds allocatable.
    _result, st, statuses = preempt([node("n1", cpu="1")], [running("low", "n1", "500m", 0)], incoming())
    assert statuses.get("n1").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]


def test_node_that_fits_after_all_is_an_error() -> None:
    # The status map says Unschedulable, but the filters pass with every pod present: no victims.
    cluster = make_cluster(
        list[Node | NodeBuilder]([node("n1")]), list[Pod | PodBuilder]([running("low", "n1", "1", 0)])
    )
    pod = incoming(cpu="1").build()
    fw = _framework(Snapshot(cluster), ("AlwaysPass",))
    state = CycleState()
    fw.filtering.run_pre_filter(state, pod)
    statuses = NodeToStatus()
    statuses.set("n1", Status.unschedulable("made up"))
    _result, st = fw.plugins.by_name[dp.NAME].post_filter(state, pod, statuses)
    assert st.code == Code.ERROR
    assert st.reasons == ['preemption: expected at least one victim pod on node "n1"']


# --------------------------------------------------------------------------- victims on one node


@pytest.mark.parametrize(
    "pods, cpu, want",
    [
        # only as many as needed go, the least important first
        ([("a", "1", 10), ("b", "1", 20), ("c", "1", 30)], "1", ["a"]),
        ([("a", "1", 10), ("b", "1", 20), ("c", "1", 30)], "2", ["b", "a"]),
        # a big low-priority pod goes, a small more important one is reprieved
        ([("small", "1", 20), ("big", "2", 10)], "2", ["big"]),
        # reprieve is greedy in importance order: the more important big one stays, both small go
        ([("big", "2", 20), ("s1", "1", 10), ("s2", "1", 10)], "2", ["s1", "s2"]),
        # equal priority: the older pod is more important, the newer one goes
        ([("old", "2", 10, "2025-01-01T00:00:00Z"), ("new", "2", 10, "2025-01-01T00:00:01Z")], "2", ["new"]),
        # higher-priority pods are never victims
        ([("keep", "2", 500), ("low", "1", 10)], "1", ["low"]),
    ],
)
def test_victim_selection(pods: list[tuple[Any, ...]], cpu: str, want: list[str]) -> None:
    built = [running(p[0], "n1", p[1], p[2], *(p[3:] or ())) for p in pods]
    # 4 cpu node, all of it used; the incoming pod needs `cpu`
    filler = 4000 - sum(int(float(p[1]) * 1000) for p in pods)
    if filler > 0:
        built.append(running("filler", "n1", f"{filler}m", 1000))
    result, st, _ = preempt([node("n1")], built, incoming(cpu=cpu))
    assert st.is_success(), st
    assert victims(result) == want


def test_victims_are_ordered_most_important_first() -> None:
    pods = [
        running("p5", "n1", "1", 5, "2025-01-01T00:00:05Z"),
        running("p9", "n1", "1", 9),
        running("p5old", "n1", "1", 5, "2025-01-01T00:00:01Z"),
        running("p7", "n1", "1", 7),
    ]
    result, _st, _ = preempt([node("n1")], pods, incoming(cpu="4"))
    assert victims(result) == ["p9", "p7", "p5old", "p5"]


def test_filters_see_state_updated_by_prefilter_extensions() -> None:
    # TeamLimit counts team=x pods only through CycleState: removing the victim must go
    # through RemovePod, and reprieving it through AddPod.
    pods = [
        running("x-low", "n1", "100m", 0, team="x"),
        running("y-low", "n1", "100m", 0, team="y"),
    ]
    result, st, statuses = preempt(
        [node("n1")], pods, incoming(cpu="100m").label("team", "x"), filters=("TeamLimit",)
    )
    assert statuses.get("n1").reasons == ["team x is already here"]
    assert st.is_success()
    assert victims(result) == ["x-low"]


def test_nominated_pods_count_during_victim_selection() -> None:
    # a pending pod of equal priority nominated to n1 takes 2 cpu there: both low pods must go
    pods = [
        running("l1", "n1", "2", 0, "2025-01-01T00:00:01Z"),
        running("l2", "n1", "2", 0, "2025-01-01T00:00:02Z"),
        make_pod("pending").req(cpu="2").priority(100).nominated("n1"),
    ]
    result, st, _ = preempt([node("n1")], pods, incoming(cpu="2"))
    assert st.is_success()
    assert victims(result) == ["l1", "l2"]


# --------------------------------------------------------------------------- PodDisruptionBudgets


def test_pdb_violating_pods_are_reprieved_first() -> None:
    # Both low pods are equal; only one must go. The PDB-protected one is tried first and stays.
    pods = [
        running("guarded", "n1", "2", 0, "2025-01-01T00:00:05Z", app="db"),
        running("free", "n1", "2", 0, "2025-01-01T00:00:01Z", app="web"),
    ]
    objs = [pdb("db", 0, selector={"matchLabels": {"app": "db"}})]
    result, _st, _ = preempt([node("n1")], pods, incoming(cpu="2"), objects=objs)
    assert victims(result) == ["free"]
    assert result is not None and result.details["selected"]["numPDBViolations"] == 0


def test_pdb_violations_are_counted_and_victims_resorted() -> None:
    # Everything must go; the PDB allows one disruption, so the second covered pod violates it.
    pods = [
        running("g1", "n1", "1", 3, app="db"),
        running("g2", "n1", "1", 1, app="db"),
        running("f1", "n1", "1", 2, app="web"),
        running("f2", "n1", "1", 0, app="web"),
    ]
    objs = [pdb("db", 1, selector={"matchLabels": {"app": "db"}})]
    result, st, _ = preempt([node("n1")], pods, incoming(cpu="4"), objects=objs)
    assert st.is_success()
    assert victims(result) == ["g1", "f1", "g2", "f2"]
    assert result is not None and result.details["selected"]["numPDBViolations"] == 1


def test_pdb_decides_the_node() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [running("a", "n1", "3", 0, app="db"), running("b", "n2", "3", 0, app="web")]
    objs = [pdb("db", 0, selector={"matchLabels": {"app": "db"}})]
    result, _st, _ = preempt(nodes, pods, incoming(), objects=objs)
    assert nominated(result) == "n2"
    assert result is not None
    assert [c["node"] for c in result.details["candidates"]] == ["n2", "n1"]  # non-violating first
    assert [c["numPDBViolations"] for c in result.details["candidates"]] == [0, 1]


def _p(name: str, ns: str = "default", **labels: str) -> Pod:
    return make_pod(name, ns).labels(**labels).build()


@pytest.mark.parametrize(
    "pdbs, pods, want_violating",
    [
        ([pdb("a", 0, selector={"matchLabels": {"app": "x"}})], [_p("p", app="x")], ["p"]),
        ([pdb("a", 1, selector={"matchLabels": {"app": "x"}})], [_p("p", app="x"), _p("q", app="x")], ["q"]),
        # other namespace, empty selector, missing selector, pod without labels: never violating
        ([pdb("a", 0, ns="other", selector={"matchLabels": {"app": "x"}})], [_p("p", app="x")], []),
        ([pdb("a", 0, selector={})], [_p("p", app="x")], []),
        ([pdb("a", 0)], [_p("p", app="x")], []),
        (
            [pdb("a", 0, selector={"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]})],
            [_p("p")],
            [],
        ),
        # already disrupted pods do not spend the budget again
        ([pdb("a", 0, selector={"matchLabels": {"app": "x"}}, disrupted=["p"])], [_p("p", app="x")], []),
        (
            [pdb("a", 1, selector={"matchLabels": {"app": "x"}}, disrupted=["p"])],
            [_p("p", app="x"), _p("q", app="x")],
            [],
        ),
        # two PDBs: violating when any of them goes below zero
        (
            [
                pdb("a", 5, selector={"matchLabels": {"app": "x"}}),
                pdb("b", 0, selector={"matchLabels": {"tier": "t"}}),
            ],
            [_p("p", app="x", tier="t"), _p("q", app="x")],
            ["p"],
        ),
        # an invalid selector matches nothing
        (
            [pdb("a", 0, selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]})],
            [_p("p", app="x")],
            [],
        ),
    ],
)
def test_split_by_pdb_violation(pdbs: list[KubeObject], pods: list[Pod], want_violating: list[str]) -> None:
    violating, fine = split_by_pdb_violation(pods, [PDB.of(o) for o in pdbs])
    assert [p.name for p in violating] == want_violating
    assert [p.name for p in violating + fine] != [] and len(violating) + len(fine) == len(pods)
    # each group keeps the input order
    assert [p.name for p in fine] == [p.name for p in pods if p.name not in want_violating]


# --------------------------------------------------------------------------- choosing the node


def _cand(name: str, prios: list[int], violations: int = 0, starts: list[str] | None = None) -> Candidate:
    pods = []
    for i, pr in enumerate(prios):
        b = make_pod(f"{name}-{i}").priority(pr)
        if starts is not None:
            b.set("status.startTime", starts[i])
        pods.append(b.build())
    return Candidate(name, pods, violations)


@pytest.mark.parametrize(
    "cands, want",
    [
        ([_cand("a", [1], 2), _cand("b", [9, 9], 1)], "b"),  # fewest PDB violations
        ([_cand("a", [5, 1]), _cand("b", [4, 4, 4])], "b"),  # lowest highest-priority victim
        ([_cand("a", [5, 5]), _cand("b", [5, 1])], "b"),  # smallest sum
        ([_cand("a", [5, 5]), _cand("b", [5, 1, 1])], "a"),  # each priority is shifted by 2^31 first
        ([_cand("a", [-5, -5]), _cand("b", [-5])], "b"),  # negative priorities: the shift keeps fewer better
        ([_cand("a", [5, 1]), _cand("b", [5, 0, 1])], "a"),  # sum with the shift: fewer pods is cheaper
        ([_cand("a", [7, -2147483648]), _cand("b", [7])], "b"),  # equal shifted sums: fewest victims
        (
            [
                _cand("a", [5, 1], starts=["2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z"]),
                _cand("b", [5, 1], starts=["2025-02-01T00:00:00Z", "2024-01-01T00:00:00Z"]),
            ],
            "b",  # latest start among the top-priority victims
        ),
        ([_cand("a", [5]), _cand("b", [5])], "a"),  # a complete tie keeps the first
        ([_cand("a", [5], starts=["2025-01-01T00:00:00Z"]), _cand("b", [5])], "b"),  # no start time = now
    ],
)
def test_pick_one_node(cands: list[Candidate], want: str) -> None:
    got = pick_one_node_for_preemption(cands)
    assert got is not None and got.name == want


def test_node_choice_end_to_end() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    pods = [
        running("a", "n1", "3", 50),
        running("b1", "n2", "2", 10),
        running("b2", "n2", "2", 10),
        running("c", "n3", "3", 10, "2025-03-01T00:00:00Z"),
    ]
    result, _st, _ = preempt(nodes, pods, incoming(cpu="3"))
    # n2 needs two victims of 10 (sum larger) -> n3 with one victim of 10 wins over n1 (victim 50)
    assert nominated(result) == "n3"
    assert victims(result) == ["c"]
    assert result is not None and result.details["potentialNodes"] == ["n1", "n2", "n3"]


def test_search_window_stops_early() -> None:
    nodes = [node(f"n{i}") for i in range(1, 6)]
    pods = [running(f"p{i}", f"n{i}", "3", 0) for i in range(1, 6)]
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=0, minCandidateNodesAbsolute=2)
    result, st, _ = preempt(nodes, pods, incoming(), args=args)
    assert st.is_success()
    assert result is not None
    assert result.details["checkedNodes"] == ["n1", "n2"]
    assert result.details["numCandidates"] == 2 and result.details["offset"] == 0


def test_search_window_continues_until_a_non_violating_candidate() -> None:
    nodes = [node(f"n{i}") for i in range(1, 5)]
    pods = [running(f"p{i}", f"n{i}", "3", 0, app="db" if i < 3 else "web") for i in range(1, 5)]
    objs = [pdb("db", 0, selector={"matchLabels": {"app": "db"}})]
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=0, minCandidateNodesAbsolute=1)
    result, _st, _ = preempt(nodes, pods, incoming(), args=args, objects=objs)
    assert result is not None
    # n1 and n2 violate; the list keeps at most 1 violating candidate; n3 ends the search
    assert result.details["checkedNodes"] == ["n1", "n2", "n3"]
    assert [c["node"] for c in result.details["candidates"]] == ["n3", "n1"]
    assert nominated(result) == "n3"


# --------------------------------------------------------------------------- ordering helpers


@pytest.mark.parametrize(
    "value, want",
    [
        ("1970-01-01T00:00:01Z", 1_000_000_000),
        ("1970-01-01T00:00:01.5Z", 1_500_000_000),
        ("1970-01-01T01:00:00+01:00", 0),
        ("not a time", None),
        (None, None),
    ],
)
def test_parse_time(value: Any, want: int | None) -> None:
    assert parse_time_ns(value) == want


def test_more_important_pod() -> None:
    def p(prio: int, start: str | None) -> Pod:
        b = make_pod("x").priority(prio)
        if start:
            b.set("status.startTime", start)
        return b.build()

    old, new = "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z"
    assert more_important_pod(p(2, new), p(1, old))
    assert not more_important_pod(p(1, old), p(2, new))
    assert more_important_pod(p(1, old), p(1, new))
    assert not more_important_pod(p(1, new), p(1, old))
    assert not more_important_pod(p(1, old), p(1, old))
    # no start time is "now": later than any recorded start
    assert more_important_pod(p(1, old), p(1, None))
    assert not more_important_pod(p(1, None), p(1, old))
    # two pods without one: upstream's first clock read is the earlier one
    assert more_important_pod(p(1, None), p(1, None))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 13, 20, 49, 50, 51, 64, 100, 257, 1000])
def test_go_sort_sorts(n: int) -> None:
    rng = random.Random(n)
    for dup in (2, 5, n + 1):
        data = [(rng.randrange(dup), i) for i in range(n)]
        got = list(data)
        go_sort_slice(got, lambda a, b: a[0] < b[0])
        assert [k for k, _ in got] == sorted(k for k, _ in data)
        assert sorted(got) == sorted(data)
    for pattern in (list(range(n)), list(range(n, 0, -1)), [i % 3 for i in range(n)]):
        got2 = list(pattern)
        go_sort_slice(got2, lambda a, b: a < b)
        assert got2 == sorted(pattern)


def test_go_sort_small_is_stable_and_matches_insertion_sort() -> None:
    data = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    go_sort_slice(data, lambda a, b: a[0] < b[0])
    assert data == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
    # an always-true comparator (pods without start times) reverses a short list, as Go's insertion sort does
    items = list(range(6))
    go_sort_slice(items, lambda a, b: True)
    assert items == [5, 4, 3, 2, 1, 0]


def test_go_sort_large_ties_are_not_stable() -> None:
    # 13+ elements go through pdqsort: equal keys do not keep their input order (as in Go)
    data = [(i % 2, i) for i in range(40)]
    go_sort_slice(data, lambda a, b: a[0] < b[0])
    assert [k for k, _ in data] == [0] * 20 + [1] * 20
    assert [i for _, i in data] != sorted(i for _, i in data)


@pytest.mark.parametrize(
    ("keys", "go_order"),
    [
        # indices in the order Go's sort.Slice leaves them (keys compared with <): data printed by a Go
        # program; each of these takes pdqsort's pattern-breaking swaps, so the generator's shifts matter
        ([3, 1, 2, 0, 1, 1, 0, 4, 0, 0, 0, 1, 0, 3], [6, 10, 9, 3, 12, 8, 5, 4, 1, 11, 2, 0, 13, 7]),
        ([1, 0, 1, 0, 0, 4, 0, 3, 0, 2, 1, 1, 4, 2], [6, 8, 1, 3, 4, 10, 2, 0, 11, 9, 13, 7, 5, 12]),
        ([4, 2, 3, 0, 3, 2, 1, 0, 4, 0, 4, 0, 1, 1, 1, 0, 0, 0, 2],
         [9, 15, 7, 3, 17, 11, 16, 12, 14, 6, 13, 1, 5, 18, 4, 2, 10, 8, 0]),
        ([4, 1, 0, 0, 2, 0, 0, 2, 1, 1, 1, 0, 4, 0, 3, 0, 0, 1, 0, 2, 0, 2],
         [15, 11, 2, 3, 20, 5, 6, 18, 16, 13, 1, 10, 9, 8, 17, 7, 19, 4, 21, 14, 12, 0]),
    ],
)
def test_go_sort_ties_land_where_go_puts_them(keys: list[int], go_order: list[int]) -> None:
    idx = list(range(len(keys)))
    go_sort_slice(idx, lambda a, b: keys[a] < keys[b])
    assert idx == go_order
