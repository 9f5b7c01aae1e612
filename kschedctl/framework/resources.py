"""Pod resource requests exactly as kube-scheduler v1.35 computes them.

The rules live in one place because NodeInfo aggregates, NodeResourcesFit,
BalancedAllocation and preemption must all agree:

* regular containers are summed; restartable init (sidecar) containers are added
  to that sum and also stay running while later init containers run; the pod
  needs the max of that sum and every init container's peak;
* in-place resize: a running container counts with the max of its spec, actuated
  and allocated requests (only actuated/allocated while a resize is infeasible);
* pod-level ``spec.resources.requests`` (cpu, memory, hugepages) replace the
  container aggregate for those resources; ``spec.overhead`` is added last;
* for scoring only, a container with no cpu/memory request counts as 100m / 200Mi
  ("non-zero" requests), unless pod-level requests cover the resource.

Each caller picks the options v1.35 passes at that point (see ``pod_requests``):
NodeInfo aggregates and BalancedAllocation read pod-level requests and resize
status; Fit's Filter reads pod-level requests but no status; Fit's Score is
built without the PodLevelResources and in-place-resize flags, so it reads
neither, only the containers' non-zero requests plus overhead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kschedctl.snapshot.quantity import QuantityError, milli_value, parse_quantity, value

if TYPE_CHECKING:
    from kschedctl.snapshot.model import Pod, ResourceList

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB

NON_ZERO_DEFAULTS: dict[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    return not (is_native_resource(name) or name.startswith("requests."))


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_scalar_resource_name(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages, prefixed native, attachable volumes."""
    return (
        is_extended_resource_name(name)
        or is_hugepages(name)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or is_hugepages(name)


def _add(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, Fraction(0)) + v


def _max_into(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _parse_list(raw: Any) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            try:
                out[str(k)] = parse_quantity(v)
            except QuantityError:
                continue
    return out


def _effective(pod: Pod, spec: dict[str, Fraction], status: dict[str, Any]) -> dict[str, Fraction]:
    res = status.get("resources")
    if not isinstance(res, dict):
        return spec
    actuated = _parse_list(res.get("requests"))
    allocated = _parse_list(status.get("allocatedResources"))
    out: dict[str, Fraction] = {}
    if not pod.resize_infeasible:
        _max_into(out, spec)
    _max_into(out, actuated)
    _max_into(out, allocated)
    return out


def aggregate_container_requests(
    pod: Pod, *, use_status: bool = True, non_missing: dict[str, Fraction] | None = None
) -> dict[str, Fraction]:
    """``resourcehelper.AggregateContainerRequests``."""
    statuses: dict[str, dict[str, Any]] = {}
    if use_status:
        for s in pod.container_statuses:
            statuses[str(s.get("name"))] = s
        for s in pod.init_container_statuses:
            statuses[str(s.get("name"))] = s

    def with_non_missing(reqs: dict[str, Fraction]) -> dict[str, Fraction]:
        if not non_missing:
            return reqs
        cp = dict(reqs)
        for k, v in non_missing.items():
            if k not in reqs:
                cp[k] = cp.get(k, Fraction(0)) + v
        return cp

    reqs: dict[str, Fraction] = {}
    for c in pod.containers:
        creqs = c.requests
        if use_status and c.name in statuses:
            creqs = _effective(pod, creqs, statuses[c.name])
        _add(reqs, with_non_missing(creqs))

    restartable: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for c in pod.init_containers:
        creqs = c.requests
        if use_status and c.is_sidecar and c.name in statuses:
            creqs = _effective(pod, creqs, statuses[c.name])
        creqs = with_non_missing(creqs)
        if c.is_sidecar:
            _add(reqs, creqs)
            _add(restartable, creqs)
            current = dict(restartable)
        else:
            current = dict(creqs)
            _add(current, restartable)
        _max_into(init_peak, current)
    _max_into(reqs, init_peak)
    return reqs


def is_pod_level_requests_set(pod: Pod) -> bool:
    return bool(pod.pod_requests) and any(is_supported_pod_level_resource(k) for k in pod.pod_requests or {})


def pod_requests(
    pod: Pod,
    *,
    non_missing: dict[str, Fraction] | None = None,
    exclude_overhead: bool = False,
    use_status: bool = True,
    skip_pod_level: bool = False,
) -> ResourceList:
    """``resourcehelper.PodRequests`` with the v1.35 default feature gates.

    ``use_status=False`` ignores in-place-resize status (NodeResourcesFit's PreFilter does);
    ``skip_pod_level=True`` ignores ``spec.resources`` (``SkipPodLevelResources``, what
    NodeResourcesFit's scorer passes because NewFit never sets its PodLevelResources flag).
    """
    reqs = aggregate_container_requests(pod, use_status=use_status, non_missing=non_missing)
    if not skip_pod_level and is_pod_level_requests_set(pod):
        for k, v in (pod.pod_requests or {}).items():
            if is_supported_pod_level_resource(k):
                reqs[k] = v
    if not exclude_overhead and pod.overhead:
        _add(reqs, pod.overhead)
    return reqs


@dataclass(slots=True)
class Resource:
    """``framework.Resource``: integer amounts as the scheduler keeps them."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, rl: dict[str, Fraction]) -> Resource:
        r = cls()
        r.add_list(rl)
        return r

    def add_list(self, rl: dict[str, Fraction]) -> None:
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu += milli_value(q)
            elif name == MEMORY:
                self.memory += value(q)
            elif name == PODS:
                self.allowed_pod_number += value(q)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += value(q)
            elif is_scalar_resource_name(name):
                self.scalar[name] = self.scalar.get(name, 0) + value(q)

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar))

    def get(self, name: str) -> int:
        """The amount of one resource by its API name (0 when absent)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def as_dict(self) -> dict[str, int]:
        out = {CPU: self.milli_cpu, MEMORY: self.memory}
        if self.ephemeral_storage:
            out[EPHEMERAL_STORAGE] = self.ephemeral_storage
        if self.allowed_pod_number:
            out[PODS] = self.allowed_pod_number
        out.update(self.scalar)
        return out


@dataclass(frozen=True, slots=True)
class PodResource:
    """``fwk.PodResource``: what a pod adds to a node's aggregates."""

    resource: Resource
    non0_cpu: int
    non0_mem: int


def _fast_pod_resource(pod: Pod) -> PodResource | None:
    """The common case in integer arithmetic, or None when the exact slow path is needed.

    Applies when the pod has only regular containers, no overhead, no pod-level requests,
    no resized container statuses, and every amount is a whole number of its unit
    (millicores for cpu, units otherwise): then per-container rounding equals rounding the sum.
    """
    if pod.init_containers or pod.overhead or pod.pod_requests:
        return None
    for st in pod.container_statuses:
        if isinstance(st.get("resources"), dict) or st.get("allocatedResources"):
            return None
    res = Resource()
    non0_cpu = 0
    non0_mem = 0
    for c in pod.containers:
        has_cpu = has_mem = False
        for name, q in c.requests.items():
            den = q.denominator
            if name == CPU:
                if 1000 % den:
                    return None
                m = q.numerator * (1000 // den)
                res.milli_cpu += m
                non0_cpu += m
                has_cpu = True
                continue
            if den != 1:
                return None
            v = q.numerator
            if name == MEMORY:
                res.memory += v
                non0_mem += v
                has_mem = True
            elif name == EPHEMERAL_STORAGE:
                res.ephemeral_storage += v
            elif name == PODS:
                res.allowed_pod_number += v
            elif is_scalar_resource_name(name):
                res.scalar[name] = res.scalar.get(name, 0) + v
        if not has_cpu:
            non0_cpu += DEFAULT_MILLI_CPU_REQUEST
        if not has_mem:
            non0_mem += DEFAULT_MEMORY_REQUEST
    return PodResource(res, non0_cpu, non0_mem)


def calculate_pod_resource(pod: Pod) -> PodResource:
    """``PodInfo.CalculateResource``: requests plus the non-zero cpu/memory used by scoring."""
    fast = _fast_pod_resource(pod)
    if fast is not None:
        return fast
    return _exact_pod_resource(pod)


def _exact_pod_resource(pod: Pod) -> PodResource:
    requests = pod_requests(pod)
    level_set = is_pod_level_requests_set(pod)
    if not level_set:
        non_missing: dict[str, Fraction] = dict(NON_ZERO_DEFAULTS)
    else:
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}
    non0 = pod_requests(pod, non_missing=non_missing) if non_missing else requests
    return PodResource(
        resource=Resource.from_list(requests),
        non0_cpu=milli_value(non0.get(CPU, Fraction(0))),
        non0_mem=value(non0.get(MEMORY, Fraction(0))),
    )
