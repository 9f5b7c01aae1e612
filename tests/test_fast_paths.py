"""The fast paths give the same trace as the reference path.

A Framework with ``fast_paths=False`` runs every plugin node by node and counts pods by
walking every node (the straightforward reference); with ``fast_paths=True`` plugins work on
whole node lists and read the snapshot's pod indexes. Hypothesis builds random clusters
(zones, taints, cordoned nodes, bound and nominated pods with labels, requests, ports,
affinity terms, terminating pods, namespaces with labels), random incoming pods (tolerations,
node affinity, spread constraints, pod (anti-)affinity) and random configurations, runs one
detailed cycle both ways and compares the whole trace: statuses, reasons, scores, selection,
FitError, preemption, plugin explanations.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedctl.config import default_config, parse_config
from kschedctl.explain.cycle import run_cycle
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeVerdict
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Status
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins import in_tree_registry
from kschedctl.snapshot.model import Pod
from kschedctl.testing import SnapshotHandle
from tests.builders import NodeBuilder, PodBuilder, make_cluster, make_node, make_object, make_pod, node_info

ZONES = ["zone-a", "zone-b", "zone-c"]
APPS = ["a", "b", "c"]
NAMESPACES = ["default", "other"]
TOPOLOGY = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "pool"]
registry = in_tree_registry()


@st.composite
def nodes(draw: st.DrawFn) -> list[NodeBuilder]:
    n = draw(st.one_of(st.integers(1, 12), st.integers(95, 140)))
    out = []
    for i in range(n):
        b = make_node(f"n{i:03d}")
        if draw(st.integers(0, 9)) > 0:
            b.zone(ZONES[draw(st.integers(0, 2))], region="r1")
        if draw(st.booleans()):
            b.label("pool", draw(st.sampled_from(["x", "y"])))
        if draw(st.integers(0, 15)) == 0:
            del b.raw["metadata"]["labels"]["kubernetes.io/hostname"]
        b.alloc(cpu=draw(st.sampled_from(["1", "2", "4", "3500m"])), memory=draw(st.sampled_from(["2Gi", "4Gi", "8Gi"])),
                pods=draw(st.sampled_from(["3", "110"])))
        if draw(st.integers(0, 5)) == 0:
            b.alloc_extra({"example.com/gpu": "2"})
        for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else 0):
            b.taint(draw(st.sampled_from(["k1", "k2"])), draw(st.sampled_from(["", "v"])),
                    draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])))
        if draw(st.integers(0, 12)) == 0:
            b.unschedulable()
        if draw(st.booleans()):
            b.image(f"img-{draw(st.integers(0, 2))}:1", size=draw(st.sampled_from([10, 300, 900])) * 1024 * 1024)
        out.append(b)
    return out


def terms(draw: st.DrawFn, p: PodBuilder, *, incoming: bool) -> None:
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["required", "preferred"]))
        anti = draw(st.booleans())
        sel: dict[str, Any] = {"matchLabels": {"app": draw(st.sampled_from(APPS))}}
        if draw(st.integers(0, 4)) == 0:
            sel = {"matchExpressions": [{"key": "tier", "operator": draw(st.sampled_from(["Exists", "NotIn", "In"])),
                                         **({"values": ["x"]} if True else {})}]}
            if sel["matchExpressions"][0]["operator"] == "Exists":
                del sel["matchExpressions"][0]["values"]
        extra: dict[str, Any] = {}
        r = draw(st.integers(0, 5))
        if r == 0:
            extra["namespaces"] = list(draw(st.sets(st.sampled_from(NAMESPACES), min_size=1)))
        elif r == 1:
            extra["namespace_selector"] = draw(st.sampled_from([{}, {"matchLabels": {"team": "t1"}}]))
        p.pod_affinity(kind, draw(st.sampled_from(TOPOLOGY)), anti=anti, weight=draw(st.integers(1, 100)),
                       label_selector=sel, **extra)


@st.composite
def existing_pods(draw: st.DrawFn, node_names: list[str]) -> list[PodBuilder]:
    out = []
    for i in range(draw(st.integers(0, 60))):
        p = make_pod(f"p{i}", draw(st.sampled_from(NAMESPACES)))
        p.labels(app=draw(st.sampled_from(APPS)))
        if draw(st.booleans()):
            p.label("tier", draw(st.sampled_from(["x", "y"])))
        if draw(st.integers(0, 3)):
            p.req(cpu=draw(st.sampled_from(["100m", "500m", "1"])), memory=draw(st.sampled_from(["128Mi", "1Gi"])))
        if draw(st.integers(0, 8)) == 0:
            p.host_port(draw(st.sampled_from([80, 8080])))
        if draw(st.integers(0, 3)) == 0:
            terms(draw, p, incoming=False)
        if draw(st.integers(0, 10)) == 0:
            p.raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        p.priority(draw(st.sampled_from([0, 10, 1000])))
        if draw(st.integers(0, 15)) == 0:
            p.nominated(draw(st.sampled_from(node_names)))  # pending, nominated
        else:
            p.node(draw(st.sampled_from(node_names)))
        out.append(p)
    return out


@st.composite
def incoming_pod(draw: st.DrawFn) -> PodBuilder:
    p = make_pod("incoming", draw(st.sampled_from(NAMESPACES)))
    p.labels(app=draw(st.sampled_from(APPS)))
    if draw(st.booleans()):
        p.label("tier", "x")
    if draw(st.integers(0, 4)):
        p.req(cpu=draw(st.sampled_from(["100m", "1", "2"])), memory=draw(st.sampled_from(["256Mi", "1Gi", "3Gi"])))
    if draw(st.integers(0, 6)) == 0:
        p.res({"example.com/gpu": "1"})
    p.image(f"img-{draw(st.integers(0, 3))}:1")
    for _ in range(draw(st.integers(0, 2))):
        p.toleration(draw(st.sampled_from(["k1", "k2", ""])), effect=draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule"])),
                     operator="Exists")
    if draw(st.integers(0, 5)) == 0:
        p.node_selector(pool=draw(st.sampled_from(["x", "y"])))
    if draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(["pool", "kubernetes.io/hostname"]))  # hostname: (nearly) every node matches
        p.node_affinity_preferred(draw(st.integers(1, 50)), [{"key": key, "operator": "Exists"}])
    if draw(st.integers(0, 7)) == 0:
        p.host_port(80)
    for _ in range(draw(st.integers(0, 2))):
        extra: dict[str, Any] = {}
        if draw(st.integers(0, 3)) == 0:
            extra["minDomains"] = draw(st.integers(1, 4))
        if draw(st.integers(0, 3)) == 0:
            extra["nodeTaintsPolicy"] = "Honor"
        p.spread(draw(st.integers(1, 3)), draw(st.sampled_from(TOPOLOGY)),
                 draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])), {"app": draw(st.sampled_from(APPS))}, **extra)
    if draw(st.booleans()):
        terms(draw, p, incoming=True)
    p.priority(draw(st.sampled_from([0, 100, 2000])))
    if draw(st.integers(0, 8)) == 0:
        p.raw["spec"]["nodeName"] = ""  # explicitly empty
    return p


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    pct = draw(st.sampled_from([None, 100, 30, 5]))
    if pct is not None:
        cfg["percentageOfNodesToScore"] = pct
    args: list[dict[str, Any]] = []
    strategy = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", None]))
    if strategy:
        s: dict[str, Any] = {"type": strategy}
        if strategy == "RequestedToCapacityRatio":
            s["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
        if draw(st.booleans()):
            s["resources"] = [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1},
                              {"name": "example.com/gpu", "weight": 3}]
        args.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": s}})
    if draw(st.booleans()):
        args.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": draw(st.sampled_from([0, 1, 100]))}})
    if draw(st.integers(0, 3)) == 0:
        args.append({"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]}})
    if args:
        cfg["profiles"] = [{"schedulerName": "default-scheduler", "pluginConfig": args}]
    return cfg


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[NodeBuilder], list[PodBuilder], PodBuilder, dict[str, Any], bool]:
    ns = draw(nodes())
    pods = draw(existing_pods([b.raw["metadata"]["name"] for b in ns]))
    return ns, pods, draw(incoming_pod()), draw(configs()), draw(st.booleans())


def trace_of(cluster: Any, pod: Any, config: Any, fast: bool) -> dict[str, Any]:
    snapshot = Snapshot(cluster, features=config.profiles[0].features, exclude_pod_uids=(pod.uid,))
    fw = Framework(config.profiles[0], registry, snapshot, fast_paths=fast)
    return run_cycle(fw, pod, config, details=True).to_dict()


#: v1.36's rules (BalancedAllocation scores the change of balance) with its default NodeDeclaredFeatures.
V136 = resolve_features(36, {"NodeDeclaredFeatures": True})


def with_v136(raw_config: dict[str, Any]) -> dict[str, Any]:
    """The configuration as v1.36 defaults it: NodeDeclaredFeatures enabled too."""
    out = copy.deepcopy(raw_config)
    profiles = out.setdefault("profiles", [{"schedulerName": "default-scheduler"}])
    profiles[0]["plugins"] = {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios(), st.booleans())
def test_fast_and_reference_paths_give_the_same_trace(scenario: Any, v136: bool) -> None:
    node_builders, pod_builders, incoming, raw_config, with_service = scenario
    objects = [make_object("Namespace", "default", labels={"team": "t1"}), make_object("Namespace", "other")]
    if with_service:  # default spreading has a selector to use
        objects.append(make_object("Service", "svc", incoming.raw["metadata"]["namespace"],
                                   spec={"selector": {"app": incoming.raw["metadata"]["labels"]["app"]}}))
    cluster = make_cluster(node_builders, pod_builders, objects)
    config = parse_config(with_v136(raw_config) if v136 else raw_config)
    if v136:
        config.profiles[0].features = V136
    pod = incoming.build()
    cluster.default_priority(pod)
    reference = trace_of(cluster, pod, config, fast=False)
    fast = trace_of(cluster, pod, config, fast=True)
    assert fast == reference


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_inter_pod_affinity_details_per_domain_equal_the_whole_walk(scenario: Any) -> None:
    """explain's per-domain detail walks list the same pods, in the same order, as one walk of everything."""
    from kschedctl.framework.cycle_state import CycleState
    from kschedctl.plugins.interpodaffinity import filtering, scoring
    from kschedctl.plugins.interpodaffinity.plugin import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY

    node_builders, pod_builders, incoming, raw_config, _ = scenario
    cluster = make_cluster(node_builders, pod_builders, [make_object("Namespace", "default", labels={"team": "t1"})])
    config = parse_config(raw_config)
    pod = incoming.build()
    cluster.default_priority(pod)
    fw = Framework(config.profiles[0], registry, Snapshot(cluster, features=config.features, exclude_pod_uids=(pod.uid,)))
    state = CycleState()
    run_cycle(fw, pod, config, state=state)
    fs = state.get(PRE_FILTER_STATE_KEY)
    if fs is not None:
        whole: dict[tuple[str, str, str], list[Any]] = {}

        def record(kind: str, tk: str, tv: str, p: Any, node: str, term: int) -> None:
            whole.setdefault((kind, tk, tv), []).append({"pod": p.key, "node": node, "term": term})

        filtering.count_existing_anti_affinity(fs.pod, fs.namespace_labels, fs.anti_nodes, record)
        filtering.count_incoming_terms(fs.affinity_terms, fs.anti_affinity_terms, fs.nodes, record)
        for (kind, tk, tv), entries in whole.items():
            assert filtering._domain_detail(fs, tk, tv)[(kind, tk, tv)] == entries
    ss = state.get(PRE_SCORE_STATE_KEY)
    if ss is not None:
        contributions: dict[tuple[str, str], list[Any]] = {}

        def record_score(source: str, tk: str, tv: str, w: int, p: Any, node: str, term: int) -> None:
            contributions.setdefault((tk, tv), []).append(
                {"pod": p.key, "node": node, "source": source, "term": term, "weight": w}
            )

        scoring.build_topology_score(ss, record_score)
        for (tk, tv), entries in contributions.items():
            assert scoring._domain_detail(ss, tk, tv) == entries


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios(), st.data())
def test_indexes_follow_assume_and_forget(scenario: Any, data: st.DataObject) -> None:
    """A simulation assumes and forgets pods between cycles: the indexes built by an earlier fast
    cycle are updated in place, and the next cycle still equals the reference walk."""
    node_builders, pod_builders, incoming, raw_config, _ = scenario
    objects = [make_object("Namespace", "default", labels={"team": "t1"}), make_object("Namespace", "other")]
    cluster = make_cluster(node_builders, pod_builders, objects)
    config = parse_config(raw_config)
    pod = incoming.build()
    cluster.default_priority(pod)
    snapshot = Snapshot(cluster, features=config.features, exclude_pod_uids=(pod.uid,))
    fast = Framework(config.profiles[0], registry, snapshot, fast_paths=True)
    run_cycle(fast, pod, config)  # builds the pod index and the term index
    node_names = [b.raw["metadata"]["name"] for b in node_builders]
    for i, extra in enumerate(data.draw(existing_pods(node_names))[:8]):
        extra.raw["metadata"]["name"] = f"assumed-{i}"
        snapshot.assume(extra.build(), data.draw(st.sampled_from(node_names)))
    bound = [p for p in cluster.pods if p.node_name and p.uid != pod.uid]
    for victim in data.draw(st.lists(st.sampled_from(bound), max_size=5, unique_by=lambda p: p.uid)) if bound else []:
        snapshot.forget(victim, victim.node_name)
    reference = Framework(config.profiles[0], registry, snapshot, fast_paths=False)
    assert run_cycle(fast, pod, config, details=True).to_dict() == run_cycle(reference, pod, config, details=True).to_dict()


class _RejectNamed(NodeVerdictFilter):
    """A verdict-only Filter: rejects the nodes the pod's ``reject`` label names (dot-separated)."""

    name = "RejectNamed"

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict | None:
        reject = pod.labels.get("reject")
        if reject is None:
            return None
        names = reject.split(".")
        return lambda ni: Status.unresolvable("named") if ni.name in names else None


@pytest.mark.parametrize(
    ("reject", "rejected"),
    [
        pytest.param(None, [], id="no-verdict-every-node-passes"),
        pytest.param("n1", ["n1"], id="one-node-rejected"),
        pytest.param("n0.n2", ["n0", "n2"], id="two-nodes-rejected"),
    ],
)
def test_one_verdict_gives_both_filter_paths(reject: str | None, rejected: list[str]) -> None:
    pl = _RejectNamed()
    builder = make_pod("p")
    pod = (builder.label("reject", reject) if reject else builder).build()
    nis = [node_info(make_node(f"n{i}")) for i in range(3)]
    per_node = [pl.filter(CycleState(), pod, ni) for ni in nis]
    batch = pl.filter_nodes(CycleState(), pod, nis)
    assert [ni.name for ni, st in zip(nis, per_node, strict=True) if not st.is_success()] == rejected
    assert [None if st.is_success() else (st.code, st.reasons) for st in per_node] == [
        None if st is None else (st.code, st.reasons) for st in batch
    ]


def test_the_framework_decides_each_plugins_path_once_when_built() -> None:
    """The Filter and Score plugins with batch methods are found when the Framework is built."""
    fw = Framework(default_config().profiles[0], registry, Snapshot(make_cluster([make_node("n0")], [], [])))
    batch_filters = {pl.name for pl, batch in fw.plugins.filter_paths if batch is not None}
    assert {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
            "PodTopologySpread", "InterPodAffinity"} <= batch_filters
    assert {p.plugin.name for p in fw.plugins.score_paths if p.score_nodes is not None} >= {"TaintToleration", "NodeAffinity"}
    assert {p.plugin.name for p in fw.plugins.score_paths if p.batch_ext is not None} >= {"TaintToleration", "PodTopologySpread"}


class _RejectNamedWhenLabelled(_RejectNamed):
    """The same verdict, with a guard: only nodes labelled ``judged`` can be rejected."""

    only_when = staticmethod(lambda ni: "judged" in ni.node.labels)


@pytest.mark.parametrize(
    ("judged", "rejected"),
    [
        pytest.param([], [], id="guard-false-everywhere-nothing-rejected"),
        pytest.param(["n1"], ["n1"], id="guarded-node-judged"),
        pytest.param(["n0", "n1", "n2"], ["n0", "n2"], id="every-node-judged"),
    ],
)
def test_a_guard_skips_the_verdict_on_both_paths(judged: list[str], rejected: list[str]) -> None:
    pl = _RejectNamedWhenLabelled()
    pod = make_pod("p").label("reject", "n0.n1.n2" if judged == ["n1"] else "n0.n2").build()
    nis = [node_info(make_node(f"n{i}").label("judged", "yes") if f"n{i}" in judged else make_node(f"n{i}")) for i in range(3)]
    per_node = [ni.name for ni in nis if not pl.filter(CycleState(), pod, ni).is_success()]
    batch = [ni.name for ni, st in zip(nis, pl.filter_nodes(CycleState(), pod, nis), strict=True) if st is not None]
    assert per_node == batch == rejected


@pytest.mark.parametrize("name", ["TaintToleration", "NodeUnschedulable"])
def test_an_in_tree_guard_never_hides_a_rejection(name: str) -> None:
    """A node whose guard is falsy (no taints, not cordoned) passes the verdict itself too."""
    entry = registry.get(name)
    assert entry is not None
    pl = entry.factory(None, SnapshotHandle())
    assert isinstance(pl, NodeVerdictFilter) and pl.only_when is not None
    plain = node_info(make_node("plain"))
    assert not pl.only_when(plain)
    verdict = pl.node_verdict(CycleState(), make_pod("p").build())
    assert verdict is None or verdict(plain) is None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_nearest_nodes_are_the_same_on_both_paths(scenario: Any) -> None:
    """``analyse_filters`` (every Filter plugin on every node, for ``explain pending``'s nearest nodes)
    runs each plugin over the whole node list when it can: the same rejections as node by node."""
    import functools

    from kschedctl.config import default_config
    from kschedctl.explain import nearest

    node_builders, pod_builders, incoming, _, _ = scenario
    cluster = make_cluster(node_builders, pod_builders, [make_object("Namespace", "default"), make_object("Namespace", "other")])
    pod = incoming.build()
    cluster.default_priority(pod)
    config = default_config()
    fast = nearest.analyse_filters(cluster, pod, config, registry)
    original = nearest.Framework
    try:
        nearest.Framework = functools.partial(original, fast_paths=False)  # type: ignore[misc]
        reference = nearest.analyse_filters(cluster, pod, config, registry)
    finally:
        nearest.Framework = original  # type: ignore[misc]
    assert fast == reference
