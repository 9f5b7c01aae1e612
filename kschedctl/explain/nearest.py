"""Which node came closest: every Filter plugin run on every node, without stopping at the first "no".

kube-scheduler stops filtering a node at its first rejection, so its FitError names
one reason per node; that is what ``explain_pod`` reproduces. To tell a user
which node is *nearest* to fitting, this module asks every (non-skipped) Filter
plugin about every node and counts how many reject it. It is an explanation
aid only: it never feeds back into the scheduling cycle, and it does not add
nominated pods the way the real Filter pass does.

Upstream model: ``pkg/scheduler/schedule_one.go (findNodesThatPassFilters, without its early stop)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import UsageError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import FilterPlugin
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.pluginlists import FilterNodes
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod


@dataclass
class Rejection:
    plugin: str
    reasons: list[str]

    def __str__(self) -> str:
        return f"{self.plugin}: {'; '.join(self.reasons)}" if self.reasons else self.plugin


@dataclass
class NodeRejections:
    node: str
    rejections: list[Rejection] = field(default_factory=list)

    @property
    def plugins(self) -> list[str]:
        return [r.plugin for r in self.rejections]


@dataclass
class FilterAnalysis:
    """Per node (in kube-scheduler's node order), every Filter plugin that rejects the pod."""

    nodes: list[NodeRejections] = field(default_factory=list)
    #: Set when PreFilter rejected the pod for every node, so no Filter ran.
    pre_filter_rejection: Status | None = None

    def nearest(self) -> list[NodeRejections]:
        """The nodes rejected by the fewest plugins (several when they tie), in node order."""
        if not self.nodes:
            return []
        fewest = min(len(n.rejections) for n in self.nodes)
        return [n for n in self.nodes if len(n.rejections) == fewest]


def analyse_filters(
    cluster: Cluster,
    pod: Pod,
    config: SchedulerConfig,
    registry: Registry | None = None,
    *,
    snapshot: Snapshot | None = None,
    only: frozenset[str] | None = None,
) -> FilterAnalysis:
    """Run PreFilter once, then every Filter plugin on every node PreFilter left (``snapshot``: the
    cluster's snapshot without the pod, when the caller has one already; ``only``: ask just these
    Filter plugins)."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    profile = config.profile_for(pod.scheduler_name)
    if profile is None:
        raise UsageError(f'no profile for schedulerName "{pod.scheduler_name}"')
    if snapshot is None:
        snapshot = Snapshot(cluster, features=profile.features, exclude_pod_uids=(pod.uid,))
    fw = Framework(profile, registry, snapshot)
    state = CycleState()
    pre = fw.filtering.run_pre_filter(state, pod)
    if not pre.status.is_success():
        return FilterAnalysis(pre_filter_rejection=pre.status)
    allowed = pre.result.node_names if pre.result is not None else None
    narrowed_by = " ".join(sorted(pre.unschedulable_plugins))
    nodes = snapshot.node_info_list
    out = FilterAnalysis([NodeRejections(ni.name) for ni in nodes])
    if allowed is not None:
        for ni, verdict in zip(nodes, out.nodes, strict=True):
            if ni.name not in allowed:
                verdict.rejections.append(Rejection("PreFilter", [f"node(s) didn't satisfy plugin(s) [{narrowed_by}]"]))
    for pl, batch in fw.plugins.filter_paths:
        if pl.name in state.skip_filter_plugins or (only is not None and pl.name not in only):
            continue
        for verdict, st in zip(out.nodes, _plugin_statuses(fw, pl, batch, state, pod, nodes), strict=True):
            if st is not None and not st.is_success():
                verdict.rejections.append(Rejection(pl.name, list(st.reasons) or [st.message()]))
    return out


def _plugin_statuses(
    fw: Framework, pl: FilterPlugin, batch: FilterNodes | None, state: CycleState, pod: Pod, nodes: list[NodeInfo]
) -> list[Status | None]:
    """One Filter plugin's status on every node (None: Success): through its whole-list path when it has
    one and the framework takes such paths (the same verdicts), else node by node; an answer only
    the per-node path reports exactly (an error, a wrong length, an exception) is asked again there."""
    if batch is not None and fw.fast_paths:
        try:
            statuses = batch(state, pod, nodes)
        except Exception:  # the per-node path records it against the right node
            statuses = None
        if statuses is not None and len(statuses) == len(nodes) and all(
            st is None or (type(st) is Status and (st.code == Code.SUCCESS or st.is_rejected())) for st in statuses
        ):
            return list(statuses)
    return [fw.filtering.run_filter_plugin(pl, state, pod, ni) for ni in nodes]
