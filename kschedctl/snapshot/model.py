"""The in-memory cluster model: the Kubernetes objects kube-scheduler reads.

Objects are parsed once, when a snapshot is loaded, into small slotted classes
with the fields the plugins need; the raw dictionary stays on ``.raw`` for
renderers and for the rarely used fields. Parsing applies the defaulting the API
server would have applied before the scheduler saw the object (see
``kschedctl.snapshot.defaults``), so plugins never re-derive defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kschedctl.errors import InputError
from kschedctl.snapshot.quantity import QuantityError, parse_quantity
from kschedctl.snapshot.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    Selector,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)

ResourceList = dict[str, Fraction]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


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


def _str_map(raw: Any, where: str) -> dict[str, str]:
    m = _mapping(raw, where)
    return {str(k): "" if v is None else str(v) for k, v in m.items()}


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
    ns = str(md.get("namespace") or ("default" if namespaced else ""))
    uid = str(md.get("uid") or (f"{ns}/{name}" if namespaced else str(name)))
    labels = md.get("labels")
    annotations = md.get("annotations")
    owners = md.get("ownerReferences")
    return ObjectMeta(
        name=str(name),
        namespace=ns,
        uid=uid,
        labels={} if labels is None else _str_map(labels, "metadata.labels"),
        annotations={} if annotations is None else _str_map(annotations, "metadata.annotations"),
        creation_timestamp=str(md.get("creationTimestamp") or ""),
        owner_references=[] if owners is None else [
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
            Toleration(
                str(t.get("key") or ""),
                str(t.get("operator") or "Equal"),
                str(t.get("value") or ""),
                str(t.get("effect") or ""),
                None if secs is None else _int(secs, f"{where}[{i}].tolerationSeconds"),
            )
        )
    return out


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


def parse_affinity(raw: Any, where: str = "spec.affinity") -> Affinity | None:
    if raw is None:
        return None
    raw = _mapping(raw, where)
    aff = Affinity()
    na = raw.get("nodeAffinity")
    if na is not None:
        na = _mapping(na, f"{where}.nodeAffinity")
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is not None:
            aff.node_required = parse_node_selector(req, f"{where}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        prefs = []
        path = f"{where}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        for i, p in enumerate(_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), path)):
            p = _mapping(p, f"{path}[{i}]")
            prefs.append(
                PreferredSchedulingTerm(
                    _int(p.get("weight"), f"{path}[{i}].weight"),
                    parse_node_selector_term(p.get("preference"), f"{path}[{i}].preference"),
                )
            )
        aff.node_preferred = tuple(prefs)
    for key, attr in (("podAffinity", "pod_affinity"), ("podAntiAffinity", "pod_anti_affinity")):
        pa = raw.get(key)
        if pa is None:
            continue
        pa = _mapping(pa, f"{where}.{key}")
        setattr(aff, f"has_{attr}", True)
        rpath = f"{where}.{key}.requiredDuringSchedulingIgnoredDuringExecution"
        setattr(
            aff,
            f"{attr}_required",
            tuple(
                _parse_pod_affinity_term(t, f"{rpath}[{i}]")
                for i, t in enumerate(_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rpath))
            ),
        )
        setattr(
            aff,
            f"{attr}_preferred",
            _parse_weighted_terms(
                pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
                f"{where}.{key}.preferredDuringSchedulingIgnoredDuringExecution",
            ),
        )
    return aff


def _parse_container(raw: Any, where: str, host_network: bool) -> Container:
    if type(raw) is not dict:
        raw = _mapping(raw, where)
    res = raw.get("resources")
    limits: ResourceList = {}
    requests: ResourceList = {}
    if res is not None:
        if type(res) is not dict:
            res = _mapping(res, f"{where}.resources")
        if res.get("limits") is not None:
            limits = parse_resource_list(res.get("limits"), f"{where}.resources.limits")
        if res.get("requests") is not None:
            requests = parse_resource_list(res.get("requests"), f"{where}.resources.requests")
        # API-server defaulting: requests default to limits, resource by resource.
        for k, v in limits.items():
            requests.setdefault(k, v)
    ports = []
    raw_ports = raw.get("ports")
    for i, p in enumerate(() if raw_ports is None else _list(raw_ports, f"{where}.ports")):
        p = _mapping(p, f"{where}.ports[{i}]")
        cport = _int(p.get("containerPort"), f"{where}.ports[{i}].containerPort")
        hport = _int(p.get("hostPort"), f"{where}.ports[{i}].hostPort")
        if host_network and hport == 0:
            hport = cport  # defaultHostNetworkPorts
        ports.append(ContainerPort(cport, hport, str(p.get("hostIP") or ""), str(p.get("protocol") or "TCP")))
    rp = raw.get("restartPolicy")
    return Container(
        name=str(raw.get("name") or ""),
        image=str(raw.get("image") or ""),
        requests=requests,
        limits=limits,
        ports=ports,
        restart_policy=None if rp is None else str(rp),
    )


class Pod:
    """A pod as the scheduler sees it (after API-server defaulting)."""

    __slots__ = (
        "_info",
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
        "raw",
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

    def __init__(self, raw: dict[str, Any]) -> None:
        # Absent fields are tested inline (see parse_meta): the same values as the helpers give.
        self.raw = raw
        self.meta = parse_meta(raw, namespaced=True)
        spec = raw.get("spec")
        if type(spec) is not dict:
            spec = _mapping(spec, "spec")
        status = raw.get("status")
        if type(status) is not dict:
            status = _mapping(status, "status")
        get = spec.get
        host_network = self.host_network = bool(get("hostNetwork"))
        self.containers = [
            _parse_container(c, f"spec.containers[{i}]", host_network)
            for i, c in enumerate(_list(get("containers"), "spec.containers"))
        ]
        inits = get("initContainers")
        self.init_containers = [] if inits is None else [
            _parse_container(c, f"spec.initContainers[{i}]", host_network)
            for i, c in enumerate(_list(inits, "spec.initContainers"))
        ]
        overhead = get("overhead")
        self.overhead = {} if overhead is None else parse_resource_list(overhead, "spec.overhead")
        pres = get("resources")
        self.pod_requests: ResourceList | None = None
        self.pod_limits: ResourceList | None = None
        if pres is not None:
            pres = _mapping(pres, "spec.resources")
            if "requests" in pres:
                self.pod_requests = parse_resource_list(pres.get("requests"), "spec.resources.requests")
            if "limits" in pres:
                self.pod_limits = parse_resource_list(pres.get("limits"), "spec.resources.limits")
        self.node_name = str(get("nodeName") or "")
        self.scheduler_name = str(get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        pr = get("priority")
        self.priority: int | None = None if pr is None else _int(pr, "spec.priority")
        self.priority_class_name = str(get("priorityClassName") or "")
        self.preemption_policy = str(get("preemptionPolicy") or "")
        selector = get("nodeSelector")
        self.node_selector = {} if selector is None else _str_map(selector, "spec.nodeSelector")
        affinity = get("affinity")
        self.affinity = None if affinity is None else parse_affinity(affinity)
        tolerations = get("tolerations")
        self.tolerations = [] if tolerations is None else parse_tolerations(tolerations, "spec.tolerations")
        tscs = []
        raw_tscs = get("topologySpreadConstraints")
        for i, c in enumerate(() if raw_tscs is None else _list(raw_tscs, "spec.topologySpreadConstraints")):
            w = f"spec.topologySpreadConstraints[{i}]"
            c = _mapping(c, w)
            md = c.get("minDomains")
            tscs.append(
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
        self.topology_spread_constraints = tscs
        volumes = get("volumes")
        self.volumes: list[dict[str, Any]] = [] if volumes is None else [
            v for v in _list(volumes, "spec.volumes") if isinstance(v, dict)
        ]
        gates = get("schedulingGates")
        self.scheduling_gates = [] if gates is None else [
            str(_mapping(g, "spec.schedulingGates").get("name", "")) for g in _list(gates, "spec.schedulingGates")
        ]
        claims = get("resourceClaims")
        self.resource_claims: list[dict[str, Any]] = [] if claims is None else [
            c for c in _list(claims, "spec.resourceClaims") if isinstance(c, dict)
        ]
        sget = status.get
        self.phase = str(sget("phase") or "")
        self.nominated_node_name = str(sget("nominatedNodeName") or "")
        statuses = sget("containerStatuses")
        self.container_statuses = [] if statuses is None else [
            s for s in _list(statuses, "status.containerStatuses") if isinstance(s, dict)
        ]
        statuses = sget("initContainerStatuses")
        self.init_container_statuses = [] if statuses is None else [
            s for s in _list(statuses, "status.initContainerStatuses") if isinstance(s, dict)
        ]
        sres = sget("resources")
        self.status_resources = None if sres is None else _mapping(sres, "status.resources")
        self.status_allocated = sget("allocatedResources")
        conditions = sget("conditions")
        self.resize_infeasible = conditions is not None and any(
            isinstance(c, dict) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
            for c in _list(conditions, "status.conditions")
        )
        self._info: Any = None
        #: Position in the scheduling queue's initial list when the pod was already pending as a run began
        #: (``kschedctl.whatif.simulate``); None: queued when created (PrioritySort reads creationTimestamp).
        self.queued_at_start: int | None = None
        if self.pod_limits:
            self._default_pod_level_requests()

    def _default_pod_level_requests(self) -> None:
        """API-server defaulting of ``spec.resources.requests`` (PodLevelResources, on in v1.35)."""
        if not self.pod_limits:
            return
        reqs = dict(self.pod_requests or {})
        from kschedctl.framework.resources import aggregate_container_requests

        aggregated = aggregate_container_requests(self, use_status=False)
        for k, v in aggregated.items():
            if k in ("cpu", "memory") and k not in reqs:
                reqs[k] = v
        for k, v in self.pod_limits.items():
            if k not in reqs and (k in ("cpu", "memory") or k.startswith("hugepages-")):
                reqs[k] = v
        if reqs:
            self.pod_requests = reqs

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

    @property
    def preempt_never(self) -> bool:
        return self.preemption_policy == "Never"

    def __repr__(self) -> str:
        return f"Pod({self.key})"


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
        spec = _mapping(raw.get("spec"), "spec")
        status = _mapping(raw.get("status"), "status")
        self.taints = parse_taints(spec.get("taints"), "spec.taints")
        self.unschedulable = bool(spec.get("unschedulable"))
        self.capacity = parse_resource_list(status.get("capacity"), "status.capacity")
        if status.get("allocatable") is None:
            self.allocatable = dict(self.capacity)  # API-server defaulting
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
