"""The resource.k8s.io/v1 objects DynamicResources reads, parsed from their raw dictionaries.

DeviceClass, ResourceSlice, ResourceClaim and DeviceTaintRule reach the plugin as generic
``KubeObject``s. This module turns the fields the scheduler uses into small
typed records once per scheduling cycle, applying the API server's defaulting
(``allocationMode: ExactCount`` and ``count: 1``), so the allocator works with
plain attributes instead of nested dictionaries.

Upstream model: ``k8s.io/api resource/v1/types.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.cel import CelError, Semver, device_value
from kschedctl.kube.quantity import QuantityError, parse_quantity
from kschedctl.kube.selectors import NodeSelector, aggregate_error_message, parse_node_selector
from kschedctl.snapshot.model import KubeObject

EXACT_COUNT = "ExactCount"
ALL = "All"

#: DeviceID: (driver, pool, device).
DeviceID = tuple[str, str, str]


def device_id_str(d: DeviceID) -> str:
    return f"{d[0]}/{d[1]}/{d[2]}"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


# --------------------------------------------------------------------------- DeviceClass


@dataclass(slots=True)
class DeviceClass:
    name: str
    #: CEL expressions of spec.selectors (None for a selector without ``cel``).
    selectors: list[str | None]
    raw: KubeObject


def parse_device_class(obj: KubeObject) -> DeviceClass:
    sels: list[str | None] = []
    for s in _list(obj.spec.get("selectors")):
        cel = _dict(s).get("cel")
        sels.append(str(_dict(cel).get("expression", "")) if isinstance(cel, dict) else None)
    return DeviceClass(obj.name, sels, obj)


# --------------------------------------------------------------------------- device taints

#: The taint effects that keep a device from being allocated; others (``None``, unknown ones) are ignored.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str
    operator: str  # "Equal" (also when empty) or "Exists"
    value: str
    effect: str  # empty: every effect

    def tolerates(self, taint: DeviceTaint) -> bool:
        """``resourceclaim.ToleratesTaint``: the node-taint rule, applied to a device taint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def parse_taint(raw: Any) -> DeviceTaint:
    t = _dict(raw)
    return DeviceTaint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))


def _tolerations(raw: Any) -> list[DeviceToleration]:
    out = []
    for t in _list(raw):
        t = _dict(t)
        out.append(DeviceToleration(str(t.get("key") or ""), str(t.get("operator") or ""),
                                    str(t.get("value") or ""), str(t.get("effect") or "")))
    return out


def taint_blocks(taints: list[DeviceTaint], tolerations: list[DeviceToleration]) -> bool:
    """Whether one of a device's taints with a blocking effect is tolerated by none of the request's."""
    return any(
        t.effect in BLOCKING_EFFECTS and not any(tol.tolerates(t) for tol in tolerations) for t in taints
    )


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule: its taint, for the devices its selector matches (an unset field matches all)."""

    name: str
    driver: str | None
    pool: str | None
    device: str | None
    taint: DeviceTaint

    def applies_to_slice(self, driver: str, pool: str) -> bool:
        return (self.driver is None or self.driver == driver) and (self.pool is None or self.pool == pool)


def _optional(v: Any) -> str | None:
    return None if v is None else str(v)


def parse_device_taint_rule(obj: KubeObject) -> DeviceTaintRule:
    sel = obj.spec.get("deviceSelector")
    sel = sel if isinstance(sel, dict) else {}
    return DeviceTaintRule(obj.name, _optional(sel.get("driver")), _optional(sel.get("pool")),
                           _optional(sel.get("device")), parse_taint(obj.spec.get("taint")))


# --------------------------------------------------------------------------- ResourceSlice


class Device:
    """One device of a slice; attributes and capacity are parsed on first use."""

    __slots__ = (
        "_attributes", "_capacity", "_cel", "binding_conditions", "consumes_counters", "name", "raw", "taints", "where"
    )

    def __init__(self, raw: dict[str, Any], where: str) -> None:
        self.raw = raw
        self.where = where
        self.name = str(raw.get("name") or "")
        #: The device's own taints, then those of the DeviceTaintRules that select it (when they count).
        self.taints = [parse_taint(t) for t in _list(raw.get("taints"))]
        self.consumes_counters = bool(_list(raw.get("consumesCounters")))
        self.binding_conditions = bool(_list(raw.get("bindingConditions")))
        self._attributes: dict[str, tuple[str, Any]] | None = None
        self._capacity: dict[str, Fraction] | None = None
        self._cel: dict[str, Any] | CelError | None = None

    @property
    def attributes(self) -> dict[str, tuple[str, Any]]:
        """Qualified attribute name -> (kind, value); kind is int, bool, string, version or "" (none set)."""
        a = self._attributes
        if a is None:
            a = {str(k): _attribute(v) for k, v in _dict(self.raw.get("attributes")).items()}
            self._attributes = a
        return a

    def _capacity_or_error(self) -> dict[str, Fraction]:
        try:
            return self.capacity
        except InputError as e:
            raise CelError(str(e)) from None

    @property
    def capacity(self) -> dict[str, Fraction]:
        c = self._capacity
        if c is None:
            c = {
                str(k): _capacity(v, f"{self.where}.capacity.{k}") for k, v in _dict(self.raw.get("capacity")).items()
            }
            self._capacity = c
        return c

    def cel_value(self, driver: str) -> dict[str, Any]:
        """The CEL ``device`` variable for this device (CelError when an attribute cannot be converted)."""
        v = self._cel
        if v is None:
            try:
                attrs: dict[str, Any] = {}
                for name, (kind, value) in self.attributes.items():
                    if kind == "version":
                        try:
                            value = Semver.parse(str(value))
                        except ValueError as e:
                            raise CelError(f"attribute {name}: parse semantic version: {e}") from None
                    elif kind == "":
                        raise CelError(f"attribute {name}: unsupported attribute value")
                    attrs[name] = value
                v = device_value(driver, attrs, self._capacity_or_error)
            except CelError as e:
                v = e
            self._cel = v
        if isinstance(v, CelError):
            raise v
        return v


@dataclass(slots=True)
class ResourceSlice:
    name: str
    index: int  # position in the cluster's listing
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: NodeSelector | None
    node_selector_raw: dict[str, Any] | None
    per_device_node_selection: bool  # the field is set (PartitionableDevices is off: such slices are ignored)
    shared_counters: bool
    devices: list[Device]


def _attribute(raw: Any) -> tuple[str, Any]:
    a = _dict(raw)
    if a.get("int") is not None:
        try:
            return "int", int(a["int"])
        except (TypeError, ValueError):
            return "", None
    if a.get("bool") is not None:
        return "bool", bool(a["bool"])
    if a.get("string") is not None:
        return "string", str(a["string"])
    if a.get("version") is not None:
        return "version", str(a["version"])
    return "", None


def _capacity(raw: Any, where: str) -> Fraction:
    v = _dict(raw).get("value")
    try:
        return parse_quantity(v if v is not None else 0)
    except QuantityError as e:
        raise InputError(str(e), field=where) from None


def parse_device(raw: Any, where: str) -> Device:
    return Device(_dict(raw), where)


def parse_resource_slice(obj: KubeObject, index: int) -> ResourceSlice:
    spec = obj.spec
    pool = _dict(spec.get("pool"))
    ns_raw = spec.get("nodeSelector")
    node_selector = None
    if isinstance(ns_raw, dict):
        node_selector = parse_node_selector(ns_raw, "spec.nodeSelector")
    return ResourceSlice(
        name=obj.name,
        index=index,
        driver=str(spec.get("driver") or ""),
        pool=str(pool.get("name") or ""),
        generation=int(pool.get("generation") or 0),
        slice_count=int(pool.get("resourceSliceCount") or 0),
        node_name=str(spec.get("nodeName") or ""),
        all_nodes=bool(spec.get("allNodes")),
        node_selector=node_selector,
        node_selector_raw=ns_raw if isinstance(ns_raw, dict) else None,
        per_device_node_selection=spec.get("perDeviceNodeSelection") is not None,
        shared_counters=bool(_list(spec.get("sharedCounters"))),
        devices=[parse_device(d, f"spec.devices[{i}]") for i, d in enumerate(_list(spec.get("devices")))],
    )


# --------------------------------------------------------------------------- ResourceClaim


@dataclass(slots=True)
class Request:
    """An ExactDeviceRequest or a DeviceSubRequest (same fields for the allocator)."""

    name: str
    device_class_name: str
    selectors: list[str | None]
    allocation_mode: str
    count: int
    admin_access: bool = False
    tolerations: list[DeviceToleration] = field(default_factory=list)


@dataclass(slots=True)
class DeviceRequest:
    name: str
    exactly: Request | None
    first_available: list[Request]


@dataclass(slots=True)
class Constraint:
    requests: list[str]
    match_attribute: str | None


@dataclass(slots=True)
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.device)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool, "device": self.device}
        if self.admin_access:
            d["adminAccess"] = True
        return d


@dataclass(slots=True)
class Allocation:
    """A claim's ``status.allocation`` (existing, or computed by the allocator)."""

    results: list[DeviceResult]
    node_selector: NodeSelector | None = None
    node_selector_raw: dict[str, Any] | None = None
    #: Why ``node_selector`` could not be parsed (PreFilter reports it as an error).
    node_selector_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"devices": {"results": [r.to_dict() for r in self.results]}}
        if self.node_selector_raw is not None:
            d["nodeSelector"] = self.node_selector_raw
        return d


@dataclass(slots=True)
class ResourceClaim:
    name: str
    namespace: str
    uid: str
    deleting: bool
    controller_uid: str | None
    requests: list[DeviceRequest]
    constraints: list[Constraint]
    allocation: Allocation | None
    reserved_for_uids: list[str]
    raw: KubeObject = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _selectors(raw: Any) -> list[str | None]:
    out: list[str | None] = []
    for s in _list(raw):
        cel = _dict(s).get("cel")
        out.append(str(_dict(cel).get("expression", "")) if isinstance(cel, dict) else None)
    return out


def _request(name: str, raw: dict[str, Any]) -> Request:
    mode = str(raw.get("allocationMode") or EXACT_COUNT)
    count = raw.get("count")
    if count is None:
        count = 1 if mode == EXACT_COUNT else 0
    return Request(
        name=name,
        device_class_name=str(raw.get("deviceClassName") or ""),
        selectors=_selectors(raw.get("selectors")),
        allocation_mode=mode,
        count=int(count),
        admin_access=bool(raw.get("adminAccess")),
        tolerations=_tolerations(raw.get("tolerations")),
    )


def parse_allocation(raw: Any) -> Allocation:
    a = _dict(raw)
    results = []
    for r in _list(_dict(a.get("devices")).get("results")):
        r = _dict(r)
        results.append(
            DeviceResult(
                request=str(r.get("request") or ""),
                driver=str(r.get("driver") or ""),
                pool=str(r.get("pool") or ""),
                device=str(r.get("device") or ""),
                admin_access=bool(r.get("adminAccess")),
            )
        )
    ns_raw = a.get("nodeSelector")
    if not isinstance(ns_raw, dict):
        return Allocation(results)
    try:
        ns = parse_node_selector(ns_raw, "status.allocation.nodeSelector")
    except InputError as e:
        return Allocation(results, None, ns_raw, str(e))
    # nodeaffinity.NewNodeSelector rejects a selector with an unparsable requirement
    errors = ns.error_messages()
    if errors:
        return Allocation(results, None, ns_raw, aggregate_error_message(errors))
    return Allocation(results, ns, ns_raw)


def parse_resource_claim(obj: KubeObject) -> ResourceClaim:
    spec_devices = _dict(obj.spec.get("devices"))
    requests = []
    for r in _list(spec_devices.get("requests")):
        r = _dict(r)
        name = str(r.get("name") or "")
        exactly = r.get("exactly")
        first = [_request(str(_dict(s).get("name") or ""), _dict(s)) for s in _list(r.get("firstAvailable"))]
        requests.append(DeviceRequest(name, _request(name, exactly) if isinstance(exactly, dict) else None, first))
    constraints = []
    for c in _list(spec_devices.get("constraints")):
        c = _dict(c)
        ma = c.get("matchAttribute")
        constraints.append(Constraint([str(x) for x in _list(c.get("requests"))], None if ma is None else str(ma)))
    status = obj.status
    alloc_raw = status.get("allocation")
    controller = obj.meta.controller_ref()
    return ResourceClaim(
        name=obj.name,
        namespace=obj.namespace,
        uid=obj.meta.uid,
        deleting=obj.meta.deletion_timestamp is not None,
        controller_uid=None if controller is None else str(controller.get("uid") or ""),
        requests=requests,
        constraints=constraints,
        allocation=parse_allocation(alloc_raw) if isinstance(alloc_raw, dict) else None,
        reserved_for_uids=[str(_dict(r).get("uid") or "") for r in _list(status.get("reservedFor"))],
        raw=obj,
    )
