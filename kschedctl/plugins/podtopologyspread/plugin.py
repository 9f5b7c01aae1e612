"""The PodTopologySpread plugin (kube-scheduler v1.35.4): spread matching pods across topology domains.

Extension points, as upstream: PreFilter (+ AddPod/RemovePod extensions), Filter,
PreScore, Score (+ NormalizeScore). The hard (``DoNotSchedule``) rules live in
``filtering``, the soft (``ScheduleAnyway``) ones in ``scoring``, and constraint
building (matchLabelKeys, inclusion policies, default constraints) in ``common``.

Explain support (not a kube-scheduler extension point):

* ``explain(state)`` returns ``{"preFilter": [...] | None, "preScore": {...} | None}``:
  per constraint the topology key, maxSkew, minDomains, policies, the selector,
  the matching pods per domain, the number of domains and the global minimum used
  for skew (``minMatchNum``, 0 when fewer than minDomains domains), and for
  scoring the per-domain counts, the topology weight and the ignored nodes.
  ``None`` means that half did not run or had no constraints.
* ``explain_node(state, pod, node_info)`` returns ``{"filter": [...] | None,
  "score": {...} | None}`` for one node: per hard constraint the node's domain,
  its matching pods, self-match, global minimum, skew and verdict; for scoring
  each constraint's count and contribution, the float sum and the raw score.
"""

from __future__ import annotations

from typing import Any

from kschedctl.config.args import PodTopologySpreadArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeScore, NodeVerdict, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.plugins.helper import use_fast_paths
from kschedctl.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    default_selector,
    filter_constraints,
    parse_default_constraints,
)
from kschedctl.plugins.podtopologyspread.filtering import (
    PreFilterState,
    compute_pre_filter_state,
    explain_node,
    node_verdict,
    update_with_pod,
)
from kschedctl.plugins.podtopologyspread.indexed import DomainLayout, indexed_counts
from kschedctl.plugins.podtopologyspread.scoring import (
    PreScoreState,
    compute_pre_score_state,
    explain_score,
    normalize,
    normalize_values,
    score_node,
)
from kschedctl.snapshot.model import Pod, TopologySpreadConstraint

NAME = "PodTopologySpread"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = PodTopologySpreadArgs

PRE_FILTER_STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: StateKey[PreScoreState] = StateKey("PreScore" + NAME)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


def _not_found(key: StateKey[Any]) -> Status:
    # upstream words the two reads differently (filtering.go and scoring.go)
    prefix = "error reading" if key is PRE_SCORE_STATE_KEY else "reading"
    return Status.as_error(f'{prefix} "{key.name}" from cycleState: not found')


class PodTopologySpread(NodeVerdictFilter):
    """Keeps pods with the same labels spread over topology domains."""

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self.name = NAME
        self.handle = handle
        #: Count from the snapshot's indexes (``indexed``) rather than walk every node: chosen once,
        #: by the framework that builds the plugin (``Framework.fast_paths``).
        self.indexed = use_fast_paths(handle)
        defaulting = args.defaulting_type or SYSTEM_DEFAULTING
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ConfigError(
                f'PodTopologySpreadArgs: defaultingType: Unsupported value: "{defaulting}": '
                'supported values: "System", "List"'
            )
        if defaulting == SYSTEM_DEFAULTING and args.default_constraints:
            raise ConfigError('PodTopologySpreadArgs: defaultingType: Invalid value: "System": when .defaultConstraints are not empty')
        self.default_constraints: list[TopologySpreadConstraint] = parse_default_constraints(args.default_constraints)
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints = list(SYSTEM_DEFAULT_CONSTRAINTS)

    # -- constraints -------------------------------------------------------------------
    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's own constraints with this action, else the defaults (``getConstraints``)."""
        if pod.topology_spread_constraints:
            return filter_constraints(pod.topology_spread_constraints, pod.labels, action)
        return self._default_constraints(pod, action)

    def _default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        constraints = filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        selector = default_selector(pod, self.handle.cluster)
        if selector.empty:
            return []
        return [c.with_selector(selector) for c in constraints]

    # -- PreFilter / Filter ------------------------------------------------------------
    def _indexed(
        self, pod: Pod, constraints: list[Constraint], require_all: bool
    ) -> tuple[list[dict[NodeInfo, int]], DomainLayout] | None:
        """With fast paths: per constraint, the matching pods per node of the snapshot from its
        match counts, and the nodes' domains (``indexed``); else None: every node is walked and
        its pods counted one by one."""
        if not self.indexed:
            return None
        return indexed_counts(self.handle.snapshot, pod, constraints, require_all)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status.skip()
        indexed = self._indexed(pod, constraints, True)
        if indexed is None:
            state.write(PRE_FILTER_STATE_KEY, compute_pre_filter_state(pod, constraints, nodes))
        else:
            state.write(PRE_FILTER_STATE_KEY, compute_pre_filter_state(pod, constraints, nodes, *indexed))
        return None, Status()

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _not_found(PRE_FILTER_STATE_KEY)
        update_with_pod(s, pod_info_to_add.pod, pod, node_info.node, 1)
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _not_found(PRE_FILTER_STATE_KEY)
        update_with_pod(s, pod_info_to_remove.pod, pod, node_info.node, -1)
        return Status()

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict | None:
        """Filter: the node's domain, per constraint, against the PreFilter counts (``filtering.node_verdict``)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return lambda node_info: _not_found(PRE_FILTER_STATE_KEY)
        if not s.constraints:
            return None
        return node_verdict(s, pod)

    # -- PreScore / Score ----------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        all_nodes = self.handle.snapshot.node_info_list
        if not all_nodes:
            return Status.skip()
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.skip()
        indexed = self._indexed(pod, constraints, require_all)
        if indexed is None:
            s = compute_pre_score_state(pod, constraints, nodes, all_nodes, require_all)
        else:
            per_node, layout = indexed
            node_map = self.handle.snapshot.node_info_map
            s = compute_pre_score_state(pod, constraints, nodes, all_nodes, require_all, per_node, node_map, layout)
        state.write(PRE_SCORE_STATE_KEY, s)
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return 0, _not_found(PRE_SCORE_STATE_KEY)
        return score_node(s, pod, node_info), Status()

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_STATE_KEY)
        normalize(s, scores)
        return Status()

    # -- whole node lists (same results as the per-node methods above) -------------------
    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return [], _not_found(PRE_SCORE_STATE_KEY)
        return [score_node(s, pod, ni) for ni in nodes], Status()

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_STATE_KEY)
        normalize_values(s, names, scores)
        return Status()

    # -- explain -------------------------------------------------------------------------
    def explain(self, state: CycleState) -> dict[str, Any]:
        pf = state.get(PRE_FILTER_STATE_KEY)
        ps = state.get(PRE_SCORE_STATE_KEY)
        return {
            "preFilter": pf.describe() if pf is not None and pf.constraints else None,
            "preScore": ps.describe() if ps is not None and ps.constraints else None,
        }

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        pf = state.get(PRE_FILTER_STATE_KEY)
        ps = state.get(PRE_SCORE_STATE_KEY)
        return {
            "filter": explain_node(pf, pod, node_info.node) if pf is not None and pf.constraints else None,
            "score": explain_score(ps, pod, node_info) if ps is not None and ps.constraints else None,
        }

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: spreading depends on other pods' placement, so a pod with constraints
        of its own, or any pod when default constraints are configured (``System`` defaulting
        always has them), is not signable."""
        if pod.topology_spread_constraints:
            return None, Status.unschedulable("pods with topology constraints are not signable")
        if self.default_constraints:
            return None, Status.unschedulable("pods with default topology constraints are not signable")
        return None, Status()


def new(args: PodTopologySpreadArgs | None, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args if args is not None else PodTopologySpreadArgs(), handle)
