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
from kschedctl.framework.status import REJECTED_CODES, Code, Status
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


class FilterAnalysis:
    """Per node (in kube-scheduler's node order), every Filter plugin that rejects the pod.

    Kept as each rejecting plugin's reasons per node (a column); ``nodes`` is made of them when first
    read, and ``nearest_indexes`` counts without them (``explain pending`` makes only the first nearest node's)."""

    def __init__(self, names: list[str] | None = None, pre_filter_rejection: Status | None = None) -> None:
        #: The nodes asked about, in node order.
        self.names: list[str] = names or []
        #: Set when PreFilter rejected the pod for every node, so no Filter ran.
        self.pre_filter_rejection = pre_filter_rejection
        #: (plugin, its reasons per node: None where it passes the node), in plugin order.
        self.columns: list[tuple[str, list[list[str] | None]]] = []
        self._nodes: list[NodeRejections] | None = None

    @property
    def nodes(self) -> list[NodeRejections]:
        if self._nodes is None:
            self._nodes = [self.node(i) for i in range(len(self.names))]
        return self._nodes

    def node(self, i: int) -> NodeRejections:
        """The ``i``-th node's rejections (a new object each time)."""
        return NodeRejections(self.names[i], [Rejection(p, list(why)) for p, col in self.columns if (why := col[i]) is not None])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FilterAnalysis):
            return NotImplemented
        return (self.nodes, self.pre_filter_rejection) == (other.nodes, other.pre_filter_rejection)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FilterAnalysis(nodes={self.nodes!r}, pre_filter_rejection={self.pre_filter_rejection!r})"

    def nearest_indexes(self) -> list[int]:
        """The indexes of the nodes rejected by the fewest plugins, in node order."""
        counts = [0] * len(self.names)
        for _, col in self.columns:
            if None in col:  # (a plugin that rejects every node adds the same to each count)
                for i, why in enumerate(col):
                    if why is not None:
                        counts[i] += 1
        if not counts:
            return []
        fewest = min(counts)
        return [i for i, c in enumerate(counts) if c == fewest]

    def nearest(self) -> list[NodeRejections]:
        """The nodes rejected by the fewest plugins (several when they tie), in node order."""
        return [self.node(i) for i in self.nearest_indexes()]


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
    out = FilterAnalysis([ni.name for ni in nodes])
    if allowed is not None:
        narrowed = [f"node(s) didn't satisfy plugin(s) [{narrowed_by}]"]
        out.columns.append(("PreFilter", [None if ni.name in allowed else narrowed for ni in nodes]))
    success = Code.SUCCESS
    for pl, batch in fw.plugins.filter_paths:
        if pl.name in state.skip_filter_plugins or (only is not None and pl.name not in only):
            continue
        statuses = _plugin_statuses(fw, pl, batch, state, pod, nodes)
        if statuses.count(None) == len(statuses):  # passed every node (the usual answer: one C-level count)
            continue
        column = [None if st is None or st.code == success else (st.reasons or [st.message()]) for st in statuses]
        if column.count(None) < len(column):
            out.columns.append((pl.name, column))
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
            type(st) is Status and (st.code == Code.SUCCESS or st.code in REJECTED_CODES) for st in statuses if st is not None
        ):
            return list(statuses)
    return [fw.filtering.run_filter_plugin(pl, state, pod, ni) for ni in nodes]
