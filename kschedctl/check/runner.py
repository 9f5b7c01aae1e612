"""``kschedctl check``: scenario directories with expectations, compared field by field.

(Sequence scenarios, many pods placed one after another, are run by ``kschedctl.check.sequence``;
what both kinds share, results, comparison and a scenario's files, is ``kschedctl.check.scenario``.)

A scenario is a directory with cluster.yaml, pod.yaml, an optional config.yaml and
expected.json or expected.yaml. Without cluster.yaml it is checked against a cluster the caller
reads once for all such scenarios (``check --snapshot FILE``, or the live cluster), so a team can
assert that a pod still fits in the cluster it runs in. Expectations written by a person are partial:
only the keys present are compared, at every level. Expectations written by the
reference scheduler (they carry ``k8sVersion``) are compared exactly, so an extra
node in a filter map or a score table is a difference too. ``notes``, ``preBind``
and ``bind`` are informational and never fail a scenario (the reference may cut
binding short while it waits for a volume provisioner). Scheduler-extender calls
(``extenders``) are compared with the rules of the shared extender corpus: node lists
inside a call as sets (upstream sends them in the order its parallel Filter finished),
URLs without their port (the test extender runs on a free port), and ``selected.host``
(the tied node one run happened to pick) is informational.

A run may follow another Kubernetes version (``features``, ``kschedctl.kube.versions``): it is then
compared with that version's expectation, ``expected-v1.<minor>.json`` (or ``.yaml``), when the scenario
has one, else with the usual one. A run whose feature gates differ from its version's defaults is
compared first with the answer for those gates, when the scenario has one (``expected-v1.36-scs.json``
for v1.36 with StorageCapacityScoring=true; ``versioned_names``). An expectation that holds only ``{"refused": "<message>"}`` says
that version's API machinery refuses the input: the run must fail on reading it with that message.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from kschedctl.check.scenario import (
    EXPECTED_NAMES,
    Difference,
    ScenarioResult,
    compare,
    expected_file,
    has_cluster,
    load_expected,
    refused_result,
    scenario_cluster,
    scenario_config,
    versioned_names,
)
from kschedctl.check.sequence import is_sequence, run_sequence
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import InputError
from kschedctl.explain.cycle import explain_pod
from kschedctl.framework.registry import Registry
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import admit_pod, load_pods

#: Node lists inside an extender call that are compared as sets: ``sent.<key>`` and the call's own keys.
EXTENDER_SENT_NODE_LISTS = ("nodeNames", "nodes")
EXTENDER_NODE_LISTS = ("passed",)
_URL_PORT = re.compile(r"^(https?://[^/:]+):\d+")


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


def _has_any(d: Path, names: tuple[str, ...]) -> bool:
    return any((d / n).is_file() for n in names)


def is_scenario(d: Path) -> bool:
    """A single-pod scenario: pod.yaml, with cluster.yaml or (checked against another cluster) an expectation."""
    return (d / "pod.yaml").is_file() and (has_cluster(d) or _has_any(d, EXPECTED_NAMES))


def is_any_scenario(d: Path) -> bool:
    """A single-pod scenario, or a sequence scenario (``kschedctl.check.sequence``)."""
    return is_scenario(d) or is_sequence(d)


SCENARIO_HINT = "pod.yaml or pods.yaml, with cluster.yaml or an expectation"


def discover_scenarios(paths: list[str], *, changed: bool = False) -> list[Path]:
    """The scenario directories the paths name, each once, in the order given (a folder's in name order).

    A path is a scenario directory, a folder holding some, or a file inside a scenario directory (that
    scenario). ``changed``: the paths are changed files (as pre-commit passes them, or as ``git diff
    --name-only`` lists them): paths that belong to no scenario, or no longer exist, are skipped."""
    out: dict[Path, Path] = {}
    for p in paths:
        for d in _scenarios_of(Path(p), p, changed):
            out.setdefault(d.resolve(), d)
    return list(out.values())


def _scenarios_of(root: Path, given: str, changed: bool) -> list[Path]:
    if not root.exists():
        if changed:
            return []
        raise InputError("no such file or directory", source=given)
    if not root.is_dir():
        if is_any_scenario(root.parent):
            return [root.parent]
        if changed:
            return []
        raise InputError(f"not a file of a scenario directory ({SCENARIO_HINT})", source=given)
    if is_any_scenario(root):
        return [root]
    found = sorted(d for d in root.rglob("*") if d.is_dir() and is_any_scenario(d))
    if not found and not changed:
        raise InputError(f"no scenario directories ({SCENARIO_HINT}) found", source=given)
    return found


def users_of_shared(
    changed: list[str], config: str | None, snapshots: list[str], root: Path | None = None
) -> tuple[list[Path], list[str]]:
    """For ``check --changed``: the scenarios that use a changed ``--config`` file (those without their own
    config.yaml) or a changed ``--snapshot`` file (those without cluster.yaml), found under ``root`` (the
    current directory, where pre-commit runs its hooks); and a note per such file saying what it selected."""
    given = {Path(config).resolve(): "--config"} if config else {}
    given.update({Path(s).resolve(): "--snapshot" for s in snapshots if s != "-"})
    hits = {given[f]: c for c in changed if (f := Path(c).resolve()) in given}
    if not hits:
        return [], []
    base = root or Path(".")
    every = sorted(d for d in base.rglob("*") if d.is_dir() and is_any_scenario(d) and ".git" not in d.parts)
    own = {"--config": "config.yaml", "--snapshot": "cluster.yaml"}
    users = [d for d in every if any(not (d / own[opt]).is_file() for opt in hits)]
    notes = []
    for opt, c in hits.items():
        n = sum(1 for d in users if not (d / own[opt]).is_file())
        notes.append(f"{c} is the {opt} file: checking the {n} scenario{'s' if n != 1 else ''} under {base} that use it")
    return users, notes


def run_scenario(
    d: Path,
    registry: Registry | None = None,
    *,
    cluster: Cluster | None = None,
    config: SchedulerConfig | None = None,
    features: Features = DEFAULT_FEATURES,
) -> ScenarioResult:
    """Run one scenario. Bad input (a file that does not parse, an object the API server would
    refuse, an invalid configuration) raises InputError or ConfigError naming the file.

    ``cluster``: the cluster of scenarios without cluster.yaml; ``config``: the configuration of
    scenarios without config.yaml (both read once by the caller for every scenario); ``features``:
    the version and gates the run follows (its own expectation file is used when there is one)."""
    if not is_scenario(d) and is_sequence(d):
        return run_sequence(d, registry, cluster=cluster, config=config, features=features)
    names = versioned_names(EXPECTED_NAMES, features)
    exp_file = expected_file(d, names)
    expected = load_expected(d, names)
    if set(expected) == {"refused"}:
        return refused_result(
            d, exp_file, expected["refused"], lambda: _run_single(d, registry, cluster, config, features, exp_file, {})
        )
    return _run_single(d, registry, cluster, config, features, exp_file, expected)


def _run_single(
    d: Path,
    registry: Registry | None,
    cluster: Cluster | None,
    config: SchedulerConfig | None,
    features: Features,
    exp_file: Path,
    expected: dict[str, Any],
) -> ScenarioResult:
    name = d.name
    snapshot = scenario_cluster(d, cluster, features)
    pod_file = str(d / "pod.yaml")
    pods = load_pods(pod_file, features=features)
    if len(pods) != 1:
        raise InputError(f"a scenario's pod.yaml holds exactly one Pod, this one holds {len(pods)}", source=pod_file)
    pod = pods[0]
    admit_pod(snapshot, pod, pod_file)
    trace = explain_pod(snapshot, pod, scenario_config(d, registry, config, features), registry)
    actual = trace.to_dict()
    reference = "k8sVersion" in expected
    diffs = compare(comparable(expected), comparable(actual), exact=reference)
    # An error the expectation does not foresee fails the scenario (the reference writes the
    # message of a cycle that ended in an error into fitError, as in the PodScheduled condition).
    unforeseen = bool(trace.error and "error" not in expected and expected.get("fitError") != trace.error)
    if unforeseen:
        diffs.insert(0, Difference("error", None, trace.error))
    return ScenarioResult(
        name, str(d), not diffs, diffs, actual, expected_file=str(exp_file), reference=reference,
        unforeseen_error=unforeseen, run_error=trace.error if unforeseen else None,
    )
