"""What a simulated run reports: each attempt's ``Placement``, the nodes it changed, and the
summary (``SimulationResult``), with the options the run was given (``RunOptions``).

A placement also says whether another order could have placed the pod elsewhere
(``order_dependence``): the node order the scheduler was started with decides ties among nodes
with the top total and which nodes an early-stopping node search looks at; the order in which a
pod-group cycle takes pods of the group that entered the queue together decides which of them
gets which outcome. The notes on what the
run's model assumed are added when the run ends (``note_assumptions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.explain.cycle import tie_rule
from kschedctl.explain.trace import Trace
from kschedctl.explain.uncertainty import POD_GROUP_ORDER
from kschedctl.kube.features import Features
from kschedctl.snapshot.nodeorder import StartupOrder

#: Attempts a run makes before it stops (``--max-pods``; 0: no cap).
DEFAULT_MAX_PODS = 10_000

APPLY = "apply"
REPORT = "report"


@dataclass
class RunOptions:
    """How the loop treats preemption, batching and long runs."""

    #: "apply": victims deleted and the pod nominated, as the cluster would; "report": nothing changes.
    preemption: str = APPLY
    #: After every pod had its attempt, give each pod preemption nominated a second one.
    retry_nominated: bool = False
    #: OpportunisticBatching (v1.35 beta, on by default): off as with ``--feature-gates OpportunisticBatching=false``.
    batching: bool = True
    #: Stop after this many attempts (0: no cap).
    max_pods: int = DEFAULT_MAX_PODS
    #: Count, rather than schedule, the remaining copies of a workload once one does not fit.
    skip_identical_failures: bool = True
    #: Schedule the snapshot's pending pods too (queued at start-up, before the pods of the run).
    pending: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "preemption": self.preemption,
            "retryNominated": self.retry_nominated,
            "batching": self.batching,
            "maxPods": self.max_pods,
            "pending": self.pending,
        }


@dataclass
class Preemption:
    """What DefaultPreemption decided for a pod that did not fit."""

    nominated_node: str
    victims: list[str]
    #: Whether the victims were deleted and the pod nominated (the default) or it was only reported.
    applied: bool

    def to_dict(self) -> dict[str, Any]:
        return {"nominatedNode": self.nominated_node, "victims": list(self.victims), "applied": self.applied}


#: The outcome of a pod whose schedulerName no profile has: kube-scheduler leaves it to its own scheduler.
IGNORED = "ignored"


@dataclass
class Placement:
    """One scheduling attempt of one pod."""

    order: int  # 1-based position in the order of attempts
    pod: str
    workload: str | None
    profile: str
    outcome: str  # scheduled | unschedulable | gated | error | ignored
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    #: Feasible nodes the cycle found (at most numFeasibleNodesToFind; 1 when the batch's hint fit).
    feasible: int = 0
    fit_error: str | None = None
    error: str | None = None
    preemption: Preemption | None = None
    #: 1, or 2 for the retry of a nominated pod.
    attempt: int = 1
    #: OpportunisticBatching's node hint placed the pod (no scoring).
    batched: bool = False
    #: A later pod's preemption deleted this (placed) pod.
    evicted_by: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Nodes the cycle's Filter pass processed (how far ``nextStartNodeIndex`` moved).
    processed_nodes: int = 0
    #: The pod was pending in the snapshot (queued at start-up), not one of the run's own pods.
    pending_at_start: bool = False
    #: Why another order could have given the pod another outcome: "tie", "earlyStop" (the node order),
    #: "podGroupOrder" (the order its pod-group cycle took its group's pods in) (``order_dependence``).
    order_dependent: list[str] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.outcome == "scheduled"

    @property
    def nominated_node_name(self) -> str | None:
        return self.preemption.nominated_node if self.preemption else None

    @classmethod
    def of(cls, trace: Trace, order: int, workload: str | None, attempt: int) -> Placement:
        """The attempt as the cycle's trace tells it."""
        p = cls(order, trace.pod, workload, trace.profile, trace.outcome, attempt=attempt)
        p.node = trace.selected_node if trace.schedulable else None
        p.score = trace.max_score if trace.schedulable and not trace.batched else None
        p.candidates = list(trace.candidates) if trace.schedulable else []
        p.feasible = len(trace.feasible_nodes)
        p.fit_error = trace.fit_error
        p.error = trace.error
        p.batched = trace.batched
        p.processed_nodes = trace.processed_nodes
        p.order_dependent = order_dependence(trace)
        return p

    def to_dict(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "pod": self.pod,
            "workload": self.workload,
            "profile": self.profile,
            "attempt": self.attempt,
            "outcome": self.outcome,
            "node": self.node,
            "score": self.score,
            "candidates": list(self.candidates),
            "feasibleNodes": self.feasible,
            "batched": self.batched,
            "fitError": self.fit_error,
            "nominatedNodeName": self.nominated_node_name,
            "victims": list(self.preemption.victims) if self.preemption else [],
            "error": self.error,
            "preemption": self.preemption.to_dict() if self.preemption else None,
            "evictedBy": self.evicted_by,
            "pendingAtStart": self.pending_at_start,
            "orderDependent": list(self.order_dependent),
            "notes": list(self.notes),
        }


@dataclass
class Skipped:
    """Copies of a workload not scheduled one by one: identical to one that did not fit."""

    workload: str | None
    count: int
    same_as: str

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "count": self.count, "sameAs": self.same_as}


@dataclass
class AddedNodes:
    """What one ``--add-nodes T=N|auto`` added (``whatif.scaleup``): the count as asked or as found by the
    search, and the search (``auto``): the least count placing every pod (None: none up to the maximum)."""

    template: str
    count: int
    names: list[str]
    auto: bool = False
    least: int | None = None
    searched_up_to: int | None = None
    #: Runs of the loop the search made (0 for a count given).
    probes: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"template": self.template, "count": self.count, "auto": self.auto}
        if self.auto:
            out.update(least=self.least, searchedUpTo=self.searched_up_to, probes=self.probes)
        out["names"] = list(self.names)
        return out


@dataclass
class NodeChange:
    """What the run did to one node."""

    node: str
    added: list[str]
    removed: list[str]
    allocatable: dict[str, int]
    requested_before: dict[str, int]
    requested_after: dict[str, int]
    pods_before: int
    pods_after: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "added": list(self.added),
            "removed": list(self.removed),
            "allocatable": dict(self.allocatable),
            "requestedBefore": dict(self.requested_before),
            "requestedAfter": dict(self.requested_after),
            "podsBefore": self.pods_before,
            "podsAfter": self.pods_after,
        }


@dataclass
class SimulationResult:
    mode: str  # "pods" or "max"
    num_nodes: int
    options: RunOptions = field(default_factory=RunOptions)
    parallelism: int = 16
    placements: list[Placement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    nodes: list[NodeChange] = field(default_factory=list)
    stop_reason: str = ""
    #: Pods the run did not reach because of ``max_pods``.
    capped: bool = False
    cycles: int = 0
    elapsed_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: Set when the run itself failed: the QueueSort plugin raised (the pods kept the order given).
    error: str | None = None
    #: The node and start-up queue order the run assumed (``--node-order``).
    startup: StartupOrder = field(default_factory=StartupOrder)
    #: ``--add-nodes``: the new nodes per template (``whatif.scaleup``), and the runs the search made.
    add_nodes: list[AddedNodes] = field(default_factory=list)
    probes: int = 0

    def _counted(self) -> list[Placement]:
        """The attempts the summary counts: with ``--max`` the copies only, not the snapshot's pending pods."""
        if self.mode != "max":
            return self.placements
        return [p for p in self.placements if not p.pending_at_start]

    def _final(self) -> dict[str, Placement]:
        """Each counted pod's last attempt."""
        out: dict[str, Placement] = {}
        for p in self._counted():
            out[p.pod] = p
        return out

    @property
    def final_attempts(self) -> list[Placement]:
        """Each counted pod's last attempt, in the order of first attempts."""
        return list(self._final().values())

    @property
    def placed(self) -> list[Placement]:
        return [p for p in self._final().values() if p.placed]

    @property
    def not_placed(self) -> list[Placement]:
        """The pods this scheduler tried and did not place (not those it ignores: ``ignored``)."""
        return [p for p in self._final().values() if not p.placed and p.outcome != IGNORED]

    @property
    def ignored(self) -> list[Placement]:
        """The pods of another scheduler (a schedulerName no profile has): kube-scheduler leaves them alone."""
        return [p for p in self._final().values() if p.outcome == IGNORED]

    @property
    def not_tried(self) -> int:
        return sum(s.count for s in self.skipped)

    @property
    def first_failure(self) -> Placement | None:
        final = self._final()
        return next((p for p in self._counted() if not p.placed and final[p.pod] is p), None)

    @property
    def victims(self) -> list[str]:
        out: list[str] = []
        for p in self.placements:
            if p.preemption is not None and p.preemption.applied:
                out.extend(p.preemption.victims)
        return out

    @property
    def all_placed(self) -> bool:
        return not self.not_placed and not self.ignored and not self.not_tried and not self.capped

    @property
    def pods_per_second(self) -> float:
        return len(self.placed) / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        final = self._final()
        return {
            "mode": self.mode,
            "numNodes": self.num_nodes,
            "preemption": self.options.preemption,
            "options": {**self.options.to_dict(), "parallelism": self.parallelism},
            "summary": {
                "pods": len(final) + self.not_tried,
                "placed": len(self.placed),
                "notPlaced": len(self.not_placed) + self.not_tried,
                "notTried": self.not_tried,
                "nominated": sum(1 for p in final.values() if not p.placed and p.preemption is not None),
                "victims": len(self.victims),
                "batched": sum(1 for p in self.placements if p.batched),
                "capped": self.capped,
                "stopReason": self.stop_reason,
                # pods of another scheduler, apart from notPlaced; the key only when there are some
                **({"ignored": len(self.ignored)} if self.ignored else {}),
            },
            "firstFailure": first.to_dict() if first else None,
            "placements": [p.to_dict() for p in self.placements],
            "skipped": [s.to_dict() for s in self.skipped],
            "nodes": [n.to_dict() for n in self.nodes],
            "timing": {
                "cycles": self.cycles,
                "elapsedSeconds": round(self.elapsed_seconds, 4),
                "podsPerSecond": round(self.pods_per_second, 1),
            },
            "notes": list(self.notes),
            "error": self.error,
            "nodeOrder": self.startup.to_dict(),
            # only with --add-nodes: the outputs of other runs keep their keys
            **({"addNodes": [a.to_dict() for a in self.add_nodes], "probes": self.probes} if self.add_nodes else {}),
        }


# --------------------------------------------------------------------------- what the node order decided


TIE = "tie"
EARLY_STOP = "earlyStop"
#: How the note on placements the node order decided begins (``whatif.runs`` leaves it out of its notes).
ORDER_NOTE_START = "order-dependent:"


def order_dependence(trace: Trace) -> list[str]:
    """Why another node order (``--node-order``) could have given this placement another node: several
    nodes share the top total (``TIE``: the heap's pop follows the order), or the node search stopped
    at numFeasibleNodesToFind with nodes left unsearched (``EARLY_STOP``: the order decides which
    nodes were searched). A batch hint, and a pod that does not fit (every node searched), have neither.
    Beside them, ``POD_GROUP_ORDER``: the pod's pod-group cycle could have taken it in another place
    among pods of its group that entered the queue with it, and they did not all get the same outcome."""
    group = [POD_GROUP_ORDER] if trace.order is not None and POD_GROUP_ORDER in trace.order.reasons else []
    if not trace.schedulable or trace.batched:
        return group
    out = [TIE] if len(trace.candidates) > 1 else []
    names = trace.pre_filter_node_names
    searchable = len(names) if names is not None else trace.num_all_nodes
    if 0 < trace.num_nodes_to_find <= len(trace.feasible_nodes) and trace.processed_nodes < searchable:
        out.append(EARLY_STOP)
    return out + group


def order_dependence_note(placements: list[Placement]) -> str | None:
    """One line on the placements the node order decided (None: none was)."""
    ties = sum(1 for p in placements if TIE in p.order_dependent)
    stops = [p for p in placements if EARLY_STOP in p.order_dependent]
    grouped = sum(1 for p in placements if POD_GROUP_ORDER in p.order_dependent)
    if not ties and not stops and not grouped:
        return None
    n = sum(1 for p in placements if p.order_dependent)
    why = [f"{ties} by a tie among nodes with the top total"] if ties else []
    if stops:
        searched = min(p.processed_nodes for p in stops)
        why.append(f"{len(stops)} by a node search that stopped early (percentageOfNodesToScore; as few as {searched} "
                   "nodes searched)")
    decides = []
    if why:
        decides.append("the node order the scheduler was started with decides them (--node-order; --runs N shows the range)")
    if grouped:
        why.append(f"{grouped} by the order a pod-group cycle took pods of its group in")
        decides.append("a pod group's pods that entered the queue together are taken in an order set by a map inside "
                       "kube-scheduler, so which of them gets which outcome may change from run to run")
    return f"{ORDER_NOTE_START} {n} placement(s) were one outcome among several, {' and '.join(why)}; {'; '.join(decides)}"

# --------------------------------------------------------------------------- what the model assumed


def note_assumptions(result: SimulationResult, features: Features, pending_left_out: int) -> None:
    """The notes on what the run's model assumed where it mattered: batching, ties the node order or
    the version decides, parallelism, and the snapshot's pending pods left out (``pending_left_out``)."""
    batched = sum(1 for p in result.placements if p.batched)
    if batched:
        result.notes.append(
            f"{batched} pod(s) placed by OpportunisticBatching (v1.35 beta, on by default): the previous pod had the "
            "same signature, so the next node of its sorted scores was tried first and taken without scoring. "
            "Upstream drops a batch older than 500 ms (wall clock); this run assumes pods arrive back to back "
            "(the fast case), so a batch never expires"
        )
    order_note = order_dependence_note(result.placements)
    if order_note:
        result.notes.append(order_note)
    tied = any(p.placed and len(p.candidates) > 1 for p in result.placements)
    if tied and tie_rule(features) == "random":
        result.notes.append(
            f"kube-scheduler {features.release} breaks a tie among the top totals at random: where several nodes "
            "share it (a placement's candidates), the real loop may pick another of them, and the rest of the run "
            "follows from that choice; this run takes the first, as v1.35 does"
        )
    if result.parallelism > 1 and (tied or batched):
        result.notes.append(
            f"parallelism {result.parallelism}: kube-scheduler filters nodes in parallel, so its feasible list, and "
            "with it the choice among nodes with equal totals (and the next node a batch offers), varies from run "
            "to run; this run follows node order from nextStartNodeIndex, as with parallelism 1"
        )
    if pending_left_out:
        result.notes.append(
            f"{pending_left_out} pending pod(s) of the snapshot are not scheduled in this run (a real queue holds them "
            "too; they are left out on request); nominated ones are counted on their nominated node"
        )
