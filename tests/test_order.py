"""What ``explain`` says node order, chance and queue order leave open (issue 19, items 1, 4 and 5).

The order line appears exactly when the answer is one of several: a tie among the top totals, an
early stop by percentageOfNodesToScore (more than 100 nodes, the search quit before the end),
other pods' nominations that change the answer. Otherwise ``possibleNodes`` is the selected node
alone and ``orderDependence`` is null. Then the two pods caught between cycles: a nominated pod
whose victims are still terminating, and a gated pod's PodScheduled condition.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.order import assess
from kschedctl.explain.trace import Trace
from kschedctl.explain.uncertainty import EARLY_STOP, NOMINATED_PODS, TIE, could_top_a_window, names_capped
from kschedctl.kube.versions import resolve_features
from kschedctl.snapshot.model import Node, Pod
from tests.builders import load_config, make_cluster, make_node, make_pod

runner = CliRunner()


def _config(pct: int | None = None, parallelism: int | None = None, minor: int = 35) -> Any:
    data: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if pct is not None:
        data["percentageOfNodesToScore"] = pct
    if parallelism is not None:
        data["parallelism"] = parallelism
    return load_config(data, features=resolve_features(minor))


def _varied_nodes(n: int) -> list[Node]:
    """``n`` nodes of 2 to 8 cores: NodeResourcesFit scores them differently, 7 capacities repeat."""
    return [make_node(f"n{i:03d}").alloc(cpu=str(2 + i % 7), memory="8Gi", pods="110").build() for i in range(n)]


def _explain(nodes: list[Node], pod: Pod, pods: Sequence[Pod] = (), **config: Any) -> Trace:
    return explain_pod(make_cluster(nodes, list(pods)), pod, _config(**config), after=assess)


def _line(t: Trace) -> str:
    return t.order.line() if t.order is not None else ""


# ------------------------------------------------------------------------- the window rule


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (4, ["a"]),  # every feasible node is searched: the best wins
        (3, ["a", "b", "c"]),  # one node may be left out: a, or b/c when a is the one left out
        (2, ["a", "b", "c"]),  # d needs three nodes out of the window, only two may be
        (1, ["a", "b", "c", "d"]),  # a window of one: any node
    ],
)
def test_could_top_a_window(k: int, expected: list[str]) -> None:
    totals = {"a": 10, "b": 9, "c": 9, "d": 5}
    assert could_top_a_window(list(totals), totals, k) == expected


def test_could_top_a_window_without_scores_is_every_feasible_node() -> None:
    assert could_top_a_window(["b", "a"], {}, 1) == ["a", "b"]


@pytest.mark.parametrize(("names", "text"), [(["a", "b"], "a, b"), ([f"n{i}" for i in range(8)], "n0, n1, n2, n3, n4, … (+3 more)")])
def test_names_are_capped_with_a_count(names: list[str], text: str) -> None:
    assert names_capped(names) == text


# ------------------------------------------------------------------------- early stop


@pytest.mark.parametrize(
    ("nodes", "pct", "early"),
    [
        (150, 50, True),  # 100 feasible nodes to find of 150: the search stops with 50 unseen
        (150, None, True),  # adaptive: 50 - 150/125 = 49 %, at least 100 nodes: stops too
        (150, 100, False),  # every node searched
        (50, 10, False),  # under 100 nodes every node is searched whatever the percentage
        (100, 50, False),  # 100 nodes to find of 100
    ],
)
def test_early_stop_is_reported_exactly_when_the_search_quit(nodes: int, pct: int | None, early: bool) -> None:
    t = _explain(_varied_nodes(nodes), make_pod("p").req(cpu="1").build(), pct=pct)
    assert t.selected_node is not None
    reasons = t.order.reasons if t.order is not None else []
    assert (EARLY_STOP in reasons) is early
    assert ("the search stopped" in _line(t)) is early


def test_early_stop_gives_the_full_search_answer() -> None:
    t = _explain(_varied_nodes(150), make_pod("p").req(cpu="1").build(), pct=50)
    assert t.order is not None and t.order.early_stop is not None
    e = t.order.early_stop
    assert (e.num_nodes_to_find, e.searchable, e.feasible, e.percentage, e.adaptive) == (100, 150, 150, 50, False)
    full = _explain(_varied_nodes(150), make_pod("p").req(cpu="1").build(), pct=100)
    assert e.best == full.candidates and e.best_total == full.max_score
    # a window of 100 of the 150: every node with at most 50 nodes scoring above it
    assert e.possible == could_top_a_window(sorted(full.totals), full.totals, 100)
    assert t.selected_node in t.possible_nodes and set(e.best) <= set(t.possible_nodes)
    assert t.possible_nodes == e.possible
    line = _line(t)
    assert "percentageOfNodesToScore 50%" in line and "nextStartNodeIndex" in line
    assert f"{len(e.possible)} could be chosen" in line and "16 parallel Filter workers" in line
    d = t.to_dict()
    assert d["possibleNodes"] == e.possible
    stop = d["orderDependence"]["earlyStop"]
    assert stop["feasible"] == 150 and stop["bestIfAllSearched"] == full.candidates and stop["possible"] == len(e.possible)


def test_with_nothing_scored_the_first_feasible_node_is_one_of_all() -> None:
    cfg = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    nodes = [make_node(f"n{i}").alloc(cpu="4").build() for i in range(4)] + [make_node("small").alloc(cpu="500m").build()]
    t = explain_pod(make_cluster(nodes), make_pod("p").req(cpu="1").build(), load_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **cfg}), after=assess)
    assert t.num_nodes_to_find == 1 and t.order is not None and t.order.reasons == [EARLY_STOP]
    assert t.possible_nodes == ["n0", "n1", "n2", "n3"]
    line = _line(t)
    assert "nothing is scored, so the first feasible node of 5 wins" in line
    assert "4 of 5 feasible, any could be chosen: n0, n1, n2, n3." in line
    assert t.to_dict()["orderDependence"]["earlyStop"]["percentageOfNodesToScore"] is None


def test_early_stop_with_an_infeasible_part_counts_feasible_nodes_over_all() -> None:
    nodes = _varied_nodes(150) + [make_node(f"small{i}").alloc(cpu="500m", memory="8Gi", pods="110").build() for i in range(30)]
    t = _explain(nodes, make_pod("p").req(cpu="1").build(), pct=50)
    assert t.order is not None and t.order.early_stop is not None
    assert t.order.early_stop.feasible == 150 and t.order.early_stop.searchable == 180
    assert not any(n.startswith("small") for n in t.possible_nodes)


# ------------------------------------------------------------------------- ties


def test_a_unique_winner_is_certain() -> None:
    t = _explain([make_node("big").alloc(cpu="8").build(), make_node("small").alloc(cpu="2").build()], make_pod("p").req(cpu="1").build())
    assert t.order is None
    assert t.possible_nodes == ["big"]
    d = t.to_dict()
    assert d["possibleNodes"] == ["big"] and d["orderDependence"] is None


@pytest.mark.parametrize(
    ("minor", "parallelism", "head", "words"),
    [
        (35, None, "Order decides", "and its 16 parallel Filter workers"),
        (35, 1, "Order decides", "set by its node order."),
        (34, None, "Chance decides", "picks one of them at random"),
    ],
)
def test_a_tie_names_its_nodes(minor: int, parallelism: int | None, head: str, words: str) -> None:
    nodes = [make_node(n).alloc(cpu="4").build() for n in ("a", "b", "c")]
    t = _explain(nodes, make_pod("p").req(cpu="1").build(), parallelism=parallelism, minor=minor)
    assert t.order is not None and t.order.reasons == [TIE]
    assert t.possible_nodes == ["a", "b", "c"]
    line = _line(t)
    assert line.startswith(head) and words in line
    assert "3 nodes tie at total" in line and "a, b, c" in line
    assert ("parallel Filter workers" in line) is (minor >= 35 and parallelism != 1)  # a random pick owes nothing to order
    assert t.to_dict()["orderDependence"]["tie"]["nodes"] == ["a", "b", "c"]


def test_a_large_tie_is_capped_with_a_count() -> None:
    nodes = [make_node(f"n{i}").alloc(cpu="4").build() for i in range(9)]
    t = _explain(nodes, make_pod("p").req(cpu="1").build())
    assert "(+4 more)" in _line(t)
    assert len(t.possible_nodes) == 9


# ------------------------------------------------------------------------- nominations


def _held(holder_priority: int, n1_cpu: str = "8") -> Trace:
    """n1 fits the pod best, but ``holder`` (6 cores) is nominated there; n2 fits it too."""
    nodes = [make_node("n1").alloc(cpu=n1_cpu, memory="16Gi").build(), make_node("n2").alloc(cpu="4", memory="16Gi").build()]
    holder = make_pod("holder").req(cpu="6").priority(holder_priority).nominated("n1").build()
    return _explain(nodes, make_pod("q").req(cpu="3").priority(10).build(), [holder])


def test_a_nomination_that_changes_the_answer_is_named() -> None:
    t = _held(1000)
    assert t.selected_node == "n2"
    assert t.order is not None and t.order.reasons == [NOMINATED_PODS]
    assert t.possible_nodes == ["n1", "n2"]
    line = _line(t)
    assert line.startswith("Queue order decides") and "n1 is held for default/holder" in line and "n1 would be chosen instead" in line
    assert t.to_dict()["orderDependence"]["nominatedPods"] == {
        "heldNodes": [{"node": "n1", "nominatedPods": ["default/holder"]}],
        "ifReleased": ["n1"],
    }


@pytest.mark.parametrize(
    ("holder_priority", "n1_cpu", "why"),
    [
        (0, "8", "a lower-priority nomination is not counted"),
        (1000, "3500m", "without the nomination n1 still scores below n2"),
    ],
)
def test_a_nomination_that_changes_nothing_is_not_reported(holder_priority: int, n1_cpu: str, why: str) -> None:
    t = _held(holder_priority, n1_cpu)
    assert t.order is None, why
    assert t.possible_nodes == [t.selected_node]


def test_an_unschedulable_pod_that_fits_once_a_nomination_goes() -> None:
    nodes = [make_node("n1").alloc(cpu="8", memory="16Gi").build()]
    holder = make_pod("holder").req(cpu="6").priority(1000).nominated("n1").build()
    t = _explain(nodes, make_pod("q").req(cpu="3").priority(10).build(), [holder])
    assert t.selected_node is None and t.possible_nodes == ["n1"]
    assert "the pod would fit, on n1" in _line(t)


def test_the_own_nominated_node_passing_is_certain() -> None:
    nodes = _varied_nodes(150)
    t = _explain(nodes, make_pod("p").req(cpu="1").nominated("n001").build(), pct=50)
    assert t.selected_node == "n001"
    assert t.order is None and t.possible_nodes == ["n001"]


# ------------------------------------------------------------------------- the CLI: items 1, 4 and 5


def _snapshot(tmp_path: Path, *objs: Node | Pod) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all([o.raw for o in objs]))
    return str(f)


def _invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_cli_json_has_possible_nodes_beside_selected(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, make_node("a").alloc(cpu="4").build(), make_node("b").alloc(cpu="4").build(), make_pod("p").req(cpu="1").build())
    r = _invoke("explain", "pod", "p", "-n", "default", "--snapshot", snap, "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    keys = list(data)
    assert keys[keys.index("selected") + 1 : keys.index("selected") + 3] == ["possibleNodes", "orderDependence"]
    assert data["possibleNodes"] == ["a", "b"]
    assert data["orderDependence"]["reasons"] == ["tie"]
    text = _invoke("explain", "pod", "p", "-n", "default", "--snapshot", snap)
    assert "Order decides: 2 nodes tie at total" in text.output
    assert "kube-scheduler v1.35 does not pick among them" not in text.output  # the long tieBreak gives way


def _waiting(tmp_path: Path, big_cpu: str = "1500m") -> str:
    """big (priority 1000) is nominated to n1 where its victim is still terminating; a pod of higher
    priority than big's uses 300m of n1 and stays."""
    victim = (
        make_pod("victim").req(cpu="1500m").node("n1").priority(0)
        .set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z")
        .set("status.conditions", [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}])
        .build()
    )
    return _snapshot(
        tmp_path,
        make_node("n1").alloc(cpu="2", memory="4Gi", pods="10").build(),
        make_node("n2").alloc(cpu="2", memory="4Gi", pods="10").build(),
        victim,
        make_pod("resident").req(cpu="300m").node("n1").priority(2000).build(),
        make_pod("other").req(cpu="1500m").node("n2").priority(0).build(),
        make_pod("big").req(cpu=big_cpu).priority(1000).nominated("n1").build(),
    )


@pytest.mark.parametrize(("big_cpu", "fits", "then"), [("1500m", True, "fits there"), ("1800m", False, "still does not fit there")])
def test_a_nominated_pod_waiting_for_its_victims_names_them(tmp_path: Path, big_cpu: str, fits: bool, then: str) -> None:
    snap = _waiting(tmp_path, big_cpu)
    r = _invoke("explain", "pod", "big", "-n", "default", "--snapshot", snap, "-o", "markdown")  # (no wrapping)
    assert r.exit_code == 1, r.output
    assert "Nominated node n1 (status.nominatedNodeName): 1 preemption victim still terminating there: default/victim" in r.output
    assert f"once they are gone the pod {then}." in r.output
    data = json.loads(_invoke("explain", "pod", "big", "-n", "default", "--snapshot", snap, "-o", "json").output)
    assert data["nominatedNodeWait"] == {
        "name": "n1", "terminatingVictims": ["default/victim"], "preemptionWaits": True, "fitsOnceGone": fits,
    }
    pending = _invoke("explain", "pending", "-A", "--snapshot", snap, "--by", "pod", "-o", "markdown")
    assert f"no: nominated to n1, waiting for 1 victim to terminate (default/victim); {then} then" in pending.output
    grouped = _invoke("explain", "pending", "-A", "--snapshot", snap, "-o", "markdown")
    assert "1 already nominated, waiting for victims to terminate" in grouped.output


def test_a_pod_without_terminating_victims_says_nothing_of_them(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, make_node("n1").alloc(cpu="2").build(), make_pod("big").req(cpu="3").nominated("n1").build())
    data = json.loads(_invoke("explain", "pod", "big", "-n", "default", "--snapshot", snap, "-o", "json").output)
    assert "nominatedNodeWait" not in data


def test_a_gated_pod_shows_the_api_servers_condition(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, make_node("n1").build(), make_pod("g").gate("example.com/wait").build(), make_pod("free").build())
    r = _invoke("explain", "pod", "g", "-n", "default", "--snapshot", snap)
    assert r.exit_code == 1
    assert "PodScheduled condition: status False, reason SchedulingGated: Scheduling is blocked due to non-empty scheduling gates" in r.output
    data = json.loads(_invoke("explain", "pod", "g", "-n", "default", "--snapshot", snap, "-o", "json").output)
    assert data["podScheduled"] == {
        "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
    }
    free = json.loads(_invoke("explain", "pod", "free", "-n", "default", "--snapshot", snap, "-o", "json").output)
    assert "podScheduled" not in free
    rows = json.loads(_invoke("explain", "pending", "-A", "--snapshot", snap, "-o", "json").output)
    (gated,) = [row for row in rows if row["pod"] == "default/g"]
    assert gated["podScheduled"]["reason"] == "SchedulingGated"


@pytest.mark.parametrize(("nodes", "pct", "could_be_chosen"), [(150, 50, True), (150, 100, False), (50, 50, False)])
def test_the_headline_says_when_several_nodes_could_be_chosen(nodes: int, pct: int, could_be_chosen: bool) -> None:
    from kschedctl.render.common import headline

    big = make_node("a-big").alloc(cpu="64", memory="256Gi", pods="110").build()  # first in name order: a unique winner
    t = _explain([big, *_varied_nodes(nodes - 1)], make_pod("p").req(cpu="1").build(), pct=pct)
    assert t.selected_node == "a-big"
    line = headline(t.to_dict())
    assert line.startswith(f"default/p: schedulable on {t.selected_node} (score ")
    assert ("nodes could be chosen (node order decides)" in line) is could_be_chosen
    if could_be_chosen:
        assert f"; {len(t.possible_nodes)} nodes could be chosen" in line
