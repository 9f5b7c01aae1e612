"""Every pending pod at a glance: the rows of ``kschedctl explain pending``, and "explain as if pending".

For each pod the row carries what ``explain pod`` would conclude (its FitError),
the reason that blocks it on the most nodes, the nearest node (the one rejected
by the fewest Filter plugins, from ``nearest.analyse_filters``) and whether the
preemption dry run would place it. The rows are plain data; ``render/pending.py``
shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.explain.cycle import explain_pod, run_cycle
from kschedctl.explain.nearest import Rejection, analyse_filters
from kschedctl.explain.order import assess
from kschedctl.explain.podgroup import WAITED_AT_PERMIT, WAITING_FOR_PREEMPTION, WAITING_FOR_PREEMPTION_KIND
from kschedctl.explain.trace import Trace
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.podgroups import pod_group_cycle_on, pod_group_name
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.kube.features import Features
from kschedctl.parallel import run_jobs
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
    return Pod.from_raw(raw)


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
    #: The PodGroup (``namespace/name``) whose pod-group cycle decided this pod (v1.36 with its gates on), and
    #: what that cycle concluded for the pod (``explain.podgroup``'s verdicts, e.g. "waitedAtPermit").
    pod_group: str | None = None
    pod_group_verdict: str | None = None
    #: The trace's ``possibleNodes``, ``orderDependence``, ``nominatedNodeWait`` and ``podScheduled`` (``Trace.to_dict``).
    possible_nodes: list[str] = field(default_factory=list)
    order_dependence: dict[str, Any] | None = None
    nominated_wait: dict[str, Any] | None = None
    pod_scheduled: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self._to_dict()
        if self.pod_group is not None:
            out["podGroup"] = self.pod_group
        if self.pod_group_verdict is not None:
            out["podGroupVerdict"] = self.pod_group_verdict
        if self.nominated_wait is not None:
            out["nominatedNodeWait"] = dict(self.nominated_wait)
        if self.pod_scheduled is not None:
            out["podScheduled"] = dict(self.pod_scheduled)
        return out

    def _to_dict(self) -> dict[str, Any]:
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
            "possibleNodes": list(self.possible_nodes),
            "orderDependence": self.order_dependence,
            "message": self.message,
        }


def dominant_reason(trace: Trace) -> tuple[str | None, int | None]:
    """The reason that blocks the pod on the most nodes (ties: alphabetical), with its node count; for a
    pod its pod-group cycle held back although it fit, what held it (no node count)."""
    failed_pre_enqueue = [r for r in trace.pre_enqueue if not r.status.is_success()]
    if trace.gated and failed_pre_enqueue:
        r = failed_pre_enqueue[-1]
        return f"{r.plugin}: {r.status.message()}", None
    held = _held_by_pod_group(trace)
    if held is not None:
        return held, None
    counts, evaluated = trace.filter_reasons()
    if trace.pre_filter_node_names is not None and trace.num_all_nodes > evaluated:
        counts["excluded by PreFilter"] += trace.num_all_nodes - evaluated
    if not counts:
        rejected = [r for r in trace.pre_filter if r.status.is_rejected()]
        if rejected:
            return f"{rejected[0].plugin}: {rejected[0].status.message()}", trace.num_all_nodes
        return None, None
    reason, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return reason, n


def _held_by_pod_group(trace: Trace) -> str | None:
    """What held a pod that fit back in its pod-group cycle: the Permit plugin it waited at (GangScheduling:
    too few pods of the gang could be scheduled), or the group's wait for a preemption. None otherwise."""
    verdict = (trace.pod_group or {}).get("verdicts", {}).get(trace.pod)
    if verdict == WAITED_AT_PERMIT:
        waits = [r for r in trace.permit if r.status.is_wait()]
        return f"{waits[-1].plugin}: {waits[-1].status.message()}" if waits else trace.fit_error
    if verdict == WAITING_FOR_PREEMPTION_KIND:
        return WAITING_FOR_PREEMPTION
    return None


class Snapshots:
    """The snapshots of the rows' cycles: the cluster's, built once (with the indexes its first cycles
    build) for every pod it does not hold, and a fresh one without the pod for a pod it holds (bound,
    or nominated), as ``explain_pod`` would build for each pod, for the version ``features``. Cycles only
    read a snapshot."""

    def __init__(self, cluster: Cluster, features: Features) -> None:
        self.cluster = cluster
        self.features = features
        self._shared: Snapshot | None = None
        self._held = {p.uid for p in cluster.pods if p.node_name or p.nominated_node_name}

    def without(self, pod: Pod) -> Snapshot:
        """The cluster's snapshot without ``pod``."""
        if pod.uid in self._held:
            return Snapshot(self.cluster, features=self.features, exclude_pod_uids=(pod.uid,))
        if self._shared is None:
            self._shared = Snapshot(self.cluster, features=self.features)
        return self._shared


def pending_row(
    cluster: Cluster,
    pod: Pod,
    config: SchedulerConfig,
    registry: Registry | None = None,
    snapshots: Snapshots | None = None,
) -> PendingRow:
    """The pod's row (``snapshots``: shared by the rows of one cluster; else built for this pod)."""
    try:
        trace = _explain(cluster, pod, config, registry, snapshots)
    except UsageError as e:  # a schedulerName without a profile: this scheduler would not touch the pod
        return PendingRow(pod.key, "ignored", message=str(e))
    row = PendingRow(pod.key, trace.outcome, fit_error=trace.fit_error, selected_node=trace.selected_node)
    row.message = trace.error
    row.possible_nodes = list(trace.possible_nodes or [])
    row.order_dependence = trace.order.to_dict() if trace.order is not None else None
    row.nominated_wait, row.pod_scheduled = trace.nominated_wait, trace.pod_scheduled
    if trace.pod_group is not None:
        row.pod_group = str(trace.pod_group["name"])
        row.pod_group_verdict = trace.pod_group.get("verdicts", {}).get(pod.key)
    elif _groups_pods(config) and pod_group_name(pod) is not None:  # e.g. held at PreEnqueue with its group
        row.pod_group = f"{pod.namespace}/{pod_group_name(pod)}"
    if trace.outcome in ("unschedulable", "gated"):
        row.dominant_reason, row.dominant_nodes = dominant_reason(trace)
    if trace.post_filter is not None:
        row.nominated_node = trace.post_filter.nominated_node_name
        row.preemption = row.nominated_node is not None
        row.victims = list(trace.post_filter.victims)
    if trace.outcome == "unschedulable" and trace.has_filter_verdicts():
        own = snapshots.without(pod) if snapshots is not None else None
        analysis = analyse_filters(cluster, pod, config, registry, snapshot=own)
        nearest = analysis.nearest_indexes()
        row.nearest_nodes = [analysis.names[i] for i in nearest]
        if nearest:
            row.nearest_rejections = analysis.node(nearest[0]).rejections
    return row


def _explain(
    cluster: Cluster, pod: Pod, config: SchedulerConfig, registry: Registry | None, snapshots: Snapshots | None
) -> Trace:
    """``explain_pod`` with ``order.assess``, on the shared snapshot when there is one (a fresh Framework each time, as there)."""
    if snapshots is None:
        return explain_pod(cluster, pod, config, registry, after=assess)
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    profile = config.profile_for(pod.scheduler_name)
    if profile is None:
        return explain_pod(cluster, pod, config, registry, after=assess)  # raises the UsageError explain_pod words
    cluster.default_priority(pod)
    fw = Framework(profile, registry, snapshots.without(pod))
    trace = run_cycle(fw, pod, config)
    assess(fw, pod, config, trace)
    return trace


def _groups_pods(config: SchedulerConfig) -> bool:
    """Whether the configuration's version runs pod-group cycles (v1.36 with GenericWorkload)."""
    return pod_group_cycle_on(config.features)


def _row_order(config: SchedulerConfig) -> Callable[[Pod], tuple[str, ...]]:
    """namespace/name order; with v1.36's pod-group cycle on, a group's pods kept together (at its name)."""
    if not _groups_pods(config):
        return lambda p: (p.key,)

    def key(p: Pod) -> tuple[str, ...]:
        group = pod_group_name(p)
        return (p.namespace, group, p.name) if group is not None else (p.namespace, p.name, "")

    return key


#: Below this many nodes × pods the rows are made one after another: their cycles share one snapshot and
#: cost a few milliseconds each, so workers (each paying for its copy of the heap) would cost more.
MIN_PARALLEL_WORK = 100_000


def pending_rows(
    cluster: Cluster,
    pods: list[Pod],
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
) -> list[PendingRow]:
    """One row per pod, in namespace/name order (``progress`` hears pods done / total); on ``jobs``
    worker processes (None: the usable CPUs, 1: one after another here) when there is enough work."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    ordered = sorted(pods, key=_row_order(config))
    if len(ordered) * max(1, len(cluster.nodes)) < MIN_PARALLEL_WORK:
        jobs = 1
    snapshots = Snapshots(cluster, config.features)
    row = partial(pending_row, cluster, config=config, registry=registry, snapshots=snapshots)
    return run_jobs(row, ordered, jobs=jobs, progress=progress)
