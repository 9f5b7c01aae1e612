"""A plugin that raises: its exception becomes that plugin's Error status where it happened.

kube-scheduler's plugins report failures by returning an Error status, which the framework
wraps per extension point (framework/runtime/framework.go). A Python plugin that raises gets the
same treatment: the cycle ends the way it ends for a returned error, with upstream's wrapping,
the partial trace is kept, the exit status is 1 (a result), and the output names the plugin,
the extension point and the node, pointing at --debug for the traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.config import parse_config
from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.trace import Trace
from kschedctl.plugins import registry_for
from kschedctl.snapshot.cluster import Cluster
from tests.builders import make_cluster, make_node, make_pod

MODULE = "tests.boom_plugin"
runner = CliRunner()


def config(enabled: list[str], **args: Any) -> dict[str, Any]:
    plugins: dict[str, Any] = {ep: {"enabled": [{"name": "Boom", **({"weight": 1} if ep == "score" else {})}]} for ep in enabled}
    if "bind" in enabled:
        plugins["bind"]["disabled"] = [{"name": "DefaultBinder"}]
    if "queueSort" in enabled:
        plugins["queueSort"]["disabled"] = [{"name": "PrioritySort"}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins, "pluginConfig": [{"name": "Boom", "args": args}]}],
    }


def cluster(*, nominated: bool = False) -> Cluster:
    """Three nodes with 4 cpus, each 3.5 taken by a low-priority pod (a preemption victim)."""
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="16Gi", pods="110") for i in (1, 2, 3)]
    pods = [make_pod(f"low-{i}").req(cpu="3500m").priority(0).node(f"n{i}") for i in (1, 2, 3)]
    if nominated:
        pods.append(make_pod("nominated").req(cpu="100m").priority(1000).nominated("n2"))
    return make_cluster(nodes, pods)


def run(cfg: dict[str, Any], cpu: str = "100m", *, priority: int = 100, nominated: bool = False) -> Trace:
    registry = registry_for([MODULE], entry_points=False)
    pod = make_pod("web").req(cpu=cpu).priority(priority).build()
    return explain_pod(cluster(nominated=nominated), pod, parse_config(cfg, "config.yaml", registry), registry)


BOOM = "ValueError: boom"


@pytest.mark.parametrize(
    ("point", "enabled", "extra", "error"),
    [
        ("preFilter", ["preFilter"], {}, f'running PreFilter plugin "Boom": {BOOM}'),
        ("addPod", ["preFilter"], {"nominated": True}, f'running AddPod on PreFilter plugin "Boom": {BOOM}'),
        ("filter", ["filter"], {}, f'running "Boom" filter plugin: {BOOM}'),
        ("preScore", ["preScore", "score"], {}, f'running PreScore plugin "Boom": {BOOM}'),
        ("score", ["score"], {}, f'running Score plugins: plugin "Boom" failed with: {BOOM}'),
        ("normalizeScore", ["score"], {}, f'running Normalize on Score plugins: plugin "Boom" failed with: {BOOM}'),
        ("reserve", ["reserve"], {}, f'running Reserve plugin "Boom": {BOOM}'),
        ("permit", ["permit"], {}, f'running Permit plugin "Boom": {BOOM}'),
        ("preBindPreFlight", ["preBind"], {}, f'running PreBindPreFlight "Boom": {BOOM}'),
        ("preBind", ["preBind"], {}, f'running PreBind plugin "Boom": {BOOM}'),
        ("bind", ["bind"], {}, f'running Bind plugin "Boom": {BOOM}'),
    ],
)
def test_an_exception_ends_the_cycle_as_a_returned_error_would(
    point: str, enabled: list[str], extra: dict[str, Any], error: str
) -> None:
    trace = run(config(enabled, points=[point]), **extra)
    assert trace.outcome == "error"
    assert trace.error == error
    assert [(f.plugin, f.exception) for f in trace.plugin_failures] == [("Boom", BOOM)]
    assert "Traceback" in trace.plugin_failures[0].traceback and "boom_plugin.py" in trace.plugin_failures[0].traceback
    assert any(n.startswith('plugin "Boom" raised ValueError: boom in ') for n in trace.notes)
    d = trace.to_dict()["details"]["pluginExceptions"]
    assert d[0]["plugin"] == "Boom" and d[0]["exception"] == BOOM


def test_the_same_error_returned_reads_the_same() -> None:
    """``how: none`` (the plugin returns None instead of a Status) is a bug reported the same way."""
    trace = run(config(["filter"], points=["filter"], how="none"))
    assert trace.error == 'running "Boom" filter plugin: TypeError: returned None, not a Status'


def test_filter_exception_is_that_nodes_verdict() -> None:
    trace = run(config(["filter"], points=["filter"], node="n2"))
    verdicts = {n: (v.status.code.label, v.status.plugin, v.status.reasons) for n, v in trace.filter.items()}
    assert verdicts["n2"] == ("Error", "Boom", [BOOM])  # what the plugin "returned"; the cycle's error is wrapped
    assert trace.error == f'running "Boom" filter plugin: {BOOM}'
    assert trace.plugin_failures[0].node == "n2"
    assert f'plugin "Boom" raised {BOOM} in Filter on node n2' in trace.notes[-1]


def test_score_exception_keeps_the_scores_returned_before_it() -> None:
    trace = run(config(["score"], points=["score"], node="n2"))
    assert trace.error == f'running Score plugins: plugin "Boom" failed with: {BOOM}'
    assert trace.score["Boom"].raw == {"n1": 10}  # n1 was scored, n2 raised, n3 was never asked
    assert trace.score["NodeResourcesFit"].raw.keys() == {"n1", "n2"}
    assert trace.plugin_failures[0].node == "n2"


def test_out_of_range_score_keeps_the_raw_scores_and_names_the_node() -> None:
    trace = run(config(["score"], points=["score"], node="n3", how="score150"))
    assert trace.error == (
        'applying score defaultWeights on Score plugins: plugin "Boom" returns an invalid score 150, '
        "it should in the range of [0, 100] after normalizing"
    )
    assert trace.score["Boom"].raw == {"n1": 10, "n2": 10, "n3": 150}
    assert "Boom gave node n3 the score 150, outside [0, 100]" in trace.notes
    assert trace.totals == {}


def test_post_filter_exception_is_its_error_status() -> None:
    trace = run(config(["postFilter"], points=["postFilter"]), cpu="1", priority=0)  # DefaultPreemption cannot help
    assert trace.post_filter is not None
    assert (trace.post_filter.plugin, trace.post_filter.status.code.label) == ("Boom", "Error")
    assert trace.post_filter.status.reasons == [BOOM]
    assert trace.fit_error is not None and trace.fit_error.endswith(BOOM)


def test_remove_pod_exception_fails_the_preemption_dry_run() -> None:
    trace = run(config(["preFilter"], points=["removePod"]), cpu="1")
    assert trace.post_filter is not None and trace.post_filter.status.code.label == "Error"
    assert f'running RemovePod on PreFilter plugin "Boom": {BOOM}' in trace.post_filter.status.message()
    assert {f.extension_point for f in trace.plugin_failures} == {"RemovePod"}


def test_pre_enqueue_exception_gates_the_pod() -> None:
    trace = run(config(["preEnqueue"], points=["preEnqueue"]))
    assert trace.outcome == "gated"
    last = trace.pre_enqueue[-1]
    assert (last.plugin, last.status.code.label, last.status.reasons) == ("Boom", "Error", [BOOM])


def test_unreserve_and_post_bind_exceptions_are_recorded_and_the_cycle_goes_on() -> None:
    trace = run(config(["reserve", "permit"], points=["unreserve"], reject=["permit"]))
    assert trace.fit_error == "0/1 nodes are available: 1 Boom says no."
    assert [f.extension_point for f in trace.plugin_failures] == ["Unreserve"]
    trace = run(config(["postBind"], points=["postBind"]))
    assert trace.outcome == "scheduled"
    assert trace.post_bind == [{"plugin": "Boom", "error": BOOM}]


def test_queue_sort_exception_fails_the_simulation(tmp_path: Path) -> None:
    files = write_inputs(tmp_path, config(["queueSort"], points=["queueSort"]))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all([make_pod(n).req(cpu="100m").raw for n in ("b", "a")]))
    r = invoke("simulate", "-f", pods, "--snapshot", files["cluster"], "--config", files["config"], "-o", "json")
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["error"] == f'running QueueSort plugin "Boom": {BOOM}'
    assert [p["pod"] for p in out["placements"]] == ["default/b", "default/a"]  # the order given
    assert 'plugin "Boom" raised ValueError: boom in QueueSort' in r.stderr


# the command line ---------------------------------------------------------------------------------


def json_document(stdout: str) -> Any:
    """The JSON a command printed (``check`` may follow it with its "N passed, M failed" line)."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return json.loads(stdout.rstrip().rsplit("\n", 1)[0])


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args if a != ""] + ["--plugin-module", MODULE])


def write_inputs(tmp_path: Path, cfg: dict[str, Any]) -> dict[str, Path]:
    c = cluster()
    objects = [n.raw for n in c.nodes] + [p.raw for p in c.pods]
    paths = {"cluster": tmp_path / "cluster.yaml", "config": tmp_path / "config.yaml", "pod": tmp_path / "pod.yaml"}
    paths["cluster"].write_text(yaml.safe_dump_all(objects))
    paths["config"].write_text(yaml.safe_dump(cfg))
    paths["pod"].write_text(yaml.safe_dump(make_pod("web").req(cpu="100m").priority(100).raw))
    return paths


def explain(tmp_path: Path, cfg: dict[str, Any], *extra: str) -> Any:
    f = write_inputs(tmp_path, cfg)
    return invoke("explain", "pod", "-f", f["pod"], "--snapshot", f["cluster"], "--config", f["config"], *extra)


def test_cli_score_exception(tmp_path: Path) -> None:
    r = explain(tmp_path, config(["score"], points=["score"], node="n2"))
    assert r.exit_code == 1, r.output
    assert f'default/web: scheduling cycle error: running Score plugins: plugin "Boom" failed with: {BOOM}' in r.stdout
    assert "internal error" not in r.output
    assert (
        f'note: plugin "Boom" raised {BOOM} in Score on node n2 (a bug in the plugin); run with --debug for the traceback'
    ) in r.stderr.splitlines()
    assert "Traceback" not in r.output


def test_cli_filter_exception_json(tmp_path: Path) -> None:
    r = explain(tmp_path, config(["filter"], points=["filter"], node="n1"), "-o", "json")
    assert r.exit_code == 1, r.output
    t = json.loads(r.stdout)
    assert t["outcome"] == "error"
    assert t["filter"]["n1"] == {"code": "Error", "plugin": "Boom", "reasons": [BOOM]}
    assert t["error"] == t["fitError"] == f'running "Boom" filter plugin: {BOOM}'
    assert t["details"]["pluginExceptions"] == [
        {"plugin": "Boom", "extensionPoint": "Filter", "node": "n1", "exception": BOOM}
    ]


def test_cli_debug_prints_the_traceback(tmp_path: Path) -> None:
    f = write_inputs(tmp_path, config(["filter"], points=["filter"]))
    r = runner.invoke(
        app,
        ["--debug", "explain", "pod", "-f", str(f["pod"]), "--snapshot", str(f["cluster"]), "--config", str(f["config"]),
         "--plugin-module", MODULE],
    )
    assert r.exit_code == 1, r.output
    assert "Traceback (most recent call last)" in r.stderr
    assert 'in misbehave\n    raise ValueError("boom")' in r.stderr


def test_cli_out_of_range_score_table(tmp_path: Path) -> None:
    r = explain(tmp_path, config(["score"], points=["score"], node="n1", how="score150"))
    assert r.exit_code == 1, r.output
    assert "returns an invalid score 150" in r.stdout
    assert "note: Boom gave node n1 the score 150, outside [0, 100]" in r.output  # a note of the trace
    score_table = r.stdout[r.stdout.index("Score (raw"):]
    row = next(line for line in score_table.splitlines() if line.startswith("│ n1 "))
    assert "150 ✗" in row  # the raw score returned, not an empty table


def test_cli_every_command_reports_the_plugin_error(tmp_path: Path) -> None:
    cfg = config(["score"], points=["score"])
    f = write_inputs(tmp_path, cfg)
    pending = tmp_path / "with-pending.yaml"
    pending.write_text(f["cluster"].read_text() + "---\n" + f["pod"].read_text())
    r = invoke("explain", "pending", "-A", "--snapshot", pending, "--config", f["config"], "-o", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)[0]["outcome"] == "error"
    r = invoke("diff-profiles", "-f", f["pod"], "--snapshot", f["cluster"], "--config", f["config"], "-o", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["pods"][0]["b"]["outcome"] == "error"
    r = invoke("simulate", "-f", f["pod"], "--snapshot", f["cluster"], "--config", f["config"], "-o", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["placements"][0]["error"].startswith('running Score plugins: plugin "Boom"')
    scenario = tmp_path / "scenario"
    scenario.mkdir()
    for key, name in (("cluster", "cluster.yaml"), ("config", "config.yaml"), ("pod", "pod.yaml")):
        (scenario / name).write_text(f[key].read_text())
    (scenario / "expected.yaml").write_text("selected: {candidates: [n1]}\n")
    r = invoke("check", scenario, "-o", "json")
    assert r.exit_code == 1, r.output
    result = json_document(r.stdout)[0]
    assert result["actual"]["error"].startswith('running Score plugins: plugin "Boom" failed with')
    assert 'note: plugin "Boom" raised ValueError: boom in Score' in r.stderr
