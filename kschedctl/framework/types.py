"""What plugins see about pods and nodes: PodInfo, AffinityTerm, NodeInfo, HostPortInfo.

NodeInfo carries the aggregates kube-scheduler keeps per node (requested and
non-zero requested resources, used host ports, image states, PVC reference
counts, pods with affinity) so that Filter and Score are O(1) in the number of
pods on the node. ``snapshot()`` is a cheap copy for what-if evaluation
(nominated pods, preemption); the cluster itself is never deep-copied.

Upstream model: ``k8s.io/kube-scheduler framework/types.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.framework.resources import (
    DEFAULT_RESIZE_RULE,
    PodResource,
    ResizeRule,
    Resource,
    calculate_pod_resource,
)
from kschedctl.kube.selectors import NOTHING, Selector

if TYPE_CHECKING:
    from kschedctl.snapshot.model import Node, Pod, PodAffinityTerm

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
_NO_LABELS: Mapping[str, str] = {}
#: The term lists of every pod without pod (anti-)affinity: one shared empty list, never changed in place.
_NO_TERMS: list[Any] = []


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A processed pod (anti-)affinity term (``fwk.AffinityTerm``)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """``ns_labels`` None stands for a nil label set: the namespace selector still
        evaluates against it as an empty set (an empty selector, or one with only
        NotIn/DoesNotExist, matches it), exactly as ``labels.Set(nil)`` does upstream."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(
            _NO_LABELS if ns_labels is None else ns_labels
        ):
            return self.selector.matches(pod.labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def make_affinity_term(pod: Pod, t: PodAffinityTerm) -> AffinityTerm:
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    return AffinityTerm(
        namespaces=namespaces,
        selector=t.label_selector,
        topology_key=t.topology_key,
        namespace_selector=NOTHING if t.namespace_selector is None else t.namespace_selector,
    )


class PodInfo:
    """A pod plus what the scheduler pre-computes about it (``framework.PodInfo``)."""

    __slots__ = (
        "_resource",
        "_resource_rule",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "required_affinity_terms",
        "required_anti_affinity_terms",
    )

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self._resource: PodResource | None = None
        self._resource_rule: ResizeRule | None = None
        aff = pod.affinity
        if aff is None:  # (the one shared empty list: these lists are never changed in place)
            self.required_affinity_terms: list[AffinityTerm] = _NO_TERMS
            self.required_anti_affinity_terms: list[AffinityTerm] = _NO_TERMS
            self.preferred_affinity_terms: list[WeightedAffinityTerm] = _NO_TERMS
            self.preferred_anti_affinity_terms: list[WeightedAffinityTerm] = _NO_TERMS
            return
        self.required_affinity_terms = [make_affinity_term(pod, t) for t in aff.pod_affinity_required]
        self.required_anti_affinity_terms = [make_affinity_term(pod, t) for t in aff.pod_anti_affinity_required]
        self.preferred_affinity_terms = [
            WeightedAffinityTerm(make_affinity_term(pod, w.term), w.weight) for w in aff.pod_affinity_preferred
        ]
        self.preferred_anti_affinity_terms = [
            WeightedAffinityTerm(make_affinity_term(pod, w.term), w.weight) for w in aff.pod_anti_affinity_preferred
        ]

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        """The PodInfo cached on the pod (built once per snapshot)."""
        pi = pod._info
        if pi is None:
            pi = cls(pod)
            pod._info = pi
        return pi

    def use_resource(self, res: PodResource, rule: ResizeRule) -> None:
        """Keep ``res`` as what the pod adds under ``rule`` (computed elsewhere, e.g. once for many
        pods of the same requests: ``PodResourceMemo``); it must be ``calculate_pod_resource``'s answer."""
        self._resource = res
        self._resource_rule = rule

    @property
    def resource(self) -> PodResource:
        """What the pod adds to a node's aggregates under v1.35's resize rule (``resource_under``: another's).

        Both rules agree unless the pod has resize status (a running pod whose resize is pending)."""
        return self.resource_under(DEFAULT_RESIZE_RULE)

    def resource_under(self, rule: ResizeRule) -> PodResource:
        """What the pod adds to a node's aggregates when its resize status counts as ``rule`` says
        (the last one asked for is kept)."""
        if self._resource is None or (self._resource_rule is not rule and self._resource_rule != rule):
            self._resource = calculate_pod_resource(self.pod, rule)
            self._resource_rule = rule
        return self._resource

    @property
    def has_affinity(self) -> bool:
        a = self.pod.affinity
        return a is not None and (a.has_pod_affinity or a.has_pod_anti_affinity)

    @property
    def has_required_anti_affinity(self) -> bool:
        a = self.pod.affinity
        return a is not None and a.has_pod_anti_affinity and len(a.pod_anti_affinity_required) > 0

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


def host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """``schedutil.GetHostPorts``: (hostIP, protocol, hostPort) of sidecars and containers."""
    out: list[tuple[str, str, int]] = []
    for c in pod.init_containers:
        if not c.is_sidecar:
            continue
        out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    for c in pod.containers:
        out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    return out


class HostPortInfo:
    """Used host ports per IP: ``{ip: {(protocol, port)}}`` with kube-scheduler's conflict rule."""

    __slots__ = ("ports",)

    def __init__(self) -> None:
        self.ports: dict[str, set[tuple[str, int]]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self.ports.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        s = self.ports.get(ip)
        if s is not None:
            s.discard((protocol, port))
            if not s:
                del self.ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in s for s in self.ports.values())
        return pp in self.ports.get(DEFAULT_BIND_ALL_HOST_IP, ()) or pp in self.ports.get(ip, ())

    def __len__(self) -> int:
        return sum(len(s) for s in self.ports.values())

    def clone(self) -> HostPortInfo:
        h = HostPortInfo()
        h.ports = {ip: set(s) for ip, s in self.ports.items()}
        return h


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


class NodeInfo:
    """A node and the pods assigned to it, with the aggregates kube-scheduler keeps."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "resize_rule",
        "used_ports",
    )

    def __init__(self, node: Node, resize_rule: ResizeRule = DEFAULT_RESIZE_RULE, allocatable: Resource | None = None) -> None:
        """``allocatable``: the node's allocatable amounts as a Resource, when known (else computed)."""
        self.node = node
        #: How the resize status of the node's pods counts in ``requested`` (the version's rule).
        self.resize_rule = resize_rule
        self.name = node.name
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource.from_list(node.allocatable) if allocatable is None else allocatable
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = 0

    def add_pod(self, pod: Pod) -> None:
        self.add_pod_info(PodInfo.of(pod))

    def add_pod_info(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.pod.affinity is not None:
            if pi.has_affinity:
                self.pods_with_affinity.append(pi)
            if pi.has_required_anti_affinity:
                self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def add_pods(self, pods: list[Pod], resource_of: Callable[[Pod], PodResource]) -> None:
        """``add_pod`` of each, in order (the same lists, aggregates and generation), what each adds under
        this NodeInfo's rule being ``resource_of(pod)`` (``calculate_pod_resource``'s answer, computed once
        for many pods: ``PodResourceMemo``); the sums are made in local variables (a snapshot adds every
        node's pods at once)."""
        rule = self.resize_rule
        infos = self.pods
        scalar = self.requested.scalar
        cpu = memory = storage = non0_cpu = non0_mem = 0
        for pod in pods:
            pi = pod._info
            if pi is None:
                pi = pod._info = PodInfo(pod)
            res = pi._resource = resource_of(pod)
            pi._resource_rule = rule
            infos.append(pi)
            if pod.affinity is not None:
                if pi.has_affinity:
                    self.pods_with_affinity.append(pi)
                if pi.has_required_anti_affinity:
                    self.pods_with_required_anti_affinity.append(pi)
            r = res.resource
            cpu += r.milli_cpu
            memory += r.memory
            storage += r.ephemeral_storage
            if r.scalar:
                for name, q in r.scalar.items():
                    scalar[name] = scalar.get(name, 0) + q
            non0_cpu += res.non0_cpu
            non0_mem += res.non0_mem
            if pod.volumes or pod.init_containers:
                self._update_others(pod, 1)
                continue
            for c in pod.containers:  # (a loop, not any(): this runs for every pod of a snapshot)
                if c.ports:
                    self._update_ports(pod, 1)
                    break
        req = self.requested
        req.milli_cpu += cpu
        req.memory += memory
        req.ephemeral_storage += storage
        non0 = self.non_zero_requested
        non0.milli_cpu += non0_cpu
        non0.memory += non0_mem
        self.generation += len(pods)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove by UID with kube-scheduler's swap-with-last removal (order changes as upstream)."""
        uid = pod.uid
        pi = PodInfo.of(pod)
        if pi.has_affinity:
            _swap_remove(self.pods_with_affinity, uid)
        if pi.has_required_anti_affinity:
            _swap_remove(self.pods_with_required_anti_affinity, uid)
        removed = _swap_remove(self.pods, uid)
        if removed is None:
            return False
        self._update(removed, -1)
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        res = pi._resource
        if res is None or pi._resource_rule is not self.resize_rule:
            res = pi.resource_under(self.resize_rule)
        self._update_resources(res, sign)
        self._update_others(pi.pod, sign)
        self.generation += 1

    def _update_resources(self, res: PodResource, times: int) -> None:
        """Add ``res`` ``times`` times (negative: take it away) to the requested amounts."""
        r = res.resource
        req = self.requested
        req.milli_cpu += times * r.milli_cpu
        req.memory += times * r.memory
        req.ephemeral_storage += times * r.ephemeral_storage
        if r.scalar:
            scalar = req.scalar
            for name, q in r.scalar.items():
                scalar[name] = scalar.get(name, 0) + times * q
        non0 = self.non_zero_requested
        non0.milli_cpu += times * res.non0_cpu
        non0.memory += times * res.non0_mem

    def _update_others(self, pod: Pod, sign: int) -> None:
        """The pod's host ports and claims (most pods have neither: host_ports only for those that may)."""
        for c in pod.containers:
            if c.ports:
                self._update_ports(pod, sign)
                break
        else:
            if pod.init_containers:
                self._update_ports(pod, sign)
        if pod.volumes:
            self._update_pvcs(pod, sign)

    def _update_ports(self, pod: Pod, sign: int) -> None:
        for ip, proto, port in host_ports(pod):
            if sign > 0:
                self.used_ports.add(ip, proto, port)
            else:
                self.used_ports.remove(ip, proto, port)

    def _update_pvcs(self, pod: Pod, sign: int) -> None:
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if not isinstance(pvc, dict):
                continue
            key = f"{pod.namespace}/{pvc.get('claimName', '')}"
            if sign > 0:
                self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1
            else:
                n = self.pvc_ref_counts.get(key, 0) - 1
                if n <= 0:
                    self.pvc_ref_counts.pop(key, None)
                else:
                    self.pvc_ref_counts[key] = n

    def snapshot(self) -> NodeInfo:
        """A copy whose pod lists and aggregates can change without touching this one."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.resize_rule = self.resize_rule
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.image_states = self.image_states
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.node.name}, pods={len(self.pods)})"


def _swap_remove(items: list[PodInfo], uid: str) -> PodInfo | None:
    for i, pi in enumerate(items):
        if pi.pod.uid == uid:
            items[i] = items[-1]
            items.pop()
            return pi
    return None
