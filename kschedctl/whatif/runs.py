"""``simulate --runs N``: the same simulation under N random start-up orders, and the range of outcomes.

kube-scheduler's node tree and start-up queue are filled in the order its informers' initial lists
came back, which changes on every restart and cannot be read from the API server
(``snapshot/nodeorder.py``). Where that order decides (ties, an early stop of the node search,
which pending pod goes first), one run shows one of the possible outcomes. This module repeats the
run with random node and queue orders, each drawn from one seed so that the whole set, and any run
of it (``--node-order random --seed S``), can be repeated, and keeps of each run only what is
compared: how many pods were placed and preempted, where (by zone and by node group), and each
pod's outcome, so that the pods whose outcome depends on the order can be named.
"""

from __future__ import annotations

import random
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.kube.topology import ZONE_LABEL
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node
from kschedctl.snapshot.nodeorder import new_seed, random_order
from kschedctl.whatif.placements import ORDER_NOTE_START, SimulationResult

#: Labels that name a node's pool, looked for in this order when ``--group-by`` is not given.
GROUP_LABELS = (
    "karpenter.sh/nodepool",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
)
#: The value shown for nodes without the label.
NO_VALUE = "(none)"


def default_group_label(nodes: Iterable[Node]) -> str | None:
    """The first of ``GROUP_LABELS`` some node carries (None: none does)."""
    present = {k for n in nodes for k in n.labels}
    return next((label for label in GROUP_LABELS if label in present), None)


def fresh_cluster(cluster: Cluster) -> Cluster:
    """A copy of ``cluster`` whose pending pods are new objects: a run writes its placements and
    nominations onto the pending pods it schedules, and the next run must start from the snapshot."""
    return cluster.copy_with(pods=[p if p.node_name else p.fresh_copy() for p in cluster.pods])


@dataclass
class RunOutcome:
    """What one run is compared on."""

    seed: int
    placed: int
    not_placed: int
    preempted: int
    all_placed: bool
    by_zone: Counter[str] = field(default_factory=Counter)
    by_group: Counter[str] = field(default_factory=Counter)
    #: Each pod's outcome ("placed in <zone>", "unschedulable", "preempted", ...).
    pods: dict[str, str] = field(default_factory=dict)
    #: The pods the run tried to schedule (the others in ``pods`` are running pods it preempted).
    tried: set[str] = field(default_factory=set)
    #: Placements that were one outcome among several (a tie, an early stop).
    order_dependent: int = 0


def outcome_of(result: SimulationResult, cluster: Cluster, group_label: str | None, seed: int) -> RunOutcome:
    """The run's counts and each pod's outcome; a running pod that was preempted counts as "preempted"."""
    out = RunOutcome(seed, len(result.placed), len(result.not_placed) + result.not_tried, len(result.victims),
                     result.all_placed, order_dependent=sum(1 for p in result.placements if p.order_dependent))
    for p in result.final_attempts:
        out.tried.add(p.pod)
        node = cluster.node(p.node) if p.node else None
        if p.placed and p.evicted_by is None and node is not None:
            zone = node.labels.get(ZONE_LABEL, NO_VALUE)
            out.by_zone[zone] += 1
            if group_label is not None:
                out.by_group[node.labels.get(group_label, NO_VALUE)] += 1
            out.pods[p.pod] = f"placed in {zone}"
        elif p.placed:
            out.pods[p.pod] = "preempted"
        elif p.preemption is not None and p.preemption.applied:
            out.pods[p.pod] = "nominated"
        else:
            out.pods[p.pod] = p.outcome
    for victim in result.victims:
        out.pods[victim] = "preempted"
    return out


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """``web-2`` before ``web-10``: the digit runs of a name compared as numbers (copies are numbered)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)


def spread(values: list[int]) -> dict[str, float | int]:
    """Min, median and max."""
    med = statistics.median(values) if values else 0
    return {"min": min(values, default=0), "median": int(med) if float(med).is_integer() else med, "max": max(values, default=0)}


@dataclass
class RunsReport:
    """The runs' outcomes and what they have in common."""

    seed: int
    num_nodes: int
    group_label: str | None
    runs: list[RunOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: What fails in every run whatever the order (a drain's evictions refused or blocked).
    failures: list[str] = field(default_factory=list)
    #: A drain's verdict across the runs (``DrainTally.to_dict()``; None: not a drain).
    drain: dict[str, Any] | None = None

    @property
    def all_placed(self) -> bool:
        return all(r.all_placed for r in self.runs)

    @property
    def succeeded(self) -> bool:
        """Every pod placed in every run, and nothing failed whatever the order."""
        return self.all_placed and not self.failures

    def _by(self, attr: str) -> list[dict[str, Any]]:
        keys = sorted({k for r in self.runs for k in getattr(r, attr)})
        return [{"name": k, **spread([getattr(r, attr)[k] for r in self.runs])} for k in keys]

    def changes(self) -> list[dict[str, Any]]:
        """The pods whose outcome is not the same in every run, with how many runs gave each outcome
        (a running pod a run did not preempt is "running" there; a pod of the run it did not reach,
        counted as identical to a copy that did not fit or past ``--max-pods``, "not tried")."""
        pods = sorted({k for r in self.runs for k in r.pods}, key=natural_key)
        tried = set().union(*(r.tried for r in self.runs)) if self.runs else set()
        out: list[dict[str, Any]] = []
        for pod in pods:
            absent = "not tried" if pod in tried else "running"
            seen = Counter(r.pods.get(pod, absent) for r in self.runs)
            if len(seen) > 1:
                out.append({"pod": pod, "outcomes": [{"outcome": o, "runs": n} for o, n in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": "runs",
            "runs": len(self.runs),
            "seed": self.seed,
            "numNodes": self.num_nodes,
            "nodeOrder": {"order": "random", "seed": self.seed},
            "placed": spread([r.placed for r in self.runs]),
            "notPlaced": spread([r.not_placed for r in self.runs]),
            "preempted": spread([r.preempted for r in self.runs]),
            "orderDependent": spread([r.order_dependent for r in self.runs]),
            "allPlacedInEveryRun": self.all_placed,
            "failures": list(self.failures),
            "zoneLabel": ZONE_LABEL,
            "byZone": self._by("by_zone"),
            "groupLabel": self.group_label,
            "byGroup": self._by("by_group") if self.group_label else [],
            "changes": self.changes(),
            "perRun": [
                {"run": i, "seed": r.seed, "placed": r.placed, "notPlaced": r.not_placed, "preempted": r.preempted,
                 "orderDependent": r.order_dependent}
                for i, r in enumerate(self.runs, 1)
            ],
            "notes": list(self.notes),
            **({"drain": self.drain} if self.drain is not None else {}),
        }


@dataclass
class DrainTally:
    """A drain's verdict over the runs: in how many it was possible (every pod left its node and every
    replacement was placed), how many replacements were placed, and the pods lost in every run."""

    nodes: list[str]
    possible: int = 0
    runs: int = 0
    replacements: int = 0
    placed: list[int] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    #: The verdict of the first run where the drain was not possible, with that run's number.
    first_failure: str | None = None

    def add(self, succeeded: bool, replacements: int, placed: int, lost: Iterable[str], verdict: str) -> None:
        """One run's drain: whether it succeeded, its replacements and how many were placed, its lost
        pods, and its own verdict."""
        self.runs += 1
        if not succeeded and self.first_failure is None:
            self.first_failure = f"run {self.runs}: {verdict}"
        self.possible += succeeded
        self.replacements = max(self.replacements, replacements)
        self.placed.append(placed)
        self.lost = sorted(set(self.lost) | set(lost), key=natural_key)

    def verdict(self) -> str:
        nodes = ", ".join(self.nodes)
        head = (f"drain of {nodes} possible in every run ({self.runs})" if self.possible == self.runs
                else f"drain of {nodes} possible in {self.possible} of {self.runs} runs")
        lo, hi = min(self.placed, default=0), max(self.placed, default=0)
        placed = f"{lo}" if lo == hi else f"{lo} to {hi}"
        tail = f"; {len(self.lost)} pod(s) without a controller are lost" if self.lost else ""
        why = f" ({self.first_failure})" if self.first_failure else ""
        return f"{head}; {placed} of {self.replacements} replacement(s) placed{tail}{why}"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict(), "drained": list(self.nodes), "possibleRuns": self.possible,
                "replacements": self.replacements, "replacementsPlaced": spread(self.placed), "lost": list(self.lost)}


def run_many(
    cluster: Cluster,
    runs: int,
    one_run: Callable[[Cluster], SimulationResult],
    *,
    seed: int | None = None,
    group_by: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> RunsReport:
    """``one_run`` on a fresh copy of ``cluster`` per run, each with a random start-up order drawn from
    ``seed`` (None: a new one, reported); the runs' notes are kept once each."""
    base = seed if seed is not None else new_seed()
    rng = random.Random(base)
    label = group_by if group_by is not None else default_group_label(cluster.nodes)
    report = RunsReport(base, len(cluster.nodes), label)
    # A label no node carries would put every pod in one "(none)" group: say so and count no groups.
    counted = label if label is None or any(label in n.labels for n in cluster.nodes) else None
    for i in range(runs):
        run_seed = rng.randrange(2**31)
        copy_ = fresh_cluster(cluster)
        copy_.startup = random_order(cluster.nodes, run_seed)
        result = one_run(copy_)
        report.runs.append(outcome_of(result, copy_, counted, run_seed))
        for n in result.notes:
            if n not in report.notes and not n.startswith(ORDER_NOTE_START):
                report.notes.append(n)
        if progress is not None:
            progress(i + 1, runs)
    report.notes.insert(0, f"{runs} runs, each with the nodes joining the node tree and the pending pods the start-up "
                           f"queue in a random order, drawn from seed {base} (--seed {base} repeats them; one run alone: "
                           "--node-order random --seed <its seed>, each run's seed is in -o json)")
    if label is not None and counted is None:
        report.notes.append(f"no node carries the label {label} (--group-by): no per-group counts")
    if label is None:
        report.notes.append("no node carries a node-pool label (" + ", ".join(GROUP_LABELS) + "): no per-group counts; "
                            "--group-by LABEL names one")
    return report
