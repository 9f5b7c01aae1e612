"""``check --junit FILE``: the results as a JUnit XML report, the format CI systems render as test results.

The report has the common form GitHub (test-reporter actions), GitLab (``artifacts:reports:junit``)
and Jenkins (the JUnit plugin) all read: one ``<testsuites>`` holding one ``<testsuite>``, and one
``<testcase>`` per scenario, named by the scenario directory, with the folder holding it as
``classname`` (dotted, as Jenkins groups classes into packages) and the expectation file as
``file``. A failed scenario has a ``<failure>`` whose text is every difference, one per line;
a scenario with bad input has an ``<error>`` with the error line; a passing one has neither.
What ``--update`` did goes to the testcase's ``<system-out>`` (the diff it wrote, or why it left the
file alone). Characters XML 1.0 cannot hold (control characters) are dropped from the text.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path, PurePath

from kschedctl import K8S_VERSION, __version__
from kschedctl.check.report import counts, failure_lines, outcome
from kschedctl.check.scenario import ScenarioResult

SUITE_NAME = "kschedctl check"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MESSAGE_CHARS = 240


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def classname(path: str) -> str:
    """The folder holding the scenario, dotted (``tests/scheduling/web`` -> ``tests.scheduling``)."""
    parts = [p for p in PurePath(path).parent.parts if p not in ("/", ".", "")]
    return ".".join(p.replace(".", "_") for p in parts) or "scenarios"


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _testcase(r: ScenarioResult) -> ET.Element:
    case = ET.Element("testcase", {
        "name": _clean(r.name),
        "classname": _clean(classname(r.path)),
        "file": _clean(r.expected_file or r.path),
        "time": _seconds(r.seconds),
    })
    kind = outcome(r)
    if kind == "ERROR":
        err = ET.SubElement(case, "error", {"message": _clean((r.error or "")[:MESSAGE_CHARS]), "type": type(r.exception).__name__ if r.exception else "InputError"})
        err.text = _clean(r.error or "")
    elif kind == "FAIL":
        lines = failure_lines(r, limit=len(r.differences))
        n = len(r.differences)
        first = lines[0] if lines else ""
        message = f"{n} difference{'s' if n != 1 else ''}: {first}"
        failure = ET.SubElement(case, "failure", {"message": _clean(message[:MESSAGE_CHARS]), "type": "ExpectationMismatch"})
        failure.text = _clean("\n".join(lines))
    if r.update is not None:
        out = ET.SubElement(case, "system-out")
        out.text = _clean(r.update["diff"] if r.update.get("written") else f"not updated: {r.update['reason']}")
    return case


def junit_xml(results: list[ScenarioResult], *, timestamp: datetime | None = None) -> bytes:
    """The report as UTF-8 bytes with an XML declaration."""
    c = counts(results)
    total = _seconds(sum(r.seconds for r in results))
    stats = {"tests": str(len(results)), "failures": str(c["FAIL"]), "errors": str(c["ERROR"]), "skipped": "0", "time": total}
    root = ET.Element("testsuites", {"name": SUITE_NAME, **stats})
    when = (timestamp or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S")
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, **stats, "timestamp": when, "hostname": socket.gethostname() or "localhost"})
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "kschedctl", "value": __version__})
    ET.SubElement(props, "property", {"name": "kubeScheduler", "value": K8S_VERSION})
    for r in results:
        suite.append(_testcase(r))
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"


def write_junit(path: str, results: list[ScenarioResult]) -> None:
    from kschedctl.errors import UsageError

    try:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(junit_xml(results))
    except OSError as e:
        raise UsageError(f"--junit: cannot write {path}: {e.strerror or e}") from None
