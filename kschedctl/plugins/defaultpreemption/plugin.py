"""DefaultPreemption: when no node fits, which lower-priority pods would have to go, and where.

This is kube-scheduler v1.35's PostFilter plugin run as a dry run: it finds the
node the scheduler would nominate and the victims it would evict, and evicts
nothing. The node-independent search (candidate nodes, dry run per node,
choosing one node) is in ``evaluator``; this module holds the plugin's own
rules: who may preempt, which pods may be victims, and how the fewest victims
are chosen on one node (remove every lower-priority pod, then take pods back,
PDB-protected ones first, most important first, while the preemptor still fits).

PreEnqueue exists because asynchronous preemption (SchedulerAsyncPreemption,
on by default in v1.35) holds back a pod whose evictions are still running; a
dry run never starts evictions, so it always admits the pod.

v1.36 with TopologyAwareWorkloadScheduling: a pod of a PodGroup with scheduling constraints
does not preempt (its cycle tries several placements, and preemption would run once for each),
nor does a pod whose PodGroup does not exist.
"""

from __future__ import annotations

from collections.abc import Callable

from kschedctl.config.args import DefaultPreemptionArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle, NodeToStatus, PostFilterResult
from kschedctl.framework.podgroups import find_pod_group, pod_group_name
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.kube.gates import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from kschedctl.plugins.defaultpreemption.evaluator import (
    PDB,
    Candidate,
    Evaluator,
    more_important_pod,
    split_by_pdb_violation,
)
from kschedctl.plugins.defaultpreemption.gosort import go_sort_slice
from kschedctl.snapshot.model import Pod

NAME = "DefaultPreemption"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = DefaultPreemptionArgs

NO_VICTIMS_MSG = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: v1.36 with TopologyAwareWorkloadScheduling, for a pod of a PodGroup with scheduling constraints.
NOT_ELIGIBLE_PLACEMENTS = "preemption: not eligible due to placement-based pod group scheduling limitation"
POD_GROUP_NOT_FOUND = "preemption: pod group for pod not found"


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, and its first DisruptionTarget condition says the scheduler preempted it."""
    if pod.meta.deletion_timestamp is None:
        return False
    status = pod.raw.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for c in conditions if isinstance(conditions, list) else ():
        if isinstance(c, dict) and c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def validate_args(args: DefaultPreemptionArgs) -> None:
    """``ValidateDefaultPreemptionArgs``, with kube-scheduler's error text."""
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    errs: list[str] = []
    if pct < 0 or pct > 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.append(
            f"minCandidateNodesPercentage: Invalid value: {pct}: cannot be zero at the same time as minCandidateNodesAbsolute"
        )
        errs.append(
            f"minCandidateNodesAbsolute: Invalid value: {absolute}: cannot be zero at the same time as minCandidateNodesPercentage"
        )
    if errs:
        raise ConfigError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")


class DefaultPreemption:
    """PreEnqueue + PostFilter, with upstream's customization hooks as attributes."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self)
        #: Extra victim filter beyond "lower priority" (upstream ``IsEligiblePod``; default: any).
        self.is_eligible_pod: Callable[[NodeInfo, PodInfo, Pod], bool] = lambda _ni, _victim, _preemptor: True
        #: Victim importance order (upstream ``MoreImportantPod``).
        self.more_important_pod: Callable[[Pod, Pod], bool] = more_important_pod

    # PreEnqueue ---------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        # Only a pod whose asynchronous preemption is still evicting is held back;
        # a dry run never has one in flight.
        return Status()

    # PostFilter ---------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        refusal = self._pod_group_refusal(pod)
        if refusal is not None:
            return None, Status(Code.UNSCHEDULABLE, refusal)
        result, st = self.evaluator.preempt(state, pod, filtered)
        msg = st.message()
        if msg:
            out = Status(st.code, f"preemption: {msg}")
            if st.error is not None:
                out.error = out.reasons[0]
            return result, out
        return result, st

    def _pod_group_refusal(self, pod: Pod) -> str | None:
        """Why a pod of a PodGroup does not preempt under TopologyAwareWorkloadScheduling (None: it may)."""
        group = pod_group_name(pod)
        if group is None or not self.handle.features.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            return None
        pg = find_pod_group(self.handle.cluster, pod.namespace, group)
        if pg is None:
            return POD_GROUP_NOT_FOUND
        return NOT_ELIGIBLE_PLACEMENTS if pg.constrained else None

    # preemption.Interface -------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        # Upstream starts the window at a random node; offset 0 keeps the dry run reproducible.
        return 0, self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.effective_priority < preemptor.effective_priority and self.is_eligible_pod(
            node_info, victim, preemptor
        )

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # A nominated node that can never work again is no reason to wait.
            if nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = self.handle.snapshot.get(nominated)
            if ni is not None:
                for pi in ni.pods:
                    if self.is_preemption_allowed(ni, pi, pod) and pod_terminating_by_preemption(pi.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def ordered_score_funcs(self, candidates: list[Candidate]) -> list[Callable[[Candidate], int]] | None:
        return None

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: list[PDB]
    ) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from this (copied) node so that ``pod`` fits."""
        fh = self.handle

        def remove(pi: PodInfo) -> Status:
            if not node_info.remove_pod(pi.pod):
                return Status.as_error(f"no corresponding pod {pi.pod.name} in pods of node {node_info.name}")
            return fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)

        def add(pi: PodInfo) -> Status:
            node_info.add_pod_info(pi)
            return fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)

        # Take every lower-priority pod off the node (iterating the original order,
        # which is what ranging over the pre-removal slice sees upstream).
        potential: list[PodInfo] = []
        for pi in list(node_info.pods):
            if self.is_preemption_allowed(node_info, pi, pod):
                potential.append(pi)
                st = remove(pi)
                if not st.is_success():
                    return [], 0, _as_error(st)
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_MSG)

        # Even with all of them gone the pod does not fit: preemption cannot help here.
        st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not st.is_success():
            return [], 0, st

        by_pod = {id(pi.pod): pi for pi in potential}
        pods = [pi.pod for pi in potential]
        more = self.more_important_pod
        go_sort_slice(pods, more)
        violating, non_violating = split_by_pdb_violation(pods, pdbs)

        victims: list[Pod] = []

        def reprieve(p: Pod) -> tuple[bool, Status]:
            pi = by_pod[id(p)]
            s = add(pi)
            if not s.is_success():
                return False, _as_error(s)
            fits = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success()
            if not fits:
                s = remove(pi)
                if not s.is_success():
                    return False, _as_error(s)
                victims.append(p)
            return fits, Status()

        num_violating = 0
        for p in violating:
            fits, s = reprieve(p)
            if not s.is_success():
                return [], 0, s
            if not fits:
                num_violating += 1
        for p in non_violating:
            _fits, s = reprieve(p)
            if not s.is_success():
                return [], 0, s

        # Victims were collected group by group; put them back in importance order.
        if violating and non_violating:
            go_sort_slice(victims, more)
        return victims, num_violating, Status()


def _as_error(st: Status) -> Status:
    """``fwk.AsStatus(status.AsError())``: whatever went wrong becomes an Error status."""
    if st.code == Code.ERROR:
        return st
    return Status.as_error(st.error or st.message())


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    model = args if args is not None else DefaultPreemptionArgs()
    validate_args(model)
    return DefaultPreemption(model, handle)
