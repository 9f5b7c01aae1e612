"""TaintToleration: node taints against pod tolerations.

Filter rejects a node that has a NoSchedule or NoExecute taint the pod does not
tolerate (UnschedulableAndUnresolvable; the reason does not name the taint, but
``untolerated_taint`` does, for explanations). PreScore always succeeds and keeps
the pod's tolerations that can apply to PreferNoSchedule taints (effect
PreferNoSchedule or empty); Score counts the node's PreferNoSchedule taints none
of them tolerates, and NormalizeScore reverses the counts so that the node with
the fewest such taints gets 100. Toleration comparison operators (Gt/Lt) are an
alpha feature gate that is off in v1.35: such tolerations tolerate nothing.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeScore, NodeVerdict
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import MAX_NODE_SCORE, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.kube.rules import TAINT_TOLERATION_MESSAGE
from kschedctl.plugins.helper import default_normalize_score, default_normalize_scores
from kschedctl.snapshot.model import Pod, Taint, Toleration, tolerations_tolerate

NAME = "TaintToleration"

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """Tolerations that may tolerate a PreferNoSchedule taint (never mutated, so shared on clone)."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)


def untolerated_reason(taint: Taint, names_taint: bool) -> str:
    """Filter's reason for an untolerated ``taint``. v1.33's taint_toleration.go names the taint's
    key and value in braces (no effect, an empty value left empty); from v1.34 the reason is one
    fixed text and the taint goes to the log only."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}" if names_taint else ERR_REASON_UNTOLERATED


def untolerated_taint(taints: list[Taint], tolerations: list[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint (in node order) that no toleration tolerates."""
    for taint in taints:
        if taint.effect in _DO_NOT_SCHEDULE_EFFECTS and not tolerations_tolerate(tolerations, taint):
            return taint
    return None


def count_intolerable_prefer_no_schedule(taints: list[Taint], tolerations: list[Toleration]) -> int:
    return sum(
        1 for t in taints if t.effect == "PreferNoSchedule" and not tolerations_tolerate(tolerations, t)
    )


class TaintToleration(NodeVerdictFilter):
    name = NAME
    only_when = operator.attrgetter("node.taints")
    #: Whether Filter's reason names the taint (v1.33's message, ``untolerated_reason``).
    names_taint = False

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict:
        """Filter: a node with a NoSchedule/NoExecute taint the pod does not tolerate is rejected."""
        tols = pod.tolerations
        names_taint = self.names_taint

        def verdict(node_info: NodeInfo) -> Status | None:
            taint = untolerated_taint(node_info.node.taints, tols)
            if taint is None:
                return None
            return Status.unresolvable(untolerated_reason(taint, names_taint))

        return verdict

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        tols = tuple(t for t in pod.tolerations if not t.effect or t.effect == "PreferNoSchedule")
        state.write(PRE_SCORE_KEY, _PreScoreState(tols))
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status.as_error(f'failed to read "PreScore{NAME}" from cycleState: not found')
        return count_intolerable_prefer_no_schedule(node_info.node.taints, list(s.tolerations_prefer_no_schedule)), Status()

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: verdict and score depend on the pod's tolerations only."""
        return [SignFragment(signers.TOLERATIONS, signers.tolerations(pod))], Status()

    # whole node lists (same results as the per-node methods above) -----------------------------
    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return [], Status.as_error(f'failed to read "PreScore{NAME}" from cycleState: not found')
        tols = list(s.tolerations_prefer_no_schedule)
        return [count_intolerable_prefer_no_schedule(ni.node.taints, tols) if ni.node.taints else 0 for ni in nodes], Status()

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status:
        return default_normalize_scores(MAX_NODE_SCORE, True, scores)


def new(args: None, handle: Handle) -> TaintToleration:
    plugin = TaintToleration()
    plugin.names_taint = not handle.features.follows(TAINT_TOLERATION_MESSAGE)
    return plugin
