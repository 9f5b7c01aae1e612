"""Builders of storage objects (PVC, PV, StorageClass, CSINode, CSIDriver, CSIStorageCapacity)
for the volume plugin tests, so each table row reads as the object it describes."""

from __future__ import annotations

from typing import Any

from kschedctl.snapshot.cluster import KNOWN_KINDS
from kschedctl.snapshot.model import KubeObject


def _obj(kind: str, name: str, namespace: str, metadata: dict[str, Any], body: dict[str, Any]) -> KubeObject:
    md: dict[str, Any] = {"name": name, **metadata}
    if namespace:
        md["namespace"] = namespace
    raw: dict[str, Any] = {"kind": kind, "metadata": md, **body}
    return KubeObject(raw, kind, KNOWN_KINDS[kind])


def pvc(
    name: str,
    *,
    namespace: str = "default",
    sc: str | None = "standard",
    volume: str = "",
    bound: bool | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    size: str | None = "1Gi",
    annotations: dict[str, str] | None = None,
    owner_uid: str = "",
    phase: str = "",
    selector: dict[str, Any] | None = None,
    deleting: bool = False,
    uid: str = "",
    volume_mode: str | None = None,
) -> KubeObject:
    """A claim; ``volume`` names its PV and (unless ``bound=False``) marks the bind completed."""
    ann = dict(annotations or {})
    if volume and bound is not False:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    md: dict[str, Any] = {"annotations": ann, "uid": uid or f"uid-pvc-{name}"}
    if owner_uid:
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid, "controller": True}]
    if deleting:
        md["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    spec: dict[str, Any] = {"accessModes": list(modes)}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume:
        spec["volumeName"] = volume
    if size is not None:
        spec["resources"] = {"requests": {"storage": size}}
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    body: dict[str, Any] = {"spec": spec}
    if phase:
        body["status"] = {"phase": phase}
    return _obj("PersistentVolumeClaim", name, namespace, md, body)


def pv(
    name: str,
    *,
    sc: str = "standard",
    size: str = "10Gi",
    labels: dict[str, str] | None = None,
    affinity: list[list[dict[str, Any]]] | None = None,
    phase: str = "Available",
    claim: tuple[str, str] | None = None,
    source: dict[str, Any] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    volume_mode: str | None = None,
) -> KubeObject:
    """A PV; ``affinity`` is a list of terms, each a list of matchExpressions."""
    spec: dict[str, Any] = {
        "storageClassName": sc,
        "capacity": {"storage": size},
        "accessModes": list(modes),
    }
    spec.update(source if source is not None else {"csi": {"driver": "csi.example.com", "volumeHandle": f"h-{name}"}})
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": t} for t in affinity]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    return _obj("PersistentVolume", name, "", {"labels": dict(labels or {})}, {"spec": spec, "status": {"phase": phase}})


def storage_class(
    name: str,
    *,
    provisioner: str = "csi.example.com",
    mode: str | None = "WaitForFirstConsumer",
    allowed: list[list[tuple[str, list[str]]]] | None = None,
) -> KubeObject:
    body: dict[str, Any] = {"provisioner": provisioner}
    if mode is not None:
        body["volumeBindingMode"] = mode
    if allowed is not None:
        body["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in term]} for term in allowed
        ]
    return _obj("StorageClass", name, "", {}, body)


def csi_node(name: str, drivers: dict[str, int | None], migrated: str = "") -> KubeObject:
    md: dict[str, Any] = {}
    if migrated:
        md["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    ds: list[dict[str, Any]] = []
    for d, count in drivers.items():
        entry: dict[str, Any] = {"name": d, "nodeID": f"{name}-id"}
        if count is not None:
            entry["allocatable"] = {"count": count}
        ds.append(entry)
    return _obj("CSINode", name, "", md, {"spec": {"drivers": ds}})


def csi_driver(name: str, storage_capacity: bool | None = None) -> KubeObject:
    spec: dict[str, Any] = {}
    if storage_capacity is not None:
        spec["storageCapacity"] = storage_capacity
    return _obj("CSIDriver", name, "", {}, {"spec": spec})


def capacity(
    name: str,
    sc: str,
    *,
    capacity: str | None = None,
    maximum: str | None = None,
    topology: dict[str, str] | None = None,
    namespace: str = "kube-system",
) -> KubeObject:
    body: dict[str, Any] = {"storageClassName": sc}
    if capacity is not None:
        body["capacity"] = capacity
    if maximum is not None:
        body["maximumVolumeSize"] = maximum
    if topology is not None:
        body["nodeTopology"] = {"matchLabels": topology}
    return _obj("CSIStorageCapacity", name, namespace, {}, body)


def zone_in(*zones: str) -> list[dict[str, Any]]:
    return [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)}]
