"""``kschedctl check`` must not lie: a sequence run with a plugin error is never written by ``--update``
and reports the error; expected-sequence files are strict about their keys; ``-o json`` and JUnit name
each scenario's path and file; scenarios that could not run are named in the closing block.

The scenarios are ``tests/test_check_ci.py``'s: three pods of 3 cpus on nodes ``small``, ``big`` and
``gpu`` (tainted), of which two are placed; ``Boom`` (``tests/boom_plugin.py``) raises in Filter.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.test_check_ci import PASSING, invoke, scenario, sequence, tree_digest

BOOM = "tests.boom_plugin"
BOOM_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"filter": {"enabled": [{"name": "Boom"}]}},
                  "pluginConfig": [{"name": "Boom", "args": {"points": ["filter"]}}]}],
}


def broken_sequence(root: Path, expected: str = "summary: {placed: 2}\n") -> Path:
    d = sequence(root, "seq", expected)
    (d / "config.yaml").write_text(yaml.safe_dump(BOOM_CONFIG))
    return d


def test_update_never_writes_a_sequence_run_in_which_a_plugin_raised(tmp_path: Path) -> None:
    d = broken_sequence(tmp_path)
    before = tree_digest(tmp_path)
    r = invoke("check", d, "--update", "--plugin-module", BOOM)
    assert r.exit_code == 1, r.output
    assert tree_digest(tmp_path) == before
    assert "not updated: the run ended in an error the expectation does not foresee" in r.stdout
    # the broken plugin still fails; fixed (Boom no longer raising), the scenario passes as written
    assert invoke("check", d, "--plugin-module", BOOM).exit_code == 1
    fixed = json.loads(json.dumps(BOOM_CONFIG))
    fixed["profiles"][0]["pluginConfig"][0]["args"]["points"] = []
    (d / "config.yaml").write_text(yaml.safe_dump(fixed))
    r = invoke("check", d, "--plugin-module", BOOM)
    assert r.exit_code == 0, r.output


def test_a_plugin_error_is_reported_in_the_table_json_and_junit(tmp_path: Path) -> None:
    d = broken_sequence(tmp_path)
    r = invoke("check", d, "--plugin-module", BOOM, "--junit", tmp_path / "r.xml")
    assert r.exit_code == 1
    first = r.stdout.split("FAIL seq")[1].splitlines()[1]
    assert first.startswith('  error: expected null, got "default/batch-0: running \\"Boom\\" filter plugin: ValueError: boom (and 2 more')
    doc = json.loads(invoke("check", d, "--plugin-module", BOOM, "-o", "json").stdout)
    assert doc[0]["error"].startswith('default/batch-0: running "Boom" filter plugin: ValueError: boom')
    case = ET.parse(tmp_path / "r.xml").getroot().find("testsuite/testcase")
    assert case is not None
    error = case.find("error")
    assert error is not None and case.find("failure") is None
    assert error.get("type") == "SchedulingError" and error.get("message", "").startswith('default/batch-0: running "Boom" filter')
    assert "summary.placed: expected 2, got 0" in (error.text or "")


@pytest.mark.parametrize(
    ("text", "field", "hint"),
    [
        ("summry: {placed: 2}\n", "summry", "did you mean `summary`?"),
        ("summary: {placed: 2}\nbogus: 1\n", "bogus", "the keys are placements, summary, domains"),
        ("pods: {placed: 2}\n", "pods", "the keys are placements"),
        ("summary: {placd: 2}\n", "summary.placd", "did you mean `placed`?"),
        ("placements:\n- {nod: big}\n", "placements[0].nod", "did you mean `node`?"),
        ("placements:\n  default/batch-0: {nodes: big}\n", "placements.default/batch-0.nodes", "did you mean `node`?"),
    ],
)
def test_an_expected_sequence_file_is_strict_about_its_keys(tmp_path: Path, text: str, field: str, hint: str) -> None:
    d = sequence(tmp_path, "seq", text)
    r = invoke("check", d)
    assert r.exit_code == 2, r.output
    line = f"error: {d / 'expected-sequence.yaml'}: {field}: unknown key of an expected-sequence file: "
    assert line in r.stderr and hint in r.stderr


def test_json_and_junit_tell_same_named_scenarios_apart(tmp_path: Path) -> None:
    a = scenario(tmp_path / "team-a", "web", PASSING)
    b = scenario(tmp_path / "team-b", "web", None)
    (b / "pod.yaml").write_text("kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: lots}}}]}\n")
    (b / "expected.yaml").write_text(PASSING)
    r = invoke("check", tmp_path, "-o", "json", "--junit", tmp_path / "r.xml")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [(e["name"], e["path"], e["file"]) for e in doc] == [
        ("web", str(a), str(a / "expected.yaml")), ("web", str(b), None)]
    cases = ET.parse(tmp_path / "r.xml").getroot().findall("testsuite/testcase")
    assert [c.get("file") for c in cases] == [str(a / "expected.yaml"), str(b / "pod.yaml")]
    assert cases[0].get("classname") != cases[1].get("classname")
    table = invoke("check", tmp_path)
    lines = table.stdout.rstrip("\n").splitlines()
    at = lines.index("1 passed, 0 failed, 1 error")
    assert lines[at + 1].startswith(f"ERROR web ({b}): {b / 'pod.yaml'}: document 1: Pod x:")


def test_changed_config_or_snapshot_checks_the_scenarios_that_use_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_check_ci import BIN_PACKING, write_cluster

    tests = tmp_path / "scheduling-tests"
    scenario(tests, "a", PASSING)
    own = scenario(tests, "b", PASSING)
    (own / "config.yaml").write_text(yaml.safe_dump(BIN_PACKING))
    scenario(tests, "c", PASSING, cluster=False)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "config.yaml").write_text(yaml.safe_dump(BIN_PACKING))
    write_cluster(tmp_path / "prod.yaml")
    monkeypatch.chdir(tmp_path)
    common = ["check", "--changed", "--config", "deploy/config.yaml", "--snapshot", "prod.yaml", "-o", "json"]
    r = invoke(*common, "deploy/config.yaml")
    # bin-packing moves the 1-cpu pod to `small`: the scenarios that use --config fail, `b` is not run
    assert r.exit_code == 1, r.output
    assert [e["name"] for e in json.loads(r.stdout)] == ["a", "c"]
    assert "note: deploy/config.yaml is the --config file: checking the 2 scenarios under . that use it" in r.stderr
    r = invoke(*common, "prod.yaml", "scheduling-tests/b/expected.yaml")
    assert [e["name"] for e in json.loads(r.stdout)] == ["b", "c"]
    assert "note: prod.yaml is the --snapshot file: checking the 1 scenario under . that use it" in r.stderr
