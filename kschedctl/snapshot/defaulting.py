"""The API server's defaulting of the fields kube-scheduler reads.

kube-scheduler only ever sees objects the API server stored, with defaults filled in; a
snapshot or a manifest written by hand often leaves them out. The object model
(``kschedctl.snapshot.model``) applies these rules while it parses, so no plugin re-derives a
default. The rules follow ``pkg/apis/core/v1/defaults.go`` (v1.35, PodLevelResources on).
"""

from __future__ import annotations

from kschedctl.kube.quantity import ResourceList
from kschedctl.snapshot.requests import RequestingPod, aggregate_container_requests, is_hugepages

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PORT_PROTOCOL = "TCP"
#: Pod-level resources whose requests default from the containers' aggregate.
_AGGREGATED_POD_LEVEL = ("cpu", "memory")


def container_requests(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """A container's requests default to its limits, resource by resource (changes ``requests``)."""
    for k, v in limits.items():
        requests.setdefault(k, v)
    return requests


def host_port(host_network: bool, container_port: int, given: int) -> int:
    """``defaultHostNetworkPorts``: on the host network an unset hostPort is the containerPort."""
    return container_port if host_network and given == 0 else given


def pod_level_requests(pod: RequestingPod, limits: ResourceList) -> ResourceList | None:
    """``spec.resources.requests`` once defaulted, given ``spec.resources.limits``.

    cpu and memory without a pod-level request take the containers' aggregate (spec only, no
    resize status); then any cpu, memory or hugepages limit still without a request is the
    request. With nothing to default, the requests stay what they were.
    """
    reqs = dict(pod.pod_requests or {})
    for k, v in aggregate_container_requests(pod, use_status=False).items():
        if k in _AGGREGATED_POD_LEVEL and k not in reqs:
            reqs[k] = v
    for k, v in limits.items():
        if k not in reqs and (k in _AGGREGATED_POD_LEVEL or is_hugepages(k)):
            reqs[k] = v
    return reqs if reqs else pod.pod_requests


def node_allocatable(capacity: ResourceList) -> ResourceList:
    """A node without ``status.allocatable`` can allocate its whole capacity."""
    return dict(capacity)
