"""Storage rules shared by the four volume plugins (PVC/PV/StorageClass semantics).

kube-scheduler's volume plugins lean on k8s.io/component-helpers/storage for the
meaning of storage objects: which class a claim asks for, when a claim counts as
bound, which claim a generic ephemeral volume uses, whether a PV's node affinity
admits a node and which available PV best fits a claim. They live here once so
VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits agree.

Objects are the loader's ``KubeObject`` (raw dictionaries). Where the API server
would have defaulted a field the snapshot may omit, the default is applied on read
(a StorageClass without ``volumeBindingMode`` is ``Immediate``; a PV or PVC
without ``volumeMode`` is ``Filesystem``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.quantity import QuantityError, parse_quantity
from kschedctl.kube.selectors import NodeSelector, Selector, parse_label_selector, parse_node_selector
from kschedctl.snapshot.model import KubeObject, Pod

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

#: Separator of several zones in one PV zone label value.
MULTI_ZONE_DELIMITER = "__"

MODE_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
MODE_IMMEDIATE = "Immediate"


# --------------------------------------------------------------------------- lister errors


def not_found(resource: str, name: str) -> str:
    """The text of a lister's NotFound error (``persistentvolumeclaim "data" not found``)."""
    return f'{resource} "{name}" not found'


PVC_RESOURCE = "persistentvolumeclaim"
PV_RESOURCE = "persistentvolume"
STORAGE_CLASS_RESOURCE = "storageclass.storage.k8s.io"


# --------------------------------------------------------------------------- raw access


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def annotations_of(obj: KubeObject) -> dict[str, str]:
    return obj.meta.annotations


def quantity_of(raw: Any) -> Fraction:
    """A quantity field; absent or unparsable values count as zero (as a zero Quantity does)."""
    if raw is None:
        return Fraction(0)
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def quantity_value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units rounded up."""
    return math.ceil(q)


# --------------------------------------------------------------------------- pods' volumes


def claim_name_for_volume(pod: Pod, volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The claim a pod volume uses and whether it is a generic ephemeral volume; None if no claim."""
    pvc = volume.get("persistentVolumeClaim")
    if isinstance(pvc, dict):
        return str(pvc.get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return f"{pod.name}-{volume.get('name', '')}", True
    return None


def ephemeral_owner_error(pod: Pod, pvc: KubeObject) -> str | None:
    """Why the claim is not the generic ephemeral volume of this pod (None when it is)."""
    if pvc.namespace == pod.namespace:
        ref = pvc.meta.controller_ref()
        if ref is not None and str(ref.get("uid") or "") == pod.uid:
            return None
    return f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"


# --------------------------------------------------------------------------- claims and classes


def claim_class(pvc: KubeObject) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation first, then spec.storageClassName."""
    ann = annotations_of(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    sc = pvc.spec.get("storageClassName")
    return "" if sc is None else str(sc)


def volume_class(pv: KubeObject) -> str:
    """``GetPersistentVolumeClass``: the beta annotation first, then spec.storageClassName."""
    ann = annotations_of(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return str(pv.spec.get("storageClassName") or "")


def binding_mode(sc: KubeObject) -> str:
    mode = sc.raw.get("volumeBindingMode")
    return str(mode) if mode else MODE_IMMEDIATE


def claim_volume_name(pvc: KubeObject) -> str:
    return str(pvc.spec.get("volumeName") or "")


def claim_fully_bound(pvc: KubeObject) -> bool:
    """A claim counts as bound once it names its PV and the bind-completed annotation is set."""
    return bool(claim_volume_name(pvc)) and ANN_BIND_COMPLETED in annotations_of(pvc)


def claim_request(pvc: KubeObject) -> Fraction:
    """The claim's ``resources.requests.storage`` (zero when absent)."""
    req = _as_dict(_as_dict(pvc.spec.get("resources")).get("requests"))
    return quantity_of(req.get("storage"))


def claim_has_request(pvc: KubeObject) -> bool:
    req = _as_dict(_as_dict(pvc.spec.get("resources")).get("requests"))
    return "storage" in req


def volume_capacity(pv: KubeObject) -> Fraction:
    return quantity_of(_as_dict(pv.spec.get("capacity")).get("storage"))


def access_modes(obj: KubeObject) -> list[str]:
    modes = obj.spec.get("accessModes")
    return [str(m) for m in modes] if isinstance(modes, list) else []


def volume_mode(obj: KubeObject) -> str:
    return str(obj.spec.get("volumeMode") or "Filesystem")


# --------------------------------------------------------------------------- node affinity


def parse_volume_node_affinity(node_affinity: Any) -> NodeSelector | None:
    """The PV's ``nodeAffinity.required`` as a NodeSelector; None when the PV has no requirement.

    A selector that cannot be parsed matches no node (upstream reports an error,
    which the callers treat as a mismatch).
    """
    na = _as_dict(node_affinity)
    required = na.get("required")
    if required is None:
        return None
    try:
        return parse_node_selector(required, "spec.nodeAffinity.required")
    except InputError:
        return NodeSelector()


def claim_selector(pvc: KubeObject) -> Selector | None:
    """The claim's ``spec.selector``; None when absent. An invalid one matches nothing."""
    raw = pvc.spec.get("selector")
    if raw is None:
        return None
    try:
        return parse_label_selector(raw, "spec.selector")
    except InputError:
        return parse_label_selector(None)


def match_topology_selector_terms(terms: Any, labels: Mapping[str, str]) -> bool:
    """A StorageClass's ``allowedTopologies`` against node labels: terms are ORed,
    an empty list admits every node, an empty term admits none."""
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        exprs = _as_dict(term).get("matchLabelExpressions")
        if not isinstance(exprs, list) or not exprs:
            continue
        ok = True
        for e in exprs:
            e = _as_dict(e)
            values = e.get("values")
            if not isinstance(values, list) or not values:
                ok = False  # an In requirement without values is invalid: the term is skipped
                break
            key = str(e.get("key") or "")
            if key not in labels or labels[key] not in [str(v) for v in values]:
                ok = False
                break
        if ok:
            return True
    return False


# --------------------------------------------------------------------------- PV matching


def volume_bound_to_claim(pv: KubeObject, pvc: KubeObject) -> bool:
    """``IsVolumeBoundToClaim``: claimRef names this claim (and its UID, when the ref has one)."""
    ref = pv.spec.get("claimRef")
    if not isinstance(ref, dict):
        return False
    if str(ref.get("name") or "") != pvc.name or str(ref.get("namespace") or "") != pvc.namespace:
        return False
    uid = str(ref.get("uid") or "")
    return not (uid and uid != pvc.meta.uid)


@dataclass(frozen=True, slots=True)
class VolumeCandidate:
    """A PV that passed every node-independent check of upstream's ``FindMatchingVolume``."""

    pv: KubeObject
    capacity: Fraction
    #: Position in the listing (ties between equal sizes go to the earlier PV).
    index: int
    #: claimRef already names this claim.
    prebound: bool


def volume_candidates(pvc: KubeObject, volumes: list[KubeObject]) -> list[VolumeCandidate]:
    """The PVs that could serve the claim on *some* node, in listing order.

    Pre-bound PVs only need size, mode, attributes class and no deletion (they win
    before the availability checks); the others must also be Available, match the
    selector, class and access modes. Only node affinity and the per-node
    exclusions are left for ``pick_volume``.
    """
    requested = claim_request(pvc)
    requested_class = claim_class(pvc)
    selector = claim_selector(pvc)
    claim_vac = str(pvc.spec.get("volumeAttributesClassName") or "")
    claim_mode = volume_mode(pvc)
    claim_modes = access_modes(pvc)
    out: list[VolumeCandidate] = []
    for i, pv in enumerate(volumes):
        has_ref = isinstance(pv.spec.get("claimRef"), dict)
        bound_here = volume_bound_to_claim(pv, pvc)
        if has_ref and not bound_here:
            continue
        qty = volume_capacity(pv)
        if qty < requested:
            continue
        if volume_mode(pv) != claim_mode:
            continue
        if str(pv.spec.get("volumeAttributesClassName") or "") != claim_vac:
            continue
        if pv.meta.deletion_timestamp is not None:
            continue
        if not bound_here:
            if str(_as_dict(pv.status).get("phase") or "") != "Available":
                continue
            if selector is not None and not selector.matches(pv.labels):
                continue
            if volume_class(pv) != requested_class:
                continue
            pv_modes = set(access_modes(pv))
            if any(m not in pv_modes for m in claim_modes):
                continue
        out.append(VolumeCandidate(pv, qty, i, bound_here))
    return out


# --------------------------------------------------------------------------- CSINode


def migrated_plugins(csi_node: KubeObject | None) -> set[str]:
    """In-tree plugins the CSINode's annotation says were migrated to CSI on that node."""
    if csi_node is None:
        return set()
    mpa = annotations_of(csi_node).get(MIGRATED_PLUGINS_ANNOTATION, "")
    return set(mpa.split(",")) if mpa else set()
