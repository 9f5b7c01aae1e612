"""The in-memory cluster model: the Kubernetes objects kube-scheduler reads.

Objects are parsed once, when a snapshot is loaded, into small slotted classes
with the fields the plugins need; the raw dictionary stays on ``.raw`` for
renderers and for the rarely used fields. Parsing applies the defaulting the API
server would have applied before the scheduler saw the object (see
``kschedctl.snapshot.defaulting``), so plugins never re-derive defaults.
"""

from __future__ import annotations

import copy
import marshal
import pickle
from dataclasses import dataclass
from fractions import Fraction
from sys import intern
from typing import Any

import orjson

from kschedctl.errors import InputError
from kschedctl.kube.quantity import QuantityError, ResourceList, parse_quantity
from kschedctl.kube.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    Selector,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)
from kschedctl.snapshot import defaulting
from kschedctl.snapshot.defaulting import DEFAULT_SCHEDULER_NAME


def _mapping(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError("must be a mapping", field=where)
    return raw


def _list(raw: Any, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("must be a list", field=where)
    return raw


# The model keeps one string object per distinct text of the fields that repeat across pods (namespace,
# node name, phase, priority class, container name and image, label values) with ``sys.intern``: JSON's
# decoder makes a new string for each value, and a 150,000-pod snapshot repeats these a million times.

#: The empty list, and the empty mapping, of every object without such items (a big snapshot holds
#: 150,000 pods with a dozen such fields each, most empty): shared, so never changed in place (a field
#: is replaced, not edited). Lists: a pod's init containers, tolerations, volumes, ... and a container's ports,
#: an object's owner references; mappings: a container's limits.
NO_ITEMS: list[Any] = []
NO_ENTRIES: dict[Any, Any] = {}


def _str_map(raw: Any, where: str) -> dict[str, str]:
    m = _mapping(raw, where)
    return {str(k): "" if v is None else str(v) for k, v in m.items()}


def _label_map(raw: Any, where: str) -> dict[str, str]:
    """``_str_map`` of labels, each value one string object per distinct text (see ``intern``)."""
    m = _mapping(raw, where)
    return {str(k): "" if v is None else intern(str(v)) for k, v in m.items()}


def _int(raw: Any, where: str, default: int = 0) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise InputError("must be an integer", field=where)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            pass
    raise InputError(f"must be an integer, got {raw!r}", field=where)


def parse_resource_list(raw: Any, where: str) -> ResourceList:
    out: ResourceList = {}
    for name, q in _mapping(raw, where).items():
        try:
            out[str(name)] = parse_quantity(q)
        except QuantityError as e:
            raise InputError(str(e), field=f"{where}.{name}") from None
    return out


@dataclass(slots=True)
class ObjectMeta:
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creation_timestamp: str
    owner_references: list[dict[str, Any]]
    deletion_timestamp: str | None
    resource_version: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def controller_ref(self) -> dict[str, Any] | None:
        for ref in self.owner_references:
            if ref.get("controller"):
                return ref
        return None


def parse_meta(raw: dict[str, Any], namespaced: bool) -> ObjectMeta:
    # Absent fields are tested inline rather than passed to the helpers: a snapshot holds tens of
    # thousands of objects, most fields are absent, and the calls were most of the parsing time.
    md = raw.get("metadata")
    if type(md) is not dict:
        md = _mapping(md, "metadata")
    name = md.get("name")
    if not name:
        raise InputError("every object needs metadata.name", field="metadata.name")
    ns = intern(str(md.get("namespace") or ("default" if namespaced else "")))
    uid = str(md.get("uid") or (f"{ns}/{name}" if namespaced else str(name)))
    labels = md.get("labels")
    annotations = md.get("annotations")
    owners = md.get("ownerReferences")
    return ObjectMeta(
        name=str(name),
        namespace=ns,
        uid=uid,
        labels={} if labels is None else _label_map(labels, "metadata.labels"),
        annotations={} if annotations is None else _str_map(annotations, "metadata.annotations"),
        creation_timestamp=str(md.get("creationTimestamp") or ""),
        owner_references=NO_ITEMS if owners is None else [
            r for r in _list(owners, "metadata.ownerReferences") if isinstance(r, dict)
        ],
        deletion_timestamp=md.get("deletionTimestamp"),
        resource_version=str(md.get("resourceVersion") or ""),
    )


# --------------------------------------------------------------------------- taints


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """``v1.Toleration.ToleratesTaint`` (comparison operators are an alpha gate, off)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerations_tolerate(tolerations: list[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def parse_taints(raw: Any, where: str) -> list[Taint]:
    out = []
    for i, t in enumerate(_list(raw, where)):
        t = _mapping(t, f"{where}[{i}]")
        out.append(Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or "")))
    return out


def parse_tolerations(raw: Any, where: str) -> list[Toleration]:
    out = []
    for i, t in enumerate(_list(raw, where)):
        t = _mapping(t, f"{where}[{i}]")
        secs = t.get("tolerationSeconds")
        out.append(
            toleration(
                (
                    str(t.get("key") or ""),
                    str(t.get("operator") or "Equal"),
                    str(t.get("value") or ""),
                    str(t.get("effect") or ""),
                    None if secs is None else _int(secs, f"{where}[{i}].tolerationSeconds"),
                )
            )
        )
    return out


#: One Toleration per distinct value, shared (it cannot change): pods repeat a few, the API server's
#: defaults on nearly every one.
_TOLERATIONS: dict[tuple[str, str, str, str, int | None], Toleration] = {}


def toleration(fields: tuple[str, str, str, str, int | None]) -> Toleration:
    """The Toleration of ``fields`` (key, operator, value, effect, seconds), one object per distinct value."""
    found = _TOLERATIONS.get(fields)
    if found is None:
        if len(_TOLERATIONS) >= 4096:
            _TOLERATIONS.clear()
        found = _TOLERATIONS[fields] = Toleration(*fields)
    return found


# --------------------------------------------------------------------------- pods


@dataclass(frozen=True, slots=True)
class ContainerPort:
    container_port: int
    host_port: int
    host_ip: str
    protocol: str


@dataclass(slots=True)
class Container:
    name: str
    image: str
    requests: ResourceList
    limits: ResourceList
    ports: list[ContainerPort]
    restart_policy: str | None  # "Always" marks a restartable init (sidecar) container

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    label_selector: Selector
    namespaces: tuple[str, ...]
    namespace_selector: Selector | None  # None: the field was absent
    topology_key: str
    match_label_keys: tuple[str, ...]
    mismatch_label_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True)
class Affinity:
    node_required: NodeSelector | None = None
    node_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    has_pod_affinity: bool = False
    has_pod_anti_affinity: bool = False


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: Selector
    min_domains: int | None
    node_affinity_policy: str | None
    node_taints_policy: str | None
    match_label_keys: tuple[str, ...]


def _parse_pod_affinity_term(raw: Any, where: str) -> PodAffinityTerm:
    raw = _mapping(raw, where)
    ns_sel = raw.get("namespaceSelector")
    return PodAffinityTerm(
        label_selector=parse_label_selector(raw.get("labelSelector"), f"{where}.labelSelector"),
        namespaces=tuple(str(n) for n in _list(raw.get("namespaces"), f"{where}.namespaces")),
        namespace_selector=None if ns_sel is None else parse_label_selector(ns_sel, f"{where}.namespaceSelector"),
        topology_key=str(raw.get("topologyKey") or ""),
        match_label_keys=tuple(str(k) for k in _list(raw.get("matchLabelKeys"), f"{where}.matchLabelKeys")),
        mismatch_label_keys=tuple(str(k) for k in _list(raw.get("mismatchLabelKeys"), f"{where}.mismatchLabelKeys")),
    )


def _parse_weighted_terms(raw: Any, where: str) -> tuple[WeightedPodAffinityTerm, ...]:
    out = []
    for i, w in enumerate(_list(raw, where)):
        w = _mapping(w, f"{where}[{i}]")
        out.append(
            WeightedPodAffinityTerm(
                _int(w.get("weight"), f"{where}[{i}].weight"),
                _parse_pod_affinity_term(w.get("podAffinityTerm"), f"{where}[{i}].podAffinityTerm"),
            )
        )
    return tuple(out)


def _parse_node_affinity(na: Any, where: str) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    na = _mapping(na, where)
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    required = None if req is None else parse_node_selector(req, f"{where}.requiredDuringSchedulingIgnoredDuringExecution")
    prefs = []
    path = f"{where}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, p in enumerate(_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), path)):
        p = _mapping(p, f"{path}[{i}]")
        prefs.append(
            PreferredSchedulingTerm(
                _int(p.get("weight"), f"{path}[{i}].weight"),
                parse_node_selector_term(p.get("preference"), f"{path}[{i}].preference"),
            )
        )
    return required, tuple(prefs)


def _parse_pod_affinity(
    pa: Any, where: str
) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    """``podAffinity`` or ``podAntiAffinity``: (required terms, preferred weighted terms)."""
    pa = _mapping(pa, where)
    rpath = f"{where}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        _parse_pod_affinity_term(t, f"{rpath}[{i}]")
        for i, t in enumerate(_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rpath))
    )
    preferred = _parse_weighted_terms(
        pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
        f"{where}.preferredDuringSchedulingIgnoredDuringExecution",
    )
    return required, preferred


def parse_affinity(raw: Any, where: str = "spec.affinity") -> Affinity | None:
    if raw is None:
        return None
    raw = _mapping(raw, where)
    aff = Affinity()
    na = raw.get("nodeAffinity")
    if na is not None:
        aff.node_required, aff.node_preferred = _parse_node_affinity(na, f"{where}.nodeAffinity")
    pa = raw.get("podAffinity")
    if pa is not None:
        aff.has_pod_affinity = True
        aff.pod_affinity_required, aff.pod_affinity_preferred = _parse_pod_affinity(pa, f"{where}.podAffinity")
    pa = raw.get("podAntiAffinity")
    if pa is not None:
        aff.has_pod_anti_affinity = True
        aff.pod_anti_affinity_required, aff.pod_anti_affinity_preferred = _parse_pod_affinity(
            pa, f"{where}.podAntiAffinity"
        )
    return aff


def _parse_requirements(res: Any, where: str) -> tuple[ResourceList, ResourceList]:
    """A container's ``resources``: (requests, limits), requests defaulted from limits."""
    if type(res) is not dict:
        res = _mapping(res, where)
    limits: ResourceList = NO_ENTRIES
    requests: ResourceList = {}
    if res.get("limits") is not None:
        limits = parse_resource_list(res.get("limits"), f"{where}.limits")
    if res.get("requests") is not None:
        requests = parse_resource_list(res.get("requests"), f"{where}.requests")
    if limits:
        defaulting.container_requests(requests, limits)
    return requests, limits


def _parse_ports(raw: Any, where: str, host_network: bool) -> list[ContainerPort]:
    ports = []
    for i, p in enumerate(_list(raw, where)):
        p = _mapping(p, f"{where}[{i}]")
        cport = _int(p.get("containerPort"), f"{where}[{i}].containerPort")
        hport = defaulting.host_port(host_network, cport, _int(p.get("hostPort"), f"{where}[{i}].hostPort"))
        protocol = str(p.get("protocol") or defaulting.DEFAULT_PORT_PROTOCOL)
        ports.append(ContainerPort(cport, hport, str(p.get("hostIP") or ""), protocol))
    return ports


def _parse_container(raw: Any, where: str, host_network: bool) -> Container:
    # Absent fields are tested inline (see parse_meta): the same values as the helpers give.
    if type(raw) is not dict:
        raw = _mapping(raw, where)
    res = raw.get("resources")
    requests, limits = ({}, NO_ENTRIES) if res is None else _parse_requirements(res, f"{where}.resources")
    ports = raw.get("ports")
    rp = raw.get("restartPolicy")
    return Container(
        name=intern(str(raw.get("name") or "")),
        image=intern(str(raw.get("image") or "")),
        requests=requests,
        limits=limits,
        ports=NO_ITEMS if ports is None else _parse_ports(ports, f"{where}.ports", host_network),
        restart_policy=None if rp is None else str(rp),
    )


def _parse_containers(raw: Any, where: str, host_network: bool) -> list[Container]:
    return [_parse_container(c, f"{where}[{i}]", host_network) for i, c in enumerate(_list(raw, where))]


def parse_spread_constraints(raw: Any, where: str) -> list[TopologySpreadConstraint]:
    out = []
    for i, c in enumerate(_list(raw, where)):
        w = f"{where}[{i}]"
        c = _mapping(c, w)
        md = c.get("minDomains")
        out.append(
            TopologySpreadConstraint(
                max_skew=_int(c.get("maxSkew"), f"{w}.maxSkew"),
                topology_key=str(c.get("topologyKey") or ""),
                when_unsatisfiable=str(c.get("whenUnsatisfiable") or "DoNotSchedule"),
                label_selector=parse_label_selector(c.get("labelSelector"), f"{w}.labelSelector"),
                min_domains=None if md is None else _int(md, f"{w}.minDomains"),
                node_affinity_policy=c.get("nodeAffinityPolicy"),
                node_taints_policy=c.get("nodeTaintsPolicy"),
                match_label_keys=tuple(str(k) for k in _list(c.get("matchLabelKeys"), f"{w}.matchLabelKeys")),
            )
        )
    return out


def _dicts(raw: Any, where: str) -> list[dict[str, Any]]:
    """The mappings of a list field (other entries are the validator's to report)."""
    return [v for v in _list(raw, where) if isinstance(v, dict)]


def _resize_infeasible(conditions: Any) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
        for c in _list(conditions, "status.conditions")
    )


class Pod:
    """A pod as the scheduler sees it (after API-server defaulting)."""

    __slots__ = (
        "_info",
        "_packed",
        "_raw",
        "affinity",
        "container_statuses",
        "containers",
        "host_network",
        "init_container_statuses",
        "init_containers",
        "meta",
        "node_name",
        "node_selector",
        "nominated_node_name",
        "overhead",
        "phase",
        "pod_limits",
        "pod_requests",
        "preemption_policy",
        "priority",
        "priority_class_name",
        "queued_at_start",
        "resize_infeasible",
        "resource_claims",
        "scheduler_name",
        "scheduling_gates",
        "status_allocated",
        "status_resources",
        "tolerations",
        "topology_spread_constraints",
        "volumes",
    )

    _raw: dict[str, Any] | None
    #: ``raw`` packed (``pack``): None while it is a dict; bytes of ``marshal``, or JSON text.
    _packed: bytes | str | None
    meta: ObjectMeta
    host_network: bool
    containers: list[Container]
    init_containers: list[Container]
    overhead: ResourceList
    pod_requests: ResourceList | None
    pod_limits: ResourceList | None
    node_name: str
    scheduler_name: str
    priority: int | None
    priority_class_name: str
    preemption_policy: str
    node_selector: dict[str, str]
    affinity: Affinity | None
    tolerations: list[Toleration]
    topology_spread_constraints: list[TopologySpreadConstraint]
    scheduling_gates: list[str]
    volumes: list[dict[str, Any]]
    resource_claims: list[dict[str, Any]]
    phase: str
    nominated_node_name: str
    container_statuses: list[dict[str, Any]]
    init_container_statuses: list[dict[str, Any]]
    status_resources: dict[str, Any] | None
    status_allocated: Any
    resize_infeasible: bool
    _info: Any
    #: Position in the scheduling queue's initial list when the pod was already pending as a run began
    #: (``kschedctl.whatif.podqueue.queued_at_start``); None: queued when created (PrioritySort reads creationTimestamp).
    queued_at_start: int | None

    @classmethod
    def from_raw(cls, raw: dict[str, Any]) -> Pod:
        """The pod a manifest describes, parsed and defaulted as the API server would store it."""
        pod = cls.__new__(cls)
        pod._read(raw)
        return pod

    def __init__(self, raw: dict[str, Any]) -> None:
        """The same as ``Pod.from_raw(raw)``, for callers (and plugins) that construct pods directly."""
        self._read(raw)

    @property
    def raw(self) -> dict[str, Any]:
        """The pod's manifest as read (unpacked on first use after ``pack``; then the same dict every time)."""
        raw = self._raw
        if raw is None:
            packed = self._packed
            raw = self._raw = orjson.loads(packed) if isinstance(packed, str) else marshal.loads(packed)  # type: ignore[arg-type]
            self._packed = None
        return raw

    @raw.setter
    def raw(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._packed = None

    def pack(self, text: str | None = None) -> None:
        """Keep ``raw`` as bytes until something reads it again. A snapshot's bound pods are parsed into
        the fields scheduling reads; their manifests are rarely looked at after that, and as dicts they
        were the largest part of a big snapshot's memory (kept as it is when it cannot be packed).
        ``text``: JSON that ``orjson.loads`` reads as ``raw`` (a signed snapshot's line), kept instead."""
        raw = self._raw
        if raw is None:
            return
        packed: bytes | str | None = text
        if packed is None:
            try:
                packed = marshal.dumps(raw)
            except ValueError:
                return
        self._packed, self._raw = packed, None

    def fresh_copy(self) -> Pod:
        """A shallow copy without the cached PodInfo: a simulation run writes its placement and
        nomination onto the copy, and the next run starts again from this pod."""
        self.raw  # noqa: B018 -- unpacked first: the copy and this pod share one manifest, as they always did
        other = copy.copy(self)
        other._info = None
        return other

    def _read(self, raw: dict[str, Any]) -> None:
        # Absent fields are tested inline (see parse_meta): the same values as the helpers give.
        self._raw = raw
        self._packed = None
        self.meta = parse_meta(raw, namespaced=True)
        spec = raw.get("spec")
        if type(spec) is not dict:
            spec = _mapping(spec, "spec")
        status = raw.get("status")
        if type(status) is not dict:
            status = _mapping(status, "status")
        self._read_containers(spec)
        self._read_resources(spec)
        self._read_placement(spec)
        self._read_lists(spec)
        self._read_status(status)
        self._info = None
        self.queued_at_start = None
        if self.pod_limits:
            self.pod_requests = defaulting.pod_level_requests(self, self.pod_limits)

    def _read_containers(self, spec: dict[str, Any]) -> None:
        host_network = self.host_network = bool(spec.get("hostNetwork"))
        self.containers = _parse_containers(spec.get("containers"), "spec.containers", host_network)
        inits = spec.get("initContainers")
        self.init_containers = NO_ITEMS if inits is None else _parse_containers(inits, "spec.initContainers", host_network)

    def _read_resources(self, spec: dict[str, Any]) -> None:
        """``spec.overhead`` and the pod-level ``spec.resources`` (None: not given)."""
        overhead = spec.get("overhead")
        self.overhead = {} if overhead is None else parse_resource_list(overhead, "spec.overhead")
        self.pod_requests = self.pod_limits = None
        pres = spec.get("resources")
        if pres is not None:
            pres = _mapping(pres, "spec.resources")
            if "requests" in pres:
                self.pod_requests = parse_resource_list(pres.get("requests"), "spec.resources.requests")
            if "limits" in pres:
                self.pod_limits = parse_resource_list(pres.get("limits"), "spec.resources.limits")

    def _read_placement(self, spec: dict[str, Any]) -> None:
        """Where and when the pod may run: node name, scheduler, priority, selectors, affinity, tolerations..."""
        get = spec.get
        self.node_name = intern(str(get("nodeName") or ""))
        self.scheduler_name = str(get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        pr = get("priority")
        self.priority = None if pr is None else _int(pr, "spec.priority")
        self.priority_class_name = intern(str(get("priorityClassName") or ""))
        self.preemption_policy = str(get("preemptionPolicy") or "")
        selector = get("nodeSelector")
        self.node_selector = {} if selector is None else _str_map(selector, "spec.nodeSelector")
        affinity = get("affinity")
        self.affinity = None if affinity is None else parse_affinity(affinity)
        tolerations = get("tolerations")
        self.tolerations = NO_ITEMS if tolerations is None else parse_tolerations(tolerations, "spec.tolerations")
        tscs = get("topologySpreadConstraints")
        self.topology_spread_constraints = (
            NO_ITEMS if tscs is None else parse_spread_constraints(tscs, "spec.topologySpreadConstraints")
        )

    def _read_lists(self, spec: dict[str, Any]) -> None:
        """Volumes, scheduling gates and resource claims (volumes and claims kept raw: the plugins
        that read them look at the fields they need)."""
        # Absent fields are tested inline (see parse_meta), here and in _read_status.
        volumes = spec.get("volumes")
        self.volumes = NO_ITEMS if volumes is None else _dicts(volumes, "spec.volumes")
        gates = spec.get("schedulingGates")
        self.scheduling_gates = NO_ITEMS if gates is None else [
            str(_mapping(g, "spec.schedulingGates").get("name", "")) for g in _list(gates, "spec.schedulingGates")
        ]
        claims = spec.get("resourceClaims")
        self.resource_claims = NO_ITEMS if claims is None else _dicts(claims, "spec.resourceClaims")

    def _read_status(self, status: dict[str, Any]) -> None:
        get = status.get
        self.phase = intern(str(get("phase") or ""))
        self.nominated_node_name = str(get("nominatedNodeName") or "")
        statuses = get("containerStatuses")
        self.container_statuses = NO_ITEMS if statuses is None else _dicts(statuses, "status.containerStatuses")
        statuses = get("initContainerStatuses")
        self.init_container_statuses = NO_ITEMS if statuses is None else _dicts(statuses, "status.initContainerStatuses")
        sres = get("resources")
        self.status_resources = None if sres is None else _mapping(sres, "status.resources")
        self.status_allocated = get("allocatedResources")
        conditions = get("conditions")
        self.resize_infeasible = conditions is not None and _resize_infeasible(conditions)

    # -- the snapshot cache's form (``snapshot/modelcache.py``) -------------------------
    def state(self, quantities: dict[int, tuple[int, Fraction]]) -> tuple[Any, ...] | None:
        """The pod as plain values ``marshal`` stores (quantities as indexes into ``quantities``, which
        grows; an empty field as None; affinity and spread constraints pickled), to be made again by
        ``from_state`` without parsing the manifest; None for a pod with a cached PodInfo."""
        if self._info is not None:
            return None
        packed = self._packed if self._packed is not None else marshal.dumps(self._raw)
        shapes = None
        if self.affinity is not None or self.topology_spread_constraints:
            shapes = pickle.dumps((self.affinity, self.topology_spread_constraints), protocol=pickle.HIGHEST_PROTOCOL)
        return (
            packed,
            meta_state(self.meta),
            [_container_state(c, quantities) for c in self.containers],
            [_container_state(c, quantities) for c in self.init_containers] or None,
            self.host_network,
            _resources_state(self.overhead, quantities),
            None if self.pod_requests is None else _resources_state(self.pod_requests, quantities) or {},
            None if self.pod_limits is None else _resources_state(self.pod_limits, quantities) or {},
            self.node_name,
            self.scheduler_name,
            self.priority,
            self.priority_class_name,
            self.preemption_policy,
            self.node_selector or None,
            [(t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in self.tolerations] or None,
            self.scheduling_gates or None,
            self.volumes or None,
            self.resource_claims or None,
            self.phase,
            self.nominated_node_name,
            self.container_statuses or None,
            self.init_container_statuses or None,
            self.status_resources,
            self.status_allocated,
            self.resize_infeasible,
            self.queued_at_start,
            shapes,
        )

    @classmethod
    def from_state(cls, state: tuple[Any, ...], quantities: list[Fraction], shapes_seen: dict[bytes, Any]) -> Pod:
        """The pod ``state`` describes (``quantities``: the fractions its indexes name), its manifest packed.
        ``shapes_seen``: the affinities and spread constraints unpickled so far, by their pickle (pods of one
        workload repeat them; an Affinity is not changed once parsed, so the pods share it)."""
        (packed, meta, containers, inits, host_network, overhead, requests, limits, node_name, scheduler_name,
         priority, priority_class_name, preemption_policy, node_selector, tolerations, gates, volumes, claims, phase,
         nominated, statuses, init_statuses, status_resources, status_allocated, resize_infeasible, queued,
         shapes) = state
        pod = cls.__new__(cls)
        pod._raw = None
        pod._packed = packed
        pod._info = None
        pod.meta = meta_of(meta)
        pod.containers = [_container_of(c, quantities) for c in containers]
        pod.init_containers = [_container_of(c, quantities) for c in inits] if inits else NO_ITEMS
        pod.host_network = host_network
        pod.overhead = {k: quantities[v] for k, v in overhead.items()} if overhead else {}
        pod.pod_requests = None if requests is None else {k: quantities[v] for k, v in requests.items()}
        pod.pod_limits = None if limits is None else {k: quantities[v] for k, v in limits.items()}
        pod.node_name = node_name
        pod.scheduler_name = scheduler_name
        pod.priority = priority
        pod.priority_class_name = priority_class_name
        pod.preemption_policy = preemption_policy
        pod.node_selector = node_selector or {}
        pod.tolerations = [toleration(tuple(t)) for t in tolerations] if tolerations else NO_ITEMS
        if shapes is None:
            pod.affinity = None
            pod.topology_spread_constraints = NO_ITEMS
        else:
            known = shapes_seen.get(shapes)
            if known is None:
                known = shapes_seen[shapes] = pickle.loads(shapes)  # the cache's own entry, its digest checked
            pod.affinity, spread = known
            pod.topology_spread_constraints = list(spread) if spread else NO_ITEMS
        pod.scheduling_gates = gates or NO_ITEMS
        pod.volumes = volumes or NO_ITEMS
        pod.resource_claims = claims or NO_ITEMS
        pod.phase = phase
        pod.nominated_node_name = nominated
        pod.container_statuses = statuses or NO_ITEMS
        pod.init_container_statuses = init_statuses or NO_ITEMS
        pod.status_resources = status_resources
        pod.status_allocated = status_allocated
        pod.resize_infeasible = resize_infeasible
        pod.queued_at_start = queued
        return pod

    # -- convenience -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def uid(self) -> str:
        return self.meta.uid

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    @property
    def key(self) -> str:
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def effective_priority(self) -> int:
        """``corev1helpers.PodPriority``: nil priority counts as 0."""
        return self.priority or 0

    def __repr__(self) -> str:
        return f"Pod({self.key})"


def meta_state(meta: ObjectMeta) -> tuple[Any, ...]:
    """An object's metadata as plain values (``Pod.state``; empty mappings and lists as None)."""
    return (meta.name, meta.namespace, meta.uid, meta.labels or None, meta.annotations or None,
            meta.creation_timestamp, meta.owner_references or None, meta.deletion_timestamp, meta.resource_version)


def meta_of(state: tuple[Any, ...]) -> ObjectMeta:
    """The metadata ``meta_state`` gave."""
    name, namespace, uid, labels, annotations, created, owners, deleted, version = state
    return ObjectMeta(name, namespace, uid, labels or {}, annotations or {}, created, owners or NO_ITEMS, deleted, version)


def _resources_state(resources: ResourceList, quantities: dict[int, tuple[int, Fraction]]) -> dict[str, int] | None:
    """A resource list as indexes into ``quantities`` (by the quantity's ``id``: parsing shares one object per
    text, and a Fraction's hash is slow); None when empty."""
    if not resources:
        return None
    out = {}
    for name, q in resources.items():
        known = quantities.get(id(q))
        if known is None:
            known = quantities[id(q)] = (len(quantities), q)
        out[name] = known[0]
    return out


def _container_state(c: Container, quantities: dict[int, tuple[int, Fraction]]) -> tuple[Any, ...]:
    return (
        c.name,
        c.image,
        _resources_state(c.requests, quantities),
        _resources_state(c.limits, quantities),
        [(p.container_port, p.host_port, p.host_ip, p.protocol) for p in c.ports] or None,
        c.restart_policy,
    )


def _container_of(state: tuple[Any, ...], quantities: list[Fraction]) -> Container:
    name, image, requests, limits, ports, restart_policy = state
    return Container(
        name,
        image,
        {k: quantities[v] for k, v in requests.items()} if requests else {},
        {k: quantities[v] for k, v in limits.items()} if limits else NO_ENTRIES,
        [ContainerPort(*p) for p in ports] if ports else NO_ITEMS,
        restart_policy,
    )


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True, slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


class Node:
    __slots__ = (
        "allocatable",
        "capacity",
        "conditions",
        "images",
        "meta",
        "raw",
        "taints",
        "unschedulable",
    )

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.meta = parse_meta(raw, namespaced=False)
        self.meta.namespace = ""
        self._read(raw)

    @classmethod
    def from_state(cls, raw: dict[str, Any], meta: ObjectMeta) -> Node:
        """The node of ``raw`` whose metadata was read before (``meta``: the snapshot cache's, ``meta_of``)."""
        node = cls.__new__(cls)
        node.raw = raw
        node.meta = meta
        node._read(raw)
        return node

    def _read(self, raw: dict[str, Any]) -> None:
        """Everything but the metadata."""
        spec = _mapping(raw.get("spec"), "spec")
        status = _mapping(raw.get("status"), "status")
        self.taints = parse_taints(spec.get("taints"), "spec.taints")
        self.unschedulable = bool(spec.get("unschedulable"))
        self.capacity = parse_resource_list(status.get("capacity"), "status.capacity")
        if status.get("allocatable") is None:
            self.allocatable = defaulting.node_allocatable(self.capacity)
        else:
            self.allocatable = parse_resource_list(status.get("allocatable"), "status.allocatable")
        self.images = [
            ContainerImage(tuple(str(n) for n in _list(_mapping(im, "status.images").get("names"), "status.images.names")),
                           _int(_mapping(im, "status.images").get("sizeBytes"), "status.images.sizeBytes"))
            for im in _list(status.get("images"), "status.images")
        ]
        self.conditions = [c for c in _list(status.get("conditions"), "status.conditions") if isinstance(c, dict)]

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    def __repr__(self) -> str:
        return f"Node({self.name})"


# --------------------------------------------------------------------------- everything else


class KubeObject:
    """Any other kind the plugins read (PVs, PVCs, StorageClasses, CSINodes, Services...).

    The plugins that need these kinds read the fields they want from ``raw``.
    """

    __slots__ = ("api_version", "kind", "meta", "raw")

    def __init__(self, raw: dict[str, Any], kind: str, namespaced: bool) -> None:
        self.raw = raw
        self.kind = kind
        self.api_version = str(raw.get("apiVersion") or "")
        self.meta = parse_meta(raw, namespaced)
        if not namespaced:
            self.meta.namespace = ""

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    @property
    def key(self) -> str:
        return self.meta.key

    @property
    def spec(self) -> dict[str, Any]:
        s = self.raw.get("spec")
        return s if isinstance(s, dict) else {}

    @property
    def status(self) -> dict[str, Any]:
        s = self.raw.get("status")
        return s if isinstance(s, dict) else {}

    def __repr__(self) -> str:
        return f"{self.kind}({self.key})"
