"""The structured-parameters device allocator kube-scheduler v1.35 runs in DynamicResources' Filter.

With the default feature gates (DRAPrioritizedList and DRAAdminAccess on,
partitionable devices, device taints, consumable capacity and binding
conditions off) kube-scheduler uses the "incubating" allocator. Device taints follow
their gates: with DRADeviceTaints (on from v1.36) a device with a NoSchedule or
NoExecute taint that the request does not tolerate is not allocated, and with
DRADeviceTaintRules (on from v1.37) the taints of the DeviceTaintRules that select a
device (by driver, pool and device name) count as its own. For one node it

1. gathers the resource pools whose slices are local to the node, available on
   all nodes or select the node (a pool whose slices are not all published is
   incomplete, one with duplicate device names is invalid; slices using
   per-device node selection or shared counters are ignored);
2. checks every request (device class, selectors, count or "All" devices);
3. searches depth-first, claim by claim, request by request and device by device,
   for the first combination of free devices that match the class and request
   CEL selectors and the claim's matchAttribute constraints (a request with
   ``firstAvailable`` tries its subrequests in order).

Upstream iterates pools in Go map order (random); here pools keep the order in
which their first slice appears in the cluster, which only changes *which*
devices a successful allocation picks, never whether one exists (except when a
CEL runtime error would be hit on one order and not the other).

Per cycle, :class:`DraCluster` parses the DRA objects once and caches each
selector's result per device, so per-node work stays small.

Upstream model: ``k8s.io/dynamic-resource-allocation structured/ (the allocator)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.kube.cel import CelCompileError, CelError, CelUnsupported, ProgramCache
from kschedctl.kube.selectors import parse_node_selector
from kschedctl.plugins.dynamicresources.api import (
    ALL,
    EXACT_COUNT,
    Allocation,
    Device,
    DeviceClass,
    DeviceID,
    DeviceResult,
    DeviceTaintRule,
    Request,
    ResourceClaim,
    ResourceSlice,
    device_id_str,
    parse_device_class,
    parse_device_taint_rule,
    parse_resource_claim,
    parse_resource_slice,
    taint_blocks,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node

#: resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
#: resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8


class AllocationError(Exception):
    """Allocation cannot be attempted (broken claim, class or selector): a Filter error."""


class FailedOnNode(Exception):
    """``ErrFailedAllocationOnNode``: not fatal, the node is just unusable."""


class AllocationTimeout(Exception):
    """The search ran past the plugin's filterTimeout."""


class _MaxSizeExceeded(Exception):
    pass


# --------------------------------------------------------------------------- cluster data


class DraCluster:
    """The cluster's DRA objects, parsed once, plus the devices already allocated.

    ``device_taints`` (DRADeviceTaints): untolerated device taints keep devices from being allocated;
    ``taint_rules`` (DRADeviceTaintRules): DeviceTaintRules add their taints to the devices they select."""

    def __init__(self, cluster: Cluster, *, device_taints: bool = False, taint_rules: bool = False) -> None:
        self.cluster = cluster
        self.device_taints = device_taints
        self.taint_rules = taint_rules
        self.programs = ProgramCache()
        #: (expression, id(device)) -> result of the selector for that device.
        self.eval_cache: dict[tuple[str, int], bool | CelError] = {}
        self._classes: dict[str, DeviceClass] | None = None
        self._slices: list[ResourceSlice] | None = None
        self._claims: dict[str, ResourceClaim] = {}
        self._allocated: set[DeviceID] | None = None
        self.slices_by_node: dict[str, list[ResourceSlice]] = {}
        self.general_slices: list[ResourceSlice] = []
        #: (driver, pool) -> generation -> number of slices (all slices, as checkSlicesInPool sees them).
        self.pool_generations: dict[tuple[str, str], dict[int, int]] = {}

    @property
    def classes(self) -> dict[str, DeviceClass]:
        if self._classes is None:
            self._classes = {o.name: parse_device_class(o) for o in self.cluster.of_kind("DeviceClass")}
        return self._classes

    @property
    def slices(self) -> list[ResourceSlice]:
        if self._slices is None:
            slices = [parse_resource_slice(o, i) for i, o in enumerate(self.cluster.of_kind("ResourceSlice"))]
            if self.taint_rules:
                apply_taint_rules(slices, [parse_device_taint_rule(o) for o in self.cluster.of_kind("DeviceTaintRule")])
            for s in slices:
                gens = self.pool_generations.setdefault((s.driver, s.pool), {})
                gens[s.generation] = gens.get(s.generation, 0) + 1
                if s.per_device_node_selection or s.shared_counters:
                    continue  # PartitionableDevices is off: such slices are ignored
                if s.node_name:
                    self.slices_by_node.setdefault(s.node_name, []).append(s)
                elif s.all_nodes or s.node_selector is not None:
                    self.general_slices.append(s)
            self._slices = slices
        return self._slices

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        key = f"{namespace}/{name}"
        c = self._claims.get(key)
        if c is None:
            obj = self.cluster.get("ResourceClaim", namespace, name)
            if obj is None:
                return None
            c = parse_resource_claim(obj)
            self._claims[key] = c
        return c

    def forget_claim(self, namespace: str, name: str) -> None:
        """The claim object changed in the cluster: parse it again, and recount allocated devices."""
        self._claims.pop(f"{namespace}/{name}", None)
        self._allocated = None

    @property
    def allocated_devices(self) -> set[DeviceID]:
        """Devices of every allocated claim, except those allocated with admin access."""
        if self._allocated is None:
            out: set[DeviceID] = set()
            for obj in self.cluster.of_kind("ResourceClaim"):
                alloc = obj.status.get("allocation")
                if not isinstance(alloc, dict):
                    continue
                claim = self.claim(obj.namespace, obj.name)
                if claim is None or claim.allocation is None:
                    continue
                for r in claim.allocation.results:
                    if not r.admin_access:
                        out.add(r.id)
            self._allocated = out
        return self._allocated

    def selector_matches(self, expression: str, device: Device, driver: str) -> bool:
        """Evaluate one (compiled) selector for a device, cached; CelError on a runtime error."""
        key = (expression, id(device))
        r = self.eval_cache.get(key)
        if r is None:
            prog = self.programs.get(expression)
            try:
                r = prog.evaluate(device.cel_value(driver))
            except CelError as e:
                r = e
            self.eval_cache[key] = r
        if isinstance(r, CelError):
            raise r
        return r


def apply_taint_rules(slices: list[ResourceSlice], rules: list[DeviceTaintRule]) -> None:
    """Add each rule's taint to the devices it selects (the ResourceSlice tracker's patched slices)."""
    for s in slices:
        for rule in rules:
            if not rule.applies_to_slice(s.driver, s.pool):
                continue
            for dev in s.devices:
                if rule.device is None or rule.device == dev.name:
                    dev.taints.append(rule.taint)


# --------------------------------------------------------------------------- pools


@dataclass(slots=True)
class Pool:
    driver: str
    pool: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: bool = False

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def node_matches(node: Node, s: ResourceSlice) -> bool:
    if s.node_name:
        return node.name == s.node_name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return s.node_selector.matches(node.labels, node.name)
    return False


def gather_pools(dra: DraCluster, node: Node) -> list[Pool]:
    """``GatherPools`` for one node (pools in order of their first slice in the listing)."""
    dra.slices  # noqa: B018 - builds the per-node index
    local = dra.slices_by_node.get(node.name, [])
    candidates = local
    if dra.general_slices:
        candidates = sorted(local + [s for s in dra.general_slices if node_matches(node, s)], key=lambda s: s.index)
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in candidates:
        pid = (s.driver, s.pool)
        cur = by_pool.get(pid)
        if cur is None or s.generation > cur[0].generation:
            by_pool[pid] = [s]
        elif s.generation == cur[0].generation:
            cur.append(s)
    pools: list[Pool] = []
    for (driver, pool_name), slices in by_pool.items():
        gen = slices[0].generation
        want = slices[0].slice_count
        if len(slices) != want:
            gens = dra.pool_generations.get((driver, pool_name), {})
            if any(g > gen for g in gens):
                continue  # obsolete: a newer generation is being published
            if gens.get(gen, 0) != want:
                pools.append(Pool(driver, pool_name, incomplete=True))
                continue
        names: set[str] = set()
        dup = ""
        for s in slices:
            for d in s.devices:
                if d.name in names:
                    dup = d.name
                    break
                names.add(d.name)
            if dup:
                break
        if dup:
            pools.append(Pool(driver, pool_name, invalid=True))
            continue
        pools.append(Pool(driver, pool_name, slices))
    return pools


# --------------------------------------------------------------------------- allocation


@dataclass(slots=True)
class _ReqData:
    request: Request
    parent: str | None  # name of the request owning this subrequest
    cls: DeviceClass | None
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None

    def request_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent is not None else self.request.name


@dataclass(slots=True)
class _Chosen:
    request: str
    parent: str | None
    id: DeviceID
    slice: ResourceSlice
    admin_access: bool

    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent is not None else self.request


class _MatchAttribute:
    __slots__ = ("attribute", "count", "name", "requests", "value")

    def __init__(self, requests: list[str], name: str) -> None:
        self.requests = set(requests)
        self.name = name
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def _applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return base in self.requests
        return base in self.requests or f"{base}/{sub}" in self.requests

    def add(self, base: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, did, self.name)
        if attr is None:
            return False
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        kind, value = attr
        if kind == "" or self.value is None or self.value[0] != kind or self.value[1] != value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, device: Device, did: DeviceID) -> None:
        if not self._applies(base, sub):
            return
        self.count -= 1


def lookup_attribute(device: Device, did: DeviceID, name: str) -> tuple[str, Any] | None:
    """An attribute by fully qualified name; the driver's own domain may be omitted in the slice."""
    a = device.attributes.get(name)
    if a is not None:
        return a
    i = name.find("/")
    if i < 0 or name[:i] != did[0]:
        return None
    return device.attributes.get(name[i + 1 :])


class Allocator:
    """One ``Allocate`` call: the claims of one pod on one node."""

    def __init__(
        self,
        dra: DraCluster,
        node: Node,
        claims: list[ResourceClaim],
        timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.dra = dra
        self.clock = clock
        #: Time limit of the search on ``clock`` (filterTimeout), None for none.
        self.deadline = None if timeout is None else clock() + timeout
        self.steps = 0
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.rdata: dict[tuple[int, int, int], _ReqData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[_Chosen]] = [[] for _ in claims]
        self.match_cache: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.allocated = dra.allocated_devices

    # -- entry point ------------------------------------------------------------------
    def allocate(self) -> list[Allocation] | None:
        """The allocations (one per claim), None when they do not fit on the node.

        Raises AllocationError for errors that abort scheduling, FailedOnNode
        when invalid pools were seen and nothing could be allocated, and
        AllocationTimeout when the search exceeds the time limit.
        """
        self.pools = gather_pools(self.dra, self.node)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(claim.requests):
                if req.first_available:
                    min_per_request: int | None = None
                    key_si = 0
                    for si, sub in enumerate(req.first_available):
                        # Upstream validates each subrequest under the previous subrequest's
                        # key (it updates the key after validating); the match cache follows.
                        rd = self._validate(ci, ri, key_si, sub, req.name)
                        key_si = si
                        self.rdata[(ci, ri, si)] = rd
                        if min_per_request is None or rd.num_devices < min_per_request:
                            min_per_request = rd.num_devices
                    min_devices += min_per_request or 0
                else:
                    if req.exactly is None:
                        raise AllocationError(f"claim {claim.key}, request {req.name}: missing device class name (unsupported request type?)")
                    rd = self._validate(ci, ri, 0, req.exactly, None)
                    self.rdata[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.constraints):
                if c.match_attribute is None:
                    raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)")
                cons.append(_MatchAttribute(c.requests, c.match_attribute))
            self.constraints.append(cons)
        try:
            done = self._allocate_from(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    # -- validation -------------------------------------------------------------------
    def _validate(self, ci: int, ri: int, si: int, req: Request, parent: str | None) -> _ReqData:
        claim = self.claims[ci]
        for i, s in enumerate(req.selectors):
            if s is None:
                raise AllocationError(
                    f"claim {claim.key}, request {req.name}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not req.device_class_name:
            raise AllocationError(f"claim {claim.key}, request {req.name}: missing device class name (unsupported request type?)")
        cls = self.dra.classes.get(req.device_class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim.key}, request {req.name}: could not retrieve device class {req.device_class_name}: "
                f'deviceclass.resource.k8s.io "{req.device_class_name}" not found'
            )
        rd = _ReqData(req, parent, cls)
        if req.allocation_mode == EXACT_COUNT:
            rd.num_devices = req.count
        elif req.allocation_mode == ALL:
            devices: list[tuple[DeviceID, Device, ResourceSlice]] = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} is currently invalid"
                    )
                for sl in pool.slices:
                    for dev in sl.devices:
                        if self._selectable(ci, ri, si, rd, sl, dev):
                            devices.append(((sl.driver, sl.pool, dev.name), dev, sl))
            rd.all_devices = devices
            rd.num_devices = len(devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {req.name}: unsupported count mode {req.allocation_mode}")
        return rd

    # -- search -----------------------------------------------------------------------
    def _in_use(self, did: DeviceID) -> bool:
        return did in self.allocated or bool(self.allocating.get(did))

    def _allocate_from(
        self, claim_index: int, request_index: int, subrequest_index: int, devices_chosen: int, within_subrequest: bool
    ) -> bool:
        """Allocate every device still wanted, from this point of the search on; True when all fit.

        The point is the claim (``claim_index`` into ``self.claims``), its request
        (``request_index`` into the claim's requests), the subrequest tried for a request with
        alternatives (``subrequest_index``; 0 otherwise) and how many of that request's devices
        are chosen already (``devices_chosen``). ``within_subrequest``: one alternative of the
        request is being tried, so the alternatives are not expanded again. Each device choice
        recurses for the next and is undone when what follows does not fit.
        """
        self.steps += 1
        if self.deadline is not None and self.steps % 512 == 0 and self.clock() > self.deadline:
            raise AllocationTimeout
        if claim_index >= len(self.claims):
            return True
        claim = self.claims[claim_index]
        if request_index >= len(claim.requests):
            try:
                return self._allocate_from(claim_index + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        rd = self.rdata[(claim_index, request_index, subrequest_index)]
        if not within_subrequest and rd.parent is not None:
            all_exceeded = True
            alternative = 0
            while (claim_index, request_index, alternative) in self.rdata:
                try:
                    ok = self._allocate_from(claim_index, request_index, alternative, devices_chosen, True)
                except _MaxSizeExceeded:
                    alternative += 1
                    continue
                all_exceeded = False
                if ok:
                    return True
                alternative += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        req = rd.request
        if req.allocation_mode == ALL and not rd.all_devices:
            return False
        if devices_chosen >= rd.num_devices:
            return self._allocate_from(claim_index, request_index + 1, 0, 0, False)
        if len(self.results[claim_index]) + rd.num_devices - devices_chosen > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if req.allocation_mode == ALL:
            assert rd.all_devices is not None
            did, dev, sl = rd.all_devices[devices_chosen]
            undo = self._allocate_device(claim_index, request_index, subrequest_index, did, dev, sl, must=True)
            if undo is None:
                return False
            try:
                # Upstream drops the subrequest index when moving to the next "All" device.
                done = self._allocate_from(claim_index, request_index, 0, devices_chosen + 1, within_subrequest)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for sl in pool.slices:
                for dev in sl.devices:
                    did = (pool.driver, pool.pool, dev.name)
                    if req.admin_access:
                        if claim_index in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(claim_index, request_index, subrequest_index, rd, sl, dev):
                        continue
                    undo = self._allocate_device(claim_index, request_index, subrequest_index, did, dev, sl, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_from(claim_index, request_index, subrequest_index, devices_chosen + 1, within_subrequest)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _selectable(self, ci: int, ri: int, si: int, rd: _ReqData, sl: ResourceSlice, dev: Device) -> bool:
        if dev.binding_conditions:
            return False  # DRADeviceBindingConditions is off
        did = (sl.driver, sl.pool, dev.name)
        key = (did, ci, ri, si)
        cached = self.match_cache.get(key)
        if cached is not None:
            return cached
        ok = (rd.cls is None or self._selectors_match(ci, dev, sl.driver, rd.cls, rd.cls.selectors)) and (
            self._selectors_match(ci, dev, sl.driver, None, rd.request.selectors)
        )
        self.match_cache[key] = ok
        return ok

    def _selectors_match(self, ci: int, dev: Device, driver: str, cls: DeviceClass | None, selectors: list[str | None]) -> bool:
        for i, expr in enumerate(selectors):
            who = f"class {cls.name}" if cls is not None else f"claim {self.claims[ci].key}"
            if expr is None:
                raise AllocationError(f"{who}: selector #{i}: CEL expression empty (unsupported selector type?)")
            try:
                matches = self.dra.selector_matches(expr, dev, driver)
            except CelUnsupported as e:
                raise AllocationError(f"{who}: selector #{i}: CEL {e}") from None
            except CelCompileError as e:
                raise AllocationError(f"{who}: selector #{i}: CEL compile error: {e}") from None
            except CelError as e:
                raise AllocationError(f"{who}: selector #{i}: CEL runtime error: {e}") from None
            if not matches:
                return False
        return True

    def _allocate_device(
        self, ci: int, ri: int, si: int, did: DeviceID, dev: Device, sl: ResourceSlice, must: bool
    ) -> Callable[[], None] | None:
        rd = self.rdata[(ci, ri, si)]
        req = rd.request
        if req.admin_access:
            if ci in self.allocating.get(did, ()):
                return None
        elif self._in_use(did):
            return None
        if dev.consumes_counters:
            return None  # DRAPartitionableDevices is off
        if self.dra.device_taints and taint_blocks(dev.taints, req.tolerations):
            return None
        if rd.parent is None:
            base, sub = req.name, ""
        else:
            base, sub = rd.parent, req.name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, dev, did):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {req.name}: cannot add device {device_id_str(did)} "
                        "because a claim constraint would not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub, dev, did)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        results = self.results[ci]
        prev = len(results)
        results.append(_Chosen(req.name, rd.parent, did, sl, req.admin_access))

        def undo() -> None:
            for c in cons:
                c.remove(base, sub, dev, did)
            self.allocating[did].discard(ci)
            del results[prev:]

        return undo

    # -- results ----------------------------------------------------------------------
    def _result(self, ci: int) -> Allocation:
        chosen = self.results[ci]
        results = [
            DeviceResult(c.request_name(), c.id[0], c.id[1], c.id[2], c.admin_access) for c in chosen
        ]
        ns_raw = node_selector_for(chosen)
        ns = parse_node_selector(ns_raw, "allocation.nodeSelector") if ns_raw is not None else None
        return Allocation(results, ns, ns_raw)


def node_selector_for(chosen: list[_Chosen]) -> dict[str, Any] | None:
    """``createNodeSelector``: where the allocated devices are reachable (None: everywhere)."""
    fields: list[dict[str, Any]] = []
    exprs: list[dict[str, Any]] = []
    for c in chosen:
        s = c.slice
        if s.node_name:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [s.node_name]}]}
                ]
            }
        if s.node_selector_raw is not None:
            terms = s.node_selector_raw.get("nodeSelectorTerms") or []
            if len(terms) == 1 and isinstance(terms[0], dict):
                _add_requirements(terms[0].get("matchFields") or [], fields)
                _add_requirements(terms[0].get("matchExpressions") or [], exprs)
            elif len(terms) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if fields:
        term["matchFields"] = fields
    if exprs:
        term["matchExpressions"] = exprs
    return {"nodeSelectorTerms": [term]}


def _add_requirements(src: list[Any], dst: list[dict[str, Any]]) -> None:
    for r in src:
        if not isinstance(r, dict):
            continue
        values = set(r.get("values") or [])
        if any(
            d.get("key") == r.get("key") and d.get("operator") == r.get("operator") and set(d.get("values") or []) == values
            for d in dst
        ):
            continue
        dst.append(r)


def subrequest_score(claims: list[ResourceClaim], allocations: list[Allocation]) -> int:
    """``computeScore``: for each chosen subrequest, 8 minus its position in ``firstAvailable``.

    Upstream pairs the i-th claim of the pod with the i-th allocation result
    (results exist only for claims that had to be allocated); a shorter result
    list raises ValueError with upstream's message.
    """
    score = 0
    for i, claim in enumerate(claims):
        if i >= len(allocations):
            raise ValueError(f"number of allocations {len(allocations)} is smaller than number of claims")
        chosen = {r.request for r in allocations[i].results if r.request.count("/") == 1}
        for req in claim.requests:
            if req.exactly is not None:
                continue
            for j, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - j
    return score
