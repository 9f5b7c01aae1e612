"""A pod's resource requests summed over its containers, as ``resourcehelper`` computes them.

The summing rule sits here, beside the quantities it adds, rather than in ``framework/``: the
API server's pod-level defaulting (``kschedctl.snapshot.defaulting``) needs it while a pod is
parsed, and the scheduler's accounting (``kschedctl.framework.resources``) builds on it, so both
import it downward. It reads pods through the small ``RequestingPod`` protocol, never the model.

The rules (``k8s.io/component-helpers/resource/helpers.go``):

* regular containers are summed; restartable init (sidecar) containers are added to that sum
  and also stay running while later init containers run; the pod needs the max of that sum and
  every init container's peak;
* in-place resize (a running pod's status), up to v1.36: each regular and sidecar container
  with ``status.resources`` counts with the max of its spec, actuated and allocated requests
  (only actuated/allocated while a resize is infeasible), then they are summed as above;
* in-place resize from v1.37: the pod counts with the max of three totals, each summed as
  above: the spec, the allocated and the actuated requests of every container (init
  containers too; a container without that status counts its spec, or nothing while a resize is
  infeasible, when the spec is left out altogether). With InPlacePodLevelResourcesVerticalScaling
  the pod's own ``status.allocatedResources`` and ``status.resources.requests``, when both are
  there, are the allocated and actuated totals;
* pod-level ``spec.resources.requests`` (cpu, memory, hugepages) replace the container aggregate
  for those resources (with InPlacePodLevelResourcesVerticalScaling, the max of them and the
  pod's own status); ``spec.overhead`` is added last.

Which of these a run follows is a ``ResizeRule``, made from its ``Features`` by ``resize_rule``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from kschedctl.kube.features import Features
from kschedctl.kube.gates import IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING
from kschedctl.kube.quantity import QuantityError, ResourceList, parse_quantity
from kschedctl.kube.rules import RESIZE_REQUESTS_MAX_OF_TOTALS

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
    def status_resources(self) -> dict[str, Any] | None: ...

    @property
    def status_allocated(self) -> Any: ...

    @property
    def pod_requests(self) -> ResourceList | None: ...

    @property
    def overhead(self) -> ResourceList: ...


@dataclass(frozen=True, slots=True)
class ResizeRule:
    """How a running pod's in-place resize status counts in its requests (one version's rules)."""

    #: v1.37: the max of the spec, actuated and allocated totals; before, each container's max, summed.
    max_of_totals: bool = False
    #: InPlacePodLevelResourcesVerticalScaling: the pod's own ``status.resources`` and
    #: ``status.allocatedResources`` count too.
    pod_level_status: bool = False


#: The rule of v1.35 with its default gates (``kube.versions.DEFAULT_FEATURES``).
DEFAULT_RESIZE_RULE = ResizeRule()


def resize_rule(features: Features) -> ResizeRule:
    """The resize rule of a run that follows ``features``."""
    return ResizeRule(
        max_of_totals=features.follows(RESIZE_REQUESTS_MAX_OF_TOTALS),
        pod_level_status=features.enabled(IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING),
    )


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


def _status_list(raw: Any) -> dict[str, Fraction] | None:
    """A resource map of a status as Go decodes it: None when absent or null, else its quantities."""
    return _parse_list(raw) if isinstance(raw, dict) else None


def _with_non_missing(reqs: ResourceList, non_missing: ResourceList | None) -> ResourceList:
    if not non_missing:
        return reqs
    cp = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            cp[k] = cp.get(k, Fraction(0)) + v
    return cp


#: What one container counts with: (the container, whether it is an init container) -> its requests.
PerContainer = Callable[[RequestingContainer, bool], ResourceList]


def _sidecar_total(pod: RequestingPod, per_container: PerContainer, non_missing: ResourceList | None) -> ResourceList:
    """The sidecar formula over what ``per_container`` counts for each container."""
    reqs: ResourceList = {}
    for c in pod.containers:
        add_into(reqs, _with_non_missing(per_container(c, False), non_missing))
    restartable: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.init_containers:
        creqs = _with_non_missing(per_container(c, True), non_missing)
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


def _spec_requests(c: RequestingContainer, init: bool) -> ResourceList:
    return c.requests


# -- up to v1.36: each container's max, then the sum ------------------------------------------------


def _effective(pod: RequestingPod, spec: ResourceList, status: dict[str, Any]) -> ResourceList:
    """One container's requests given its status: the max of spec, actuated and allocated."""
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
    """The statuses by container name (an init container's status wins a shared name)."""
    statuses: dict[str, dict[str, Any]] = {}
    for s in pod.container_statuses:
        statuses[str(s.get("name"))] = s
    for s in pod.init_container_statuses:
        statuses[str(s.get("name"))] = s
    return statuses


def _per_container_max(pod: RequestingPod, non_missing: ResourceList | None) -> ResourceList:
    """Each regular and sidecar container with a status counts with its max; others with their spec."""
    statuses = _statuses_by_name(pod)

    def effective(c: RequestingContainer, init: bool) -> ResourceList:
        status = statuses.get(c.name)
        if status is None or (init and not c.is_sidecar):
            return c.requests
        return _effective(pod, c.requests, status)

    return _sidecar_total(pod, effective, non_missing)


# -- from v1.37: three totals, then the max ---------------------------------------------------------


def _first_statuses(pod: RequestingPod) -> dict[str, dict[str, Any]]:
    """A container's status is the first of its name, the containers' before the init containers'."""
    statuses: dict[str, dict[str, Any]] = {}
    for s in (*pod.container_statuses, *pod.init_container_statuses):
        statuses.setdefault(str(s.get("name")), s)
    return statuses


def _allocated_requests(c: RequestingContainer, status: dict[str, Any] | None, infeasible: bool) -> ResourceList:
    allocated = _status_list(status.get("allocatedResources")) if status is not None else None
    if allocated is not None:
        return allocated
    return {} if infeasible else c.requests


def _actuated_requests(c: RequestingContainer, status: dict[str, Any] | None, infeasible: bool) -> ResourceList:
    if status is not None:
        res = status.get("resources")
        actuated = _status_list(res.get("requests")) if isinstance(res, dict) else None
        if actuated is None:
            actuated = _status_list(status.get("allocatedResources"))
        if actuated is not None:
            return actuated
    return {} if infeasible else c.requests


def _pod_level_status(pod: RequestingPod) -> tuple[ResourceList, ResourceList] | None:
    """(actuated, allocated) from the pod's own status when both maps are there; else None."""
    allocated = _status_list(pod.status_allocated)
    res = pod.status_resources
    actuated = _status_list(res.get("requests")) if res is not None else None
    if allocated is None or actuated is None:
        return None
    return actuated, allocated


def _max_of_totals(pod: RequestingPod, non_missing: ResourceList | None, pod_level_status: bool) -> ResourceList:
    """The max of the spec, actuated and allocated totals (the spec left out while a resize is infeasible)."""
    infeasible = pod.resize_infeasible
    spec = _sidecar_total(pod, _spec_requests, non_missing)
    level = _pod_level_status(pod) if pod_level_status else None
    if level is not None:
        actuated, allocated = level
    else:
        statuses = _first_statuses(pod)
        actuated = _sidecar_total(
            pod, lambda c, _: _actuated_requests(c, statuses.get(c.name), infeasible), non_missing
        )
        allocated = _sidecar_total(
            pod, lambda c, _: _allocated_requests(c, statuses.get(c.name), infeasible), non_missing
        )
    out: dict[str, Fraction] = {}
    if not infeasible:
        max_into(out, spec)
    max_into(out, actuated)
    max_into(out, allocated)
    return out


def aggregate_container_requests(
    pod: RequestingPod,
    *,
    use_status: bool = True,
    non_missing: ResourceList | None = None,
    rule: ResizeRule = DEFAULT_RESIZE_RULE,
) -> ResourceList:
    """``resourcehelper.AggregateContainerRequests``; ``use_status=False`` reads the spec alone."""
    if not use_status:
        return _sidecar_total(pod, _spec_requests, non_missing)
    if rule.max_of_totals:
        return _max_of_totals(pod, non_missing, rule.pod_level_status)
    return _per_container_max(pod, non_missing)


def is_pod_level_requests_set(pod: RequestingPod) -> bool:
    return bool(pod.pod_requests) and any(is_supported_pod_level_resource(k) for k in pod.pod_requests or {})


def _pod_level_effective(pod: RequestingPod, rule: ResizeRule) -> ResourceList | None:
    """The pod-level requests a resize makes effective: the max of ``spec.resources.requests`` (left out
    while a resize is infeasible) and the pod's own status; None without that status or the gate."""
    res = pod.status_resources
    if not rule.pod_level_status or res is None:
        return None
    out: dict[str, Fraction] = {}
    if not pod.resize_infeasible:
        max_into(out, pod.pod_requests or {})
    max_into(out, _parse_list(res.get("requests")))
    max_into(out, _parse_list(pod.status_allocated))
    return out


def _apply_pod_level(pod: RequestingPod, reqs: dict[str, Fraction], use_status: bool, rule: ResizeRule) -> None:
    """Pod-level requests replace the container aggregate for cpu, memory and hugepages."""
    spec = pod.pod_requests or {}
    effective = _pod_level_effective(pod, rule) if use_status else None
    if effective is None:
        effective = dict(spec)
    elif not rule.max_of_totals:
        # up to v1.36 only the resources the spec names are written (one only the status has is not)
        effective = {k: effective.get(k, Fraction(0)) for k in spec}
    for k, v in effective.items():
        if is_supported_pod_level_resource(k):
            reqs[k] = v


def pod_requests(
    pod: RequestingPod,
    *,
    non_missing: ResourceList | None = None,
    exclude_overhead: bool = False,
    use_status: bool = True,
    skip_pod_level: bool = False,
    rule: ResizeRule = DEFAULT_RESIZE_RULE,
) -> ResourceList:
    """``resourcehelper.PodRequests`` under ``rule`` (by default v1.35's, with its default gates).

    ``use_status=False`` ignores in-place-resize status (NodeResourcesFit's PreFilter does);
    ``skip_pod_level=True`` ignores ``spec.resources`` (``SkipPodLevelResources``, what
    NodeResourcesFit's scorer passes because NewFit never sets its PodLevelResources flag).
    """
    reqs = aggregate_container_requests(pod, use_status=use_status, non_missing=non_missing, rule=rule)
    if not skip_pod_level and is_pod_level_requests_set(pod):
        _apply_pod_level(pod, reqs, use_status, rule)
    if not exclude_overhead and pod.overhead:
        add_into(reqs, pod.overhead)
    return reqs
