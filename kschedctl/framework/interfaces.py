"""The contract between plugins and the runtime: one protocol per extension point.

A plugin is any object with a ``name`` and one or more of the methods below; the
runtime finds its extension points by the methods it defines (as the Go runtime
does by the interfaces a plugin implements). Out-of-tree plugins implement the
same protocols.

Beside the per-node Filter, Score and NormalizeScore protocols (the reference, shaped as
upstream's), the optional batch protocols (``BatchFilterPlugin``, ``BatchScorePlugin``,
``BatchScoreExtensions``) let a plugin answer for a whole node list at once. The runtime
decides once, when it builds a profile, which plugins have them; both paths must give the
same answer (tests/test_fast_paths.py compares them). ``kschedctl.framework.verdict`` derives
both Filter paths from one per-node verdict.

Upstream model: ``k8s.io/kube-scheduler framework/interface.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.kube.features import Features
from kschedctl.kube.rules import POD_GROUP_CYCLE, POD_GROUP_POST_FILTER
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.signers import SignFragment
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin allows; ``None`` means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None


class NodeScore:
    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __repr__(self) -> str:
        return f"NodeScore({self.name}={self.score})"


@dataclass(slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: str = "Noop"  # "Noop" or "Override"


@dataclass(slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None
    #: Pods the dry-run preemption would evict, most important first.
    victims: list[Pod] = field(default_factory=list)
    #: Anything a plugin wants to show (candidates, PDB violations, ...).
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        return self.nominating_info.mode if self.nominating_info else "Noop"


class NodeToStatus:
    """Statuses of the nodes that failed, plus one status for nodes not listed."""

    def __init__(self) -> None:
        self.node_to_status: dict[str, Status] = {}
        self.absent_nodes_status: Status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def set(self, node: str, status: Status) -> None:
        self.node_to_status[node] = status

    def get(self, node: str) -> Status:
        return self.node_to_status.get(node, self.absent_nodes_status)

    def __len__(self) -> int:
        return len(self.node_to_status)

    def nodes_for_status_code(self, nodes: Iterable[NodeInfo], code: Code) -> list[NodeInfo]:
        """``NodesForStatusCode``: nodes (from the lister) whose status has this code."""
        out: list[NodeInfo] = []
        absent = self.absent_nodes_status.code == code
        for ni in nodes:
            st = self.node_to_status.get(ni.name)
            if st is None:
                if absent:
                    out.append(ni)
            elif st.code == code:
                out.append(ni)
        return out


class Handle(Protocol):
    """What a plugin may use from the framework that runs it (``fwk.Handle``)."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def cluster(self) -> Cluster: ...

    @property
    def features(self) -> Features: ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status: ...


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: Pod, b: Pod) -> bool: ...


class PreFilterExtensions(Protocol):
    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status: ...

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


#: A Filter verdict on one node: None when the node passes, else the (rejecting or Error) status
#: Filter returns for it. ``NodeVerdictFilter`` derives Filter and ``filter_nodes`` from one.
NodeVerdict = Callable[[NodeInfo], "Status | None"]


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    """Optional beside Filter: Filter over a whole list of nodes (the framework's fast path).

    Contract: ``filter_nodes(state, pod, nodes)`` returns one entry per node, in the order of
    ``nodes``: None where ``filter`` would return Success, else a Status with the same code and
    reasons ``filter`` returns for that node (a new Status per node: the framework sets its
    plugin). It must not depend on which other nodes are in the list nor on their order (the
    framework filters chunks of nodes), and must not write the cycle state. Failing is allowed:
    an exception, an Error status or a list of the wrong length makes the framework run the
    per-node path again, which reports the failure exactly.
    """

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status: ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    """Optional beside Score: Score over a whole list of nodes (the framework's fast path).

    Contract: ``score_nodes(state, pod, nodes)`` returns ``(scores, status)`` with one ``int`` per
    node, in the order of ``nodes``, each equal to what ``score`` returns for that node, and the
    status ``score`` would return (Success). The framework owns the returned list. On anything
    else (an exception, a non-Success status, a wrong length or a non-int) the framework scores
    the cycle again through the per-node path, which reports the failure as upstream does.
    """

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]: ...


@runtime_checkable
class BatchScoreExtensions(ScoreExtensions, Protocol):
    """Optional beside NormalizeScore: the same normalization on a plain list of scores.

    Contract: ``normalize_scores(state, pod, names, scores)`` rewrites ``scores`` (ints, in the
    order of the node names ``names``) in place to exactly what ``normalize_score`` would leave in
    the matching ``NodeScore`` list, and returns the same status. As above, any failure sends the
    cycle to the per-node path.
    """

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational, after a successful Bind. kschedctl never binds, so a PostBind plugin must
    not act: it may return a sentence saying what it would have done, which the trace shows."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> str | None: ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """Optional for PreFilter, Filter, PreScore and Score plugins (OpportunisticBatching, v1.35 beta).

    ``sign_pod`` returns the parts of the pod this plugin's verdicts and scores depend on
    (``kschedctl.framework.signers.SignFragment``), or a non-success status when the pod cannot be
    signed (its outcome depends on more than the pod and the node, e.g. on other pods). When any
    such plugin of a profile lacks ``sign_pod``, the profile never batches, as upstream.
    """

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]: ...


#: Extension point name (as in KubeSchedulerConfiguration) -> the method that marks it.
EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "placementGenerate": "generate_placements",
    "placementScore": "score_placement",
    "podGroupPostFilter": "pod_group_post_filter",
}


def implements(plugin: object, extension_point: str) -> bool:
    return callable(getattr(plugin, EXTENSION_POINTS[extension_point], None))


#: The pod-group cycle's extension points, which exist from v1.36.
PLACEMENT_POINTS = ("placementGenerate", "placementScore")
#: The extension point of a PodGroup that cannot be scheduled, which exists from v1.37.
POD_GROUP_POST_FILTER_POINT = "podGroupPostFilter"
#: Plugins that kube-scheduler runs at an extension point and kschedctl's do not implement, because
#: kschedctl does not reproduce what they do there: v1.37's DefaultPreemption preempts for a whole
#: PodGroup at podGroupPostFilter.
NOT_REPRODUCED_AT: dict[str, frozenset[str]] = {POD_GROUP_POST_FILTER_POINT: frozenset({"DefaultPreemption"})}


def point_exists(ep: str, features: Features) -> bool:
    """Whether extension point ``ep`` exists under ``features`` (the placement points from v1.36,
    podGroupPostFilter from v1.37)."""
    if ep in PLACEMENT_POINTS:
        return features.follows(POD_GROUP_CYCLE)
    if ep == POD_GROUP_POST_FILTER_POINT:
        return features.follows(POD_GROUP_POST_FILTER)
    return True


def extension_points_of(plugin: object, features: Features = DEFAULT_FEATURES) -> list[str]:
    """The extension points ``plugin`` implements under ``features`` (those that exist then)."""
    return [ep for ep in EXTENSION_POINTS if implements(plugin, ep) and point_exists(ep, features)]
