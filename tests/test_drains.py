"""``simulate --drain`` / ``--scale-down``: kubectl drain's eviction rules, the drain corpus, the command line.

``tests/drains/drain-*`` are the shared drain corpus (see its README): each names a conformance
scenario (``tests/conformance/<source>``), the drained nodes, the pods re-created and the pods
lost; ``expected-sequence.json`` holds the real v1.35.4 loop's placements of the post-drain state.
The corpus evicted as ``kubectl drain --ignore-daemonsets --delete-emptydir-data --force`` and
consulted no PodDisruptionBudget although some source clusters hold budgets, so it is replayed
with ``--disable-eviction`` (deletion, as kubectl's flag does: no budget is read). Replacement
names are arbitrary: the corpus is compared per controller, in eviction order.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.runner import run_scenario, scenario_config
from kschedctl.cli.main import app
from kschedctl.config import default_config
from kschedctl.kube.selectors import parse_selector_string
from kschedctl.snapshot.loader import load_cluster
from kschedctl.whatif.drain import (
    BLOCKED,
    EVICTED,
    REFUSED,
    STAYS,
    DrainFlags,
    budget_status,
    drained_cluster,
    filter_pod,
    plan_drain,
    run_drain,
    scale_down,
)
from tests.builders import make_cluster, make_node, make_object, make_pod

ROOT = Path(__file__).parent
DRAINS = sorted(d for d in (ROOT / "drains").iterdir() if d.is_dir())
DEMO = str(ROOT.parent / "fixtures" / "demo" / "cluster.yaml")
CORPUS_FLAGS = DrainFlags(delete_emptydir_data=True, force=True, disable_eviction=True)
NOW = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
runner = CliRunner()


def _drain_json(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "drain.json").read_text())
    return data


def _source(d: Path) -> str:
    return str(ROOT / "conformance" / _drain_json(d)["source"] / "cluster.yaml")


def _controller(raw: dict[str, Any]) -> str:
    ref = next(r for r in raw["metadata"]["ownerReferences"] if r.get("controller"))
    return f"{ref['kind']} {ref['name']}"


# --------------------------------------------------------------------------- the corpus


def test_corpus_is_present() -> None:
    assert len(DRAINS) == 30
    assert all((ROOT / "conformance" / _drain_json(d)["source"]).is_dir() for d in DRAINS)


@pytest.mark.parametrize("scenario", DRAINS, ids=[d.name for d in DRAINS])
def test_drain_lands_where_the_real_loop_did(scenario: Path) -> None:
    """From the source cluster: the same pods evicted, re-created and lost, each controller's replacements
    (in eviction order) on the reference's nodes, with its FitError, nomination and victims."""
    spec = _drain_json(scenario)
    result = run_drain(load_cluster([_source(scenario)]), scenario_config(scenario, None, None), spec["drained"],
                       CORPUS_FLAGS, now=NOW)
    assert [e.pod for e in result.lost] == spec["lost"]
    expected_pods = [p for p in yaml.safe_load_all((scenario / "pods.yaml").read_text()) if p]
    assert [_controller(p) for p in expected_pods] == [ln.controller for ln in result.landings]
    names = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": ln.pod
             for p, ln in zip(expected_pods, result.landings, strict=True)}
    assert result.simulation is not None
    actual = [p.to_dict() for p in result.simulation.placements]
    expected = json.loads((scenario / "expected-sequence.json").read_text())["placements"]
    assert [names.get(e["pod"], e["pod"]) for e in expected] == [a["pod"] for a in actual]
    for e, a in zip(expected, actual, strict=True):
        for key in ("node", "fitError", "nominatedNodeName"):
            assert e[key] == a[key], (e["pod"], key)
        assert sorted(names.get(v, v) for v in e["victims"]) == sorted(a["victims"]), e["pod"]


@pytest.mark.parametrize("scenario", DRAINS, ids=[d.name for d in DRAINS])
def test_replacements_and_cluster_are_the_corpus_own(scenario: Path) -> None:
    """The replacements are the evicted pods with a new identity (StatefulSet pods keep their name), and the
    post-drain cluster has the corpus' pods and cordoned nodes."""
    spec = _drain_json(scenario)
    source = load_cluster([_source(scenario)])
    plan = plan_drain(source, spec["drained"], CORPUS_FLAGS, NOW)
    expected_pods = [p for p in yaml.safe_load_all((scenario / "pods.yaml").read_text()) if p]
    for ours, theirs in zip(plan.recreated, expected_pods, strict=True):
        for raw in (ours, theirs):
            md = raw["metadata"]
            if _controller(raw).startswith("StatefulSet"):
                continue
            md.pop("name")
        for k in ("uid", "creationTimestamp"):
            ours["metadata"].pop(k), theirs["metadata"].pop(k)
        assert ours == theirs
    after = drained_cluster(source, spec["drained"], plan.evicted_keys)
    reference = load_cluster([str(scenario / "cluster.yaml")])
    assert sorted(p.key for p in after.pods) == sorted(p.key for p in reference.pods)
    assert [(n.name, n.unschedulable) for n in after.nodes] == [(n.name, n.unschedulable) for n in reference.nodes]


@pytest.mark.parametrize("scenario", DRAINS, ids=[d.name for d in DRAINS])
def test_post_drain_state_agrees_pod_by_pod(scenario: Path) -> None:
    """``simulate -f pods.yaml --snapshot cluster.yaml`` on the corpus' post-drain state (``check`` runs it so)."""
    result = run_scenario(scenario)
    assert result.error is None and result.passed, [str(d) for d in result.differences[:5]]


def test_budgets_do_not_decide_the_dev_corpus() -> None:
    """Consulting the budgets the source clusters hold blocks no eviction of the dev drains: --disable-eviction
    only makes the replay independent of them (a hidden drain may hold a budget that would block)."""
    for d in DRAINS:
        flags = DrainFlags(delete_emptydir_data=True, force=True)
        plan = plan_drain(load_cluster([_source(d)]), _drain_json(d)["drained"], flags, NOW)
        assert not [e for e in plan.evictions if e.action == BLOCKED], d.name


# --------------------------------------------------------------------------- kubectl drain's filters


def _ref(kind: str, name: str, api_version: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}


PLAIN = DrainFlags()
ALL = DrainFlags(delete_emptydir_data=True, force=True)
EMPTYDIR = {"name": "scratch", "emptyDir": {}}


@pytest.mark.parametrize(
    ("builder", "flags", "action", "reason"),
    [
        (make_pod("ds").owner("DaemonSet", "agent"), ALL, STAYS, "DaemonSet"),
        (make_pod("ds-other-group").set("metadata.ownerReferences", [_ref("DaemonSet", "agent", "x/v1")]),
         PLAIN, EVICTED, ""),
        (make_pod("mirror").annotation("kubernetes.io/config.mirror", "abc"), PLAIN, STAYS, "mirror"),
        (make_pod("static").set("metadata.ownerReferences", [_ref("Node", "n1", "v1")]), PLAIN, STAYS, "mirror"),
        (make_pod("mirror-ds").owner("DaemonSet", "agent").annotation("kubernetes.io/config.mirror", "x"), PLAIN, STAYS,
         "DaemonSet"),
        (make_pod("scratch").owner("ReplicaSet", "web-1").volume(EMPTYDIR), PLAIN, REFUSED, "--delete-emptydir-data"),
        (make_pod("scratch").owner("ReplicaSet", "web-1").volume(EMPTYDIR), DrainFlags(delete_emptydir_data=True),
         EVICTED, ""),
        (make_pod("bare"), PLAIN, REFUSED, "--force"),
        (make_pod("bare"), DrainFlags(force=True), EVICTED, ""),
        (make_pod("bare-scratch").volume(EMPTYDIR), DrainFlags(delete_emptydir_data=True), REFUSED, "--force"),
        (make_pod("bare-scratch").volume(EMPTYDIR), DrainFlags(force=True), REFUSED, "--delete-emptydir-data"),
        (make_pod("not-controller").owner("ReplicaSet", "web-1", controller=False), PLAIN, REFUSED, "--force"),
        (make_pod("web").owner("ReplicaSet", "web-1"), PLAIN, EVICTED, ""),
    ],
    ids=["daemonset", "daemonset-other-group", "mirror", "node-owned-mirror", "daemonset-before-mirror", "emptydir-refused",
         "emptydir-allowed", "unowned-refused", "unowned-forced", "unowned-needs-force-too",
         "emptydir-needs-its-flag-too", "owner-not-controller", "replicaset"],
)
def test_filters(builder: Any, flags: DrainFlags, action: str, reason: str) -> None:
    got_action, got_reason = filter_pod(builder.build(), flags)
    assert got_action == action
    assert reason in got_reason


# --------------------------------------------------------------------------- PodDisruptionBudgets


def _pdb(name: str, allowed: int, selector: dict[str, Any] | None = None, **status: Any) -> Any:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}} if selector is None else selector}
    spec.update(status.pop("spec", {}))
    meta_gen = status.pop("generation", None)
    obj = make_object("PodDisruptionBudget", name, "default", apiVersion="policy/v1", spec=spec,
                      status={"disruptionsAllowed": allowed, "currentHealthy": 3, "desiredHealthy": 3, **status})
    if meta_gen is not None:
        obj.raw["metadata"]["generation"] = meta_gen
    return obj


def _web(name: str, *, ready: bool | None = None) -> Any:
    b = make_pod(name).owner("ReplicaSet", "web-1").label("app", "web").node("n1").req(cpu="100m")
    b.set("status.phase", "Running")
    if ready is not None:
        b.set("status.conditions", [{"type": "Ready", "status": "True" if ready else "False"}])
    return b


def _plan(pods: list[Any], objects: list[Any], flags: DrainFlags = PLAIN) -> dict[str, tuple[str, str, int | None]]:
    cluster = make_cluster([make_node("n1").alloc(cpu="4", memory="8Gi"), make_node("n2").alloc(cpu="4", memory="8Gi")],
                           pods, objects)
    plan = plan_drain(cluster, ["n1"], flags, NOW)
    return {e.pod.split("/")[1]: (e.action, e.reason, e.block.disruptions_allowed if e.block else None)
            for e in plan.evictions}


@pytest.mark.parametrize(
    ("pods", "budgets", "flags", "expected"),
    [
        ([_web("a")], [_pdb("web", 0)], PLAIN, {"a": (BLOCKED, "needs 3 healthy pods and has 3", 0)}),
        ([_web("a"), _web("b")], [_pdb("web", 1)], PLAIN,
         {"a": (EVICTED, "", None), "b": (BLOCKED, "needs 3 healthy pods", 0)}),
        ([_web("a"), _web("b")], [_pdb("web", 2)], PLAIN, {"a": (EVICTED, "", None), "b": (EVICTED, "", None)}),
        ([_web("a")], [_pdb("web", 0, currentHealthy=4)], PLAIN,
         {"a": (BLOCKED, "does not allow evicting pods currently", 0)}),
        ([_web("a")], [_pdb("web", 0)], DrainFlags(disable_eviction=True), {"a": (EVICTED, "", None)}),
        ([_web("a")], [_pdb("web", 1), _pdb("all", 1, selector={})], PLAIN,
         {"a": (BLOCKED, "more than one PodDisruptionBudget", 1)}),
        ([_web("a")], [_pdb("nil", 0, selector={}), ], PLAIN, {"a": (BLOCKED, "needs 3", 0)}),
        ([_web("a")], [_pdb("other", 0, selector={"matchLabels": {"app": "db"}})], PLAIN, {"a": (EVICTED, "", None)}),
        ([_web("a", ready=False)], [_pdb("web", 0)], PLAIN, {"a": (EVICTED, "", None)}),
        ([_web("a", ready=False)], [_pdb("web", 0, currentHealthy=1)], PLAIN, {"a": (BLOCKED, "needs 3", 0)}),
        ([_web("a", ready=False)], [_pdb("web", 0, currentHealthy=1, spec={"unhealthyPodEvictionPolicy": "AlwaysAllow"})],
         PLAIN, {"a": (EVICTED, "", None)}),
        ([_web("a", ready=True)], [_pdb("web", 1, observedGeneration=1, generation=2)], PLAIN,
         {"a": (BLOCKED, "has not observed", 1)}),
        ([_web("a").set("status.phase", "Pending")], [_pdb("web", 0)], PLAIN, {"a": (EVICTED, "", None)}),
    ],
    ids=["allows-0", "allows-1-of-2", "allows-2", "unhealthy-budget-message", "disable-eviction", "two-budgets",
         "empty-selector-matches-all", "other-selector", "unready-budget-intact", "unready-budget-short",
         "unready-always-allow", "not-observed", "pending-pod"],
)
def test_budgets(pods: list[Any], budgets: list[Any], flags: DrainFlags, expected: dict[str, Any]) -> None:
    got = _plan(pods, budgets, flags)
    for name, (action, reason, allowed) in expected.items():
        assert got[name][0] == action, (name, got[name])
        assert reason in got[name][1]
        assert got[name][2] == allowed


def test_nil_selector_protects_nothing() -> None:
    pdb = _pdb("nil", 0)
    del pdb.raw["spec"]["selector"]
    assert _plan([_web("a")], [pdb])["a"][0] == EVICTED


# --------------------------------------------------------------------------- the run


def _cluster(*extra: Any, objects: tuple[Any, ...] = ()) -> Any:
    nodes = [make_node(n).alloc(cpu="2", memory="4Gi", pods="110").label("pool", "general") for n in ("n1", "n2", "n3")]
    return make_cluster(nodes, list(extra), list(objects))


# --------------------------------------------------------------------------- the drain as a loop


def _shop(*names: str, cpu: str = "500m") -> list[Any]:
    """Pods of the Deployment web (ReplicaSet web-1) on n1, ready."""
    return [make_pod(n).owner("ReplicaSet", "web-1").set("metadata.generateName", "web-1-").label("app", "web").node("n1")
            .req(cpu=cpu).set("status.phase", "Running").set("status.conditions", [{"type": "Ready", "status": "True"}])
            for n in names]


def _budget(spec: dict[str, Any], status: dict[str, Any] | None = None) -> Any:
    fields: dict[str, Any] = {"spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}
    if status is not None:
        fields["status"] = status
    return make_object("PodDisruptionBudget", "web-pdb", "default", apiVersion="policy/v1", **fields)


ONE_OF_THREE = {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}


def test_a_budget_of_one_lets_the_drain_through_in_three_rounds() -> None:
    """The real sequence: kubectl evicts web-a, web-b and web-c at once; the budget (minAvailable 2 of 3,
    disruptionsAllowed 1) lets web-a go and refuses the others (429). The ReplicaSet re-creates web-a, the
    scheduler places it on n2 (n1 is cordoned), it becomes ready, the disruption controller raises
    disruptionsAllowed to 1 again, and kubectl's retry 5 s later evicts web-b; then web-c the same way.
    All three leave, their replacements on n2, kubectl exits 0."""
    cluster = _cluster(*_shop("web-a", "web-b", "web-c"), objects=(_budget({"minAvailable": 2}, ONE_OF_THREE),))
    r = run_drain(cluster, default_config(), ["n1"], PLAIN, now=NOW)
    assert r.succeeded and not r.blocked
    assert r.plan.rounds == [["default/web-a"], ["default/web-b"], ["default/web-c"]]
    assert {ln.placement.node for ln in r.landings if ln.placement} <= {"n2", "n3"}
    d = r.to_dict()
    assert [x["round"] for x in d["rounds"]] == [1, 2, 3] and [p["round"] for p in d["pods"]] == [1, 2, 3]
    assert d["kubectl"] == "kubectl drain reports success (exit 0)"
    assert any("3 rounds (round 1: web-a; round 2: web-b; round 3: web-c)" in n for n in r.notes)
    assert any("not known from outside" in n for n in r.notes)


def test_max_unavailable_zero_blocks_at_once() -> None:
    """maxUnavailable: 0: desiredHealthy is every expected pod, disruptionsAllowed stays 0 whatever happens;
    kubectl retries forever and nothing leaves n1."""
    cluster = _cluster(*_shop("web-a", "web-b"),
                       objects=(_budget({"maxUnavailable": 0}, {"disruptionsAllowed": 0, "currentHealthy": 2,
                                                                "desiredHealthy": 2, "expectedPods": 2}),))
    r = run_drain(cluster, default_config(), ["n1"], PLAIN, now=NOW)
    assert [e.action for e in r.plan.evictions] == [BLOCKED, BLOCKED]
    assert r.plan.rounds == [[]]
    assert r.verdict() == "drain of n1 not possible: 2 eviction(s) blocked by PodDisruptionBudget default/web-pdb"
    assert r.kubectl_outcome().startswith("kubectl drain does not finish")


def test_a_budget_at_its_floor_blocks_when_the_replacement_cannot_be_placed() -> None:
    """minAvailable 2 of 3: web-a goes in round 1, but its replacement (1500m) fits on no other node; it
    stays Pending, so the budget has 2 healthy pods for 2 desired and refuses web-b and web-c for good."""
    fill = [make_pod(f"f{i}").owner("ReplicaSet", "f").node(n).req(cpu="1") for i, n in enumerate(("n2", "n3"))]
    cluster = _cluster(*_shop("web-a", "web-b", "web-c", cpu="600m"), *fill,
                       objects=(_budget({"minAvailable": 2}, ONE_OF_THREE),))
    cluster.pods[0].raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1500m"
    r = run_drain(cluster, default_config(), ["n1"], PLAIN, now=NOW)
    assert r.plan.rounds == [["default/web-a"]]
    assert [e.pod for e in r.blocked] == ["default/web-b", "default/web-c"]
    assert r.blocked[0].block is not None and r.blocked[0].block.disruptions_allowed == 0
    assert len(r.not_placed) == 1
    assert any("not known from outside" in n for n in r.notes)  # which pod went first decided which was left


def test_a_budget_without_status_is_computed() -> None:
    """No status (the disruption controller has not run, or the snapshot dropped it): computed as it would be,
    expectedPods from the Deployment's replicas (3) through the ReplicaSet it owns, maxUnavailable 1 ->
    desiredHealthy 2, 3 healthy -> disruptionsAllowed 1; the drain then runs its three rounds."""
    rs = make_object("ReplicaSet", "web-1", "default", apiVersion="apps/v1", spec={"replicas": 3})
    rs.raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}]
    deploy = make_object("Deployment", "web", "default", apiVersion="apps/v1", spec={"replicas": 3})
    cluster = _cluster(*_shop("web-a", "web-b", "web-c"), objects=(_budget({"maxUnavailable": 1}), rs, deploy))
    r = run_drain(cluster, default_config(), ["n1"], PLAIN, now=NOW)
    assert r.succeeded and len(r.plan.rounds) == 3
    assert r.to_dict()["computedBudgets"] == ["default/web-pdb"]
    assert any("has no status: computed" in n for n in r.notes)


def test_timeout_limits_the_rounds() -> None:
    """--timeout 5s: the first attempt and one retry fit; web-c is still refused when kubectl gives up."""
    cluster = _cluster(*_shop("web-a", "web-b", "web-c"), objects=(_budget({"minAvailable": 2}, ONE_OF_THREE),))
    r = run_drain(cluster, default_config(), ["n1"], DrainFlags(timeout=5), now=NOW)
    assert r.plan.rounds == [["default/web-a"], ["default/web-b"]] and r.timed_out
    assert [e.pod for e in r.blocked] == ["default/web-c"]
    assert r.kubectl_outcome().startswith("kubectl drain fails (exit 1) when --timeout 5s passes")


def test_kubectl_succeeds_while_replacements_stay_pending() -> None:
    """Draining n1 and n2, each holding a big pod (1800m) of a ReplicaSet: kubectl evicts both and exits 0
    (it waits for the evicted pods to go, not for their replacements); both replacements fit nowhere (n3 is
    half full) and stay Pending with a FitError."""
    cluster = _cluster(make_pod("big-1").owner("ReplicaSet", "big").node("n1").req(cpu="1800m"),
                       make_pod("big-2").owner("ReplicaSet", "big").node("n2").req(cpu="1800m"),
                       make_pod("f3").owner("ReplicaSet", "f").node("n3").req(cpu="1"))
    r = run_drain(cluster, default_config(), ["n1", "n2"], PLAIN, now=NOW)
    assert not r.refused and not r.blocked and len(r.not_placed) == 2
    assert r.kubectl_outcome() == ("kubectl drain reports success (exit 0); the cluster is left with 2 replacement(s) "
                                   "Pending (FitError below)")
    assert any(n.startswith("kubectl drain reports success (exit 0)") for n in r.notes)
    assert r.verdict() == "drain of n1, n2 not possible: 2 re-created pod(s) do not fit"


@pytest.mark.parametrize(
    ("spec", "pods", "healthy", "scale", "expected"),
    [
        ({"minAvailable": 2}, 3, 3, None, (3, 3, 2, 1)),
        ({"minAvailable": 2}, 3, 3, 5, (3, 3, 2, 1)),  # an integer minAvailable counts the pods, not the scale
        ({"minAvailable": 2}, 3, 1, None, (3, 1, 2, 0)),  # below the floor: 0, never negative
        ({"minAvailable": "50%"}, 3, 3, 3, (3, 3, 2, 1)),  # rounded up
        ({"minAvailable": "50%"}, 2, 2, 4, (4, 2, 2, 0)),
        ({"maxUnavailable": 1}, 3, 3, None, (3, 3, 2, 1)),
        ({"maxUnavailable": 0}, 3, 3, 3, (3, 3, 3, 0)),
        ({"maxUnavailable": "34%"}, 3, 3, 3, (3, 3, 1, 2)),  # 34% of 3 rounds up to 2
        ({"maxUnavailable": 5}, 3, 3, 3, (3, 3, 0, 3)),  # desiredHealthy floored at 0
        ({"maxUnavailable": 1}, 0, 0, 0, (0, 0, 0, 0)),  # nothing expected: nothing allowed
        ({}, 2, 2, None, (0, 2, 0, 0)),  # neither field: expectedPods 0
    ],
)
def test_budget_arithmetic(spec: dict[str, Any], pods: int, healthy: int, scale: int | None,
                           expected: tuple[int, int, int, int]) -> None:
    s = budget_status(spec, pods, healthy, scale)
    assert (s.expected_pods, s.current_healthy, s.desired_healthy, s.disruptions_allowed) == expected


def test_replacements_land_and_unowned_pods_are_lost() -> None:
    cluster = _cluster(
        make_pod("web-1-abcde").owner("ReplicaSet", "web-1").set("metadata.generateName", "web-1-").node("n1").req(cpu="1"),
        make_pod("db-0").owner("StatefulSet", "db").node("n1").req(cpu="1"),
        make_pod("agent-x").owner("DaemonSet", "agent").node("n1").req(cpu="100m"),
        make_pod("debug").node("n1"),
        make_pod("fill").owner("ReplicaSet", "fill").node("n2").req(cpu="1500m"),
    )
    r = run_drain(cluster, default_config(), ["n1"], DrainFlags(force=True), now=NOW)
    assert r.succeeded
    by_pod = {e.pod: e for e in r.plan.evictions}
    assert by_pod["default/agent-x"].action == STAYS
    assert by_pod["default/db-0"].recreated_as == "default/db-0"
    assert by_pod["default/web-1-abcde"].recreated_as.startswith("default/web-1-")  # type: ignore[union-attr]
    assert [e.pod for e in r.lost] == ["default/debug"]
    assert {ln.controller: ln.placement.node for ln in r.landings if ln.placement} == {
        "StatefulSet db": "n3", "ReplicaSet web-1": "n3"}
    assert r.verdict().startswith("drain possible: n1")
    created = [raw["metadata"]["creationTimestamp"] for raw in r.plan.recreated]
    assert created == ["2026-11-20T10:00:00Z", "2026-11-20T10:00:01Z"]  # eviction order: db-0, then web-1-abcde


def test_a_replacement_that_does_not_fit_fails_the_drain() -> None:
    cluster = _cluster(make_pod("big").owner("ReplicaSet", "big").node("n1").req(cpu="1800m"),
                       make_pod("f2").owner("ReplicaSet", "f").node("n2").req(cpu="1"),
                       make_pod("f3").owner("ReplicaSet", "f").node("n3").req(cpu="1"))
    r = run_drain(cluster, default_config(), ["n1"], PLAIN, now=NOW)
    assert not r.succeeded
    [ln] = r.not_placed
    assert ln.placement is not None and "Insufficient cpu" in str(ln.placement.fit_error)
    assert r.verdict() == "drain of n1 not possible: 1 re-created pod(s) do not fit"


def test_ties_are_reported() -> None:
    r = run_drain(_cluster(make_pod("w").owner("ReplicaSet", "w").node("n1").req(cpu="100m")), default_config(), ["n1"],
                  PLAIN, now=NOW)
    [ln] = r.landings
    assert ln.to_dict()["tiedWith"] == ["n3"] and ln.placement is not None and ln.placement.node == "n2"
    assert any("tie" in n for n in r.notes)


def test_a_refused_pod_keeps_every_pod_of_its_node() -> None:
    """kubectl drain evicts nothing from a node where it refuses a pod; other nodes are drained."""
    cluster = _cluster(make_pod("bare").node("n1"), make_pod("w1").owner("ReplicaSet", "w").node("n1"),
                       make_pod("w2").owner("ReplicaSet", "w").node("n2"))
    r = run_drain(cluster, default_config(), ["n1", "n2"], PLAIN, now=NOW)
    assert [(e.pod, e.action) for e in r.plan.evictions] == [
        ("default/bare", REFUSED), ("default/w1", STAYS), ("default/w2", EVICTED)]
    assert "evicts nothing" in r.plan.evictions[1].reason
    assert [ln.evicted for ln in r.landings] == ["default/w2"]
    assert r.verdict().startswith("drain of n1, n2 not possible: kubectl drain refuses 1 pod(s) (allowed by --force)")


def test_a_pod_being_deleted_is_evicted_and_recreated_like_the_others() -> None:
    pod = make_pod("w-1").owner("ReplicaSet", "w").node("n1").set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z")
    r = run_drain(_cluster(pod), default_config(), ["n1"], PLAIN, now=NOW)
    [e] = r.plan.evictions
    assert e.action == EVICTED and e.recreated_as is not None


def test_unknown_controller_kinds_are_not_recreated() -> None:
    pod = make_pod("x").set("metadata.ownerReferences", [_ref("Workflow", "wf", "argoproj.io/v1alpha1")]).node("n1")
    r = run_drain(_cluster(pod), default_config(), ["n1"], PLAIN, now=NOW)
    [e] = r.plan.evictions
    assert e.lost and "Workflow" in e.reason


def test_scale_down_takes_least_requested_first_and_stops() -> None:
    cluster = _cluster(make_pod("a").owner("ReplicaSet", "a").node("n1").req(cpu="1200m"),
                       make_pod("b").owner("ReplicaSet", "b").node("n2").req(cpu="200m"),
                       make_pod("c").owner("ReplicaSet", "c").node("n3").req(cpu="1"))
    r = scale_down(cluster, default_config(), parse_selector_string("pool=general"), PLAIN, now=NOW)
    assert [n for n, _ in r.candidates] == ["n2", "n3", "n1"]
    assert r.removable == ["n2"] and r.blocked_node == "n3"
    assert "1 of 3 node(s) of pool=general can be removed; the next, n3, cannot" in r.verdict()
    limited = scale_down(cluster, default_config(), parse_selector_string("pool=general"), PLAIN, count=1, now=NOW)
    assert limited.succeeded and limited.removable == ["n2"]


# --------------------------------------------------------------------------- the command line


def invoke(*args: str) -> Any:
    return runner.invoke(app, ["simulate", "--snapshot", DEMO, *args])


def test_cli_refused_then_forced() -> None:
    r = invoke("--drain", "general-a0")
    assert r.exit_code == 1, r.output
    assert "kubectl drain refuses 6 pod(s) (allowed by --force)" in r.stdout
    r = invoke("--drain", "general-a0", "--force", "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["succeeded"] and data["drained"] == ["general-a0"]
    [landing] = data["landings"]
    assert landing["controller"] == "ReplicaSet web-7d9f" and landing["node"]
    assert len(data["lost"]) == 6


def test_cli_reads_a_kubectl_drain_command_line() -> None:
    """The corpus' flags as kubectl spells them (``--ignore-daemonsets`` is implied), plus --disable-eviction."""
    r = invoke("--drain", "general-b0", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--disable-eviction",
               "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["flags"] == {"deleteEmptydirData": True, "force": True, "disableEviction": True}


def test_cli_selector_and_yaml() -> None:
    r = invoke("--drain-selector", "pool=gpu", "--force", "-o", "yaml")
    data = yaml.safe_load(r.stdout)
    assert data["drained"] == ["gpu-a0", "gpu-b0"]
    assert r.exit_code == (0 if data["succeeded"] else 1)


def test_cli_scale_down() -> None:
    r = invoke("--scale-down", "pool=memory", "--force", "-o", "json")
    data = json.loads(r.stdout)
    assert data["candidates"][0]["node"] == "memory-c0"
    assert r.exit_code == (0 if data["succeeded"] else 1)
    assert invoke("--scale-down", "pool=memory", "--force", "--count", "1").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drain", "nosuch"], 'node "nosuch" is not in the cluster'),
        (["--drain-selector", "pool=none"], "no node matches"),
        (["--drain", "general-a0", "-f", str(ROOT.parent / "fixtures" / "demo" / "cart.yaml")], "do not go with -f"),
        (["--force"], "go with --drain"),
        (["--ignore-daemonsets"], "go with --drain"),
        ([], "give the pods to place"),
        (["--drain", "general-a0", "--count", "2"], "--count goes with --scale-down"),
        (["--scale-down", "pool=general", "--drain", "general-a0"], "picks its own nodes"),
        (["--drain-selector", "pool in (a"], ""),
        (["--timeout", "5m"], "go with --drain"),
        (["--drain", "general-a0", "--timeout", "5x"], 'invalid --timeout: time: unknown unit "x"'),
        (["--drain-selector", ""], "--drain-selector is empty: an empty label selector would pick every node"),
        (["--scale-down", " "], "--scale-down is empty"),
    ],
    ids=["unknown-node", "selector-matches-nothing", "with-f", "force-alone", "ignore-daemonsets-alone", "nothing", "count", "scale-down-and-drain",
         "bad-selector", "timeout-alone", "bad-timeout", "empty-selector", "empty-scale-down"],
)
def test_cli_bad_input(args: list[str], message: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output


def _budget_snapshot(tmp_path: Path) -> str:
    web = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "web-1-aaaaa", "namespace": "default", "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}, "status": {"phase": "Running"}}
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
              "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}} for n in ("n1", "n2")]
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
           "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*nodes, web, pdb]))
    return str(path)


def test_cli_budget_blocks_unless_eviction_is_disabled(tmp_path: Path) -> None:
    snapshot = _budget_snapshot(tmp_path)
    r = runner.invoke(app, ["simulate", "--snapshot", snapshot, "--drain", "n1"])
    assert r.exit_code == 1, r.output
    assert "1 eviction(s) blocked by PodDisruptionBudget default/web" in r.stdout
    assert "default/web (allows 0 disruption(s)) blocks default/web-1-aaaaa" in r.stdout
    r = runner.invoke(app, ["simulate", "--snapshot", snapshot, "--drain", "n1", "-o", "json"])
    [block] = json.loads(r.stdout)["blockingBudgets"]
    assert block == {"pod": "default/web-1-aaaaa", "budget": "default/web", "disruptionsAllowed": 0,
                     "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}
    r = runner.invoke(app, ["simulate", "--snapshot", snapshot, "--drain", "n1", "--disable-eviction", "-o", "markdown"])
    assert r.exit_code == 0, r.output
    assert "drain possible: n1" in r.stdout and "| n2 " in r.stdout


def test_cli_reports_the_rounds(tmp_path: Path) -> None:
    """The shop case from the command line: three rounds in the table and in JSON; --timeout 5s cuts it to two."""
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"web-{n}", "namespace": "shop", "generateName": "web-7d9-", "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "controller": True, "uid": "u1"}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}} for n in "abc"]
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for n in ("n1", "n2")]
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb", "namespace": "shop"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}
    snap = tmp_path / "shop.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, pdb, *pods]}))
    r = runner.invoke(app, ["simulate", "--drain", "n1", "--snapshot", str(snap)])
    assert r.exit_code == 0, r.output
    assert "round 3: web-c" in r.stdout and "drain possible: n1" in r.stdout
    r = runner.invoke(app, ["simulate", "--drain", "n1", "--snapshot", str(snap), "--timeout", "5s", "-o", "json"])
    assert r.exit_code == 1, r.output
    d = json.loads(r.stdout)
    assert [x["evicted"] for x in d["rounds"]] == [["shop/web-a"], ["shop/web-b"]] and d["timeoutSeconds"] == 5.0
