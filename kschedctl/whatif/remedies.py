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

This module decides which kinds to try and in which order; the parts are elsewhere: the changes
of each kind in ``whatif.remedykinds``, their proof by the real scheduler in ``whatif.remedyproof``,
the budget and its count in ``whatif.remedybudget``, and the report in ``whatif.remedyreport``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain.nearest import analyse_filters
from kschedctl.explain.pending import Snapshots
from kschedctl.explain.trace import Trace
from kschedctl.framework.registry import Registry
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.remedybudget import Budget, BudgetMeter, OutOfBudget
from kschedctl.whatif.remedykinds import ClusterChanges, PodChanges, Rejections
from kschedctl.whatif.remedyproof import CycleProof, FilterProbes, SearchSnapshots
from kschedctl.whatif.remedyreport import KIND_ORDER, RemedyReport, Verdict

#: Plugins whose rejections a new, empty node of the right shape can lift.
CAPACITY_PLUGINS = ("NodeResourcesFit", "NodePorts", "NodeVolumeLimits", "InterPodAffinity", "PodTopologySpread")
#: Plugins some remedy kind addresses (a rejection by any other is reported as such).
COVERED_PLUGINS = {"NodeUnschedulable", "TaintToleration", "NodeResourcesFit", "NodeAffinity", "PodTopologySpread",
                   "InterPodAffinity", "NodePorts", "NodeVolumeLimits", "PreFilter"}


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
    """One pod's search: which kinds of change it tries, in which order, until the budget runs out."""

    def __init__(
        self, cluster: Cluster, pod: Pod, config: SchedulerConfig, registry: Registry, budget: Budget,
        snapshots: Snapshots | None = None,
    ) -> None:
        self.cluster = cluster
        self.pod = pod
        self.config = config
        self.registry = registry
        self.meter = BudgetMeter(budget)
        self.snapshots = SearchSnapshots(cluster, pod, config.features, snapshots)
        self.proof = CycleProof(self.snapshots, config, registry, self.meter)
        self.probes = FilterProbes(self.snapshots, config, registry, self.meter)
        self.report = RemedyReport(pod.key, Verdict("unschedulable"), budget=budget)

    def run(self, trace: Trace | None) -> RemedyReport:
        if trace is None:
            trace = self.proof.cycle(self.cluster, self.proof.pod_copy())
        before = self.report.before = Verdict.of(trace)
        if before.outcome not in ("unschedulable", "preemption"):
            self.report.notes.append(f"nothing to fix: the pod is {before.text()}")
            return self._finish()
        try:
            analysis = analyse_filters(self.cluster, self.proof.pod_copy(), self.config, self.registry,
                                       snapshot=self.snapshots.base())
        except UsageError as e:
            self.report.notes.append(str(e))
            return self._finish()
        rejections = Rejections(analysis, self.cluster)
        tries = self._tries(rejections, trace)
        for i, (_kind, attempt) in enumerate(tries):
            try:
                attempt()
            except OutOfBudget:
                self.report.not_tried = [k for k, _ in tries[i:]]
                break
        self._note_uncovered(rejections)
        return self._finish()

    def _finish(self) -> RemedyReport:
        r = self.report
        order = {k: i for i, k in enumerate(KIND_ORDER)}
        r.remedies.sort(key=lambda m: (not m.helps, m.verdict.rank, order.get(m.kind, 99), -(m.verdict.score or 0)))
        r.reruns, r.probes = self.meter.reruns, self.meter.probes
        r.seconds = self.meter.seconds()
        return r

    def _tries(self, rejections: Rejections, trace: Trace) -> list[tuple[str, Callable[[], None]]]:
        """The kinds to try, in the order they are tried: uncordoning (one node, the most reversible), then
        the pod's own changes (re-run on the shared snapshot), then the other node changes (each re-run
        on a changed snapshot). The order matters only when the budget cuts the search: the report
        sorts what was found."""
        rank = self.report.before.rank
        pod = PodChanges(rejections, self.proof, self.probes, self.report, rank, trace)
        nodes = ClusterChanges(rejections, self.proof, self.probes, self.report, rank)
        plugins = rejections.plugins()
        out: list[tuple[str, Callable[[], None]]] = []
        if "NodeUnschedulable" in plugins:
            out.append(("uncordon-node", nodes.try_uncordon))
        if "TaintToleration" in plugins:
            out.append(("add-toleration", pod.try_tolerations))
        if "NodeResourcesFit" in plugins:
            out.append(("lower-request", pod.try_lower_requests))
        if "NodeAffinity" in plugins:
            out.append(("relax-node-affinity", pod.try_node_affinity))
        if "PodTopologySpread" in plugins:
            out.append(("spread", pod.try_spread))
        if "InterPodAffinity" in plugins:
            out.append(("drop-pod-affinity-term", pod.try_pod_affinity))
        if "TaintToleration" in plugins:
            out.append(("remove-taint", nodes.try_remove_taints))
        if "NodeAffinity" in plugins:
            out.append(("label-node", nodes.try_label_nodes))
        if plugins & set(CAPACITY_PLUGINS):
            out.append(("add-node", nodes.try_add_node))
        if self.report.before.outcome == "unschedulable":
            out.append(("priority-class", pod.try_priority))
        return out

    def _note_uncovered(self, rejections: Rejections) -> None:
        for plugin in sorted(rejections.plugins() - COVERED_PLUGINS):
            reasons = ", ".join(sorted(rejections.reasons(plugin))) or "rejected"
            self.report.notes.append(f"no remedy kind addresses {plugin} ({reasons})")


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
    from kschedctl.explain.margin import annotate_margin

    annotate_margin(data, trace, cluster, compare)
    if fix:
        report = find_remedies(cluster, pod, config, registry, trace=trace)
        data["remedies"] = [r.to_dict() for r in report.remedies]
        search = report.to_dict()
        data["remediesSearch"] = {k: search[k] for k in ("before", "budget", "used", "notTried", "notes")}
