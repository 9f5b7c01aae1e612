"""``kschedctl check`` for sequence scenarios: many pods placed one after another, compared pod by pod.

A sequence scenario is a directory with ``cluster.yaml``, ``pods.yaml`` (pods, or workloads that
expand into pods), an optional ``config.yaml`` and ``expected-sequence.json`` (or ``.yaml``); without
``cluster.yaml`` it is run against the cluster ``check`` reads for such scenarios. It
runs exactly as ``kschedctl simulate -f pods.yaml --snapshot cluster.yaml --config config.yaml``
does in its default mode (the real scheduling loop: queue order, one attempt per pod, batching,
preemption applied), except that every pod is scheduled: no cap, no skipping of identical copies.

The result has the schema of the reference's ``expected-sequence.json``: ``placements``, one
entry per attempt in the order the scheduler made them (``pod``, ``node``, ``fitError``,
``nominatedNodeName``, ``victims``, and the informational ``candidates``, ``feasibleNodes`` and
``batched``), plus ``summary`` (counts) and ``domains`` (scheduled pods per node-label value).
The cluster's own pending pods are scheduled too, first at equal priority, as the real loop queues
them at start-up (they appear in ``placements``); ``summary`` and ``domains`` count only the pods of
``pods.yaml``, so that an expectation about a rollout does not change with the cluster's backlog.

Expectations written by the reference (they carry ``k8sVersion``) are compared exactly: the same
attempts in the same order, each with the same pod, node, fitError, nominatedNodeName and victims.
Expectations written by a person are partial, only what they state is compared:

* ``placements`` as a list: its i-th entry against the i-th attempt, only the keys it has
  (``[{node: a}, {node: b}]``);
* ``placements`` as a mapping ``namespace/name -> {...}``: that pod's last attempt;
* ``summary``: any of ``pods``, ``placed``, ``notPlaced``, ``nominated``, ``victims``, ``batched``;
* ``domains``: ``{node label: {value: count}}``, e.g. how many replicas each zone received
  (``{topology.kubernetes.io/zone: {zone-a: 14, zone-b: 13, zone-c: 13}}``).

The file is read strictly (``SEQUENCE_KEYS``, ``PLACEMENT_KEYS``, ``SUMMARY_KEYS``): a key it does not
know is bad input naming the file and the key (``summry``: did you mean ``summary``?), never an
expectation that silently passes. A run in which a plugin returned an Error status (or the cycle
failed) fails the scenario with that error, unless the expectation states it as that attempt's
``fitError``; such a run is never written by ``check --update``.
"""

from __future__ import annotations

import copy
import difflib
from collections import Counter
from pathlib import Path
from typing import Any

from kschedctl.check.scenario import (
    Difference,
    ScenarioResult,
    compare,
    expected_file,
    has_cluster,
    load_expected,
    scenario_cluster,
    scenario_config,
    versioned_names,
)
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import InputError
from kschedctl.framework.registry import Registry
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import iter_documents, load_cluster
from kschedctl.whatif.placements import Placement, RunOptions, SimulationResult
from kschedctl.whatif.simulate import simulate_streams, workload_streams
from kschedctl.whatif.workloads import PodFactory, parse_manifests

EXPECTED_NAMES = ("expected-sequence.json", "expected-sequence.yaml", "expected-sequence.yml")
#: What agreement with the reference means, per attempt.
AGREEMENT_KEYS = ("pod", "node", "fitError", "nominatedNodeName", "victims")
#: The keys an expected-sequence file may have (``k8sVersion``, ``parallelism`` and ``notes`` from the reference).
SEQUENCE_KEYS = ("placements", "summary", "domains", "k8sVersion", "parallelism", "notes")
PLACEMENT_KEYS = (*AGREEMENT_KEYS, "candidates", "feasibleNodes", "batched")
SUMMARY_KEYS = ("pods", "placed", "notPlaced", "nominated", "victims", "batched")


def is_sequence(d: Path) -> bool:
    """pods.yaml (and no pod.yaml), with cluster.yaml or (checked against another cluster) an expectation."""
    if not (d / "pods.yaml").is_file() or (d / "pod.yaml").is_file():
        return False
    return has_cluster(d) or any((d / n).is_file() for n in EXPECTED_NAMES)


def load_expected_sequence(d: Path, names: tuple[str, ...] = EXPECTED_NAMES) -> dict[str, Any]:
    """The sequence's expectations; a file that does not parse is bad input (one line naming it)."""
    data = load_expected(d, names)
    source = str(expected_file(d, names))
    _known_keys(data, SEQUENCE_KEYS, source, "")
    placements = data.get("placements")
    if placements is not None and not isinstance(placements, list | dict):
        raise InputError("must be a list or a mapping of pod to expectations", source=source, field="placements")
    named = list(enumerate(placements)) if isinstance(placements, list) else list((placements or {}).items())
    for key, e in named:
        where = f"placements[{key}]" if isinstance(placements, list) else f"placements.{key}"
        _known_keys(e, PLACEMENT_KEYS, source, where)
    if data.get("summary") is not None:
        _known_keys(data["summary"], SUMMARY_KEYS, source, "summary")
    if data.get("domains") is not None and not isinstance(data["domains"], dict):
        raise InputError("must be a mapping of node label to {value: count}", source=source, field="domains")
    return data


def _known_keys(obj: Any, known: tuple[str, ...], source: str, where: str) -> None:
    """``obj`` is a mapping of ``known`` keys only; else bad input naming the key (and the key it is close to)."""
    if not isinstance(obj, dict):
        raise InputError(f"must be a mapping of {', '.join(known)}", source=source, field=where or None)
    for key in obj:
        if str(key) not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`?" if close else f"the keys are {', '.join(known)}"
            field = f"{where}.{key}" if where else str(key)
            raise InputError(f"unknown key of an expected-sequence file: {hint}", source=source, field=field)


def simulate_sequence(
    d: Path,
    registry: Registry | None = None,
    *,
    cluster: Cluster | None = None,
    config: SchedulerConfig | None = None,
    features: Features = DEFAULT_FEATURES,
) -> tuple[SimulationResult, Cluster]:
    """Run the scenario as ``simulate`` does (every pod scheduled, nothing capped or skipped).

    ``cluster`` (for a scenario without cluster.yaml) is deep-copied: a run changes the pods it holds
    (nominations), and the other scenarios must see it as it was read."""
    if has_cluster(d):
        cluster = load_cluster([str(d / "cluster.yaml")], features=features)
    else:
        cluster = copy.deepcopy(scenario_cluster(d, cluster))
    cfg = scenario_config(d, registry, config, features)
    manifests = parse_manifests(iter_documents([str(d / "pods.yaml")]), cluster, features)
    factory = PodFactory(manifests, cluster, private=True)
    streams, excluded = workload_streams(manifests, factory)
    options = RunOptions(max_pods=0, skip_identical_failures=False)
    result = simulate_streams(
        factory.cluster, cfg, streams, registry, options=options, exclude_pod_uids=excluded, owns_cluster=True
    )
    return result, factory.cluster


def sequence_entry(p: Placement) -> dict[str, Any]:
    """One attempt in the reference's schema."""
    return {
        "pod": p.pod,
        "node": p.node,
        "fitError": p.fit_error if p.fit_error is not None else p.error,
        "nominatedNodeName": p.nominated_node_name,
        "victims": list(p.preemption.victims) if p.preemption else [],
        "candidates": list(p.candidates),
        "feasibleNodes": p.feasible,
        "batched": p.batched,
    }


def own_summary(result: SimulationResult) -> dict[str, int]:
    """The counts of ``summary`` over the scenario's own pods (the snapshot's pending pods left out)."""
    own = [p for p in result.placements if not p.pending_at_start]
    final = {p.pod: p for p in own}
    placed = sum(1 for p in final.values() if p.placed)
    return {
        "pods": len(final),
        "placed": placed,
        "notPlaced": len(final) - placed,
        "nominated": sum(1 for p in final.values() if not p.placed and p.preemption is not None),
        "victims": sum(len(p.preemption.victims) for p in own if p.preemption is not None and p.preemption.applied),
        "batched": sum(1 for p in own if p.batched),
    }


def actual_sequence(result: SimulationResult, cluster: Cluster, domain_keys: list[str]) -> dict[str, Any]:
    attempts = [p for p in result.placements if p.outcome not in ("gated", "ignored")]
    placed = [p for p in result.placed if p.evicted_by is None and p.node and not p.pending_at_start]
    labels = {n.name: n.labels for n in cluster.nodes}
    domains: dict[str, dict[str, int]] = {}
    for key in domain_keys:
        counts: Counter[str] = Counter()
        for p in placed:
            value = labels.get(p.node or "", {}).get(key)
            if value is not None:
                counts[value] += 1
        domains[key] = dict(counts)
    return {
        "placements": [sequence_entry(p) for p in attempts],
        "summary": own_summary(result),
        "domains": domains,
        "notes": list(result.notes),
    }


def compare_exact(expected: list[Any], actual: list[dict[str, Any]]) -> list[Difference]:
    """The reference's placements: same attempts, same order, same agreement fields."""
    diffs: list[Difference] = []
    for i in range(max(len(expected), len(actual))):
        path = f"placements[{i}]"
        if i >= len(actual):
            diffs.append(Difference(path, expected[i], None))
            continue
        if i >= len(expected):
            diffs.append(Difference(path, None, {k: actual[i][k] for k in AGREEMENT_KEYS}))
            continue
        e = expected[i] if isinstance(expected[i], dict) else {}
        for k in AGREEMENT_KEYS:
            want = e.get(k)
            if k == "victims":
                want = want or []
            if want != actual[i][k]:
                diffs.append(Difference(f"{path}.{k}", want, actual[i][k]))
    return diffs


def compare_partial(expected: dict[str, Any], actual: dict[str, Any]) -> list[Difference]:
    diffs: list[Difference] = []
    want = expected.get("placements")
    got: list[dict[str, Any]] = actual["placements"]
    if isinstance(want, list):
        for i, e in enumerate(want):
            if i >= len(got):
                diffs.append(Difference(f"placements[{i}]", e, None))
            else:
                diffs.extend(compare(e, got[i], f"placements[{i}]"))
    elif isinstance(want, dict):
        last = {a["pod"]: a for a in got}
        for pod, e in want.items():
            a = last.get(str(pod))
            if a is None:
                diffs.append(Difference(f"placements.{pod}", e, None))
            else:
                diffs.extend(compare(e, a, f"placements.{pod}"))
    for key in ("summary", "domains"):
        if key in expected:
            diffs.extend(compare(expected[key], actual[key], key))
    return diffs


def run_sequence(
    d: Path,
    registry: Registry | None = None,
    *,
    cluster: Cluster | None = None,
    config: SchedulerConfig | None = None,
    features: Features = DEFAULT_FEATURES,
) -> ScenarioResult:
    """Run one sequence scenario (under ``features``' version, against its own expectation file when the
    scenario has one: ``expected-sequence-v1.36.json``). Bad input raises, as for single-pod scenarios."""
    names = versioned_names(EXPECTED_NAMES, features)
    exp_file = expected_file(d, names)
    expected = load_expected_sequence(d, names)
    domains = expected.get("domains")
    keys = [str(k) for k in domains] if isinstance(domains, dict) else []
    result, run_cluster = simulate_sequence(d, registry, cluster=cluster, config=config, features=features)
    actual = actual_sequence(result, run_cluster, keys)
    reference = "k8sVersion" in expected
    if reference:
        diffs = compare_exact(list(expected.get("placements") or []), actual["placements"])
    else:
        diffs = compare_partial(expected, actual)
    error = unforeseen_error(result, expected)
    if error:
        diffs.insert(0, Difference("error", None, error))
    return ScenarioResult(
        d.name, str(d), not diffs, diffs, actual,
        expected_file=str(exp_file), reference=reference, unforeseen_error=bool(error), run_error=error,
    )


def unforeseen_error(result: SimulationResult, expected: dict[str, Any]) -> str | None:
    """The run's errors (a plugin's Error status, a cycle or queue-sort error) that the expectation does
    not state as an attempt's ``fitError``, as one line: the first, and how many more there were."""
    placements = expected.get("placements")
    entries = placements if isinstance(placements, list) else list((placements or {}).values())
    foreseen = {e.get("fitError") for e in entries if isinstance(e, dict)}
    errors = [result.error] if result.error else []
    errors += [f"{p.pod}: {p.error}" for p in result.placements if p.error and p.error not in foreseen]
    if not errors:
        return None
    more = len(errors) - 1
    return errors[0] + (f" (and {more} more attempt{'s' if more > 1 else ''} ended in an error)" if more else "")
