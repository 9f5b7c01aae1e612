"""``kschedctl check``: scenario directories with expectations, compared field by field.

(Sequence scenarios, many pods placed one after another, are run by ``kschedctl.check.sequence``.)

A scenario is a directory with cluster.yaml, pod.yaml, an optional config.yaml and
expected.json or expected.yaml. Expectations written by a person are partial:
only the keys present are compared, at every level. Expectations written by the
reference scheduler (they carry ``k8sVersion``) are compared exactly, so an extra
node in a filter map or a score table is a difference too. ``notes``, ``preBind``
and ``bind`` are informational and never fail a scenario (the reference may cut
binding short while it waits for a volume provisioner). Scheduler-extender calls
(``extenders``) are compared with the rules of the shared extender corpus: node lists
inside a call as sets (upstream sends them in the order its parallel Filter finished),
URLs without their port (the test extender runs on a free port), and ``selected.host``
(the tied node one run happened to pick) is informational.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl.config import load_config
from kschedctl.errors import InputError
from kschedctl.explain.cycle import explain_pod
from kschedctl.framework.registry import Registry
from kschedctl.snapshot.loader import admit_pod, iter_documents, load_cluster, load_pods

INFORMATIONAL = frozenset({"k8sVersion", "notes", "preBind", "bind"})
#: Node lists inside an extender call that are compared as sets: ``sent.<key>`` and the call's own keys.
EXTENDER_SENT_NODE_LISTS = ("nodeNames", "nodes")
EXTENDER_NODE_LISTS = ("passed",)
_URL_PORT = re.compile(r"^(https?://[^/:]+):\d+")
EXPECTED_NAMES = ("expected.json", "expected.yaml", "expected.yml")


@dataclass
class Difference:
    path: str
    expected: Any
    actual: Any

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "expected": self.expected, "actual": self.actual}

    def __str__(self) -> str:
        return f"{self.path}: expected {json.dumps(self.expected)}, got {json.dumps(self.actual)}"


@dataclass
class ScenarioResult:
    name: str
    path: str
    passed: bool
    differences: list[Difference] = field(default_factory=list)
    actual: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "differences": [d.to_dict() for d in self.differences],
            "error": self.error,
            "actual": self.actual,
        }

    def plugins_involved(self) -> set[str]:
        """Plugins named in the differing paths (for per-plugin agreement reports)."""
        out: set[str] = set()
        for d in self.differences:
            parts = d.path.split(".")
            if parts[0] == "score" and len(parts) > 1:
                out.add(parts[1])
            elif parts[0] == "filter":
                for v in (d.expected, d.actual):
                    if isinstance(v, dict) and v.get("plugin"):
                        out.add(str(v["plugin"]))
                    elif isinstance(v, str) and len(parts) > 2 and parts[-1] == "plugin":
                        out.add(v)
        return out


def compare(expected: Any, actual: Any, path: str = "", *, exact: bool = False) -> list[Difference]:
    """Differences between an expectation and the actual trace (partial unless ``exact``)."""
    diffs: list[Difference] = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            if not path and k in INFORMATIONAL:
                continue
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                diffs.append(Difference(sub, v, None))
                continue
            diffs.extend(compare(v, actual[k], sub, exact=exact))
        if exact and path:
            for k in actual:
                if k not in expected:
                    diffs.append(Difference(f"{path}.{k}", None, actual[k]))
        return diffs
    if expected != actual:
        diffs.append(Difference(path or "<root>", expected, actual))
    return diffs


def _comparable_extender_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    out = dict(call)
    for k in ("url", "extender"):
        if isinstance(out.get(k), str):
            out[k] = _URL_PORT.sub(r"\1", out[k])
    for k in EXTENDER_NODE_LISTS:
        if isinstance(out.get(k), list):
            out[k] = sorted(out[k], key=str)
    sent = out.get("sent")
    if isinstance(sent, dict):
        out["sent"] = {k: sorted(v, key=str) if k in EXTENDER_SENT_NODE_LISTS and isinstance(v, list) else v
                       for k, v in sent.items()}
    return out


def comparable(trace: dict[str, Any]) -> dict[str, Any]:
    """The trace (expected or actual) as it is compared: extender rules applied, informational keys gone."""
    out = copy.copy(trace)
    if isinstance(out.get("extenders"), list):
        out["extenders"] = [_comparable_extender_call(c) for c in out["extenders"]]
    if isinstance(out.get("selected"), dict) and "host" in out["selected"]:
        out["selected"] = {k: v for k, v in out["selected"].items() if k != "host"}
    return out


def is_scenario(d: Path) -> bool:
    return (d / "pod.yaml").is_file() and (d / "cluster.yaml").is_file()


def _is_any_scenario(d: Path) -> bool:
    """A single-pod scenario, or a sequence scenario (``kschedctl.check.sequence``)."""
    from kschedctl.check.sequence import is_sequence

    return is_scenario(d) or is_sequence(d)


def discover_scenarios(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise InputError("no such file or directory", source=p)
        if not root.is_dir():
            raise InputError("a scenario must be a directory (cluster.yaml, pod.yaml, expected.json)", source=p)
        if _is_any_scenario(root):
            out.append(root)
            continue
        found = sorted(d for d in root.rglob("*") if d.is_dir() and _is_any_scenario(d))
        if not found:
            raise InputError("no scenario directories (with cluster.yaml and pod.yaml or pods.yaml) found", source=p)
        out.extend(found)
    return out


def load_expected(d: Path) -> dict[str, Any]:
    """The scenario's expectations; a file that does not parse is bad input (one line naming it)."""
    for name in EXPECTED_NAMES:
        f = d / name
        if f.is_file():
            docs = [doc.obj for doc in iter_documents([str(f)])]
            if len(docs) != 1:
                raise InputError(f"expectations must be one mapping, the file holds {len(docs)} documents", source=str(f))
            return docs[0]
    raise InputError("no expected.json or expected.yaml", source=str(d))


def run_scenario(d: Path, registry: Registry | None = None) -> ScenarioResult:
    """Run one scenario. Bad input (a file that does not parse, an object the API server would
    refuse, an invalid configuration) raises: ``check`` stops with exit status 2 naming the file."""
    if not is_scenario(d):
        from kschedctl.check.sequence import is_sequence, run_sequence

        if is_sequence(d):
            return run_sequence(d, registry)
    name = d.name
    expected = load_expected(d)
    cluster = load_cluster([str(d / "cluster.yaml")])
    pod_file = str(d / "pod.yaml")
    pods = load_pods(pod_file)
    if len(pods) != 1:
        raise InputError(f"a scenario's pod.yaml holds exactly one Pod, this one holds {len(pods)}", source=pod_file)
    pod = pods[0]
    admit_pod(cluster, pod, pod_file)
    cfg_path = d / "config.yaml"
    config = load_config(str(cfg_path) if cfg_path.is_file() else None, registry)
    trace = explain_pod(cluster, pod, config, registry)
    actual = trace.to_dict()
    diffs = compare(comparable(expected), comparable(actual), exact="k8sVersion" in expected)
    # An error the expectation does not foresee fails the scenario (the reference writes the
    # message of a cycle that ended in an error into fitError, as in the PodScheduled condition).
    if trace.error and "error" not in expected and expected.get("fitError") != trace.error:
        diffs.append(Difference("error", None, trace.error))
    return ScenarioResult(name, str(d), not diffs, diffs, actual)
