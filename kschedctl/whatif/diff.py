"""The same scheduling cycle under two configurations or profiles: ``kschedctl diff-profiles``.

Changing a scheduler profile is hard to review: the YAML diff says which weights moved, not
which pods would land elsewhere. This module runs the ``explain`` cycle for each pod once per
side (a KubeSchedulerConfiguration and, optionally, the profile to use from it) against the
same snapshot and compares the two Traces:

* the decision: the selected node, or why there is none (unschedulable with its FitError, gated,
  an error, or no profile for the pod's schedulerName), and a preemption nomination;
* the Filter verdict of every node where the two sides disagree (including nodes one side did
  not evaluate because ``percentageOfNodesToScore`` stopped the search), with the kind of the
  disagreement: feasible on one side only (an outcome), rejected on both with another status code
  (preemption tries the node on one side only), or rejected alike in other words;
* per plugin, the raw, normalized and weighted score on the nodes that matter (the node each
  side selected), with the weighted delta.

A pod *differs* when its decision or any node's Filter verdict changes; score changes alone
do not count (two profiles always score differently), but are shown. One Snapshot and one
Framework per side and profile serve every pod, except pods that already sit on a node or are
nominated in the snapshot, which get a snapshot without themselves, as ``explain`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.changes import CODE, KINDS, MESSAGE, OUTCOME
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain.cycle import run_cycle
from kschedctl.explain.trace import Trace
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import ResizeRule, resize_rule
from kschedctl.framework.runtime import Framework
from kschedctl.parallel import run_jobs
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod

#: Below this many nodes × pods the pods are compared one after another: their cycles share one snapshot
#: and cost a few milliseconds each, so workers (which each build their own frameworks) would cost more.
MIN_PARALLEL_WORK = 100_000

SAME = "same"
NODE_CHANGED = "node-changed"
BECOMES_UNSCHEDULABLE = "becomes-unschedulable"
BECOMES_SCHEDULABLE = "becomes-schedulable"
PREEMPTION_CHANGED = "preemption-changed"
OUTCOME_CHANGED = "outcome-changed"
IGNORED = "ignored"


@dataclass
class Side:
    """One side of the comparison: a configuration and, optionally, which of its profiles to use."""

    name: str  # "A" or "B"
    label: str  # what the user gave, e.g. "profiles/bin-packing.yaml"
    config: SchedulerConfig
    #: schedulerName of the profile to use; None: the pod's own spec.schedulerName.
    profile: str | None = None

    def profile_name(self, pod: Pod) -> str:
        return self.profile if self.profile is not None else pod.scheduler_name

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "config": self.config.source, "profile": self.profile}


@dataclass
class Decision:
    """What one side decides for one pod."""

    outcome: str  # scheduled | unschedulable | gated | error | ignored
    profile: str
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    fit_error: str | None = None
    error: str | None = None
    nominated_node: str | None = None
    victims: list[str] = field(default_factory=list)
    note: str | None = None

    @classmethod
    def of(cls, trace: Trace) -> Decision:
        d = cls(trace.outcome, trace.profile)
        if trace.schedulable:
            d.node = trace.selected_node
            d.score = trace.max_score
            d.candidates = list(trace.candidates)
        d.fit_error = trace.fit_error
        d.error = trace.error
        if trace.post_filter is not None and trace.post_filter.nominated_node_name:
            d.nominated_node = trace.post_filter.nominated_node_name
            d.victims = list(trace.post_filter.victims)
        return d

    def summary(self) -> str:
        """A few words: the node, or the outcome."""
        if self.outcome == "scheduled":
            return str(self.node)
        if self.outcome == "unschedulable" and self.nominated_node:
            return f"unschedulable (would preempt {len(self.victims)} on {self.nominated_node})"
        return self.outcome

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "profile": self.profile,
            "node": self.node,
            "score": self.score,
            "candidates": list(self.candidates),
            "fitError": self.fit_error,
            "error": self.error,
            "nominatedNode": self.nominated_node,
            "victims": list(self.victims),
            "note": self.note,
        }


@dataclass
class FeasibilityChange:
    """A node whose Filter verdict differs between the sides: whether it is feasible, the status code
    of its rejection, or only the words."""

    node: str
    a: str
    b: str
    feasible_a: bool | None  # None: not evaluated
    feasible_b: bool | None
    #: The status code of the rejection (None: feasible, or not rejected by one plugin's status).
    code_a: str | None = None
    code_b: str | None = None

    @property
    def kind(self) -> str:
        """``outcome`` (feasible on one side only, or evaluated on one side only), ``code`` (rejected on
        both sides with other status codes), or ``message`` (the same verdict and code, other words)."""
        return verdict_kind(self.feasible_a, self.feasible_b, self.code_a, self.code_b)

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "a": self.a,
            "b": self.b,
            "feasibleA": self.feasible_a,
            "feasibleB": self.feasible_b,
            "kind": self.kind,
            "codeA": self.code_a,
            "codeB": self.code_b,
        }


def verdict_kind(feasible_a: bool | None, feasible_b: bool | None, code_a: str | None, code_b: str | None) -> str:
    """The kind of difference between two Filter verdicts of one node (see ``FeasibilityChange.kind``)."""
    if feasible_a != feasible_b:
        return OUTCOME
    if code_a != code_b:
        return CODE
    return MESSAGE


@dataclass
class PluginDelta:
    """One plugin's score on one node under both sides (None: not scored on that side)."""

    plugin: str
    a: dict[str, int] | None
    b: dict[str, int] | None

    @property
    def weighted_a(self) -> int:
        return self.a["weighted"] if self.a else 0

    @property
    def weighted_b(self) -> int:
        return self.b["weighted"] if self.b else 0

    @property
    def delta(self) -> int:
        return self.weighted_b - self.weighted_a

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "a": self.a, "b": self.b, "delta": self.delta}


@dataclass
class NodeScores:
    """The score breakdown of one node that matters (selected by A and/or B)."""

    node: str
    selected_by: list[str]
    total_a: int | None
    total_b: int | None
    plugins: list[PluginDelta] = field(default_factory=list)

    @property
    def delta(self) -> int | None:
        if self.total_a is None or self.total_b is None:
            return None
        return self.total_b - self.total_a

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "selectedBy": list(self.selected_by),
            "totalA": self.total_a,
            "totalB": self.total_b,
            "delta": self.delta,
            "plugins": [p.to_dict() for p in self.plugins],
        }


@dataclass
class PodDiff:
    pod: str
    workload: str | None
    a: Decision
    b: Decision
    change: str
    feasibility: list[FeasibilityChange] = field(default_factory=list)
    scores: list[NodeScores] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: A comparison of two versions (``whatif.versions``): every difference in words (a score or
    #: message change counts there) by its kind (``config.changes.KINDS``), and the rule changes it
    #: is attributed to.
    by_kind: dict[str, list[str]] | None = None
    attribution: dict[str, Any] | None = None

    @property
    def differences(self) -> list[str] | None:
        """Every difference in words, most telling kind first (None: not a comparison of versions)."""
        if self.by_kind is None:
            return None
        return [text for kind in KINDS for text in self.by_kind.get(kind, [])]

    @property
    def differs(self) -> bool:
        return self.change != SAME or bool(self.feasibility) or bool(self.differences)

    @property
    def kind(self) -> str | None:
        """The most telling kind of difference (``config.changes.KINDS``); None when nothing differs.
        Without words by kind (``diff-profiles``), from the decision and the Filter verdicts alone."""
        if self.by_kind is not None:
            return next((k for k in KINDS if self.by_kind.get(k)), None)
        if self.change != SAME:
            return OUTCOME
        found = {f.kind for f in self.feasibility}
        return next((k for k in KINDS if k in found), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "workload": self.workload,
            "change": self.change,
            "differs": self.differs,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "feasibilityChanges": [f.to_dict() for f in self.feasibility],
            "scores": [s.to_dict() for s in self.scores],
            "notes": list(self.notes),
            "kind": self.kind,
            **({"differences": self.differences, "byKind": self.by_kind} if self.by_kind is not None else {}),
            **({"attribution": self.attribution} if self.attribution is not None else {}),
        }


#: Called with each pod's comparison, the pod and its two traces, to add to it (``whatif.versions``).
Annotate = Callable[[PodDiff, Pod, Trace, Trace], None]


@dataclass
class DiffReport:
    a: Side
    b: Side
    num_nodes: int
    pods: list[PodDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return any(p.differs for p in self.pods)

    def count(self, change: str) -> int:
        return sum(1 for p in self.pods if p.change == change)

    def summary(self) -> dict[str, Any]:
        return {
            "pods": len(self.pods),
            "differ": sum(1 for p in self.pods if p.differs),
            "nodeChanged": self.count(NODE_CHANGED),
            "becomeUnschedulable": self.count(BECOMES_UNSCHEDULABLE),
            "becomeSchedulable": self.count(BECOMES_SCHEDULABLE),
            "preemptionChanged": self.count(PREEMPTION_CHANGED),
            "outcomeChanged": self.count(OUTCOME_CHANGED),
            "feasibilityOnly": sum(1 for p in self.pods if p.change == SAME and p.feasibility),
            **({"otherOnly": n} if (n := sum(1 for p in self.pods if p.change == SAME and not p.feasibility
                                             and p.differences)) else {}),
            "unchanged": sum(1 for p in self.pods if not p.differs),
            "byKind": {k: sum(1 for p in self.pods if p.kind == k) for k in KINDS},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "numNodes": self.num_nodes,
            "differs": self.differs,
            "summary": self.summary(),
            "pods": [p.to_dict() for p in self.pods],
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------


def classify(a: Decision, b: Decision) -> str:
    if a.outcome == b.outcome == "scheduled":
        return SAME if a.node == b.node else NODE_CHANGED
    if a.outcome == "scheduled" and b.outcome == "unschedulable":
        return BECOMES_UNSCHEDULABLE
    if a.outcome == "unschedulable" and b.outcome == "scheduled":
        return BECOMES_SCHEDULABLE
    if a.outcome == b.outcome == "unschedulable":
        if (a.nominated_node, a.victims) != (b.nominated_node, b.victims):
            return PREEMPTION_CHANGED
        return SAME
    return SAME if a.outcome == b.outcome else OUTCOME_CHANGED


def verdict(trace: Trace, node: str) -> tuple[str, bool | None]:
    """The Filter verdict of ``node`` in words, and whether it was feasible (None: not evaluated)."""
    v = trace.filter.get(node)
    if v is not None:
        if v.status.is_success():
            return "feasible", True
        return f"{v.status.plugin}: {'; '.join(v.status.reasons)}", False
    if trace.pre_filter_node_names is not None and node not in trace.pre_filter_node_names:
        return "excluded by PreFilter", False
    for r in trace.pre_filter:
        if r.status.is_rejected():
            return f"{r.plugin} (PreFilter): {r.status.message()}", False
    if trace.gated:
        return "gated at PreEnqueue", None
    return "not evaluated", None


def verdict_code(trace: Trace, node: str) -> str | None:
    """The status code that rejected ``node`` (at Filter, or the pod at PreFilter); None when it was
    feasible, left out by PreFilter's node names, or not evaluated."""
    v = trace.filter.get(node)
    if v is not None:
        return None if v.status.is_success() else v.status.code.label
    if trace.pre_filter_node_names is not None and node not in trace.pre_filter_node_names:
        return None
    return next((r.status.code.label for r in trace.pre_filter if r.status.is_rejected()), None)


def feasibility_changes(ta: Trace, tb: Trace) -> list[FeasibilityChange]:
    """The nodes whose verdict differs: feasible or not, the status code, or the words."""
    nodes = list(ta.filter)
    seen = set(nodes)
    nodes += [n for n in tb.filter if n not in seen]
    out: list[FeasibilityChange] = []
    for n in nodes:
        va, fa = verdict(ta, n)
        vb, fb = verdict(tb, n)
        ca, cb = verdict_code(ta, n), verdict_code(tb, n)
        if va != vb or ca != cb:
            out.append(FeasibilityChange(n, va, vb, fa, fb, ca, cb))
    return out


def _plugin_scores(trace: Trace, plugin: str, node: str) -> dict[str, int] | None:
    s = trace.score.get(plugin)
    if s is None or node not in s.raw:
        return None
    return {
        "weight": s.weight,
        "raw": s.raw[node],
        "normalized": s.normalized.get(node, s.raw[node]),
        "weighted": s.weighted.get(node, 0),
    }


def score_breakdown(ta: Trace, tb: Trace, a: Decision, b: Decision) -> list[NodeScores]:
    selected: dict[str, list[str]] = {}
    if a.node:
        selected.setdefault(a.node, []).append("A")
    if b.node:
        selected.setdefault(b.node, []).append("B")
    plugins = list(ta.score) + [p for p in tb.score if p not in ta.score]
    out: list[NodeScores] = []
    for node, by in selected.items():
        ns = NodeScores(node, by, ta.totals.get(node), tb.totals.get(node))
        for p in plugins:
            pa = _plugin_scores(ta, p, node)
            pb = _plugin_scores(tb, p, node)
            if pa is not None or pb is not None:
                ns.plugins.append(PluginDelta(p, pa, pb))
        out.append(ns)
    return out


class DiffEngine:
    """Runs pods under both sides, sharing one Snapshot and a Framework per side and profile."""

    def __init__(
        self, cluster: Cluster, a: Side, b: Side, registry: Registry | None = None, annotate: Annotate | None = None
    ) -> None:
        if registry is None:
            from kschedctl.plugins import in_tree_registry

            registry = in_tree_registry()
        self.cluster = cluster
        self.a = a
        self.b = b
        self.registry = registry
        self.annotate = annotate
        #: The cluster's snapshot for each way of counting running pods' requests (one, unless the sides'
        #: versions count resize status differently).
        self._shared: dict[ResizeRule, Snapshot] = {}
        self._frameworks: dict[tuple[str, str], Framework] = {}
        #: Pods that sit in the snapshot (bound or nominated): explained without themselves.
        self._own_snapshot_uids = {p.uid for p in cluster.pods if p.node_name or p.nominated_node_name}

    def shared_snapshots(self) -> None:
        """Build the cluster's snapshot(s) for the two sides now (before workers fork, to inherit them)."""
        for side in (self.a, self.b):
            self._shared_snapshot(side)

    def _shared_snapshot(self, side: Side) -> Snapshot:
        features = side.config.features
        rule = resize_rule(features)
        snap = self._shared.get(rule)
        if snap is None:
            snap = self._shared[rule] = Snapshot(self.cluster, features=features)
        return snap

    def trace(self, side: Side, pod: Pod, own: dict[ResizeRule, Snapshot] | None = None) -> Trace | None:
        """The side's trace for ``pod``; None when the side has no profile for it. ``own``: the pod is
        held by the cluster's snapshot, so it runs on one without it (built once per way of counting)."""
        name = side.profile_name(pod)
        profile = side.config.profile_for(name)
        if profile is None:
            return None
        if own is not None:
            rule = resize_rule(side.config.features)
            snap = own.get(rule)
            if snap is None:
                snap = own[rule] = Snapshot(self.cluster, features=side.config.features, exclude_pod_uids=(pod.uid,))
            return run_cycle(Framework(profile, self.registry, snap), pod, side.config)
        key = (side.name, name)
        fw = self._frameworks.get(key)
        if fw is None:
            fw = Framework(profile, self.registry, self._shared_snapshot(side))
            self._frameworks[key] = fw
        return run_cycle(fw, pod, side.config)

    def diff_pod(self, pod: Pod, workload: str | None = None) -> PodDiff | None:
        """The comparison for one pod; None when neither side has a profile for it."""
        self.cluster.default_priority(pod)
        own: dict[ResizeRule, Snapshot] | None = {} if pod.uid in self._own_snapshot_uids else None
        ta = self.trace(self.a, pod, own)
        tb = self.trace(self.b, pod, own)
        if ta is None and tb is None:
            return None
        da = Decision.of(ta) if ta is not None else _ignored(self.a, pod)
        db = Decision.of(tb) if tb is not None else _ignored(self.b, pod)
        d = PodDiff(pod.key, workload, da, db, classify(da, db))
        if ta is not None and tb is not None:
            d.feasibility = feasibility_changes(ta, tb)
            d.scores = score_breakdown(ta, tb, da, db)
            if ta.tie_break or tb.tie_break:
                d.notes.append(
                    "a side has several nodes with the top total: kube-scheduler may pick any of them "
                    "(candidates are listed per side)"
                )
            if self.annotate is not None:
                self.annotate(d, pod, ta, tb)
        if pod.node_name:
            d.notes.append(f"the pod is bound to {pod.node_name}; compared as if it were pending")
        return d


def _ignored(side: Side, pod: Pod) -> Decision:
    name = side.profile_name(pod)
    d = Decision(IGNORED, name)
    d.note = f'side {side.name} has no profile "{name}": kube-scheduler would ignore this pod'
    return d


def diff_pods(
    cluster: Cluster,
    a: Side,
    b: Side,
    pods: list[tuple[Pod, str | None]],
    registry: Registry | None = None,
    *,
    strict: bool = False,
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
    annotate: Annotate | None = None,
) -> DiffReport:
    """Compare every pod; pods neither side has a profile for are skipped with a note
    (with ``strict``, as for a single named pod, that is a usage error). The pods are compared on
    ``jobs`` worker processes (None: the usable CPUs, 1: one after another here) when there is
    enough work (``kschedctl.parallel``); ``progress`` hears pods done / total."""
    engine = DiffEngine(cluster, a, b, registry, annotate)
    report = DiffReport(a, b, len(cluster.nodes))
    if len(pods) * max(1, len(cluster.nodes)) < MIN_PARALLEL_WORK:
        jobs = 1
    if jobs != 1 and len(pods) > 1:
        engine.shared_snapshots()  # built once: forked workers inherit them
    diffs = run_jobs(lambda item: engine.diff_pod(*item), pods, jobs=jobs, progress=progress)
    for (pod, _), d in zip(pods, diffs, strict=True):
        if d is None:
            names = {a.profile_name(pod), b.profile_name(pod)}
            msg = (
                f'pod {pod.key}: neither side has a profile "{" / ".join(sorted(names))}" '
                "(kube-scheduler would ignore the pod)"
            )
            if strict:
                raise UsageError(msg)
            report.notes.append(f"skipped {msg}")
            continue
        report.pods.append(d)
    return report
