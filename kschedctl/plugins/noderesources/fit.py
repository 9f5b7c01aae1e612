"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be?

Filter compares the pod's requests (computed once in PreFilter) with each node's
allocatable minus what its pods already request, for the pod count, cpu, memory,
ephemeral-storage and every scalar resource (extended resources, hugepages).
Each shortage yields one reason ("Too many pods", "Insufficient cpu",
"Insufficient <resource>"); the status is UnschedulableAndUnresolvable when some
request exceeds the node's whole allocatable (preemption cannot help), otherwise
Unschedulable. Score applies the configured scoring strategy (LeastAllocated,
MostAllocated or RequestedToCapacityRatio) to non-zero requests; unlike Filter,
the incoming pod's side of Score ignores pod-level ``spec.resources`` (v1.35's
NewFit never enables PodLevelResources on its scorer).

Alpha features that are off in v1.35 (DRA-backed extended resources) are not
modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.config.args import NodeResourcesFitArgs
from kschedctl.config.field import aggregate
from kschedctl.config.validation import validate_node_resources_fit_args
from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.podgroups import PodGroup, PodGroupAssignments
from kschedctl.framework.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    is_extended_resource_name,
    is_scalar_resource_name,
    pod_requests,
)
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Code, Status
from kschedctl.kube.gates import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from kschedctl.kube.quantity import milli_value, value
from kschedctl.kube.rules import FIT_UNRESOLVABLE
from kschedctl.plugins.noderesources.indexed import fit_statuses, score_columns
from kschedctl.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceAllocationScorer,
    WeightedResource,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
    score_placement,
)

if TYPE_CHECKING:
    from kschedctl.framework.types import NodeInfo
    from kschedctl.snapshot.model import Pod

NAME = "NodeResourcesFit"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = NodeResourcesFitArgs

DEFAULT_RESOURCES = (WeightedResource(CPU, 1), WeightedResource(MEMORY, 1))


@dataclass(frozen=True, slots=True)
class PodRequest:
    """The pod's requests as Filter compares them (PreFilter state; never mutated)."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    #: Scalar resources in the order the pod's request list yields them.
    scalar: tuple[tuple[str, int], ...]

    @property
    def is_empty(self) -> bool:
        return self.milli_cpu == 0 and self.memory == 0 and self.ephemeral_storage == 0 and not self.scalar


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One shortage found by Filter (also what preemption and explain output can show)."""

    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    #: The request exceeds the node's whole allocatable: evicting pods cannot help.
    unresolvable: bool


_PRE_FILTER_KEY: StateKey[PodRequest] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[list[int]] = StateKey("PreScore" + NAME)


def compute_pod_request(pod: Pod) -> PodRequest:
    """The requests Filter checks: pod-level resources and overhead included, resize status ignored."""
    reqs = pod_requests(pod, use_status=False)
    cpu = mem = eph = 0
    scalar: dict[str, int] = {}
    for name, q in reqs.items():
        if name == CPU:
            cpu = max(cpu, milli_value(q))
        elif name == MEMORY:
            mem = max(mem, value(q))
        elif name == EPHEMERAL_STORAGE:
            eph = max(eph, value(q))
        elif is_scalar_resource_name(name):
            scalar[name] = max(scalar.get(name, 0), value(q))
    return PodRequest(cpu, mem, eph, tuple(scalar.items()))


def request_signature(pod: Pod) -> dict[str, object]:
    """The pod's requests as a signature fragment (OpportunisticBatching): equal exactly when the
    requests Fit and BalancedAllocation see are equal."""
    r = compute_pod_request(pod)
    return {
        "MilliCPU": r.milli_cpu,
        "Memory": r.memory,
        "EphemeralStorage": r.ephemeral_storage,
        "ScalarResources": dict(sorted(r.scalar)),
    }


def fits_request(
    req: PodRequest,
    node_info: NodeInfo,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """Every resource the node is short of, in kube-scheduler's order."""
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", "Too many pods", 1, n_pods, alloc.allowed_pod_number, False))
    if req.is_empty:
        return out
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(
            InsufficientResource(
                CPU, "Insufficient cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu, req.milli_cpu > alloc.milli_cpu
            )
        )
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(
            InsufficientResource(
                MEMORY, "Insufficient memory", req.memory, used.memory, alloc.memory, req.memory > alloc.memory
            )
        )
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(
            InsufficientResource(
                EPHEMERAL_STORAGE,
                "Insufficient ephemeral-storage",
                req.ephemeral_storage,
                used.ephemeral_storage,
                alloc.ephemeral_storage,
                req.ephemeral_storage > alloc.ephemeral_storage,
            )
        )
    for name, q in req.scalar:
        if q == 0:
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
        ):
            continue
        a = alloc.scalar.get(name, 0)
        u = used.scalar.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out


def insufficiency_status(short: list[InsufficientResource], unresolvable: bool = True) -> Status:
    """The Filter status of a node short of some resources (UnschedulableAndUnresolvable when
    a request exceeds the node's whole allocatable and ``unresolvable``, the rule since v1.34;
    v1.33's fit.go answers Unschedulable for every shortage, so preemption tries such nodes too)."""
    code = Code.UNSCHEDULABLE
    if unresolvable:
        for s in short:
            if s.unresolvable:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    return Status(code, *(s.reason for s in short))


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """``noderesources.Fits``: the shortages of a pod on a node, with nothing ignored."""
    return fits_request(compute_pod_request(pod), node_info)


class Fit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score)."""

    def __init__(
        self,
        ignored_resources: frozenset[str],
        ignored_groups: frozenset[str],
        scorer: ResourceAllocationScorer,
        handle: Handle,
    ) -> None:
        self.name = NAME
        self.ignored_resources = ignored_resources
        self.ignored_groups = ignored_groups
        self.scorer = scorer
        self.handle = handle
        #: v1.36 with TopologyAwareWorkloadScheduling: MostAllocated over the strategy's resources,
        #: for PlacementScore in a pod-group cycle (None otherwise).
        self.placement_scorer: ResourceAllocationScorer | None = None
        # a request above the node's whole allocatable is UnschedulableAndUnresolvable from v1.34
        # (fit.go's InsufficientResource.Unresolvable); v1.33 has only Unschedulable
        self.unresolvable = handle.features.follows(FIT_UNRESOLVABLE)

    # PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        state.write(_PRE_FILTER_KEY, compute_pod_request(pod))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    # Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        req = state.get(_PRE_FILTER_KEY)
        if req is None:
            return Status.as_error(f'error reading "PreFilter{NAME}" from cycleState: not found')
        st = self._verdict(req, node_info)
        return Status() if st is None else st

    def _verdict(self, req: PodRequest, node_info: NodeInfo) -> Status | None:
        """Filter's verdict on one node with the PreFilter state read (None: the pod fits)."""
        short = fits_request(req, node_info, self.ignored_resources, self.ignored_groups)
        return insufficiency_status(short, self.unresolvable) if short else None

    # PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, self.scorer.pod_request_list(pod))
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_request_list(pod)
        return self.scorer.score(node_info, reqs)

    def score_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: verdict and score depend on the pod's requests only (the
        DRAExtendedResource gate, which would make pods unsignable, is off in v1.35)."""
        return [SignFragment(signers.RESOURCES, request_signature(pod))], Status()

    # whole node lists (same results as the per-node methods above) -----------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        req = state.get(_PRE_FILTER_KEY)
        if req is None:
            return [self.filter(state, pod, ni) for ni in nodes]
        return fit_statuses(req, nodes, self._verdict, self.unresolvable)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self.scorer.pod_request_list(pod)
        return score_columns(self.scorer, nodes, reqs)

    # PlacementScore (v1.36, pod-group cycle) --------------------------------------------------
    def score_placement(self, pod_group: PodGroup, assignments: PodGroupAssignments) -> tuple[int, Status]:
        """MostAllocated over all nodes of the placement with every pod it places."""
        if self.placement_scorer is None:
            return 0, Status.as_error("placement scoring needs the TopologyAwareWorkloadScheduling feature gate")
        pods = [pod for pod, _ in assignments.proposed]
        return score_placement(self.placement_scorer, assignments.placement.nodes, pods), Status()


# --------------------------------------------------------------------------------------------
# construction and argument validation
# --------------------------------------------------------------------------------------------
def _resources(specs: list[Any]) -> list[WeightedResource]:
    """Defaulting: an empty list means cpu and memory; weight 0 means 1."""
    if not specs:
        return list(DEFAULT_RESOURCES)
    return [WeightedResource(s.name, s.weight or 1) for s in specs]


def validate_args(args: NodeResourcesFitArgs) -> str | None:
    """``ValidateNodeResourcesFitArgs`` as ``NewFit`` runs it (after defaulting); the message or None."""
    raw = args.model_dump(by_alias=True, exclude_none=True)
    st = raw.get("scoringStrategy") or {}
    st["resources"] = [{"name": r.name, "weight": r.weight} for r in _resources(list(args.scoring_strategy.resources))]
    raw["scoringStrategy"] = st
    errs = validate_node_resources_fit_args(None, raw)
    return aggregate(errs) if errs else None


def build_scorer(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    st = args.scoring_strategy
    resources = _resources(list(st.resources))
    if st.type == LEAST_ALLOCATED:
        fn = least_allocated_scorer(resources)
    elif st.type == MOST_ALLOCATED:
        fn = most_allocated_scorer(resources)
    elif st.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = st.requested_to_capacity_ratio.shape if st.requested_to_capacity_ratio else []
        if not shape:
            # Go dereferences the missing parameters and fails to start.
            raise ValueError("requestedToCapacityRatio shape is required for the RequestedToCapacityRatio strategy")
        fn = requested_to_capacity_ratio_scorer(resources, [(p.utilization, p.score) for p in shape])
    else:
        raise ValueError(f"scoring strategy {st.type} is not supported")
    # NewFit takes the scorer from the strategy map as is: its PodLevelResources and
    # in-place-resize flags stay false (only the DRA flags are set on it).
    return ResourceAllocationScorer(
        st.type, resources, fn, use_requested=False, pod_level_resources=False, use_status=False
    )


def build_placement_scorer(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    """v1.36's placement scorer of NewFit: MostAllocated over the scoring strategy's resources."""
    resources = _resources(list(args.scoring_strategy.resources))
    return ResourceAllocationScorer(
        MOST_ALLOCATED, resources, most_allocated_scorer(resources), use_requested=False, pod_level_resources=False,
        use_status=False,
    )


def new(args: NodeResourcesFitArgs | None, handle: Handle) -> Fit:
    if args is None:
        args = NodeResourcesFitArgs()
    err = validate_args(args)
    if err:
        raise ValueError(err)
    fit = Fit(
        frozenset(args.ignored_resources),
        frozenset(args.ignored_resource_groups),
        build_scorer(args),
        handle,
    )
    if handle.features.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
        fit.placement_scorer = build_placement_scorer(args)
    return fit
