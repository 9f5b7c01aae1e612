"""The volume binder: sorts a pod's claims and decides, per node, whether they can be met.

This is the scheduler-side half of kube-scheduler's ``volumeBinder``: claims are
split into bound, unbound-with-delayed-binding and unbound-immediate ones once per
cycle; for each node, bound claims must have a PV whose (possibly CSI-migrated)
node affinity admits the node, and delayed claims must either match an available
PV or be dynamically provisionable there (class provisioner, allowed topologies
and, for CSI drivers that opt in, CSIStorageCapacity). The API-writing half
(assume, bind, wait for the PV controller) is not modelled: a dry run never
changes the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import InputError
from kschedctl.plugins.volumebinding import csitranslation as csi
from kschedctl.plugins.volumebinding.storage import (
    ANN_SELECTED_NODE,
    MODE_WAIT_FOR_FIRST_CONSUMER,
    NOT_SUPPORTED_PROVISIONER,
    annotations_of,
    binding_mode,
    claim_class,
    claim_fully_bound,
    claim_has_request,
    claim_name_for_volume,
    claim_request,
    claim_volume_name,
    ephemeral_owner_error,
    find_matching_volume,
    match_topology_selector_terms,
    migrated_plugins,
    parse_volume_node_affinity,
    quantity_of,
    quantity_value,
    volume_class,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod
from kschedctl.snapshot.selectors import NodeSelector, Selector, parse_label_selector

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """Something went wrong (not a node misfit): the Filter returns an Error status."""


@dataclass
class PodVolumeClaims:
    """A pod's claims, sorted by how they must be satisfied."""

    bound: list[KubeObject] = field(default_factory=list)
    unbound_delay: list[KubeObject] = field(default_factory=list)
    unbound_immediate: list[KubeObject] = field(default_factory=list)
    #: class name -> PVs of that class (candidates for the delayed claims).
    unbound_volumes_delay: dict[str, list[KubeObject]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StaticBinding:
    pvc: KubeObject
    pv: KubeObject


@dataclass(frozen=True, slots=True)
class DynamicProvision:
    pvc: KubeObject
    #: The CSIStorageCapacity that made room for it (None when capacity was not checked).
    node_capacity: KubeObject | None


@dataclass
class PodVolumes:
    """What binding the pod's volumes on one node would take."""

    static_bindings: list[StaticBinding] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Capacity:
    obj: KubeObject
    limit: int | None
    topology: Selector | None


class VolumeBinder:
    """Reads claims, volumes, classes, CSINodes, CSIDrivers and capacities from a Cluster.

    Parsed node affinities and capacity objects are cached on the binder, which
    lives for one scheduling cycle (the cluster is read-only meanwhile).
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._affinity: dict[tuple[str, str], NodeSelector | None] = {}
        self._capacities: dict[str, list[_Capacity]] | None = None

    # ------------------------------------------------------------------ claims
    def pvc(self, namespace: str, name: str) -> KubeObject | None:
        return self.cluster.get("PersistentVolumeClaim", namespace, name)

    def _is_volume_bound(self, pod: Pod, volume: dict[str, Any]) -> tuple[bool, KubeObject | None]:
        """(fully bound, its claim) for one pod volume; volumes without claims count as bound."""
        claim = claim_name_for_volume(pod, volume)
        if claim is None:
            return True, None
        name, ephemeral = claim
        pvc = self.pvc(pod.namespace, name)
        if pvc is None:
            raise BinderError(f'error getting PVC "{pod.namespace}/{name}": not found')
        if ephemeral:
            err = ephemeral_owner_error(pod, pvc)
            if err is not None:
                raise BinderError(err)
        return claim_fully_bound(pvc), pvc

    def pod_volumes_bound(self, pod: Pod) -> bool:
        """``arePodVolumesBound``: every claim of the pod is fully bound."""
        for v in pod.volumes:
            try:
                bound, _ = self._is_volume_bound(pod, v)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def _delay_binding(self, pvc: KubeObject) -> bool:
        name = claim_class(pvc)
        if not name:
            return False
        sc = self.cluster.get("StorageClass", "", name)
        if sc is None:
            return False
        return binding_mode(sc) == MODE_WAIT_FOR_FIRST_CONSUMER

    def pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """``GetPodVolumeClaims``: the pod's claims sorted into bound / delayed / immediate."""
        out = PodVolumeClaims()
        for v in pod.volumes:
            bound, pvc = self._is_volume_bound(pod, v)
            if pvc is None:
                continue
            if bound:
                out.bound.append(pvc)
            elif self._delay_binding(pvc) and not claim_volume_name(pvc):
                out.unbound_delay.append(pvc)
            else:
                out.unbound_immediate.append(pvc)
        if out.unbound_delay:
            by_class: dict[str, list[KubeObject]] = {}
            wanted = {claim_class(c) for c in out.unbound_delay}
            for pv in self.cluster.of_kind("PersistentVolume"):
                cls = volume_class(pv)
                if cls in wanted:
                    by_class.setdefault(cls, []).append(pv)
            for cls in wanted:
                out.unbound_volumes_delay[cls] = by_class.get(cls, [])
        return out

    # ------------------------------------------------------------------ node affinity
    def pv_affinity(self, pv: KubeObject, csi_node: KubeObject | None = None) -> NodeSelector | None:
        """The PV's node affinity, translated to its CSI driver's topology when the
        in-tree plugin was migrated on this node (``tryTranslatePVToCSI``)."""
        plugin = csi.pv_plugin(pv.spec)
        translated_key = ""
        if (
            plugin is not None
            and plugin.in_tree_name in csi.MIGRATION_ON_PLUGINS
            and plugin.in_tree_name in migrated_plugins(csi_node)
        ):
            try:
                csi.translate_pv(pv.spec, pv.labels)  # validates the source as upstream does
            except csi.TranslationError as e:
                raise BinderError(f"could not translate pv: {e}") from None
            translated_key = plugin.topology_key or "-"
        key = (pv.name, translated_key)
        if key in self._affinity:
            return self._affinity[key]
        raw = pv.spec.get("nodeAffinity")
        if translated_key and plugin is not None and plugin.topology_key:
            raw = csi.translate_node_affinity(raw, pv.labels, plugin.topology_key)
        sel = parse_volume_node_affinity(raw)
        self._affinity[key] = sel
        return sel

    # ------------------------------------------------------------------ per node
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes``: the bindings/provisions for this node, or the reasons it cannot host them."""
        pv_ = PodVolumes()
        bound_ok = True
        unbound_ok = True
        enough_storage = True
        pvs_found = True

        def reasons() -> list[str]:
            out: list[str] = []
            if not bound_ok:
                out.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                out.append(ERR_REASON_BIND_CONFLICT)
            if not enough_storage:
                out.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not pvs_found:
                out.append(ERR_REASON_PV_NOT_EXIST)
            return out

        labels = node.labels
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay:
            to_match: list[KubeObject] = []
            to_provision: list[KubeObject] = []
            for c in claims.unbound_delay:
                ann = annotations_of(c)
                if ANN_SELECTED_NODE in ann:
                    if ann[ANN_SELECTED_NODE] != node.name:
                        unbound_ok = False
                        return pv_, reasons()
                    to_provision.append(c)
                else:
                    to_match.append(c)
            if to_match:
                unbound_ok, pv_.static_bindings, rest = self._find_matching_volumes(
                    to_match, claims.unbound_volumes_delay, labels
                )
                to_provision.extend(rest)
            if to_provision:
                unbound_ok, enough_storage, provs = self._check_volume_provisions(to_provision, node)
                pv_.dynamic_provisions = provs
        return pv_, reasons()

    def _check_bound_claims(self, claims: list[KubeObject], node: Node) -> tuple[bool, bool]:
        csi_node = self.cluster.get("CSINode", "", node.name)
        for pvc in claims:
            pv = self.cluster.get("PersistentVolume", "", claim_volume_name(pvc))
            if pv is None:
                return True, False
            sel = self.pv_affinity(pv, csi_node)
            if sel is not None and not sel.matches(node.labels, ""):
                return False, True
        return True, True

    def _find_matching_volumes(
        self, claims: list[KubeObject], volumes: dict[str, list[KubeObject]], labels: dict[str, str]
    ) -> tuple[bool, list[StaticBinding], list[KubeObject]]:
        ordered = sorted(claims, key=claim_request)  # stable: equal sizes keep the pod's order
        chosen: set[str] = set()
        bindings: list[StaticBinding] = []
        unbound: list[KubeObject] = []
        found = True
        for pvc in ordered:
            pv = find_matching_volume(pvc, volumes.get(claim_class(pvc), []), labels, chosen, self.pv_affinity)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(StaticBinding(pvc, pv))
        return found, bindings, unbound

    def _check_volume_provisions(self, claims: list[KubeObject], node: Node) -> tuple[bool, bool, list[DynamicProvision]]:
        provisions: list[DynamicProvision] = []
        for pvc in claims:
            class_name = claim_class(pvc)
            if not class_name:
                raise BinderError(f'no class for claim "{pvc.namespace}/{pvc.name}"')
            sc = self.cluster.get("StorageClass", "", class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            provisioner = str(sc.raw.get("provisioner") or "")
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.raw.get("allowedTopologies"), node.labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(provisioner, pvc, sc, node)
            if not sufficient:
                return True, False, []
            provisions.append(DynamicProvision(pvc, capacity))
        return True, True, provisions

    # ------------------------------------------------------------------ storage capacity
    def _capacities_by_class(self) -> dict[str, list[_Capacity]]:
        if self._capacities is None:
            out: dict[str, list[_Capacity]] = {}
            for cap in self.cluster.of_kind("CSIStorageCapacity"):
                raw = cap.raw
                limit_raw = raw.get("maximumVolumeSize")
                if limit_raw is None:
                    limit_raw = raw.get("capacity")
                limit = None if limit_raw is None else quantity_value(quantity_of(limit_raw))
                topo_raw = raw.get("nodeTopology")
                topo: Selector | None = None
                if topo_raw is not None:
                    try:
                        topo = parse_label_selector(topo_raw, "nodeTopology")
                    except InputError:
                        topo = None
                out.setdefault(str(raw.get("storageClassName") or ""), []).append(_Capacity(cap, limit, topo))
            self._capacities = out
        return self._capacities

    def _has_enough_capacity(
        self, provisioner: str, pvc: KubeObject, sc: KubeObject, node: Node
    ) -> tuple[bool, KubeObject | None]:
        if not claim_has_request(pvc):
            return True, None
        driver = self.cluster.get("CSIDriver", "", provisioner)
        if driver is None:
            return True, None
        if driver.spec.get("storageCapacity") is not True:
            return True, None
        size = quantity_value(claim_request(pvc))
        for cap in self._capacities_by_class().get(sc.name, []):
            if cap.limit is not None and cap.limit >= size and cap.topology is not None and cap.topology.matches(node.labels):
                return True, cap.obj
        return False, None
