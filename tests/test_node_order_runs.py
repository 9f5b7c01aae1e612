"""Where the node order decides: two orders, two answers (``--node-order``), the placements that say
so, and ``simulate --runs N`` showing the range of outcomes under random orders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import default_config
from kschedctl.explain.cycle import explain_pod
from kschedctl.snapshot.nodeorder import StartupOrder, random_order
from kschedctl.whatif.placements import EARLY_STOP, TIE
from kschedctl.whatif.runs import default_group_label, run_many
from kschedctl.whatif.simulate import simulate_streams
from tests.builders import make_cluster, make_node, make_pod
from tests.simulation import simulate_pods

runner = CliRunner()
ZONE = "topology.kubernetes.io/zone"


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def write(path: Path, objects: list[Any]) -> str:
    path.write_text(yaml.safe_dump_all([o.build().raw for o in objects], sort_keys=False))
    return str(path)


def order_file(path: Path, names: list[str]) -> str:
    path.write_text("\n".join(names) + "\n")
    return str(path)


def early_stop_cluster() -> list[Any]:
    """120 nodes: 119 small ones and the roomiest, named last. Over 100 nodes the search stops at 100
    feasible ones (percentageOfNodesToScore's adaptive default), so in name order it never reaches z-big."""
    small = [make_node(f"n{i:03d}").zone("za").alloc(cpu="4", memory="16Gi") for i in range(119)]
    return [*small, make_node("z-big").zone("za").alloc(cpu="64", memory="256Gi")]


def tie_cluster() -> list[Any]:
    return [make_node(f"n{i}").zone("za" if i % 2 else "zb").alloc(cpu="4", memory="8Gi") for i in range(4)]


# --------------------------------------------------------------------------- one cycle


def test_early_stop_two_orders_two_nodes() -> None:
    cluster = make_cluster(early_stop_cluster())
    pod = make_pod("web").req(cpu="1").build()
    by_name = explain_pod(cluster, pod, default_config())
    assert by_name.num_nodes_to_find == 100 and by_name.processed_nodes == 100
    assert by_name.selected_node != "z-big"
    cluster.startup = StartupOrder(("z-big",))
    assert explain_pod(cluster, pod, default_config()).selected_node == "z-big"


def test_tie_winner_follows_the_order() -> None:
    cluster = make_cluster(tie_cluster())
    pod = make_pod("web").req(cpu="1").build()
    winners = set()
    for order in (("n0", "n1", "n2", "n3"), ("n3", "n2", "n1", "n0")):
        cluster.startup = StartupOrder(order)
        trace = explain_pod(cluster, pod, default_config())
        assert len(trace.candidates) == 4
        winners.add(trace.selected_node)
    assert len(winners) == 2


# --------------------------------------------------------------------------- a run says what the order decided


@pytest.mark.parametrize(
    ("nodes", "flag"),
    [(early_stop_cluster, EARLY_STOP), (tie_cluster, TIE)],
)
def test_placements_flag_what_the_order_decided(nodes: Any, flag: str) -> None:
    pods = [(make_pod(f"web-{i}").req(cpu="1").build(), None) for i in range(2)]
    result = simulate_pods(make_cluster(nodes()), default_config(), pods)
    assert all(flag in p.order_dependent for p in result.placements)
    assert sum(1 for n in result.notes if n.startswith("order-dependent: 2 placement(s)")) == 1
    assert flag in result.to_dict()["placements"][0]["orderDependent"]


def test_a_pod_that_fits_one_node_depends_on_no_order() -> None:
    nodes = [make_node("small").alloc(cpu="1"), make_node("big").alloc(cpu="8")]
    result = simulate_pods(make_cluster(nodes), default_config(), [(make_pod("p").req(cpu="2").build(), None)])
    assert result.placements[0].order_dependent == []
    assert not any(n.startswith("order-dependent") for n in result.notes)


def test_random_order_shuffles_the_start_up_queue() -> None:
    """Two pending pods of equal priority, room for one: which one is placed is the queue's order."""
    nodes = [make_node("only").zone("za").alloc(cpu="1")]
    pending = [make_pod(n).req(cpu="1") for n in ("a", "b")]
    placed = set()
    for seed in range(12):
        cluster = make_cluster(nodes, pending)
        cluster.startup = random_order(cluster.nodes, seed)
        result = simulate_streams(cluster, default_config(), [])
        placed.add(next(p.pod for p in result.placements if p.placed))
    assert placed == {"default/a", "default/b"}


# --------------------------------------------------------------------------- --runs


def test_runs_report_the_range_and_the_pods_that_change() -> None:
    nodes = [make_node("only").zone("za").label("karpenter.sh/nodepool", "general").alloc(cpu="1")]
    cluster = make_cluster(nodes, [make_pod(n).req(cpu="1") for n in ("a", "b")])

    def one(c: Any) -> Any:
        return simulate_streams(c, default_config(), [])

    report = run_many(cluster, 6, one, seed=3).to_dict()
    again = run_many(cluster, 6, one, seed=3).to_dict()
    assert report == again  # a seed repeats the set
    assert report["placed"] == {"min": 1, "median": 1, "max": 1}
    assert report["groupLabel"] == "karpenter.sh/nodepool"
    assert report["byZone"] == [{"name": "za", "min": 1, "median": 1, "max": 1}]
    changes = {c["pod"]: {o["outcome"]: o["runs"] for o in c["outcomes"]} for c in report["changes"]}
    assert set(changes) == {"default/a", "default/b"}
    assert sum(changes["default/a"].values()) == 6
    assert set(changes["default/a"]) == {"placed in za", "unschedulable"}
    # the snapshot's pods are untouched by the runs
    assert all(not p.node_name for p in cluster.pods)


def test_default_group_label_is_the_first_pool_label_present() -> None:
    nodes = [make_node("a").label("node.kubernetes.io/instance-type", "m5.large").label("eks.amazonaws.com/nodegroup", "ng1").build()]
    assert default_group_label(nodes) == "eks.amazonaws.com/nodegroup"
    assert default_group_label([make_node("b").build()]) is None


# --------------------------------------------------------------------------- the command line


def test_explain_pod_with_two_files_selects_two_nodes(tmp_path: Path) -> None:
    snap = write(tmp_path / "cluster.yaml", [*early_stop_cluster(), make_pod("web").req(cpu="1")])
    first = order_file(tmp_path / "big-first.txt", ["z-big"])
    last = order_file(tmp_path / "big-last.txt", [f"n{i:03d}" for i in range(119)] + ["z-big"])
    selected = {}
    for name, path in (("first", first), ("last", last)):
        r = invoke("explain", "pod", "web", "--snapshot", snap, "--node-order", path, "-o", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["nodeOrder"] == {"order": path}
        selected[name] = doc["details"]["selectedNode"]
    assert selected["first"] == "z-big" and selected["last"] != "z-big"


def test_simulate_with_two_files_places_differently(tmp_path: Path) -> None:
    snap = write(tmp_path / "cluster.yaml", tie_cluster())
    pods = write(tmp_path / "pods.yaml", [make_pod(f"web-{i}").req(cpu="1") for i in range(2)])
    nodes = []
    for names in (["n0", "n1", "n2", "n3"], ["n3", "n2", "n1", "n0"]):
        path = order_file(tmp_path / f"{names[0]}.txt", names)
        r = invoke("simulate", "-f", pods, "--snapshot", snap, "--node-order", path, "-o", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        nodes.append([p["node"] for p in doc["placements"]])
        assert all(p["orderDependent"] == ["tie"] for p in doc["placements"])
    assert nodes[0] != nodes[1]


def test_simulate_random_records_its_seed(tmp_path: Path) -> None:
    snap = write(tmp_path / "cluster.yaml", tie_cluster())
    pods = write(tmp_path / "pods.yaml", [make_pod("web").req(cpu="1")])
    r = invoke("simulate", "-f", pods, "--snapshot", snap, "--node-order", "random", "-o", "json")
    doc = json.loads(r.stdout)
    seed = doc["nodeOrder"]["seed"]
    assert any(f"--seed {seed}" in n for n in doc["notes"])
    again = json.loads(invoke("simulate", "-f", pods, "--snapshot", snap, "--node-order", "random", "--seed", str(seed), "-o", "json").stdout)
    assert [p["node"] for p in again["placements"]] == [p["node"] for p in doc["placements"]]


def test_simulate_runs_table_and_exit_status(tmp_path: Path) -> None:
    snap = write(tmp_path / "cluster.yaml", [make_node("only").zone("za").alloc(cpu="1"),
                                             *[make_pod(n).req(cpu="1") for n in ("a", "b")]])
    pods = write(tmp_path / "pods.yaml", [make_pod("tiny")])
    r = invoke("simulate", "-f", pods, "--snapshot", snap, "--runs", "6", "--seed", "3")
    assert r.exit_code == 1, r.output  # one of the two is left pending in every run
    assert "6 runs on 1 nodes" in r.stdout and "seed 3" in r.stdout
    assert "Pods whose outcome changes between runs" in r.stdout and "default/a" in r.stdout
    doc = json.loads(invoke("simulate", "-f", pods, "--snapshot", snap, "--runs", "6", "--seed", "3", "-o", "json").stdout)
    assert doc["mode"] == "runs" and doc["runs"] == 6 and len(doc["perRun"]) == 6
    md = invoke("simulate", "-f", pods, "--snapshot", snap, "--runs", "2", "--seed", "3", "-o", "markdown")
    assert md.stdout.startswith("### kschedctl simulate --runs")


def test_explain_pending_takes_the_order(tmp_path: Path) -> None:
    snap = write(tmp_path / "cluster.yaml", [*tie_cluster(), make_pod("web").req(cpu="1")])
    r = invoke("explain", "pending", "--snapshot", snap, "--node-order", "random", "--seed", "5", "-o", "json")
    assert r.exit_code == 1, r.output
    assert "seed 5" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain", "pod", "web", "--seed", "3"], "--seed goes with --node-order random"),
        (["simulate", "-f", "{pods}", "--runs", "3", "--node-order", "{order}"], "does not go with --node-order FILE"),
        (["simulate", "-f", "{pods}", "--group-by", "pool"], "--group-by goes with --runs"),
        (["simulate", "--scale-down", "pool=x", "--runs", "3"], "does not go with --scale-down"),
        (["simulate", "-f", "{pods}", "--runs", "1"], "--runs"),
        (["simulate", "-f", "{pods}", "--node-order", "{bad}"], "bad.txt: line 2: neither a node name"),
        (["simulate", "-f", "{pods}", "--node-order", "{dup}"], "dup.txt: line 3: n0 is listed already, on line 1"),
    ],
)
def test_refusals(tmp_path: Path, args: list[str], message: str) -> None:
    snap = write(tmp_path / "cluster.yaml", [*tie_cluster(), make_pod("web").req(cpu="1")])
    files = {"pods": write(tmp_path / "pods.yaml", [make_pod("x")]), "order": order_file(tmp_path / "o.txt", ["n0"])}
    bad = tmp_path / "bad.txt"
    bad.write_text("n0\nthis is no node\n")
    files["bad"] = str(bad)
    files["dup"] = order_file(tmp_path / "dup.txt", ["n0", "n1", "n0"])
    r = invoke(*[a.format(**files) for a in args], "--snapshot", snap)
    assert r.exit_code == 2, r.output
    assert message in r.stderr


def test_group_by_a_label_no_node_carries(tmp_path: Path) -> None:
    """``--group-by`` a label no node has: a note, no "(none)" group, the exit status of the run."""
    snap = write(tmp_path / "cluster.yaml", tie_cluster())
    pods = write(tmp_path / "pods.yaml", [make_pod("x").req(cpu="1")])
    r = invoke("simulate", "-f", pods, "--snapshot", snap, "--runs", "2", "--seed", "1", "--group-by", "no.such/label",
               "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["byGroup"] == []
    assert "no node carries the label no.such/label (--group-by): no per-group counts" in doc["notes"]


def test_drain_runs(tmp_path: Path) -> None:
    """``--drain ... --runs``: the replacements of a drained node land by the order; a pod without a
    controller (lost) needs --force, in every run."""
    snap = write(tmp_path / "cluster.yaml", [
        *tie_cluster(),
        make_pod("web-1").req(cpu="1").node("n0").owner("ReplicaSet", "web"),
    ])
    ok = invoke("simulate", "--drain", "n0", "--snapshot", snap, "--runs", "8", "--seed", "2", "-o", "json")
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert doc["placed"] == {"min": 1, "median": 1, "max": 1} and doc["failures"] == []
    assert len({o["outcome"] for c in doc["changes"] for o in c["outcomes"]}) >= 2  # the landing's zone varies
    bare = write(tmp_path / "bare.yaml", [*tie_cluster(), make_pod("solo").req(cpu="1").node("n0")])
    stuck = invoke("simulate", "--drain", "n0", "--snapshot", bare, "--runs", "2", "--seed", "1")
    assert stuck.exit_code == 1, stuck.output
    assert "cannot be evicted, in every run" in stuck.stdout


def test_drain_runs_lead_with_the_verdict(tmp_path: Path) -> None:
    """``--drain ... --runs`` leads with the drain's verdict, as one drain does: in how many runs it is
    possible, the replacements placed, the pods lost."""
    snap = write(tmp_path / "cluster.yaml", [
        *tie_cluster(),
        make_pod("web-1").req(cpu="1").node("n0").owner("ReplicaSet", "web"),
        make_pod("solo").req(cpu="1").node("n0"),
    ])
    r = invoke("simulate", "--drain", "n0", "--force", "--snapshot", snap, "--runs", "3", "--seed", "2")
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stdout.splitlines() if not ln.startswith("kube-scheduler v")]
    assert lines[0] == "drain of n0 possible in every run (3); 1 of 1 replacement(s) placed; 1 pod(s) without a controller are lost"
    doc = json.loads(invoke("simulate", "--drain", "n0", "--force", "--snapshot", snap, "--runs", "3", "--seed", "2",
                            "-o", "json").stdout)
    assert doc["drain"]["possibleRuns"] == 3 and doc["drain"]["lost"] == ["default/solo"]
    stuck = invoke("simulate", "--drain", "n0", "--snapshot", snap, "--runs", "2", "--seed", "1")
    assert next(ln for ln in stuck.stdout.splitlines() if not ln.startswith("kube-scheduler v")).startswith("drain of n0 possible in 0 of 2 runs"), stuck.output


def test_changes_name_what_a_run_did_not_do() -> None:
    """A pod absent from a run is "running" (a running pod other runs preempted) or "not tried" (a pod of
    the run that one run did not reach); pods with one outcome in every run are not listed."""
    from kschedctl.whatif.runs import RunOutcome, RunsReport

    a = RunOutcome(1, 2, 0, 1, True, pods={"d/x": "placed in za", "d/y": "placed in zb", "d/old": "preempted"},
                   tried={"d/x", "d/y"})
    b = RunOutcome(2, 1, 1, 0, False, pods={"d/x": "placed in za"}, tried={"d/x"})
    changes = {c["pod"]: c["outcomes"] for c in RunsReport(0, 3, None, [a, b]).changes()}
    assert changes == {
        "d/old": [{"outcome": "preempted", "runs": 1}, {"outcome": "running", "runs": 1}],
        "d/y": [{"outcome": "not tried", "runs": 1}, {"outcome": "placed in zb", "runs": 1}],
    }


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["web-10", "web-2", "web-1"], ["web-1", "web-2", "web-10"]),
        (["b/x-1", "a/x-10", "a/x-9"], ["a/x-9", "a/x-10", "b/x-1"]),
        (["n-0", "n0", "n"], ["n", "n0", "n-0"]),
    ],
)
def test_copies_are_listed_in_number_order(names: list[str], expected: list[str]) -> None:
    from kschedctl.whatif.runs import natural_key

    assert sorted(names, key=natural_key) == expected


def test_no_early_stop_line_when_no_node_is_feasible(tmp_path: Path) -> None:
    """"Filtering stopped after N feasible nodes" only when the search did stop there: with no node
    feasible it went through every node."""
    snap = write(tmp_path / "cluster.yaml", early_stop_cluster())
    too_big = write(tmp_path / "big.yaml", [make_pod("huge").req(cpu="100")])
    r = invoke("explain", "pod", "-f", too_big, "--snapshot", snap)
    assert r.exit_code == 1, r.output
    assert "Filtering stopped after" not in r.stdout
    fits = write(tmp_path / "fits.yaml", [make_pod("web").req(cpu="1")])
    ok = invoke("explain", "pod", "-f", fits, "--snapshot", snap)
    assert "Filtering stopped after 100 feasible nodes (percentageOfNodesToScore)" in ok.stdout, ok.output
