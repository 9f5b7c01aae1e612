"""The volume binder: sorts a pod's claims and decides, per node, whether they can be met.

This is the scheduler-side half of kube-scheduler's ``volumeBinder``: claims are
split into bound, unbound-with-delayed-binding and unbound-immediate ones once per
cycle; for each node, bound claims must have a PV whose (possibly CSI-migrated)
node affinity admits the node, and delayed claims must either match an available
PV or be dynamically provisionable there (class provisioner, allowed topologies
and, for CSI drivers that opt in, CSIStorageCapacity). The API-writing half
(assume, bind, wait for the PV controller) is not modelled: a dry run never
changes the cluster.

Upstream model: ``pkg/scheduler/framework/plugins/volumebinding/binder.go``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.selectors import NodeSelector, Selector, parse_label_selector
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
    match_topology_selector_terms,
    migrated_plugins,
    parse_volume_node_affinity,
    quantity_of,
    quantity_value,
    volume_candidates,
    volume_class,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod

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


class _CapacityIndex:
    """One class's CSIStorageCapacity objects, indexed by the first equality of their
    node topology (the usual zone/hostname selectors) so a node only looks at the
    objects that can apply to it."""

    __slots__ = ("by_label", "general")

    def __init__(self) -> None:
        self.by_label: dict[str, dict[str, list[_Capacity]]] = {}
        self.general: list[_Capacity] = []

    def add(self, cap: _Capacity) -> None:
        sel = cap.topology
        if sel is not None and not sel.nothing and sel.requirements:
            r = sel.requirements[0]
            if r.operator == "In" and len(r.values) == 1:
                self.by_label.setdefault(r.key, {}).setdefault(r.values[0], []).append(cap)
                return
        self.general.append(cap)

    def for_node(self, labels: Mapping[str, str]) -> list[_Capacity]:
        out = list(self.general)
        for key, by_value in self.by_label.items():
            v = labels.get(key)
            if v is not None:
                out.extend(by_value.get(v, ()))
        return out


@dataclass
class _ClaimPlan:
    """The node-independent part of matching one delayed claim to a PV."""

    #: PVs already pre-bound to the claim, in listing order, with their node affinity.
    prebound: list[tuple[KubeObject, NodeSelector | None]]
    #: The other candidates grouped by node affinity; each group sorted smallest first.
    groups: list[tuple[NodeSelector | None, list[tuple[Fraction, int, KubeObject]]]]


class VolumeBinder:
    """Reads claims, volumes, classes, CSINodes, CSIDrivers and capacities from a Cluster.

    Parsed node affinities and capacity objects are cached on the binder, which
    lives for one scheduling cycle (the cluster is read-only meanwhile).
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._affinity: dict[tuple[str, str], NodeSelector | None] = {}
        self._capacities: dict[str, _CapacityIndex] | None = None
        self._plans: dict[str, _ClaimPlan] = {}

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
            pv = self._pick_volume(self._plan(pvc, volumes.get(claim_class(pvc), [])), labels, chosen)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(StaticBinding(pvc, pv))
        return found, bindings, unbound

    def _plan(self, pvc: KubeObject, volumes: list[KubeObject]) -> _ClaimPlan:
        key = f"{pvc.namespace}/{pvc.name}"
        plan = self._plans.get(key)
        if plan is None:
            prebound: list[tuple[KubeObject, NodeSelector | None]] = []
            groups: dict[NodeSelector | None, list[tuple[Fraction, int, KubeObject]]] = {}
            for c in volume_candidates(pvc, volumes):
                sel = self.pv_affinity(c.pv)
                if c.prebound:
                    prebound.append((c.pv, sel))
                else:
                    groups.setdefault(sel, []).append((c.capacity, c.index, c.pv))
            plan = _ClaimPlan(prebound, [(sel, sorted(g, key=lambda t: (t[0], t[1]))) for sel, g in groups.items()])
            self._plans[key] = plan
        return plan

    @staticmethod
    def _pick_volume(plan: _ClaimPlan, labels: Mapping[str, str], excluded: set[str]) -> KubeObject | None:
        """``FindMatchingVolume`` for one node: the first pre-bound PV decides (it or
        nothing); otherwise the smallest candidate whose node affinity admits the node."""
        for pv, sel in plan.prebound:
            if pv.name in excluded:
                continue
            return pv if (sel is None or sel.matches(labels, "")) else None
        best: tuple[Fraction, int, KubeObject] | None = None
        for sel, cands in plan.groups:
            if sel is not None and not sel.matches(labels, ""):
                continue
            for cand in cands:
                if cand[2].name in excluded:
                    continue
                if best is None or (cand[0], cand[1]) < (best[0], best[1]):
                    best = cand
                break
        return None if best is None else best[2]

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
    def _capacities_by_class(self) -> dict[str, _CapacityIndex]:
        if self._capacities is None:
            out: dict[str, _CapacityIndex] = {}
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
                out.setdefault(str(raw.get("storageClassName") or ""), _CapacityIndex()).add(_Capacity(cap, limit, topo))
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
        index = self._capacities_by_class().get(sc.name)
        for cap in index.for_node(node.labels) if index is not None else []:
            if cap.limit is not None and cap.limit >= size and cap.topology is not None and cap.topology.matches(node.labels):
                return True, cap.obj
        return False, None
