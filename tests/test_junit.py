"""``check --junit FILE``: the report, checked by a strict structural validator of the JUnit XML form
CI systems read.

``validate`` encodes the rules of the schema Jenkins' xunit plugin publishes for JUnit reports
(junit-10.xsd), the form GitLab's ``artifacts:reports:junit`` and GitHub's test-report actions also
parse: which elements may appear where and in which order, which attributes each may carry and
which it must, their types (counts are non-negative integers, times decimal seconds, the timestamp
an ``xs:dateTime`` without zone), plus the counts a reader displays (tests, failures, errors) agreeing
with the testcases. The validator is itself tested on reports that break each rule.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.check.junit import classname, junit_xml
from kschedctl.check.scenario import Difference, ScenarioResult
from kschedctl.cli.main import app
from tests.test_check_ci import FAILING, PASSING, scenario

runner = CliRunner()

INT = re.compile(r"^[0-9]+$")
TIME = re.compile(r"^[0-9]+(\.[0-9]{1,3})?$")
DATETIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")

#: element -> (required attributes, optional attributes, allowed children in the order they may come)
SCHEMA: dict[str, tuple[set[str], set[str], list[str]]] = {
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors", "disabled", "skipped"}, ["testsuite"]),
    "testsuite": (
        {"name", "tests"},
        {"failures", "errors", "skipped", "disabled", "time", "timestamp", "hostname", "id", "package", "file", "log", "url", "version", "group"},
        ["properties", "testcase", "system-out", "system-err"],
    ),
    "properties": (set(), set(), ["property"]),
    "property": ({"name", "value"}, set(), []),
    "testcase": (
        {"name"},
        {"classname", "time", "file", "line", "assertions", "status", "class", "group", "log", "url"},
        ["skipped", "error", "failure", "system-out", "system-err"],
    ),
    "failure": (set(), {"message", "type"}, []),
    "error": (set(), {"message", "type"}, []),
    "skipped": (set(), {"message"}, []),
    "system-out": (set(), set(), []),
    "system-err": (set(), set(), []),
}
TYPES = {"tests": INT, "failures": INT, "errors": INT, "skipped": INT, "disabled": INT, "time": TIME, "timestamp": DATETIME, "line": INT, "assertions": INT}
SINGLE = {"properties", "skipped", "testsuite.system-out", "testsuite.system-err"}


def _check_element(el: ET.Element, parent: str | None) -> None:
    assert el.tag in SCHEMA, f"unknown element <{el.tag}>"
    required, optional, children = SCHEMA[el.tag]
    assert required <= set(el.attrib), f"<{el.tag}> lacks {required - set(el.attrib)}"
    assert set(el.attrib) <= required | optional, f"<{el.tag}> has unknown attributes {set(el.attrib) - required - optional}"
    for name, value in el.attrib.items():
        if name in TYPES:
            assert TYPES[name].match(value), f"<{el.tag} {name}={value!r}>: not of its type"
    if not children:
        assert len(el) == 0, f"<{el.tag}> holds elements"
        return
    assert not (el.text or "").strip(), f"<{el.tag}> holds text"
    order = [children.index(c.tag) if c.tag in children else -1 for c in el]
    assert -1 not in order, f"<{el.tag}> holds {[c.tag for c in el if c.tag not in children]}"
    assert order == sorted(order), f"<{el.tag}>: children out of order {[c.tag for c in el]}"
    for tag in {c.tag for c in el}:
        if tag in SINGLE or f"{el.tag}.{tag}" in SINGLE:
            assert sum(c.tag == tag for c in el) == 1, f"<{el.tag}> holds several <{tag}>"
    if el.tag == "testcase":
        outcomes = [c.tag for c in el if c.tag in ("skipped", "error", "failure")]
        assert len(outcomes) <= 1, f"testcase {el.get('name')}: several outcomes {outcomes}"
    for c in el:
        _check_element(c, el.tag)


def _check_counts(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "-1")) == len(cases), f"counts {suite.get('tests')} tests, holds {len(cases)}"
    for key, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        held = sum(c.find(tag) is not None for c in cases)
        assert int(suite.get(key, "0")) == held, f"counts {suite.get(key)} {key}, holds {held}"


def validate(data: bytes) -> ET.Element:
    """Raise AssertionError naming the first rule ``data`` breaks; return the root."""
    assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>") or data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(data)
    assert root.tag == "testsuites", root.tag
    _check_element(root, None)
    suites = root.findall("testsuite")
    assert suites, "no testsuite"
    for suite in suites:
        _check_counts(suite)
    for key in ("tests", "failures", "errors"):
        if key in root.attrib:
            assert int(root.get(key, "0")) == sum(int(s.get(key, "0")) for s in suites), key
    return root


def results() -> list[ScenarioResult]:
    passed = ScenarioResult("web", "tests/scheduling/web", True, expected_file="tests/scheduling/web/expected.yaml", seconds=0.0421)
    failed = ScenarioResult(
        "gpu", "tests/scheduling/gpu", False,
        [Difference("selected.candidates", ["a"], ["b"]), Difference("fitError", None, "0/3 nodes are available\x1b[0m")],
        expected_file="tests/scheduling/gpu/expected.yaml", seconds=1.5,
    )
    error = ScenarioResult("bad", "tests/scheduling/bad", False, error='tests/scheduling/bad/pod.yaml: spec.containers: Required value <&">\x1b\x00')
    updated = ScenarioResult("moved", "moved", False, [Difference("selected.candidates", ["a"], ["b"])], expected_file="moved/expected.yaml")
    updated.update = {"file": "moved/expected.yaml", "written": True, "diff": "--- moved/expected.yaml\n+++ moved/expected.yaml\n"}
    refused = ScenarioResult("ref", "ref", False, [Difference("fitError", "x", None)], reference=True)
    refused.update = {"file": "ref/expected.json", "written": False, "reason": "written by kube-scheduler v1.35.4 (k8sVersion)"}
    return [passed, failed, error, updated, refused]


def test_report_is_valid_and_says_what_each_scenario_did() -> None:
    root = validate(junit_xml(results(), timestamp=datetime(2026, 1, 2, 3, 4, 5)))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("timestamp")) == ("5", "2", "1", "2026-01-02T03:04:05")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["web", "gpu", "bad", "moved", "ref"]
    web = cases["web"]
    assert (web.get("classname"), web.get("file"), web.get("time"), len(web)) == ("tests.scheduling", "tests/scheduling/web/expected.yaml", "0.042", 0)
    failure = cases["gpu"].find("failure")
    assert failure is not None and failure.get("type") == "ExpectationMismatch"
    assert failure.text == 'selected.candidates: expected ["a"], got ["b"]\nfitError: expected null, got "0/3 nodes are available\\u001b[0m"'
    assert failure.get("message") == '2 differences: selected.candidates: expected ["a"], got ["b"]'
    error = cases["bad"].find("error")
    assert error is not None and error.text == 'tests/scheduling/bad/pod.yaml: spec.containers: Required value <&">'
    assert error.get("type") == "InputError"
    moved = cases["moved"]
    assert moved.find("failure") is None and (moved.findtext("system-out") or "").startswith("--- moved/expected.yaml")
    ref = cases["ref"]
    assert ref.find("failure") is not None and "not updated: written by kube-scheduler" in (ref.findtext("failure") or "")


def test_classname_is_the_folder_dotted() -> None:
    assert classname("tests/scheduling/web") == "tests.scheduling"
    assert classname("/abs/v1.2/s") == "abs.v1_2"
    assert classname("web") == "scenarios"


def _valid() -> str:
    return junit_xml(results()[:3], timestamp=datetime(2026, 1, 2, 3, 4, 5)).decode()


def _out_of_order(text: str) -> str:
    gpu = text.index('<testcase name="gpu"')
    return text[:gpu] + text[gpu:].replace("<failure", "<system-out>x</system-out><failure", 1)


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (lambda t: t.replace('<testcase name="web"', "<testcase", 1), "lacks {'name'}"),
        (lambda t: t.replace('<testcase name="web"', '<testcase name="web" colour="red"', 1), "unknown attributes"),
        (lambda t: t.replace('<testsuite name="kschedctl check" tests="3"', '<testsuite name="kschedctl check" tests="4"', 1), "counts 4 tests, holds 3"),
        (lambda t: t.replace('time="0.042"', 'time="fast"', 1), "not of its type"),
        (lambda t: t.replace('timestamp="2026-01-02T03:04:05"', 'timestamp="yesterday"', 1), "not of its type"),
        (lambda t: t.replace("<properties>", "<properties><flavour/>", 1), "<properties> holds ['flavour']"),
        (lambda t: t.replace("</properties>", "</properties><flavour/>", 1), "<testsuite> holds ['flavour']"),
        (lambda t: t.replace("<property ", "<property><flavour/></property><property ", 1), "lacks"),
        (_out_of_order, "children out of order"),
        (lambda t: t.replace("<failure", "<error/><failure", 1), "several outcomes"),
        (lambda t: t.replace("<testsuites", "<testruns", 1).replace("</testsuites>", "</testruns>"), "testruns"),
    ],
    ids=["testcase without name", "unknown attribute", "wrong count", "time not a number", "bad timestamp",
         "unknown element", "misplaced element", "element inside property", "failure after system-out", "failure and error",
         "another root"],
)
def test_the_validator_is_strict(mutate: Any, rule: str) -> None:
    text = _valid()
    broken = mutate(text)
    assert broken != text
    validate(text.encode())
    with pytest.raises(AssertionError, match=re.escape(rule)):
        validate(broken.encode())


# --------------------------------------------------------------------------- the CLI


def test_cli_writes_the_report_for_passing_failing_and_bad_scenarios(tmp_path: Path) -> None:
    scenario(tmp_path / "t", "a-ok", PASSING)
    scenario(tmp_path / "t", "b-wrong", FAILING)
    report = tmp_path / "out" / "reports" / "kschedctl.xml"  # folders are created
    r = runner.invoke(app, ["check", str(tmp_path / "t"), "--junit", str(report)])
    assert r.exit_code == 1, r.output
    root = validate(report.read_bytes())
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["a-ok", "b-wrong"]
    assert cases[1].findtext("failure") == 'selected.candidates: expected ["small"], got ["big"]'
    assert r.stdout.rstrip().splitlines()[-2:] == [  # the log is unchanged by --junit
        f"FAIL b-wrong ({tmp_path / 't' / 'b-wrong'}): 1 difference", '  selected.candidates: expected ["small"], got ["big"]'
    ]
    scenario(tmp_path / "t", "c-bad", "selected: [\n")
    r = runner.invoke(app, ["check", str(tmp_path / "t"), "--junit", str(report), "-o", "json"])
    assert r.exit_code == 2
    error = validate(report.read_bytes()).find("testsuite/testcase[@name='c-bad']/error")
    assert error is not None and (error.text or "").startswith(f"{tmp_path / 't' / 'c-bad' / 'expected.yaml'}: invalid YAML")


def test_cli_updated_scenarios_pass_in_the_report(tmp_path: Path) -> None:
    d = scenario(tmp_path, "wrong", FAILING)
    report = tmp_path / "r.xml"
    r = runner.invoke(app, ["check", str(d), "--update", "--junit", str(report)])
    assert r.exit_code == 0, r.output
    case = validate(report.read_bytes()).find("testsuite/testcase")
    assert case is not None and case.find("failure") is None
    assert "+  candidates: [big]" in (case.findtext("system-out") or "")
    assert yaml.safe_load((d / "expected.yaml").read_text())["selected"] == {"candidates": ["big"]}


def test_cli_unwritable_report_is_one_error_line(tmp_path: Path) -> None:
    scenario(tmp_path, "ok", PASSING)
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = runner.invoke(app, ["check", str(tmp_path / "ok"), "--junit", str(blocker / "r.xml")])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith(f"error: --junit: cannot write {blocker / 'r.xml'}:")
    assert "Traceback" not in r.output

