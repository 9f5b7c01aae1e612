"""PodGroups and a pod's ``schedulingGroup`` as the API server checks them: the gang cycle reads a
group's policy and ``minCount``, so a group the API server refuses (no policy, both policies, a
``minCount`` under 1) must be refused at load rather than reach a plugin.

PodGroup's spec rules are declarative (tags on the scheduling.k8s.io v1alpha2 types in v1.36,
checked by generated code), not handwritten: a required value that is zero is "Required", a value
under the minimum "must be greater than or equal to 1", and a one-of union names its members.
"""

from __future__ import annotations

from typing import Any

from kschedctl.apivalidation.common import int32_field, mapping_field, text_field
from kschedctl.apivalidation.fielderrors import Errors, invalid, required
from kschedctl.kube.names import name_is_dns_subdomain

#: The one-of members of a PodGroup's scheduling policy, in the order the API server lists them.
_POLICIES = ("basic", "gang")


def _one_of(members: tuple[str, ...]) -> str:
    return ", ".join(f"`{m}`" for m in members)


def _union(obj: dict[str, Any], members: tuple[str, ...], path: str, errs: Errors) -> None:
    """Exactly one member set (non-null), worded as apimachinery's declarative union check."""
    chosen = [m for m in members if obj.get(m) is not None]
    if not chosen:
        errs.append(invalid(path, "", f"must specify one of: {_one_of(members)}"))
    elif len(chosen) > 1:
        errs.append(invalid(path, "{" + ", ".join(chosen) + "}", f"must specify exactly one of: {_one_of(members)}"))


def _gang(gang: Any, path: str, errs: Errors) -> None:
    if mapping_field(gang, path, errs) is None:
        return
    raw = gang.get("minCount")
    count = int32_field(raw, f"{path}.minCount", "GangSchedulingPolicy", errs)
    if raw is None or count == 0:
        errs.append(required(f"{path}.minCount"))
    elif count is not None and count < 1:
        errs.append(invalid(f"{path}.minCount", count, "must be greater than or equal to 1"))


def validate_pod_group(raw: dict[str, Any], errs: Errors) -> None:
    """A PodGroup's spec: its scheduling policy is one of basic or gang, a gang's minCount >= 1."""
    spec = raw.get("spec")
    if spec is None:
        spec = {}
    if mapping_field(spec, "spec", errs) is None:
        return
    policy = spec.get("schedulingPolicy")
    if policy is None:
        policy = {}
    if mapping_field(policy, "spec.schedulingPolicy", errs) is None:
        return
    _union(policy, _POLICIES, "spec.schedulingPolicy", errs)
    mapping_field(policy.get("basic"), "spec.schedulingPolicy.basic", errs)
    if policy.get("gang") is not None:
        _gang(policy["gang"], "spec.schedulingPolicy.gang", errs)


def validate_scheduling_group(group: Any, path: str, errs: Errors) -> None:
    """A pod's ``spec.schedulingGroup``: it names its PodGroup (the one member of its union)."""
    if mapping_field(group, path, errs) is None:
        return
    name = group.get("podGroupName")
    if name is None:
        errs.append(invalid(f"{path}.podGroupName", None, "must specify one of: `podGroupName`"))
    else:
        text = text_field(name, f"{path}.podGroupName", errs)
        if isinstance(name, str):
            errs.extend(invalid(f"{path}.podGroupName", text, m) for m in name_is_dns_subdomain(text))
