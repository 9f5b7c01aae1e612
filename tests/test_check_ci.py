"""``kschedctl check`` in CI: the closing summary and failures, errors per scenario, ``--update``,
scenarios without cluster.yaml (``--snapshot`` or the live cluster), ``--config``, file paths and
``--changed``; each through typer's CliRunner on small scenarios built here.

The scenarios share one cluster: nodes ``small`` (2 cpus), ``big`` (8 cpus) and ``gpu`` (8 cpus,
tainted). A pod asking for one cpu can go to ``small`` or ``big``, and kube-scheduler's default
scoring (LeastAllocated, balanced allocation) prefers ``big``; ``gpu`` rejects it for its taint.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.runner import run_scenario
from kschedctl.cli.main import app
from kschedctl.snapshot.loader import load_cluster
from tests.builders import make_node, make_pod

ROOT = Path(__file__).parent.parent
RECORDED = ROOT / "tests" / "recordings" / "003-medium-30n150p" / "scenario"
runner = CliRunner()

BIN_PACKING = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}],
    }],
}


def invoke(*args: Any, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, [str(a) for a in args], env=env)


def cluster_objects() -> list[dict[str, Any]]:
    return [
        make_node("small").alloc(cpu="2", memory="8Gi", pods="110").raw,
        make_node("big").alloc(cpu="8", memory="32Gi", pods="110").raw,
        make_node("gpu").alloc(cpu="8", memory="32Gi", pods="110").taint("nvidia.com/gpu", "present").raw,
    ]


def write_cluster(path: Path) -> Path:
    path.write_text(yaml.safe_dump_all(cluster_objects(), sort_keys=False))
    return path


def web_pod(name: str = "web", cpu: str = "1") -> dict[str, Any]:
    raw = make_pod(name).req(cpu=cpu, memory="1Gi").raw
    raw["metadata"].pop("uid")
    return raw


def scenario(
    root: Path, name: str, expected: str | None, *, filename: str = "expected.yaml", cluster: bool = True, pod: dict[str, Any] | None = None
) -> Path:
    """A single-pod scenario; ``expected`` is the text of its expectation file."""
    d = root / name
    d.mkdir(parents=True)
    if cluster:
        write_cluster(d / "cluster.yaml")
    (d / "pod.yaml").write_text(yaml.safe_dump(pod or web_pod(name), sort_keys=False))
    if expected is not None:
        (d / filename).write_text(expected)
    return d


def sequence(root: Path, name: str, expected: str, *, cluster: bool = True) -> Path:
    """Three pods of 3 cpus each, one after another: ``big`` takes two, ``small`` none, one does not fit."""
    d = root / name
    d.mkdir(parents=True)
    if cluster:
        write_cluster(d / "cluster.yaml")
    pods = [make_pod(f"batch-{i}").req(cpu="3", memory="1Gi").raw for i in range(3)]
    for p in pods:
        p["metadata"].pop("uid")
    (d / "pods.yaml").write_text(yaml.safe_dump_all(pods, sort_keys=False))
    (d / "expected-sequence.yaml").write_text(expected)
    return d


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


#: The third pod of ``sequence``, in the reference scheduler's words (``ksched-oracle -sequence``).
NOT_PLACED = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful "
    "for scheduling."
)
PASSING = "selected: {candidates: [big]}\n"
FAILING = "# who wins\nselected:\n  candidates: [small]   # the smaller node, we thought\nfitError: null\n"


# --------------------------------------------------------------------------- summary, failures, exit status


def test_a_failing_scenario_ends_the_log_with_counts_then_its_differences(tmp_path: Path) -> None:
    scenario(tmp_path, "ok", PASSING)
    scenario(tmp_path, "wrong", FAILING)
    r = invoke("check", tmp_path)
    assert r.exit_code == 1, r.output
    lines = r.stdout.rstrip("\n").splitlines()
    at = lines.index("1 passed, 1 failed")
    assert lines[at + 1:] == [
        f"FAIL wrong ({tmp_path / 'wrong'}): 1 difference",
        '  selected.candidates: expected ["small"], got ["big"]',
    ]
    assert r.stderr == ""


def test_all_passing_ends_with_the_counts_line(tmp_path: Path) -> None:
    scenario(tmp_path, "ok", PASSING)
    r = invoke("check", tmp_path)
    assert r.exit_code == 0, r.output
    assert r.stdout.rstrip("\n").splitlines()[-1] == "1 passed, 0 failed"


def test_bad_input_is_that_scenarios_error_and_the_others_still_run(tmp_path: Path) -> None:
    scenario(tmp_path, "a-ok", PASSING)
    bad = scenario(tmp_path, "b-bad", "selected: {candidates: [big]\n")
    scenario(tmp_path, "c-wrong", FAILING)
    r = invoke("check", tmp_path)
    assert r.exit_code == 2, r.output
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(f"error: {bad / 'expected.yaml'}: invalid YAML at line 2")
    assert "1 passed, 1 failed, 1 error" in r.stdout.splitlines()
    assert "ERROR" in r.stdout and "Traceback" not in r.output
    j = invoke("check", tmp_path, "-o", "json")
    assert j.exit_code == 2
    doc = json.loads(j.stdout)
    assert [(d["name"], d["passed"], d["error"] is not None) for d in doc] == [
        ("a-ok", True, False), ("b-bad", False, True), ("c-wrong", False, False)
    ]
    assert j.stderr.splitlines()[-1] == "1 passed, 1 failed, 1 error"


def test_debug_shows_the_traceback_of_a_scenarios_bad_input(tmp_path: Path) -> None:
    scenario(tmp_path, "bad", None)
    r = invoke("--debug", "check", tmp_path)
    assert r.exit_code == 2
    assert "Traceback" in r.stderr and r.stderr.rstrip().endswith("no expected.json or expected.yaml")


# --------------------------------------------------------------------------- --update


def test_update_round_trip_keeps_keys_comments_and_other_files(tmp_path: Path) -> None:
    d = scenario(tmp_path, "wrong", FAILING)
    scenario(tmp_path, "ok", PASSING)
    before = tree_digest(tmp_path)
    r = invoke("check", tmp_path, "--update")
    assert r.exit_code == 0, r.output
    text = (d / "expected.yaml").read_text()
    assert text == "# who wins\nselected:\n  candidates: [big]   # the smaller node, we thought\nfitError: null\n"
    assert f"--- {d / 'expected.yaml'}\n+++ {d / 'expected.yaml'}\n" in r.stdout
    assert "-  candidates: [small]   # the smaller node, we thought\n+  candidates: [big]   # the smaller node, we thought\n" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1] == "1 passed, 0 failed, 1 updated"
    changed = {k for k, v in tree_digest(tmp_path).items() if before.get(k) != v}
    assert changed == {"wrong/expected.yaml"}
    again = invoke("check", tmp_path, "--update")
    assert again.exit_code == 0 and "2 passed, 0 failed" in again.stdout and "---" not in again.stdout
    assert tree_digest(tmp_path) == {**before, "wrong/expected.yaml": tree_digest(tmp_path)["wrong/expected.yaml"]}


def test_update_of_a_json_expectation_keeps_its_indentation_and_stays_partial(tmp_path: Path) -> None:
    expected = {"filter": {"gpu": {"plugin": "NodeResourcesFit"}, "vanished-node": {"code": "Success"}}, "feasibleNodes": ["small"]}
    d = scenario(tmp_path, "j", json.dumps(expected, indent=4) + "\n", filename="expected.json")
    r = invoke("check", d, "--update", "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # one document; what was written is in it
    assert doc[0]["update"]["written"] is True and "+            \"plugin\": \"TaintToleration\"" in doc[0]["update"]["diff"]
    assert r.stderr.strip() == "0 passed, 0 failed, 1 updated"
    text = (d / "expected.json").read_text()
    assert json.loads(text) == {"filter": {"gpu": {"plugin": "TaintToleration"}}, "feasibleNodes": ["big", "small"]}
    assert text.startswith('{\n    "filter": {\n        "gpu": {') and text.endswith("}\n")
    assert invoke("check", d).exit_code == 0


@pytest.mark.parametrize(
    ("expected", "updated"),
    [
        (
            "# as a list: the i-th attempt\nplacements:\n- {node: small}\n- node: small  # second\n",
            {"placements": [{"node": "big"}, {"node": "big"}]},
        ),
        (
            "placements:\n  default/batch-2: {node: big, fitError: null}\nsummary: {placed: 3}\n",
            {"placements": {"default/batch-2": {"node": None, "fitError": NOT_PLACED}}, "summary": {"placed": 2}},
        ),
        (
            "domains:\n  kubernetes.io/hostname: {big: 3}\n",
            {"domains": {"kubernetes.io/hostname": {"big": 2}}},
        ),
    ],
    ids=["placements as a list", "placements by pod", "domains"],
)
def test_update_of_a_sequence_expectation(tmp_path: Path, expected: str, updated: dict[str, Any]) -> None:
    d = sequence(tmp_path, "seq", expected)
    assert invoke("check", d).exit_code == 1
    r = invoke("check", d, "--update")
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((d / "expected-sequence.yaml").read_text()) == updated
    assert invoke("check", d).exit_code == 0


def test_update_keeps_comments_of_a_sequence_list(tmp_path: Path) -> None:
    d = sequence(tmp_path, "seq", "# as a list\nplacements:\n- {node: small}\n- node: small  # second\n")
    invoke("check", d, "--update")
    assert (d / "expected-sequence.yaml").read_text() == "# as a list\nplacements:\n- {node: big}\n- node: big  # second\n"


def test_update_never_rewrites_what_kube_scheduler_wrote(tmp_path: Path) -> None:
    reference = {"k8sVersion": "v1.35.4", "pod": "default/ref", "selected": {"candidates": ["small"]}}
    d = scenario(tmp_path, "ref", json.dumps(reference, indent=2), filename="expected.json")
    before = tree_digest(tmp_path)
    r = invoke("check", d, "--update")
    assert r.exit_code == 1, r.output
    assert tree_digest(tmp_path) == before
    assert "  not updated: written by kube-scheduler v1.35.4 (k8sVersion): a difference from the reference is a bug" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("  not updated")
    assert "0 passed, 1 failed" in r.stdout.splitlines()


def test_update_does_not_write_an_error_into_the_expectation(tmp_path: Path) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"score": {"enabled": [{"name": "Boom", "weight": 1}]}},
                      "pluginConfig": [{"name": "Boom", "args": {"points": ["score"]}}]}],
    }
    d = scenario(tmp_path, "boom", FAILING)
    (d / "config.yaml").write_text(yaml.safe_dump(config))
    before = tree_digest(tmp_path)
    r = invoke("check", d, "--update", "--plugin-module", "tests.boom_plugin")
    assert r.exit_code == 1, r.output
    assert tree_digest(tmp_path) == before
    assert "not updated: the run ended in an error the expectation does not foresee" in r.stdout


def test_update_never_writes_outside_the_given_paths(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shared = scenario(outside, "shared", FAILING)
    tests = tmp_path / "tests"
    d = scenario(tests, "linked", None)
    (d / "expected.yaml").symlink_to(shared / "expected.yaml")
    (tests / "dir-link").symlink_to(shared, target_is_directory=True)
    before = tree_digest(outside)
    r = invoke("check", tests, d, "--update", "-o", "json")
    assert r.exit_code == 1, r.output
    assert tree_digest(outside) == before
    doc = json.loads(r.stdout)
    reasons = {e["name"]: e["update"] for e in doc}
    assert reasons["linked"]["written"] is False
    assert reasons["linked"]["reason"] == f"{(shared / 'expected.yaml').resolve()} is outside the paths given to check"
    assert reasons["dir-link"]["written"] is False  # found through a symlink under tests/, but it leads out
    # naming the linked directory itself makes it one of the given paths
    r = invoke("check", tests / "dir-link", "--update")
    assert r.exit_code == 0, r.output
    assert (shared / "expected.yaml").read_text().count("[big]") == 1


# --------------------------------------------------------------------------- scenarios without cluster.yaml


def test_scenarios_without_a_cluster_are_checked_against_the_snapshot(tmp_path: Path) -> None:
    snap = write_cluster(tmp_path / "prod.yaml")
    tests = tmp_path / "tests"
    scenario(tests, "fits", PASSING, cluster=False)
    scenario(tests, "own-cluster", PASSING)
    sequence(tests, "rollout", "summary: {placed: 2, notPlaced: 1}\n", cluster=False)
    r = invoke("check", tests, "--snapshot", snap)
    assert r.exit_code == 0, r.output
    assert "3 passed, 0 failed" in r.stdout
    other = tmp_path / "small-only.yaml"
    other.write_text(yaml.safe_dump(cluster_objects()[0]))
    r = invoke("check", tests, "--snapshot", other)
    assert r.exit_code == 1
    assert "1 passed, 2 failed" in r.stdout  # the scenario with its own cluster.yaml still passes


def test_without_snapshot_or_kubeconfig_the_scenario_is_named(tmp_path: Path) -> None:
    d = scenario(tmp_path, "fits", PASSING, cluster=False)
    r = invoke("check", d, env={"KUBECONFIG": str(tmp_path / "absent"), "KUBERNETES_SERVICE_HOST": ""})
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"error: {d} has no cluster.yaml, and there is no cluster to read: no kubeconfig (--kubeconfig, KUBECONFIG or "
        "~/.kube/config) and not running in a cluster; give --snapshot FILE to work from a snapshot file"
    )


def test_snapshot_unused_is_said(tmp_path: Path) -> None:
    d = scenario(tmp_path, "own", PASSING)
    r = invoke("check", d, "--snapshot", write_cluster(tmp_path / "prod.yaml"))
    assert r.exit_code == 0
    assert r.stderr.strip() == "note: --snapshot is not used: every scenario has its own cluster.yaml"


def test_the_shared_cluster_is_not_changed_by_a_scenario(tmp_path: Path) -> None:
    snap = write_cluster(tmp_path / "prod.yaml")
    cluster = load_cluster([str(snap)])
    pod = web_pod("other-ns")
    pod["metadata"]["namespace"] = "team-x"  # not in the snapshot: admitted into the scenario's copy only
    d = scenario(tmp_path, "team-x", PASSING, cluster=False, pod=pod)
    assert run_scenario(d, cluster=cluster).passed
    seq = sequence(tmp_path, "seq", "summary: {placed: 2}\n", cluster=False)
    assert run_scenario(seq, cluster=cluster).passed
    assert cluster.get("Namespace", "", "team-x") is None
    assert not cluster.pods  # the sequence placed its pods in its own copy


def test_live_cluster_is_read_once_with_gets_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scenarios without cluster.yaml against the served recordings of a real API server; the
    expectation of the first was written by the reference scheduler for that cluster (exact). That
    scheduler was v1.35.4 against a v1.36.2 API server (a skew kube-scheduler allows), so the run names
    its version: without --kube-version check follows the server's, as explain does."""
    from tests.apiserver import RecordedAPIServer

    tests = tmp_path / "tests"
    exact = tests / "web-exact"
    exact.mkdir(parents=True)
    for name in ("pod.yaml", "expected.json"):
        (exact / name).write_text((RECORDED / name).read_text())
    second = tests / "web-partial"
    second.mkdir()
    (second / "pod.yaml").write_text((RECORDED / "pod.yaml").read_text())
    (second / "expected.yaml").write_text("fitError: null\nselected: {candidates: [ip-10-0-6-29.ec2.internal]}\n")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with RecordedAPIServer() as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(tmp_path / "kubeconfig")))
        r = invoke("check", tests, "--junit", tmp_path / "report.xml", "--kube-version", "1.35")
        assert r.exit_code == 0, r.output
        assert "2 passed, 0 failed" in r.stdout
        assert {s.method for s in srv.seen} == {"GET"}
        assert sum(1 for s in srv.seen if s.path == "/api/v1/nodes") == 1
        follows_server = invoke("check", tests / "web-partial", "-o", "json")
    assert json.loads(follows_server.stdout)[0]["kubeVersion"] == "v1.36.2"


# --------------------------------------------------------------------------- --config, file paths, --changed


def test_config_applies_to_scenarios_without_their_own(tmp_path: Path) -> None:
    cfg = tmp_path / "scheduler-config.yaml"
    cfg.write_text(yaml.safe_dump(BIN_PACKING))
    scenario(tmp_path / "t", "packs", "selected: {candidates: [small]}\n")
    own = scenario(tmp_path / "t", "own-config", PASSING)
    (own / "config.yaml").write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}))
    assert invoke("check", tmp_path / "t").exit_code == 1  # default scoring spreads: big
    r = invoke("check", tmp_path / "t", "--config", cfg)
    assert r.exit_code == 0, r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 200\n")
    r = invoke("check", tmp_path / "t", "--config", bad)
    assert r.exit_code == 2 and "percentageOfNodesToScore" in r.stderr and len(r.stderr.splitlines()) == 1


def test_a_file_stands_for_its_scenario(tmp_path: Path) -> None:
    d = scenario(tmp_path, "web", PASSING)
    r = invoke("check", d / "pod.yaml", d / "expected.yaml", d, "-o", "json")
    assert r.exit_code == 0, r.output
    assert [e["name"] for e in json.loads(r.stdout)] == ["web"]
    stray = tmp_path / "values.yaml"
    stray.write_text("a: 1\n")
    r = invoke("check", stray)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {stray}: not a file of a scenario directory (pod.yaml or pods.yaml, with cluster.yaml or an expectation)"


def test_changed_checks_the_scenarios_of_changed_files_and_skips_the_rest(tmp_path: Path) -> None:
    a = scenario(tmp_path, "a", PASSING)
    scenario(tmp_path, "b", FAILING)
    elsewhere = tmp_path / "charts" / "config.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text("replicas: 3\n")
    r = invoke("check", "--changed", a / "expected.yaml", elsewhere, tmp_path / "deleted" / "pod.yaml", "-o", "json")
    assert r.exit_code == 0, r.output
    assert [e["name"] for e in json.loads(r.stdout)] == ["a"]
    r = invoke("check", "--changed", elsewhere)
    assert r.exit_code == 0, r.output
    assert r.stderr.strip() == "note: no given path belongs to a scenario, nor is the --config or a --snapshot file: nothing to check"
    assert r.stdout.strip().splitlines()[-1] == "0 passed, 0 failed"


def test_relative_paths_as_pre_commit_passes_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(tmp_path / "scheduling", "b", FAILING)
    monkeypatch.chdir(tmp_path)
    r = invoke("check", "--changed", os.path.join("scheduling", "b", "pod.yaml"))
    assert r.exit_code == 1
    assert "FAIL b (scheduling/b): 1 difference" in r.stdout


# --------------------------------------------------------------------------- extender scenarios


def test_extender_scenario_with_junit_update_and_without_its_cluster(tmp_path: Path) -> None:
    """An extender scenario of the corpus, served: as written by the reference it passes (JUnit too);
    made hand-written and wrong, --update brings its extender calls up to date, the informational
    ``selected.host`` as written; moved out of its directory, its cluster.yaml still serves as --snapshot."""
    from tests.extender_server import ExtenderServer
    from tests.test_extenders import served_copy
    from tests.test_junit import validate

    source = ROOT / "tests" / "extenders" / "dev-ext-001-winner"
    with ExtenderServer.from_spec(json.loads((source / "extender.json").read_text())) as srv:
        d = served_copy(source, tmp_path / "t" / "winner", srv.port)
        r = invoke("check", d, "--junit", tmp_path / "r.xml")
        assert r.exit_code == 0, r.output
        assert validate((tmp_path / "r.xml").read_bytes()).find("testsuite/testcase/failure") is None

        reference = json.loads((d / "expected.json").read_text())
        wrong_calls = json.loads(json.dumps(reference["extenders"]))
        wrong_calls[0]["scores"]["worker-b-14"] = 0
        (d / "expected.json").unlink()
        (d / "expected.yaml").write_text(yaml.safe_dump(
            {"extenders": wrong_calls, "selected": {"host": "worker-b-14", "candidates": ["worker-a-04"]}}, sort_keys=False))
        r = invoke("check", d, "--update", "--junit", tmp_path / "r.xml")
        assert r.exit_code == 0, r.output
        updated = yaml.safe_load((d / "expected.yaml").read_text())
        assert updated["extenders"][0]["scores"] == reference["extenders"][0]["scores"]
        assert updated["selected"] == {"host": "worker-b-14", "candidates": ["worker-b-14"]}
        assert invoke("check", d).exit_code == 0

        (d / "cluster.yaml").rename(tmp_path / "cluster.yaml")
        r = invoke("check", tmp_path / "t", "--snapshot", tmp_path / "cluster.yaml")
        assert r.exit_code == 0, r.output


def test_live_cluster_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--kubeconfig and --context name the cluster as for explain; --request-timeout bounds the read."""
    from tests.apiserver import RecordedAPIServer

    d = tmp_path / "tests" / "web"
    d.mkdir(parents=True)
    (d / "pod.yaml").write_text((RECORDED / "pod.yaml").read_text())
    (d / "expected.yaml").write_text("fitError: null\n")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with RecordedAPIServer() as srv:
        kubeconfig = srv.kubeconfig(tmp_path / "kc", context="prod")
        r = invoke("check", d, "--kubeconfig", kubeconfig, "--context", "prod")
        assert r.exit_code == 0, r.output
        r = invoke("check", d, "--kubeconfig", kubeconfig, "--context", "staging")
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and "staging" in r.stderr
    with RecordedAPIServer(silent=True) as slow:
        r = invoke("check", d, "--kubeconfig", slow.kubeconfig(tmp_path / "slow", context="prod"), "--request-timeout", "200ms")
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: request timed out after 0.2s (--request-timeout)"
