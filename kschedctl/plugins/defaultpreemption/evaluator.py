"""The generic preemption evaluator, as a dry run: which node to nominate and which pods would go.

kube-scheduler splits preemption in two: a plugin-independent evaluator
(``framework/preemption``) that finds candidate nodes, simulates victim
selection on each, asks extenders, and picks one node; and the plugin
(DefaultPreemption) that decides eligibility and how victims are chosen on one
node. This module is the first half. It never evicts anything: the chosen
candidate is returned as a result, and the caller shows it.

Where upstream depends on chance or on a live cluster, this module makes a
deterministic choice and says so in the result's details:

* the search window starts at offset 0 (upstream draws a random offset; it only
  matters when at least ``minCandidateNodesAbsolute`` nodes are candidates);
* the dry run visits candidate nodes one after another, stopping where the
  parallel upstream run cancels (enough candidates, at least one without PDB
  violations);
* a complete tie between candidate nodes keeps the first in candidate order
  (upstream iterates a Go map, so its pick is random);
* configured extenders are asked (``preemptVerb``) as upstream does; their answers only
  narrow the candidates, nothing is evicted. Upstream rebuilds the candidate list
  from a Go map once any extender is configured, so the order among candidates (which
  only matters for a complete tie) is then random; here it stays in candidate order.

Upstream model: ``pkg/scheduler/framework/preemption/preemption.go``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from kschedctl.errors import InputError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.extender import ExtenderError
from kschedctl.framework.interfaces import Handle, NodeToStatus, NominatingInfo, PostFilterResult
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.selectors import Selector, parse_label_selector
from kschedctl.snapshot.model import KubeObject, Pod

#: Start time used for a pod without ``status.startTime``: upstream takes ``time.Now()``,
#: which is later than any recorded start.
NOW = (1 << 63) - 1
_MIN_INT64 = -(1 << 63)
_INT32_SPAN = 1 << 31  # math.MaxInt32 + 1

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


# --------------------------------------------------------------------------- pod ordering


def parse_time_ns(value: Any) -> int | None:
    """An RFC 3339 timestamp as nanoseconds since the epoch (None when absent or unreadable)."""
    if isinstance(value, datetime):  # a YAML loader may have turned it into a datetime already
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return (dt - _EPOCH) // timedelta(microseconds=1) * 1000
    if not isinstance(value, str):
        return None
    m = _TS.match(value.strip())
    if m is None:
        return None
    zone = m.group(3)
    try:
        dt = datetime.fromisoformat(m.group(1) + ("+00:00" if zone == "Z" else zone))
    except ValueError:
        return None
    frac = m.group(2)
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    return (dt - _EPOCH) // timedelta(seconds=1) * 1_000_000_000 + nanos


_START_CACHE: dict[str, int | None] = {}


def pod_start_time(pod: Pod) -> int | None:
    """``GetPodStartTime``: ``status.startTime``; None stands for "now" (no start recorded)."""
    status = pod.raw.get("status")
    if not isinstance(status, dict):
        return None
    value = status.get("startTime")
    if not isinstance(value, str):
        return parse_time_ns(value)
    # victim sorting compares the same few timestamps over and over: parse each string once
    try:
        return _START_CACHE[value]
    except KeyError:
        if len(_START_CACHE) > 100_000:
            _START_CACHE.clear()
        t = _START_CACHE[value] = parse_time_ns(value)
        return t


def more_important_pod(a: Pod, b: Pod) -> bool:
    """``MoreImportantPod``: higher priority first, then the pod that started earlier.

    A pod without a start time counts as started "now"; when neither has one,
    upstream reads the clock twice and the first read is earlier, so ``a`` wins.
    """
    pa, pb = a.effective_priority, b.effective_priority
    if pa != pb:
        return pa > pb
    ta, tb = pod_start_time(a), pod_start_time(b)
    if ta is None:
        return tb is None
    if tb is None:
        return True
    return ta < tb


def earliest_start_of_top_priority(victims: list[Pod]) -> int | None:
    """``GetEarliestPodStartTime``: earliest start among the highest-priority victims."""
    if not victims:
        return None
    top = victims[0].effective_priority
    earliest = _start_or_now(victims[0])
    for p in victims:
        prio = p.effective_priority
        if prio == top:
            t = _start_or_now(p)
            if t < earliest:
                earliest = t
        elif prio > top:
            top = prio
            earliest = _start_or_now(p)
    return earliest


def _start_or_now(pod: Pod) -> int:
    t = pod_start_time(pod)
    return NOW if t is None else t


# --------------------------------------------------------------------------- PodDisruptionBudgets


@dataclass(slots=True)
class PDB:
    """The parts of a policy/v1 PodDisruptionBudget that preemption reads."""

    namespace: str
    name: str
    #: None when the selector is invalid (then it matches no pod).
    selector: Selector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def of(cls, obj: KubeObject) -> PDB:
        spec, status = obj.spec, obj.status
        try:
            sel: Selector | None = parse_label_selector(spec.get("selector"), "spec.selector")
        except InputError:
            sel = None
        try:
            allowed = int(status.get("disruptionsAllowed") or 0)
        except (TypeError, ValueError):
            allowed = 0
        disrupted = status.get("disruptedPods")
        names = frozenset(str(k) for k in disrupted) if isinstance(disrupted, dict) else frozenset()
        return cls(obj.namespace, obj.name, sel, allowed, names)

    def covers(self, pod: Pod) -> bool:
        """Same namespace and a non-empty selector that matches the pod's labels."""
        if self.namespace != pod.namespace or self.selector is None:
            return False
        if self.selector.empty:  # an empty selector protects nothing here
            return False
        return self.selector.matches(pod.labels)


def list_pdbs(handle: Handle) -> list[PDB]:
    return [PDB.of(o) for o in handle.cluster.of_kind("PodDisruptionBudget")]


def split_by_pdb_violation(pods: list[Pod], pdbs: list[PDB]) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), each keeping the input order.

    Each pod spends one disruption of every PDB covering it (unless the PDB
    already lists it as disrupted); a pod whose spending takes any budget below
    zero is violating.
    """
    budget = [p.disruptions_allowed for p in pdbs]
    violating: list[Pod] = []
    fine: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.covers(pod) or pod.name in pdb.disrupted_pods:
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    violated = True
        (violating if violated else fine).append(pod)
    return violating, fine


# --------------------------------------------------------------------------- candidates


@dataclass(slots=True)
class Candidate:
    """A node where the preemptor would fit once ``victims`` are gone."""

    name: str
    victims: list[Pod]
    num_pdb_violations: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.name,
            "victims": [v.key for v in self.victims],
            "victimPriorities": [v.effective_priority for v in self.victims],
            "numPDBViolations": self.num_pdb_violations,
        }


class _BoundedList:
    """``candidateList``: keeps at most ``cap`` candidates, counts every add."""

    __slots__ = ("added", "cap", "items")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.items: list[Candidate] = []
        self.added = 0

    def add(self, c: Candidate) -> None:
        self.added += 1
        if len(self.items) < self.cap:
            self.items.append(c)

    def size(self) -> int:
        return len(self.items)


class PreemptionPlugin(Protocol):
    """What the evaluator needs from a preemption plugin (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: list[PDB]
    ) -> tuple[list[Pod], int, Status]: ...

    def ordered_score_funcs(self, candidates: list[Candidate]) -> list[Callable[[Candidate], int]] | None: ...


@dataclass
class DryRun:
    candidates: list[Candidate]
    node_statuses: NodeToStatus
    errors: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


def fit_error_text(num_all_nodes: int, statuses: NodeToStatus) -> str:
    """``FitError.Error()`` for preemption's own diagnosis (no PreFilter or PostFilter message)."""
    counts: Counter[str] = Counter()
    for st in statuses.node_to_status.values():
        for r in st.reasons:
            counts[r] += 1
    explicit = len(statuses)
    if explicit < num_all_nodes:
        for r in statuses.absent_nodes_status.reasons:
            counts[r] += num_all_nodes - explicit
    msg = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


def aggregate_errors(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or "[a, b]" without repeats."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def status_message(st: Status) -> str:
    return st.error if st.error else st.message()


class Evaluator:
    """``preemption.Evaluator`` without the eviction: ``preempt`` returns the decision."""

    def __init__(self, plugin_name: str, handle: Handle, plugin: PreemptionPlugin) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.plugin = plugin

    def preempt(self, state: CycleState, pod: Pod, m: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        details: dict[str, Any] = {"dryRun": True}
        # 1) may this pod preempt at all?
        nominated_status = m.get(pod.nominated_node_name)
        ok, why = self.plugin.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            details["eligible"] = False
            details["reason"] = why
            return PostFilterResult(None, details=details), Status(Code.UNSCHEDULABLE, why)
        details["eligible"] = True

        # 2) candidates
        all_nodes = self.handle.snapshot.node_info_list
        if not all_nodes:
            return None, Status.as_error("no nodes available")
        potential = m.nodes_for_status_code(all_nodes, Code.UNSCHEDULABLE)
        details["potentialNodes"] = [ni.name for ni in potential]
        if potential:
            pdbs = list_pdbs(self.handle)
            offset, num_candidates = self.plugin.get_offset_and_num_candidates(len(potential))
            details["offset"] = offset
            details["numCandidates"] = num_candidates
            run = self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)
        else:
            run = DryRun([], NodeToStatus())
        details["checkedNodes"] = run.checked
        details["candidates"] = [c.to_dict() for c in run.candidates]
        details["nodeStatuses"] = {
            name: {"code": st.code.label, "reasons": list(st.reasons)}
            for name, st in run.node_statuses.node_to_status.items()
        }
        if run.errors and not run.candidates:
            return PostFilterResult(None, details=details), Status.as_error(aggregate_errors(run.errors))

        if not run.candidates:
            run.node_statuses.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Preemption is not helpful for scheduling"
            )
            msg = fit_error_text(len(all_nodes), run.node_statuses)
            return (
                PostFilterResult(NominatingInfo("", "Override"), details=details),
                Status(Code.UNSCHEDULABLE, msg),
            )

        # 3) extenders that support preemption may narrow the candidates
        candidates, ext_status = self.call_extenders(pod, run.candidates, details)
        if not ext_status.is_success():
            return PostFilterResult(None, details=details), ext_status
        run.candidates = candidates
        # 4) the best candidate
        best = self.select_candidate(run.candidates)
        if best is None or not best.name:
            return PostFilterResult(None, details=details), Status(
                Code.UNSCHEDULABLE, "no candidate node for preemption"
            )
        details["selected"] = best.to_dict()
        # 5) upstream now evicts the victims and clears lower-priority nominations; a dry run stops here.
        details["lowerPriorityNominatedPods"] = [
            pi.pod.key
            for pi in self.handle.nominated_pods_for_node(best.name)
            if pi.pod.effective_priority < pod.effective_priority
        ]
        result = PostFilterResult(
            NominatingInfo(best.name, "Override"), victims=list(best.victims), details=details
        )
        return result, Status()

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate], details: dict[str, Any]
    ) -> tuple[list[Candidate], Status]:
        """``callExtenders``: each interested extender with a preempt verb gets the node -> victims map
        the previous one left, and returns the part it accepts."""
        extenders = list(getattr(self.handle, "extenders", None) or [])
        if not extenders:
            return candidates, Status()
        victims: dict[str, tuple[list[Pod], int]] = {}
        for c in candidates:
            victims[c.name] = (list(c.victims), c.num_pdb_violations)
        if not victims:
            return candidates, Status()
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                answer = ext.process_preemption(pod, victims, self.handle.snapshot.get)
            except ExtenderError as e:
                if ext.is_ignorable():
                    if e.call is not None:
                        e.call.outcome = "ignored"
                    continue
                return [], Status.as_error(str(e))
            for node, (pods, _n) in list(answer.items()):
                if not pods:
                    if ext.is_ignorable():
                        del answer[node]
                        continue
                    return [], Status.as_error(f'expected at least one victim pod on node "{node}"')
            victims = answer
            if not victims:
                break
        details["candidatesAfterExtenders"] = list(victims)
        return [Candidate(n, pods, k) for n, (pods, k) in victims.items()], Status()

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential: list[NodeInfo],
        pdbs: list[PDB],
        offset: int,
        num_candidates: int,
    ) -> DryRun:
        """``DryRunPreemption`` visited in order from ``offset``, stopping where upstream cancels."""
        non_violating = _BoundedList(num_candidates)
        violating = _BoundedList(num_candidates)
        statuses = NodeToStatus()
        errors: list[str] = []
        checked: list[str] = []
        n = len(potential)
        for i in range(n):
            ni = potential[(offset + i) % n].snapshot()
            checked.append(ni.name)
            victims, num_violations, st = self.plugin.select_victims_on_node(state.clone(), pod, ni, pdbs)
            if st.is_success() and victims:
                c = Candidate(ni.name, victims, num_violations)
                (non_violating if num_violations == 0 else violating).add(c)
                nv, v = non_violating.size(), violating.size()
                if nv > 0 and nv + v >= num_candidates:
                    break
                continue
            if st.is_success():
                st = Status.as_error(f'expected at least one victim pod on node "{ni.name}"')
            if st.code == Code.ERROR:
                errors.append(status_message(st))
            statuses.set(ni.name, st)
        return DryRun(non_violating.items + violating.items, statuses, errors, checked)

    def select_candidate(self, candidates: list[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        funcs = self.plugin.ordered_score_funcs(candidates)
        return pick_one_node_for_preemption(candidates, funcs)


def default_score_funcs() -> list[Callable[[Candidate], int]]:
    """The tie-break ladder of ``pickOneNodeForPreemption``; a higher score is better."""

    def fewest_pdb_violations(c: Candidate) -> int:
        return -c.num_pdb_violations

    def lowest_top_victim_priority(c: Candidate) -> int:
        return -c.victims[0].effective_priority

    def smallest_priority_sum(c: Candidate) -> int:
        return -sum(v.effective_priority + _INT32_SPAN for v in c.victims)

    def fewest_victims(c: Candidate) -> int:
        return -len(c.victims)

    def latest_start_of_top_victims(c: Candidate) -> int:
        t = earliest_start_of_top_priority(c.victims)
        return _MIN_INT64 if t is None else t

    return [
        fewest_pdb_violations,
        lowest_top_victim_priority,
        smallest_priority_sum,
        fewest_victims,
        latest_start_of_top_victims,
    ]


def pick_one_node_for_preemption(
    candidates: list[Candidate], funcs: list[Callable[[Candidate], int]] | None = None
) -> Candidate | None:
    """Keep the best-scoring candidates under each function in turn; the first survivor wins."""
    if not candidates:
        return None
    remaining = list(candidates)
    for f in funcs or default_score_funcs():
        best: list[Candidate] = []
        top = _MIN_INT64
        for c in remaining:
            s = f(c)
            if s > top:
                top = s
                best = []
            if s == top:
                best.append(c)
        if len(best) == 1:
            return best[0]
        remaining = best
    return remaining[0]
