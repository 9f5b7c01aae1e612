"""What would make it fit: single changes to the pod or the cluster, each proven by the real cycle.

For a pod that is unschedulable (or schedulable only by preemption) this module proposes one
change at a time and **re-runs the exact scheduling cycle** (``explain_pod``) on a changed copy
of the pod or of the cluster: a remedy is reported with what that re-run concluded, never with
what it ought to conclude. Numbers are found the same way: "the largest request that fits
somewhere" and "the smallest maxSkew that fits" are binary searches whose every probe is the
real PreFilter + Filter pass, and "how many copies a new node takes" places copies on that node
one by one through the real Filter.

A kind of change is tried only where the per-node statuses point to it: every Filter plugin
asked about every node (``explain.nearest.analyse_filters``) says which plugins reject the pod
where, and each plugin maps to the changes that can lift its rejection:

==================  ==========================================================================
NodeUnschedulable   uncordon a node
TaintToleration     tolerate one taint (how many nodes it opens); remove one taint from a node
NodeResourcesFit    lower one request; add a node like an existing node group (how many copies)
NodeAffinity        drop or relax one nodeSelector entry / required expression; label a node
PodTopologySpread   raise a DoNotSchedule constraint's maxSkew, or make it ScheduleAnyway
InterPodAffinity    drop one required (anti-)affinity term; add a node
PostFilter          a higher PriorityClass whose preemption would place the pod (its victims)
==================  ==========================================================================

A remedy is verified only if its printed patch applies as written: the patch is applied to the
stored pod (strategic merge) and checked as the API server would (``whatif.patchcheck``), and the
cycle re-runs on that patched pod; a refused patch is reported as not verified.

The work is bounded by a ``Budget`` (cycle re-runs, Filter probes, seconds) that the report
states; what the budget cut off is listed. Nothing given to the search is changed: pods and
nodes are changed on deep copies, and a changed node goes into a new Cluster that shares the
other (read-only) objects. The cycles only read their snapshot, so the cluster's snapshot is
built once and shared (by the searches of several pods too), and a changed cluster's snapshot
shares the NodeInfos of the nodes it did not change (``Snapshot(reuse=...)``).
"""

from __future__ import annotations

import copy
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain.cycle import explain_pod, run_cycle
from kschedctl.explain.nearest import FilterAnalysis, Rejection, analyse_filters
from kschedctl.explain.pending import Snapshots
from kschedctl.explain.trace import Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import Resource
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.selectors import parse_node_selector_term
from kschedctl.parallel import WARM_UP_FRACTION
from kschedctl.plugins.defaultpreemption.plugin import NO_VICTIMS_MSG
from kschedctl.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod, Taint, tolerations_tolerate
from kschedctl.whatif import changes as ch
from kschedctl.whatif.changes import Change
from kschedctl.whatif.patchcheck import PatchCheck, check_new_node, check_node_patch, check_pod_patch

#: What "verified" means: the printed patch, applied to the stored object, passes the API server's
#: checks (``whatif.patchcheck``), and the cycle re-run on the result concluded the verdict shown.
VERIFIED = "verified by re-running the cycle"

#: The order remedies of equal effect are listed in: the smallest, most reversible changes first.
KIND_ORDER = (
    "uncordon-node",
    "add-toleration",
    "lower-request",
    "remove-taint",
    "relax-node-affinity",
    "label-node",
    "spread-max-skew",
    "spread-schedule-anyway",
    "drop-pod-affinity-term",
    "drop-pod-anti-affinity-term",
    "add-node",
    "priority-class",
)
POD_KINDS = {
    "add-toleration", "lower-request", "relax-node-affinity", "spread-max-skew", "spread-schedule-anyway",
    "drop-pod-affinity-term", "drop-pod-anti-affinity-term", "priority-class",
}
#: Plugins whose rejections a new, empty node of the right shape can lift.
CAPACITY_PLUGINS = ("NodeResourcesFit", "NodePorts", "NodeVolumeLimits", "InterPodAffinity", "PodTopologySpread")
#: Plugins no remedy kind addresses (reported as such).
COVERED_PLUGINS = {"NodeUnschedulable", "TaintToleration", "NodeResourcesFit", "NodeAffinity", "PodTopologySpread",
                   "InterPodAffinity", "NodePorts", "NodeVolumeLimits", "PreFilter"}
#: Nodes tried per node-side kind (the nearest first).
NODES_PER_KIND = 3
#: Node groups tried for "add a node".
GROUPS_TRIED = 4
#: At most this many copies are counted on a new node.
MAX_COPIES = 110
#: Nodes a Filter probe checks at once (it stops at the first chunk with a feasible node).
PROBE_CHUNK = 512
_FILTER_EFFECTS = ("NoSchedule", "NoExecute")
_RANK = {"scheduled": 0, "preemption": 1}


SECONDS_ENV = "KSCHEDCTL_FIX_SECONDS"
TOTAL_SECONDS_ENV = "KSCHEDCTL_FIX_TOTAL_SECONDS"
#: Without ``KSCHEDCTL_FIX_TOTAL_SECONDS``, several pods' searches get this many times one pod's seconds.
TOTAL_PODS = 4


def _env_seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


@dataclass(frozen=True)
class Budget:
    """How much work one pod's search may do."""

    reruns: int = 60  # full scheduling cycles
    probes: int = 600  # Filter passes of a binary search or of a copy count
    #: Wall-clock seconds per pod: 1, or ``KSCHEDCTL_FIX_SECONDS`` (the test suite raises it, so that
    #: a loaded machine cannot cut a search short that the two counted limits above would finish).
    seconds: float = field(default_factory=lambda: _env_seconds(SECONDS_ENV, 1.0))
    #: Wall-clock seconds for the searches of several pods together (``explain pending --fix``): each
    #: pod gets at most its share (``share``). ``KSCHEDCTL_FIX_TOTAL_SECONDS``, else ``TOTAL_PODS`` × seconds.
    total_seconds: float | None = None

    def total(self) -> float:
        if self.total_seconds is not None:
            return self.total_seconds
        return _env_seconds(TOTAL_SECONDS_ENV, TOTAL_PODS * self.seconds)

    def share(self, pods: int, workers: int) -> Budget:
        """This budget for one of ``pods`` searches run on ``workers`` processes within ``total()`` seconds
        (with several workers, the first search runs before they start: ``parallel.run_jobs``)."""
        if pods <= 0:
            return replace(self, total_seconds=self.total())
        first = max(1, pods // WARM_UP_FRACTION) if workers > 1 else 0
        in_a_row = first + -(-(pods - first) // max(1, workers))
        return replace(self, seconds=round(min(self.seconds, self.total() / in_a_row), 3), total_seconds=self.total())

    def text(self) -> str:
        return f"{self.reruns} cycle re-runs, {self.probes} Filter probes, {self.seconds:g} s per pod"

    def to_dict(self) -> dict[str, Any]:
        return {"reruns": self.reruns, "probes": self.probes, "seconds": self.seconds}


@dataclass
class Verdict:
    """What a (re-)run of the cycle concluded."""

    outcome: str  # scheduled | preemption | unschedulable | gated | error
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)
    reason: str | None = None

    @classmethod
    def of(cls, trace: Trace) -> Verdict:
        if trace.error:
            return cls("error", reason=trace.error)
        if trace.gated:
            return cls("gated", reason="rejected at PreEnqueue")
        if trace.schedulable:
            scored = len(trace.feasible_nodes) > 1
            return cls("scheduled", trace.selected_node, trace.max_score if scored else None, list(trace.candidates))
        pf = trace.post_filter
        if pf is not None and pf.nominated_node_name:
            return cls("preemption", pf.nominated_node_name, victims=list(pf.victims), reason=short_fit_error(trace))
        return cls("unschedulable", reason=short_fit_error(trace))

    @property
    def rank(self) -> int:
        return _RANK.get(self.outcome, 2)

    def text(self) -> str:
        if self.outcome == "refused":
            return f"not verified: the API server would refuse the patched object: {self.reason}"
        if self.outcome == "scheduled":
            if self.score is None:
                return f"schedulable on {self.node} (the only feasible node: not scored)"
            tie = f"; {len(self.candidates)} nodes tie" if len(self.candidates) > 1 else ""
            return f"schedulable on {self.node} (score {self.score}{tie})"
        if self.outcome == "preemption":
            n = len(self.victims)
            return (f"schedulable only by preemption: nominates {self.node}, evicts {n} pod{'s' if n != 1 else ''}"
                    + (f" ({', '.join(self.victims)})" if self.victims else ""))
        if self.outcome == "unschedulable":
            return f"still unschedulable: {self.reason}"
        return f"{self.outcome}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "node": self.node, "score": self.score, "candidates": list(self.candidates),
                "victims": list(self.victims), "reason": self.reason, "text": self.text()}


def short_fit_error(trace: Trace) -> str | None:
    """The FitError up to its PostFilter part: "0/N nodes are available: <histogram>"."""
    if trace.fit_error is None:
        return None
    return trace.fit_error.split(". ", 1)[0].rstrip(".")


@dataclass
class Remedy:
    """One change and the verdict of the cycle re-run on it."""

    kind: str
    text: str
    target: str
    patch: dict[str, Any]
    verdict: Verdict
    helps: bool
    command: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The patch applied to its target and checked as the API server would (None: not checked).
    check: PatchCheck | None = None

    @property
    def verified(self) -> bool:
        """The patch applies as written and the cycle was re-run on the result."""
        return self.verdict.outcome != "refused"

    @property
    def side(self) -> str:
        return "pod" if self.kind in POD_KINDS else "cluster"

    def line(self) -> str:
        extra = ""
        if "opensNodes" in self.detail:
            n = len(self.detail["opensNodes"])
            extra = f" [opens {n} node{'s' if n != 1 else ''}]"
        if "copies" in self.detail:
            c = self.detail["copies"]
            extra = f" [the new node takes {c}{'+' if self.detail.get('copiesCapped') else ''} cop{'ies' if c != 1 else 'y'}]"
        return f"{self.text}{extra} → {self.verdict.text()}" + (f" — {VERIFIED}" if self.verified else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "side": self.side,
            "change": self.text,
            "target": self.target,
            "patch": self.patch,
            "patchType": "node shape" if self.kind == "add-node" else "strategic merge",
            "command": self.command,
            "verdict": self.verdict.to_dict(),
            "helps": self.helps,
            "verified": VERIFIED if self.verified else None,
            "apply": self.check.to_dict() if self.check is not None else None,
            "detail": self.detail,
        }


@dataclass
class RemedyReport:
    pod: str
    before: Verdict
    remedies: list[Remedy] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    reruns: int = 0
    probes: int = 0
    seconds: float = 0.0
    #: What the budget cut off (empty when the search ran to its end).
    not_tried: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def helpful(self) -> list[Remedy]:
        return [r for r in self.remedies if r.helps]

    def budget_text(self) -> str:
        used = f"{self.reruns} cycle re-runs, {self.probes} Filter probes, {self.seconds:.2f} s"
        cut = f"; budget exhausted: not tried: {', '.join(self.not_tried)}" if self.not_tried else ""
        return f"used {used} of a budget of {self.budget.text()}{cut}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "before": self.before.to_dict(),
            "remedies": [r.to_dict() for r in self.remedies],
            "budget": self.budget.to_dict(),
            "used": {"reruns": self.reruns, "probes": self.probes, "seconds": round(self.seconds, 3)},
            "notTried": list(self.not_tried),
            "notes": list(self.notes),
        }


class _OutOfBudget(Exception):
    pass


def find_remedies(
    cluster: Cluster,
    pod: Pod,
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    trace: Trace | None = None,
    budget: Budget | None = None,
    snapshots: Snapshots | None = None,
) -> RemedyReport:
    """The verified single changes that would make ``pod`` schedulable (or preempt for it); ``snapshots``:
    the cluster's snapshots, shared by the searches of several pods of one cluster."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    return RemedySearch(cluster, pod, config, registry, budget or Budget(), snapshots).run(trace)


class RemedySearch:
    """One pod's search: the tries, the budget they spend, and the report they fill."""

    def __init__(
        self, cluster: Cluster, pod: Pod, config: SchedulerConfig, registry: Registry, budget: Budget,
        snapshots: Snapshots | None = None,
    ) -> None:
        self.cluster = cluster
        self.snapshots = snapshots if snapshots is not None else Snapshots(cluster)
        self._base: Snapshot | None = None
        self.pod = pod
        self.config = config
        self.registry = registry
        self.budget = budget
        self.started = time.monotonic()
        self.report = RemedyReport(pod.key, Verdict("unschedulable"), budget=budget)
        self.analysis = FilterAnalysis()
        self.before_rank = 2
        self._framework: Framework | None = None
        self.trace: Trace | None = None

    # -- budget ----------------------------------------------------------------------------------
    def _spend(self, what: str) -> None:
        r = self.report
        over_time = time.monotonic() - self.started > self.budget.seconds
        if over_time or (what == "rerun" and r.reruns >= self.budget.reruns) or (
            what == "probe" and r.probes >= self.budget.probes
        ):
            raise _OutOfBudget
        if what == "rerun":
            r.reruns += 1
        else:
            r.probes += 1

    # -- running the real cycle --------------------------------------------------------------------
    def base_snapshot(self) -> Snapshot:
        """The cluster's snapshot without the pod, built once and only read (by cycles and probes)."""
        if self._base is None:
            self._base = self.snapshots.without(self.pod)
        return self._base

    def snapshot_of(self, cluster: Cluster) -> Snapshot:
        """The snapshot ``explain_pod`` would build for the pod on ``cluster`` (the search's cluster, or a
        copy of it with changed nodes): the NodeInfos of unchanged nodes are the base snapshot's."""
        if cluster is self.cluster:
            return self.base_snapshot()
        return Snapshot(cluster, exclude_pod_uids=(self.pod.uid,), reuse=self.base_snapshot())

    def cycle(self, cluster: Cluster, pod: Pod) -> Trace:
        """``explain_pod`` of ``pod`` on ``cluster``, on the snapshot ``snapshot_of`` gives."""
        profile = self.config.profile_for(pod.scheduler_name)
        if profile is None:
            return explain_pod(cluster, pod, self.config, self.registry)  # which says why not
        cluster.default_priority(pod)
        return run_cycle(Framework(profile, self.registry, self.snapshot_of(cluster)), pod, self.config)

    def verify(self, change: Change) -> Remedy:
        """Apply the change's patch to the stored object and check it as the API server would; then re-run
        the whole cycle on the patched pod (or the changed cluster): the verdict is what it concludes."""
        check = self.check_patch(change)
        if check.refused:
            verdict = Verdict("refused", reason=check.refused[0])
        else:
            self._spend("rerun")
            cluster = self.cluster.copy_with(nodes=[change.node]) if change.node is not None else self.cluster
            pod = Pod.from_raw(check.applied) if change.pod is not None and check.applied is not None else self._copy()
            verdict = Verdict.of(self.cycle(cluster, pod))
        helps = verdict.rank < self.before_rank or (change.kind == "priority-class" and verdict.rank < 2)
        remedy = Remedy(change.kind, change.text, change.target, change.patch, verdict, helps, change.command,
                        dict(change.detail), check)
        self.report.remedies.append(remedy)
        return remedy

    def check_patch(self, change: Change) -> PatchCheck:
        """The change's patch applied to what it targets: the stored pod, the stored node, or a new node."""
        if change.pod is not None:
            return check_pod_patch(self.cluster, self.pod, change.patch)
        assert change.node is not None
        stored = self.cluster.node(change.node.name)
        if stored is None:
            return check_new_node(change.node)
        return check_node_patch(stored, change.patch, change.command)

    def _copy(self) -> Pod:
        return Pod.from_raw(copy.deepcopy(self.pod.raw))

    def fits_somewhere(self, pod: Pod) -> bool:
        """One probe: the real PreFilter, then the real Filter node by node until one passes."""
        self._spend("probe")
        fw = self._probe_framework()
        self.cluster.default_priority(pod)
        state = CycleState()
        pre = fw.filtering.run_pre_filter(state, pod)
        if not pre.status.is_success():
            return False
        allowed = pre.result.node_names if pre.result is not None else None
        nodes = [ni for ni in fw.snapshot.node_info_list if allowed is None or ni.name in allowed]
        for start in range(0, len(nodes), PROBE_CHUNK):
            if self._any_passes(fw, state, pod, nodes[start:start + PROBE_CHUNK]):
                return True
        return False

    @staticmethod
    def _any_passes(fw: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
        """Whether the real Filter passes one of ``nodes``: nodes without nominated pods through the
        framework's whole-list path (the same verdicts), the others (and all, when that path declines)
        one by one with their nominated pods."""
        plain = [ni for ni in nodes if not fw.filtering.has_nominated_pods(ni)]
        statuses = fw.filtering.run_filter_plugins_for_nodes(state, pod, plain) if plain else []
        if statuses is None:
            plain, statuses = [], []
        if any(st is None for st in statuses):
            return True
        done = {ni.name for ni in plain}
        return any(fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success()
                   for ni in nodes if ni.name not in done)

    def _probe_framework(self) -> Framework:
        if self._framework is None:
            profile = self.config.profile_for(self.pod.scheduler_name)
            assert profile is not None
            self._framework = Framework(profile, self.registry, self.base_snapshot())
        return self._framework

    # -- the search -------------------------------------------------------------------------------
    def run(self, trace: Trace | None) -> RemedyReport:
        if trace is None:
            trace = self.cycle(self.cluster, self._copy())
        self.trace = trace
        before = self.report.before = Verdict.of(trace)
        self.before_rank = before.rank
        if before.outcome not in ("unschedulable", "preemption"):
            self.report.notes.append(f"nothing to fix: the pod is {before.text()}")
            return self._finish()
        try:
            self.analysis = analyse_filters(self.cluster, self._copy(), self.config, self.registry,
                                            snapshot=self.base_snapshot())
        except UsageError as e:
            self.report.notes.append(str(e))
            return self._finish()
        tries = self._tries()
        for i, (_kind, attempt) in enumerate(tries):
            try:
                attempt()
            except _OutOfBudget:
                self.report.not_tried = [k for k, _ in tries[i:]]
                break
        self._note_uncovered()
        return self._finish()

    def _finish(self) -> RemedyReport:
        r = self.report
        order = {k: i for i, k in enumerate(KIND_ORDER)}
        r.remedies.sort(key=lambda m: (not m.helps, m.verdict.rank, order.get(m.kind, 99), -(m.verdict.score or 0)))
        r.seconds = time.monotonic() - self.started
        return r

    def _tries(self) -> list[tuple[str, Callable[[], None]]]:
        """The kinds to try, in the order they are tried: uncordoning (one node, the most reversible), then
        the pod's own changes (re-run on the shared snapshot), then the other node changes (each re-run
        on a changed snapshot). The order matters only when the budget cuts the search: the report
        sorts what was found."""
        plugins = self._rejecting_plugins()
        out: list[tuple[str, Callable[[], None]]] = []
        if "NodeUnschedulable" in plugins:
            out.append(("uncordon-node", self.try_uncordon))
        if "TaintToleration" in plugins:
            out.append(("add-toleration", self.try_tolerations))
        if "NodeResourcesFit" in plugins:
            out.append(("lower-request", self.try_lower_requests))
        if "NodeAffinity" in plugins:
            out.append(("relax-node-affinity", self.try_node_affinity))
        if "PodTopologySpread" in plugins:
            out.append(("spread", self.try_spread))
        if "InterPodAffinity" in plugins:
            out.append(("drop-pod-affinity-term", self.try_pod_affinity))
        if "TaintToleration" in plugins:
            out.append(("remove-taint", self.try_remove_taints))
        if "NodeAffinity" in plugins:
            out.append(("label-node", self.try_label_nodes))
        if plugins & set(CAPACITY_PLUGINS):
            out.append(("add-node", self.try_add_node))
        if self.report.before.outcome == "unschedulable":
            out.append(("priority-class", self.try_priority))
        return out

    def _rejecting_plugins(self) -> set[str]:
        out = {r.plugin for n in self.analysis.nodes for r in n.rejections}
        pre = self.analysis.pre_filter_rejection
        if pre is not None and pre.plugin:
            out.add(pre.plugin)
        return out

    def _rejections(self, plugin: str) -> Iterator[tuple[Node, list[Rejection]]]:
        """Nodes some rejection of ``plugin`` blocks, fewest other rejections first."""
        nodes = [n for n in self.analysis.nodes if any(r.plugin == plugin for r in n.rejections)]
        nodes.sort(key=lambda n: len(n.rejections))
        for n in nodes:
            node = self.cluster.node(n.node)
            if node is not None:
                yield node, n.rejections

    def _reasons(self, plugin: str) -> Counter[str]:
        """How many nodes each reason of ``plugin`` rejects."""
        out: Counter[str] = Counter()
        for n in self.analysis.nodes:
            for r in n.rejections:
                if r.plugin == plugin:
                    out.update(set(r.reasons))
        return out

    def _note_uncovered(self) -> None:
        for plugin in sorted(self._rejecting_plugins() - COVERED_PLUGINS):
            reasons = ", ".join(sorted(self._reasons(plugin))) or "rejected"
            self.report.notes.append(f"no remedy kind addresses {plugin} ({reasons})")

    # -- cluster side: nodes -----------------------------------------------------------------------
    def _try_nodes(
        self, changes: Iterator[Change], *, tries: int = NODES_PER_KIND, keep: int = 1,
        on_help: Callable[[Change, Remedy], None] | None = None,
    ) -> None:
        """Verify changes until ``keep`` of them help; keep the first failure only when none does."""
        failed: Remedy | None = None
        helped = 0
        for i, change in enumerate(changes):
            if i >= tries:
                break
            r = self.verify(change)
            if not r.helps:
                if failed is None and not helped:
                    failed = r
                else:
                    self.report.remedies.remove(r)
                continue
            if on_help is not None:
                on_help(change, r)
            if failed is not None:
                self.report.remedies.remove(failed)
                failed = None
            helped += 1
            if helped >= keep:
                return

    def try_uncordon(self) -> None:
        self._try_nodes(ch.uncordon(node) for node, _ in self._rejections("NodeUnschedulable"))

    def _untolerated(self, node: Node) -> list[Taint]:
        return [t for t in node.taints if t.effect in _FILTER_EFFECTS and not tolerations_tolerate(self.pod.tolerations, t)]

    def try_remove_taints(self) -> None:
        def changes() -> Iterator[Change]:
            for node, _ in self._rejections("TaintToleration"):
                taints = [t for t in self._untolerated(node) if t.key != ch.UNSCHEDULABLE_TAINT]
                if len(taints) == 1 and not node.unschedulable:
                    yield ch.remove_taint(node, taints[0])

        self._try_nodes(changes())

    def try_label_nodes(self) -> None:
        def changes() -> Iterator[Change]:
            for node, rejections in self._rejections("NodeAffinity"):
                labels = labels_needed(self.pod, node)
                if labels and len(rejections) == 1:
                    yield ch.label_node(node, labels)

        self._try_nodes(changes())

    def try_add_node(self) -> None:
        groups = ch.node_groups(self.cluster)
        near = {n.node: len([r for r in n.rejections if r.plugin != "NodeUnschedulable"]) for n in self.analysis.nodes}
        groups.sort(key=lambda g: (min(near.get(n.name, 99) for n in g.nodes), -len(g.nodes)))
        taken = {n.name for n in self.cluster.nodes}

        def count_copies(change: Change, r: Remedy) -> None:
            assert change.node is not None
            r.detail["copies"], r.detail["copiesCapped"] = self.copies_on(change.node)

        self._try_nodes((ch.new_node_like(g, taken) for g in groups), tries=GROUPS_TRIED, keep=2, on_help=count_copies)

    def copies_on(self, node: Node) -> tuple[int, bool]:
        """How many copies of the pod the (new) node takes: copies placed one by one through the real Filter."""
        cluster = self.cluster.copy_with(nodes=[node])
        snapshot = self.snapshot_of(cluster)  # the copies are assumed only on the new node, which it does not share
        profile = self.config.profile_for(self.pod.scheduler_name)
        assert profile is not None
        fw = Framework(profile, self.registry, snapshot)
        ni = snapshot.get(node.name)
        assert ni is not None
        n = 0
        while n < MAX_COPIES:
            try:
                self._spend("probe")
            except _OutOfBudget:
                return n, True
            pod = self._numbered_copy(n)
            cluster.default_priority(pod)
            state = CycleState()
            pre = fw.filtering.run_pre_filter(state, pod)
            allowed = pre.result.node_names if pre.result is not None else None
            if not pre.status.is_success() or (allowed is not None and node.name not in allowed):
                break
            if not fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success():
                break
            pod.node_name = node.name
            snapshot.assume(pod, node.name)
            n += 1
        return n, n >= MAX_COPIES

    def _numbered_copy(self, i: int) -> Pod:
        raw = copy.deepcopy(self.pod.raw)
        md = raw.setdefault("metadata", {})
        md["name"] = f"{self.pod.name}-copy-{i}"
        md["uid"] = f"kschedctl-copy-{i}-{self.pod.uid}"
        raw.setdefault("status", {}).pop("nominatedNodeName", None)
        return Pod.from_raw(raw)

    # -- pod side -----------------------------------------------------------------------------------
    def try_tolerations(self) -> None:
        counts: Counter[Taint] = Counter()
        for node, _ in self._rejections("TaintToleration"):
            counts.update(t for t in self._untolerated(node) if t.key != ch.UNSCHEDULABLE_TAINT)
        for taint, _ in counts.most_common(4):
            change = ch.add_toleration(self.pod, taint)
            r = self.verify(change)
            assert change.pod is not None
            r.detail["opensNodes"] = self._opened(change.pod, "TaintToleration")

    def _opened(self, pod: Pod, plugin: str) -> list[str]:
        """Nodes ``plugin`` rejected before and does not reject for the changed pod (the real Filter)."""
        self._spend("probe")
        after = analyse_filters(self.cluster, pod, self.config, self.registry, snapshot=self.base_snapshot(),
                                only=frozenset({plugin}))
        still = {n.node for n in after.nodes if any(r.plugin == plugin for r in n.rejections)}
        return [n.node for n in self.analysis.nodes if any(r.plugin == plugin for r in n.rejections) and n.node not in still]

    def try_lower_requests(self) -> None:
        reasons = self._reasons("NodeResourcesFit")
        for reason, _ in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            if not reason.startswith("Insufficient "):
                continue
            resource = reason.removeprefix("Insufficient ")
            site = ch.request_site(self.pod, resource)
            if site is None:
                self.report.notes.append(f"{resource} is not requested by a regular container: no request to lower")
                continue

            def fits(units: int, site: ch.RequestSite = site) -> bool:
                return self.fits_somewhere(_pod_of(ch.set_request(self.pod, site, ch.quantity_text(units, site.resource))))

            units = largest_fitting(int(site.current / ch.request_unit(resource)), fits, hint=self._room_hint(site))
            if units is None:
                self.report.notes.append(
                    f"lowering the {resource} request alone does not make the pod fit any node "
                    "(searched down to 0 with the real Filter)")
                continue
            self.verify(ch.set_request(self.pod, site, ch.quantity_text(units, resource)))

    def _room_hint(self, site: ch.RequestSite) -> int | None:
        """A guess of the largest request at ``site`` that fits somewhere (in ``request_unit`` steps): the
        most free room of that resource on a node, less what the pod's other regular containers ask. It
        only orders the binary search's first probes; the answer is what the real Filter says."""
        name = site.resource
        free = max((_amount(ni.allocatable, name) - _amount(ni.requested, name) for ni in self.base_snapshot().node_info_list),
                   default=None)
        if free is None:
            return None
        others = sum((c.requests.get(name, Fraction(0)) for c in self.pod.containers if c.name != site.container), Fraction(0))
        scale = Fraction(1, 1000) if name == "cpu" else Fraction(1)
        return int((free * scale - others) / ch.request_unit(name))

    def try_node_affinity(self) -> None:
        for key, want in self.pod.node_selector.items():
            self.verify(ch.drop_node_selector_key(self.pod, key))
            value = self._common_node_value(key, exclude={want})
            if value is not None:
                self.verify(ch.set_node_selector_value(self.pod, key, value))
        for ti, term in enumerate(ch.required_node_terms(self.pod)):
            for ei, expr in enumerate(term.get("matchExpressions") or []):
                change = ch.drop_node_expression(self.pod, ti, ei)
                if change is not None:
                    self.verify(change)
                if isinstance(expr, dict) and expr.get("operator") == "In":
                    value = self._common_node_value(str(expr.get("key")), exclude=set(expr.get("values") or []))
                    if value is not None:
                        self.verify(ch.add_node_expression_value(self.pod, ti, ei, value))

    def _common_node_value(self, key: str, exclude: set[str]) -> str | None:
        """The most common value of label ``key`` among nodes NodeAffinity rejects (and no other plugin)."""
        values: Counter[str] = Counter()
        for node, rejections in self._rejections("NodeAffinity"):
            if len(rejections) == 1 and key in node.labels and node.labels[key] not in exclude:
                values[node.labels[key]] += 1
        return values.most_common(1)[0][0] if values else None

    def try_spread(self) -> None:
        for i, c in enumerate(self.pod.topology_spread_constraints):
            if c.when_unsatisfiable != "DoNotSchedule":
                continue
            self.verify(ch.spread_change(self.pod, i, schedule_anyway=True))
            top = c.max_skew + len(self.cluster.pods) + 1

            def fits(skew: int, i: int = i) -> bool:
                return self.fits_somewhere(_pod_of(ch.spread_change(self.pod, i, max_skew=skew)))

            skew = smallest_fitting(c.max_skew + 1, top, fits)
            if skew is not None:
                self.verify(ch.spread_change(self.pod, i, max_skew=skew))

    def try_pod_affinity(self) -> None:
        reasons = self._reasons("InterPodAffinity")
        aff = self.pod.affinity
        if aff is None:
            return
        if ERR_REASON_AFFINITY_RULES_NOT_MATCH in reasons:
            for i in range(len(aff.pod_affinity_required)):
                self.verify(ch.drop_pod_affinity_term(self.pod, False, i))
        if ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH in reasons:
            for i in range(len(aff.pod_anti_affinity_required)):
                self.verify(ch.drop_pod_affinity_term(self.pod, True, i))

    def try_priority(self) -> None:
        pf = self.trace.post_filter if self.trace is not None else None
        if pf is None or NO_VICTIMS_MSG not in pf.status.message():
            return  # preemption was not helpful on any node: a higher priority changes nothing
        mine = self.pod.effective_priority
        classes = sorted(
            (int(pc.raw.get("value") or 0), pc.name)
            for pc in self.cluster.of_kind("PriorityClass")
            if int(pc.raw.get("value") or 0) > mine
            and (not pc.name.startswith("system-") or self.pod.namespace == "kube-system")
            and pc.raw.get("preemptionPolicy") != "Never"
        )
        self._try_nodes(ch.set_priority_class(self.pod, name, value) for value, name in classes)


def _pod_of(change: Change) -> Pod:
    assert change.pod is not None
    return change.pod


def _amount(res: Resource, name: str) -> int:
    """One resource of a ``Resource`` in its integer unit (millicores for cpu)."""
    if name == "cpu":
        return res.milli_cpu
    if name == "memory":
        return res.memory
    if name == "ephemeral-storage":
        return res.ephemeral_storage
    return res.scalar.get(name, 0)


def largest_fitting(current: int, fits: Callable[[int], bool], hint: int | None = None) -> int | None:
    """The largest value below ``current`` for which ``fits`` holds (monotone: smaller fits better).

    ``hint``, a guess of the answer, is probed first (and the value above it): a good guess ends the
    search in two probes, a wrong one still narrows it; the answer is the same either way."""
    if current <= 0:
        return None
    hi = current - 1
    if fits(hi):
        return hi
    lo: int | None = None
    if hint is not None and 0 <= hint < hi:
        if not fits(hint):
            hi = hint
        elif hint + 1 == hi or not fits(hint + 1):
            return hint
        else:
            lo = hint + 1
    if lo is None:
        if not fits(0):
            return None
        lo = 0  # fits(lo) holds, fits(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def smallest_fitting(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """The smallest value in [lo, hi] for which ``fits`` holds (monotone: larger fits better).

    The range is wide (a maxSkew up to the number of pods) and the answer usually near its bottom:
    steps doubling from ``lo`` find a fitting bound first, then the search halves below it."""
    if lo > hi or not fits(hi):
        return None
    if fits(lo):
        return lo
    step = 1
    while lo + step < hi:  # fits(hi) holds, fits(lo) does not
        if fits(lo + step):
            hi = lo + step
            break
        lo += step
        step *= 2
    while hi - lo > 1:  # fits(hi) holds, fits(lo) does not
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def labels_needed(pod: Pod, node: Node) -> dict[str, str] | None:
    """Labels that would make ``node`` match the pod's nodeSelector and one required term (In/Exists only)."""
    need = {k: v for k, v in pod.node_selector.items() if node.labels.get(k) != v}
    terms = ch.required_node_terms(pod)
    if not terms:
        return need or None
    best: dict[str, str] | None = None
    for i, term in enumerate(terms):
        extra = dict(need)
        for e in term.get("matchExpressions") or []:
            key, op, values = str(e.get("key")), e.get("operator"), e.get("values") or []
            if op == "In" and node.labels.get(key) not in values:
                extra[key] = str(values[0]) if key not in extra else extra[key]
            elif op == "Exists" and key not in node.labels:
                extra.setdefault(key, "")
        labels = {**node.labels, **extra}
        parsed = parse_node_selector_term(term, f"nodeSelectorTerms[{i}]")
        fits = parsed.matches(labels, node.name) and all(labels.get(k) == v for k, v in pod.node_selector.items())
        if fits and (best is None or len(extra) < len(best)):
            best = extra
    return best or None


def annotate_trace(
    data: dict[str, Any],
    trace: Trace,
    cluster: Cluster,
    pod: Pod,
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    fix: bool = False,
    compare: str | None = None,
) -> None:
    """Add "why this node" (``details.margin``) and, with ``fix``, the remedies to a trace's dictionary."""
    from kschedctl.explain.margin import margin

    if compare is not None and cluster.node(compare) is None:
        raise UsageError(f'--compare: node "{compare}" is not in the snapshot')
    m = margin(trace, compare)
    data["details"]["margin"] = m.to_dict() if m is not None else None
    if fix:
        report = find_remedies(cluster, pod, config, registry, trace=trace)
        data["remedies"] = [r.to_dict() for r in report.remedies]
        search = report.to_dict()
        data["remediesSearch"] = {k: search[k] for k in ("before", "budget", "used", "notTried", "notes")}
