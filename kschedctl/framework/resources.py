"""Pod resource requests exactly as kube-scheduler computes them.

The rules live in one place because NodeInfo aggregates, NodeResourcesFit,
BalancedAllocation and preemption must all agree. Summing a pod's containers
(sidecars, init peaks, in-place resize, pod-level requests, overhead) is
``kschedctl.snapshot.requests``, below the object model, which this module re-exports;
here are the scheduler's own additions:

* for scoring only, a container with no cpu/memory request counts as 100m / 200Mi
  ("non-zero" requests), unless pod-level requests cover the resource.

Each caller picks the options kube-scheduler passes at that point (see ``pod_requests``), and the
version's ``ResizeRule`` for what a running pod's resize status adds:
NodeInfo aggregates and BalancedAllocation read pod-level requests and resize
status; Fit's Filter reads pod-level requests but no status; Fit's Score is
built without the PodLevelResources and in-place-resize flags, so it reads
neither, only the containers' non-zero requests plus overhead.

Upstream model: ``k8s.io/component-helpers resource/helpers.go (PodRequests) and pkg/scheduler/util/pod_resources.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kschedctl.kube.quantity import milli_value, value
from kschedctl.snapshot.requests import (
    CPU,
    DEFAULT_RESIZE_RULE,
    MEMORY,
    ResizeRule,
    aggregate_container_requests,
    is_hugepages,
    is_pod_level_requests_set,
    is_supported_pod_level_resource,
    pod_requests,
    resize_rule,
)

if TYPE_CHECKING:
    from kschedctl.snapshot.model import Pod

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_RESIZE_RULE",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "NON_ZERO_DEFAULTS",
    "PODS",
    "PodResource",
    "PodResourceMemo",
    "ResizeRule",
    "Resource",
    "aggregate_container_requests",
    "calculate_pod_resource",
    "is_extended_resource_name",
    "is_hugepages",
    "is_native_resource",
    "is_pod_level_requests_set",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "pod_requests",
    "resize_rule",
]

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB

NON_ZERO_DEFAULTS: dict[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}

PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    return not (is_native_resource(name) or name.startswith("requests."))


def is_scalar_resource_name(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages, prefixed native, attachable volumes."""
    return (
        is_extended_resource_name(name)
        or is_hugepages(name)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


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


def _simple_requests(pod: Pod) -> bool:
    """Whether the pod's resources are its regular containers' requests alone: no init containers,
    overhead, pod-level requests, or resize status of any kind (every version's rule then agrees)."""
    if pod.init_containers or pod.overhead or pod.pod_requests or pod.resize_infeasible:
        return False
    if pod.init_container_statuses or pod.status_resources is not None or pod.status_allocated is not None:
        return False
    for st in pod.container_statuses:
        if isinstance(st.get("resources"), dict) or st.get("allocatedResources"):
            return False
    return True


class PodResourceMemo:
    """``calculate_pod_resource`` for the many pods of one build, computed once per request shape.

    Most pods of a cluster repeat a few shapes of requests, and a loaded cluster holds one quantity
    object per distinct amount. A pod whose resources are its containers' requests alone
    (``_simple_requests``) is keyed by its containers' request names and the identity of their
    quantities (alive as long as the pods, so an equal key means equal requests); pods with the same
    key get the same PodResource, which nobody changes in place. Other pods are computed each."""

    __slots__ = ("_memo", "rule")

    def __init__(self, rule: ResizeRule) -> None:
        self.rule = rule
        self._memo: dict[tuple[Any, ...], PodResource] = {}

    def of(self, pod: Pod) -> PodResource:
        if not _simple_requests(pod):
            return calculate_pod_resource(pod, self.rule)
        containers = pod.containers
        key: tuple[Any, ...]
        if len(containers) == 1:  # the names, then the quantities (with another count: the count, then those of each)
            requests = containers[0].requests
            key = (*requests, *map(id, requests.values()))
        else:
            key = (len(containers), *[(*c.requests, *map(id, c.requests.values())) for c in containers])
        res = self._memo.get(key)
        if res is None:
            res = self._memo[key] = calculate_pod_resource(pod, self.rule)
        return res


def _fast_pod_resource(pod: Pod) -> PodResource | None:
    """The common case in integer arithmetic, or None when the exact slow path is needed.

    Applies when the pod has only regular containers, no overhead, no pod-level requests,
    no resize status (of a container or of the pod, no infeasible resize), and every amount is a
    whole number of its unit (millicores for cpu, units otherwise): then every version's resize
    rule gives the spec, and per-container rounding equals rounding the sum.
    """
    if not _simple_requests(pod):
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


def calculate_pod_resource(pod: Pod, rule: ResizeRule = DEFAULT_RESIZE_RULE) -> PodResource:
    """``PodInfo.CalculateResource``: requests plus the non-zero cpu/memory used by scoring, with a
    running pod's resize status counted as ``rule`` (its version) says."""
    fast = _fast_pod_resource(pod)
    if fast is not None:
        return fast
    return _exact_pod_resource(pod, rule)


def _exact_pod_resource(pod: Pod, rule: ResizeRule = DEFAULT_RESIZE_RULE) -> PodResource:
    requests = pod_requests(pod, rule=rule)
    level_set = is_pod_level_requests_set(pod)
    if not level_set:
        non_missing: dict[str, Fraction] = dict(NON_ZERO_DEFAULTS)
    else:
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}
    non0 = pod_requests(pod, non_missing=non_missing, rule=rule) if non_missing else requests
    return PodResource(
        resource=Resource.from_list(requests),
        non0_cpu=milli_value(non0.get(CPU, Fraction(0))),
        non0_mem=value(non0.get(MEMORY, Fraction(0))),
    )
