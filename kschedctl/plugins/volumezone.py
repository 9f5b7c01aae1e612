"""VolumeZone: a pod's bound PersistentVolumes must be in the node's zone and region.

PreFilter gathers the zone/region labels (GA and beta keys; a value may list
several zones joined by "__") of the PVs bound to the pod's claims, skipping
claims still waiting for their first consumer; a pod with none of those is
skipped. Filter admits nodes without any zone/region label (single-zone
clusters) and otherwise requires each PV label's value set to contain the node's
value for that key (a beta PV key may be matched by the node's GA key).

Upstream model: ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.topology import BETA_REGION_LABEL, BETA_ZONE_LABEL, REGION_LABEL, ZONE_LABEL
from kschedctl.plugins.volumebinding.storage import (
    MODE_WAIT_FOR_FIRST_CONSUMER,
    MULTI_ZONE_DELIMITER,
    PV_RESOURCE,
    PVC_RESOURCE,
    STORAGE_CLASS_RESOURCE,
    binding_mode,
    claim_class,
    claim_volume_name,
    not_found,
)
from kschedctl.snapshot.model import KubeObject, Pod

NAME = "VolumeZone"

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

#: The PV/node labels compared, in upstream's order.
TOPOLOGY_LABELS = (BETA_ZONE_LABEL, BETA_REGION_LABEL, ZONE_LABEL, REGION_LABEL)
_TO_GA = {BETA_REGION_LABEL: REGION_LABEL, BETA_ZONE_LABEL: ZONE_LABEL}


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


class StateData:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> StateData:
        return self


STATE_KEY: StateKey[StateData] = StateKey("PreFilter" + NAME)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """A zone label's value as a set; None when an element is blank (the label is ignored)."""
    out: set[str] = set()
    for z in value.split(MULTI_ZONE_DELIMITER):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def pv_topologies(pv: KubeObject) -> list[PVTopology]:
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            values = label_zones_to_set(pv.labels[key])
            if values is None:
                continue
            out.append(PVTopology(pv.name, key, values))
    return out


class VolumeZone:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _pv_topologies_of_pod(self, pod: Pod) -> tuple[list[PVTopology], Status]:
        cluster = self.handle.cluster
        out: list[PVTopology] = []
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, dict):
                continue
            claim = str(ref.get("claimName") or "")
            if not claim:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, claim)
            if pvc is None:
                return [], Status.unresolvable(not_found(PVC_RESOURCE, claim))
            pv_name = claim_volume_name(pvc)
            if not pv_name:
                sc_name = claim_class(pvc)
                if not sc_name:
                    return [], Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = cluster.get("StorageClass", "", sc_name)
                if sc is None:
                    return [], Status.unresolvable(not_found(STORAGE_CLASS_RESOURCE, sc_name))
                if binding_mode(sc) == MODE_WAIT_FOR_FIRST_CONSUMER:
                    continue  # not bound yet: VolumeBinding decides where it can go
                return [], Status.unresolvable("PersistentVolume had no name")
            pv = cluster.get("PersistentVolume", "", pv_name)
            if pv is None:
                return [], Status.unresolvable(not_found(PV_RESOURCE, pv_name))
            out.extend(pv_topologies(pv))
        return out, Status()

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._pv_topologies_of_pod(pod)
        if not status.is_success():
            return None, status
        if not topologies:
            return None, Status.skip()
        state.write(STATE_KEY, StateData(topologies))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return Status()
        s = state.get(STATE_KEY)
        if s is None:
            topologies, status = self._pv_topologies_of_pod(pod)
            if not status.is_success():
                return status
        else:
            topologies = s.topologies
        labels = node_info.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return Status()  # a node without zone labels: a single-zone cluster
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_TO_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return Status()

    def explain(self, state: CycleState) -> dict[str, Any]:
        s = state.get(STATE_KEY)
        if s is None:
            return {}
        return {"volumeTopology": [{"volume": t.pv_name, "key": t.key, "values": sorted(t.values)} for t in s.topologies]}

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        s = state.get(STATE_KEY)
        if s is None:
            return {}
        labels = node_info.node.labels
        node_topology = {k: labels[k] for k in TOPOLOGY_LABELS if k in labels}
        checks = []
        for t in s.topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_TO_GA.get(t.key, t.key))
            checks.append({"volume": t.pv_name, "key": t.key, "nodeValue": value, "matches": value in t.values})
        return {"nodeTopology": node_topology, "unconstrainedNode": not node_topology, "checks": checks}

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's volume sources only."""
        return [SignFragment(signers.VOLUMES, signers.volumes(pod))], Status()


def new(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
