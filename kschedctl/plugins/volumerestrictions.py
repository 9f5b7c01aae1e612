"""VolumeRestrictions: volumes that cannot be shared with pods already placed.

Two rules. Inline GCE PD, AWS EBS, Ceph RBD and iSCSI disks conflict with the
same disk used by a pod on the node (GCE PD, RBD and iSCSI allow it when both
mounts are read-only; EBS never does): "node(s) had no available disk". And a
PersistentVolumeClaim with the ReadWriteOncePod access mode that some scheduled
pod already uses makes every node fail (preemption of that pod may help), so
PreFilter counts those uses and the add/remove-pod extensions keep the count
right for nominated pods and preemption what-ifs.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.kube.rules import READ_WRITE_ONCE_POD_MESSAGE
from kschedctl.plugins.volumebinding.storage import PVC_RESOURCE, access_modes, not_found
from kschedctl.snapshot.model import Pod

NAME = "VolumeRestrictions"

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
#: The same verdict's reason in v1.33 (volume_restrictions.go there); v1.34 reworded it as above.
ERR_REASON_RWOP_CONFLICT_V133 = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
_RBD_DEFAULT_POOL = "rbd"


class PreFilterState:
    """Names of the pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    __slots__ = ("conflicting_pvc_ref_count", "rwop_pvcs")

    def __init__(self, rwop_pvcs: frozenset[str], conflicting_pvc_ref_count: int) -> None:
        self.rwop_pvcs = rwop_pvcs
        self.conflicting_pvc_ref_count = conflicting_pvc_ref_count

    def conflicts_of(self, pod: Pod) -> int:
        # Only the claim name is compared, as upstream does.
        n = 0
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if isinstance(pvc, dict) and str(pvc.get("claimName") or "") in self.rwop_pvcs:
                n += 1
        return n

    def clone(self) -> PreFilterState:
        return PreFilterState(self.rwop_pvcs, self.conflicting_pvc_ref_count)


STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)


def _src(volume: dict[str, Any], field: str) -> dict[str, Any] | None:
    s = volume.get(field)
    return s if isinstance(s, dict) else None


def needs_restrictions_check(volume: dict[str, Any]) -> bool:
    return any(_src(volume, f) is not None for f in _CONFLICT_SOURCES)


def _ro(src: dict[str, Any]) -> bool:
    return bool(src.get("readOnly"))


def is_volume_conflict(volume: dict[str, Any], other: Pod) -> bool:
    """Whether this inline disk volume conflicts with any volume of ``other``."""
    gce = _src(volume, "gcePersistentDisk")
    ebs = _src(volume, "awsElasticBlockStore")
    iscsi = _src(volume, "iscsi")
    rbd = _src(volume, "rbd")
    for ev in other.volumes:
        if gce is not None:
            egce = _src(ev, "gcePersistentDisk")
            if (
                egce is not None
                and str(gce.get("pdName") or "") == str(egce.get("pdName") or "")
                and not (_ro(gce) and _ro(egce))
            ):
                return True
        if ebs is not None:
            eebs = _src(ev, "awsElasticBlockStore")
            if eebs is not None and str(ebs.get("volumeID") or "") == str(eebs.get("volumeID") or ""):
                return True
        if iscsi is not None:
            eiscsi = _src(ev, "iscsi")
            if (
                eiscsi is not None
                and str(iscsi.get("iqn") or "") == str(eiscsi.get("iqn") or "")
                and not (_ro(iscsi) and _ro(eiscsi))
            ):
                return True
        if rbd is not None:
            erbd = _src(ev, "rbd")
            if erbd is not None:
                mons = {str(m) for m in rbd.get("monitors") or []}
                emons = {str(m) for m in erbd.get("monitors") or []}
                if (
                    mons & emons
                    and str(rbd.get("pool") or _RBD_DEFAULT_POOL) == str(erbd.get("pool") or _RBD_DEFAULT_POOL)
                    and str(rbd.get("image") or "") == str(erbd.get("image") or "")
                    and not (_ro(rbd) and _ro(erbd))
                ):
                    return True
    return False


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    for v in pod.volumes:
        if not needs_restrictions_check(v):
            continue
        for pi in node_info.pods:
            if is_volume_conflict(v, pi.pod):
                return False
    return True


class VolumeRestrictions:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.rwop_reason = ERR_REASON_RWOP_CONFLICT
        if not handle.features.follows(READ_WRITE_ONCE_POD_MESSAGE):
            self.rwop_reason = ERR_REASON_RWOP_CONFLICT_V133

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        cluster = self.handle.cluster
        rwop: set[str] = set()
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, dict):
                continue
            claim = str(ref.get("claimName") or "")
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, claim)
            if pvc is None:
                return None, Status.unresolvable(not_found(PVC_RESOURCE, claim))
            if "ReadWriteOncePod" in access_modes(pvc):
                rwop.add(pvc.name)
        snapshot = self.handle.snapshot
        count = sum(1 for name in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and count == 0:
            return None, Status.skip()
        state.write(STATE_KEY, PreFilterState(frozenset(rwop), count))
        return None, Status()

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{STATE_KEY.name}" from cycleState')
        s.conflicting_pvc_ref_count += s.conflicts_of(pod_info_to_add.pod)
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{STATE_KEY.name}" from cycleState')
        s.conflicting_pvc_ref_count -= s.conflicts_of(pod_info_to_remove.pod)
        return Status()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not satisfy_volume_conflicts(pod, node_info):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{STATE_KEY.name}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(self.rwop_reason)
        return Status()

    def explain(self, state: CycleState) -> dict[str, Any]:
        s = state.get(STATE_KEY)
        if s is None:
            return {}
        return {"readWriteOncePodClaims": sorted(s.rwop_pvcs), "podsUsingThem": s.conflicting_pvc_ref_count}

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        if state.get(STATE_KEY) is None:
            return {}
        conflicts = []
        for v in pod.volumes:
            if not needs_restrictions_check(v):
                continue
            for pi in node_info.pods:
                if is_volume_conflict(v, pi.pod):
                    conflicts.append({"volume": str(v.get("name") or ""), "pod": pi.pod.key})
        return {"diskConflicts": conflicts}

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's volume sources only."""
        return [SignFragment(signers.VOLUMES, signers.volumes(pod))], Status()


def new(args: None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
