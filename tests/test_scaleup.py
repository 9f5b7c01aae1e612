"""``simulate --add-nodes T=N|auto``: the scale-up corpus, the search, the command line.

``tests/scaleup/scaleup-*`` are the shared scale-up corpus (see its README): each names a sequence
scenario (``tests/sequences/<source>``), a template node T, a count N and the least count placing
every pod (searched up to ``leastSearchedUpTo``); ``expected-sequence.json`` holds the real v1.35.4
loop's placements on the source cluster with the N new nodes added (``cluster.yaml``). The source's
files are run with ``--add-nodes T=N`` and compared pod by pod as ``kschedctl check`` compares a
sequence (``check.sequence.compare_exact``), and with ``--add-nodes T=auto`` for the least count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.runner import run_scenario
from kschedctl.check.sequence import compare_exact
from kschedctl.cli.main import app
from kschedctl.snapshot.loader import load_cluster
from kschedctl.whatif.nodetemplate import new_nodes, with_new_nodes
from kschedctl.whatif.scaleup import least_count

ROOT = Path(__file__).parent
SCENARIOS = sorted(d for d in (ROOT / "scaleup").iterdir() if d.is_dir())
DEMO = str(ROOT.parent / "fixtures" / "demo" / "cluster.yaml")
FINETUNE = str(ROOT.parent / "fixtures" / "demo" / "finetune.yaml")
runner = CliRunner()


def _meta(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "scaleup.json").read_text())
    return data


def _source_args(d: Path) -> list[str]:
    src = ROOT / "sequences" / _meta(d)["source"]
    args = ["simulate", "-f", str(src / "pods.yaml"), "--snapshot", str(src / "cluster.yaml"), "-o", "json"]
    if (src / "config.yaml").is_file():
        args += ["--config", str(src / "config.yaml")]
    return args


def _simulate(*args: str) -> tuple[int, dict[str, Any]]:
    r = runner.invoke(app, list(args))
    assert r.exit_code in (0, 1), r.output
    data: dict[str, Any] = json.loads(r.stdout)
    return r.exit_code, data


def _entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON placements in the reference's schema (``check.sequence.sequence_entry``'s fields)."""
    return [
        {"pod": p["pod"], "node": p["node"], "fitError": p["fitError"] if p["fitError"] is not None else p["error"],
         "nominatedNodeName": p["nominatedNodeName"], "victims": p["victims"]}
        for p in data["placements"] if p["outcome"] not in ("gated", "ignored")
    ]


# --------------------------------------------------------------------------- the corpus


def test_corpus_is_present() -> None:
    assert len(SCENARIOS) == 20
    assert all((ROOT / "sequences" / _meta(d)["source"]).is_dir() for d in SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_count_places_where_the_real_loop_did(scenario: Path) -> None:
    meta = _meta(scenario)
    code, data = _simulate(*_source_args(scenario), "--add-nodes", f"{meta['template']}={meta['count']}")
    expected = json.loads((scenario / "expected-sequence.json").read_text())["placements"]
    diffs = compare_exact(expected, _entries(data))
    assert not diffs, "\n".join(str(d) for d in diffs[:10])
    [added] = data["addNodes"]
    assert added == {"template": meta["template"], "count": meta["count"], "auto": False, "names": meta["newNodes"]}
    assert code == (0 if all(e["node"] for e in expected) else 1)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_auto_finds_the_least_count(scenario: Path) -> None:
    meta = _meta(scenario)
    most = meta["leastSearchedUpTo"]
    code, data = _simulate(*_source_args(scenario), "--add-nodes", f"{meta['template']}=auto", "--max-new-nodes", str(most))
    [added] = data["addNodes"]
    assert added["least"] == meta["least"]
    assert added["searchedUpTo"] == most and added["auto"]
    assert added["count"] == (most if meta["least"] is None else meta["least"])
    assert len(added["names"]) == added["count"]
    assert 1 <= added["probes"] == data["probes"] <= 2 * most.bit_length() + 2
    assert code == (1 if meta["least"] is None else 0)
    assert (data["summary"]["notPlaced"] == 0) == (meta["least"] is not None)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_the_new_nodes_are_the_corpus_own(scenario: Path) -> None:
    """The nodes ``with_new_nodes`` adds are those of the scenario's expanded cluster."""
    meta = _meta(scenario)
    source = load_cluster([str(ROOT / "sequences" / meta["source"] / "cluster.yaml")])
    template = source.node(meta["template"])
    assert template is not None
    ours = with_new_nodes(source, [new_nodes(source, template, meta["count"])])
    theirs = load_cluster([str(scenario / "cluster.yaml")])
    assert sorted(n.name for n in ours.nodes) == sorted(n.name for n in theirs.nodes)
    for name in meta["newNodes"]:
        a, b = ours.node(name), theirs.node(name)
        assert a is not None and b is not None
        assert a.labels == b.labels and a.taints == b.taints and a.unschedulable == b.unschedulable
        assert a.raw["status"]["allocatable"] == b.raw["status"]["allocatable"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_expanded_cluster_agrees_pod_by_pod(scenario: Path) -> None:
    result = run_scenario(scenario)
    assert result.error is None, result.error
    assert result.passed, "\n".join(str(d) for d in result.differences[:10])


# --------------------------------------------------------------------------- the search


@pytest.mark.parametrize(
    ("least", "most", "probed"),
    [(0, 12, [0]), (1, 12, [0, 1]), (3, 12, [0, 1, 2, 4, 3]), (10, 12, [0, 1, 2, 4, 8, 12, 10, 9]),
     (12, 12, [0, 1, 2, 4, 8, 12, 10, 11]), (None, 12, [0, 1, 2, 4, 8, 12]), (None, 0, [0]), (5, 5, [0, 1, 2, 4, 5])],
)
def test_least_count_search(least: int | None, most: int, probed: list[int]) -> None:
    """Exponential, then binary: the count found places every pod and the one below it, probed too, does not."""
    seen: list[int] = []

    def places_all(n: int) -> bool:
        seen.append(n)
        return least is not None and n >= least

    assert least_count(places_all, most) == least
    assert seen == probed
    if least:
        assert least - 1 in seen


# --------------------------------------------------------------------------- the command line


def invoke(*args: str) -> Any:
    return runner.invoke(app, ["simulate", "--snapshot", DEMO, *args])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--add-nodes", "nosuch=2"], "--add-nodes nosuch=2: " + DEMO + " has no node nosuch"),
        (["--add-nodes", "gpu-a0=-1"], "--add-nodes gpu-a0=-1: '-1' is not a count of new nodes"),
        (["--add-nodes", "gpu-a0=two"], "--add-nodes gpu-a0=two: 'two' is not a count of new nodes"),
        (["--add-nodes", "gpu-a0=1.5"], "is not a count of new nodes"),
        (["--add-nodes", "gpu-a0"], "--add-nodes 'gpu-a0': give NODE=N or NODE=auto"),
        (["--add-nodes", "=3"], "--add-nodes '=3': give NODE=N or NODE=auto"),
        (["--add-nodes", "gpu-a0="], "give NODE=N or NODE=auto"),
        (["--add-nodes", "gpu-a0=auto", "--max-new-nodes=-1"], "--max-new-nodes -1: give a count of nodes from 0"),
        (["--add-nodes", "gpu-a0=2", "--max-new-nodes", "5"], "--max-new-nodes goes with --add-nodes NODE=auto"),
        (["--add-nodes", "gpu-a0=2", "--add-nodes", "gpu-a0=auto"], "--add-nodes: gpu-a0 is given twice"),
        (["--add-nodes", "gpu-a0=2", "--drain", "general-a0"], "--add-nodes does not go with --drain"),
        (["--add-nodes", "gpu-a0=2", "--runs", "3"], "--add-nodes does not go with --runs"),
        (["--add-nodes", "gpu-a0=99999"], "give an integer from 0 to 5000"),
        (["--add-nodes", "gpu-a0=auto", "--no-pending"], "--add-nodes without -f places the snapshot's pending pods"),
    ],
    ids=["unknown-node", "negative", "word", "fraction", "no-count", "no-node", "empty-count", "negative-max",
         "max-without-auto", "twice", "with-drain", "with-runs", "too-many",
         "nothing-to-place"],
)
def test_cli_bad_input(args: list[str], message: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert len(r.output.strip().splitlines()) == 1, r.output


def test_cli_json_shape_and_table_headline() -> None:
    """The demo's fine-tuning Job: 6 pods of 2 GPUs each; gpu-a0's node group has 4 GPUs a node."""
    args = ["-f", FINETUNE, "--no-pending", "--add-nodes", "gpu-a0=auto", "--max-new-nodes", "8"]
    r = invoke(*args, "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["addNodes"] == [{"template": "gpu-a0", "count": 3, "auto": True, "least": 3, "searchedUpTo": 8,
                                 "probes": 5, "names": ["gpu-a0-new-1", "gpu-a0-new-2", "gpu-a0-new-3"]}]
    assert data["probes"] == 5 and data["summary"]["placed"] == 6
    assert {p["node"] for p in data["placements"]} == {"gpu-a0-new-1", "gpu-a0-new-2", "gpu-a0-new-3"}
    r = invoke(*args)
    assert r.stdout.splitlines()[1] == "3 new nodes like gpu-a0 place all 6 pods (searched 0..8 in 5 probes)"
    r = invoke(*args[:-2], "--max-new-nodes", "2", "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["addNodes"][0]["least"] is None and data["addNodes"][0]["count"] == 2
    assert data["summary"]["placed"] == 4
    r = invoke(*args[:-2], "--max-new-nodes", "2")
    assert r.stdout.splitlines()[1].startswith("no count of new nodes like gpu-a0 up to 2 places all 6 pods")


def test_gated_pods_are_left_out_of_the_search() -> None:
    """The demo's pending pods: a memory-a0-like node places the big checkout pod, but report-pending selects a
    label no node has and notebook-pending does not tolerate the GPU taint: no count places them; the gated
    pod is left out of the search (a note says so) and keeps the exit status at 1."""
    r = invoke("--add-nodes", "memory-a0=auto", "--max-new-nodes", "3", "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["addNodes"][0]["least"] is None
    assert any("shop/canary-gated" in n and "left out of the search" in n for n in data["notes"])


def test_cli_fixed_counts_of_two_templates() -> None:
    r = invoke("--add-nodes", "gpu-a0=1", "--add-nodes", "memory-a0=2", "-o", "json")
    data = json.loads(r.stdout)
    assert [(a["template"], a["count"], a["names"]) for a in data["addNodes"]] == [
        ("gpu-a0", 1, ["gpu-a0-new-1"]), ("memory-a0", 2, ["memory-a0-new-1", "memory-a0-new-2"])]
    assert data["numNodes"] == 15 and data["probes"] == 1


# --------------------------------------------------------------------------- DaemonSet pods and node-condition taints


def _node(name: str, taints: list[dict[str, Any]] | None = None, cpu: str = "2") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pool": "p"},
                         "annotations": {"note": "x"}},
            "spec": {"taints": taints or []},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "images": [{"names": ["registry/app:1"], "sizeBytes": 300_000_000}],
                       "conditions": [{"type": "Ready", "status": "False"}]}}


def _pod(name: str, cpu: str, node: str | None = None, owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}",
                            "creationTimestamp": "2026-11-01T00:00:00Z"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "agent", "uid": "ds", "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry/app:1",
                                            "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


def test_daemonset_pods_and_condition_taints_through_the_command(tmp_path: Path) -> None:
    """The template is not ready (a node-condition taint the new nodes drop) and runs a DaemonSet pod taking
    half its cpu and a static pod (both copied onto each new node, the ReplicaSet's pod not): each new node then
    takes one 1-cpu pod, not two."""
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    items = [_node("t0", [not_ready]), _pod("agent-t0", "1", "t0", "DaemonSet"), _pod("other-t0", "500m", "t0", "ReplicaSet"),
             _pod("static-t0", "0", "t0", "Node")]
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all([_pod(f"w{i}", "1") for i in range(3)]))
    r = runner.invoke(app, ["simulate", "-f", str(pods), "--snapshot", str(snap), "--add-nodes", "t0=auto", "-o", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    [added] = data["addNodes"]
    assert added["least"] == 3 and added["names"] == ["t0-new-1", "t0-new-2", "t0-new-3"]
    assert sorted(p["node"] for p in data["placements"]) == ["t0-new-1", "t0-new-2", "t0-new-3"]
    agents = {n["node"]: n["podsBefore"] for n in data["nodes"]}
    assert agents == {"t0-new-1": 2, "t0-new-2": 2, "t0-new-3": 2}  # the DaemonSet and mirror pods' copies, not other-t0
    r = runner.invoke(app, ["simulate", "-f", str(pods), "--snapshot", str(snap), "--add-nodes", "t0=2"])
    assert r.exit_code == 1
    assert "Insufficient cpu" in r.stdout


def test_new_nodes_follow_a_given_node_order(tmp_path: Path) -> None:
    """With --node-order FILE naming every node of the snapshot, the new nodes join the node tree after them (each
    zone's list ends with its new nodes), as nodes added after the scheduler started; a note says so."""
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.snapshot.nodeorder import StartupOrder

    cluster = load_cluster([DEMO])
    listed = tuple(sorted((n.name for n in cluster.nodes), reverse=True))
    cluster.startup = StartupOrder(listed, source="file")
    template = cluster.node("general-a0")
    assert template is not None
    order = [ni.name for ni in Snapshot(with_new_nodes(cluster, [new_nodes(cluster, template, 2)])).node_info_list]
    assert order[-2:] == ["general-a0-new-1", "general-a0-new-2"]
    order_file = tmp_path / "order.txt"
    order_file.write_text("\n".join(listed) + "\n")
    r = invoke("-f", FINETUNE, "--no-pending", "--add-nodes", "gpu-a0=3", "--node-order", str(order_file), "-o", "json")
    data = json.loads(r.stdout)
    assert any(n.startswith("the new nodes are not in the --node-order") for n in data["notes"])
    assert data["summary"]["placed"] == 6


def test_several_auto_templates_are_searched_in_flag_order() -> None:
    """gpu-a0's count is searched first (gpu-b0 adding none), then gpu-b0's with gpu-a0's least added: 0."""
    r = invoke("-f", FINETUNE, "--no-pending", "--add-nodes", "gpu-a0=auto", "--add-nodes", "gpu-b0=auto",
               "--max-new-nodes", "4", "-o", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [(a["template"], a["least"], a["probes"]) for a in data["addNodes"]] == [("gpu-a0", 3, 5), ("gpu-b0", 0, 0)]
    assert data["probes"] == 5  # gpu-b0's probe of 0 is the run gpu-a0's search found
    r = invoke("-f", FINETUNE, "--no-pending", "--add-nodes", "gpu-a0=auto", "--add-nodes", "gpu-b0=auto",
               "--max-new-nodes", "4")
    assert "3 new nodes like gpu-a0 place all 6 pods with the other new nodes (searched 0..4 in 5 probes)" in r.stdout
