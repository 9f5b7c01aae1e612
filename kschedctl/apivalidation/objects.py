"""Validation per kind: the apiVersions kube-scheduler v1.35 reads each kind as, the checks each kind
gets on create (``validate_object``), PriorityClass rules, and the first error as the loader reports it.

Upstream model: ``pkg/apis/core/validation/validation.go (and each group's validation package)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedctl.apivalidation.common import int32_field, mapping_field, validate_object_meta
from kschedctl.apivalidation.dra import validate_device_class, validate_resource_claim
from kschedctl.apivalidation.fielderrors import Errors, forbidden, not_supported, required
from kschedctl.apivalidation.node import node_errors
from kschedctl.apivalidation.pod import validate_pod_spec
from kschedctl.apivalidation.podgroup import validate_pod_group
from kschedctl.apivalidation.policy import validate_pdb
from kschedctl.apivalidation.scheduling import validate_label_selector, validate_node_selector
from kschedctl.kube.names import name_is_dns1035_label, name_is_dns_label, name_is_dns_subdomain

# -- per kind ------------------------------------------------------------------------------------------

#: The apiVersion each kind the scheduler reads is served at (v1.35), and the workloads ``simulate`` reads.
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Pod": ("v1",),
    "Node": ("v1",),
    "Namespace": ("v1",),
    "Service": ("v1",),
    "PersistentVolume": ("v1",),
    "PersistentVolumeClaim": ("v1",),
    "ReplicationController": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "Deployment": ("apps/v1",),
    "Job": ("batch/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "StorageClass": ("storage.k8s.io/v1",),
    "CSINode": ("storage.k8s.io/v1",),
    "CSIDriver": ("storage.k8s.io/v1",),
    "CSIStorageCapacity": ("storage.k8s.io/v1",),
    "DeviceClass": ("resource.k8s.io/v1",),
    "ResourceSlice": ("resource.k8s.io/v1",),
    "ResourceClaim": ("resource.k8s.io/v1",),
    # beta in v1.36 (v1alpha3 before), GA in v1.37
    "DeviceTaintRule": ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"),
    # v1alpha2 in v1.36; v1beta1 and v1alpha3 from v1.37 (snapshot.apiversions: which release serves which)
    "PodGroup": ("scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"),
}


def api_version_error(kind: str, api_version: Any, served: str | None = None) -> str | None:
    """kubectl's (and the API server's) answer to an apiVersion that does not serve ``kind``; None if fine.

    ``served`` says what the release the run follows serves the kind as (the loader words it,
    ``snapshot.apiversions.served_hint``); without it, the apiVersions v1.35 reads it as.
    A missing apiVersion is accepted (kschedctl knows the kind's schema from ``kind`` alone).
    """
    versions = API_VERSIONS.get(kind)
    if versions is None or api_version is None or api_version in versions:
        return None
    hint = served or f"kube-scheduler v1.35 reads {kind} as {' or '.join(versions)}"
    return f'no matches for kind "{kind}" in version "{api_version}" ({hint})'


def _priority_class_errors(raw: dict[str, Any], errs: Errors) -> None:
    value = int32_field(raw.get("value"), "value", "PriorityClass", errs)
    name = str((raw.get("metadata") or {}).get("name") or "") if isinstance(raw.get("metadata"), dict) else ""
    if isinstance(value, int) and not isinstance(value, bool) and value > 1_000_000_000 and not name.startswith("system-"):
        errs.append(forbidden("value", "maximum allowed value of a user defined priority is 1000000000"))
    policy = raw.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported("preemptionPolicy", policy, ["PreemptLowerPriority", "Never"]))


def _persistent_volume_errors(raw: dict[str, Any], errs: Errors) -> None:
    """``validateVolumeNodeAffinity``: the one part of a PersistentVolume the scheduler reads with rules
    (VolumeBinding and VolumeZone match its node affinity against nodes)."""
    spec = raw.get("spec")
    aff = mapping_field(spec.get("nodeAffinity"), "spec.nodeAffinity", errs) if isinstance(spec, dict) else None
    if aff is None:
        return
    if aff.get("required") is None:
        errs.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
    else:
        validate_node_selector(aff["required"], "spec.nodeAffinity.required", errs)


#: Kinds whose names are DNS-1123 labels or DNS-1035 labels; every other kind: a DNS-1123 subdomain.
_NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "Namespace": name_is_dns_label,
    "Service": name_is_dns1035_label,
}


_NAMESPACED = frozenset(
    {
        "Pod",
        "Service",
        "PersistentVolumeClaim",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
        "Deployment",
        "Job",
        "PodDisruptionBudget",
        "CSIStorageCapacity",
        "ResourceClaim",
    }
)


#: Kinds whose labels the scheduler reads (affinity, spreading, namespaceSelectors, VolumeZone).
_LABELS_READ = frozenset({"Pod", "Node", "Namespace", "PersistentVolume"})


def validate_object(kind: str, raw: dict[str, Any], *, minor: int) -> Errors:
    """What the API server would refuse in this object on create (empty when nothing), in the fields
    the scheduler reads: the labels of the other kinds are not looked at. ``minor``: the release
    whose wording is followed where releases differ (a budget's bad values)."""
    errs: Errors = []
    name_rule = _NAME_RULES.get(kind, name_is_dns_subdomain)
    validate_object_meta(raw.get("metadata"), kind in _NAMESPACED, name_rule, errs, labels=kind in _LABELS_READ)
    if kind == "Pod":
        validate_pod_spec(raw.get("spec"), "spec", errs)
    elif kind == "Node":
        node_errors(raw, errs)
    elif kind == "PriorityClass":
        _priority_class_errors(raw, errs)
    elif kind == "PersistentVolume":
        _persistent_volume_errors(raw, errs)
    elif kind == "DeviceClass":
        validate_device_class(raw, errs)
    elif kind == "ResourceClaim":
        validate_resource_claim(raw, errs)
    elif kind == "PodDisruptionBudget":
        validate_pdb(raw, errs, minor)
    elif kind == "PodGroup":
        validate_pod_group(raw, errs)
    elif kind in ("ReplicaSet", "StatefulSet"):
        # A snapshot's controllers matter to the scheduler only through their selector (default
        # spreading); snapshots written by hand often leave the rest out.
        spec = raw.get("spec")
        if isinstance(spec, dict):
            int32_field(spec.get("replicas"), "spec.replicas", f"{kind}Spec", errs)
            validate_label_selector(spec.get("selector"), "spec.selector", errs)
    return errs


def first_error(errs: Errors) -> str:
    """The first problem as the API server words it, with how many more there are."""
    more = len({str(e) for e in errs}) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
    return f"{errs[0]}{tail}"
