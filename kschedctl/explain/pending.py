"""Every pending pod at a glance: the rows of ``kschedctl explain pending``, and "explain as if pending".

For each pod the row carries what ``explain pod`` would conclude (its FitError),
the reason that blocks it on the most nodes, the nearest node (the one rejected
by the fewest Filter plugins, from ``nearest.analyse_filters``) and whether the
preemption dry run would place it. The rows are plain data; ``render/pending.py``
shows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.nearest import Rejection, analyse_filters
from kschedctl.explain.trace import Trace
from kschedctl.framework.registry import Registry
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod


def as_pending(pod: Pod) -> Pod:
    """The pod as it was before binding: no ``spec.nodeName`` and a fresh Pending status.

    The pod keeps its uid, so ``explain_pod`` also leaves its own placement out of the snapshot.
    """
    raw = dict(pod.raw)
    spec = raw.get("spec")
    raw["spec"] = {k: v for k, v in spec.items() if k != "nodeName"} if isinstance(spec, dict) else {}
    raw["status"] = {"phase": "Pending"}
    return Pod(raw)


@dataclass
class PendingRow:
    """One pending pod's verdict."""

    pod: str
    outcome: str  # scheduled | unschedulable | gated | error | ignored
    fit_error: str | None = None
    dominant_reason: str | None = None
    #: Nodes on which the dominant reason blocks the pod (None when it is not per node).
    dominant_nodes: int | None = None
    nearest_nodes: list[str] = field(default_factory=list)
    #: What rejects the (first) nearest node: every Filter plugin that said no, with its reasons.
    nearest_rejections: list[Rejection] = field(default_factory=list)
    #: None when preemption did not run (the pod fits or is gated); else whether it would place the pod.
    preemption: bool | None = None
    nominated_node: str | None = None
    victims: list[str] = field(default_factory=list)
    selected_node: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "outcome": self.outcome,
            "fitError": self.fit_error,
            "dominantReason": self.dominant_reason,
            "dominantNodes": self.dominant_nodes,
            "nearestNodes": list(self.nearest_nodes),
            "nearestRejections": [{"plugin": r.plugin, "reasons": list(r.reasons)} for r in self.nearest_rejections],
            "preemption": (
                None
                if self.preemption is None
                else {"wouldPlace": self.preemption, "nominatedNode": self.nominated_node, "victims": list(self.victims)}
            ),
            "selectedNode": self.selected_node,
            "message": self.message,
        }


def dominant_reason(trace: Trace) -> tuple[str | None, int | None]:
    """The reason that blocks the pod on the most nodes (ties: alphabetical), with its node count."""
    failed_pre_enqueue = [r for r in trace.pre_enqueue if not r.status.is_success()]
    if trace.gated and failed_pre_enqueue:
        r = failed_pre_enqueue[-1]
        return f"{r.plugin}: {r.status.message()}", None
    counts: Counter[str] = Counter()
    for verdict in trace.filter.values():
        if not verdict.status.is_success():
            counts.update(verdict.status.reasons)
    if trace.pre_filter_node_names is not None and trace.num_all_nodes > len(trace.filter):
        counts["excluded by PreFilter"] += trace.num_all_nodes - len(trace.filter)
    if not counts:
        rejected = [r for r in trace.pre_filter if r.status.is_rejected()]
        if rejected:
            return f"{rejected[0].plugin}: {rejected[0].status.message()}", trace.num_all_nodes
        return None, None
    reason, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return reason, n


def pending_row(cluster: Cluster, pod: Pod, config: SchedulerConfig, registry: Registry | None = None) -> PendingRow:
    try:
        trace = explain_pod(cluster, pod, config, registry)
    except UsageError as e:  # a schedulerName without a profile: this scheduler would not touch the pod
        return PendingRow(pod.key, "ignored", message=str(e))
    row = PendingRow(pod.key, trace.outcome, fit_error=trace.fit_error, selected_node=trace.selected_node)
    row.message = trace.error
    if trace.outcome in ("unschedulable", "gated"):
        row.dominant_reason, row.dominant_nodes = dominant_reason(trace)
    if trace.post_filter is not None:
        row.nominated_node = trace.post_filter.nominated_node_name
        row.preemption = row.nominated_node is not None
        row.victims = list(trace.post_filter.victims)
    if trace.outcome == "unschedulable" and trace.filter:
        nearest = analyse_filters(cluster, pod, config, registry).nearest()
        row.nearest_nodes = [n.node for n in nearest]
        if nearest:
            row.nearest_rejections = nearest[0].rejections
    return row


def pending_rows(
    cluster: Cluster,
    pods: list[Pod],
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[PendingRow]:
    """One row per pod, in namespace/name order (``progress`` hears pods done / total)."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    rows: list[PendingRow] = []
    for p in sorted(pods, key=lambda p: p.key):
        rows.append(pending_row(cluster, p, config, registry))
        if progress is not None:
            progress(len(rows), len(pods))
    return rows
