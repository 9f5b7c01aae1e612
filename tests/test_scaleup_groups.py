"""``explain pending --scale-up`` / ``explain pod --scale-up``: would one new node of a node group take the pod,
which plugin says no (in cluster-autoscaler's words), and the least new nodes per group (``whatif.scaleup_groups``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import default_config
from kschedctl.snapshot.cluster import Cluster
from kschedctl.whatif.changes import node_groups
from kschedctl.whatif.scaleup_groups import (
    LeastSearch,
    Rejection,
    ScaleUpReport,
    reasons_message,
    scale_up_report,
)
from tests.builders import make_cluster, make_node, make_pod

GPU_TAINT = "nvidia.com/gpu"
runner = CliRunner()


def _nodes() -> list[Any]:
    """A general group (two nodes) and a GPU group with a taint (one node)."""
    general = [make_node(f"g-{i}").label("pool", "general").alloc(cpu="4") for i in (1, 2)]
    gpu = make_node("gpu-1").label("pool", "gpu").alloc(cpu="8").gpus(2).taint(GPU_TAINT, "true")
    return [*general, gpu]


def _cluster(ds_cpu: str = "500m", pending: list[Any] | None = None) -> Cluster:
    """The nodes nearly full (each general node with a DaemonSet pod of ``ds_cpu``), and the pending pods."""
    nodes = _nodes()
    bound = [make_pod(f"busy-{n}", "apps").req(cpu="3").node(n) for n in ("g-1", "g-2")]
    bound += [make_pod(f"ds-{n}", "kube-system").owner("DaemonSet", "agent").req(cpu=ds_cpu).node(n) for n in ("g-1", "g-2")]
    bound.append(make_pod("gpu-busy", "ml").gpus(2).toleration(GPU_TAINT, operator="Exists").node("gpu-1"))
    return make_cluster(nodes, [*bound, *(pending if pending is not None else _pending())])


def _pending() -> list[Any]:
    return [
        make_pod("trainer", "ml").req(cpu="1").gpus(1).toleration(GPU_TAINT, operator="Exists"),
        make_pod("picky", "apps").req(cpu="2").node_selector(pool="general").toleration(GPU_TAINT, operator="Exists"),
        make_pod("huge", "apps").req(cpu="64"),
        *(make_pod(f"web-{i}", "apps").req(cpu="1500m") for i in range(3)),
    ]


def _report(cluster: Cluster, max_new_nodes: int = 100) -> ScaleUpReport:
    pods = [p for p in cluster.pending_pods()]
    return scale_up_report(cluster, default_config(), None, pods, max_new_nodes=max_new_nodes)


def _verdicts(report: ScaleUpReport) -> dict[tuple[str, str], str | None]:
    """(group, pod) -> the rejecting plugin, None where one new node takes the pod."""
    out: dict[tuple[str, str], str | None] = {}
    for g in report.groups:
        out.update({(g.group, p): None for p in g.takes})
        out.update({(g.group, r.pod): r.plugin for r in g.rejects})
    return out


def test_groups_are_the_pool_label() -> None:
    assert [g.name for g in node_groups(_cluster())] == ["pool=general", "pool=gpu"]


@pytest.mark.parametrize(("pod", "general", "gpu"), [
    ("ml/trainer", "NodeResourcesFit", None),  # only the GPU group has GPUs; the pod tolerates its taint
    ("apps/picky", None, "NodeAffinity"),  # its nodeSelector excludes the GPU group's label
    ("apps/huge", "NodeResourcesFit", "TaintToleration"),  # too big for every group; the GPU taint comes first
    ("apps/web-0", None, "TaintToleration"),
])
def test_one_new_node_per_group(pod: str, general: str | None, gpu: str | None) -> None:
    verdicts = _verdicts(_report(_cluster()))
    assert verdicts[("pool=general", pod)] == general
    assert verdicts[("pool=gpu", pod)] == gpu


@pytest.mark.parametrize(("pod", "message"), [
    ("ml/trainer", "pod would trigger scale-up: pool=gpu"),
    ("apps/picky", "pod would trigger scale-up: pool=general"),
    ("apps/huge", "pod didn't trigger scale-up: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)"),
    ("apps/web-2", "pod would trigger scale-up: pool=general"),
])
def test_autoscaler_style_lines(pod: str, message: str) -> None:
    line = _report(_cluster()).pod(pod)
    assert line is not None and line.message == message


def test_rejections_keep_the_scheduler_reasons() -> None:
    gpu = next(g for g in _report(_cluster()).groups if g.group == "pool=gpu")
    picky = next(r for r in gpu.rejects if r.pod == "apps/picky")
    assert picky.reason == "node(s) didn't match Pod's node affinity/selector"
    assert gpu.template == "gpu-1" and gpu.size == 1


@pytest.mark.parametrize(("ds_cpu", "general_least"), [
    ("500m", 2),  # a new node has 3.5 CPUs left after its DaemonSet pod: picky + one web, then two webs
    ("1", 3),  # the DaemonSet copy leaves 3: picky alone, then two webs on one node, the third on another
])
def test_least_new_nodes_per_group(ds_cpu: str, general_least: int) -> None:
    groups = {g.group: g for g in _report(_cluster(ds_cpu)).groups}
    general, gpu = groups["pool=general"], groups["pool=gpu"]
    assert general.takes == ["apps/picky", "apps/web-0", "apps/web-1", "apps/web-2"]
    assert general.least == general_least and general.probes > 0
    assert gpu.takes == ["ml/trainer"] and gpu.least == 1


def test_none_up_to_the_max() -> None:
    general = next(g for g in _report(_cluster(), max_new_nodes=1).groups if g.group == "pool=general")
    assert general.least is None and general.searched_up_to == 1


def test_a_group_that_takes_no_pod_is_not_searched() -> None:
    cluster = _cluster(pending=[make_pod("huge", "apps").req(cpu="64")])
    for g in _report(cluster).groups:
        assert g.takes == [] and g.least is None and g.probes == 0


def test_the_search_leaves_the_cluster_as_it_was() -> None:
    cluster = _cluster()
    _report(cluster)
    assert all(not p.node_name and not p.nominated_node_name for p in cluster.pending_pods())
    assert len(cluster.nodes) == 3


class _Threshold(LeastSearch):
    """The search over a made-up answer: every count from ``needed`` on places the pods."""

    def __init__(self, needed: int) -> None:
        self.needed = needed
        self.probes = 0
        self.baseline: dict[int, set[str]] = {}
        self._seen: dict[int, bool] = {}

    def places_all(self, count: int) -> bool:
        if count not in self._seen:
            self.probes += 1
            self._seen[count] = count >= self.needed
        return self._seen[count]


@pytest.mark.parametrize("guess", [None, 1, 3, 7, 12, 40])
@pytest.mark.parametrize("needed", [*range(0, 15), 100])
def test_the_search_finds_the_least_count(needed: int, guess: int | None) -> None:
    search = _Threshold(needed)
    found = search.least(12, None if guess is None else lambda placed: guess)
    assert found == (needed if needed <= 12 else None)
    assert search.probes <= 10
    assert all(n <= 12 for n in search._seen)


def test_the_search_tries_no_count_past_the_max() -> None:
    search = _Threshold(3)
    assert search.least(0, lambda placed: 5) is None
    assert list(search._seen) == [0]


def test_the_prefilter_reads_the_whole_cluster() -> None:
    """Topology spreading counts the pods of every zone: a new node of the general group lands in its template's
    zone a, which already has two more of the app's pods than zone b."""
    zone = "topology.kubernetes.io/zone"
    nodes = [make_node("g-1").label("pool", "general").zone("a").alloc(cpu="4"),
             make_node("g-2").label("pool", "general").zone("b").alloc(cpu="4")]
    bound = [make_pod(f"x-{i}", "apps").label("app", "x").req(cpu="1").node("g-1") for i in range(3)]
    bound.append(make_pod("x-b", "apps").label("app", "x").req(cpu="3500m").node("g-2"))
    spread = make_pod("spread", "apps").label("app", "x").req(cpu="1").spread(1, zone, match_labels={"app": "x"})
    report = _report(make_cluster(nodes, [*bound, spread]))
    line = report.pod("apps/spread")
    assert line is not None
    assert line.message == "pod didn't trigger scale-up: 1 node(s) didn't match pod topology spread constraints"
    assert report.groups[0].rejects[0].plugin == "PodTopologySpread"


def test_a_pod_that_fits_alone_but_not_after_the_queue() -> None:
    """Each pod fits a general node (half a CPU free on each) when asked about alone; the loop places the
    first two, so the third is the one a scale-up is for (cluster-autoscaler too first places the pending
    pods that fit on the existing nodes)."""
    cluster = _cluster(pending=[make_pod(f"one-{i}", "apps").req(cpu="300m") for i in (1, 2, 3)])
    pods = cluster.pending_pods()
    report = scale_up_report(cluster, default_config(), None, pods, fits_now=[p.key for p in pods])
    for key in ("apps/one-1", "apps/one-2"):
        line = report.pod(key)
        assert line is not None and line.skipped == "fits an existing node now: no scale-up needed"
    third = report.pod("apps/one-3")
    assert third is not None and third.skipped is None and third.note is not None
    assert third.message == "pod would trigger scale-up: pool=general"
    general = next(g for g in report.groups if g.group == "pool=general")
    assert general.takes == ["apps/one-3"] and general.least == 1


def test_reasons_are_counted_over_groups_and_sorted() -> None:
    rs = [Rejection("a/p", "NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",)),
          Rejection("a/p", "NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",)),
          Rejection("a/p", "NodeResourcesFit", ("Insufficient cpu", "Insufficient memory"))]
    assert reasons_message(rs) == ("1 Insufficient cpu, 1 Insufficient memory, "
                                   "2 node(s) didn't match Pod's node affinity/selector")


# --------------------------------------------------------------------------- the command line


def _snapshot(tmp_path: Path) -> str:
    cluster = _cluster()
    items = [n.raw for n in cluster.nodes] + [p.raw for p in cluster.pods]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_explain_pending_scale_up_json(tmp_path: Path) -> None:
    r = runner.invoke(app, ["explain", "pending", "-A", "--snapshot", _snapshot(tmp_path), "--scale-up", "-o", "json"])
    assert r.exit_code == 1, r.output  # pods are pending: a scale-up that would place them changes nothing
    data = json.loads(r.stdout)
    assert set(data) == {"pods", "scaleUp"}
    scale = data["scaleUp"]
    assert set(scale) == {"maxNewNodes", "groups", "pods"} and scale["maxNewNodes"] == 100
    general = scale["groups"][0]
    assert set(general) == {"group", "template", "groupSize", "takes", "rejects", "least", "searchedUpTo", "probes"}
    assert general["group"] == "pool=general" and general["least"] == 2
    assert set(general["rejects"][0]) == {"pod", "plugin", "reason"}
    rows = {row["pod"]: row for row in data["pods"]}
    assert rows["apps/huge"]["scaleUp"]["message"].startswith("pod didn't trigger scale-up: ")
    assert rows["ml/trainer"]["scaleUp"]["groups"] == ["pool=gpu"]


def test_explain_pending_scale_up_table(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path)
    r = runner.invoke(app, ["explain", "pending", "-A", "--snapshot", snap, "--scale-up", "--max-new-nodes", "1"],
                      env={"COLUMNS": "100"})
    assert r.exit_code == 1, r.output
    assert "pod didn't trigger scale-up: 1 Insufficient cpu" in r.stdout
    assert "none up to 1" in r.stdout
    grouped = json.loads(runner.invoke(app, ["explain", "pending", "-A", "--snapshot", snap, "--scale-up", "--by", "cause",
                                             "-o", "json"]).stdout)
    assert set(grouped) == {"causes", "scaleUp"}
    md = runner.invoke(app, ["explain", "pending", "-A", "--snapshot", snap, "--scale-up", "-o", "markdown"]).stdout
    assert "### kschedctl: scale-up" in md and "| pool=general<br>(g-1)" in md


def test_explain_pending_without_the_flag_is_unchanged(tmp_path: Path) -> None:
    data = json.loads(runner.invoke(app, ["explain", "pending", "-A", "--snapshot", _snapshot(tmp_path), "-o", "json"]).stdout)
    assert isinstance(data, list) and all("scaleUp" not in row for row in data)


@pytest.mark.parametrize(("pod", "fragment"), [
    ("trainer", "pod would trigger scale-up: pool=gpu"),
    ("huge", "pod didn't trigger scale-up: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)"),
])
def test_explain_pod_scale_up(tmp_path: Path, pod: str, fragment: str) -> None:
    ns = "ml" if pod == "trainer" else "apps"
    snap = _snapshot(tmp_path)
    r = runner.invoke(app, ["explain", "pod", pod, "-n", ns, "--snapshot", snap, "--scale-up"], env={"COLUMNS": "100"})
    assert r.exit_code == 1, r.output
    assert fragment in r.stdout
    data = json.loads(runner.invoke(app, ["explain", "pod", pod, "-n", ns, "--snapshot", snap, "--scale-up", "-o", "json"]).stdout)
    assert data["scaleUp"]["message"] == fragment
    assert [g["group"] for g in data["scaleUp"]["groups"]] == ["pool=general", "pool=gpu"]


def test_explain_pod_that_fits_needs_no_scale_up(tmp_path: Path) -> None:
    pod = tmp_path / "small.yaml"
    pod.write_text(yaml.safe_dump(make_pod("small", "apps").req(cpu="100m").build().raw))
    r = runner.invoke(app, ["explain", "pod", "-f", str(pod), "--snapshot", _snapshot(tmp_path), "--scale-up", "-o", "json"])
    assert r.exit_code == 0, r.output
    scale = json.loads(r.stdout)["scaleUp"]
    assert scale["message"].startswith("fits an existing node now") and scale["groups"] == []


# --------------------------------------------------------------------------- the shared scale-up corpus

#: The shared corpus: next to the clone (``../shared``), or where the development machines keep it.
SCALEUP = next((d for d in (Path(__file__).parents[2] / "shared" / "scaleup" / "dev", Path("/work/shared/scaleup/dev"))
                if d.is_dir()), Path("/nonexistent"))
SEQUENCES = Path(__file__).parent / "sequences"


def test_least_agrees_with_the_scale_up_corpus() -> None:
    """Where one new node of T's group takes every pod of the source's pods.yaml, the group's least count is
    the corpus' least: the least N of ``--add-nodes T=N`` that places every pod (the real v1.35.4 loop's)."""
    from kschedctl.config import load_config
    from kschedctl.snapshot.loader import admit_pod, load_cluster, load_pods

    if not SCALEUP.is_dir():
        pytest.skip("the shared scale-up corpus is not next to the repository")
    compared = 0
    for scenario in sorted(SCALEUP.iterdir()):
        expected = json.loads((scenario / "scaleup.json").read_text())
        source = SEQUENCES / expected["source"]
        cluster = load_cluster([str(source / "cluster.yaml")])
        config = load_config(str(source / "config.yaml") if (source / "config.yaml").exists() else None)
        pods = load_pods(str(source / "pods.yaml"))
        for p in pods:
            admit_pod(cluster, p)
        group = next(g for g in node_groups(cluster) if any(n.name == expected["template"] for n in g.nodes))
        report = scale_up_report(cluster, config, None, pods, max_new_nodes=expected["leastSearchedUpTo"])
        found = next(g for g in report.groups if g.group == group.name)
        if len(found.takes) == len(pods):
            assert found.least == expected["least"], scenario.name
            compared += 1
    assert compared >= 15


@pytest.mark.parametrize(("args", "message"), [
    (["--max-new-nodes", "3"], "error: --max-new-nodes goes with --scale-up"),
    (["--scale-up", "--max-new-nodes", "-2"], "error: --max-new-nodes -2: give a count of nodes from 0 to 5000"),
])
def test_max_new_nodes_refused_on_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    for cmd in (["explain", "pending", "-A"], ["explain", "pod", "huge", "-n", "apps"]):
        r = runner.invoke(app, [*cmd, "--snapshot", _snapshot(tmp_path), *args])
        assert r.exit_code == 2 and r.stderr.strip() == message, r.output
