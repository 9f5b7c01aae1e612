"""The framework runtime with fake plugins: ordering, Skip rules, MultiPoint precedence, weights, errors."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError
from kschedctl.explain.cycle import (
    Diagnosis,
    explain_pod,
    fit_error_message,
    num_feasible_nodes_to_find,
)
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore, PreFilterResult
from kschedctl.framework.nodeinfos import Snapshot, node_tree_order
from kschedctl.framework.profile import PluginRef, Plugins, PluginSet, Profile
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.topology import zone_key
from kschedctl.snapshot.model import Pod
from tests.builders import make_cluster, make_node, make_pod, make_snapshot

CALLS: list[str] = []


class Sort:
    name = "Sort"

    def less(self, a: Pod, b: Pod) -> bool:
        return a.effective_priority > b.effective_priority


class Binder:
    name = "Binder"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        CALLS.append(f"bind:{node_name}")
        return Status()


class PreFilterSkip:
    """PreFilter returns Skip, so its Filter must not run."""

    name = "PFSkip"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, Status.skip()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        CALLS.append(f"PFSkip.filter:{ni.name}")
        return Status.unresolvable("should not run")


class RejectNode:
    """Rejects nodes whose name is in args['reject']."""

    name = "Reject"

    def __init__(self, args: Any) -> None:
        self.reject = set((args or {}).get("reject", []))

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        CALLS.append(f"Reject.filter:{ni.name}")
        if ni.name in self.reject:
            return Status.unschedulable("node(s) were rejected")
        return Status()


class OnlyNodes:
    name = "Only"

    def __init__(self, args: Any) -> None:
        self.nodes = (args or {}).get("nodes")

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return (PreFilterResult(set(self.nodes)) if self.nodes is not None else None), Status()

    def pre_filter_extensions(self) -> None:
        return None


class ScoreByName:
    """Score = position of the node name in args['order'] * 10; PreScore Skip when args['skip']."""

    name = "ByName"

    def __init__(self, args: Any) -> None:
        self.args = args or {}

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return Status.skip() if self.args.get("skip") else Status()

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> tuple[int, Status]:
        order = self.args.get("order", [])
        return (order.index(ni.name) * 10 if ni.name in order else 0), Status()

    def score_extensions(self) -> Any:
        return self if self.args.get("normalize") else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        for s in scores:
            s.score = s.score * self.args["normalize"]
        return Status()


class AlwaysScore:
    """A scoring plugin without PreScore always scores."""

    name = "Always"

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> tuple[int, Status]:
        return 7, Status()

    def score_extensions(self) -> None:
        return None


class FailAt:
    """Returns ``code`` with message "boom" at one extension point (args['at']); elsewhere
    it passes (Bind: Skip, so the real binder binds)."""

    name = "Fail"

    def __init__(self, args: Any) -> None:
        self.at = (args or {}).get("at", "")
        self.code = Code[(args or {}).get("code", "ERROR")]
        self.nodes = (args or {}).get("nodes")

    def _st(self, point: str, ok: Status | None = None) -> Status:
        return Status(self.code, "boom") if point == self.at else (ok or Status())

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, self._st("preFilter")

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        if self.nodes is not None and ni.name not in self.nodes:
            return Status()
        return self._st("filter")

    def post_filter(self, state: CycleState, pod: Pod, filtered: Any) -> tuple[Any, Status]:
        return None, self._st("postFilter", Status.unschedulable("no help"))

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return self._st("preScore")

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> tuple[int, Status]:
        return 0, self._st("score")

    def score_extensions(self) -> None:
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._st("reserve")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        CALLS.append(f"unreserve:{node_name}")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return self._st("permit"), 0.0

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._st("preBindPreFlight")

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._st("preBind")

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._st("bind", Status.skip())


def registry() -> Registry:
    r = Registry()
    r.register("Fail", lambda a, h: FailAt(a))
    r.register("Sort", lambda a, h: Sort())
    r.register("Binder", lambda a, h: Binder())
    r.register("PFSkip", lambda a, h: PreFilterSkip())
    r.register("Reject", lambda a, h: RejectNode(a))
    r.register("Only", lambda a, h: OnlyNodes(a))
    r.register("ByName", lambda a, h: ScoreByName(a))
    r.register("Always", lambda a, h: AlwaysScore())
    return r


def profile(multipoint: list[tuple[str, int]], args: dict[str, Any] | None = None, **sets: PluginSet) -> Profile:
    p = Plugins()
    p.sets["multiPoint"] = PluginSet([PluginRef(n, w) for n, w in multipoint])
    for k, v in sets.items():
        p.sets[k] = v
    return Profile("default-scheduler", p, dict(args or {}))


def run(prof: Profile, nodes: int = 3, percentage: int = 0) -> Any:
    CALLS.clear()
    cluster = make_cluster([make_node(f"n{i}") for i in range(nodes)])
    return explain_pod(cluster, make_pod("p").build(), SchedulerConfig([prof], percentage), registry())


def test_prefilter_skip_skips_only_that_filter() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("PFSkip", 0), ("Reject", 0), ("Always", 1)], {"Reject": {"reject": ["n1"]}}))
    assert [r.to_dict()["code"] for r in t.pre_filter] == ["Skip"]
    assert not any(c.startswith("PFSkip.filter") for c in CALLS)
    assert t.filter["n1"].to_dict() == {"code": "Unschedulable", "plugin": "Reject", "reasons": ["node(s) were rejected"]}
    assert t.feasible_nodes == ["n0", "n2"]


def test_prescore_skip_skips_score_but_plugin_without_prescore_scores() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("ByName", 2), ("Always", 3)], {"ByName": {"skip": True}}))
    assert list(t.score) == ["Always"]
    assert t.score["Always"].weighted == {"n0": 21, "n1": 21, "n2": 21}
    assert t.candidates == ["n0", "n1", "n2"]


def test_weights_normalize_and_totals() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("ByName", 2)], {"ByName": {"order": ["n0", "n1", "n2"], "normalize": 2}}))
    s = t.score["ByName"]
    assert s.raw == {"n0": 0, "n1": 10, "n2": 20}
    assert s.normalized == {"n0": 0, "n1": 20, "n2": 40}
    assert s.weighted == {"n0": 0, "n1": 40, "n2": 80}
    assert t.totals == {"n0": 0, "n1": 40, "n2": 80}
    assert t.selected_node == "n2" and t.max_score == 80


def test_score_out_of_range_is_an_error() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("ByName", 1)], {"ByName": {"order": ["n0", "n1", "n2"], "normalize": 10}}))
    assert t.error is not None and "invalid score 200" in t.error


def test_without_scoring_one_feasible_node_is_enough() -> None:
    # As upstream with one worker: the search goes on until a node passes beyond the one wanted
    # (n2, evaluated, then dropped); the real scheduler records it, as the reference trace shows.
    t = run(profile([("Sort", 0), ("Binder", 0), ("Reject", 0)], {"Reject": {"reject": ["n0"]}}))
    assert list(t.filter) == ["n0", "n1", "n2"]
    assert t.feasible_nodes == ["n1", "n2"] and t.selected_node == "n1"
    assert t.dropped_feasible == "n2" and t.processed_nodes == 2


def test_one_feasible_node_is_not_scored() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("Reject", 0), ("Always", 1)], {"Reject": {"reject": ["n0", "n1"]}}))
    assert t.score == {} and t.pre_score == []
    assert t.candidates == ["n2"] and t.max_score == 0


def test_prefilter_result_limits_nodes_and_fit_error_counts_them() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("Only", 0), ("Reject", 0)], {"Only": {"nodes": ["n1"]}, "Reject": {"reject": ["n1"]}}))
    assert list(t.filter) == ["n1"]
    assert t.pre_filter_node_names == ["n1"]
    assert t.fit_error == "0/3 nodes are available: 1 node(s) were rejected, 2 node(s) didn't satisfy plugin(s) [Only]."


def test_empty_prefilter_result_is_unresolvable() -> None:
    t = run(profile([("Sort", 0), ("Binder", 0), ("Only", 0)], {"Only": {"nodes": []}}))
    assert t.pre_filter[0].status.code == Code.SUCCESS
    assert t.fit_error == "0/3 nodes are available: node(s) didn't satisfy plugin Only."


def test_multipoint_precedence_explicit_override_first() -> None:
    prof = profile(
        [("Sort", 0), ("Binder", 0), ("ByName", 1), ("Always", 1)],
        score=PluginSet([PluginRef("Always", 5)]),
    )
    fw = Framework(prof, registry(), make_snapshot([make_node("n")]))
    assert fw.plugins.names("score") == ["Always", "ByName"]
    assert fw.plugins.score_weights == {"Always": 5, "ByName": 1}


def test_multipoint_disabled_for_one_extension_point() -> None:
    prof = profile([("Sort", 0), ("Binder", 0), ("ByName", 1)], preScore=PluginSet([], ["ByName"]))
    fw = Framework(prof, registry(), make_snapshot([make_node("n")]))
    assert fw.plugins.names("preScore") == [] and fw.plugins.names("score") == ["ByName"]


def test_star_disables_multipoint_expansion() -> None:
    prof = profile([("Sort", 0), ("Binder", 0), ("Reject", 0)], filter=PluginSet([], ["*"]))
    fw = Framework(prof, registry(), make_snapshot([make_node("n")]))
    assert fw.plugins.names("filter") == []


@pytest.mark.parametrize(
    ("multipoint", "message"),
    [
        ([("Binder", 0)], "only one queue sort plugin required"),
        ([("Sort", 0)], "at least one bind plugin is needed"),
        ([("Sort", 0), ("Binder", 0), ("Nope", 0)], '"Nope" does not exist'),
    ],
)
def test_invalid_profiles(multipoint: list[tuple[str, int]], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Framework(profile(multipoint), registry(), make_snapshot([make_node("n")]))


@pytest.mark.parametrize(
    ("pct", "nodes", "expected"),
    [(0, 50, 50), (0, 99, 99), (0, 100, 100), (0, 1000, 420), (0, 5000, 500), (0, 6000, 300), (0, 100000, 5000), (10, 500, 100), (30, 1000, 300), (100, 5000, 5000), (1, 5000, 100)],
)
def test_num_feasible_nodes_to_find(pct: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(None, pct, nodes) == expected


def test_profile_percentage_wins_over_global() -> None:
    assert num_feasible_nodes_to_find(50, 10, 1000) == 500


def test_node_tree_order_interleaves_zones() -> None:
    pairs = [("a1", "A"), ("a2", "A"), ("b1", "B"), ("a3", "A"), ("c1", "C"), ("b2", "B")]
    assert node_tree_order(pairs) == ["a1", "b1", "c1", "a2", "b2", "a3"]


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        # files: the order a list of the same pods comes back in (namespace, then name)
        (False, ["b/x", "b/y", "b-2/a", "c/a"]),
        # a live read: the API server's own order (by storage key, "b-2/a" before "b/x") is kept
        (True, ["b-2/a", "b/x", "b/y", "c/a"]),
    ],
)
def test_node_info_pods_in_list_order(listed: bool, expected: list[str]) -> None:
    pods = [make_pod(n, ns).node("n") for ns, n in [("b-2", "a"), ("b", "x"), ("b", "y"), ("c", "a")]]
    cluster = make_cluster([make_node("n")], pods)
    cluster.pods_listed = listed
    snapshot = Snapshot(cluster)
    late = make_pod("a", "a").node("n").build()
    snapshot.assume(late, "n")  # a pod placed later is appended, as the cache's AssumePod does
    assert [pi.pod.key for pi in snapshot.node_info_map["n"].pods] == [*expected, "a/a"]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({}, ""),
        ({"topology.kubernetes.io/zone": "a"}, ":\x00:a"),
        ({"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "a"}, "r:\x00:a"),
        # the deprecated labels are read first, even when they differ from the GA ones (or are empty)
        ({"topology.kubernetes.io/zone": "a", "failure-domain.beta.kubernetes.io/zone": "old"}, ":\x00:old"),
        ({"topology.kubernetes.io/region": "r", "failure-domain.beta.kubernetes.io/region": "",
          "topology.kubernetes.io/zone": "a"}, ":\x00:a"),
        ({"failure-domain.beta.kubernetes.io/zone": ""}, ""),
    ],
)
def test_zone_key_is_get_zone_key(labels: dict[str, str], expected: str) -> None:
    assert zone_key(make_node("n").set("metadata.labels", labels).build().labels) == expected


def test_filter_stops_after_enough_feasible_nodes() -> None:
    # 100 are kept; the 101st to pass is what stops the search (evaluated, recorded, dropped)
    t = run(profile([("Sort", 0), ("Binder", 0), ("Reject", 0), ("Always", 1)]), nodes=200, percentage=50)
    assert len(t.feasible_nodes) == 101 and t.dropped_feasible is not None
    assert len(t.totals) == 100 and t.dropped_feasible not in t.totals
    assert len([c for c in CALLS if c.startswith("Reject.filter")]) == 101


def test_fit_error_histogram_is_sorted_as_strings() -> None:
    d = Diagnosis()
    for i in range(19):
        d.node_to_status.set(f"n{i}", Status(Code.UNSCHEDULABLE, "Insufficient memory", *(["Insufficient cpu"] if i < 3 else [])))
    d.post_filter_msg = "preemption: nope."
    assert fit_error_message(19, d) == "0/19 nodes are available: 19 Insufficient memory, 3 Insufficient cpu. preemption: nope."


# A cycle that ends in an error: the message kube-scheduler v1.35 writes into PodScheduled ---------


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("preFilter", 'running PreFilter plugin "Fail": boom'),
        ("filter", 'running "Fail" filter plugin: boom'),
        ("preScore", 'running PreScore plugin "Fail": boom'),
        ("score", 'running Score plugins: plugin "Fail" failed with: boom'),
        ("reserve", 'running Reserve plugin "Fail": boom'),
        ("permit", 'running Permit plugin "Fail": boom'),
        ("preBindPreFlight", 'running PreBindPreFlight "Fail": boom'),
        ("preBind", 'running PreBind plugin "Fail": boom'),
        ("bind", 'running Bind plugin "Fail": boom'),
    ],
)
def test_cycle_error_is_the_fit_error(at: str, message: str) -> None:
    t = run(profile([("Sort", 0), ("Fail", 1), ("Binder", 0)], {"Fail": {"at": at}}))
    assert t.outcome == "error"
    assert t.error == message
    assert t.fit_error == message  # reason SchedulerError: the condition carries the error
    assert t.selected_node is None
    assert t.to_dict()["fitError"] == message


def test_unsupported_pre_bind_pre_flight_status_is_an_error() -> None:
    t = run(profile([("Sort", 0), ("Fail", 1), ("Binder", 0)], {"Fail": {"at": "preBindPreFlight", "code": "UNSCHEDULABLE"}}))
    assert t.error == (
        'PreBindPreFlight Fail returned "Unschedulable", which is unsupported. '
        "It is supposed to return Success, Skip, or Error status"
    )
    assert t.fit_error == t.error


@pytest.mark.parametrize(
    ("at", "fit_error"),
    [
        # the scheduling cycle wraps a Reserve/Permit rejection in a FitError over the one node
        ("reserve", "0/1 nodes are available: 1 boom."),
        ("permit", "0/1 nodes are available: 1 boom."),
        # the binding cycle hands the plugin's status to the failure handler as it is
        ("preBind", "boom"),
        ("bind", "boom"),
    ],
)
def test_late_rejection_messages(at: str, fit_error: str) -> None:
    t = run(profile([("Sort", 0), ("Fail", 1), ("Binder", 0)], {"Fail": {"at": at, "code": "UNSCHEDULABLE"}}))
    assert t.outcome == "unschedulable" and t.error is None
    assert t.fit_error == fit_error
    assert CALLS[-1].startswith("unreserve:")


def test_post_filter_error_ends_in_the_fit_error_not_a_cycle_error() -> None:
    prof = profile([("Sort", 0), ("Reject", 0), ("Fail", 1), ("Binder", 0)], {"Reject": {"reject": ["n0", "n1", "n2"]}, "Fail": {"at": "postFilter"}})
    t = run(prof)
    assert t.error is None and t.outcome == "unschedulable"
    assert t.fit_error == "0/3 nodes are available: 3 node(s) were rejected. boom"


def test_error_on_the_nominated_node_searches_every_node() -> None:
    # upstream logs the nominated node's error and filters every node (where n1 fails again)
    prof = profile([("Sort", 0), ("Fail", 1), ("Binder", 0)], {"Fail": {"at": "filter", "nodes": ["n1"]}})
    cluster = make_cluster([make_node(f"n{i}") for i in range(3)])
    pod = make_pod("p").set("status.nominatedNodeName", "n1").build()
    t = explain_pod(cluster, pod, SchedulerConfig([prof], 0), registry())
    assert any("evaluating the nominated node failed" in n for n in t.notes)
    assert t.filter["n0"].to_dict() == {"code": "Success"}
    assert t.error == t.fit_error == 'running "Fail" filter plugin: boom'
