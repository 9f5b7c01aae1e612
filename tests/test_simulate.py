"""``kschedctl simulate``: successive cycles that see earlier placements, workload expansion,
preemption, the node rotation between cycles, and the command line on the demo cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import default_config
from kschedctl.explain.cycle import explain_pod, run_cycle
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.plugins.podtopologyspread.common import default_selector
from kschedctl.snapshot.loader import load_cluster, parse_documents
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.placements import REPORT, RunOptions
from kschedctl.whatif.simulate import Simulator, simulate_max
from kschedctl.whatif.workloads import PodFactory, extend_cluster, parse_manifests
from tests.builders import make_cluster, make_node, make_object, make_pod
from tests.simulation import simulate_pods

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CART = str(ROOT / "fixtures" / "demo" / "cart.yaml")
runner = CliRunner()
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def pods_of(*builders: Any) -> list[tuple[Pod, str | None]]:
    return [(b.build(), None) for b in builders]


# --------------------------------------------------------------------------- placements see each other


def test_spread_constraint_alternates_zones() -> None:
    # a1 is the emptiest, so LeastAllocated picks it first; maxSkew 1 then forces the other zones.
    cluster = make_cluster([
        make_node("a1").zone("za").alloc(cpu="8", memory="16Gi", pods="110"),
        make_node("b1").zone("zb").alloc(cpu="4", memory="16Gi", pods="110"),
        make_node("c1").zone("zc").alloc(cpu="6", memory="16Gi", pods="110"),
    ])
    pods = pods_of(*[
        make_pod(f"web-{i}").label("app", "web").req(cpu="1").spread(1, ZONE, match_labels={"app": "web"})
        for i in range(6)
    ])
    r = simulate_pods(cluster, default_config(), pods)
    assert [p.node for p in r.placements] == ["a1", "c1", "b1", "a1", "c1", "b1"]
    assert r.first_failure is None
    assert {n.node: n.pods_after - n.pods_before for n in r.nodes} == {"a1": 2, "b1": 2, "c1": 2}
    assert all(n.requested_after["cpu"] - n.requested_before["cpu"] == 2000 for n in r.nodes)


def test_anti_affinity_one_per_node_then_fit_error() -> None:
    cluster = make_cluster([make_node(f"n{i}").zone(f"z{i}") for i in range(3)])
    pods = pods_of(*[
        make_pod(f"db-{i}").label("app", "db").req(cpu="100m").pod_affinity("required", HOST, {"app": "db"}, anti=True)
        for i in range(4)
    ])
    r = simulate_pods(cluster, default_config(), pods)
    assert [p.node for p in r.placements[:3]] == ["n0", "n1", "n2"]
    last = r.placements[3]
    assert last.outcome == "unschedulable" and r.first_failure is last
    assert last.fit_error == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    assert last.preemption is None


def test_max_places_copies_until_resources_run_out() -> None:
    cluster = make_cluster([make_node("n1").alloc(cpu="2", memory="4Gi", pods="110"),
                            make_node("n2").alloc(cpu="1", memory="4Gi", pods="110")])
    manifests = parse_manifests(parse_documents("pod.yaml", yaml.safe_dump(make_pod("w").req(cpu="500m").raw)), cluster)
    w = manifests.workloads[0]
    w.as_template = True
    factory = PodFactory(manifests, cluster)
    r = simulate_max(factory.cluster, default_config(), factory.pods(w, None), workload=w.display)
    assert len(r.placed) == 6
    assert [p.pod for p in r.placed] == [f"default/w-{i}" for i in range(6)]
    assert r.first_failure is not None and r.first_failure.pod == "default/w-6"
    assert r.first_failure.fit_error is not None
    assert r.first_failure.fit_error.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert r.stop_reason == "the first copy that does not fit"
    limited = simulate_max(factory.cluster, default_config(), PodFactory(manifests, cluster).pods(w, None), limit=2)
    assert len(limited.placed) == 2 and limited.first_failure is None
    assert limited.stop_reason == "limit of 2 pods reached"


def test_queue_order_is_priority_then_creation_time_then_input_order() -> None:
    cluster = make_cluster([make_node("n1")])
    pods = pods_of(
        make_pod("low").priority(0).created("2026-01-01T00:00:00Z"),
        make_pod("high-new").priority(10).created("2026-01-03T00:00:00Z"),
        make_pod("mid").priority(5),
        make_pod("high-old").priority(10).created("2026-01-02T00:00:00Z"),
        make_pod("low-twin").priority(0).created("2026-01-01T00:00:00Z"),
    )
    r = simulate_pods(cluster, default_config(), pods)
    assert [p.pod for p in r.placements] == [
        "default/high-old", "default/high-new", "default/mid", "default/low", "default/low-twin"
    ]
    assert [p.order for p in r.placements] == [1, 2, 3, 4, 5]


def test_simulation_agrees_with_explain_on_the_accumulated_cluster() -> None:
    """Placing pod i after pods 0..i-1 is what explain says once those pods are bound in the snapshot."""
    cluster = load_cluster([DEMO])
    manifests = parse_manifests(parse_documents(CART, Path(CART).read_text()), cluster)
    factory = PodFactory(manifests, cluster)
    pods = list(factory.pods(manifests.workloads[0], 8))
    raws = [dict(p.raw) for p in pods]
    cfg = default_config()
    r = simulate_pods(factory.cluster, cfg, [(p, "cart") for p in pods], options=RunOptions(pending=False))
    assert len(r.placed) == 8
    for i, placement in enumerate(r.placements):
        accumulated = extend_cluster(factory.cluster, [], always_copy=True)
        for raw, earlier in zip(raws[:i], r.placements[:i], strict=True):
            accumulated.add_pod(Pod.from_raw({**raw, "spec": {**raw["spec"], "nodeName": earlier.node}}))
        trace = explain_pod(accumulated, Pod.from_raw(raws[i]), cfg)
        assert placement.node in trace.candidates, i
        assert placement.score == trace.max_score
        assert placement.feasible == len(trace.feasible_nodes)


def test_a_fresh_cycle_state_per_pod_and_one_framework_per_profile() -> None:
    cluster = make_cluster([make_node("n1"), make_node("n2")])
    sim = Simulator(cluster, default_config())
    sim.schedule_one(make_pod("a").req(cpu="1").build(), 1)
    fw = sim.frameworks["default-scheduler"]
    sim.schedule_one(make_pod("b").req(cpu="1").build(), 2)
    assert sim.frameworks == {"default-scheduler": fw}
    assert sim.cycles == 2
    ignored = sim.schedule_one(make_pod("c").scheduler("other").build(), 3)
    assert ignored.outcome == "ignored"
    assert "other" in ignored.notes[0]


def test_filter_starts_where_the_previous_cycle_stopped() -> None:
    # 120 nodes: numFeasibleNodesToFind is 100, so a cycle processes 100 nodes and the next one
    # starts at node 100 of the node-tree order.
    cluster = make_cluster([make_node(f"n{i:03d}") for i in range(120)])
    sim = Simulator(cluster, default_config())
    sim.schedule_one(make_pod("a").build(), 1)
    assert sim.start_index == 100
    fw = sim.frameworks["default-scheduler"]
    trace = run_cycle(fw, make_pod("b").build(), default_config(), start_index=sim.start_index)
    order = [ni.name for ni in sim.snapshot.node_info_list]
    assert trace.evaluated_order[:3] == order[100:103]
    assert trace.evaluated_order[20] == order[0]
    assert trace.processed_nodes == 100
    # explain (start index 0) is unchanged
    assert run_cycle(fw, make_pod("c").build(), default_config()).evaluated_order[0] == order[0]


# --------------------------------------------------------------------------- Snapshot.assume / forget


def test_assume_and_forget_keep_the_lists_plugins_read() -> None:
    cluster = make_cluster([make_node("n1"), make_node("n2")])
    snap = Snapshot(cluster)
    pod = make_pod("db").pvc("data").pod_affinity("required", HOST, {"app": "db"}, anti=True).build()
    snap.assume(pod, "n1")
    ni = snap.get("n1")
    assert ni is not None
    assert snap.is_pvc_used_by_pods("default/data")
    assert ni.pvc_ref_counts == {"default/data": 1}
    assert snap.have_pods_with_required_anti_affinity_list == [ni]
    assert snap.have_pods_with_affinity_list == [ni]
    assert snap.forget(pod, "n1")
    assert not snap.is_pvc_used_by_pods("default/data")
    assert snap.have_pods_with_required_anti_affinity_list == []
    assert snap.have_pods_with_affinity_list == []
    assert len(ni.pods) == 0 and ni.requested.milli_cpu == 0
    assert not snap.forget(pod, "n1")


def test_forget_keeps_a_claim_another_pod_still_uses() -> None:
    snap = Snapshot(make_cluster([make_node("n1"), make_node("n2")]))
    a = make_pod("a").pvc("shared").build()
    b = make_pod("b").pvc("shared").build()
    snap.assume(a, "n1")
    snap.assume(b, "n2")
    snap.forget(a, "n1")
    assert snap.is_pvc_used_by_pods("default/shared")


# --------------------------------------------------------------------------- preemption


def _preemption_cluster() -> Any:
    return make_cluster(
        [make_node("n1").alloc(cpu="4", memory="8Gi", pods="110")],
        [make_pod("low").node("n1").req(cpu="3").priority(0)],
    )


def test_preemption_report_only_changes_nothing() -> None:
    r = simulate_pods(
        _preemption_cluster(),
        default_config(),
        pods_of(make_pod("high").req(cpu="2").priority(100)),
        options=RunOptions(preemption=REPORT),
    )
    p = r.placements[0]
    assert p.outcome == "unschedulable"
    assert p.preemption is not None
    assert (p.preemption.nominated_node, p.preemption.victims, p.preemption.applied) == ("n1", ["default/low"], False)
    assert r.victims == []
    assert r.nodes == []


def test_preemption_deletes_victims_and_nominates_the_pod_without_retrying_it() -> None:
    r = simulate_pods(_preemption_cluster(), default_config(), pods_of(make_pod("high").req(cpu="2").priority(100)))
    (p,) = r.placements
    assert (p.outcome, p.node, p.nominated_node_name) == ("unschedulable", None, "n1")
    assert p.preemption is not None and p.preemption.applied
    assert p.fit_error == "0/1 nodes are available: 1 Insufficient cpu."
    assert r.victims == ["default/low"]
    (n,) = r.nodes
    assert (n.added, n.removed, n.pods_before, n.pods_after) == ([], ["default/low"], 1, 0)
    assert r.cycles == 1
    assert r.to_dict()["summary"]["nominated"] == 1


def test_later_pods_see_the_victims_gone_and_the_nominated_pod_on_its_node() -> None:
    # "high" preempts "low" (3 cpu) on n1 and is nominated there with 2 cpu. A later pod of lower
    # (or equal) priority counts the nominated pod: 2 of the node's 4 cpu are left for it.
    def run(prio: int, cpu: str) -> Any:
        pods = pods_of(
            make_pod("high").req(cpu="2").priority(100).created("2026-01-01T00:00:00Z"),
            make_pod("later").req(cpu=cpu).priority(prio).created("2026-01-01T00:00:01Z"),
        )
        return simulate_pods(_preemption_cluster(), default_config(), pods).placements[-1]

    assert run(50, "2").node == "n1"
    assert run(50, "3").outcome == "unschedulable"
    assert run(100, "3").outcome == "unschedulable"


def test_retry_nominated_schedules_nominated_pods_after_the_run() -> None:
    r = simulate_pods(
        _preemption_cluster(),
        default_config(),
        pods_of(make_pod("high").req(cpu="2").priority(100)),
        options=RunOptions(retry_nominated=True),
    )
    first, second = r.placements
    assert (first.outcome, first.attempt, first.nominated_node_name) == ("unschedulable", 1, "n1")
    assert (second.outcome, second.node, second.attempt) == ("scheduled", "n1", 2)
    assert r.placed == [second] and r.not_placed == []
    assert r.cycles == 2
    (n,) = r.nodes
    assert (n.added, n.removed) == (["default/high"], ["default/low"])
    assert (n.requested_before["cpu"], n.requested_after["cpu"]) == (3000, 2000)


def test_preemption_policy_never_does_not_preempt() -> None:
    r = simulate_pods(
        _preemption_cluster(),
        default_config(),
        pods_of(make_pod("high").req(cpu="2").priority(100, preemption_policy="Never")),
    )
    assert r.placements[0].outcome == "unschedulable"
    assert r.placements[0].preemption is None
    assert r.victims == []


# --------------------------------------------------------------------------- workload expansion


def _manifests(text: str, cluster: Any) -> Any:
    return parse_manifests(parse_documents("w.yaml", text), cluster)


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {team: a}}
    spec:
      priorityClassName: important
      containers: [{name: c, image: web, resources: {limits: {cpu: 500m, memory: 1Gi}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
"""


def test_deployment_pods_are_owned_by_a_synthetic_replicaset() -> None:
    cluster = make_cluster(
        [make_node("n1")],
        objects=[make_object("PriorityClass", "important", value=1000)],
    )
    m = _manifests(DEPLOYMENT, cluster)
    assert [o.kind for o in m.objects] == ["Service"]
    assert m.notes == ["skipped 1 ConfigMap object(s) of the pod file: not a workload and not read by the scheduler"]
    factory = PodFactory(m, cluster)
    pods = list(factory.pods(m.workloads[0], 3))
    assert [p.name for p in pods] == ["web-0", "web-1", "web-2"]
    rs = m.workloads[0].owner
    assert rs is not None and rs.kind == "ReplicaSet"
    h = pods[0].labels["pod-template-hash"]
    assert rs.name == f"web-{h}"
    assert factory.cluster.get("ReplicaSet", "shop", rs.name) is rs
    assert factory.cluster.get("Service", "shop", "web") is not None
    assert cluster.get("ReplicaSet", "shop", rs.name) is None  # the input cluster is untouched
    p = pods[0]
    assert p.namespace == "shop" and p.labels["app"] == "web"
    assert p.meta.annotations == {"team": "a"}
    assert p.meta.controller_ref() == {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs.name, "uid": rs.meta.uid,
        "controller": True, "blockOwnerDeletion": True,
    }
    assert p.priority == 1000  # PriorityClass admission
    assert p.containers[0].requests["cpu"] == p.containers[0].limits["cpu"]  # requests defaulted from limits
    assert len({q.uid for q in pods}) == 3
    # default topology spreading finds the siblings through Service and ReplicaSet
    assert default_selector(p, factory.cluster).matches(pods[1].labels)
    assert not default_selector(p, factory.cluster).empty


STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: db}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_statefulset_ordinals_claims_and_existing_pods() -> None:
    sc = make_object("StorageClass", "fast", provisioner="x")
    sc.meta.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    cluster = make_cluster([make_node("n1")], [make_pod("db-0").node("n1")], [sc])
    m = _manifests(STATEFULSET, cluster)
    factory = PodFactory(m, cluster)
    pods = list(factory.pods(m.workloads[0], m.workloads[0].replicas))
    assert [p.name for p in pods] == ["db-1", "db-2", "db-3"]  # db-0 exists already
    p = pods[0]
    assert p.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert p.labels["apps.kubernetes.io/pod-index"] == "1"
    assert p.meta.controller_ref() is not None and p.meta.controller_ref()["kind"] == "StatefulSet"  # type: ignore[index]
    assert p.volumes == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}]
    pvc = factory.cluster.get("PersistentVolumeClaim", "default", "data-db-1")
    assert pvc is not None
    assert pvc.spec["storageClassName"] == "fast" and pvc.spec["volumeMode"] == "Filesystem"
    assert pvc.status == {"phase": "Pending"}
    assert factory.cluster.get("StatefulSet", "default", "db") is not None


def test_job_parallelism_and_labels() -> None:
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: etl, uid: job-uid}
spec:
  parallelism: 4
  completions: 2
  completionMode: Indexed
  template:
    spec: {containers: [{name: c, image: etl}], restartPolicy: Never}
"""
    cluster = make_cluster([make_node("n1")])
    m = _manifests(job, cluster)
    w = m.workloads[0]
    assert w.replicas == 2
    pods = list(PodFactory(m, cluster).pods(w, w.replicas))
    assert [p.name for p in pods] == ["etl-0", "etl-1"]
    assert pods[1].labels == {
        "batch.kubernetes.io/controller-uid": "job-uid",
        "batch.kubernetes.io/job-name": "etl",
        "controller-uid": "job-uid",
        "job-name": "etl",
        "batch.kubernetes.io/job-completion-index": "1",
    }
    assert pods[0].meta.controller_ref() == {
        "apiVersion": "batch/v1", "kind": "Job", "name": "etl", "uid": "job-uid", "controller": True,
        "blockOwnerDeletion": True,
    }


def test_bare_pod_is_itself_or_a_template() -> None:
    cluster = make_cluster([make_node("n1")])
    text = yaml.safe_dump(make_pod("solo").label("app", "solo").raw)
    m = _manifests(text, cluster)
    assert [p.name for p in PodFactory(m, cluster).pods(m.workloads[0], 5)] == ["solo"]
    m.workloads[0].as_template = True
    copies = list(PodFactory(m, cluster).pods(m.workloads[0], 2))
    assert [p.name for p in copies] == ["solo-0", "solo-1"]
    assert copies[0].labels == {"app": "solo"}
    assert copies[0].uid != copies[1].uid


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1, selector: {matchLabels: {a: b}}}\n",
            "Deployment d: spec.template: Required value",
        ),
        (
            "kind: ReplicaSet\nmetadata: {name: r}\nspec: {replicas: -1, template: {spec: {}}}\n",
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("kind: ConfigMap\nmetadata: {name: c}\n", "no pod or workload found"),
    ],
)
def test_bad_workloads(text: str, message: str) -> None:
    from kschedctl.errors import InputError

    with pytest.raises(InputError, match=message):
        _manifests(text, make_cluster([make_node("n1")]))


# --------------------------------------------------------------------------- command line


def _zone(node: str) -> str:
    return node.split("-")[1][0]  # general-a0 -> a


def test_cli_deployment_on_the_demo_cluster() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    nodes = [p["node"] for p in data["placements"]]
    assert nodes == ["memory-b0", "memory-a0", "general-c0", "general-b1", "general-a0", "general-c1"]
    assert len({_zone(n) for n in nodes[:3]}) == 3 and len({_zone(n) for n in nodes[3:]}) == 3
    assert [p["pod"] for p in data["placements"]] == [f"shop/cart-{i}" for i in range(6)]
    assert data["summary"] == {"pods": 6, "placed": 6, "notPlaced": 0, "notTried": 0, "nominated": 0, "victims": 0,
                               "batched": 0, "capped": False, "stopReason": "every pod was tried once, in queue order"}
    assert {n["node"] for n in data["nodes"]} == set(nodes)
    assert data["timing"]["cycles"] == 6


def test_cli_first_pod_that_does_not_fit_exits_1() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "--replicas", "9")
    assert r.exit_code == 1, r.output
    assert "8 scheduled, 1 not scheduled" in r.output
    assert "First pod that does not fit: shop/cart-8 (unschedulable)" in r.output
    assert "0/12 nodes are available:" in r.output
    assert "Nodes changed by the run" in r.output


def test_cli_max_counts_copies() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--max", "-o", "yaml")
    assert r.exit_code == 0, r.output
    data = yaml.safe_load(r.output)
    assert data["mode"] == "max"
    # the snapshot's pending pods go first (one preempts, one is placed): 7 copies fit after them
    assert data["summary"]["placed"] == 7
    assert data["firstFailure"]["pod"] == "shop/cart-7"
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--max")
    assert "7 copies of Deployment shop/cart fit on 12 nodes; copy 8 does not fit" in r.output
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--max", "--no-pending")
    assert "8 copies of Deployment shop/cart fit on 12 nodes; copy 9 does not fit" in r.output
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--max", "--limit", "3", "-o", "json")
    assert json.loads(r.output)["summary"]["stopReason"] == "limit of 3 pods reached"


def test_cli_preemption_on_the_demo_cluster(tmp_path: Path) -> None:
    f = tmp_path / "checkout.yaml"
    f.write_text(yaml.safe_dump(
        make_pod("checkout", "shop").label("app", "checkout").priority_class("business-critical")
        .req(cpu="6", memory="40Gi").raw
    ))
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "--replicas", "4", "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    last = data["placements"][-1]
    assert (last["outcome"], last["nominatedNodeName"], last["victims"]) == ("unschedulable", "memory-a0", ["batch/etl-23"])
    assert last["preemption"] == {"nominatedNode": "memory-a0", "victims": ["batch/etl-23"], "applied": True}
    assert data["summary"]["victims"] == 1 and data["summary"]["nominated"] == 1
    node = next(n for n in data["nodes"] if n["node"] == "memory-a0")
    assert node["removed"] == ["batch/etl-23"]
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "--replicas", "4", "--report-preemption", "-o", "json")
    assert r.exit_code == 1
    last = json.loads(r.output)["placements"][-1]
    assert last["preemption"] == {"nominatedNode": "memory-a0", "victims": ["batch/etl-23"], "applied": False}
    assert json.loads(r.output)["summary"]["victims"] == 0
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "--replicas", "4", "--retry-nominated", "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [(p["node"], p["attempt"]) for p in data["placements"]] == [
        ("memory-b0", 1), ("memory-a0", 1), ("memory-b0", 1), (None, 1), ("memory-a0", 2)
    ]
    assert data["summary"]["placed"] == 4 and data["summary"]["victims"] == 1
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "--replicas", "4")
    assert "preempted etl-23 on memory-a0; nominated to memory-a0, not retried" in r.output
    # the old flag still works: preemption is applied anyway, and it now means --retry-nominated
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "--replicas", "4", "--preemption", "-o", "json")
    assert r.exit_code == 0, r.output
    assert any("--preemption is deprecated" in n for n in json.loads(r.output)["notes"])


def test_cli_markdown() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "-o", "markdown")
    assert r.exit_code == 0
    assert r.output.startswith("### kschedctl simulate: 6 pods on 12 nodes, in queue order: 6 scheduled, 0 not scheduled")
    assert "| node " in r.output and "pods placed in" in r.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max", "--replicas", "2"], "--max and --replicas do not go together"),
        (["--limit", "2"], "--limit goes with --max"),
        (["--replicas", "0"], "the workloads ask for no pods"),
        (["--report-preemption", "--retry-nominated"], "nothing to retry"),
        (["--max", "--retry-nominated"], "--retry-nominated does not apply"),
    ],
)
def test_cli_usage_errors(extra: list[str], message: str) -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, *extra)
    assert r.exit_code == 2
    assert message in r.output


def test_cli_max_needs_one_template(tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text(yaml.safe_dump_all([make_pod("a").raw, make_pod("b").raw]))
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--max")
    assert r.exit_code == 2
    assert "--max needs exactly one pod or workload template, the files hold 2" in r.output


def test_cli_file_without_workloads(tmp_path: Path) -> None:
    f = tmp_path / "cm.yaml"
    f.write_text("kind: ConfigMap\nmetadata: {name: c}\n")
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO)
    assert r.exit_code == 2
    assert f"{f}: no pod or workload found" in r.output


def test_a_claim_left_unbound_by_an_earlier_pod_is_noted() -> None:
    sc = make_object("StorageClass", "wffc", provisioner="x", volumeBindingMode="WaitForFirstConsumer")
    pvc = make_object("PersistentVolumeClaim", "shared", "default",
                      spec={"storageClassName": "wffc", "accessModes": ["ReadWriteMany"],
                            "resources": {"requests": {"storage": "1Gi"}}},
                      status={"phase": "Pending"})
    cluster = make_cluster([make_node("n1")], objects=[sc, pvc])
    one = simulate_pods(cluster, default_config(), pods_of(make_pod("a").pvc("shared")))
    assert one.notes == []
    two = simulate_pods(cluster, default_config(), pods_of(make_pod("a").pvc("shared"), make_pod("b").pvc("shared")))
    assert len(two.notes) == 1 and "dynamic provisioning for placed pods" in two.notes[0]


def test_table_output_keeps_square_brackets() -> None:
    from rich.console import Console

    from kschedctl.render.simulate import render_simulation_table
    from kschedctl.whatif.placements import Placement, SimulationResult

    r = SimulationResult("pods", 3)
    r.placements.append(Placement(1, "default/p", None, "default-scheduler", "unschedulable",
                                  fit_error="0/3 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity]."))
    console = Console(record=True, width=300)
    render_simulation_table(r.to_dict(), console)
    assert "didn't satisfy plugin(s) [NodeAffinity]." in console.export_text()


def test_whatif_core_has_no_io_or_presentation() -> None:
    import ast

    forbidden = ("typer", "rich", "kschedctl.cli", "kschedctl.render", "kschedctl.snapshot.live")
    for path in sorted((ROOT / "kschedctl" / "whatif").glob("*.py")):
        tree = ast.parse(path.read_text())
        runtime = [n for n in tree.body if not (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))]
        names: set[str] = set()
        for node in runtime:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import):
                    names.update(a.name for a in sub.names)
                elif isinstance(sub, ast.ImportFrom) and sub.module:
                    names.add(sub.module)
        bad = {m for m in names if any(m == f or m.startswith(f + ".") for f in forbidden)}
        assert not bad, f"{path.name} imports {bad}"
        assert "open(" not in path.read_text(), path.name


def _local_pv(name: str, node: str, size: str = "10Gi") -> Any:
    return make_object(
        "PersistentVolume",
        name,
        spec={
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {
                "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": HOST, "operator": "In", "values": [node]}]}]}
            },
        },
        status={"phase": "Available"},
    )


def test_statefulset_claims_bind_distinct_local_volumes() -> None:
    """A placed pod's claim binds its PV before the next cycle: no two replicas take the same volume."""
    local = make_object(
        "StorageClass", "local", provisioner="kubernetes.io/no-provisioner", volumeBindingMode="WaitForFirstConsumer"
    )
    local.meta.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    cluster = make_cluster(
        [make_node("n1"), make_node("n2")],
        [],
        [local, _local_pv("pv-n1", "n1"), _local_pv("pv-n2", "n2")],
    )
    m = _manifests(STATEFULSET, cluster)
    factory = PodFactory(m, cluster)
    pods = [(p, "StatefulSet default/db") for p in factory.pods(m.workloads[0], 3)]
    r = simulate_pods(factory.cluster, default_config(), pods)
    placed = [p.node for p in r.placements]
    assert sorted(n for n in placed[:2] if n) == ["n1", "n2"]
    assert placed[2] is None
    assert r.first_failure is not None and "didn't find available persistent volumes to bind" in (
        r.first_failure.fit_error or ""
    )
    # the caller's cluster is not modified
    pv = factory.cluster.get("PersistentVolume", "", "pv-n1")
    assert pv is not None and "claimRef" not in pv.spec


# --------------------------------------------------------------------------- OpportunisticBatching

LIST_DEFAULTING: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 1,
    "profiles": [{"schedulerName": "default-scheduler",
                  "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}],
}


def _list_config(**extra: Any) -> Any:
    from kschedctl.config import parse_config

    return parse_config({**LIST_DEFAULTING, **extra})


def _one_per_node(n: int = 4) -> Any:
    # room for one 3-cpu pod per node; different memory, so scores differ
    return make_cluster([make_node(f"n{i}").alloc(cpu="4", memory=f"{8 * (i + 1)}Gi", pods="110") for i in range(n)])


def _batch(cfg: Any = None, **kw: Any) -> Any:
    from kschedctl.framework.batch import OpportunisticBatch
    from kschedctl.framework.runtime import Framework
    from kschedctl.plugins import in_tree_registry

    cfg = cfg or _list_config()
    fw = Framework(cfg.profiles[0], in_tree_registry(), Snapshot(make_cluster([make_node("n1")])))
    return OpportunisticBatch(fw, **kw)


def test_sorted_scored_nodes_pop_as_go_heap() -> None:
    from kschedctl.framework.batch import SortedScoredNodes

    totals = {"a": 5, "b": 9, "c": 7, "d": 1, "e": 7}
    h = SortedScoredNodes(["a", "b", "c", "d", "e"], totals)
    assert [h.pop() for _ in range(5)] == ["b", "e", "c", "a", "d"]  # c and e tie: the heap's shape decides
    # equal totals come out in the order Go's heap leaves them, not in list order
    tie = SortedScoredNodes(["a", "b", "c", "d"], dict.fromkeys("abcd", 1))
    assert [tie.pop() for _ in range(4)] == ["a", "d", "c", "b"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (make_pod("x").toleration("k1", "v").toleration("k2", "v"), make_pod("y").toleration("k2", "v").toleration("k1", "v"), True),
        (make_pod("x").volume({"name": "c1", "configMap": {"name": "a"}}), make_pod("y").volume({"name": "s", "secret": {"secretName": "b"}}), True),
        (make_pod("x").volume({"name": "a", "emptyDir": {}}), make_pod("y").volume({"name": "b", "emptyDir": {}}), True),
        (make_pod("x").volume({"name": "a", "emptyDir": {}}), make_pod("y"), False),
        (make_pod("x").image("app:1"), make_pod("y").image("app:2"), False),
        (make_pod("x").image("app"), make_pod("y").image("app:latest"), True),
        (make_pod("x").req(cpu="1"), make_pod("y").req(cpu="1000m"), True),
        (make_pod("x").req(cpu="1"), make_pod("y").req(cpu="2"), False),
        (make_pod("x").label("app", "a"), make_pod("y").label("app", "b"), False),
        (make_pod("x").node_selector(disk="ssd"), make_pod("y"), False),
        (make_pod("x").host_port(80).host_port(81), make_pod("y").host_port(81).host_port(80), True),
        (make_pod("x").scheduler("default-scheduler"), make_pod("y"), True),
    ],
)
def test_signatures_compare_as_upstream_encodes_them(a: Any, b: Any, same: bool) -> None:
    batch = _batch()
    sa, why_a = batch.sign_pod(a.build())
    sb, _ = batch.sign_pod(b.build())
    assert sa is not None and sb is not None, why_a
    assert (sa == sb) is same


def test_what_makes_a_pod_unsignable() -> None:
    batch = _batch()
    anti = make_pod("a").pod_affinity("required", HOST, {"app": "db"}, anti=True).build()
    assert batch.sign_pod(anti) == (None, "InterPodAffinity: pods with InterPodAffinity are not signable")
    spread = make_pod("s").spread(1, ZONE, match_labels={"app": "s"}).build()
    assert batch.sign_pod(spread)[0] is None
    claim = make_pod("c").resource_claim("gpu", "gpu-claim").build()
    assert batch.sign_pod(claim) == (None, "DynamicResources: pods with dra resource claims are not signable")
    # System default spreading (the default configuration) signs no pod at all
    system = _batch(default_config())
    sig, why = system.sign_pod(make_pod("p").build())
    assert sig is None and "default topology constraints" in (why or "")
    # extenders turn signatures off for the profile
    off = _batch(has_extenders=True)
    assert off.sign_pod(make_pod("p").build()) == (
        None, "signatures are disabled for this profile: the configuration has extenders"
    )


def test_a_plugin_without_sign_pod_turns_batching_off() -> None:
    from kschedctl.framework.batch import OpportunisticBatch

    class FakePlugins:
        lists = {"preFilter": [], "filter": [], "preScore": [], "score": []}

    class Fake:
        name = "NoSign"
        plugins = FakePlugins()

    fw = Fake()
    fw.plugins.lists["filter"] = [type("P", (), {"name": "NoSign", "filter": lambda *a: None})()]
    batch = OpportunisticBatch(fw)
    assert batch.disabled_because == "plugin(s) NoSign do not sign pods"


def test_a_plugin_whose_sign_pod_raises_makes_the_pod_unsignable() -> None:
    batch = _batch()

    class Broken:
        name = "Broken"

        def sign_pod(self, pod: Any) -> Any:
            raise ValueError("boom")

    batch.signing.append(Broken())
    assert batch.sign_pod(make_pod("p").build()) == (None, "Broken: sign_pod raised ValueError: boom")


def _big(name: str, created: str, **labels: str) -> Any:
    b = make_pod(name).req(cpu="3").created(created)
    for k, v in {"app": "big", **labels}.items():
        b = b.label(k, v)
    return b


def test_batch_places_the_next_pods_on_the_stored_order_without_scoring() -> None:
    pods = pods_of(*[_big(f"b{i}", f"2026-01-01T00:00:0{i}Z") for i in range(4)])
    r = simulate_pods(_one_per_node(), _list_config(), pods)
    assert [p.batched for p in r.placements] == [False, True, True, True]
    first, second = r.placements[:2]
    assert first.feasible == 4 and first.score is not None
    assert (second.feasible, second.score, second.candidates) == (1, None, [second.node])
    assert len({p.node for p in r.placements}) == 4
    assert r.to_dict()["summary"]["batched"] == 3
    assert any("OpportunisticBatching" in n and "500 ms" in n for n in r.notes)
    # the same run without batching scores every pod (ties among the rest may then break otherwise)
    plain = simulate_pods(_one_per_node(), _list_config(), pods_of(*[_big(f"b{i}", f"2026-01-01T00:00:0{i}Z") for i in range(4)]),
                          options=RunOptions(batching=False))
    assert not any(p.batched for p in plain.placements)
    assert {p.node for p in plain.placements} == {p.node for p in r.placements}


def test_batch_needs_the_previous_node_to_be_full_and_the_same_signature() -> None:
    small = pods_of(*[make_pod(f"s{i}").req(cpu="100m").created(f"2026-01-01T00:00:0{i}Z") for i in range(3)])
    assert not any(p.batched for p in simulate_pods(_one_per_node(), _list_config(), small).placements)
    mixed = pods_of(
        _big("a0", "2026-01-01T00:00:00Z"),
        _big("b0", "2026-01-01T00:00:01Z", tier="x"),  # other labels: another signature
        _big("b1", "2026-01-01T00:00:02Z", tier="x"),
    )
    assert [p.batched for p in simulate_pods(_one_per_node(), _list_config(), mixed).placements] == [False, False, True]


def test_a_failed_cycle_breaks_the_batch_and_batched_cycles_keep_the_node_rotation() -> None:
    pods = pods_of(
        _big("b0", "2026-01-01T00:00:00Z"),
        _big("b1", "2026-01-01T00:00:01Z"),
        make_pod("huge").label("app", "big").req(cpu="99").created("2026-01-01T00:00:02Z"),
        _big("b2", "2026-01-01T00:00:03Z"),
        _big("b3", "2026-01-01T00:00:04Z"),
    )
    sim = Simulator(_one_per_node(), _list_config())
    out = [sim.schedule_one(p, i) for i, (p, _) in enumerate(pods, 1)]
    assert [p.outcome for p in out] == ["scheduled", "scheduled", "unschedulable", "scheduled", "scheduled"]
    assert [p.batched for p in out] == [False, True, False, False, True]
    # b0, huge and b2 went through all 4 nodes; the batched b1 and b3 moved nextStartNodeIndex by nothing
    assert [p.processed_nodes for p in out] == [4, 0, 4, 4, 0]


def test_the_trace_records_the_hint() -> None:
    from kschedctl.framework.batch import OpportunisticBatch

    cfg = _list_config()
    sim = Simulator(_one_per_node(), cfg)
    sim.schedule_one(_big("b0", "2026-01-01T00:00:00Z").build(), 1)
    fw = sim.frameworks["default-scheduler"]
    batch = sim.batches["default-scheduler"]
    assert isinstance(batch, OpportunisticBatch)
    trace = run_cycle(fw, _big("b1", "2026-01-01T00:00:01Z").build(), cfg, batch=batch, cycle=sim.queue_cycle + 1)
    record = trace.to_dict()["details"]["batch"]
    assert record["batched"] is True and record["hint"] == trace.selected_node and record["signable"] is True
    assert any(n.startswith("OpportunisticBatching: the node hint") for n in trace.notes)
    assert trace.score == {} and trace.feasible_nodes == [trace.selected_node]
    # explain (no batch) records nothing
    assert explain_pod(_one_per_node(), _big("x", "2026-01-01T00:00:00Z").build(), cfg).to_dict()["details"]["batch"] is None


# --------------------------------------------------------------------------- parallelism, long runs, output


def test_parallelism_above_one_says_ties_vary() -> None:
    cluster = make_cluster([make_node("n1"), make_node("n2")])
    tied = simulate_pods(cluster, default_config(), pods_of(make_pod("a")))
    assert tied.placements[0].candidates == ["n1", "n2"]
    assert any(n.startswith("parallelism 16:") for n in tied.notes)
    one = simulate_pods(cluster, _list_config(), pods_of(make_pod("a")))
    assert not any(n.startswith("parallelism") for n in one.notes)


def test_small_runs_show_no_rate() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending")
    assert r.exit_code == 0
    assert "6 pods placed in" in r.output and "pods/s" not in r.output
    from kschedctl.render.simulate import speed_line

    long = {"summary": {"placed": 500}, "timing": {"elapsedSeconds": 2.5, "podsPerSecond": 200.0, "cycles": 510}}
    assert speed_line(long) == "500 pods placed in 2.50 s (200 pods/s, 510 scheduling cycles)"


def test_huge_replica_counts_are_expanded_lazily(tmp_path: Path) -> None:
    f = tmp_path / "huge.yaml"
    f.write_text(Path(CART).read_text().replace("replicas: 6", "replicas: 100000000"))
    r = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending", "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert len(data["placements"]) == 9  # 8 fit, the 9th does not; the rest are identical copies
    assert data["skipped"] == [{"workload": "Deployment shop/cart", "count": 99999991, "sameAs": "shop/cart-8"}]
    assert data["summary"]["pods"] == 100000000 and data["summary"]["notTried"] == 99999991
    table = invoke("simulate", "-f", str(f), "--snapshot", DEMO, "--no-pending")
    assert "99,999,991 more copies" in table.output and "identical to cart-8, which does not fit" in table.output


def test_max_pods_caps_a_run_and_says_so() -> None:
    r = invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "--max-pods", "4", "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert len(data["placements"]) == 4 and data["summary"]["capped"] is True
    assert any("2 more pod(s) were not simulated" in n and "--max-pods" in n for n in data["notes"])
    assert "(stopped after 4 pods: --max-pods)" in invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "--max-pods", "4").output


def test_identical_copies_only_for_workloads_whose_pods_cannot_be_told_apart() -> None:
    from kschedctl.whatif.simulate import identical_copies

    cluster = make_cluster([make_node("n1")])
    m = _manifests(DEPLOYMENT + "---\n" + STATEFULSET, cluster)
    assert [identical_copies(w) for w in m.workloads] == [True, False]


def test_snapshot_pending_pods_are_queued_first_by_default() -> None:
    """The demo's pending pods were listed by the informers at start-up: queued (namespace, then name)
    before the copies created afterwards; the gated one never reaches activeQ."""
    data = json.loads(invoke("simulate", "-f", CART, "--snapshot", DEMO, "-o", "json").output)
    pods = [p["pod"] for p in data["placements"]]
    first = ["shop/checkout-pending", "batch/report-pending", "ml/notebook-pending", "ml/train-pending",
             "shop/canary-gated", "shop/web-7d9f-pending"]
    assert pods[:6] == first  # checkout-pending has a higher priority, the rest by namespace/name
    assert data["placements"][4]["outcome"] == "gated"
    assert all(p.startswith("shop/cart-") for p in pods[6:])
    assert data["options"]["pending"] is True
    assert not any("pending pod(s) of the snapshot are not scheduled" in n for n in data["notes"])


def test_no_pending_leaves_the_snapshot_pending_pods_out() -> None:
    data = json.loads(invoke("simulate", "-f", CART, "--snapshot", DEMO, "--no-pending", "-o", "json").output)
    assert all(p["pod"].startswith("shop/cart-") for p in data["placements"])
    assert data["options"]["pending"] is False
    assert any("pending pod(s) of the snapshot are not scheduled" in n for n in data["notes"])


def test_pending_pods_queue_before_new_pods_of_equal_priority_whatever_their_creation_time() -> None:
    cluster = make_cluster(
        [make_node("n1")],
        pods=[
            make_pod("z-late", namespace="a").priority(5).created("2030-01-01T00:00:00Z"),
            make_pod("b-pending").priority(5).created("2030-01-01T00:00:00Z"),
            make_pod("a-low").priority(1),
            make_pod("gone").priority(5).set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z"),
        ],
    )
    pods = pods_of(
        make_pod("new-old").priority(5).created("2020-01-01T00:00:00Z"),
        make_pod("new-high").priority(9).created("2020-01-02T00:00:00Z"),
    )
    r = simulate_pods(cluster, default_config(), pods)
    assert [p.pod for p in r.placements] == [
        "default/new-high", "a/z-late", "default/b-pending", "default/new-old", "default/a-low"
    ]
    only_new = simulate_pods(cluster, default_config(), pods, options=RunOptions(pending=False))
    assert [p.pod for p in only_new.placements] == ["default/new-high", "default/new-old"]


# --------------------------------------------------------------------------- DRA across pods

DRA_CLUSTER = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
""" + "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}
status: {{allocatable: {{cpu: '8', memory: 16Gi, pods: '110'}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {n}-gpu}}
spec:
  driver: gpu.example.com
  nodeName: {n}
  pool: {{name: {n}, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: gpu-0}}, {{name: gpu-1}}]
"""
    for n in ("n1", "n2")
)

TRAINER = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 6
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: c, image: t, resources: {requests: {cpu: 100m}, claims: [{name: gpu}]}}]
"""


def test_devices_allocated_to_earlier_pods_are_taken_for_later_ones(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(DRA_CLUSTER)
    (tmp_path / "trainer.yaml").write_text(TRAINER)
    r = invoke("simulate", "-f", str(tmp_path / "trainer.yaml"), "--snapshot", str(tmp_path / "cluster.yaml"), "-o", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    placed = [p["node"] for p in data["placements"] if p["node"]]
    assert sorted(placed) == ["n1", "n1", "n2", "n2"]  # two GPUs per node, one claim per pod
    failed = data["placements"][4]
    assert failed["fitError"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    assert data["skipped"] == [{"workload": "Deployment ml/trainer", "count": 1, "sameAs": failed["pod"]}]
    assert any("devices allocated to placed pods' ResourceClaims are seen by later pods" in n for n in data["notes"])


def test_claims_made_from_a_template_belong_to_their_pod() -> None:
    cluster = load_cluster([DEMO])
    m = parse_manifests(parse_documents("t.yaml", TRAINER), cluster)
    assert list(m.claim_templates) == ["ml/one-gpu"]
    factory = PodFactory(m, cluster)
    pod = next(factory.pods(m.workloads[0], 1))
    (status,) = pod.raw["status"]["resourceClaimStatuses"]
    claim = factory.cluster.get("ResourceClaim", "ml", status["resourceClaimName"])
    assert claim is not None and status["name"] == "gpu"
    assert claim.name.startswith(f"{pod.name}-gpu-")
    assert claim.meta.controller_ref() is not None and claim.meta.controller_ref()["uid"] == pod.uid  # type: ignore[index]
    assert claim.spec == {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


def test_claims_of_pods_created_after_the_run_wrote_to_its_cluster_are_seen(tmp_path: Path) -> None:
    """Pods are created lazily: the claims of db-2 and db-3 are made after db-0's PV binding was applied."""
    local = {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "kubernetes.io/no-provisioner",
        "metadata": {"name": "local", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    objs = [local, _local_pv("pv-n1", "n1").raw, _local_pv("pv-n2", "n2").raw]
    objs += [make_node(n).label(HOST, n).build().raw for n in ("n1", "n2")]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objs))
    (tmp_path / "sts.yaml").write_text(STATEFULSET.replace("replicas: 3", "replicas: 4"))
    r = invoke("simulate", "-f", str(tmp_path / "sts.yaml"), "--snapshot", str(tmp_path / "cluster.yaml"), "-o", "json")
    placements = json.loads(r.output)["placements"]
    assert sorted(p["node"] for p in placements[:2]) == ["n1", "n2"]
    for p in placements[2:]:
        assert p["error"] is None
        assert "didn't find available persistent volumes to bind" in p["fitError"]


def test_node_tree_is_built_in_name_order_whatever_the_file_order() -> None:
    # The scheduler's informer lists nodes sorted by name (as the API server returns them).
    nodes = [make_node(n).zone(z) for n, z in (("n10", "b"), ("n9", "a"), ("n2", "b"), ("n1", "a"))]
    snap = Snapshot(make_cluster(nodes))
    # name order n1 n10 n2 n9; zones a: n1 n9, b: n10 n2; interleaved zone by zone
    assert [ni.name for ni in snap.node_info_list] == ["n1", "n10", "n9", "n2"]


def test_pods_of_another_scheduler_are_counted_apart(tmp_path: Path) -> None:
    """A pod whose schedulerName no profile has is "ignored": the summary counts it apart, not as a pod
    not placed (the exit status still says that not every pod was placed)."""
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump(make_node("n1").alloc(cpu="4", memory="8Gi").build().raw))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all([make_pod("a").req(cpu="1").build().raw,
                                        make_pod("b").req(cpu="1").scheduler("other").build().raw]))
    r = runner.invoke(app, ["simulate", "-f", str(pods), "--snapshot", str(snap), "-o", "json"])
    assert r.exit_code == 1, r.output
    summary = json.loads(r.stdout)["summary"]
    assert (summary["placed"], summary["notPlaced"], summary["ignored"]) == (1, 0, 1)
    table = runner.invoke(app, ["simulate", "-f", str(pods), "--snapshot", str(snap)])
    assert ("1 scheduled, 0 not scheduled, 1 left to another scheduler (a schedulerName no profile has)"
            in table.stdout), table.output
