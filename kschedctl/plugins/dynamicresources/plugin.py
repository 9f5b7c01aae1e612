"""DynamicResources: kube-scheduler v1.35's plugin for ResourceClaims (Dynamic Resource Allocation).

DRA is GA in v1.35 and the plugin is in the default profile at PreEnqueue,
PreFilter, Filter, PostFilter, Score (weight 2, no PreScore), Reserve and
PreBind. For a pod without ``spec.resourceClaims`` it does nothing visible:
PreFilter skips, Score returns 0, PreBind's pre-flight skips and PostFilter
answers "no new claims to deallocate".

For a pod with claims:

* PreEnqueue and PreFilter require every referenced ResourceClaim to exist (a
  template's claim must be named in ``status.resourceClaimStatuses`` and owned
  by the pod) and not to be being deleted;
* PreFilter checks the device classes of claims still to be allocated and
  remembers where already-allocated claims are available (their allocation's
  node selector); any claim may be shared, so ``reservedFor`` never blocks;
* Filter runs the structured allocator (:mod:`.allocator`) for the claims still
  to be allocated and rejects the node with "cannot allocate all claims" when no
  combination of free, matching devices exists there (with DRADeviceTaints, a device
  whose taint the request does not tolerate is not free; with DRADeviceTaintRules,
  DeviceTaintRules taint the devices they select), or with "resourceclaim not
  available on the node" when an allocated claim's devices are elsewhere;
* PostFilter would deallocate an unavailable claim that no other pod uses (a
  dry run only reports it), otherwise "still not schedulable";
* Score favours earlier ``firstAvailable`` subrequests (8 minus the index of
  the chosen subrequest), normalized to 0..100;
* Reserve keeps the allocation chosen for the selected node; PreBind would
  write allocation and reservation (nothing is written here).

The allocator's errors (a broken CEL selector, an unknown count mode, ...) are
Filter errors, as upstream, with upstream's texts.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kschedctl.config.args import DynamicResourcesArgs
from kschedctl.config.field import DurationError, parse_go_duration
from kschedctl.errors import InputError
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeScore, NodeToStatus, PostFilterResult, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import MAX_NODE_SCORE, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.gates import DRA_DEVICE_TAINT_RULES, DRA_DEVICE_TAINTS
from kschedctl.kube.rules import DYNAMIC_RESOURCES_SCORE
from kschedctl.kube.selectors import NodeSelector
from kschedctl.plugins.helper import default_normalize_score, default_normalize_scores
from kschedctl.snapshot.model import KubeObject

if TYPE_CHECKING:  # the allocator (with its CEL evaluator) is imported when a pod has claims: start-up
    from kschedctl.plugins.dynamicresources.allocator import DraCluster
    from kschedctl.plugins.dynamicresources.api import Allocation, ResourceClaim
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod

NAME = "DynamicResources"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = DynamicResourcesArgs

#: fwk.ErrNotFound: what reading the cycle state says when PreFilter did not run.
ERR_NOT_FOUND = "not found"


class DraState:
    """What PreFilter learns about the pod's claims, shared by the later extension points.

    Like upstream's state, clones share it: Filter results recorded during
    preemption's what-if runs stay visible to the cycle.
    """

    __slots__ = ("allocate", "available_on", "claims", "dra", "node_allocations", "reserved", "unavailable")

    def __init__(self) -> None:
        #: The pod's claims in ``spec.resourceClaims`` order; empty: nothing to do.
        self.claims: list[ResourceClaim] = []
        #: Per claim: the node selector of its existing allocation (None: anywhere or unallocated).
        self.available_on: list[NodeSelector | None] = []
        #: Whether some claim has to be allocated (upstream: an allocator was set up).
        self.allocate = False
        self.dra: DraCluster | None = None
        #: Indices of allocated claims that some node could not use (for PostFilter).
        self.unavailable: set[int] = set()
        #: node name -> allocations of the claims to allocate, found by Filter.
        self.node_allocations: dict[str, list[Allocation]] = {}
        #: claim index -> allocation chosen at Reserve.
        self.reserved: dict[int, Allocation] = {}

    def clone(self) -> DraState:
        return self

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if c.allocation is None]


STATE_KEY: StateKey[DraState] = StateKey(NAME)


class _NormalizeScore:
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)


class DynamicResources:
    name = NAME

    def __init__(self, args: DynamicResourcesArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._dra: DraCluster | None = None
        self._normalizer = _NormalizeScore()
        self.filter_timeout = _seconds(args.filter_timeout)
        #: The clock ``filterTimeout`` is measured on (seconds); a test gives a fake one, so that no
        #: verdict depends on how fast the machine runs the search.
        self.clock: Callable[[], float] = time.monotonic
        #: DRADeviceTaints: untolerated device taints count; DRADeviceTaintRules: so do DeviceTaintRules'.
        self.device_taints = handle.features.enabled(DRA_DEVICE_TAINTS)
        self.taint_rules = handle.features.enabled(DRA_DEVICE_TAINT_RULES)

    # -- helpers ------------------------------------------------------------------------
    def _dra_for(self, cluster: Cluster) -> DraCluster:
        from kschedctl.plugins.dynamicresources.allocator import DraCluster

        dra = self._dra
        if dra is None or dra.cluster is not cluster:
            dra = DraCluster(cluster, device_taints=self.device_taints, taint_rules=self.taint_rules)
            self._dra = dra
        return dra

    def _cluster(self) -> Cluster:
        return self.handle.cluster

    def pod_claims(self, pod: Pod) -> tuple[list[ResourceClaim], str | None]:
        """The pod's ResourceClaims (``foreachPodResourceClaim``), or the reason one is unusable."""
        claims: list[ResourceClaim] = []
        if not pod.resource_claims:
            return claims, None
        dra = self._dra_for(self._cluster())
        status = pod.raw.get("status")
        statuses = status.get("resourceClaimStatuses") if isinstance(status, dict) else None
        for pc in pod.resource_claims:
            check_owner = False
            if pc.get("resourceClaimName") is not None:
                claim_name = str(pc["resourceClaimName"])
            elif pc.get("resourceClaimTemplateName") is not None:
                entry = None
                for st in statuses if isinstance(statuses, list) else []:
                    if isinstance(st, dict) and st.get("name") == pc.get("name"):
                        entry = st
                        break
                if entry is None:
                    return claims, f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
                if entry.get("resourceClaimName") is None:
                    continue  # no claim was generated for this entry: nothing to do
                claim_name = str(entry["resourceClaimName"])
                check_owner = True
            else:
                return claims, (
                    f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.get("name", "")}": '
                    "none of the supported fields are set"
                )
            claim = dra.claim(pod.namespace, claim_name)
            if claim is None:
                return claims, f'could not find ResourceClaim "{pod.namespace}/{claim_name}"'
            if claim.deleting:
                return claims, f'resourceclaim "{claim.name}" is being deleted'
            if check_owner and (claim.namespace != pod.namespace or claim.controller_uid != pod.uid):
                return claims, (
                    f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            claims.append(claim)
        return claims, None

    def _validate_class(self, dra: DraCluster, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status.as_error(f"request {request_name}: unsupported request type")
        if class_name not in dra.classes:
            return Status.unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    # -- PreEnqueue -----------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        try:
            _, err = self.pod_claims(pod)
        except InputError as e:
            return Status.unresolvable(str(e))
        if err is not None:
            return Status.unresolvable(err)
        return Status()

    # -- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        s = DraState()
        state.write(STATE_KEY, s)
        try:
            return self._pre_filter(s, pod)
        except InputError as e:
            return None, Status.as_error(str(e))

    def _pre_filter(self, s: DraState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        claims, err = self.pod_claims(pod)
        if err is not None:
            return None, Status.unresolvable(err)
        if not claims:
            return None, Status.skip()
        dra = self._dra_for(self._cluster())
        available_on: list[NodeSelector | None] = [None] * len(claims)
        to_allocate = 0
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                # Every claim can be shared, so an allocation reserved for other pods is fine.
                if claim.allocation.node_selector_error is not None:
                    return None, Status.as_error(claim.allocation.node_selector_error)
                available_on[i] = claim.allocation.node_selector
                continue
            to_allocate += 1
            for req in claim.requests:
                if req.exactly is not None:
                    st = self._validate_class(dra, req.exactly.device_class_name, req.name)
                    if st is not None:
                        return None, st
                elif req.first_available:
                    for sub in req.first_available:
                        st = self._validate_class(dra, sub.device_class_name, f"{req.name}/{sub.name}")
                        if st is not None:
                            return None, st
                else:
                    return None, Status.unresolvable(f"resource claim {claim.key}, request {req.name}: unknown request type")
        if to_allocate > 0:
            dra.slices  # noqa: B018 - parse the slices now (errors belong to PreFilter)
            s.allocate = True
            s.dra = dra
        s.available_on = available_on
        s.claims = claims
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ---------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(ERR_NOT_FOUND)
        if not s.claims:
            return Status()
        node = node_info.node
        unavailable = [
            i for i, ns in enumerate(s.available_on) if ns is not None and not ns.matches(node.labels, node.name)
        ]
        allocations: list[Allocation] | None = None
        if s.allocate and s.dra is not None:
            from kschedctl.plugins.dynamicresources.allocator import (
                AllocationError,
                AllocationTimeout,
                Allocator,
                FailedOnNode,
            )

            to_allocate = [c for _, c in s.to_allocate()]
            try:
                allocations = Allocator(s.dra, node, to_allocate, self.filter_timeout, self.clock).allocate()
            except AllocationTimeout:
                return Status.unresolvable("timed out trying to allocate devices")
            except FailedOnNode as e:
                return Status.unresolvable(str(e))
            except (AllocationError, InputError) as e:
                return Status.as_error(str(e))
            if allocations is None or len(allocations) != len(to_allocate):
                return Status.unresolvable("cannot allocate all claims")
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if allocations is not None:
            s.node_allocations[node.name] = allocations
        return Status()

    # -- PostFilter -----------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, filtered: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        s = state.get(STATE_KEY)
        if s is None:
            return None, Status.as_error(ERR_NOT_FOUND)
        if not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        # Upstream picks one unavailable claim at random; any claim no other pod uses
        # would be deallocated (this dry run does not change the claim).
        for i in sorted(s.unavailable):
            reserved = s.claims[i].reserved_for_uids
            if not reserved or (len(reserved) == 1 and reserved[0] == pod.uid):
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # -- Score ----------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s = state.get(STATE_KEY)
        if s is None:
            return 0, Status.as_error(ERR_NOT_FOUND)
        if not s.claims:
            return 0, Status()
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0, Status()
        from kschedctl.plugins.dynamicresources.allocator import subrequest_score

        try:
            return subrequest_score(s.claims, allocations), Status()
        except ValueError as e:
            return 0, Status.as_error(str(e))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        """``score`` for a list of nodes (all 0 when the pod has no claims)."""
        s = state.get(STATE_KEY)
        if s is not None and not s.claims:
            return [0] * len(nodes), Status()
        out: list[int] = []
        for ni in nodes:
            v, st = self.score(state, pod, ni)
            if not st.is_success():
                return out, st
            out.append(v)
        return out, Status()

    def score_extensions(self) -> _NormalizeScore:
        return self._normalizer

    # -- Reserve --------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(ERR_NOT_FOUND)
        if not s.claims:
            return Status()
        to_allocate = s.to_allocate()
        if not to_allocate:
            return Status()
        if s.allocate:
            allocations = s.node_allocations.get(node_name)
            if not allocations:
                return Status.as_error("claim allocation not found for node")
            if len(allocations) != len(to_allocate):
                return Status.as_error(
                    f"internal error, have {len(allocations)} allocations, {len(to_allocate)} claims to allocate, "
                    f"want {len(to_allocate)} claims"
                )
            for (index, _), allocation in zip(to_allocate, allocations, strict=True):
                s.reserved[index] = allocation
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if s is not None:
            s.reserved.clear()

    # -- PreBind --------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(ERR_NOT_FOUND)
        if not s.claims:
            return Status.skip()
        return Status()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream writes each allocation and adds the pod to ``reservedFor``; a dry run only succeeds."""
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(ERR_NOT_FOUND)
        return Status()

    # -- successive cycles (simulate) ---------------------------------------------------------
    def assumed_objects(self, state: CycleState, pod: Pod, node_name: str) -> list[KubeObject]:
        """The pod's claims as PreBind would write them: newly allocated ones with ``status.allocation``,
        every one with the pod in ``status.reservedFor``. The real scheduler keeps them in its in-flight
        claim tracking (assume cache) from Reserve on, so the next cycle sees the devices taken; a
        simulation of successive pods applies them to its cluster."""
        s = state.get(STATE_KEY)
        if s is None or not s.claims:
            return []
        out: list[KubeObject] = []
        for i, claim in enumerate(s.claims):
            raw = copy.deepcopy(claim.raw.raw)
            status = raw.setdefault("status", {})
            if claim.allocation is None:
                allocation = s.reserved.get(i)
                if allocation is None:
                    continue
                status["allocation"] = allocation.to_dict()
            reserved = status.setdefault("reservedFor", [])
            if pod.uid not in claim.reserved_for_uids:
                reserved.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
            out.append(KubeObject(raw, "ResourceClaim", True))
        return out

    def objects_changed(self, objects: list[KubeObject]) -> None:
        """Objects of the cluster were replaced (a simulation applied assumed objects): re-read those claims."""
        if self._dra is not None:
            for o in objects:
                if o.kind == "ResourceClaim":
                    self._dra.forget_claim(o.namespace, o.name)

    # -- OpportunisticBatching ----------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """A pod with ResourceClaims is not signable (upstream cannot tell single-node claims apart)."""
        if pod.resource_claims:
            return None, Status.unschedulable("pods with dra resource claims are not signable")
        return None, Status()


def _seconds(value: object) -> float | None:
    """filterTimeout in seconds; None (no limit) for 0 or unset, as upstream."""
    if value is None:
        return None
    try:
        ns = value if isinstance(value, int) else parse_go_duration(str(value))
    except DurationError:
        return None
    return ns / 1e9 if ns > 0 else None


class UnscoredDynamicResources(DynamicResources):
    """The plugin as v1.33 and v1.34 have it (``dynamicresources.go`` there): no Score and no
    ScoreExtensions (v1.35 added them, weight 2), and no SignPod (batching came with v1.35)."""

    score = None  # type: ignore[assignment]
    score_nodes = None  # type: ignore[assignment]
    score_extensions = None  # type: ignore[assignment]
    sign_pod = None  # type: ignore[assignment]


def new(args: DynamicResourcesArgs | None, handle: Handle) -> DynamicResources:
    if args is None:
        args = DynamicResourcesArgs()
    if not handle.features.follows(DYNAMIC_RESOURCES_SCORE):
        return UnscoredDynamicResources(args, handle)
    return DynamicResources(args, handle)
