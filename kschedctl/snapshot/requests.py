"""A pod's resource requests summed over its containers, as ``resourcehelper`` computes them.

The summing rule sits here, beside the quantities it adds, rather than in ``framework/``: the
API server's pod-level defaulting (``kschedctl.snapshot.defaulting``) needs it while a pod is
parsed, and the scheduler's accounting (``kschedctl.framework.resources``) builds on it, so both
import it downward. It reads pods through the small ``RequestingPod`` protocol, never the model.

The rules (``k8s.io/component-helpers/resource/helpers.go``, v1.35):

* regular containers are summed; restartable init (sidecar) containers are added to that sum
  and also stay running while later init containers run; the pod needs the max of that sum and
  every init container's peak;
* in-place resize: a running container counts with the max of its spec, actuated and allocated
  requests (only actuated/allocated while a resize is infeasible);
* pod-level ``spec.resources.requests`` (cpu, memory, hugepages) replace the container aggregate
  for those resources; ``spec.overhead`` is added last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from kschedctl.kube.quantity import QuantityError, ResourceList, parse_quantity

CPU = "cpu"
MEMORY = "memory"


class RequestingContainer(Protocol):
    """What the rules read of a container."""

    @property
    def name(self) -> str: ...

    @property
    def requests(self) -> ResourceList: ...

    @property
    def is_sidecar(self) -> bool: ...


class RequestingPod(Protocol):
    """What the rules read of a pod (``kschedctl.snapshot.model.Pod`` has it all)."""

    @property
    def containers(self) -> Sequence[RequestingContainer]: ...

    @property
    def init_containers(self) -> Sequence[RequestingContainer]: ...

    @property
    def container_statuses(self) -> Sequence[dict[str, Any]]: ...

    @property
    def init_container_statuses(self) -> Sequence[dict[str, Any]]: ...

    @property
    def resize_infeasible(self) -> bool: ...

    @property
    def pod_requests(self) -> ResourceList | None: ...

    @property
    def overhead(self) -> ResourceList: ...


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or is_hugepages(name)


def add_into(into: dict[str, Fraction], other: Mapping[str, Fraction]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, Fraction(0)) + v


def max_into(into: dict[str, Fraction], other: Mapping[str, Fraction]) -> None:
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


def _effective(pod: RequestingPod, spec: ResourceList, status: dict[str, Any]) -> ResourceList:
    res = status.get("resources")
    if not isinstance(res, dict):
        return spec
    actuated = _parse_list(res.get("requests"))
    allocated = _parse_list(status.get("allocatedResources"))
    out: dict[str, Fraction] = {}
    if not pod.resize_infeasible:
        max_into(out, spec)
    max_into(out, actuated)
    max_into(out, allocated)
    return out


def _statuses_by_name(pod: RequestingPod) -> dict[str, dict[str, Any]]:
    statuses: dict[str, dict[str, Any]] = {}
    for s in pod.container_statuses:
        statuses[str(s.get("name"))] = s
    for s in pod.init_container_statuses:
        statuses[str(s.get("name"))] = s
    return statuses


def _with_non_missing(reqs: ResourceList, non_missing: ResourceList | None) -> ResourceList:
    if not non_missing:
        return reqs
    cp = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            cp[k] = cp.get(k, Fraction(0)) + v
    return cp


def aggregate_container_requests(
    pod: RequestingPod, *, use_status: bool = True, non_missing: ResourceList | None = None
) -> ResourceList:
    """``resourcehelper.AggregateContainerRequests``."""
    statuses = _statuses_by_name(pod) if use_status else {}
    reqs: ResourceList = {}
    for c in pod.containers:
        creqs = c.requests
        if use_status and c.name in statuses:
            creqs = _effective(pod, creqs, statuses[c.name])
        add_into(reqs, _with_non_missing(creqs, non_missing))

    restartable: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.init_containers:
        creqs = c.requests
        if use_status and c.is_sidecar and c.name in statuses:
            creqs = _effective(pod, creqs, statuses[c.name])
        creqs = _with_non_missing(creqs, non_missing)
        if c.is_sidecar:
            add_into(reqs, creqs)
            add_into(restartable, creqs)
            current = dict(restartable)
        else:
            current = dict(creqs)
            add_into(current, restartable)
        max_into(init_peak, current)
    max_into(reqs, init_peak)
    return reqs


def is_pod_level_requests_set(pod: RequestingPod) -> bool:
    return bool(pod.pod_requests) and any(is_supported_pod_level_resource(k) for k in pod.pod_requests or {})


def pod_requests(
    pod: RequestingPod,
    *,
    non_missing: ResourceList | None = None,
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
        add_into(reqs, pod.overhead)
    return reqs
