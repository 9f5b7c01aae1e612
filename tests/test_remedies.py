"""What would make it fit: every remedy kind found on small clusters, and the re-run that proves it.

Each case builds a cluster where the pod does not fit for one reason, asks ``find_remedies`` for
the change of that kind, checks the change (its patch) and the verdict, and then proves it
independently: the same change written with the builders, run through the ordinary explain cycle,
must give the verdict the remedy reported. Plus: nothing the search is given is changed, the budget
bounds the work, the binary searches, and "why this node".
"""

from __future__ import annotations

import copy
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import default_config
from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.margin import margin
from kschedctl.explain.nearest import analyse_filters
from kschedctl.explain.pending import pending_rows
from kschedctl.explain.trace import NodeVerdict, Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.plugins import in_tree_registry
from kschedctl.render.causes import render_groups_table
from kschedctl.render.remedies import remedy_headline, render_whatif_sections
from kschedctl.snapshot import strategicmerge as sm
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import load_cluster
from kschedctl.snapshot.model import Pod, Taint
from kschedctl.whatif import changes as ch
from kschedctl.whatif.causes import attach_remedies, group_by_cause, shared_remedy
from kschedctl.whatif.changes import node_groups
from kschedctl.whatif.patchcheck import check_node_patch, check_pod_patch
from kschedctl.whatif.remedies import annotate_trace, find_remedies
from kschedctl.whatif.remedybudget import Budget
from kschedctl.whatif.remedykinds import largest_fitting, smallest_fitting
from kschedctl.whatif.remedyreport import POD_KINDS, Remedy, Verdict
from tests.builders import NodeBuilder, PodBuilder, make_cluster, make_node, make_object, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CFG = default_config()


@dataclass
class Case:
    name: str
    nodes: Callable[[], list[NodeBuilder]]
    pod: Callable[[], PodBuilder]
    kind: str
    change: str  # the remedy's change, in words
    patch: dict[str, Any]
    outcome: str  # scheduled | preemption
    node: str
    #: The same change, made with the builders: (nodes, pod) of the fixed world.
    fixed: Callable[[], tuple[list[NodeBuilder], PodBuilder]]
    pods: Callable[[], list[PodBuilder]] = lambda: []
    objects: list[Any] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


def busy(name: str, node: str, cpu: str = "3", priority: int = 0, **labels: str) -> PodBuilder:
    return make_pod(name).req(cpu=cpu).node(node).priority(priority).labels(**labels)


def web(cpu: str = "2") -> PodBuilder:
    return make_pod("web").uid("uid-web").req(cpu=cpu)


CASES = [
    Case(
        "lower-request",
        lambda: [make_node("n1").alloc(cpu="4", memory="8Gi", pods="110")],
        lambda: web("2"),
        "lower-request", "lower container c0's cpu request to 1",
        {"spec": {"containers": [{"name": "c0", "resources": {"requests": {"cpu": "1"}}}]}},
        "scheduled", "n1",
        lambda: ([make_node("n1").alloc(cpu="4", memory="8Gi", pods="110")], web("1")),
        pods=lambda: [busy("big", "n1", cpu="3")],
    ),
    Case(
        "lower-request-memory",
        lambda: [make_node("n1").alloc(cpu="4", memory="16Gi", pods="110")],
        lambda: make_pod("web").uid("uid-web").req(memory="2Gi"),
        "lower-request", "lower container c0's memory request to 1536Mi",
        {"spec": {"containers": [{"name": "c0", "resources": {"requests": {"memory": "1536Mi"}}}]}},
        "scheduled", "n1",
        lambda: ([make_node("n1").alloc(cpu="4", memory="16Gi", pods="110")],
                 make_pod("web").uid("uid-web").req(memory="1536Mi")),
        pods=lambda: [make_pod("big").req(memory="14848Mi").node("n1")],
    ),
    Case(
        "add-toleration",
        lambda: [make_node("n1").taint("dedicated", "gpu"), make_node("n2").taint("other", "x")],
        lambda: web("1"),
        "add-toleration", "tolerate taint dedicated=gpu:NoSchedule",
        {"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}},
        "scheduled", "n1",
        lambda: ([make_node("n1").taint("dedicated", "gpu"), make_node("n2").taint("other", "x")],
                 web("1").toleration("dedicated", "gpu", "NoSchedule")),
        detail={"opensNodes": ["n1"]},
    ),
    Case(
        "drop-node-selector",
        lambda: [make_node("n1").label("disktype", "ssd")],
        lambda: web("1").node_selector(disktype="nvme"),
        "relax-node-affinity", "drop nodeSelector disktype=nvme",
        {"spec": {"nodeSelector": {"disktype": None}}},
        "scheduled", "n1",
        lambda: ([make_node("n1").label("disktype", "ssd")], web("1")),
    ),
    Case(
        "relax-node-affinity-value",
        lambda: [make_node("n1").zone("za"), make_node("n2").zone("zb")],
        lambda: web("1").node_affinity_required([{"key": ZONE, "operator": "In", "values": ["zc"]}]),
        "relax-node-affinity", f"allow {ZONE}=za in required node affinity ({ZONE} In [zc] → {ZONE} In [zc, za])",
        {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zc", "za"]}]}]}}}}},
        "scheduled", "n1",
        lambda: ([make_node("n1").zone("za"), make_node("n2").zone("zb")],
                 web("1").node_affinity_required([{"key": ZONE, "operator": "In", "values": ["zc", "za"]}])),
    ),
    Case(
        "spread-max-skew",
        lambda: [make_node("a1").zone("za").alloc(cpu="8", memory="8Gi", pods="110"),
                 make_node("b1").zone("zb").alloc(cpu="1", memory="8Gi", pods="110")],
        lambda: web("2").label("app", "web").spread(1, ZONE, match_labels={"app": "web"}),
        "spread-max-skew", f"raise the {ZONE} spread constraint's maxSkew from 1 to 4",
        {"spec": {"topologySpreadConstraints": [{"topologyKey": ZONE, "maxSkew": 4}]}},
        "scheduled", "a1",
        lambda: ([make_node("a1").zone("za").alloc(cpu="8", memory="8Gi", pods="110"),
                  make_node("b1").zone("zb").alloc(cpu="1", memory="8Gi", pods="110")],
                 web("2").label("app", "web").spread(4, ZONE, match_labels={"app": "web"})),
        pods=lambda: [busy(f"w{i}", "a1", cpu="100m", app="web") for i in range(3)],
    ),
    Case(
        "spread-schedule-anyway",
        lambda: [make_node("a1").zone("za").alloc(cpu="8", memory="8Gi", pods="110"),
                 make_node("b1").zone("zb").alloc(cpu="1", memory="8Gi", pods="110")],
        lambda: web("2").label("app", "web").spread(1, ZONE, match_labels={"app": "web"}),
        "spread-schedule-anyway", f"make the {ZONE} spread constraint ScheduleAnyway",
        {"spec": {"topologySpreadConstraints": [{"topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}},
        "scheduled", "a1",
        lambda: ([make_node("a1").zone("za").alloc(cpu="8", memory="8Gi", pods="110"),
                  make_node("b1").zone("zb").alloc(cpu="1", memory="8Gi", pods="110")],
                 web("2").label("app", "web").spread(1, ZONE, "ScheduleAnyway", match_labels={"app": "web"})),
        pods=lambda: [busy(f"w{i}", "a1", cpu="100m", app="web") for i in range(3)],
    ),
    Case(
        "drop-pod-anti-affinity-term",
        lambda: [make_node("n1")],
        lambda: web("1").pod_affinity("required", HOST, {"app": "db"}, anti=True),
        "drop-pod-anti-affinity-term", f"drop required pod anti-affinity term 0 (topologyKey {HOST}, app=db)",
        {"spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}},
        "scheduled", "n1",
        lambda: ([make_node("n1")], web("1")),
        pods=lambda: [busy("db", "n1", cpu="100m", app="db")],
    ),
    Case(
        "drop-pod-affinity-term",
        lambda: [make_node("n1"), make_node("n2")],
        lambda: web("1").pod_affinity("required", HOST, {"app": "cache"}).pod_affinity("required", HOST, {"app": "db"}),
        "drop-pod-affinity-term", f"drop required pod affinity term 0 (topologyKey {HOST}, app=cache)",
        {"spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "db"}}}]}}}},
        "scheduled", "n2",
        lambda: ([make_node("n1"), make_node("n2")], web("1").pod_affinity("required", HOST, {"app": "db"})),
        pods=lambda: [busy("db", "n2", cpu="100m", app="db")],
    ),
    Case(
        "priority-class",
        lambda: [make_node("n1").alloc(cpu="2", memory="8Gi", pods="110")],
        lambda: web("1"),
        "priority-class", "use PriorityClass high (priority 1000, now 0)",
        {"spec": {"priorityClassName": "high"}},
        "preemption", "n1",
        lambda: ([make_node("n1").alloc(cpu="2", memory="8Gi", pods="110")], web("1").priority_class("high")),
        pods=lambda: [busy("low", "n1", cpu="2", priority=0)],
        objects=[make_object("PriorityClass", "high", value=1000), make_object("PriorityClass", "low", value=-5)],
        detail={"priorityClass": "high"},
    ),
    Case(
        "uncordon-node",
        lambda: [make_node("n1").unschedulable().taint("node.kubernetes.io/unschedulable"), make_node("n2").taint("x")],
        lambda: web("1"),
        "uncordon-node", "uncordon node n1",
        {"spec": {"unschedulable": False}},
        "scheduled", "n1",
        lambda: ([make_node("n1"), make_node("n2").taint("x")], web("1")),
    ),
    Case(
        "remove-taint",
        lambda: [make_node("n1").taint("dedicated", "gpu"), make_node("n2").unschedulable()],
        lambda: web("1"),
        "remove-taint", "remove taint dedicated=gpu:NoSchedule from node n1",
        {"spec": {"taints": None}},
        "scheduled", "n1",
        lambda: ([make_node("n1"), make_node("n2").unschedulable()], web("1")),
    ),
    Case(
        "label-node",
        lambda: [make_node("n1"), make_node("n2").taint("x")],
        lambda: web("1").node_selector(disktype="nvme"),
        "label-node", "label node n1 disktype=nvme",
        {"metadata": {"labels": {"disktype": "nvme"}}},
        "scheduled", "n1",
        lambda: ([make_node("n1").label("disktype", "nvme"), make_node("n2").taint("x")], web("1").node_selector(disktype="nvme")),
    ),
    Case(
        "add-node",
        lambda: [make_node(f"a{i}").label("pool", "a").alloc(cpu="4", memory="8Gi", pods="110") for i in range(2)]
        + [make_node("small").label("pool", "b").alloc(cpu="1", memory="8Gi", pods="110")],
        lambda: web("3"),
        "add-node", "add one node like a0 (node group pool=a)",
        {"metadata": {"labels": {HOST: "a0-new-1", "pool": "a"}}, "spec": {},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
        "scheduled", "a0-new-1",
        lambda: ([*(make_node(f"a{i}").label("pool", "a").alloc(cpu="4", memory="8Gi", pods="110") for i in range(2)),
                  make_node("small").label("pool", "b").alloc(cpu="1", memory="8Gi", pods="110"),
                  make_node("a0-new-1").label("pool", "a").alloc(cpu="4", memory="8Gi", pods="110")], web("3")),
        pods=lambda: [busy("x0", "a0", cpu="2"), busy("x1", "a1", cpu="2")],
        detail={"copies": 1},
    ),
]


def world(case: Case) -> tuple[Cluster, Pod]:
    pod = case.pod().build()
    return make_cluster(case.nodes(), [*case.pods(), pod], list(case.objects)), pod


def the_remedy(case: Case, remedies: list[Remedy]) -> Remedy:
    found = [r for r in remedies if r.kind == case.kind and r.text == case.change]
    assert found, f"no {case.kind} remedy {case.change!r}; got {[(r.kind, r.text) for r in remedies]}"
    return found[0]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_remedy_found_and_proven(case: Case) -> None:
    cluster, pod = world(case)
    before = explain_pod(cluster, pod, CFG)
    assert Verdict.of(before).rank > (0 if case.outcome == "scheduled" else 1), "the case must need a fix"

    report = find_remedies(cluster, pod, CFG)
    r = the_remedy(case, report.remedies)
    assert r.helps
    assert r.patch == case.patch
    assert (r.verdict.outcome, r.verdict.node) == (case.outcome, case.node)
    for k, v in case.detail.items():
        assert r.detail[k] == v

    # the proof, made independently: the fixed world through the ordinary explain cycle
    nodes, fixed_pod = case.fixed()
    fixed = fixed_pod.build()
    proof = Verdict.of(explain_pod(make_cluster(nodes, [*case.pods(), fixed], list(case.objects)), fixed, CFG))
    assert proof.to_dict() == r.verdict.to_dict()


def test_lower_request_binary_search_stops_at_the_real_filter() -> None:
    # 10 cpu free on n1 and 7 on n2: 12 cpu fits nowhere; the largest that fits is exactly 10.
    cluster = make_cluster(
        [make_node("n1").alloc(cpu="16", memory="64Gi", pods="110"), make_node("n2").alloc(cpu="8", memory="64Gi", pods="110")],
        [busy("a", "n1", cpu="6"), busy("b", "n2", cpu="1")],
    )
    pod = web("12").build()
    r = [m for m in find_remedies(cluster, pod, CFG).remedies if m.kind == "lower-request"]
    assert [m.text for m in r] == ["lower container c0's cpu request to 10"]
    assert r[0].verdict.node == "n1"
    assert not explain_pod(cluster, web("10001m").build(), CFG).schedulable  # one millicore more does not fit


def test_only_kinds_the_statuses_point_to_are_tried() -> None:
    cluster = make_cluster([make_node("n1").alloc(cpu="1", memory="8Gi", pods="110")])
    report = find_remedies(cluster, web("2").build(), CFG)
    assert {r.kind for r in report.remedies} == {"lower-request", "add-node"}


def test_failed_tries_are_reported_as_such() -> None:
    # tolerating the taint opens n1, where memory is short: tried, re-run, and said to be no help
    cluster = make_cluster([make_node("n1").taint("gpu").alloc(cpu="4", memory="1Gi", pods="110")])
    pod = make_pod("web").req(memory="2Gi").build()
    tol = [r for r in find_remedies(cluster, pod, CFG).remedies if r.kind == "add-toleration"]
    assert len(tol) == 1 and not tol[0].helps
    assert tol[0].verdict.text() == "still unschedulable: 0/1 nodes are available: 1 Insufficient memory"
    assert tol[0].detail["opensNodes"] == ["n1"]


def test_a_schedulable_pod_needs_no_fix() -> None:
    cluster = make_cluster([make_node("n1")])
    report = find_remedies(cluster, web("1").build(), CFG)
    assert report.remedies == [] and report.reruns == 0
    assert report.notes == ["nothing to fix: the pod is schedulable on n1 (the only feasible node: not scored)"]


def test_budget_bounds_the_work_and_says_what_it_cut() -> None:
    case = next(c for c in CASES if c.name == "add-toleration")
    cluster, pod = world(case)
    report = find_remedies(cluster, pod, CFG, budget=Budget(reruns=0))
    assert report.reruns == 0 and report.remedies == []
    assert report.not_tried and report.to_dict()["notTried"] == report.not_tried
    assert report.to_dict()["budget"] == {"reruns": 0, "probes": 600, "seconds": 120.0}  # conftest's seconds


def test_budget_seconds_default_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KSCHEDCTL_FIX_SECONDS")
    assert Budget().seconds == 1.0
    for value, seconds in (("2.5", 2.5), ("-1", 0.0), ("soon", 1.0)):
        monkeypatch.setenv("KSCHEDCTL_FIX_SECONDS", value)
        assert Budget().seconds == seconds
    monkeypatch.setenv("KSCHEDCTL_FIX_SECONDS", "1")
    assert Budget().total() == 4.0  # several pods' searches: four pods' seconds in all, unless set
    monkeypatch.setenv("KSCHEDCTL_FIX_TOTAL_SECONDS", "6")
    assert Budget().total() == 6.0


@pytest.mark.parametrize(
    ("pods", "workers", "seconds"),
    # 6 s in all: 3 pods in a row get 1 s each (no more than a pod's own second); 13 pods on 2 workers: the
    # first alone, then 12 two at a time, 7 in a row
    [(3, 1, 1.0), (12, 1, 0.5), (13, 2, 0.857), (40, 2, 0.286), (0, 2, 1.0)],
)
def test_budget_share_of_the_total(pods: int, workers: int, seconds: float) -> None:
    assert Budget(seconds=1.0, total_seconds=6.0).share(pods, workers).seconds == seconds


def _state(cluster: Cluster, pod: Pod) -> Any:
    objs = [o.raw for objs in cluster.objects.values() for o in objs]
    return copy.deepcopy((
        [n.raw for n in cluster.nodes], [(n.name, n.unschedulable, n.taints, n.labels) for n in cluster.nodes],
        [p.raw for p in cluster.pods], [(p.key, p.node_name, p.priority, p.tolerations) for p in cluster.pods],
        objs, pod.raw, pod.priority, pod.node_selector, pod.tolerations,
    ))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_given_to_the_search_is_changed(case: Case) -> None:
    cluster, pod = world(case)
    nodes, pods = list(cluster.nodes), list(cluster.pods)
    before = _state(cluster, pod)
    report = find_remedies(cluster, pod, CFG)
    assert report.remedies
    assert _state(cluster, pod) == before
    assert cluster.nodes == nodes and cluster.pods == pods  # the same objects, none added or replaced


@pytest.mark.parametrize(
    ("current", "fitting", "expected"),
    [(10, 7, 7), (10, 9, 9), (10, 0, 0), (10, -1, None), (1, 0, 0), (0, 0, None)],
)
def test_largest_fitting(current: int, fitting: int, expected: int | None) -> None:
    assert largest_fitting(current, lambda v: v <= fitting) == expected
    for hint in (None, -1, 0, 1, fitting - 1, fitting, fitting + 1, current - 2, current, 50):  # a guess changes no answer
        assert largest_fitting(current, lambda v: v <= fitting, hint) == expected


@pytest.mark.parametrize(
    ("lo", "hi", "needed", "expected"),
    [(2, 50, 4, 4), (2, 50, 2, 2), (2, 50, 50, 50), (2, 50, 51, None), (5, 4, 1, None)],
)
def test_smallest_fitting(lo: int, hi: int, needed: int, expected: int | None) -> None:
    assert smallest_fitting(lo, hi, lambda v: v >= needed) == expected


def test_smallest_fitting_finds_every_answer_of_a_wide_range_in_few_probes() -> None:
    for needed in [*range(2, 40), 1000, 19_999, 20_000, 20_001]:
        probes: list[int] = []
        assert smallest_fitting(2, 20_001, lambda v, n=needed, seen=probes: seen.append(v) is None and v >= n) == min(
            needed, 20_001)
        assert len(probes) <= 2 * max(2, needed - 1).bit_length() + 2


def test_node_groups_by_group_label_and_most_common_shape() -> None:
    cluster = make_cluster([
        make_node("g1").label("pool", "general").alloc(cpu="8", memory="32Gi", pods="110"),
        make_node("g2").label("pool", "general").alloc(cpu="4", memory="16Gi", pods="110"),
        make_node("g3").label("pool", "general").alloc(cpu="4", memory="16Gi", pods="110"),
        make_node("x1").label("pool", "gpu").taint("gpu"),
    ])
    groups = {g.name: (g.template.name, len(g.nodes)) for g in node_groups(cluster)}
    assert groups == {"pool=general": ("g2", 3), "pool=gpu": ("x1", 1)}
    shapes = {g.name: len(g.nodes) for g in node_groups(make_cluster([make_node("a"), make_node("b"), make_node("c").taint("t")]))}
    assert shapes == {"shape of a": 2, "shape of c": 1}


# --------------------------------------------------------------------------- why this node


def _scored_cluster() -> Cluster:
    return make_cluster(
        [make_node("big").alloc(cpu="16", memory="64Gi", pods="110"), make_node("small").alloc(cpu="4", memory="8Gi", pods="110"),
         make_node("tainted").taint("x")],
    )


def test_margin_over_the_runner_up() -> None:
    trace = explain_pod(_scored_cluster(), web("1").build(), CFG)
    m = margin(trace)
    assert m is not None and (m.selected, m.other, m.compared, m.tie) == ("big", "small", False, False)
    assert m.difference == trace.totals["big"] - trace.totals["small"] and m.difference > 0
    rows = {r.plugin: r for r in m.rows}
    assert sum(r.diff for r in m.rows) == m.difference
    assert rows["NodeResourcesFit"].selected == trace.score["NodeResourcesFit"].weighted["big"]
    assert m.deciding and all(rows[p].diff > 0 for p in m.deciding)
    assert sum(rows[p].diff for p in m.deciding) >= m.difference  # without them "small" would not lose


def test_margin_against_a_rejected_node() -> None:
    trace = explain_pod(_scored_cluster(), web("1").build(), CFG)
    m = margin(trace, "tainted")
    assert m is not None and m.compared
    assert m.rejected == {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                          "reasons": ["node(s) had untolerated taint(s)"]}


def test_margin_on_a_tie_says_how_it_was_broken() -> None:
    cluster = make_cluster([make_node("n1"), make_node("n2")])
    trace = explain_pod(cluster, web("1").build(), CFG)
    m = margin(trace)
    assert m is not None and m.tie and m.difference == 0 and m.deciding == []
    assert m.tie_note is not None and m.tie_note.startswith(f"n2 lost on a tie with n1 (both total {trace.totals['n1']}).")
    assert "heap" in m.tie_note


def test_margin_with_one_feasible_node() -> None:
    trace = explain_pod(make_cluster([make_node("n1"), make_node("n2").taint("x")]), web("1").build(), CFG)
    m = margin(trace)
    assert m is not None and m.other is None and m.note is not None and "only feasible node" in m.note


# --------------------------------------------------------------------------- the command line, on the demo

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
runner = CliRunner()

#: Pods for the kinds the demo's pending pods do not need, written against the demo cluster.
DEMO_PODS = {
    "spread": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "etl-spread", "namespace": "batch", "labels": {"app": "etl"}},
        "spec": {
            "nodeSelector": {"pool": "memory"},
            "containers": [{"name": "etl", "image": "etl", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"app": "etl"}}}],
        },
    },
    "anti": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "lonely", "namespace": "shop", "labels": {"app": "lonely"}},
        "spec": {
            "containers": [{"name": "c", "image": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": HOST, "namespaces": ["monitoring"], "labelSelector": {"matchLabels": {"app": "node-exporter"}}}]}},
        },
    },
    "affinity": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "near-cache", "namespace": "shop", "labels": {"app": "near-cache"}},
        "spec": {
            "containers": [{"name": "c", "image": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "cache"}}}]}},
        },
    },
}

#: (pod: "ns/name" of the demo or a DEMO_PODS key, kind, change, verdict outcome and node)
CLI_CASES = [
    ("ml/notebook-pending", "add-toleration", "tolerate taint nvidia.com/gpu=present:NoSchedule", "scheduled", "gpu-b0"),
    ("ml/notebook-pending", "remove-taint", "remove taint nvidia.com/gpu=present:NoSchedule from node gpu-b0", "scheduled", "gpu-b0"),
    ("ml/train-pending", "lower-request", "lower container train's nvidia.com/gpu request to 1", "scheduled", "gpu-b0"),
    ("ml/train-pending", "add-node", "add one node like gpu-a0 (node group pool=gpu)", "scheduled", "gpu-a0-new-1"),
    ("ml/train-pending", "priority-class", "use PriorityClass batch-low (priority 100, now 0)", "preemption", "gpu-b0"),
    ("shop/checkout-pending", "uncordon-node", "uncordon node memory-c0", "scheduled", "memory-c0"),
    ("shop/checkout-pending", "lower-request", "lower container checkout's cpu request to 12340m", "scheduled", "memory-b0"),
    ("batch/report-pending", "relax-node-affinity", "drop nodeSelector disktype=nvme", "scheduled", "general-b1"),
    ("batch/report-pending", "label-node", "label node general-a0 disktype=nvme", "scheduled", "general-a0"),
    ("spread", "spread-max-skew", f"raise the {ZONE} spread constraint's maxSkew from 1 to 5", "scheduled", "memory-b0"),
    ("spread", "spread-schedule-anyway", f"make the {ZONE} spread constraint ScheduleAnyway", "scheduled", "memory-b0"),
    ("anti", "drop-pod-anti-affinity-term",
     f"drop required pod anti-affinity term 0 (topologyKey {HOST}, app=node-exporter)", "scheduled", "general-b1"),
    ("affinity", "drop-pod-affinity-term", f"drop required pod affinity term 0 (topologyKey {ZONE}, app=cache)", "scheduled",
     "general-b1"),
]


def pod_args(pod: str, tmp_path: Path) -> list[str]:
    if "/" in pod:
        ns, name = pod.split("/")
        return [name, "-n", ns]
    f = tmp_path / f"{pod}.yaml"
    f.write_text(yaml.safe_dump(DEMO_PODS[pod]))
    return ["-f", str(f)]


@pytest.mark.parametrize(("pod", "kind", "change", "outcome", "node"), CLI_CASES, ids=[f"{c[0]}-{c[1]}" for c in CLI_CASES])
def test_cli_fix_on_the_demo(pod: str, kind: str, change: str, outcome: str, node: str, tmp_path: Path) -> None:
    args = ["explain", "pod", *pod_args(pod, tmp_path), "--snapshot", DEMO, "--fix"]
    data = json.loads(runner.invoke(app, [*args, "-o", "json"]).stdout)
    found = [r for r in data["remedies"] if r["kind"] == kind and r["change"] == change]
    assert len(found) == 1, [(r["kind"], r["change"]) for r in data["remedies"]]
    r = found[0]
    assert r["helps"] and r["verified"] == "verified by re-running the cycle"
    assert (r["verdict"]["outcome"], r["verdict"]["node"]) == (outcome, node)
    table = runner.invoke(app, args)
    assert table.exit_code == 1
    headline = next(ln for ln in table.stdout.splitlines() if change in ln)
    assert re.match(r" *\d+\. ", headline)  # listed among the remedies that help
    assert f"→ {r['verdict']['text']} — verified by re-running the cycle" in table.stdout


def test_cli_fix_output_formats(tmp_path: Path) -> None:
    base = ["explain", "pod", "notebook-pending", "-n", "ml", "--snapshot", DEMO, "--fix"]
    data = yaml.safe_load(runner.invoke(app, [*base, "-o", "yaml"]).stdout)
    assert isinstance(data["remedies"], list) and data["remediesSearch"]["budget"] == Budget().to_dict()
    assert data["remedies"][0]["patch"] == {"spec": {"tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]}}
    md = runner.invoke(app, [*base, "-o", "markdown"]).stdout
    assert "#### What would make it fit" in md and "```yaml" in md
    table = runner.invoke(app, base).stdout
    assert "$ kubectl taint node gpu-b0 nvidia.com/gpu=present:NoSchedule-" in table
    assert re.search(r"Budget: used \d+ of 60 cycle re-runs, \d+ of 600 Filter probes", table)
    fits = runner.invoke(app, ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--fix"])
    assert fits.exit_code == 0 and "nothing to fix: the pod is schedulable on memory-b0" in fits.stdout


def test_cli_fix_writes_nothing(tmp_path: Path) -> None:
    snap = tmp_path / "cluster.yaml"
    snap.write_bytes(Path(DEMO).read_bytes())
    before = snap.read_bytes()
    for pod in ("train-pending", "notebook-pending"):
        assert runner.invoke(app, ["explain", "pod", pod, "-n", "ml", "--snapshot", str(snap), "--fix"]).exit_code == 1
    assert runner.invoke(app, ["explain", "pending", "-A", "--snapshot", str(snap), "--fix"]).exit_code == 1
    assert snap.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml"]


def test_cli_why_this_node() -> None:
    base = ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO]
    out = runner.invoke(app, [*base, "-o", "wide"]).stdout
    assert "Why memory-b0 and not memory-a0 (runner-up): weighted scores" in out
    assert "memory-b0 wins by 3 (873 vs 870); decided by NodeResourcesFit (+5)" in out
    short = runner.invoke(app, base).stdout  # the short answer: the margin's sentence, not its table
    assert "Why memory-b0 and not memory-a0 (runner-up)\n" in short and "weighted scores" not in short
    assert "memory-b0 wins by 3 (873 vs 870); decided by NodeResourcesFit (+5)" in short
    m = json.loads(runner.invoke(app, [*base, "-o", "json"]).stdout)["details"]["margin"]
    assert (m["selected"], m["other"], m["difference"], m["decidedBy"]) == ("memory-b0", "memory-a0", 3, ["NodeResourcesFit"])
    rejected = runner.invoke(app, [*base, "--compare", "gpu-a0"]).stdout
    assert ("gpu-a0 was rejected by TaintToleration (UnschedulableAndUnresolvable): node(s) had untolerated taint(s)"
            in rejected)
    general = json.loads(runner.invoke(app, [*base, "--compare", "general-b0", "-o", "json"]).stdout)["details"]["margin"]
    assert general["compared"] and general["difference"] == 873 - 623
    bad = runner.invoke(app, [*base, "--compare", "nope"])
    assert bad.exit_code == 2 and bad.stderr.strip() == 'error: --compare: node "nope" is not in the snapshot'


def test_cli_pending_grouped_by_cause() -> None:
    base = ["explain", "pending", "-A", "--snapshot", DEMO]
    table = runner.invoke(app, [*base, "--fix"])
    assert table.exit_code == 1
    assert table.stdout.strip().splitlines()[-2] == "6 pending pods: 4 unschedulable, 1 fit now, 1 gated; 5 causes"
    assert "Remedies: each verified by re-running the cycle; budget 60 cycle re-runs" in table.stdout
    groups = json.loads(runner.invoke(app, [*base, "--fix", "--by", "cause", "-o", "json"]).stdout)
    by_cause = {g["cause"]: g for g in groups}
    gpu = by_cause["Insufficient nvidia.com/gpu"]
    assert (gpu["count"], gpu["pods"], gpu["sharedRemedy"]) == (2, ["ml/notebook-pending", "ml/train-pending"], None)
    report = by_cause["node(s) didn't match Pod's node affinity/selector"]
    assert report["sharedRemedy"]["change"] == "drop nodeSelector disktype=nvme"
    assert by_cause["Insufficient cpu"]["preemptionWouldPlace"] == 1
    rows = json.loads(runner.invoke(app, [*base, "--fix", "-o", "json"]).stdout)  # json: one row per pod by default
    assert [r["pod"] for r in rows][:2] == ["batch/report-pending", "ml/notebook-pending"]
    assert rows[1]["remedies"][0]["change"] == "tolerate taint nvidia.com/gpu=present:NoSchedule"
    per_pod = runner.invoke(app, [*base, "--fix", "--by", "pod"]).stdout
    assert "what would make it fit" in per_pod
    bad = runner.invoke(app, [*base, "--by", "node"])
    assert bad.exit_code == 2 and "--by: expected cause or pod" in bad.stderr


def test_groups_share_a_remedy_only_when_every_pod_has_it() -> None:
    nodes = [make_node("n1").taint("dedicated", "db"), make_node("n2").taint("dedicated", "db")]
    pods = [make_pod(f"db-{i}").req(cpu="100m").build() for i in range(3)]
    cluster = make_cluster(nodes, pods)
    rows = [r.to_dict() for r in pending_rows(cluster, pods, CFG)]
    attach_remedies(rows, cluster, pods, CFG)
    (g,) = group_by_cause(rows)
    assert (g.cause, len(g.pods)) == ("node(s) had untolerated taint(s)", 3)
    assert g.shared_remedy is not None and g.shared_remedy["change"] == "tolerate taint dedicated=db:NoSchedule"
    rows[0]["remedies"] = [r for r in rows[0]["remedies"] if r["kind"] != "add-toleration"]
    assert shared_remedy(rows)["kind"] == "remove-taint"  # type: ignore[index]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_renderers_fit_the_terminal(width: int) -> None:
    cluster = load_cluster([DEMO])
    checks = []
    for ns, name in (("ml", "train-pending"), ("shop", "web-7d9f-pending"), ("batch", "report-pending")):
        pod = cluster.pod(ns, name)
        assert pod is not None
        trace = explain_pod(cluster, pod, CFG)
        data = trace.to_dict()
        annotate_trace(data, trace, cluster, pod, CFG, fix=True)
        checks.append(lambda c, d=data: render_whatif_sections(d, c))
    rows = [r.to_dict() for r in pending_rows(cluster, cluster.pending_pods(), CFG)]
    search = attach_remedies(rows, cluster, cluster.pending_pods(), CFG)
    checks.append(lambda c: render_groups_table([g.to_dict() for g in group_by_cause(rows)], c, search))
    for render in checks:
        buf = io.StringIO()
        render(Console(file=buf, width=width, markup=False, highlight=False, color_system=None))
        lines = buf.getvalue().splitlines()
        assert lines and max(len(ln.rstrip()) for ln in lines) <= width


def test_margin_against_a_node_an_extender_rejected() -> None:
    trace = Trace(pod="default/web", profile="default-scheduler", selected_node="n1", candidates=["n1"],
                  feasible_nodes=["n1"], totals={"n1": 10}, max_score=10)
    trace.filter = {"n1": NodeVerdict("n1", Status()),
                    "n2": NodeVerdict("n2", Status(Code.UNSCHEDULABLE, "maintenance"), extender="http://ext:8888")}
    m = margin(trace, "n2")
    assert m is not None and m.rejected == {"plugin": "extender http://ext:8888", "code": "Unschedulable",
                                            "reasons": ["maintenance"]}


# --------------------------------------------------------------------------- patches apply as written


PRIORITY_CLASSES = [make_object("PriorityClass", "batch-low", value=100), make_object("PriorityClass", "never", value=50,
                                                                                      preemptionPolicy="Never")]


def _stored_pod() -> PodBuilder:
    """A pod as the API server stores it: admission filled in priority and preemptionPolicy."""
    return web("1").priority(0, "PreemptLowerPriority")


@pytest.mark.parametrize(
    ("patch", "refusal"),
    [
        ({"spec": {"priorityClassName": "batch-low"}},
         'pods "web" is forbidden: the integer value of priority (0) must not be provided in pod spec; '
         "priority admission controller computed 100 from the given PriorityClass name"),
        ({"spec": {"priorityClassName": "never", "priority": None}},
         'pods "web" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in '
         "pod spec; priority admission controller computed Never from the given PriorityClass name"),
        ({"spec": {"priorityClassName": "nope", "priority": None}}, 'pods "web" is forbidden: no PriorityClass with name nope was found'),
        ({"spec": {"priorityClassName": "batch-low", "priority": None}}, None),
        ({"spec": {"containers": [{"name": "c0", "resources": {"requests": {"cpu": "-1"}}}]}},
         "spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"),
        ({"spec": {"containers": [{"image": "x"}]}}, "map: {'image': 'x'} does not contain declared merge key: name"),
    ],
)
def test_pod_patches_are_checked_as_the_api_server_would(patch: dict[str, Any], refusal: str | None) -> None:
    pod = _stored_pod().build()
    check = check_pod_patch(make_cluster([make_node("n1")], [pod], PRIORITY_CLASSES), pod, patch, 35)
    assert check.refused == ([refusal] if refusal else [])
    if refusal is None:
        assert check.applied is not None and check.applied["spec"]["priorityClassName"] == "batch-low"
        assert "priority" not in check.applied["spec"]


def test_priority_class_patch_on_a_stored_pod_deletes_its_priority() -> None:
    pod = _stored_pod().build()
    cluster = make_cluster([make_node("n1").alloc(cpu="2", memory="8Gi", pods="110")],
                           [busy("low", "n1", cpu="2", priority=0), pod], PRIORITY_CLASSES)
    (r,) = [m for m in find_remedies(cluster, pod, CFG).remedies if m.kind == "priority-class"]
    assert r.patch == {"spec": {"priorityClassName": "batch-low", "priority": None, "preemptionPolicy": None}}
    assert r.helps and r.verified and r.check is not None and r.check.refused == []
    assert (r.verdict.outcome, r.verdict.node) == ("preemption", "n1")
    assert not r.check.in_place and "re-create the pod" in r.check.how  # a live pod's priority cannot change


def test_a_refused_patch_is_not_shown_as_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.whatif import changes

    def old_patch(pod: Pod, name: str, value: int) -> changes.Change:  # the patch before issue 19: priority kept
        c = real(pod, name, value)
        c.patch = {"spec": {"priorityClassName": name}}
        return c

    real = changes.set_priority_class
    monkeypatch.setattr(changes, "set_priority_class", old_patch)
    pod = _stored_pod().build()
    cluster = make_cluster([make_node("n1").alloc(cpu="2", memory="8Gi", pods="110")],
                           [busy("low", "n1", cpu="2", priority=0), pod], PRIORITY_CLASSES)
    report = find_remedies(cluster, pod, CFG)
    (r,) = [m for m in report.remedies if m.kind == "priority-class"]
    assert not r.helps and not r.verified and r.verdict.outcome == "refused"
    assert r.to_dict()["verified"] is None
    assert r.verdict.text().startswith("not verified: the API server would refuse the patched object: pods \"web\" is "
                                       "forbidden: the integer value of priority (0)")
    data = {"details": {}, "remedies": [m.to_dict() for m in report.remedies], "remediesSearch": report.to_dict()}
    buf = io.StringIO()
    render_whatif_sections({**data, "details": {"margin": None}}, Console(file=buf, width=200, color_system=None))
    assert "Tried, does not help:" in buf.getvalue() and "not verified" in buf.getvalue()


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in POD_KINDS], ids=[c.name for c in CASES if c.kind in POD_KINDS])
def test_the_cycle_reruns_on_the_patched_stored_pod(case: Case) -> None:
    cluster, pod = world(case)
    r = the_remedy(case, find_remedies(cluster, pod, CFG).remedies)
    assert r.check is not None and r.check.refused == [] and r.check.applied is not None
    assert r.check.applied == sm.apply(pod.raw, r.patch, "Pod")
    assert _pruned(r.check.applied["spec"]) == _pruned(case.fixed()[1].build().raw["spec"])  # the builders' fix


def _pruned(v: Any) -> Any:
    """Without empty maps and lists (``nodeSelector: {}`` selects as no nodeSelector does)."""
    if isinstance(v, dict):
        return {k: _pruned(x) for k, x in v.items() if _pruned(x) not in ({}, [])}
    return [_pruned(x) for x in v] if isinstance(v, list) else v


def test_how_a_pod_patch_applies() -> None:
    tol = ch.add_toleration(web("1").build(), Taint("gpu", "x", "NoSchedule"))
    bare = web("1").build()
    cluster = make_cluster([make_node("n1")], [bare])
    in_place = check_pod_patch(cluster, bare, tol.patch, 35)
    assert in_place.in_place and in_place.how.startswith("kubectl patch pod web -n default -p '{\"spec\":{\"tolerations\"")
    lower = ch.set_request(bare, ch.RequestSite("cpu", "c0", Fraction(1)), "500m")
    assert not check_pod_patch(cluster, bare, lower.patch, 35).in_place
    owned = web("1").owner("ReplicaSet", "web-7d9f").build()
    rs = make_object("ReplicaSet", "web-7d9f", "default", metadata={
        "name": "web-7d9f", "namespace": "default", "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}]})
    deploy = make_object("Deployment", "web", "default", spec={"template": {"spec": {"containers": [
        {"name": "c0", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}})
    check = check_pod_patch(make_cluster([make_node("n1")], [owned], [rs, deploy]), owned, lower.patch, 35)
    assert check.target == "Deployment default/web" and not check.refused
    assert "kubectl patch deployment web -n default -p '{\"spec\":{\"template\":{\"spec\":{\"containers\"" in check.how
    bad = {"spec": {"containers": [{"name": "c0", "resources": {"requests": {"cpu": "-1"}}}]}}
    refused = check_pod_patch(make_cluster([make_node("n1")], [owned], [rs, deploy]), owned, bad, 35).refused
    assert any(e.startswith("spec.template.spec.containers[0].resources.requests[cpu]: Invalid value") for e in refused)


def test_node_patches_are_checked() -> None:
    node = make_node("n1").taint("a", "b").build()
    assert check_node_patch(node, ch.remove_taint(node, node.taints[0]).patch, None, 35).refused == []
    bad = check_node_patch(node, {"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}, None, 35)
    assert bad.refused and "Unsupported value: \"Sometimes\"" in bad.refused[0]


# --------------------------------------------------------------------------- at scale


def test_opened_nodes_are_capped_in_text_and_complete_in_json() -> None:
    names = [f"n{i:03d}" for i in range(200)]
    r = {"change": "tolerate taint x", "detail": {"opensNodes": names}}
    assert remedy_headline(r) == "tolerate taint x (opens 200 nodes: n000, n001, n002, n003, n004 and 195 more)"
    assert remedy_headline({**r, "detail": {"opensNodes": names[:5]}}) == "tolerate taint x (opens 5 nodes: n000, n001, n002, n003, n004)"
    nodes = [make_node(f"n{i:02d}").taint("dedicated", "gpu") for i in range(12)]
    cluster = make_cluster(nodes)
    pod = web("1").build()
    (tol,) = [m for m in find_remedies(cluster, pod, CFG).remedies if m.kind == "add-toleration"]
    assert tol.to_dict()["detail"]["opensNodes"] == [f"n{i:02d}" for i in range(12)]  # JSON: every name


def _node_state(s: Snapshot) -> list[Any]:
    return [(ni.name, ni.node.raw, [p.pod.uid for p in ni.pods], ni.requested.milli_cpu, ni.requested.memory,
             ni.image_states, dict(ni.pvc_ref_counts)) for ni in s.node_info_list]


def test_a_snapshot_reusing_another_equals_one_built_afresh() -> None:
    cluster = load_cluster([DEMO])
    pending = cluster.pending_pods()[0]
    base = Snapshot(cluster)
    changed = ch.uncordon(cluster.nodes[3]).node
    new = ch.new_node_like(ch.node_groups(cluster)[0], {n.name for n in cluster.nodes}).node
    assert changed is not None and new is not None
    for other in (cluster.copy_with(nodes=[changed]), cluster.copy_with(nodes=[new]), cluster):
        for excluded in ((), (pending.uid,), (cluster.pods[0].uid,)):
            reused = Snapshot(other, exclude_pod_uids=excluded, reuse=base)
            fresh = Snapshot(other, exclude_pod_uids=excluded)
            assert _node_state(reused) == _node_state(fresh)
            assert (reused.nominated.keys(), reused.used_pvc_set) == (fresh.nominated.keys(), fresh.used_pvc_set)
            assert [ni.name for ni in reused.have_pods_with_affinity_list] == [ni.name for ni in fresh.have_pods_with_affinity_list]
    assert Snapshot(cluster.copy_with(nodes=[changed]), reuse=base).node_info_map[cluster.nodes[0].name] is \
        base.node_info_map[cluster.nodes[0].name]  # unchanged nodes are shared
    claims = make_cluster([make_node("n1"), make_node("n2")],
                          [make_pod("db").node("n1").pvc("data"), make_pod("p").nominated("n2"), make_pod("q").node("n2")])
    claims_base = Snapshot(claims)
    for pod in claims.pods:  # a pod with a claim, or nominated, excluded by one snapshot only
        reused = Snapshot(claims, exclude_pod_uids=(pod.uid,), reuse=claims_base)
        fresh = Snapshot(claims, exclude_pod_uids=(pod.uid,))
        assert (_node_state(reused), reused.used_pvc_set) == (_node_state(fresh), fresh.used_pvc_set)
        assert {k: [p.pod.uid for p in v] for k, v in reused.nominated.items()} == \
            {k: [p.pod.uid for p in v] for k, v in fresh.nominated.items()}


def test_analyse_filters_whole_list_path_gives_the_per_node_verdicts() -> None:
    cluster = load_cluster([DEMO])
    for pod in cluster.pending_pods():
        profile = CFG.profile_for(pod.scheduler_name)
        assert profile is not None
        fast = analyse_filters(cluster, pod, CFG)
        fw = Framework(profile, in_tree_registry(), Snapshot(cluster, exclude_pod_uids=(pod.uid,)), fast_paths=False)
        state = CycleState()
        pre = fw.filtering.run_pre_filter(state, pod)
        if not pre.status.is_success():
            assert fast.pre_filter_rejection is not None
            continue
        want = {ni.name: [(pl.name, list(st.reasons) or [st.message()]) for pl in fw.plugins.filter_plugins
                          if pl.name not in state.skip_filter_plugins
                          for st in [fw.filtering.run_filter_plugin(pl, state, pod, ni)] if not st.is_success()]
                for ni in fw.snapshot.node_info_list}
        got = {n.node: [(r.plugin, r.reasons) for r in n.rejections if r.plugin != "PreFilter"] for n in fast.nodes}
        assert got == want


def test_parallel_search_gives_the_serial_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.whatif import causes

    cluster = load_cluster([DEMO])
    pods = cluster.pending_pods()

    def searched(jobs: int) -> list[Any]:
        rows = [r.to_dict() for r in pending_rows(cluster, pods, CFG, jobs=1)]
        attach_remedies(rows, cluster, pods, CFG, jobs=jobs)
        return [(r["pod"], [(m["change"], m["verdict"]) for m in r.get("remedies") or []]) for r in rows]

    monkeypatch.setattr(causes, "MIN_PARALLEL_WORK", 0)
    assert searched(2) == searched(1)


class _Steps:
    """A Progress that records each counted step's last (done, total)."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[int, int | None]] = {}

    def phase(self, description: str) -> None:
        self.last.setdefault(description, (0, None))

    def counter(self, description: str) -> Callable[[int, int | None], None]:
        def update(done: int, total: int | None) -> None:
            self.last[description] = (done, total)

        return update


def test_explain_pending_fix_counts_both_steps_to_their_totals() -> None:
    """``explain pending --fix``: the pods explained and the remedies verified are counted, each up to its total."""
    from kschedctl.snapshot.loader import load_cluster
    from kschedctl.usecases.explain_pending import PendingRequest, explain_pending
    from kschedctl.usecases.request import Hooks

    steps = _Steps()
    result = explain_pending(PendingRequest(cluster=load_cluster([DEMO]), config=default_config(), fix=True, jobs=1),
                             Hooks(progress=steps))
    unschedulable = sum(1 for r in result.rows if r["outcome"] == "unschedulable")
    assert steps.last["explaining pending pods"] == (len(result.rows), len(result.rows))
    assert steps.last["verifying remedies"] == (unschedulable, unschedulable)


def test_a_step_without_a_total_does_not_keep_the_last_ones() -> None:
    """The progress line: a step whose size is not known does not show the previous step's total (0/20)."""
    from kschedctl.cli.progress import Activity

    with Activity(Console(file=io.StringIO(), force_terminal=True), enabled=True) as act:
        act.phase("explaining pending pods", 20)
        act.count(20, 20)
        act.phase("verifying remedies")
        assert act._progress is not None and act._progress.tasks[0].total is None


def test_no_shared_fix_says_when_a_search_was_cut_short() -> None:
    """By cause: "none shared by every pod" says so when the budget cut some pod's search short (that
    search may have missed the change the others share)."""
    from kschedctl.render.causes import group_cells

    rows = [{"pod": "d/a", "remediesSearch": {"notTried": ["node labels"]}}, {"pod": "d/b", "remediesSearch": {"notTried": []}}]
    group = {"cause": "x", "outcome": "unschedulable", "rows": rows, "pods": ["d/a", "d/b"], "count": 2,
             "preemptionWouldPlace": 0, "sharedRemedy": None}
    assert group_cells(group, True)[-1] == "none shared by every pod (the search was cut short for 1: its budget ran out)"
    rows[0]["remediesSearch"] = {"notTried": []}
    assert group_cells(group, True)[-1] == "none shared by every pod"


_REASONS = st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", ""]), min_size=1, max_size=2))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=6).flatmap(
    lambda n: st.lists(st.tuples(st.sampled_from(["P1", "P2", "PreFilter"]), st.lists(_REASONS, min_size=n, max_size=n)),
                       max_size=4).map(lambda cols: (n, cols))))
def test_the_nearest_nodes_are_counted_from_the_columns(shape: tuple[int, list[tuple[str, list[Any]]]]) -> None:
    """``FilterAnalysis.nearest_indexes`` (counted from the plugins' columns) names the nodes ``nearest``
    would pick from every node's rejections, and ``node`` gives each its rejections in plugin order."""
    from kschedctl.explain.nearest import FilterAnalysis, NodeRejections, Rejection

    n, cols = shape
    analysis = FilterAnalysis([f"n{i}" for i in range(n)])
    analysis.columns.extend(cols)
    nodes = [NodeRejections(f"n{i}", [Rejection(p, list(col[i])) for p, col in cols if col[i] is not None])
             for i in range(n)]
    assert analysis.nodes == nodes
    fewest = min((len(x.rejections) for x in nodes), default=0)
    assert analysis.nearest() == [x for x in nodes if len(x.rejections) == fewest]
    assert [analysis.names[i] for i in analysis.nearest_indexes()] == [x.node for x in analysis.nearest()]


_STATUS = st.one_of(st.none(), st.builds(lambda code, reasons: Status(code, *reasons),
                                         st.sampled_from([Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE]),
                                         st.lists(st.sampled_from(["x", "y"]), max_size=2)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), _STATUS), max_size=4), max_size=3),
       st.booleans())
def test_filter_reasons_count_what_the_verdicts_say(chunks: list[list[tuple[str, Status | None]]], read_first: bool) -> None:
    """``Trace.filter_reasons`` counts the reasons and the verdicts ``Trace.filter`` holds, made or not, a node
    recorded twice included."""
    from collections import Counter

    def recorded() -> Trace:
        t = Trace(pod="ns/p", profile="default-scheduler")
        for chunk in chunks:
            t.record_filter([n for n, _ in chunk], [s for _, s in chunk])
        return t

    trace = recorded()
    if read_first:
        _ = trace.filter
    verdicts = recorded().filter.values()
    want = Counter(r for v in verdicts if not v.status.is_success() for r in v.status.reasons)
    assert trace.filter_reasons() == (want, len(verdicts))
    assert trace.has_filter_verdicts() == bool(verdicts)
