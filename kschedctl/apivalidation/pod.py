"""Pod spec validation: containers and their ports and resources, scheduling gates, volumes, resource
claims and the remaining scheduler-read fields (``core/validation/validation.go``, ``ValidatePodSpec``).

Common containers are decided by a quick check (``_clean_containers``) that gives the same verdict as
the full walk, which runs only when the quick check cannot decide.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from kschedctl.apivalidation.common import (
    int32_field,
    list_field,
    mapping_field,
    name_field_validator,
    text_field,
    validate_bool,
    validate_labels,
    validate_string,
)
from kschedctl.apivalidation.fielderrors import Errors, duplicate, forbidden, invalid, not_supported, required
from kschedctl.apivalidation.podgroup import validate_scheduling_group
from kschedctl.apivalidation.resources import (
    STANDARD_CONTAINER_RESOURCES,
    cached_quantity_verdict,
    validate_resource_list,
    validate_resource_requirements,
)
from kschedctl.apivalidation.scheduling import validate_affinity, validate_spread, validate_tolerations
from kschedctl.kube.names import (
    DNS1123_LABEL_RE,
    name_is_dns_label,
    name_is_dns_subdomain,
    qualified_name_errors,
)

# -- containers ------------------------------------------------------------------------------------

_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _port_errors(value: Any, path: str, errs: Errors) -> None:
    v = int32_field(value, path, "ContainerPort", errs)
    if v is not None and not 1 <= v <= 65535:
        errs.append(invalid(path, v, "must be between 1 and 65535, inclusive"))


def _validate_ports(ports: Any, path: str, host_network: bool, errs: Errors) -> None:
    for i, p in enumerate(list_field(ports, path, errs)):
        pp = f"{path}[{i}]"
        if mapping_field(p, pp, errs) is None:
            continue
        cport = p.get("containerPort")
        if not cport:
            errs.append(required(f"{pp}.containerPort"))
        else:
            _port_errors(cport, f"{pp}.containerPort", errs)
        hport = p.get("hostPort")
        if hport:
            _port_errors(hport, f"{pp}.hostPort", errs)
            if host_network and cport and hport != cport:
                errs.append(invalid(f"{pp}.hostPort", hport, "must match `containerPort` when `hostNetwork` is true"))
        text_field(p.get("hostIP"), f"{pp}.hostIP", errs)
        proto = p.get("protocol")
        if proto is not None and proto not in _PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, _PROTOCOLS))


def _validate_containers(containers: Any, path: str, spec: dict[str, Any], names: set[str], errs: Errors) -> None:
    init = path.endswith("initContainers")
    for i, c in enumerate(list_field(containers, path, errs)):
        cp = f"{path}[{i}]"
        if mapping_field(c, cp, errs) is None:
            continue
        name = c.get("name")
        if not name:
            errs.append(required(f"{cp}.name"))
        elif text_field(name, f"{cp}.name", errs):
            if not (len(name) <= 63 and DNS1123_LABEL_RE.fullmatch(name)):
                errs.extend(invalid(f"{cp}.name", name, m) for m in name_is_dns_label(name))
            if name in names:
                errs.append(duplicate(f"{cp}.name", name))
            names.add(name)
        if not text_field(c.get("image"), f"{cp}.image", errs):
            errs.append(required(f"{cp}.image"))
        if "resources" in c:
            validate_resource_requirements(c["resources"], f"{cp}.resources", errs)
        if "ports" in c:
            _validate_ports(c["ports"], f"{cp}.ports", spec.get("hostNetwork") is True, errs)
        if "restartPolicy" in c:
            rp = c["restartPolicy"]
            if init and rp != "Always":
                errs.append(not_supported(f"{cp}.restartPolicy", rp, ["Always"]))
            elif not init and rp is not None:
                errs.append(forbidden(f"{cp}.restartPolicy", "may not be set for non-init containers"))
        if init:  # init containers run one at a time: their host ports may repeat from one to the next
            _host_port_conflicts([c], path, errs, first=i)
    if not init and isinstance(containers, list):
        _host_port_conflicts(containers, path, errs)


def _host_port_conflicts(containers: list[Any], path: str, errs: Errors, first: int = 0) -> None:
    """``checkHostPortConflicts``: a protocol, host IP and host port used twice (``first``: the index
    of ``containers[0]`` in the pod's list)."""
    seen: set[str] = set()
    for i, c in enumerate(containers, start=first):
        ports = c.get("ports") if isinstance(c, dict) else None
        for j, p in enumerate(ports if isinstance(ports, list) else []):
            port = p.get("hostPort") if isinstance(p, dict) else None
            if not isinstance(port, int) or isinstance(port, bool) or port == 0:
                continue
            key = f"{p.get('protocol') or 'TCP'}/{p.get('hostIP') or ''}/{port}"  # protocol defaulted as on create
            if key in seen:
                errs.append(duplicate(f"{path}[{i}].ports[{j}].hostPort", key))
            seen.add(key)


# -- pod spec ----------------------------------------------------------------------------------------


def _validate_gates(gates: Any, path: str, errs: Errors) -> None:
    seen: set[str] = set()
    for i, g in enumerate(list_field(gates, path, errs)):
        if mapping_field(g, f"{path}[{i}]", errs) is None:
            continue
        name = text_field(g.get("name"), f"{path}[{i}].name", errs)
        if not name:
            errs.append(required(f"{path}[{i}]"))
        else:
            errs.extend(invalid(f"{path}[{i}]", name, m) for m in qualified_name_errors(name))
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)


def _validate_volumes(volumes: Any, path: str, errs: Errors) -> None:
    seen: set[str] = set()
    for i, v in enumerate(list_field(volumes, path, errs)):
        vp = f"{path}[{i}]"
        if mapping_field(v, vp, errs) is None:
            continue
        name = v.get("name")
        if not name:
            errs.append(required(f"{vp}.name"))
        elif text_field(name, f"{vp}.name", errs):
            errs.extend(invalid(f"{vp}.name", name, m) for m in name_is_dns_label(name))
            if name in seen:
                errs.append(duplicate(f"{vp}.name", name))
            seen.add(name)
        pvc = mapping_field(v.get("persistentVolumeClaim"), f"{vp}.persistentVolumeClaim", errs)
        if pvc is not None:
            if not pvc.get("claimName"):
                errs.append(required(f"{vp}.persistentVolumeClaim.claimName"))
            else:
                text_field(pvc["claimName"], f"{vp}.persistentVolumeClaim.claimName", errs)


def _validate_resource_claims(claims: Any, path: str, errs: Errors) -> None:
    for i, c in enumerate(list_field(claims, path, errs)):
        cp = f"{path}[{i}]"
        if mapping_field(c, cp, errs) is None:
            continue
        name = text_field(c.get("name"), f"{cp}.name", errs)
        if not name:
            errs.append(required(f"{cp}.name"))
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            text_field(c.get(key), f"{cp}.{key}", errs)


def _validate_preemption_policy(policy: Any, path: str, errs: Errors) -> None:
    if policy == "":
        errs.append(required(path))
    elif policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported(path, policy, ["PreemptLowerPriority", "Never"]))


def _validate_pod_resources(res: Any, path: str, errs: Errors) -> None:
    if res is not None:
        validate_resource_requirements(res, path, errs, pod_level=True)


#: The pod spec fields validated, each with its check (fields absent from a spec cost nothing).
_POD_SPEC_FIELDS: dict[str, Callable[[Any, str, Errors], None]] = {
    "resources": _validate_pod_resources,
    "overhead": lambda v, p, e: validate_resource_list(v, p, e),
    "nodeSelector": lambda v, p, e: validate_labels(v, p, e),
    "affinity": lambda v, p, e: validate_affinity(v, p, e),
    "schedulingGates": lambda v, p, e: _validate_gates(v, p, e),
    "topologySpreadConstraints": lambda v, p, e: validate_spread(v, p, e),
    "tolerations": lambda v, p, e: validate_tolerations(v, p, e),
    "volumes": lambda v, p, e: _validate_volumes(v, p, e),
    "resourceClaims": lambda v, p, e: _validate_resource_claims(v, p, e),
    "nodeName": name_field_validator(name_is_dns_subdomain),
    "priorityClassName": name_field_validator(name_is_dns_subdomain),
    "schedulerName": validate_string,
    "priority": lambda v, p, e: _int32(v, p, "PodSpec", e),
    "preemptionPolicy": _validate_preemption_policy,
    "hostNetwork": validate_bool,
    "schedulingGroup": lambda v, p, e: validate_scheduling_group(v, p, e),
}


def _int32(v: Any, path: str, struct: str, errs: Errors) -> None:
    int32_field(v, path, struct, errs)


def _clean_requests(raw: Any) -> dict[str, Fraction | None] | None:
    """A ``requests``/``limits`` map of cpu, memory or ephemeral-storage amounts that are all valid
    quantities, with their values; None when it is anything else (the full check then looks)."""
    if type(raw) is not dict:
        return None
    out: dict[str, Fraction | None] = {}
    for name, value in raw.items():
        if name not in STANDARD_CONTAINER_RESOURCES:
            return None
        verdict = cached_quantity_verdict(name, value)
        if verdict is None or verdict[0] is None or verdict[1]:
            return None
        out[name] = verdict[0]
    return out


def _clean_resources(res: Any) -> bool:
    """``validate_resource_requirements`` would find nothing: standard resources only, valid amounts,
    no request above its limit. False when unsure."""
    if type(res) is not dict:
        return False
    limits = res.get("limits")
    lim = _clean_requests(limits) if limits is not None else {}
    requests = res.get("requests")
    req = _clean_requests(requests) if requests is not None else {}
    if lim is None or req is None:
        return False
    for name, q in req.items():
        limit = lim.get(name)
        if limit is not None and q is not None and q > limit:
            return False
    return True


#: Container fields ``_validate_containers`` reads that ``_clean_containers`` leaves to it.
_CONTAINER_FIELDS_CHECKED_IN_FULL = frozenset({"ports", "restartPolicy"})


def _clean_containers(containers: Any, names: set[str]) -> bool:
    """The common case of ``_validate_containers``, decided quickly: a non-empty list of mappings, each
    with a name (a DNS label, not taken), an image, clean resources, and none of the
    fields only the full check reads. True (and the names added to ``names``) when the full check
    would report nothing; False when unsure, and the full check runs."""
    if type(containers) is not list or not containers:
        return False
    seen: set[str] = set()
    for c in containers:
        if type(c) is not dict:
            return False
        name = c.get("name")
        if type(name) is not str or not name or name in seen or name in names:
            return False
        if not (len(name) <= 63 and DNS1123_LABEL_RE.fullmatch(name)):
            return False
        image = c.get("image")
        if type(image) is not str or not image:
            return False
        if "resources" in c and not _clean_resources(c["resources"]):
            return False
        if not _CONTAINER_FIELDS_CHECKED_IN_FULL.isdisjoint(c):
            return False
        seen.add(name)
    names.update(seen)
    return True


def validate_pod_spec(spec: Any, path: str, errs: Errors) -> None:
    """``ValidatePodSpec``, for the fields the scheduler reads and the ones hand-written manifests miss."""
    if spec is None:
        spec = {}
    elif not isinstance(spec, dict):
        return  # the model says it must be a mapping
    containers = spec.get("containers")
    names: set[str] = set()
    if not _clean_containers(containers, names):  # the usual pod is decided quickly; any other in full
        if not containers:
            errs.append(required(f"{path}.containers"))
        _validate_containers(containers, f"{path}.containers", spec, names, errs)
    if "initContainers" in spec:
        _validate_containers(spec["initContainers"], f"{path}.initContainers", spec, names, errs)
    for key, value in spec.items():
        check = _POD_SPEC_FIELDS.get(key)
        if check is not None:
            check(value, f"{path}.{key}", errs)
