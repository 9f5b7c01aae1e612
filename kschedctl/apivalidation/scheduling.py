"""The scheduling constraints of a pod spec: node selectors and node affinity, label selectors
and pod (anti-)affinity, tolerations and topology spread constraints
(``core/validation/validation.go`` and apimachinery's ``ValidateLabelSelector``).
"""

from __future__ import annotations

from typing import Any

from kschedctl.apivalidation.common import (
    int32_field,
    integer_field,
    list_field,
    mapping_field,
    namespace_name_errors,
    string_list_field,
    text_field,
    validate_label_name,
    validate_labels,
)
from kschedctl.apivalidation.fielderrors import Errors, duplicate, forbidden, invalid, not_supported, required
from kschedctl.kube.names import label_value_errors, name_is_dns_subdomain

# -- affinity ----------------------------------------------------------------------------------------

_NODE_SELECTOR_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


_LABEL_SELECTOR_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


def _values_of(rq: dict[str, Any], path: str, errs: Errors) -> list[str]:
    return string_list_field(rq.get("values"), f"{path}.values", errs)


def _set_based_values(op: Any, values: list[str], path: str, errs: Errors) -> bool:
    """In/NotIn need values, Exists/DoesNotExist take none; False for any other operator."""
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        return False
    return True


def _key_and_values(rq: dict[str, Any], values: list[str], path: str, errs: Errors, check_values: bool) -> None:
    """A requirement's key is a label name; its values label values unless ``check_values`` is off."""
    validate_label_name(text_field(rq.get("key"), f"{path}.key", errs), f"{path}.key", errs)
    if check_values:
        for j, v in enumerate(values):
            errs.extend(invalid(f"{path}.values[{j}]", v, m) for m in label_value_errors(v))


def _node_selector_requirement(rq: Any, path: str, allow_invalid_values: bool, errs: Errors) -> None:
    """``ValidateNodeSelectorRequirement``."""
    if mapping_field(rq, path, errs) is None:
        return
    op = rq.get("operator")
    values = _values_of(rq, path, errs)
    if not _set_based_values(op, values, path, errs):
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        else:
            errs.append(invalid(f"{path}.operator", "" if op is None else op, "not a valid selector operator"))
    _key_and_values(rq, values, path, errs, not allow_invalid_values)


def _node_field_requirement(rq: Any, path: str, errs: Errors) -> None:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one value."""
    if mapping_field(rq, path, errs) is None:
        return
    op = rq.get("operator")
    values = _values_of(rq, path, errs)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(invalid(f"{path}.operator", "" if op is None else op, "not a valid selector operator"))
    key = rq.get("key")
    if key != "metadata.name":
        errs.append(invalid(f"{path}.key", "" if key is None else key, "not a valid field selector key"))
    else:
        for j, v in enumerate(values):
            errs.extend(invalid(f"{path}.values[{j}]", v, m) for m in name_is_dns_subdomain(v))


def _node_selector_term(term: Any, path: str, allow_invalid_values: bool, errs: Errors) -> None:
    if mapping_field(term, path, errs) is None:
        return
    for j, rq in enumerate(list_field(term.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        _node_selector_requirement(rq, f"{path}.matchExpressions[{j}]", allow_invalid_values, errs)
    for j, rq in enumerate(list_field(term.get("matchFields"), f"{path}.matchFields", errs)):
        _node_field_requirement(rq, f"{path}.matchFields[{j}]", errs)


def validate_node_selector(sel: Any, path: str, errs: Errors) -> None:
    """``ValidateNodeSelector`` (a pod's required node affinity, a PersistentVolume's node affinity),
    with the create-time option: no invalid label values."""
    if mapping_field(sel, path, errs) is None:
        return
    terms = list_field(sel.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms", errs)
    if not terms:
        errs.append(required(f"{path}.nodeSelectorTerms", "must have at least one node selector term"))
    for i, t in enumerate(terms):
        _node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]", False, errs)


def _weight(w: Any, path: str, struct: str, errs: Errors) -> None:
    v = int32_field(w, path, struct, errs)
    if v is None and w is None:
        v = 0
    if v is not None and not 1 <= v <= 100:
        errs.append(invalid(path, v, "must be in the range 1-100"))


def validate_label_selector(sel: Any, path: str, errs: Errors) -> None:
    """``ValidateLabelSelector`` (invalid label values not allowed, as on create)."""
    if mapping_field(sel, path, errs) is None:
        return
    if "matchLabels" in sel:
        validate_labels(sel["matchLabels"], f"{path}.matchLabels", errs)
    for i, rq in enumerate(list_field(sel.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        rp = f"{path}.matchExpressions[{i}]"
        if mapping_field(rq, rp, errs) is None:
            continue
        op = rq.get("operator")
        values = _values_of(rq, rp, errs)
        if not _set_based_values(op, values, rp, errs):
            errs.append(invalid(f"{rp}.operator", "" if op is None else op, "not a valid selector operator"))
        _key_and_values(rq, values, rp, errs, True)


def _pod_affinity_term(term: Any, path: str, errs: Errors) -> None:
    """``validatePodAffinityTerm``."""
    if mapping_field(term, path, errs) is None:
        return
    validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector", errs)
    validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector", errs)
    for ns in string_list_field(term.get("namespaces"), f"{path}.namespaces", errs):
        errs.extend(invalid(f"{path}.namespace", ns, m) for m in namespace_name_errors(ns))
    for keys in ("matchLabelKeys", "mismatchLabelKeys"):
        string_list_field(term.get(keys), f"{path}.{keys}", errs)
    key = text_field(term.get("topologyKey"), f"{path}.topologyKey", errs)
    if not key:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    validate_label_name(key, f"{path}.topologyKey", errs)


def validate_affinity(aff: Any, path: str, errs: Errors) -> None:
    """``validateAffinity`` with the create-time options (no invalid label values in required terms)."""
    if mapping_field(aff, path, errs) is None:
        return
    np = f"{path}.nodeAffinity"
    na = mapping_field(aff.get("nodeAffinity"), np, errs)
    if na is not None:
        rp = f"{np}.requiredDuringSchedulingIgnoredDuringExecution"
        validate_node_selector(na.get("requiredDuringSchedulingIgnoredDuringExecution"), rp, errs)
        pp = f"{np}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(list_field(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
            if mapping_field(t, f"{pp}[{i}]", errs) is not None:
                _weight(t.get("weight"), f"{pp}[{i}].weight", "PreferredSchedulingTerm", errs)
                _node_selector_term(t.get("preference"), f"{pp}[{i}].preference", True, errs)
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = mapping_field(aff.get(kind), f"{path}.{kind}", errs)
        if pa is None:
            continue
        rp = f"{path}.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(list_field(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rp, errs)):
            _pod_affinity_term(t, f"{rp}[{i}]", errs)
        pp = f"{path}.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(list_field(pa.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
            if mapping_field(t, f"{pp}[{i}]", errs) is not None:
                _weight(t.get("weight"), f"{pp}[{i}].weight", "WeightedPodAffinityTerm", errs)
                _pod_affinity_term(t.get("podAffinityTerm"), f"{pp}[{i}].podAffinityTerm", errs)


# -- tolerations, taints, spreading -----------------------------------------------------------------

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def validate_tolerations(tolerations: Any, path: str, errs: Errors) -> None:
    """``ValidateTolerations`` (comparison operators are an alpha gate, off)."""
    for i, t in enumerate(list_field(tolerations, path, errs)):
        tp = f"{path}[{i}]"
        if mapping_field(t, tp, errs) is None:
            continue
        key = text_field(t.get("key"), f"{tp}.key", errs)
        op = text_field(t.get("operator"), f"{tp}.operator", errs)
        value = text_field(t.get("value"), f"{tp}.value", errs)
        effect = text_field(t.get("effect"), f"{tp}.effect", errs)
        if key:
            validate_label_name(key, f"{tp}.key", errs)
        elif op != "Exists":
            errs.append(
                invalid(f"{tp}.operator", op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"')
            )
        if integer_field(t.get("tolerationSeconds"), f"{tp}.tolerationSeconds", errs) is not None and effect != "NoExecute":
            errs.append(invalid(f"{tp}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            msgs = label_value_errors(value)
            if msgs:
                errs.append(invalid(f"{tp}.operator", value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{tp}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{tp}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, TAINT_EFFECTS))


def _positive(v: Any, path: str, errs: Errors) -> None:
    n = int32_field(v, path, "TopologySpreadConstraint", errs)
    if n is not None and n <= 0:
        errs.append(invalid(path, n, "must be greater than zero"))


def validate_spread(constraints: Any, path: str, errs: Errors) -> None:
    """``validateTopologySpreadConstraints``."""
    items = list_field(constraints, path, errs)
    for i, c in enumerate(items):
        cp = f"{path}[{i}]"
        if mapping_field(c, cp, errs) is None:
            continue
        skew = c.get("maxSkew")
        if skew is None:
            errs.append(invalid(f"{cp}.maxSkew", 0, "must be greater than zero"))
        else:
            _positive(skew, f"{cp}.maxSkew", errs)
        key = text_field(c.get("topologyKey"), f"{cp}.topologyKey", errs)
        if not key:
            errs.append(required(f"{cp}.topologyKey", "can not be empty"))
        when = text_field(c.get("whenUnsatisfiable"), f"{cp}.whenUnsatisfiable", errs)
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{cp}.whenUnsatisfiable", when, ["DoNotSchedule", "ScheduleAnyway"]))
        for other in items[i + 1 :]:
            if isinstance(other, dict) and other.get("topologyKey") == key and (other.get("whenUnsatisfiable") or "") == when:
                errs.append(duplicate(f"{cp}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {when}}}"))
                break
        md = c.get("minDomains")
        if md is not None:
            _positive(md, f"{cp}.minDomains", errs)
            if when != "DoNotSchedule":
                errs.append(invalid(f"{cp}.minDomains", md, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"))
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in ("Honor", "Ignore"):
                errs.append(not_supported(f"{cp}.{pol}", v, ["Honor", "Ignore"]))
        string_list_field(c.get("matchLabelKeys"), f"{cp}.matchLabelKeys", errs)
        validate_label_selector(c.get("labelSelector"), f"{cp}.labelSelector", errs)
