"""``kschedctl diff-profiles``: the same pods under two configurations or two profiles of one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import default_config, parse_config
from kschedctl.errors import UsageError
from kschedctl.render.diff import DIFF_WIDE_HINT
from kschedctl.whatif.diff import Side, diff_pods
from tests.builders import make_cluster, make_node, make_pod

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CART = str(ROOT / "fixtures" / "demo" / "cart.yaml")
PROFILES = ROOT / "profiles"
runner = CliRunner()

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def packing_profile(name: str = "default-scheduler") -> dict[str, Any]:
    return {
        "schedulerName": name,
        "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
        "pluginConfig": [{
            "name": "NodeResourcesFit",
            "args": {"scoringStrategy": {"type": "MostAllocated",
                                         "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}},
        }],
    }


def packing_config() -> Any:
    return parse_config({**API, "profiles": [packing_profile()]}, "packing.yaml")


def two_nodes() -> Any:
    return make_cluster(
        [make_node("busy").alloc(cpu="4", memory="8Gi", pods="110"),
         make_node("empty").alloc(cpu="4", memory="8Gi", pods="110")],
        [make_pod("existing").node("busy").req(cpu="2", memory="4Gi")],
    )


# --------------------------------------------------------------------------- core


def test_spreading_versus_packing_changes_the_node() -> None:
    cluster = two_nodes()
    pod = make_pod("web").req(cpu="1", memory="1Gi").build()
    report = diff_pods(cluster, Side("A", "default", default_config()), Side("B", "packing", packing_config()),
                       [(pod, None)])
    (d,) = report.pods
    assert (d.a.node, d.b.node, d.change) == ("empty", "busy", "node-changed")
    assert d.differs and report.differs
    assert d.feasibility == []
    assert [s.node for s in d.scores] == ["empty", "busy"]
    assert [s.selected_by for s in d.scores] == [["A"], ["B"]]
    fit = next(p for p in d.scores[1].plugins if p.plugin == "NodeResourcesFit")
    assert fit.a is not None and fit.b is not None
    assert (fit.a["weight"], fit.b["weight"]) == (1, 5)
    assert fit.delta == fit.b["weighted"] - fit.a["weighted"] > 0
    total = d.scores[1]
    assert total.delta == (total.total_b or 0) - (total.total_a or 0)
    assert report.summary()["nodeChanged"] == 1


def test_identical_sides_do_not_differ() -> None:
    cluster = two_nodes()
    pods = [(make_pod(f"p{i}").req(cpu="500m").build(), None) for i in range(3)]
    report = diff_pods(cluster, Side("A", "a", default_config()), Side("B", "b", default_config()), pods)
    assert not report.differs
    assert report.summary()["unchanged"] == 3
    assert all(s.delta == 0 for d in report.pods for s in d.scores)


def test_disabling_a_filter_makes_a_pod_schedulable_and_lists_the_nodes() -> None:
    cluster = make_cluster([make_node("tainted").taint("dedicated", "gpu"), make_node("cordoned").unschedulable()])
    no_taints = parse_config(
        {**API, "profiles": [{"schedulerName": "default-scheduler",
                              "plugins": {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}}]},
        "no-taints.yaml",
    )
    pod = make_pod("p").build()
    report = diff_pods(cluster, Side("A", "default", default_config()), Side("B", "no taints", no_taints), [(pod, None)])
    (d,) = report.pods
    assert d.change == "becomes-schedulable"
    assert d.a.fit_error is not None and d.a.fit_error.startswith("0/2 nodes are available:")
    assert d.b.node == "tainted"
    (change,) = d.feasibility
    assert (change.node, change.a, change.b) == ("tainted", "TaintToleration: node(s) had untolerated taint(s)", "feasible")
    assert (change.feasible_a, change.feasible_b) == (False, True)
    assert report.summary()["becomeSchedulable"] == 1
    # and the other way round
    back = diff_pods(cluster, Side("A", "no taints", no_taints), Side("B", "default", default_config()), [(pod, None)])
    assert back.pods[0].change == "becomes-unschedulable"


def test_profiles_of_one_configuration_and_pods_without_a_profile() -> None:
    cfg = parse_config({**API, "profiles": [{"schedulerName": "default-scheduler"}, packing_profile("packer")]}, "two.yaml")
    cluster = two_nodes()
    report = diff_pods(cluster, Side("A", "x", cfg, "default-scheduler"), Side("B", "x", cfg, "packer"),
                       [(make_pod("web").req(cpu="1").build(), None)])
    assert report.pods[0].change == "node-changed"
    assert (report.pods[0].a.profile, report.pods[0].b.profile) == ("default-scheduler", "packer")
    # a pod for another scheduler: ignored by one side -> outcome changes; by both -> skipped with a note
    other = make_pod("other").scheduler("packer").build()
    one_sided = diff_pods(cluster, Side("A", "default", default_config()), Side("B", "two", cfg), [(other, None)])
    assert one_sided.pods[0].change == "outcome-changed"
    assert one_sided.pods[0].a.outcome == "ignored"
    assert one_sided.pods[0].a.note is not None
    nobody = make_pod("nobody").scheduler("nobody").build()
    skipped = diff_pods(cluster, Side("A", "a", default_config()), Side("B", "b", cfg), [(nobody, None)])
    assert skipped.pods == []
    assert 'neither side has a profile "nobody"' in skipped.notes[0]
    with pytest.raises(UsageError):
        diff_pods(cluster, Side("A", "a", default_config()), Side("B", "b", cfg), [(nobody, None)], strict=True)


def test_a_bound_pod_is_compared_without_its_own_placement() -> None:
    cluster = make_cluster([make_node("n1").alloc(cpu="1", memory="1Gi", pods="110")],
                           [make_pod("big").node("n1").req(cpu="1")])
    bound = cluster.pod("default", "big")
    assert bound is not None
    report = diff_pods(cluster, Side("A", "a", default_config()), Side("B", "b", packing_config()), [(bound, None)])
    assert report.pods[0].a.node == "n1"  # it fits once its own requests are out of the way
    assert any("bound to n1" in n for n in report.pods[0].notes)


# --------------------------------------------------------------------------- command line


def test_cli_bin_packing_profile_changes_the_demo_pod() -> None:
    r = invoke("diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
               "--config", str(PROFILES / "default.yaml"), "--config", str(PROFILES / "bin-packing.yaml"), "-o", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    (p,) = data["pods"]
    assert p["change"] == "node-changed"
    assert p["a"]["node"] != p["b"]["node"]
    chosen_by_b = next(s for s in p["scores"] if "B" in s["selectedBy"])
    fit = next(x for x in chosen_by_b["plugins"] if x["plugin"] == "NodeResourcesFit")
    assert fit["delta"] > 0
    assert data["a"]["label"].endswith("default.yaml") and data["b"]["label"].endswith("bin-packing.yaml")


def test_cli_table_output() -> None:
    r = invoke("diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
               "--config", str(PROFILES / "bin-packing.yaml"))
    assert r.exit_code == 1, r.output
    assert "A: default configuration of kube-scheduler v1.35" in r.output
    assert "Scores on the chosen nodes" not in r.output  # the table is -o wide's
    out = " ".join(r.output.split())
    assert ("Scores (weighted, A → B): memory-b0 (chosen by A) 873 → 683 (-190); general-a2 (chosen by B) 825 → 941 "
            "(+116)") in out
    assert "moved most by: NodeResourcesFit (w1→5) +10, +316; PodTopologySpread (w2→–) -200, -200" in out
    assert "1 pod: 1 change node, 0 become unschedulable, 0 become schedulable, 0 unchanged" in r.output
    assert r.output.splitlines()[-1] == DIFF_WIDE_HINT
    wide = invoke("diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
                  "--config", str(PROFILES / "bin-packing.yaml"), "-o", "wide")
    assert "Scores on the chosen nodes" in wide.output and DIFF_WIDE_HINT not in wide.output


def test_cli_same_configuration_exits_0() -> None:
    r = invoke("diff-profiles", "--pending", "--snapshot", DEMO,
               "--config", str(PROFILES / "default.yaml"), "--config", str(PROFILES / "default.yaml"))
    assert r.exit_code == 0, r.output
    assert "6 pods: 0 change node, 0 become unschedulable, 0 become schedulable, 6 unchanged" in r.output


def test_cli_pending_pods_summary() -> None:
    r = invoke("diff-profiles", "--pending", "--snapshot", DEMO, "--config", str(PROFILES / "bin-packing.yaml"), "-o", "yaml")
    assert r.exit_code == 1
    data = yaml.safe_load(r.output)
    assert data["summary"]["pods"] == 6
    assert {p["pod"] for p in data["pods"]} >= {"shop/web-7d9f-pending", "shop/canary-gated", "ml/train-pending"}
    gated = next(p for p in data["pods"] if p["pod"] == "shop/canary-gated")
    assert (gated["a"]["outcome"], gated["change"]) == ("gated", "same")
    r = invoke("diff-profiles", "--pending", "-n", "ml", "--snapshot", DEMO, "--config", str(PROFILES / "bin-packing.yaml"),
               "-o", "json")
    assert {p["pod"] for p in json.loads(r.output)["pods"]} == {"ml/train-pending", "ml/notebook-pending"}


def test_cli_two_profiles_of_one_configuration(tmp_path: Path) -> None:
    cfg = tmp_path / "two.yaml"
    cfg.write_text(yaml.safe_dump({**API, "profiles": [{"schedulerName": "default-scheduler"}, packing_profile("packer")]}))
    r = invoke("diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "--config", str(cfg),
               "--profile", "default-scheduler", "--profile", "packer", "-o", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert (data["a"]["profile"], data["b"]["profile"]) == ("default-scheduler", "packer")
    assert data["pods"][0]["b"]["profile"] == "packer"


def test_cli_becomes_schedulable(tmp_path: Path) -> None:
    cfg = tmp_path / "no-taints.yaml"
    cfg.write_text(yaml.safe_dump({**API, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}}]}))
    r = invoke("diff-profiles", "notebook-pending", "-n", "ml", "--snapshot", DEMO, "--config", str(cfg))
    assert r.exit_code == 1
    assert "becomes schedulable" in r.output
    out = " ".join(r.stdout.split())
    assert ("Filter verdict changes on gpu-a0, gpu-b0: A TaintToleration: node(s) had untolerated taint(s) → B "
            "feasible") in out
    assert "A FitError: 0/12 nodes are available" in out  # A's outcome differs from B's: its FitError stays
    assert "Scores (weighted, A → B): gpu-b0 (chosen by B) – → 152" in out and "moved most by" not in out
    r = invoke("diff-profiles", "notebook-pending", "-n", "ml", "--snapshot", DEMO, "--config", str(cfg), "-o", "wide")
    assert "Filter verdicts that change" in r.output
    r = invoke("diff-profiles", "notebook-pending", "-n", "ml", "--snapshot", DEMO, "--config", str(cfg), "-o", "markdown")
    assert r.output.startswith("### kschedctl diff-profiles")
    assert "| gpu-a0 | TaintToleration: node(s) had untolerated taint(s) | feasible |" in r.output.replace("  ", " ")


def test_cli_workload_file_uses_one_representative_pod() -> None:
    r = invoke("diff-profiles", "-f", CART, "--snapshot", DEMO, "--config", str(PROFILES / "bin-packing.yaml"), "-o", "json")
    assert r.exit_code in (0, 1), r.output
    (p,) = json.loads(r.output)["pods"]
    assert (p["pod"], p["workload"]) == ("shop/cart-0", "Deployment shop/cart")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["web-7d9f-pending", "-n", "shop"], "nothing to compare"),
        (["web-7d9f-pending", "-n", "shop", "--pending", "-c", "profiles/default.yaml"], "give exactly one of"),
        (["nope", "-n", "shop", "-c", "profiles/default.yaml"], 'pod "nope" not found in namespace "shop"'),
        (["web-7d9f-pending", "-n", "shop", "-c", "profiles/default.yaml", "-p", "nobody"], 'has no profile "nobody"'),
        (["web-7d9f-pending", "-n", "shop", "-c", "a", "-c", "b", "-c", "c"], "at most two --config"),
    ],
)
def test_cli_usage_errors(args: list[str], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    r = invoke("diff-profiles", *args, "--snapshot", DEMO)
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_sharing_one_snapshot_gives_what_explain_gives_for_each_pod() -> None:
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.snapshot.loader import load_cluster

    cluster = load_cluster([DEMO])
    pending = cluster.pending_pods()
    report = diff_pods(cluster, Side("A", "a", default_config()), Side("B", "b", packing_config()),
                       [(p, None) for p in pending] * 2)  # every pod twice: nothing leaks between cycles
    assert len(report.pods) == 2 * len(pending)
    for pod, d in zip(pending * 2, report.pods, strict=True):
        ta = explain_pod(cluster, pod, default_config())
        tb = explain_pod(cluster, pod, packing_config())
        assert (d.a.outcome, d.a.node, d.a.candidates) == (ta.outcome, ta.selected_node, ta.candidates if ta.schedulable else [])
        assert (d.b.outcome, d.b.node, d.b.fit_error) == (tb.outcome, tb.selected_node, tb.fit_error)
