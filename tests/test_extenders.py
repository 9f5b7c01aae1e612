"""Scheduler extenders named in the configuration, called over HTTP on loopback.

A small extender server (tests/extender_server.py) runs on 127.0.0.1 for each test;
kschedctl is driven through the CLI, and the assertions are on the JSON trace: what
was sent (ExtenderArgs), how filter answers become node statuses and FitError
reasons, how prioritize scores are scaled by weight and 100/10, that an ignorable
extender's failure is skipped and any other failure ends the cycle in an error, and
that the bind verb is never called.

tests/extenders/ holds scenarios whose expected.json the real v1.35.4 framework wrote
with the extender of their extender.json served; each runs through ``kschedctl check``'s
runner against the test server serving the same extender.json.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.runner import discover_scenarios, run_scenario
from kschedctl.cli.main import app
from kschedctl.framework.extender import HTTPExtender
from kschedctl.framework.profile import Extender
from kschedctl.snapshot.model import Pod
from tests.extender_server import ExtenderServer

ROOT = Path(__file__).parent.parent
FIX = ROOT / "fixtures" / "extenders"
CLUSTER = str(FIX / "cluster.yaml")
WEB = str(FIX / "web.yaml")
BIG = str(FIX / "big.yaml")
runner = CliRunner()
SCENARIOS = discover_scenarios([str(Path(__file__).parent / "extenders")])


def write_config(tmp_path: Path, *extenders: dict[str, Any]) -> str:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": list(extenders),
    }
    p = tmp_path / "config.yaml"
    p.write_text(yaml.safe_dump(doc))
    return str(p)


def explain(pod: str, config: str | None, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["explain", "pod", "-f", pod, "--snapshot", CLUSTER, "-o", "json", *extra]
    if config:
        args += ["--config", config]
    r = runner.invoke(app, args)
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, json.loads(r.stdout)


def calls(trace: dict[str, Any], verb: str) -> list[dict[str, Any]]:
    return [c for c in trace["extenders"] if c["verb"] == verb]


# filter ------------------------------------------------------------------------------------------


def test_filter_node_cache_capable_sends_node_names_and_folds_failures(tmp_path: Path) -> None:
    def flt(args: Any) -> tuple[int, Any]:
        return 200, {
            "NodeNames": ["node-c"],
            "FailedNodes": {"node-a": "no license for node-a"},
            "FailedAndUnresolvableNodes": {"node-b": "rack drained"},
            "Error": "",
        }

    with ExtenderServer({"filter": flt}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True})
        code, t = explain(WEB, cfg)
    assert code == 0
    path, sent = srv.requests[0]
    assert path == "/scheduler/filter"
    assert sent["Nodes"] is None
    assert sent["NodeNames"] == ["node-a", "node-c", "node-b"]  # node-tree order: zones interleaved
    assert sent["Pod"]["metadata"]["name"] == "web"
    # the plugins passed every node; the extender left one, and its verdicts (no plugin) are the Filter's
    assert t["filter"] == {
        "node-a": {"code": "Unschedulable", "reasons": ["no license for node-a"]},
        "node-c": {"code": "Success"},
        "node-b": {"code": "UnschedulableAndUnresolvable", "reasons": ["rack drained"]},
    }
    assert t["feasibleNodes"] == ["node-c"]
    assert t["selected"] == {"maxScore": 0, "candidates": ["node-c"]}
    (rec,) = calls(t, "filter")
    assert rec["outcome"] == "called"
    assert rec["url"] == srv.url + "/filter"
    assert rec["passed"] == ["node-c"]
    assert rec["failedNodes"] == {"node-a": "no license for node-a"}
    assert rec["failedAndUnresolvableNodes"] == {"node-b": "rack drained"}


def test_filter_rejecting_every_node_gives_the_extender_reasons_in_fit_error(tmp_path: Path) -> None:
    def flt(args: Any) -> tuple[int, Any]:
        # lower-case field names: Go's decoder matches them case-insensitively
        return 200, {
            "nodenames": [],
            "failednodes": {"node-a": "no license", "node-b": "no license", "node-c": "rack drained"},
            "failedAndUnresolvableNodes": {"node-c": "rack drained"},
        }

    with ExtenderServer({"filter": flt}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True})
        code, t = explain(WEB, cfg)
    assert code == 1
    assert t["outcome"] == "unschedulable"
    assert t["feasibleNodes"] == []
    # node-c is in both maps: the unresolvable verdict wins, so preemption does not consider it
    assert t["fitError"].startswith("0/3 nodes are available: 1 rack drained, 2 no license.")
    assert t["details"]["postFilter"]["potentialNodes"] == ["node-a", "node-b"]


def test_filter_with_full_nodes_returns_fresh_node_infos_without_pods(tmp_path: Path) -> None:
    def flt(args: Any) -> tuple[int, Any]:
        items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] != "node-c"]
        return 200, {"Nodes": {"metadata": {}, "items": items}}

    _, base = explain(WEB, None)
    with ExtenderServer({"filter": flt}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter"})
        _, t = explain(WEB, cfg)
    _, sent = srv.requests[0]
    assert sent["NodeNames"] is None
    assert [n["metadata"]["name"] for n in sent["Nodes"]["items"]] == ["node-a", "node-c", "node-b"]
    assert t["feasibleNodes"] == ["node-a", "node-b"]
    assert calls(t, "filter")[0]["nodeInfosRebuilt"] is True
    assert any("without their pods" in n for n in t["notes"])
    # NodeResourcesFit scores the rebuilt nodes as if empty: higher than with their filler pods
    fit = t["score"]["NodeResourcesFit"]["raw"]
    assert fit["node-a"] > base["score"]["NodeResourcesFit"]["raw"]["node-a"]


def test_extenders_run_in_order_each_on_what_the_previous_left(tmp_path: Path) -> None:
    def first(args: Any) -> tuple[int, Any]:
        return 200, {"NodeNames": ["node-a", "node-b"], "FailedNodes": {"node-c": "first says no"}}

    def second(args: Any) -> tuple[int, Any]:
        assert args["NodeNames"] == ["node-a", "node-b"]
        return 200, {"NodeNames": ["node-b"], "FailedNodes": {"node-a": "second says no"}}

    with ExtenderServer({"first": first, "second": second}) as srv:
        cfg = write_config(
            tmp_path,
            {"urlPrefix": srv.url, "filterVerb": "first", "nodeCacheCapable": True},
            {"urlPrefix": srv.url + "/", "filterVerb": "second", "nodeCacheCapable": True},
        )
        _, t = explain(WEB, cfg)
    assert srv.verbs() == ["first", "second"]
    assert t["feasibleNodes"] == ["node-b"]


def test_non_ignorable_extenders_are_called_before_ignorable_ones(tmp_path: Path) -> None:
    def keep_all(args: Any) -> tuple[int, Any]:
        return 200, {"NodeNames": args["NodeNames"]}

    with ExtenderServer({"a": keep_all, "b": keep_all, "c": keep_all}) as srv:
        cfg = write_config(
            tmp_path,
            {"urlPrefix": srv.url, "filterVerb": "a", "nodeCacheCapable": True, "ignorable": True},
            {"urlPrefix": srv.url, "filterVerb": "b", "nodeCacheCapable": True},
            {"urlPrefix": srv.url, "filterVerb": "c", "nodeCacheCapable": True, "ignorable": True},
        )
        _, t = explain(WEB, cfg)
    assert srv.verbs() == ["b", "a", "c"]
    assert [c["url"].rsplit("/", 1)[-1] for c in t["extenders"]] == ["b", "a", "c"]


# failures -----------------------------------------------------------------------------------------


def test_ignorable_extender_failure_is_skipped(tmp_path: Path) -> None:
    with ExtenderServer({"filter": lambda a: (500, {"oops": True})}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter", "ignorable": True})
        code, t = explain(WEB, cfg)
    assert code == 0
    assert t["error"] is None
    assert t["feasibleNodes"] == ["node-a", "node-b", "node-c"]
    (rec,) = calls(t, "filter")
    assert rec["outcome"] == "ignored"
    assert rec["error"] == f"failed filter with extender at URL {srv.url}/filter, code 500"
    assert any("ignorable" in n for n in t["notes"])


def test_non_ignorable_extender_failure_ends_the_cycle_in_error(tmp_path: Path) -> None:
    with ExtenderServer({"filter": lambda a: (500, {})}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter"})
        code, t = explain(WEB, cfg)
    assert code == 1
    assert t["outcome"] == "error"
    assert t["error"] == f"failed filter with extender at URL {srv.url}/filter, code 500"
    # kube-scheduler writes the error into the PodScheduled condition (reason SchedulerError)
    assert t["fitError"] == t["error"]
    assert t["selected"] is None


def test_extender_error_field_is_the_cycle_error(tmp_path: Path) -> None:
    with ExtenderServer({"filter": lambda a: (200, {"Error": "license server down"})}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter"})
        _, t = explain(WEB, cfg)
    assert t["error"] == "license server down"


def test_filtered_node_not_in_the_input_is_an_error(tmp_path: Path) -> None:
    with ExtenderServer({"filter": lambda a: (200, {"NodeNames": ["node-z"]})}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True})
        _, t = explain(WEB, cfg)
    assert t["error"] == f'extender "{srv.url}" claims a filtered node "node-z" which is not found in the input node list'


def test_unreachable_extender(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x"
    cfg = write_config(tmp_path, {"urlPrefix": url, "filterVerb": "filter"})
    _, t = explain(WEB, cfg)
    assert t["error"].startswith(f'Post "{url}/filter": ')
    assert "refused" in t["error"]


def test_timeout_of_an_ignorable_extender(tmp_path: Path) -> None:
    answered = threading.Event()

    def silent(args: Any) -> tuple[int, Any]:
        answered.wait()  # no answer until kschedctl has given up: the limit races nothing
        return 200, {"NodeNames": []}

    with ExtenderServer({"filter": silent}) as srv:
        cfg = write_config(
            tmp_path,
            {"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True, "ignorable": True, "httpTimeout": "200ms"},
        )
        try:
            code, t = explain(WEB, cfg)
        finally:
            answered.set()
    assert code == 0
    (rec,) = calls(t, "filter")
    assert rec["outcome"] == "ignored"
    assert "Client.Timeout exceeded after 0.2s" in rec["error"]


# prioritize -----------------------------------------------------------------------------------------


def test_prioritize_scores_are_scaled_by_weight_and_ten(tmp_path: Path) -> None:
    def prio(args: Any) -> tuple[int, Any]:
        return 200, [{"Host": "node-a", "Score": 2}, {"Host": "node-b", "Score": 9}, {"Host": "node-c", "Score": 9}]

    _, base = explain(WEB, None)
    with ExtenderServer({"prioritize": prio}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "prioritizeVerb": "prioritize", "weight": 3, "nodeCacheCapable": True})
        code, t = explain(WEB, cfg)
    assert code == 0
    for node, added in (("node-a", 60), ("node-b", 270), ("node-c", 270)):
        assert t["totals"][node] == base["totals"][node] + added
    (rec,) = calls(t, "prioritize")
    assert rec["weight"] == 3
    assert rec["scores"] == {"node-a": 2, "node-b": 9, "node-c": 9}
    assert rec["weighted"] == {"node-a": 60, "node-b": 270, "node-c": 270}
    assert t["selected"]["candidates"] == ["node-b", "node-c"]
    assert "breaks the tie at random" in t["details"]["tieBreak"]
    assert t["possibleNodes"] == ["node-b", "node-c"]
    assert t["orderDependence"]["tie"]["random"] == "extender"
    assert t["orderDependence"]["line"].startswith("Chance decides: 2 nodes tie")
    assert [c["verb"] for c in t["extenders"]].count("prioritize") == 1  # the order assessment's calls are not the cycle's
    assert t["score"].keys() == base["score"].keys()  # the plugins' table is unchanged


def test_prioritize_failure_gives_no_score_even_when_not_ignorable(tmp_path: Path) -> None:
    _, base = explain(WEB, None)
    with ExtenderServer({"prioritize": lambda a: (503, b"busy")}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "prioritizeVerb": "prioritize", "weight": 1})
        code, t = explain(WEB, cfg)
    assert code == 0
    assert t["totals"] == base["totals"]
    assert calls(t, "prioritize")[0]["outcome"] == "ignored"
    assert "breaks the tie at random" not in (t["details"]["tieBreak"] or "")


def test_extender_without_interest_is_not_called(tmp_path: Path) -> None:
    with ExtenderServer({"filter": lambda a: (200, {"NodeNames": []})}) as srv:
        cfg = write_config(
            tmp_path,
            {
                "urlPrefix": srv.url,
                "filterVerb": "filter",
                "nodeCacheCapable": True,
                "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
            },
        )
        code, t = explain(WEB, cfg)
    assert srv.requests == []
    assert code == 0
    assert calls(t, "filter")[0]["outcome"] == "not interested"


def _fit_ignored(cfg: Any, profile: int = 0) -> list[str]:
    return list(cfg.profiles[profile].args("NodeResourcesFit").ignored_resources)


def test_managed_resources_ignored_by_scheduler_replace_fit_ignored_resources_in_every_profile(tmp_path: Path) -> None:
    from kschedctl.config import load_config

    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/x"]}}]},
            {"schedulerName": "b"},
        ],
        "extenders": [
            {"urlPrefix": "http://127.0.0.1:1/e", "filterVerb": "f",
             "managedResources": [{"name": "example.com/fpga", "ignoredByScheduler": True}, {"name": "example.com/gpu"}]},
            {"urlPrefix": "http://127.0.0.1:1/f", "filterVerb": "f",
             "managedResources": [{"name": "example.com/tpu", "ignoredByScheduler": True}]},
        ],
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(doc))
    cfg = load_config(str(path))
    # the extenders' list takes precedence over the profile's own
    assert _fit_ignored(cfg, 0) == ["example.com/fpga", "example.com/tpu"]
    assert _fit_ignored(cfg, 1) == ["example.com/fpga", "example.com/tpu"]


def test_ignored_managed_resource_needs_node_resources_fit_args(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        {"urlPrefix": "http://127.0.0.1:1/e", "filterVerb": "f",
         "managedResources": [{"name": "example.com/fpga", "ignoredByScheduler": True}]},
    )
    doc = yaml.safe_load(Path(cfg).read_text())
    doc["profiles"] = [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}]
    Path(cfg).write_text(yaml.safe_dump(doc))
    r = runner.invoke(app, ["explain", "pod", "-f", WEB, "--snapshot", CLUSTER, "--config", cfg])
    assert r.exit_code == 2
    assert "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config" in r.output


@pytest.mark.parametrize(
    ("containers", "interested"),
    [
        ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}, False),
        ({"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}]}, True),
        ({"containers": [{"name": "c"}], "initContainers": [{"name": "i", "resources": {"requests": {"example.com/gpu": "1"}}}]}, True),
    ],
)
def test_is_interested_by_managed_resources(containers: dict[str, Any], interested: bool) -> None:
    ext = HTTPExtender(Extender("http://x", managed_resources=[{"name": "example.com/gpu"}]))
    pod = Pod.from_raw({"metadata": {"name": "p"}, "spec": containers})
    assert ext.is_interested(pod) is interested
    assert HTTPExtender(Extender("http://x")).is_interested(pod) is True


# bind and preempt ------------------------------------------------------------------------------------


def test_bind_verb_is_never_called(tmp_path: Path) -> None:
    with ExtenderServer({}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "bindVerb": "bind"})
        code, t = explain(WEB, cfg)
    assert code == 0
    assert srv.requests == []
    (rec,) = calls(t, "bind")
    assert rec["outcome"] == "not called (dry run)"
    assert rec["request"] == {"PodName": "web", "PodNamespace": "default", "PodUID": "uid-web", "Node": t["details"]["selectedNode"]}
    assert t["bind"] == []  # the extender would bind instead of DefaultBinder


def test_preempt_verb_narrows_the_preemption_candidates(tmp_path: Path) -> None:
    def preempt(args: Any) -> tuple[int, Any]:
        return 200, {"NodeNameToMetaVictims": {"node-b": {"Pods": [{"UID": "uid-filler-b"}], "NumPDBViolations": 0}}}

    _, base = explain(BIG, None)
    assert base["postFilter"]["nominatedNodeName"] == "node-a"
    with ExtenderServer({"preempt": preempt}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "preemptVerb": "preempt", "nodeCacheCapable": True})
        code, t = explain(BIG, cfg)
    assert code == 1
    _, sent = srv.requests[0]
    assert sent["NodeNameToVictims"] is None
    assert sent["NodeNameToMetaVictims"]["node-a"] == {"Pods": [{"UID": "uid-filler-a"}], "NumPDBViolations": 0}
    assert t["postFilter"]["nominatedNodeName"] == "node-b"
    assert t["postFilter"]["victims"] == ["default/filler-b"]
    assert calls(t, "preempt")[0]["victims"] == {"node-b": ["default/filler-b"]}


def test_preempt_answer_with_an_unknown_pod_is_an_error(tmp_path: Path) -> None:
    def preempt(args: Any) -> tuple[int, Any]:
        return 200, {"NodeNameToMetaVictims": {"node-b": {"Pods": [{"UID": "nope"}]}}}

    with ExtenderServer({"preempt": preempt}) as srv:
        cfg = write_config(tmp_path, {"urlPrefix": srv.url, "preemptVerb": "preempt"})
        _, t = explain(BIG, cfg)
    _, sent = srv.requests[0]
    assert sent["NodeNameToVictims"]["node-a"]["Pods"][0]["metadata"]["name"] == "filler-a"
    assert t["postFilter"]["code"] == "Error"
    assert "claims to preempt pod (UID: nope) on node: node-b" in t["postFilter"]["reasons"][0]


# output ------------------------------------------------------------------------------------------------


def test_table_output_shows_extender_calls_and_scores(tmp_path: Path) -> None:
    def flt(args: Any) -> tuple[int, Any]:
        return 200, {"NodeNames": ["node-b", "node-c"], "FailedNodes": {"node-a": "under maintenance"}}

    def prio(args: Any) -> tuple[int, Any]:
        return 200, [{"Host": "node-b", "Score": 10}, {"Host": "node-c", "Score": 1}]

    with ExtenderServer({"filter": flt, "prioritize": prio}) as srv:
        cfg = write_config(
            tmp_path,
            {"urlPrefix": srv.url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 2, "nodeCacheCapable": True},
        )
        r = runner.invoke(app, ["explain", "pod", "-f", WEB, "--snapshot", CLUSTER, "--config", cfg])
        md = runner.invoke(app, ["explain", "pod", "-f", WEB, "--snapshot", CLUSTER, "--config", cfg, "-o", "markdown"])
    assert r.exit_code == 0, r.output
    assert "Extenders" in r.output
    assert "failed node-a: under maintenance" in r.output
    assert "10×2×10=200" in r.output
    assert "schedulable on node-b" in r.output
    assert "#### Extenders" in md.output and "10×2×10=200" in md.output


def test_invalid_extender_configuration_is_exit_2(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"urlPrefix": "http://127.0.0.1:1", "prioritizeVerb": "p", "weight": 0})
    r = runner.invoke(app, ["explain", "pod", "-f", WEB, "--snapshot", CLUSTER, "--config", cfg])
    assert r.exit_code == 2
    assert "extenders[0].weight" in r.output


def test_sample_extender_of_the_readme(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("sample_extender", ROOT / "examples" / "extender" / "sample_extender.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    server = mod.make_server("127.0.0.1", 0, {"node-a"}, set(), {"node-c": 10, "node-b": 4})
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        cfg = yaml.safe_load((ROOT / "examples" / "extender" / "config.yaml").read_text())
        cfg["extenders"][0]["urlPrefix"] = f"http://127.0.0.1:{server.server_address[1]}/scheduler"
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(cfg))
        code, t = explain(WEB, str(path))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert code == 0
    assert t["feasibleNodes"] == ["node-b", "node-c"]
    assert t["selected"] == {"maxScore": 661, "candidates": ["node-c"]}
    assert t["totals"] == {"node-c": 661, "node-b": 541}


# scenarios judged by the reference -------------------------------------------------------------------

_LOOPBACK_URL = re.compile(r"(https?://)(?:127\.0\.0\.1|localhost)(?::\d+)?")


def served_copy(scenario: Path, dest: Path, port: int) -> Path:
    """The scenario copied with every loopback URL (config urlPrefix, URLs in expected.json) on ``port``."""
    shutil.copytree(scenario, dest)
    for name in ("config.yaml", "expected.json"):
        f = dest / name
        f.write_text(_LOOPBACK_URL.sub(lambda m: f"{m.group(1)}127.0.0.1:{port}", f.read_text()))
    return dest


def test_extender_corpus_is_present() -> None:
    assert len(SCENARIOS) == 26
    assert all((d / "extender.json").is_file() for d in SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_extender_scenario_agrees(scenario: Path, tmp_path: Path) -> None:
    spec = json.loads((scenario / "extender.json").read_text())
    with ExtenderServer.from_spec(spec) as srv:
        result = run_scenario(served_copy(scenario, tmp_path / scenario.name, srv.port))
    assert result.error is None, result.error
    assert result.passed, "\n".join(str(d) for d in result.differences[:20])
