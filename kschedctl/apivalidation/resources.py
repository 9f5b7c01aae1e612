"""Resource names and quantities: container and pod-level requests and limits, resource lists of
nodes and overhead, and the amounts too large for kube-scheduler's int64 arithmetic
(``core/validation/validation.go``, ``ValidateResourceRequirements`` and friends).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from kschedctl.apivalidation.common import CACHE_LIMIT, mapping_field, remember
from kschedctl.apivalidation.fielderrors import Errors, invalid, not_supported, required
from kschedctl.kube.goformat import go_float
from kschedctl.kube.names import INT64_MAX, qualified_name_errors
from kschedctl.kube.quantity import QuantityError, parse_quantity

# -- resources ----------------------------------------------------------------------------------

#: ``IsIntegerResourceName``'s standard members.
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


#: ``IsStandardResourceName`` (the quota and compute names a name without a domain may have).
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "storage",
        "requests.storage",
    }
    | _INTEGER_RESOURCES
)


_valid_container_resources: set[str] = set()


_INT64_MAX_FRACTION = Fraction(INT64_MAX)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _container_resource_name_errors(name: str) -> list[str]:
    """``validateContainerResourceName``."""
    if name in _valid_container_resources:
        return []
    msgs = qualified_name_errors(name)
    if not msgs:
        if "/" not in name:
            if name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
                msgs.append("must be a standard resource type or fully qualified")
            if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
                msgs.append("must be a standard resource for containers")
        elif not is_native_resource(name) and not is_extended_resource_name(name):
            msgs.append("doesn't follow extended resource name standard")
    if not msgs:
        remember(_valid_container_resources, name)
    return msgs


def _quantity(raw: Any) -> Fraction | None:
    """The quantity's exact value, or None when it does not parse (the model reports that)."""
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


def _quantity_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else go_float(raw) if isinstance(raw, float) else str(raw)


#: The largest amount kube-scheduler computes with safely: it counts in int64 and its scores
#: multiply ``(allocatable - requested)`` by 100 (``MaxNodeScore``).
SCHEDULER_MAX_AMOUNT = INT64_MAX // 100


def overflow_detail(resource: str, q: Fraction) -> str | None:
    """Why kube-scheduler cannot count this quantity (its int64 arithmetic would overflow), or None.

    The API server accepts any non-negative quantity, but the scheduler reads cpu as
    ``MilliValue()`` and everything else as ``Value()``, both int64, and scores multiply them
    by 100: beyond that range Go computes garbage (``1e400`` cpu reads as -9223372036854775808m,
    a node with ``16Ei`` of memory scores 25 instead of 74), so no explanation of it would be
    faithful.
    """
    amount = q * 1000 if resource == "cpu" else q
    if amount <= SCHEDULER_MAX_AMOUNT:
        return None
    unit = "millicores" if resource == "cpu" else "units"
    return (
        f"the API server accepts it, but kube-scheduler counts {resource} in int64 {unit} and its scores multiply "
        f"by 100, which overflows above {SCHEDULER_MAX_AMOUNT}{'m' if resource == 'cpu' else ''}: "
        "kschedctl cannot model what it would do"
    )


#: (resource, raw quantity) -> (its value or None when it does not parse, problems without a path).
_quantity_verdicts: dict[tuple[str, Any], tuple[Fraction | None, tuple[str, ...]]] = {}


def _quantity_verdict(resource: str, raw: Any) -> tuple[Fraction | None, tuple[str, ...]]:
    """``ValidateResourceQuantityValue`` (non-negative; integer for integer resources) + the int64 range."""
    q = _quantity(raw)
    if q is None:
        return None, ()
    problems: list[str] = []
    if q < 0:
        problems.append("must be greater than or equal to 0")
    else:
        integer = resource in _INTEGER_RESOURCES or is_extended_resource_name(resource)
        if integer and q.denominator != 1 and math.ceil(q * 1000) % 1000:
            problems.append("must be an integer")
        detail = overflow_detail(resource, q)
        if detail is not None:
            problems.append(detail)
    return q, tuple(problems)


def cached_quantity_verdict(resource: str, raw: Any) -> tuple[Fraction | None, tuple[str, ...]] | None:
    try:
        verdict = _quantity_verdicts.get((resource, raw))
    except TypeError:  # an unhashable value: not a quantity at all
        return None
    if verdict is None:
        verdict = _quantity_verdict(resource, raw)
        if len(_quantity_verdicts) < CACHE_LIMIT:
            _quantity_verdicts[(resource, raw)] = verdict
    return verdict


def validate_quantity_value(resource: str, raw: Any, path: str, errs: Errors) -> Fraction | None:
    """The quantity's value (None when it does not parse: the model reports that); its problems go to ``errs``."""
    verdict = cached_quantity_verdict(resource, raw)
    if verdict is None:
        return None
    q, problems = verdict
    for m in problems:
        errs.append(invalid(path, _quantity_text(raw), m))
    return q


def _resource_map(
    raw: Any, path: str, what: str, errs: Errors, pod_level: bool
) -> dict[str, Fraction | None]:
    """One ``limits``/``requests`` map: names and values checked, paths built only for a problem."""
    out: dict[str, Fraction | None] = {}
    raw = mapping_field(raw, f"{path}.{what}", errs)
    if raw is None:
        return out
    for name, value in raw.items():
        name = str(name)
        verdict = cached_quantity_verdict(name, value)
        q, problems = verdict if verdict is not None else (None, ())
        out[name] = q
        if problems or pod_level or name not in _valid_container_resources:
            p = f"{path}.{what}[{name}]"
            _resource_name(name, p, errs, pod_level)
            errs.extend(invalid(p, _quantity_text(value), m) for m in problems)
    return out


def validate_resource_requirements(res: Any, path: str, errs: Errors, *, pod_level: bool = False) -> None:
    """``validateResourceRequirements`` for a container's (or the pod's) ``resources``."""
    res = mapping_field(res, path, errs)
    if res is None:
        return
    limits = res.get("limits")
    requests = res.get("requests")
    lim = _resource_map(limits, path, "limits", errs, pod_level) if limits is not None else {}
    if requests is None:
        return
    for name, q in _resource_map(requests, path, "requests", errs, pod_level).items():
        if name in lim:
            _request_within_limit(name, q, lim[name], requests[name], limits, path, errs)
        elif not is_native_resource(name) or is_hugepages(name):
            errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))


def _request_within_limit(
    name: str, q: Fraction | None, limit: Fraction | None, raw: Any, limits: Any, path: str, errs: Errors
) -> None:
    if q is None or limit is None or q == limit:
        return
    shown = _quantity_text(limits[name])
    if not is_native_resource(name) or is_hugepages(name):
        errs.append(invalid(f"{path}.requests", _quantity_text(raw), f"must be equal to {name} limit of {shown}"))
    elif q > limit:
        errs.append(invalid(f"{path}.requests", _quantity_text(raw), f"must be less than or equal to {name} limit of {shown}"))


_POD_LEVEL_RESOURCES = ("cpu", "memory")


def _resource_name(name: str, path: str, errs: Errors, pod_level: bool) -> None:
    if pod_level:
        msgs = qualified_name_errors(name)
        if msgs:
            errs.extend(invalid(path, name, m) for m in msgs)
        elif name not in _POD_LEVEL_RESOURCES and not is_hugepages(name):
            errs.append(not_supported(path, name, ["cpu", "hugepages-", "memory"]))
        return
    errs.extend(invalid(path, name, m) for m in _container_resource_name_errors(name))


def validate_resource_list(raw: Any, path: str, errs: Errors) -> None:
    """A node's ``capacity``/``allocatable`` or a pod's ``overhead`` (``ValidateNodeResources``)."""
    raw = mapping_field(raw, path, errs)
    if raw is None:
        return
    for name, q in raw.items():
        validate_quantity_value(str(name), q, f"{path}.{name}", errs)
