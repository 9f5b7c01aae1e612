"""``kschedctl check --update``: expectations rewritten from the results and shown as a diff, like golden files.

What a user asking for an update gets (the README's "kschedctl in CI" says the same):

* Only what fails is rewritten: a value of the file that differs from the result takes the
  result's value, a key the result no longer has is removed, and nothing else changes. A
  hand-written partial expectation stays partial (no key is added); informational keys
  (``notes``, ``preBind``, ``bind``, ``selected.host``) stay as written. Afterwards the scenario passes.
* Expectations written by kube-scheduler itself (they carry ``k8sVersion``) are never rewritten:
  they are what kschedctl is measured against, so a difference from them is a bug to fix, not an
  expectation to update. To take kschedctl's answer anyway, delete ``k8sVersion`` from the file:
  it becomes a hand-written expectation (compared partially) that ``--update`` rewrites.
* A run that ended in an error the expectation does not foresee (a plugin or an extender failed)
  is not written into it: the error is the problem to fix.
* Files are written only inside the paths given to ``check`` (a file argument stands for its
  scenario directory), never through a symlink that leads out of them.
* A file keeps its format: JSON its indentation, YAML its comments, key order and styles
  (``kschedctl.check.yamledit``); every change is returned as a unified diff.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from pathlib import Path
from typing import Any

from kschedctl.check.runner import comparable
from kschedctl.check.scenario import INFORMATIONAL, ScenarioResult, compare, load_expected
from kschedctl.check.sequence import EXPECTED_NAMES as SEQUENCE_NAMES
from kschedctl.check.sequence import compare_partial
from kschedctl.check.yamledit import edit_yaml

REFERENCE_REASON = (
    "written by kube-scheduler {version} (k8sVersion): a difference from the reference is a bug of kschedctl, "
    "not an expectation to update (delete k8sVersion to make the file a hand-written expectation)"
)
ERROR_REASON = "the run ended in an error the expectation does not foresee: fix the cause, nothing was written"


def merged(expected: Any, actual: Any) -> Any:
    """``expected`` with the result's values where they differ, keys the result lacks removed, no key added."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {k: merged(v, actual[k]) for k, v in expected.items() if k in actual}
    return expected if expected == actual else copy.deepcopy(actual)


def updated_trace_expectation(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """A single-pod expectation brought up to date, compared as ``runner.compare`` compares it."""
    want, got = comparable(expected), comparable(actual)
    out: dict[str, Any] = {}
    for k, v in expected.items():
        if k in INFORMATIONAL:
            out[k] = v
        elif k == "extenders":
            out[k] = v if want[k] == got.get(k) else copy.deepcopy(actual.get(k))
        elif k == "selected" and isinstance(v, dict) and isinstance(actual.get(k), dict):
            out[k] = {sk: (sv if sk == "host" else merged(sv, actual[k][sk])) for sk, sv in v.items() if sk == "host" or sk in actual[k]}
        elif k in actual:
            out[k] = merged(v, actual[k])
    return out


def updated_sequence_expectation(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """A partial sequence expectation brought up to date, compared as ``sequence.compare_partial`` compares it."""
    out = dict(expected)
    want, got = expected.get("placements"), actual["placements"]
    if isinstance(want, list):
        out["placements"] = [merged(e, got[i]) for i, e in enumerate(want) if i < len(got)]
    elif isinstance(want, dict):
        last = {a["pod"]: a for a in got}
        out["placements"] = {pod: merged(e, last[str(pod)]) for pod, e in want.items() if str(pod) in last}
    for key in ("summary", "domains"):
        if key in expected:
            out[key] = merged(expected[key], actual[key])
    return out


def _still_differs(is_sequence: bool, new: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    diffs = compare_partial(new, actual) if is_sequence else compare(comparable(new), comparable(actual))
    return [str(d) for d in diffs]


def allowed_roots(paths: list[str]) -> list[Path]:
    """Where ``--update`` may write: each given directory, and the scenario directory of each given file."""
    roots = []
    for p in paths:
        path = Path(p)
        if path.exists():
            roots.append((path if path.is_dir() else path.parent).resolve())
    return roots


def _inside(f: Path, roots: list[Path]) -> bool:
    target = f.resolve()
    return any(target == r or target.is_relative_to(r) for r in roots)


def json_text(old_text: str, new: Any) -> str:
    """``new`` as JSON laid out as ``old_text`` was: its indentation, ASCII escapes and final newline."""
    body = old_text.strip()
    m = re.search(r"\n([ \t]+)\S", body)
    indent: str | None = m.group(1) if m else (None if "\n" not in body else "")
    text = json.dumps(new, indent=indent, ensure_ascii="\\u" in old_text)
    return text + ("\n" if old_text.endswith("\n") else "")


def new_text(path: Path, old_text: str, new: dict[str, Any]) -> tuple[str, bool]:
    """The file's new text, and whether its comments and layout were kept."""
    if path.suffix == ".json":
        return json_text(old_text, new), True
    return edit_yaml(old_text, new)


def unified_diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def update_result(r: ScenarioResult, roots: list[Path]) -> None:
    """Rewrite ``r``'s expectation from its result when it failed and may be rewritten; record what was done in ``r.update``."""
    if r.passed or r.error or r.actual is None or r.expected_file is None:
        return
    path = Path(r.expected_file)
    if r.reference:
        version = load_expected(path.parent, (path.name,)).get("k8sVersion")
        r.update = {"file": str(path), "written": False, "reason": REFERENCE_REASON.format(version=version)}
        return
    if r.unforeseen_error:
        r.update = {"file": str(path), "written": False, "reason": ERROR_REASON}
        return
    if not _inside(path, roots):
        r.update = {"file": str(path), "written": False, "reason": f"{path.resolve()} is outside the paths given to check"}
        return
    is_sequence = path.name in SEQUENCE_NAMES
    expected = load_expected(path.parent, (path.name,))
    new = (updated_sequence_expectation if is_sequence else updated_trace_expectation)(expected, r.actual)
    left = _still_differs(is_sequence, new, r.actual)
    if left:
        r.update = {"file": str(path), "written": False, "reason": f"the result cannot be written in this file's keys: {left[0]}"}
        return
    old_text = path.read_text(encoding="utf-8")
    text, kept = new_text(path, old_text, new)
    path.resolve().write_text(text, encoding="utf-8")
    r.update = {"file": str(path), "written": True, "diff": unified_diff(str(path), old_text, text)}
    if not kept:
        r.update["note"] = "the file was written anew: comments after its first lines were not kept"


def apply_updates(results: list[ScenarioResult], paths: list[str]) -> None:
    roots = allowed_roots(paths)
    for r in results:
        update_result(r, roots)
